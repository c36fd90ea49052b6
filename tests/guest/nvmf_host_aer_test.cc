// The NVMe-oF host's Asynchronous Event Requests (<wharf/nvmf_host.h>
// on_event) against real targets in the guest:
//  - nvmet-rdma (configfs, file namespaces): a namespace enabled while
//    connected is a Namespace Attribute Changed notice: on_event reports
//    it with the Changed Namespace List read, wharf_nvmf_host_ns() then
//    shows the namespace and I/O to it works; disabled again, a second
//    notice (the first log read with RAE clear re-enabled it) removes it
//    and I/O to it fails with -EINVAL; a read past the end completes
//    with its NVMe status (DNR) and is never resent;
//  - nvmet-rdma, the port's link bounced (the kernel deletes the
//    controller, the host reconnects): the new association re-arms its
//    AERs, a namespace enabled afterwards is still reported;
//  - wharf-nvmf-tgt (which parks AERs until an event): I/O, then the
//    disconnect with the AERs outstanding returns and the target is back
//    to zero (no controller, request or held command left).
// Every wait is bounded; nothing asserts on a duration.
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/nvmf_host.h>

#include "tests/guest/guest_env.h"
#include "tests/guest/nvmf_guest_util.h"
#include "tests/guest/nvmf_host_io.h"

namespace
{

using namespace nvmf_guest;

const char kAddr[] = "198.18.0.1";
const char kNvmetSub[] = "nqn.2024-01.io.wharf:aer-nvmet";
const char kWharfSub[] = "nqn.2024-01.io.wharf:aer-wharf";
const char kCfs[] = "/sys/kernel/config/nvmet";
const char kImg[] = "/tmp/nvmf_host_aer"; // + nsid + ".img"
const uint16_t kNvmetPort = 4435, kWharfPort = 4436;
const char kPortDir[] = "/sys/kernel/config/nvmet/ports/35";

// What on_event reported (runs on shard 0): copies, the log dropped.
struct Events {
	std::mutex m;
	std::vector<struct wharf_nvmf_host_event> seen;
	std::vector<unsigned> nr_ns; // wharf_nvmf_host_info() nr_ns then
	wharf_nvmf_host *h = nullptr;

	static void Cb(const struct wharf_nvmf_host_event *ev, void *arg)
	{
		Events *e = static_cast<Events *>(arg);
		struct wharf_nvmf_host_info in = {};
		in.size = sizeof(in);
		std::lock_guard<std::mutex> g(e->m);
		if (e->h)
			wharf_nvmf_host_info(e->h, &in);
		e->seen.push_back(*ev);
		e->seen.back().log = nullptr;
		e->nr_ns.push_back(in.nr_ns);
	}

	size_t Count()
	{
		std::lock_guard<std::mutex> g(m);
		return seen.size();
	}

	wharf_nvmf_host_event At(size_t i)
	{
		std::lock_guard<std::mutex> g(m);
		return seen.at(i);
	}
};

std::string Img(unsigned nsid)
{
	return std::string(kImg) + std::to_string(nsid) + ".img";
}

std::string NsDir(unsigned nsid)
{
	return std::string(kCfs) + "/subsystems/" + kNvmetSub + "/namespaces/" +
	       std::to_string(nsid);
}

// A namespace of the nvmet subsystem: a 16 MiB file, buffered.
std::string NvmetNsAdd(unsigned nsid)
{
	std::string d = NsDir(nsid);
	return "truncate -s 16M " + Img(nsid) + "; mkdir " + d + "; echo -n " +
	       Img(nsid) + " > " + d + "/device_path; echo 1 > " + d +
	       "/buffered_io; echo 1 > " + d + "/enable";
}

class NvmfHostAer : public ::testing::Test
{
      protected:
	static wharf_ctx *ctx_;
	static wharf_cm *cm_;

	static void SetUpTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		SuiteCtxCreate(&ctx_, &cm_);
	}

	static void TearDownTestSuite()
	{
		SuiteCtxDestroy(&ctx_, &cm_);
	}

