// <wharf/nvmf_host.h> and wharf-nvmf-perf against two targets in the same
// guest: the kernel's nvmet-rdma (configured through configfs, a block
// namespace: a loop device over a file on tmpfs, so that Write Zeroes and
// Deallocate reach the block layer; nvmet's file backend asks tmpfs for
// FALLOC_FL_ZERO_RANGE, which tmpfs refuses) and wharf-nvmf-tgt (a RAM
// namespace).
// Each: connect with three I/O queues spread over two shards, the Identify data, writes
// in-capsule and by keyed SGL read back and compared on every queue, an
// out-of-range read failing with its NVMe status while the queue lives
// on, a clean disconnect; an unknown subsystem NQN and a host the
// subsystem does not allow refused with a clear error; wharf-nvmf-perf
// --verify (write, read back, compare) on two queues, in-capsule and
// keyed sizes, also with --zero-copy and --submit-thread.  I/O called
// from application threads and from a shard that does not own the queue
// (data verified, each callback once, on the owner shard), disconnect
// with such calls in flight; reads and writes from memory the test
// registered (data verified, a buffer outside the registration refused).
// Then, against wharf-nvmf-tgt stopped with SIGSTOP, a
// command past its timeout losing the controller (ctrl_loss_tmo 0).
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
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
const char kNvmetSub[] = "nqn.2024-01.io.wharf:host-nvmet";
const char kNvmetClosed[] = "nqn.2024-01.io.wharf:host-nvmet-closed";
const char kWharfSub[] = "nqn.2024-01.io.wharf:host-wharf";
const char kWharfClosed[] = "nqn.2024-01.io.wharf:host-wharf-closed";
const char kCfs[] = "/sys/kernel/config/nvmet";
const char kImg[] = "/dev/shm/nvmf_host_test.img";
const uint16_t kNvmetPort = 4430, kWharfPort = 4431;
const uint64_t kNsBytes = 64ull << 20;

struct Target {
	const char *name;
	uint16_t port;
	const char *sub, *closed;
};

const Target kTargets[] = {
	{"nvmet", kNvmetPort, kNvmetSub, kNvmetClosed},
	{"wharf", kWharfPort, kWharfSub, kWharfClosed},
};

// More subsystems on wharf-nvmf-tgt so that its discovery log (header and
// entries) spans more than one 4 KiB Get Log Page.
const unsigned kWharfExtra = 4;

std::string ExtraWharfSub(unsigned i)
{
	return std::string(kWharfSub) + "-d" + std::to_string(i);
}

std::string ExtraWharfSubsystems()
{
	std::string c;

	for (unsigned i = 1; i <= kWharfExtra; i++)
		c += "subsystem " + ExtraWharfSub(i) +
		     "\n  namespace 1 ram:1M\n  allow-any-host\n";
	return c;
}

class NvmfHost : public ::testing::TestWithParam<Target>
{
      protected:
	static Tgt *tgt_;
	static wharf_ctx *ctx_;
	static wharf_cm *cm_;
	static bool nvmet_up_;

	static void NvmetTeardown()
	{
		std::string c = kCfs;
		Sh("rm -f " + c + "/ports/30/subsystems/*; rmdir " + c +
		   "/ports/30; for s in " + kNvmetSub + " " + kNvmetClosed +
		   "; do echo 0 > " + c +
		   "/subsystems/$s/namespaces/1/enable;"
		   " rmdir " +
		   c + "/subsystems/$s/namespaces/1 " + c +
		   "/subsystems/$s; done; losetup -j " + kImg +
		   " | cut -d: -f1 | xargs -r -n1 losetup -d; rm -f " + kImg);
	}

	static void SetUpTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		std::string out, c = kCfs;
		std::string setup =
			"set -e; modprobe -a nvmet nvmet_rdma loop; "
			"mountpoint -q /sys/kernel/config || mount -t configfs "
			"none /sys/kernel/config; truncate -s 64M " +
			std::string(kImg) + "; dev=$(losetup -f --show " +
			kImg + "); for s in " + kNvmetSub + " " + kNvmetClosed +
			"; do mkdir " + c + "/subsystems/$s; mkdir " + c +
			"/subsystems/$s/namespaces/1; echo -n $dev > " + c +
			"/subsystems/$s/namespaces/1/device_path; echo 1 > " +
			c +
			"/subsystems/$s/namespaces/1/enable; done; echo 1 > " +
			c + "/subsystems/" + kNvmetSub +
			"/attr_allow_any_host; mkdir " + c +
			"/ports/30; echo rdma > " + c +
			"/ports/30/addr_trtype; echo ipv4 > " + c +
			"/ports/30/addr_adrfam; echo " + kAddr + " > " + c +
			"/ports/30/addr_traddr; echo " +
			std::to_string(kNvmetPort) + " > " + c +
			"/ports/30/addr_trsvcid; for s in " + kNvmetSub + " " +
			kNvmetClosed + "; do ln -s " + c + "/subsystems/$s " +
			c + "/ports/30/subsystems/$s; done";
		NvmetTeardown();
		nvmet_up_ = Sh(setup, &out) == 0;
		if (!nvmet_up_) {
			ADD_FAILURE() << "nvmet setup: " << out;
		}
		tgt_ = new Tgt();
		::testing::AssertionResult started = tgt_->Start(
			"nvmf_host_test",
			std::string("listen ") + kAddr + " " +
				std::to_string(kWharfPort) +
				"\nshards 1\nsubsystem " + kWharfSub +
				"\n  namespace 1 ram:64M\n  allow-any-host\n"
				"subsystem " +
				kWharfClosed +
				"\n  namespace 1 ram:1M\n  allow-host "
				"nqn.2014-08.org.nvmexpress:uuid:"
				"00000000-0000-0000-0000-000000000001\n" +
				ExtraWharfSubsystems());
		if (!started) {
			ADD_FAILURE() << started.message();
		}
		SuiteCtxCreate(&ctx_, &cm_);
	}

	static void TearDownTestSuite()
	{
		SuiteCtxDestroy(&ctx_, &cm_);
		if (tgt_) {
			EXPECT_TRUE(tgt_->Stop());
			delete tgt_;
			tgt_ = nullptr;
		}
		if (nvmet_up_)
			NvmetTeardown();
	}

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		ASSERT_NE(nullptr, cm_);
		ASSERT_NE(nullptr, tgt_);
		if (GetParam().port == kNvmetPort) {
			ASSERT_TRUE(nvmet_up_);
		}
	}

	int
	Connect(const char *subnqn, unsigned queues, std::string *err,
		wharf_nvmf_host **out, uint32_t io_timeout_ms = 0,
		uint32_t kato_ms = 0,
		uint32_t ctrl_loss_tmo_ms = WHARF_NVMF_HOST_CTRL_LOSS_TMO_MS)
	{
		sockaddr_in a = {};
		a.sin_family = AF_INET;
		a.sin_port = htons(GetParam().port);
		inet_pton(AF_INET, kAddr, &a.sin_addr);
		wharf_nvmf_host_opts o;
		wharf_nvmf_host_opts_init(&o);
		o.cm = cm_;
		o.dst = (sockaddr *)&a;
		o.subnqn = subnqn;
		o.nr_io_queues = queues;
		o.queue_size = 32;
		o.io_timeout_ms = io_timeout_ms;
		o.kato_ms = kato_ms;
		o.ctrl_loss_tmo_ms = ctrl_loss_tmo_ms;
		return HostConnect(&o, err, out);
	}

	// Connect() with @queues I/O queues; *@ns: the first namespace.
	::testing::AssertionResult ConnectNs(unsigned queues,
					     wharf_nvmf_host **h,
					     struct wharf_nvmf_host_ns *ns)
	{
		std::string err;
		int rc = Connect(GetParam().sub, queues, &err, h);
		if (rc)
			return ::testing::AssertionFailure()
			       << "connect: " << rc << ": " << err;
		*ns = {};
		ns->size = sizeof(*ns);
		rc = wharf_nvmf_host_ns(*h, 0, ns);
		if (rc)
			return ::testing::AssertionFailure() << "ns: " << rc;
		return ::testing::AssertionSuccess();
	}
};

