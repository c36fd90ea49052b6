// wharf-nvmf-tgt against a host written by no one here: the guest
// kernel's nvme-rdma, driven by the stock nvme-cli and fio. One target
// for the whole suite (cases run in order): discovery, connect with the
// default and with 2 I/O queues, the namespace's size, fio randwrite with
// crc32c verify then randread, disconnect, 20 connect / disconnect cycles
// with the target's counters back to zero, and a host NQN the allow-list
// refuses. Every command is bounded by `timeout`.
#include <dirent.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/guest/nvmf_guest_util.h"

namespace
{

using namespace nvmf_guest;

const char kSub[] = "nqn.2024-01.io.wharf:guest";
const char kClosed[] = "nqn.2024-01.io.wharf:closed";
const char kPort[] = "4420";
constexpr uint64_t kNsBytes = 64ull << 20;

class KernelHost : public ::testing::Test
{
      protected:
	static Tgt *tgt_;
	static std::string hostnqn_;

	static void SetUpTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		std::string out;
		ASSERT_EQ(0, Sh("modprobe -a nvme_rdma nvme_fabrics", &out))
			<< out;
		hostnqn_ = Trim(ReadFile("/etc/nvme/hostnqn"));
		ASSERT_FALSE(hostnqn_.empty()) << "no /etc/nvme/hostnqn";
		tgt_ = new Tgt();
		ASSERT_TRUE(tgt_->Start(
			"nvmf_kernel_host",
			std::string("listen 198.18.0.1 ") + kPort +
				"\nshards 2\nqueue-depth 128\nio-queues 4\n"
				"subsystem " +
				kSub +
				"\n  serial WHARFGUEST1\n"
				"  namespace 1 ram:64M\n  allow-host " +
				hostnqn_ + "\nsubsystem " + kClosed +
				"\n  namespace 1 ram:1M\n  allow-host "
				"nqn.2014-08.org.nvmexpress:uuid:"
				"00000000-0000-0000-0000-000000000001\n"));
	}

	static void TearDownTestSuite()
	{
		if (!tgt_)
			return;
		Sh(std::string("nvme disconnect -n ") + kSub);
		EXPECT_TRUE(tgt_->Stop());
		delete tgt_;
		tgt_ = nullptr;
	}

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		ASSERT_NE(nullptr, tgt_);
		ASSERT_TRUE(tgt_->Alive()) << tgt_->Log();
	}

	static int Connect(const std::string &nqn, const std::string &extra,
			   std::string *out)
	{
		return Sh("nvme connect -t rdma -a 198.18.0.1 -s " +
				  std::string(kPort) + " -n " + nqn +
				  " --hostnqn=" + hostnqn_ + " " + extra,
			  out);
	}

	static int Disconnect(std::string *out)
	{
		return Sh(std::string("nvme disconnect -n ") + kSub, out);
	}

	// The controller (nvmeN) the kernel created for @nqn, or "".
	static std::string Ctrl(const std::string &nqn)
	{
		for (const std::string &c : NvmeCtrls("subsysnqn", nqn))
			if (Trim(ReadFile("/sys/class/nvme/" + c +
					  "/subsysnqn")) == nqn)
				return c;
		return "";
	}

	// The namespace block device of controller @ctrl: nvmeAnC, from
	// nvmeAnC or (native multipath) the path node nvmeAcBnC.
	static std::string Block(const std::string &ctrl)
	{
		std::string found;
		DIR *d = opendir(("/sys/class/nvme/" + ctrl).c_str());
		struct dirent *e;
		while (d && (e = readdir(d))) {
			std::string n = e->d_name;
			size_t c = n.find('c', 4), ns = n.rfind('n');
			if (n.rfind("nvme", 0) != 0 || ns <= 4)
				continue;
			if (c != std::string::npos && c < ns)
				n = n.substr(0, c) + n.substr(ns);
			found = n;
		}
		if (d)
			closedir(d);
		return found;
	}

	// Waits for the namespace's block device to appear.
	static std::string WaitBlock()
	{
		std::string dev;
		Poll([&] {
			std::string c = Ctrl(kSub);
			dev = c.empty() ? "" : Block(c);
			return !dev.empty() &&
			       access(("/dev/" + dev).c_str(), F_OK) == 0;
		});
		return dev;
	}
};

Tgt *KernelHost::tgt_ = nullptr;
std::string KernelHost::hostnqn_;

TEST_F(KernelHost, DiscoverListsTheSubsystems)
{
	std::string out;
	ASSERT_EQ(0, Sh(std::string("nvme discover -t rdma -a 198.18.0.1 -s ") +
				kPort + " --hostnqn=" + hostnqn_,
			&out))
		<< out;
	EXPECT_NE(std::string::npos, out.find(std::string("subnqn:  ") + kSub))
		<< out;
	EXPECT_NE(std::string::npos, out.find("trtype:  rdma")) << out;
	EXPECT_NE(std::string::npos, out.find("traddr:  198.18.0.1")) << out;
	EXPECT_TRUE(tgt_->BackToZero());
}