	static std::string NvmetTeardown()
	{
		std::string sub =
			std::string(kCfs) + "/subsystems/" + kNvmetSub;
		return std::string("rm -f ") + kPortDir +
		       "/subsystems/*; rmdir " + kPortDir +
		       "; for n in 1 2 3; do [ -d " + sub +
		       "/namespaces/$n ] || continue; echo 0 > " + sub +
		       "/namespaces/$n/enable; rmdir " + sub +
		       "/namespaces/$n; done; rmdir " + sub + "; rm -f " +
		       kImg + "*.img";
	}

	// nvmet: the subsystem with namespace 1, on port 35.
	void NvmetUp()
	{
		std::string out,
			sub = std::string(kCfs) + "/subsystems/" + kNvmetSub,
			p = kPortDir;
		Sh(NvmetTeardown());
		std::string setup =
			"set -e; modprobe -a nvmet nvmet_rdma; mountpoint -q "
			"/sys/kernel/config || mount -t configfs none "
			"/sys/kernel/config; mkdir " +
			sub + "; echo 1 > " + sub + "/attr_allow_any_host; " +
			NvmetNsAdd(1) + "; mkdir " + p + "; echo rdma > " + p +
			"/addr_trtype; echo ipv4 > " + p +
			"/addr_adrfam; echo " + kAddr + " > " + p +
			"/addr_traddr; echo " + std::to_string(kNvmetPort) +
			" > " + p + "/addr_trsvcid; ln -s " + sub + " " + p +
			"/subsystems/" + kNvmetSub;
		ASSERT_EQ(0, Sh(setup, &out)) << out;
	}

	int Connect(uint16_t port, const char *sub, Events *ev,
		    wharf_nvmf_host **out)
	{
		sockaddr_in a = {};
		a.sin_family = AF_INET;
		a.sin_port = htons(port);
		inet_pton(AF_INET, kAddr, &a.sin_addr);
		wharf_nvmf_host_opts o;
		wharf_nvmf_host_opts_init(&o);
		o.cm = cm_;
		o.dst = (sockaddr *)&a;
		o.subnqn = sub;
		o.nr_io_queues = 2;
		o.queue_size = 32;
		o.reconnect_delay_ms = 300;
		o.on_event = Events::Cb;
		o.event_arg = ev;
		std::string e;
		int rc = HostConnect(&o, &e, out);
		EXPECT_EQ(0, rc) << e;
		if (!rc) {
			std::lock_guard<std::mutex> g(ev->m);
			ev->h = *out;
		}
		return rc;
	}

	static unsigned NrNs(wharf_nvmf_host *h)
	{
		struct wharf_nvmf_host_info in = {};
		in.size = sizeof(in);
		EXPECT_EQ(0, wharf_nvmf_host_info(h, &in));
		return in.nr_ns;
	}

	// The CNS 06h limits the host found, printed.
	static struct wharf_nvmf_host_info PrintLimits(const char *who,
						       wharf_nvmf_host *h)
	{
		struct wharf_nvmf_host_info in = {};
		in.size = sizeof(in);
		EXPECT_EQ(0, wharf_nvmf_host_info(h, &in));
		std::cout << who << ": CNS 06h limits wzsl " << +in.wzsl
			  << " dmrl " << +in.dmrl << " dmrsl " << in.dmrsl
			  << " dmsl " << in.dmsl << "\n";
		return in;
	}

	// Namespace @nsid as wharf_nvmf_host_ns() lists it (nsid 0: none).
	static struct wharf_nvmf_host_ns FindNs(wharf_nvmf_host *h,
						uint32_t nsid)
	{
		struct wharf_nvmf_host_ns ns = {};
		for (unsigned i = 0; i < NrNs(h); i++) {
			ns = {};
			ns.size = sizeof(ns);
			if (!wharf_nvmf_host_ns(h, i, &ns) && ns.nsid == nsid)
				return ns;
		}
		return {};
	}