Tgt *NvmfHost::tgt_;
wharf_ctx *NvmfHost::ctx_;
wharf_cm *NvmfHost::cm_;
bool NvmfHost::nvmet_up_;

TEST_P(NvmfHost, ConnectIdentifyWriteReadDisconnect)
{
	const Target &t = GetParam();
	wharf_nvmf_host *h = nullptr;
	std::string err;

	ASSERT_EQ(0, Connect(t.sub, 3, &err, &h)) << err;
	struct wharf_nvmf_host_info in = {};
	in.size = sizeof(in);
	ASSERT_EQ(0, wharf_nvmf_host_info(h, &in));
	EXPECT_EQ(3u, in.nr_io_queues);
	EXPECT_GE(in.cntlid, 1);
	EXPECT_LE(in.cntlid, 0xFFEF);
	EXPECT_STREQ(t.sub, in.subnqn);
	EXPECT_GE(in.vs, 0x10200u) << std::hex << in.vs;
	EXPECT_GE(in.queue_size, 2u);
	EXPECT_LE(in.queue_size, 32u);
	EXPECT_GE(in.max_io_size, 32768u);
	EXPECT_NE(0u, in.cap >> 24 & 0xFF) << "CAP.TO";
	EXPECT_GE(in.nr_ns, 1u);
	struct wharf_nvmf_host_ns ns = {};
	ns.size = sizeof(ns);
	ASSERT_EQ(0, wharf_nvmf_host_ns(h, 0, &ns));
	EXPECT_EQ(1u, ns.nsid);
	ASSERT_TRUE(ns.block_size == 512 || ns.block_size == 4096)
		<< ns.block_size;
	EXPECT_EQ(kNsBytes, ns.nblocks * ns.block_size);
	std::cout << t.name << ": cntlid " << in.cntlid << ", "
		  << in.nr_io_queues << " queues of " << in.queue_size
		  << ", in-capsule " << in.in_capsule_size << ", max I/O "
		  << in.max_io_size << ", mdts " << (int)in.mdts << ", model '"
		  << in.mn << "'\n";

	// Queues spread over the shards: queue i on shard i % 2.
	for (unsigned i = 0; i < 3; i++)
		EXPECT_EQ(i % 2, wharf_shard_index(wharf_nvmf_host_queue_shard(
					 wharf_nvmf_host_queue(h, i))));
	EXPECT_EQ(nullptr, wharf_nvmf_host_queue(h, 3));

	const uint32_t bs = ns.block_size;
	const uint32_t small = 4096 / bs, big = 32768 / bs;
	for (unsigned i = 0; i < 3; i++) {
		struct wharf_nvmf_host_queue *q = wharf_nvmf_host_queue(h, i);
		uint64_t lba = 2048ull * i * (4096 / bs);
		auto a = Pattern(4096, i), b = Pattern(32768, i + 10);
		std::vector<uint8_t> ra(4096), rb(32768);

		ASSERT_EQ(0, DoIo(q, 'w', lba, small, a.data()));
		ASSERT_EQ(0, DoIo(q, 'w', lba + 64, big, b.data()));
		ASSERT_EQ(0, DoIo(q, 'f', 0, 0, nullptr));
		// Read back through another queue than the one written.
		struct wharf_nvmf_host_queue *rq =
			wharf_nvmf_host_queue(h, (i + 1) % 3);
		ASSERT_EQ(0, DoIo(rq, 'r', lba, small, ra.data()));
		ASSERT_EQ(0, DoIo(rq, 'r', lba + 64, big, rb.data()));
		EXPECT_TRUE(a == ra) << "queue " << i << ": 4 KiB differs";
		EXPECT_TRUE(b == rb) << "queue " << i << ": 32 KiB differs";
	}

	// Past the end: an NVMe error on that command, the queue lives on.
	struct wharf_nvmf_host_queue *q0 = wharf_nvmf_host_queue(h, 0);
	std::vector<uint8_t> r(4096);
	uint16_t nvme = 0;
	EXPECT_EQ(-EIO, DoIo(q0, 'r', ns.nblocks, small, r.data(), &nvme));
	EXPECT_NE(0, nvme & 0x7FF);
	EXPECT_EQ(0, DoIo(q0, 'r', 0, small, r.data()));
	// Submission limits: over max_io_size, unknown namespace.
	std::vector<uint8_t> huge(in.max_io_size + bs);
	EXPECT_EQ(-EINVAL,
		  DoIo(q0, 'r', 0, (in.max_io_size + bs) / bs, huge.data()));

	uint64_t in_capsule = 0, keyed = 0;
	for (unsigned i = 0; i < 3; i++) {
		struct wharf_nvmf_host_queue_stats s = {};
		s.size = sizeof(s);
		ASSERT_EQ(0, wharf_nvmf_host_queue_stats(
				     wharf_nvmf_host_queue(h, i), &s));
		EXPECT_EQ(s.submitted, s.completed);
		EXPECT_EQ(0u, s.outstanding);
		EXPECT_EQ(0, s.error);
		EXPECT_EQ(0u, s.bad_responses);
		EXPECT_EQ(0u, s.timeouts);
		in_capsule += s.in_capsule;
		keyed += s.keyed;
	}
	if (in.in_capsule_size >= 4096) {
		EXPECT_EQ(3u, in_capsule) << "4 KiB writes in the capsule";
	}
	EXPECT_GE(keyed, 3u) << "32 KiB writes by keyed SGL";
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
}