TEST_F(KernelHost, ConnectListFioDisconnect)
{
	std::string out;
	ASSERT_EQ(0, Connect(kSub, "", &out)) << out;
	std::string dev = WaitBlock();
	ASSERT_FALSE(dev.empty()) << "no block device for " << kSub;

	ASSERT_EQ(0, Sh("nvme list", &out)) << out;
	EXPECT_NE(std::string::npos, out.find("/dev/" + dev)) << out;
	EXPECT_NE(std::string::npos, out.find("WHARFGUEST1")) << out;
	uint64_t sectors = std::strtoull(
		ReadFile("/sys/block/" + dev + "/size").c_str(), nullptr, 10);
	EXPECT_EQ(kNsBytes, sectors * 512);

	std::string fio = "fio --name=t --filename=/dev/" + dev +
			  " --ioengine=libaio --direct=1 --bs=4k --iodepth=16"
			  " --size=8M --numjobs=1 ";
	ASSERT_EQ(0, Sh(fio + "--rw=randwrite --verify=crc32c --do_verify=1"
			      " --verify_fatal=1",
			&out, 300))
		<< out;
	EXPECT_NE(std::string::npos, out.find("err= 0")) << out;
	ASSERT_EQ(0, Sh(fio + "--rw=randread", &out, 300)) << out;
	EXPECT_NE(std::string::npos, out.find("err= 0")) << out;
	std::map<std::string, uint64_t> s = tgt_->Stats();
	EXPECT_GT(s["reads"] + s["writes"], 0u); // data moved by RDMA
	// nvme-rdma maps each read with a fast-registration MR and asks for
	// remote invalidation (keyed SGL subtype Fh): the responses invalidate
	// that key, and the kernel accepted them (it logs any key that is not
	// the MR's and resets the controller, which fio would have seen).
	EXPECT_GT(s["responses_inv"], 0u);
	std::string dmesg;
	ASSERT_EQ(0, Sh("dmesg", &dmesg));
	EXPECT_EQ(std::string::npos, dmesg.find("Bogus remote invalidation"))
		<< dmesg.substr(dmesg.size() > 2000 ? dmesg.size() - 2000 : 0);

	ASSERT_EQ(0, Disconnect(&out)) << out;
	EXPECT_NE(std::string::npos, out.find("disconnected 1 controller"))
		<< out;
	EXPECT_TRUE(tgt_->BackToZero());
}

TEST_F(KernelHost, ConnectWithTwoIoQueues)
{
	std::string out;
	ASSERT_EQ(0, Connect(kSub, "--nr-io-queues=2", &out)) << out;
	ASSERT_FALSE(WaitBlock().empty());
	std::string ctrl = Ctrl(kSub);
	// The admin queue and two I/O queues, on the target's side too.
	EXPECT_EQ("3",
		  Trim(ReadFile("/sys/class/nvme/" + ctrl + "/queue_count")));
	std::map<std::string, uint64_t> s;
	EXPECT_TRUE(Poll([&] {
		s = tgt_->Stats();
		return s["queues"] == 3;
	})) << "target queues "
	    << s["queues"];
	EXPECT_EQ(1u, s["ctrls"]);
	ASSERT_EQ(0, Disconnect(&out)) << out;
	EXPECT_TRUE(tgt_->BackToZero());
}

TEST_F(KernelHost, TwentyConnectDisconnectCycles)
{
	std::map<std::string, uint64_t> before = tgt_->Stats();
	for (int i = 0; i < 20; i++) {
		std::string out;
		ASSERT_EQ(0, Connect(kSub, "--nr-io-queues=2", &out))
			<< "cycle " << i << ": " << out;
		ASSERT_FALSE(WaitBlock().empty()) << "cycle " << i;
		ASSERT_EQ(0, Disconnect(&out)) << "cycle " << i << ": " << out;
	}
	EXPECT_TRUE(tgt_->BackToZero());
	std::map<std::string, uint64_t> after = tgt_->Stats();
	EXPECT_EQ(before["ctrls_created"] + 20, after["ctrls_created"]);
	EXPECT_EQ(before["accepted"] + 60, after["accepted"]);
	EXPECT_EQ(0u, after["wc_errors"] - before["wc_errors"]);
}

TEST_F(KernelHost, HostNotOnTheAllowListIsRefused)
{
	std::string out, dmesg;
	std::map<std::string, uint64_t> before = tgt_->Stats();
	EXPECT_NE(0, Connect(kClosed, "", &out)) << out;
	EXPECT_EQ("", Ctrl(kClosed));
	ASSERT_EQ(0, Sh("dmesg", &dmesg));
	// nvmf_log_connect_error(): "Connect for subsystem X is not allowed"
	EXPECT_NE(std::string::npos,
		  dmesg.find(std::string("Connect for subsystem ") + kClosed +
			     " is not allowed"))
		<< dmesg.substr(dmesg.size() > 2000 ? dmesg.size() - 2000 : 0);
	std::map<std::string, uint64_t> after = tgt_->Stats();
	EXPECT_LT(before["connects_failed"], after["connects_failed"]);
	EXPECT_TRUE(tgt_->BackToZero());
}

} // namespace