	// Waits for event number @i: a namespace attribute notice whose
	// log and rescan succeeded.
	static ::testing::AssertionResult NsNotice(Events *ev, size_t i)
	{
		if (!Poll([&] { return ev->Count() > i; }))
			return ::testing::AssertionFailure()
			       << "no event #" << i << " (" << ev->Count()
			       << " seen)";
		struct wharf_nvmf_host_event e = ev->At(i);
		if (e.type != WHARF_NVMF_HOST_EVENT_NOTICE ||
		    e.info != WHARF_NVMF_HOST_EVENT_NS_CHANGED ||
		    e.log_page != 0x04 || e.log_status != 0 ||
		    e.rescan_status != 0 || e.nr_changed < 1 ||
		    e.size != sizeof(e))
			return ::testing::AssertionFailure()
			       << "event #" << i << ": dw0 0x" << std::hex
			       << e.dw0 << std::dec << " log " << e.log_status
			       << " rescan " << e.rescan_status << " changed "
			       << e.nr_changed;
		return ::testing::AssertionSuccess();
	}

	// Write a pattern to 4 KiB of @nsid and read it back: 0 or why not.
	static int WriteRead(wharf_nvmf_host *h, uint32_t nsid, unsigned seed)
	{
		struct wharf_nvmf_host_ns ns = FindNs(h, nsid);
		auto a = Pattern(4096, seed);
		std::vector<uint8_t> r(4096, 0);
		Io w, rd;
		if (!ns.nsid || !ns.block_size)
			return -ENOENT;
		uint32_t nlb = 4096 / ns.block_size;
		w.q = rd.q = wharf_nvmf_host_queue(h, 1);
		w.nsid = rd.nsid = nsid;
		w.op = 'w';
		rd.op = 'r';
		w.slba = rd.slba = 8 * nlb;
		w.nlb = rd.nlb = nlb;
		w.buf = a.data();
		rd.buf = r.data();
		if (!StartIo(&w))
			return -999;
		int rc = WaitIo(&w);
		if (rc)
			return rc;
		if (!StartIo(&rd))
			return -999;
		rc = WaitIo(&rd);
		return rc ? rc : (r == a ? 0 : -EILSEQ);
	}

	// One block read from @nsid on queue 0: the submission error, else
	// the completion status.
	static int ReadNs(wharf_nvmf_host *h, uint32_t nsid)
	{
		std::vector<uint8_t> buf(65536);
		Io io;
		io.q = wharf_nvmf_host_queue(h, 0);
		io.nsid = nsid;
		io.op = 'r';
		io.nlb = 1;
		io.buf = buf.data();
		if (!StartIo(&io))
			return -999;
		return WaitIo(&io);
	}

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		ASSERT_NE(nullptr, cm_);
	}
};

wharf_ctx *NvmfHostAer::ctx_;
wharf_cm *NvmfHostAer::cm_;

TEST_F(NvmfHostAer, NvmetNamespaceAddedAndRemoved)
{
	ASSERT_NO_FATAL_FAILURE(NvmetUp());
	Events ev;
	wharf_nvmf_host *h = nullptr;
	std::string out;
	if (Connect(kNvmetPort, kNvmetSub, &ev, &h))
		return;
	PrintLimits("nvmet", h);
	EXPECT_EQ(1u, NrNs(h));
	EXPECT_EQ(-EINVAL, ReadNs(h, 2));

	// Enabled while connected: a notice, the namespace shows up.
	EXPECT_EQ(0, Sh(NvmetNsAdd(2), &out)) << out;
	EXPECT_TRUE(NsNotice(&ev, 0));
	EXPECT_EQ(2u, NrNs(h));
	EXPECT_EQ(2u, FindNs(h, 2).nsid);
	EXPECT_EQ(16ull << 20, FindNs(h, 2).nblocks * FindNs(h, 2).block_size);
	EXPECT_EQ(0, WriteRead(h, 2, 2));
	EXPECT_EQ(0, WriteRead(h, 1, 3));

	// Disabled: a second notice (the first log read re-armed it).
	EXPECT_EQ(0, Sh("echo 0 > " + NsDir(2) + "/enable", &out)) << out;
	EXPECT_TRUE(NsNotice(&ev, 1));
	EXPECT_EQ(1u, NrNs(h));
	EXPECT_EQ(0u, FindNs(h, 2).nsid);
	EXPECT_EQ(-EINVAL, ReadNs(h, 2));
	std::vector<uint8_t> buf(4096);

	// A read past the end: the controller's error with DNR, completed
	// once and never resent.
	struct wharf_nvmf_host_ns ns1 = FindNs(h, 1);
	struct wharf_nvmf_host_queue_stats qs = {};
	qs.size = sizeof(qs);
	uint16_t nvme = 0;
	EXPECT_EQ(-EIO, DoIo(wharf_nvmf_host_queue(h, 0), 'r', ns1.nblocks, 1,
			     buf.data(), &nvme));
	EXPECT_NE(0, nvme & 0x4000) << std::hex << nvme;
	EXPECT_NE(0, nvme & 0x7FF) << std::hex << nvme; // 80h or 81h
	EXPECT_EQ(0, wharf_nvmf_host_queue_stats(wharf_nvmf_host_queue(h, 0),
						 &qs));
	EXPECT_EQ(0u, qs.retried);

	struct wharf_nvmf_host_stats s = HostStats(h);
	EXPECT_EQ(2u, s.events);
	EXPECT_EQ(2u, s.ns_rescans);
	EXPECT_EQ(WHARF_NVMF_HOST_LIVE, s.state);
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	EXPECT_EQ(0, Sh(NvmetTeardown(), &out)) << out;
}