// Write Zeroes (with and without DEAC) and Dataset Management Deallocate
// of several ranges: ONCS offers both, the blocks read back as zeroes
// (Write Zeroes always; deallocated ones where DLFEAT promises it), the
// blocks around them keep their data; bad ranges are refused before
// anything is sent.
TEST_P(NvmfHost, WriteZeroesAndDeallocate)
{
	const Target &t = GetParam();
	wharf_nvmf_host *h = nullptr;
	std::string err;

	ASSERT_EQ(0, Connect(t.sub, 1, &err, &h)) << err;
	struct wharf_nvmf_host_info in = {};
	in.size = sizeof(in);
	ASSERT_EQ(0, wharf_nvmf_host_info(h, &in));
	EXPECT_TRUE(in.oncs & WHARF_NVMF_HOST_ONCS_WRITE_ZEROES) << in.oncs;
	EXPECT_TRUE(in.oncs & WHARF_NVMF_HOST_ONCS_DSM) << in.oncs;
	struct wharf_nvmf_host_ns ns = {};
	ns.size = sizeof(ns);
	ASSERT_EQ(0, wharf_nvmf_host_ns(h, 0, &ns));
	std::cout << t.name << ": ONCS 0x" << std::hex << in.oncs
		  << ", DLFEAT 0x" << (int)ns.dlfeat << std::dec
		  << ", deallocated blocks read as zeroes: "
		  << ns.dealloc_reads_zero << "\n";
	if (t.port == kWharfPort) {
		EXPECT_TRUE(ns.dealloc_reads_zero)
			<< "targets/nvmf promises it";
	}

	struct wharf_nvmf_host_queue *q = wharf_nvmf_host_queue(h, 0);
	const uint32_t bs = ns.block_size, n = 65536 / bs;
	const uint64_t base = 4096ull * (4096 / bs);
	const std::vector<uint8_t> zero(65536, 0);
	std::vector<uint8_t> r(65536);
	auto fill = [&](unsigned seed) {
		auto p = Pattern(65536, seed);
		EXPECT_EQ(0, DoIo(q, 'w', base, n, p.data()));
		return p;
	};
	auto read = [&]() {
		EXPECT_EQ(0, DoIo(q, 'r', base, n, r.data()));
		return r;
	};

	// Write Zeroes of the middle half, with and without DEAC.
	for (bool deac : {false, true}) {
		auto p = fill(deac ? 2 : 1);
		ASSERT_EQ(0, DoIo(q, 'z', base + n / 4, n / 2, nullptr, nullptr,
				  deac));
		read();
		EXPECT_TRUE(
			std::equal(r.begin(), r.begin() + 16384, p.begin()));
		EXPECT_TRUE(std::equal(r.begin() + 16384, r.begin() + 49152,
				       zero.begin()))
			<< "zeroed blocks, deac " << deac;
		EXPECT_TRUE(std::equal(r.begin() + 49152, r.end(),
				       p.begin() + 49152));
	}

	// Deallocate two ranges in one command.
	auto p = fill(3);
	ASSERT_EQ(0, DoIo(q, 'd', 0, 0, nullptr, nullptr, false,
			  {{base, n / 4}, {base + n / 2, n / 4}}));
	read();
	EXPECT_TRUE(std::equal(r.begin() + 16384, r.begin() + 32768,
			       p.begin() + 16384))
		<< "between the ranges";
	EXPECT_TRUE(std::equal(r.begin() + 49152, r.end(), p.begin() + 49152));
	if (ns.dealloc_reads_zero) {
		EXPECT_TRUE(
			std::equal(r.begin(), r.begin() + 16384, zero.begin()));
		EXPECT_TRUE(std::equal(r.begin() + 32768, r.begin() + 49152,
				       zero.begin()));
	}

	// Refused before sending: past the end, too many blocks or ranges.
	EXPECT_EQ(-EINVAL, DoIo(q, 'z', ns.nblocks - 1, 2, nullptr));
	EXPECT_EQ(-EINVAL,
		  DoIo(q, 'z', 0, WHARF_NVMF_HOST_WZ_MAX_BLOCKS + 1, nullptr));
	EXPECT_EQ(-EINVAL, DoIo(q, 'z', 0, 0, nullptr));
	EXPECT_EQ(-EINVAL, DoIo(q, 'd', 0, 0, nullptr, nullptr, false, {}));
	EXPECT_EQ(-EINVAL, DoIo(q, 'd', 0, 0, nullptr, nullptr, false,
				{{ns.nblocks, 1}}));
	EXPECT_EQ(-EINVAL,
		  DoIo(q, 'd', 0, 0, nullptr, nullptr, false, {{0, 0}}));
	std::vector<wharf_nvmf_host_range> many(WHARF_NVMF_HOST_DSM_MAX_RANGES +
							1,
						wharf_nvmf_host_range{0, 1});
	EXPECT_EQ(-EINVAL, DoIo(q, 'd', 0, 0, nullptr, nullptr, false, many));
	many.pop_back();
	for (unsigned i = 0; i < many.size(); i++)
		many[i] = {base + i, 1};
	EXPECT_EQ(0, DoIo(q, 'd', 0, 0, nullptr, nullptr, false, many))
		<< "256 ranges: 4 KiB of range list, keyed or in the capsule";
	struct wharf_nvmf_host_queue_stats st = {};
	st.size = sizeof(st);
	ASSERT_EQ(0, wharf_nvmf_host_queue_stats(q, &st));
	EXPECT_EQ(0u, st.nvme_errors);
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
}

