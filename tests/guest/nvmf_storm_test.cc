// Connect storms and receive-budget pressure from the guest kernel's
// NVMe-oF host (nvme-cli) against wharf-nvmf-tgt.  The Linux host never
// retries a refused connect, so a target that has no room for a queue now
// must make it wait, not refuse it:
//  - a burst of controllers needing more receive buffers than the shards
//    start with all come up (the receive budget grows);
//  - a controller that arrives while a fixed budget is full waits and
//    comes up as soon as another controller leaves;
//  - a wait past its limit is refused in the transport's own terms
//    (NO_RSC), which the host logs as an NVMe-oF status.
// The host creates controllers one at a time (its fabrics device is
// serialised), so the handshake cap is not what these reach: concurrent
// handshakes come from ucmatose and wharf's clients (cm_interop_test,
// cm_storm_test).  Every command is bounded.
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/guest/nvmf_guest_util.h"

namespace
{

using namespace nvmf_guest;

const char kSub[] = "nqn.2024-01.io.wharf:storm";
constexpr int kCtrls = 16;

// A target with @args on @port, accepting any host.
::testing::AssertionResult StartTgt(Tgt *t, const char *name, const char *port,
				    unsigned shards,
				    const std::vector<std::string> &args)
{
	return t->Start(name,
			std::string("listen 198.18.0.1 ") + port + "\nshards " +
				std::to_string(shards) +
				"\nqueue-depth 32\nio-queues 2\nsubsystem " +
				kSub +
				"\n  namespace 1 null:1G\n  allow-any-host\n",
			args);
}

// Starts kCtrls `nvme connect`s at once (each its own host NQN and host
// ID, 2 I/O queues of 32) and waits for them all; returns how many
// succeeded.  Their errors go to @log.
int Burst(const char *port, std::string *log)
{
	std::string script =
		"for i in $(seq 1 " + std::to_string(kCtrls) +
		"); do\n"
		"  id=$(printf 00000000-0000-0000-0000-%012d $i)\n"
		"  (timeout 120 nvme connect -t rdma -a 198.18.0.1 -s " +
		port + " -n " + kSub +
		" -i 2 -Q 32 -D --hostnqn=nqn.2014-08.org.nvmexpress:uuid:$id"
		" --hostid=$id >/tmp/storm-$i.out 2>&1; echo $? "
		">/tmp/storm-$i.rc) &\n"
		"done\nwait\nok=0\n"
		"for i in $(seq 1 " +
		std::to_string(kCtrls) +
		"); do\n"
		"  if [ \"$(cat /tmp/storm-$i.rc)\" = 0 ]; then ok=$((ok + "
		"1));\n"
		"  else cat /tmp/storm-$i.out; fi\n"
		"done\necho ok=$ok\n";
	std::ofstream("/tmp/storm.sh") << script;
	std::string out;
	Sh("sh /tmp/storm.sh", &out, 300);
	if (log)
		*log = out;
	size_t at = out.rfind("ok=");
	return at == std::string::npos ? -1 : std::atoi(out.c_str() + at + 3);
}

// Controllers of kSub the kernel has live.
int LiveCtrls()
{
	int n = 0;
	for (const std::string &c : NvmeCtrls("subsysnqn", kSub))
		n += Trim(ReadFile("/sys/class/nvme/" + c + "/state")) ==
		     "live";
	return n;
}

void DisconnectAll()
{
	Sh(std::string("nvme disconnect -n ") + kSub, nullptr, 120);
	Poll([] { return LiveCtrls() == 0; });
}

std::string Dmesg()
{
	std::string out;
	Sh("dmesg", &out);
	return out;
}

class KernelHostStorm : public ::testing::Test
{
      protected:
	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		std::string out;
		ASSERT_EQ(0, Sh("modprobe -a nvme_rdma nvme_fabrics", &out))
			<< out;
		DisconnectAll();
	}
	void TearDown() override
	{
		DisconnectAll();
	}
};

// Creates one controller (2 I/O queues of 32, its own host NQN and ID)
// by writing its options to the kernel's /dev/nvme-fabrics, which is what
// nvme connect does (nvme-cli 2.3 itself refuses a second controller of a
// subsystem at an address as "already connected", whatever the host NQN).
// Returns the write's status and the kernel's answer in @out.
int ConnectOne(const char *port, int n, std::string *out, int limit_s = 120)
{
	char id[64];
	snprintf(id, sizeof(id), "00000000-0000-0000-0000-%012d", n);
	std::string opts = std::string("transport=rdma,traddr=198.18.0.1,") +
			   "trsvcid=" + port + ",nqn=" + kSub +
			   ",hostnqn=nqn.2014-08.org.nvmexpress:uuid:" + id +
			   ",hostid=" + id + ",nr_io_queues=2,queue_size=32";
	return Sh("exec 3<>/dev/nvme-fabrics && printf %s " + opts +
			  " >&3 && head -n 1 <&3",
		  out, limit_s);
}