TEST_F(NvmfHostAer, NvmetReconnectRearms)
{
	ASSERT_NO_FATAL_FAILURE(NvmetUp());
	Events ev;
	wharf_nvmf_host *h = nullptr;
	std::string out, sub = std::string(kCfs) + "/subsystems/" + kNvmetSub;
	if (Connect(kNvmetPort, kNvmetSub, &ev, &h))
		return;
	EXPECT_EQ(0,
		  Sh(std::string("rm ") + kPortDir + "/subsystems/" + kNvmetSub,
		     &out))
		<< out;
	EXPECT_TRUE(Poll(
		[&] { return HostStats(h).state != WHARF_NVMF_HOST_LIVE; }));
	EXPECT_EQ(0, Sh("ln -s " + sub + " " + kPortDir + "/subsystems/" +
				kNvmetSub,
			&out))
		<< out;
	EXPECT_TRUE(Poll(
		[&] { return HostStats(h).state == WHARF_NVMF_HOST_LIVE; }));
	EXPECT_GE(HostStats(h).reconnects, 1u);
	EXPECT_EQ(0u, ev.Count()); // the old AERs were not events

	// The new association's AERs report the next change.
	EXPECT_EQ(0, Sh(NvmetNsAdd(2), &out)) << out;
	EXPECT_TRUE(NsNotice(&ev, 0));
	EXPECT_EQ(2u, NrNs(h));
	EXPECT_EQ(0, WriteRead(h, 2, 4));
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	EXPECT_EQ(0, Sh(NvmetTeardown(), &out)) << out;
}

TEST_F(NvmfHostAer, WharfTgtDisconnectWithAersOutstanding)
{
	Tgt tgt;
	ASSERT_TRUE(tgt.Start("nvmf_host_aer",
			      std::string("listen ") + kAddr + " " +
				      std::to_string(kWharfPort) +
				      "\nshards 1\nsubsystem " + kWharfSub +
				      "\n  namespace 1 ram:16M\n"
				      "  allow-any-host\n"));
	Events ev;
	wharf_nvmf_host *h = nullptr;
	if (Connect(kWharfPort, kWharfSub, &ev, &h) == 0) {
		// It answers CNS 06h with Invalid Field: no limits.
		struct wharf_nvmf_host_info in = PrintLimits("wharf", h);
		EXPECT_EQ(0u, in.wzsl + in.dmrl + in.dmrsl + in.dmsl);
		// wharf-nvmf-tgt parks AERs (AERL 3: four) until an event.
		EXPECT_TRUE(Poll([&] { return tgt.Stats()["held"] == 4; }))
			<< tgt.Stats()["held"];
		EXPECT_EQ(0, WriteRead(h, 1, 5));
		EXPECT_EQ(0u, HostStats(h).events);
		EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	}
	EXPECT_TRUE(tgt.BackToZero());
	EXPECT_EQ(0u, ev.Count());
	EXPECT_TRUE(tgt.Stop());
}

} // namespace