// The discovery controller (well-known NQN, admin queue only): its log
// lists the subsystem this host may use, on the port, by RDMA, and not
// the subsystem that does not allow the host.
TEST_P(NvmfHost, DiscoverListsTheSubsystem)
{
	const Target &t = GetParam();
	sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_port = htons(t.port);
	inet_pton(AF_INET, kAddr, &a.sin_addr);
	wharf_nvmf_host_opts o;
	wharf_nvmf_host_opts_init(&o);
	o.cm = cm_;
	o.dst = (sockaddr *)&a;
	wharf_nvmf_host_disc_entry *ents = nullptr;
	size_t n = 0;

	TakeErrors();
	ASSERT_EQ(0, wharf_nvmf_host_discover(&o, &ents, &n)) << TakeErrors();
	std::vector<std::string> nqns;
	const wharf_nvmf_host_disc_entry *sub = nullptr;
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(sizeof(ents[i]), ents[i].size);
		std::cout << t.name << ": trtype " << +ents[i].trtype
			  << " adrfam " << +ents[i].adrfam << " subtype "
			  << +ents[i].subtype << " portid " << ents[i].portid
			  << " cntlid 0x" << std::hex << ents[i].cntlid
			  << std::dec << " " << ents[i].traddr << ":"
			  << ents[i].trsvcid << " " << ents[i].subnqn << "\n";
		nqns.push_back(ents[i].subnqn);
		if (!strcmp(ents[i].subnqn, t.sub))
			sub = &ents[i];
	}
	ASSERT_NE(nullptr, sub);
	EXPECT_EQ(1, sub->trtype);  // RDMA
	EXPECT_EQ(1, sub->adrfam);  // IPv4
	EXPECT_EQ(2, sub->subtype); // NVM subsystem
	EXPECT_STREQ(kAddr, sub->traddr);
	EXPECT_EQ(std::to_string(t.port), sub->trsvcid);
	EXPECT_EQ(0xFFFF, sub->cntlid); // dynamic controllers
	EXPECT_EQ(1, sub->rdma_qptype); // reliable connected
	EXPECT_EQ(1, sub->rdma_cms);	// RDMA CM
	EXPECT_EQ(nqns.end(), std::find(nqns.begin(), nqns.end(), t.closed));
	if (t.port == kWharfPort) {
		// 1 + 4 entries and the header: two Get Log Page reads.
		EXPECT_EQ(1 + kWharfExtra, n);
		for (unsigned i = 1; i <= kWharfExtra; i++)
			EXPECT_NE(nqns.end(),
				  std::find(nqns.begin(), nqns.end(),
					    ExtraWharfSub(i)));
	}
	free(ents);

	// wharf-nvmf-perf --discover prints the same entries.
	std::string perf =
		wharf_guest::built_program("initiators/nvmf/wharf-nvmf-perf");
	ASSERT_FALSE(perf.empty());
	std::string out;
	EXPECT_EQ(0, Sh(perf + " --traddr " + kAddr + " --trsvcid " +
				std::to_string(t.port) + " --discover",
			&out, 60))
		<< out;
	EXPECT_NE(std::string::npos, out.find(std::to_string(n) + " entries"))
		<< out;
	EXPECT_NE(std::string::npos,
		  out.find(std::string("traddr ") + kAddr + " trsvcid " +
			   std::to_string(t.port) + " subnqn " + t.sub + " "))
		<< out;

	// The subsystem it named takes a connection afterwards.
	wharf_nvmf_host *h = nullptr;
	std::string err;
	ASSERT_EQ(0, Connect(t.sub, 1, &err, &h)) << err;
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
}

TEST_P(NvmfHost, UnknownSubsystemIsRefused)
{
	wharf_nvmf_host *h = nullptr;
	std::string err;
	std::string nqn = std::string(GetParam().sub) + "-nope";

	EXPECT_EQ(-ECONNREFUSED, Connect(nqn.c_str(), 1, &err, &h));
	EXPECT_EQ(nullptr, h);
	EXPECT_NE(std::string::npos, err.find("refused")) << err;
	EXPECT_NE(std::string::npos, err.find(nqn)) << err;
	std::cout << GetParam().name << ": " << err << "\n";
}

TEST_P(NvmfHost, HostNotAllowedIsRefused)
{
	wharf_nvmf_host *h = nullptr;
	std::string err;

	EXPECT_EQ(-ECONNREFUSED, Connect(GetParam().closed, 1, &err, &h));
	EXPECT_EQ(nullptr, h);
	EXPECT_NE(std::string::npos, err.find("refused")) << err;
	std::cout << GetParam().name << ": " << err << "\n";
	// The controller and the host are still fine afterwards.
	ASSERT_EQ(0, Connect(GetParam().sub, 1, &err, &h)) << err;
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
}