// The kernel's controller of host NQN number @n, or "".
std::string CtrlOf(int n)
{
	char id[64];
	snprintf(id, sizeof(id), "00000000-0000-0000-0000-%012d", n);
	std::vector<std::string> c = NvmeCtrls("hostnqn", id);
	return c.empty() ? "" : c[0];
}

TEST_F(KernelHostStorm, ABurstBeyondTheInitialReceiveBuffersComesUp)
{
	Tgt t;
	// 256 buffers per shard, 16 reserved: 15 queues of 16 credits per
	// shard at first; the burst needs 48 queues on two shards.
	ASSERT_TRUE(
		StartTgt(&t, "nvmf_storm", "4430", 2, {"--srq-depth", "256"}));
	std::string log;
	int ok = Burst("4430", &log);
	EXPECT_EQ(kCtrls, ok) << log;
	EXPECT_EQ(kCtrls, LiveCtrls());
	std::map<std::string, uint64_t> s = t.Stats();
	EXPECT_EQ(3u * kCtrls, s["queues"]);
	EXPECT_EQ((uint64_t)kCtrls, s["ctrls"]);
	EXPECT_EQ(0u, s["rejected_busy"] + s["cm_failed"] + s["rejected"] +
			      s["deferred_timed_out"]);
	EXPECT_EQ(0u, s["deferred"]);
	DisconnectAll();
	EXPECT_TRUE(t.BackToZero());
	EXPECT_TRUE(t.Stop());
}

TEST_F(KernelHostStorm, AControllerWaitsForRoomAndComesUpWhenAnotherLeaves)
{
	Tgt t;
	// One shard whose 64 buffers (4 reserved) admit 3 queues: one
	// controller's admin and 2 I/O queues.
	ASSERT_TRUE(StartTgt(&t, "nvmf_storm_wait", "4431", 1,
			     {"--srq-depth", "64", "--srq-max", "64"}));
	std::string out;
	ASSERT_EQ(0, ConnectOne("4431", 1, &out)) << out;
	ASSERT_FALSE(CtrlOf(1).empty());
	// The second controller's admin queue finds no room: it waits.
	std::string out2;
	std::thread second([&out2] {
		EXPECT_EQ(0, ConnectOne("4431", 2, &out2)) << out2;
	});
	std::map<std::string, uint64_t> s;
	EXPECT_TRUE(Poll([&] {
		s = t.Stats();
		return s["deferred"] == 1;
	})) << "deferred "
	    << s["deferred"];
	// The host has created the controller; it is not live.
	EXPECT_EQ(1, LiveCtrls());
	// The first leaves: its queues' buffers come back, the waiting
	// queue is accepted, and the rest of the controller follows.
	ASSERT_EQ(0, Sh("nvme disconnect -d " + CtrlOf(1), &out)) << out;
	second.join();
	EXPECT_TRUE(Poll([] { return !CtrlOf(2).empty(); }));
	EXPECT_EQ(1, LiveCtrls());
	s = t.Stats();
	EXPECT_GE(s["deferred_total"], 1u);
	EXPECT_EQ(s["deferred_total"], s["deferred_accepted"]);
	EXPECT_EQ(0u, s["deferred_timed_out"] + s["rejected_busy"]);
	EXPECT_EQ(3u, s["queues"]);
	DisconnectAll();
	EXPECT_TRUE(t.BackToZero());
	EXPECT_EQ(0u, t.Stats()["deferred"]);
	EXPECT_TRUE(t.Stop());
}

TEST_F(KernelHostStorm, AWaitPastItsLimitIsRefusedWithTheNvmeStatus)
{
	Tgt t;
	ASSERT_TRUE(StartTgt(&t, "nvmf_storm_short", "4432", 1,
			     {"--srq-depth", "64", "--srq-max", "64",
			      "--defer-max-ms", "500"}));
	std::string out;
	ASSERT_EQ(0, ConnectOne("4432", 1, &out)) << out;
	size_t before = Dmesg().size();
	EXPECT_NE(0, ConnectOne("4432", 2, &out)) << out;
	EXPECT_TRUE(CtrlOf(2).empty());
	std::map<std::string, uint64_t> s = t.Stats();
	EXPECT_EQ(1u, s["deferred_timed_out"]);
	EXPECT_EQ(0u, s["deferred"]);
	// nvme_rdma_conn_rejected(): a consumer-defined REJ (28) with the
	// transport's {recfmt 0, sts NO_RSC (6)}, never a foreign payload.
	std::string dm = Dmesg();
	dm = dm.substr(before < dm.size() ? before : 0);
	EXPECT_NE(std::string::npos,
		  dm.find("Connect rejected: status 28 (consumer defined) "
			  "nvme status 6 (resource not found)"))
		<< dm;
	EXPECT_EQ(1, LiveCtrls()); // the first one never noticed
	DisconnectAll();
	EXPECT_TRUE(t.BackToZero());
	EXPECT_TRUE(t.Stop());
}

} // namespace