// KATO 1 s and four idle seconds: only the host's Keep Alive commands
// (every 500 ms) keep the controller, and so its I/O queue, alive.
TEST_P(NvmfHost, KeepAliveKeepsAnIdleControllerAlive)
{
	wharf_nvmf_host *h = nullptr;
	std::string err;

	ASSERT_EQ(0, Connect(GetParam().sub, 1, &err, &h, 0, 1000)) << err;
	struct wharf_nvmf_host_info in = {};
	in.size = sizeof(in);
	ASSERT_EQ(0, wharf_nvmf_host_info(h, &in));
	EXPECT_EQ(1000u, in.kato_ms);
	struct wharf_nvmf_host_ns ns = {};
	ns.size = sizeof(ns);
	ASSERT_EQ(0, wharf_nvmf_host_ns(h, 0, &ns));
	std::this_thread::sleep_for(std::chrono::seconds(4));
	std::vector<uint8_t> buf(4096);
	EXPECT_EQ(0, DoIo(wharf_nvmf_host_queue(h, 0), 'r', 0,
			  4096 / ns.block_size, buf.data()));
	struct wharf_nvmf_host_queue_stats s = {};
	s.size = sizeof(s);
	ASSERT_EQ(0,
		  wharf_nvmf_host_queue_stats(wharf_nvmf_host_queue(h, 0), &s));
	EXPECT_EQ(0, s.error);
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
}

TEST_P(NvmfHost, PerfVerifyInCapsuleAndKeyed)
{
	std::string perf =
		wharf_guest::built_program("initiators/nvmf/wharf-nvmf-perf");
	ASSERT_FALSE(perf.empty());
	for (const char *size : {"4k", "16k"}) {
		std::string out;
		int rc = Sh(perf + " --traddr " + kAddr + " --trsvcid " +
				    std::to_string(GetParam().port) +
				    " --subnqn " + GetParam().sub +
				    " --queues 2 --shards 2 --qd 8 --time 3 "
				    "--pattern randwrite --verify --quiet "
				    "--io-size " +
				    size,
			    &out, 120);
		EXPECT_EQ(0, rc) << out;
		EXPECT_NE(std::string::npos,
			  out.find(", 0 errors, 0 verify mismatches"))
			<< out;
		std::cout << GetParam().name << " " << size << ":\n" << out;
	}
}

// SIGINT once completions flow ends a --verify run as if its time were up:
// the commands drain, every slot's last write is read back, the report
// comes, and perf exits 0 long before its --time.
TEST_P(NvmfHost, PerfInterruptedDrainsAndReports)
{
	std::string perf =
		wharf_guest::built_program("initiators/nvmf/wharf-nvmf-perf");
	ASSERT_FALSE(perf.empty());
	std::string err =
		std::string("/tmp/nvmf_host_perf_int.") + GetParam().name;
	std::string out;
	int rc = Sh("rm -f " + err + "; " + perf + " --traddr " + kAddr +
			    " --trsvcid " + std::to_string(GetParam().port) +
			    " --subnqn " + GetParam().sub +
			    " --queues 2 --shards 2 --qd 8 --time 100 "
			    "--pattern randwrite --verify --json 2>" +
			    err +
			    " & p=$!; i=0; while [ $i -lt 600 ] && "
			    "! grep -qE \" [1-9][0-9]* IOPS \" " +
			    err +
			    "; do sleep 0.1; i=$((i + 1)); done; "
			    "kill -INT $p; wait $p; rc=$?; cat " +
			    err + " >&2; exit $rc",
		    &out, 90);
	EXPECT_EQ(0, rc) << out;
	EXPECT_NE(std::string::npos,
		  out.find("wharf-nvmf-perf: interrupted at"))
		<< out;
	size_t j = out.find("{\"tool\"");
	ASSERT_NE(std::string::npos, j) << out;
	std::string json = out.substr(j);
	EXPECT_NE(std::string::npos, json.find("\"errors\":0,")) << json;
	EXPECT_NE(std::string::npos, json.find("\"verify_errors\":0,")) << json;
	EXPECT_NE(std::string::npos, json.find("\"rechecked\":16")) << json;
}

// --- I/O from any thread, and from the caller's registered memory -------

// One command submitted off its queue's shard: how often and where its
// callback ran.
struct Cmd {
	struct wharf_shard *owner = nullptr;
	std::atomic<int> calls{0};
	std::atomic<bool> off_owner{false};
	int status = 0;
};

void CmdDone(int status, uint16_t, void *arg)
{
	Cmd *c = static_cast<Cmd *>(arg);
	if (wharf_shard_current() != c->owner)
		c->off_owner = true;
	c->status = status;
	c->calls.fetch_add(1);
}

// Waits (bounded) until every command in @cmds ran its callback.
bool WaitCmds(std::vector<Cmd> &cmds)
{
	return Poll([&] {
		for (auto &c : cmds)
			if (c.calls.load() < 1)
				return false;
		return true;
	});
}

// Runs @fn on shard @s (a shard thread that owns no queue of the test)
// and waits for it.
void OnShard(struct wharf_shard *s, std::function<void()> fn)
{
	struct Call {
		std::function<void()> fn;
		std::atomic<bool> done{false};
	} c;
	c.fn = fn;
	ASSERT_EQ(0, wharf_shard_send(
			     s,
			     [](struct wharf_shard *, void *a) {
				     Call *c = static_cast<Call *>(a);
				     c->fn();
				     c->done = true;
			     },
			     &c));
	ASSERT_TRUE(Poll([&] { return c.done.load(); }));
}

// Four application threads write, flush and read back their own blocks
// on every queue, four commands in flight each, with the calls made on
// the threads themselves: the data reads back, every callback runs once,
// on the queue's owner shard.  A shard thread that does not own the
// queue submits too.  Checks the calling thread can make fail at once,
// with no callback.
TEST_P(NvmfHost, IoFromAnyThread)
{
	wharf_nvmf_host *h = nullptr;
	struct wharf_nvmf_host_ns ns;

	ASSERT_TRUE(ConnectNs(3, &h, &ns));
	const uint32_t bs = ns.block_size, nlb = 8192 / bs;
	const unsigned kThreads = 4, kRounds = 6, kBatch = 4;
	std::atomic<unsigned> bad_data{0}, bad_rc{0}, bad_cb{0}, lost{0};

	auto worker = [&](unsigned t) {
		for (unsigned r = 0; r < kRounds; r++) {
			struct wharf_nvmf_host_queue *q =
				wharf_nvmf_host_queue(h, (t + r) % 3);
			struct wharf_shard *owner =
				wharf_nvmf_host_queue_shard(q);
			std::vector<std::vector<uint8_t>> w, rd;
			std::vector<Cmd> wc(kBatch), fc(1), rc(kBatch);
			for (unsigned b = 0; b < kBatch; b++) {
				uint64_t lba =
					((uint64_t)t * kBatch + b) * nlb * 4;
				w.push_back(
					Pattern(8192, t * 100 + r * 10 + b));
				rd.emplace_back(8192, 0xEE);
				wc[b].owner = rc[b].owner = owner;
				if (wharf_nvmf_host_write(q, 1, lba, nlb,
							  w[b].data(), CmdDone,
							  &wc[b]))
					bad_rc++;
			}
			if (!WaitCmds(wc)) {
				lost++;
				return;
			}
			fc[0].owner = owner;
			if (wharf_nvmf_host_flush(q, 1, CmdDone, &fc[0]))
				bad_rc++;
			for (unsigned b = 0; b < kBatch; b++) {
				uint64_t lba =
					((uint64_t)t * kBatch + b) * nlb * 4;
				if (wharf_nvmf_host_read(q, 1, lba, nlb,
							 rd[b].data(), CmdDone,
							 &rc[b]))
					bad_rc++;
			}
			if (!WaitCmds(rc) || !WaitCmds(fc)) {
				lost++;
				return;
			}
			for (auto *v : {&wc, &fc, &rc})
				for (auto &c : *v)
					if (c.calls.load() != 1 ||
					    c.off_owner || c.status)
						bad_cb++;
			for (unsigned b = 0; b < kBatch; b++)
				if (w[b] != rd[b])
					bad_data++;
		}
	};
	std::vector<std::thread> th;
	for (unsigned t = 0; t < kThreads; t++)
		th.emplace_back(worker, t);
	for (auto &x : th)
		x.join();
	EXPECT_EQ(0u, lost.load()) << "commands without a callback";
	EXPECT_EQ(0u, bad_rc.load()) << "calls that failed";
	EXPECT_EQ(0u, bad_cb.load())
		<< "callbacks not once, off the owner shard, or failed";
	EXPECT_EQ(0u, bad_data.load()) << "blocks read back different";

	// From shard 1's thread to queue 0 (owned by shard 0): a hop too.
	struct wharf_nvmf_host_queue *q0 = wharf_nvmf_host_queue(h, 0);
	struct wharf_shard *s0 = wharf_nvmf_host_queue_shard(q0);
	struct wharf_shard *s1 =
		wharf_nvmf_host_queue_shard(wharf_nvmf_host_queue(h, 1));
	ASSERT_NE(s0, s1);
	std::vector<uint8_t> buf(8192);
	std::vector<Cmd> c(1);
	c[0].owner = s0;
	int rc = 1;
	OnShard(s1, [&] {
		rc = wharf_nvmf_host_read(q0, 1, 0, nlb, buf.data(), CmdDone,
					  &c[0]);
	});
	EXPECT_EQ(0, rc);
	ASSERT_TRUE(WaitCmds(c));
	EXPECT_EQ(0, c[0].status);
	EXPECT_FALSE(c[0].off_owner.load());

	// Write Zeroes and Deallocate off the shard; blocks read as zeroes
	// after Write Zeroes.
	std::vector<Cmd> z(2);
	z[0].owner = z[1].owner = s0;
	wharf_nvmf_host_range range = {nlb * 64, nlb};
	EXPECT_EQ(0, wharf_nvmf_host_write_zeroes(q0, 1, 0, nlb, false, CmdDone,
						  &z[0]));
	EXPECT_EQ(0, wharf_nvmf_host_dsm_deallocate(q0, 1, &range, 1, CmdDone,
						    &z[1]));
	ASSERT_TRUE(WaitCmds(z));
	EXPECT_EQ(0, z[0].status);
	EXPECT_EQ(0, z[1].status);
	EXPECT_FALSE(z[0].off_owner.load() || z[1].off_owner.load());
	ASSERT_EQ(0, DoIo(q0, 'r', 0, nlb, buf.data()));
	EXPECT_TRUE(std::all_of(buf.begin(), buf.end(),
				[](uint8_t b) { return b == 0; }));

	// Refused on the calling thread: no callback.
	Cmd never;
	EXPECT_EQ(-EINVAL, wharf_nvmf_host_read(q0, 1, 0, 0, buf.data(),
						CmdDone, &never));
	EXPECT_EQ(-EINVAL, wharf_nvmf_host_read(q0, 99, 0, nlb, buf.data(),
						CmdDone, &never));
	EXPECT_EQ(-EINVAL, wharf_nvmf_host_write(q0, 1, 0, nlb, buf.data(),
						 nullptr, &never));
	EXPECT_EQ(-EINVAL,
		  wharf_nvmf_host_write_zeroes(q0, 1, ns.nblocks, 1, false,
					       CmdDone, &never));
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	EXPECT_EQ(0, never.calls.load());
}

// A queue's worth of reads and writes in flight from several threads
// when disconnect is called: each call that returned 0 completes exactly
// once, on the owner shard, before disconnect returns.
TEST_P(NvmfHost, DisconnectWithOffShardIoInFlight)
{
	wharf_nvmf_host *h = nullptr;
	struct wharf_nvmf_host_ns ns;

	ASSERT_TRUE(ConnectNs(2, &h, &ns));
	const uint32_t nlb = 4096 / ns.block_size;
	const unsigned kThreads = 3, kPer = 48;
	std::vector<Cmd> cmds(kThreads * kPer);
	std::vector<std::vector<uint8_t>> bufs(kThreads * kPer,
					       std::vector<uint8_t>(4096));
	std::vector<int> rcs(kThreads * kPer, 1);

	std::vector<std::thread> th;
	for (unsigned t = 0; t < kThreads; t++)
		th.emplace_back([&, t] {
			for (unsigned i = 0; i < kPer; i++) {
				unsigned k = t * kPer + i;
				struct wharf_nvmf_host_queue *q =
					wharf_nvmf_host_queue(h, k % 2);
				cmds[k].owner = wharf_nvmf_host_queue_shard(q);
				rcs[k] = k % 3 == 0
						 ? wharf_nvmf_host_write(
							   q, 1, k * nlb, nlb,
							   bufs[k].data(),
							   CmdDone, &cmds[k])
						 : wharf_nvmf_host_read(
							   q, 1, k * nlb, nlb,
							   bufs[k].data(),
							   CmdDone, &cmds[k]);
			}
		});
	for (auto &x : th)
		x.join();
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	unsigned accepted = 0, ok = 0;
	for (size_t k = 0; k < cmds.size(); k++) {
		if (rcs[k]) {
			EXPECT_EQ(-EAGAIN, rcs[k]) << "call " << k;
			EXPECT_EQ(0, cmds[k].calls.load()) << "call " << k;
			continue;
		}
		accepted++;
		EXPECT_EQ(1, cmds[k].calls.load()) << "call " << k;
		EXPECT_FALSE(cmds[k].off_owner.load()) << "call " << k;
		int s = cmds[k].status;
		EXPECT_TRUE(s == 0 || s == -EAGAIN || s == -ENOTCONN ||
			    s == -ECONNABORTED)
			<< "call " << k << ": " << s;
		ok += s == 0;
	}
	std::cout << GetParam().name << ": " << accepted << " accepted, " << ok
		  << " completed before the disconnect\n";
	EXPECT_GT(accepted, 0u);
}

// Reads and writes straight from memory the caller registered, on every
// queue, called from the test thread and on the owner shard: the data
// reads back (through the bounce buffers too), the write above the
// in-capsule size goes by keyed SGL; a buffer not inside the
// registration, or a registration of another queue, is refused.
TEST_P(NvmfHost, ZeroCopyReadWrite)
{
	wharf_nvmf_host *h = nullptr;
	struct wharf_nvmf_host_ns ns;

	ASSERT_TRUE(ConnectNs(3, &h, &ns));
	const uint32_t bs = ns.block_size;
	const size_t kRegion = 1u << 20;
	uint8_t *region[3] = {};
	wharf_nvmf_host_mem *mem[3] = {};

	for (unsigned i = 0; i < 3; i++) {
		struct wharf_nvmf_host_queue *q = wharf_nvmf_host_queue(h, i);
		struct wharf_shard *owner = wharf_nvmf_host_queue_shard(q);
		ASSERT_EQ(0,
			  posix_memalign((void **)&region[i], 4096, kRegion));
		memset(region[i], 0xEE, kRegion);
		ASSERT_EQ(0, wharf_nvmf_host_mem_reg(q, region[i], kRegion,
						     &mem[i]));
		struct wharf_nvmf_host_queue_stats s0 = {}, s1 = {};
		s0.size = s1.size = sizeof(s0);
		ASSERT_EQ(0, wharf_nvmf_host_queue_stats(q, &s0));
		for (uint32_t len : {4096u, 32768u}) {
			uint64_t lba = (1048576ull * (i + 1) + len * 4) / bs;
			auto pat = Pattern(len, i * 7 + len);
			uint8_t *w = region[i] + 65536 + len;
			uint8_t *r = region[i] + 524288 + len;
			bool off = len == 32768; // write off the shard
			memcpy(w, pat.data(), len);
			std::vector<Cmd> wc(1), rc(1);
			wc[0].owner = rc[0].owner = owner;
			int wrc = 1, rrc = 1;
			auto write = [&] {
				wrc = wharf_nvmf_host_write_mem(
					q, mem[i], 1, lba, len / bs, w, CmdDone,
					&wc[0]);
			};
			auto read = [&] {
				rrc = wharf_nvmf_host_read_mem(q, mem[i], 1,
							       lba, len / bs, r,
							       CmdDone, &rc[0]);
			};
			if (off)
				write();
			else
				OnShard(owner, write);
			ASSERT_EQ(0, wrc);
			ASSERT_TRUE(WaitCmds(wc));
			ASSERT_EQ(0, wc[0].status);
			if (off)
				OnShard(owner, read);
			else
				read();
			ASSERT_EQ(0, rrc);
			ASSERT_TRUE(WaitCmds(rc));
			ASSERT_EQ(0, rc[0].status);
			EXPECT_FALSE(wc[0].off_owner || rc[0].off_owner);
			EXPECT_EQ(0, memcmp(pat.data(), r, len))
				<< "queue " << i << ": " << len
				<< " bytes read back differ";
			std::vector<uint8_t> b(len);
			ASSERT_EQ(0, DoIo(wharf_nvmf_host_queue(h, (i + 1) % 3),
					  'r', lba, len / bs, b.data()));
			EXPECT_TRUE(b == pat) << "queue " << i << ": " << len
					      << " bytes on the namespace";
		}
		ASSERT_EQ(0, wharf_nvmf_host_queue_stats(q, &s1));
		EXPECT_GE(s1.keyed - s0.keyed, 1u) << "32 KiB by keyed SGL";
		EXPECT_EQ(0u, s1.outstanding);
	}

	// Not inside the registration, or another queue's: refused at the
	// call, no callback.
	struct wharf_nvmf_host_queue *q0 = wharf_nvmf_host_queue(h, 0);
	uint32_t nlb = 4096 / bs;
	Cmd never;
	EXPECT_EQ(-EINVAL, wharf_nvmf_host_read_mem(q0, mem[0], 1, 0, nlb,
						    region[0] + kRegion - 2048,
						    CmdDone, &never));
	EXPECT_EQ(-EINVAL,
		  wharf_nvmf_host_write_mem(q0, mem[0], 1, 0, nlb, region[1],
					    CmdDone, &never));
	EXPECT_EQ(-EINVAL,
		  wharf_nvmf_host_read_mem(q0, mem[1], 1, 0, nlb, region[1],
					   CmdDone, &never));
	EXPECT_EQ(-EINVAL,
		  wharf_nvmf_host_read_mem(q0, nullptr, 1, 0, nlb, region[0],
					   CmdDone, &never));
	// The last byte of the registration is still inside.
	std::vector<Cmd> last(1);
	last[0].owner = wharf_nvmf_host_queue_shard(q0);
	EXPECT_EQ(0, wharf_nvmf_host_read_mem(q0, mem[0], 1, 0, nlb,
					      region[0] + kRegion - 4096,
					      CmdDone, &last[0]));
	ASSERT_TRUE(WaitCmds(last));
	EXPECT_EQ(0, last[0].status);

	EXPECT_EQ(0, wharf_nvmf_host_mem_dereg(mem[0]));
	EXPECT_EQ(0, wharf_nvmf_host_mem_dereg(mem[1]));
	EXPECT_EQ(0, wharf_nvmf_host_mem_dereg(nullptr));
	// mem[2] left registered: disconnect frees it.
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	EXPECT_EQ(0, never.calls.load());
	for (auto *p : region)
		free(p);
}

// wharf-nvmf-perf --verify with its caller-registered buffers, with its
// submissions from an application thread, and both: in-capsule and keyed
// sizes.
TEST_P(NvmfHost, PerfVerifyZeroCopyAndSubmitThread)
{
	std::string perf =
		wharf_guest::built_program("initiators/nvmf/wharf-nvmf-perf");
	ASSERT_FALSE(perf.empty());
	for (const char *mode :
	     {"--zero-copy", "--submit-thread", "--zero-copy --submit-thread"})
		for (const char *size : {"4k", "16k"}) {
			std::string out;
			int rc =
				Sh(perf + " --traddr " + kAddr + " --trsvcid " +
					   std::to_string(GetParam().port) +
					   " --subnqn " + GetParam().sub +
					   " --queues 2 --shards 2 --qd 8 "
					   "--time 2 --pattern randwrite "
					   "--verify --quiet --io-size " +
					   size + " " + mode,
				   &out, 120);
			EXPECT_EQ(0, rc) << mode << " " << size << "\n" << out;
			EXPECT_NE(std::string::npos,
				  out.find(", 0 errors, 0 verify mismatches"))
				<< out;
			std::cout << GetParam().name << " " << mode << " "
				  << size << ":\n"
				  << out;
		}
}

INSTANTIATE_TEST_SUITE_P(Targets, NvmfHost, ::testing::ValuesIn(kTargets),
			 [](const ::testing::TestParamInfo<Target> &i) {
				 return std::string(i.param.name);
			 });

// A target that stops answering (wharf-nvmf-tgt under SIGSTOP; nvmet runs
// in the kernel and cannot be stopped), with ctrl_loss_tmo "at once": the command
// times out, which loses the controller, which is DEAD at once: the
// command completes with -ENODEV, so do new ones on every queue, and the
// disconnect still completes once the target runs.  (Reconnecting is
// nvmf_host_recovery_test's.)
class NvmfHostStalled : public NvmfHost
{
};

TEST_P(NvmfHostStalled, CommandTimeoutLosesTheController)
{
	wharf_nvmf_host *h = nullptr;
	std::string err;
	pid_t pid = tgt_->Pid();
	// On an early return too: the target runs again and the host goes,
	// so no library thread outlives the test.
	struct Cleanup {
		pid_t pid;
		wharf_nvmf_host **h;
		~Cleanup()
		{
			kill(pid, SIGCONT);
			if (*h)
				wharf_nvmf_host_disconnect(*h);
		}
	} cleanup{pid, &h};

	ASSERT_GT(pid, 0);
	ASSERT_EQ(0, Connect(GetParam().sub, 2, &err, &h, 1000, 0,
			     WHARF_NVMF_HOST_TMO_AT_ONCE))
		<< err;
	struct wharf_nvmf_host_queue *q0 = wharf_nvmf_host_queue(h, 0);
	struct wharf_nvmf_host_queue *q1 = wharf_nvmf_host_queue(h, 1);
	std::vector<uint8_t> buf(4096);
	uint32_t nlb = 1;
	struct wharf_nvmf_host_ns ns = {};
	ns.size = sizeof(ns);
	ASSERT_EQ(0, wharf_nvmf_host_ns(h, 0, &ns));
	nlb = 4096 / ns.block_size;
	ASSERT_EQ(0, DoIo(q0, 'r', 0, nlb, buf.data()));

	ASSERT_TRUE(tgt_->Freeze());
	auto t0 = std::chrono::steady_clock::now();
	int rc = DoIo(q0, 'r', 0, nlb, buf.data());
	auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
			  std::chrono::steady_clock::now() - t0)
			  .count();
	EXPECT_EQ(-ENODEV, rc);
	EXPECT_GE(ms, 900) << "failed before io_timeout_ms";
	struct wharf_nvmf_host_queue_stats s = {};
	s.size = sizeof(s);
	ASSERT_EQ(0, wharf_nvmf_host_queue_stats(q0, &s));
	EXPECT_EQ(1u, s.timeouts);
	EXPECT_EQ(-ETIMEDOUT, s.error);
	EXPECT_EQ(1u, s.failed_held);
	EXPECT_EQ(0u, s.outstanding);
	struct wharf_nvmf_host_stats hs = {};
	hs.size = sizeof(hs);
	ASSERT_TRUE(Poll([&] {
		return wharf_nvmf_host_stats(h, &hs) == 0 &&
		       hs.state == WHARF_NVMF_HOST_DEAD;
	})) << wharf_nvmf_host_state_name(hs.state);
	EXPECT_EQ(1u, hs.losses);
	EXPECT_EQ(0u, hs.reconnect_attempts);
	EXPECT_EQ(-ETIMEDOUT, hs.last_error);
	EXPECT_EQ(-ENODEV, DoIo(q0, 'r', 0, nlb, buf.data()));
	EXPECT_EQ(-ENODEV, DoIo(q1, 'r', 0, nlb, buf.data()));
	ASSERT_EQ(0, kill(pid, SIGCONT));

	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	h = nullptr;
	// The target serves a new controller afterwards.
	ASSERT_EQ(0, Connect(GetParam().sub, 1, &err, &h)) << err;
	EXPECT_EQ(0,
		  DoIo(wharf_nvmf_host_queue(h, 0), 'r', 0, nlb, buf.data()));
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	h = nullptr;
}

INSTANTIATE_TEST_SUITE_P(WharfTarget, NvmfHostStalled,
			 ::testing::Values(kTargets[1]),
			 [](const ::testing::TestParamInfo<Target> &i) {
				 return std::string(i.param.name);
			 });

} // namespace
