// The NVMe-oF host's controller recovery (<wharf/nvmf_host.h>) against a
// target that dies: wharf-nvmf-tgt with a file namespace under /tmp,
// killed with SIGKILL and started again on the same port, NQN and file.
//  - wharf-nvmf-perf --verify runs through the kill and the restart: it
//    reconnects, retries what was in flight, finishes with no error and
//    no mismatch; also with --zero-copy --submit-thread (its registered
//    buffers registered again on the new connection);
//  - with the library: data acknowledged before the kill, reads and
//    writes submitted while the target is down (held), all complete once
//    it is back and read back intact; the state callback saw each state;
//  - the target stays down past a 3 s ctrl_loss_tmo: held and new
//    commands fail with -ENODEV, the disconnect frees everything;
//  - fast_io_fail_tmo fails held and new commands with -ENOLINK while
//    the host keeps reconnecting;
//  - nvmet-rdma: the configfs port's subsystem link removed (the kernel
//    deletes the controller) and added again: the host reconnects.
// Every wait is bounded; nothing asserts on a duration.
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <mutex>
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
const char kSub[] = "nqn.2024-01.io.wharf:recovery";
const char kImg[] = "/tmp/nvmf_host_recovery.img";
const char kNvmetSub[] = "nqn.2024-01.io.wharf:recovery-nvmet";
const char kNvmetImg[] = "/tmp/nvmf_host_recovery_nvmet.img";
const char kCfs[] = "/sys/kernel/config/nvmet";
// Ports no other guest test uses: a kernel nvmet port configured by one
// test outlives its process, and a target of a later test on the same
// port would share the address with it.
const uint16_t kPort = 4440, kNvmetPort = 4441;

std::string TgtConfig()
{
	return std::string("listen ") + kAddr + " " + std::to_string(kPort) +
	       "\nshards 1\nsubsystem " + kSub +
	       "\n  namespace 1 file:" + kImg + "\n  allow-any-host\n";
}

// The state callback's record (runs on shard 0).
struct States {
	std::mutex m;
	std::vector<wharf_nvmf_host_state> seen;

	static void Cb(enum wharf_nvmf_host_state s, int, void *arg)
	{
		States *st = static_cast<States *>(arg);
		std::lock_guard<std::mutex> g(st->m);
		st->seen.push_back(s);
	}

	bool Saw(wharf_nvmf_host_state s)
	{
		std::lock_guard<std::mutex> g(m);
		for (auto x : seen)
			if (x == s)
				return true;
		return false;
	}
};

class NvmfHostRecovery : public ::testing::Test
{
      protected:
	static wharf_ctx *ctx_;
	static wharf_cm *cm_;
	Tgt tgt_;

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

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		ASSERT_NE(nullptr, cm_);
		std::string out;
		ASSERT_EQ(0, Sh(std::string("rm -f ") + kImg +
					"; truncate -s 64M " + kImg,
				&out))
			<< out;
		ASSERT_TRUE(tgt_.Start("nvmf_host_recovery", TgtConfig()));
	}

	void TearDown() override
	{
		// A target that died on its own is a failure of its own, with
		// the reason (a crash shows as a signal).
		std::string death = tgt_.UnexpectedDeath();
		EXPECT_TRUE(death.empty()) << death;
		if (tgt_.Alive()) {
			EXPECT_TRUE(tgt_.Stop());
		}
		Sh(std::string("rm -f ") + kImg);
	}

	// SIGKILL, reaped.
	void PerfThroughRestart(const std::string &opts);

	void KillTarget()
	{
		pid_t pid = tgt_.Pid();
		ASSERT_GT(pid, 0) << tgt_.UnexpectedDeath();
		ASSERT_TRUE(tgt_.Kill(SIGKILL));
		ASSERT_TRUE(Poll([&] { return !tgt_.Alive(); }));
	}

	// Kills the target with commands certainly outstanding: stopped
	// first, it answers nothing more, and every command the host sends
	// in the next half second (at least the ones it sends again for the
	// answers that were on the wire) is still unanswered at the kill.
	void FreezeAndKillTarget()
	{
		pid_t pid = tgt_.Pid();
		ASSERT_GT(pid, 0) << tgt_.UnexpectedDeath();
		ASSERT_TRUE(tgt_.Freeze());
		std::this_thread::sleep_for(std::chrono::milliseconds(500));
		KillTarget();
	}

	int Connect(uint16_t port, const char *sub, unsigned queues,
		    uint32_t ctrl_loss_tmo_ms, States *st, std::string *err,
		    wharf_nvmf_host **out,
		    uint32_t fast_io_fail_tmo_ms = WHARF_NVMF_HOST_TMO_INFINITE)
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
		o.nr_io_queues = queues;
		o.queue_size = 32;
		o.reconnect_delay_ms = 300;
		o.ctrl_loss_tmo_ms = ctrl_loss_tmo_ms;
		o.fast_io_fail_tmo_ms = fast_io_fail_tmo_ms;
		o.on_state = States::Cb;
		o.state_arg = st;
		return HostConnect(&o, err, out);
	}

	static struct wharf_nvmf_host_stats Stats(wharf_nvmf_host *h)
	{
		struct wharf_nvmf_host_stats s = {};
		s.size = sizeof(s);
		EXPECT_EQ(0, wharf_nvmf_host_stats(h, &s));
		return s;
	}

	static uint32_t BlocksPer4k(wharf_nvmf_host *h)
	{
		struct wharf_nvmf_host_ns ns = {};
		ns.size = sizeof(ns);
		EXPECT_EQ(0, wharf_nvmf_host_ns(h, 0, &ns));
		return ns.block_size ? 4096 / ns.block_size : 1;
	}
};

wharf_ctx *NvmfHostRecovery::ctx_;
wharf_cm *NvmfHostRecovery::cm_;

uint64_t JsonU64(const std::string &json, const std::string &key)
{
	size_t at = json.find("\"" + key + "\":");
	if (at == std::string::npos)
		return UINT64_MAX;
	return std::strtoull(json.c_str() + at + key.size() + 3, nullptr, 10);
}

// wharf-nvmf-perf --verify with @opts through a kill and a restart of the
// target: no error, no mismatch, reconnected, in-flight writes retried.
void NvmfHostRecovery::PerfThroughRestart(const std::string &opts)
{
	std::string perf =
		wharf_guest::built_program("initiators/nvmf/wharf-nvmf-perf");
	ASSERT_FALSE(perf.empty());
	std::string out;
	int rc = -1;
	std::thread run([&] {
		rc = Sh(perf + " --traddr " + kAddr + " --trsvcid " +
				std::to_string(kPort) + " --subnqn " + kSub +
				" --queues 2 --shards 2 --qd 8 --time 10 "
				"--pattern randwrite --verify --json "
				"--reconnect-delay 0.3 " +
				opts,
			&out, 150);
	});
	// Writes are flowing once the target counts both I/O queues and has
	// answered 50 more commands ...
	bool flowing = Poll([&] { return tgt_.Stats()["queues"] >= 3; });
	EXPECT_TRUE(flowing);
	uint64_t answered = tgt_.Stats()["responses"];
	flowing = Poll(
		[&] { return tgt_.Stats()["responses"] >= answered + 50; });
	EXPECT_TRUE(flowing);
	// ... then the target dies mid-run, with writes outstanding, and
	// comes back 1.5 s later.
	FreezeAndKillTarget();
	std::this_thread::sleep_for(std::chrono::milliseconds(1500));
	ASSERT_TRUE(tgt_.Start("nvmf_host_recovery", TgtConfig()));
	run.join();
	std::cout << out;
	EXPECT_EQ(0, rc) << out;
	size_t j = out.find("{\"tool\"");
	ASSERT_NE(std::string::npos, j) << out;
	std::string json = out.substr(j);
	EXPECT_EQ(0u, JsonU64(json, "errors"));
	EXPECT_EQ(0u, JsonU64(json, "verify_errors"));
	EXPECT_GE(JsonU64(json, "reconnects"), 1u);
	EXPECT_NE(UINT64_MAX, JsonU64(json, "reconnects"));
	EXPECT_GE(JsonU64(json, "retried"), 1u);
	EXPECT_NE(UINT64_MAX, JsonU64(json, "retried"));
	EXPECT_GT(JsonU64(json, "ios"), 0u);
	// Every slot (2 queues x qd 8) read its last acknowledged write
	// again after the restart.
	EXPECT_EQ(16u, JsonU64(json, "rechecked"));
}

TEST_F(NvmfHostRecovery, PerfVerifyRunsThroughATargetRestart)
{
	PerfThroughRestart("--io-size 4k");
}

// The same with the caller's registered buffers (registered again on the
// new connection; 16 KiB: keyed, no bounce) and every call made from an
// application thread.
TEST_F(NvmfHostRecovery, PerfZeroCopySubmitThreadThroughATargetRestart)
{
	PerfThroughRestart("--io-size 16k --zero-copy --submit-thread");
}

TEST_F(NvmfHostRecovery, HeldCommandsCompleteAfterTheTargetIsBack)
{
	States st;
	wharf_nvmf_host *h = nullptr;
	std::string err;
	ASSERT_EQ(0, Connect(kPort, kSub, 2, WHARF_NVMF_HOST_CTRL_LOSS_TMO_MS,
			     &st, &err, &h))
		<< err;
	const uint32_t nlb = BlocksPer4k(h);
	struct wharf_nvmf_host_info in0 = {};
	in0.size = sizeof(in0);
	ASSERT_EQ(0, wharf_nvmf_host_info(h, &in0));

	// Acknowledged before the kill: 8 blocks on each queue.
	std::vector<std::vector<uint8_t>> data;
	for (unsigned i = 0; i < 16; i++) {
		data.push_back(Pattern(4096, 100 + i));
		ASSERT_EQ(0, DoIo(wharf_nvmf_host_queue(h, i % 2), 'w',
				  (uint64_t)i * nlb, nlb, data[i].data()));
	}
	ASSERT_EQ(0, DoIo(wharf_nvmf_host_queue(h, 0), 'f', 0, 0, nullptr));

	KillTarget();
	ASSERT_TRUE(
		Poll([&] { return Stats(h).state != WHARF_NVMF_HOST_LIVE; }));
	// Submitted while the target is down: held, not failed.
	const unsigned kHeld = 8;
	std::vector<Io> ios(kHeld * 2);
	std::vector<std::vector<uint8_t>> later, got(kHeld);
	for (unsigned i = 0; i < kHeld; i++) {
		later.push_back(Pattern(4096, 200 + i));
		got[i].assign(4096, 0xEE);
		Io &w = ios[i];
		w.q = wharf_nvmf_host_queue(h, i % 2);
		w.op = 'w';
		w.slba = (uint64_t)(32 + i) * nlb;
		w.nlb = nlb;
		w.buf = later[i].data();
		Io &r = ios[kHeld + i];
		r.q = wharf_nvmf_host_queue(h, (i + 1) % 2);
		r.op = 'r';
		r.slba = (uint64_t)i * nlb;
		r.nlb = nlb;
		r.buf = got[i].data();
	}
	for (Io &io : ios)
		ASSERT_TRUE(StartIo(&io));
	std::this_thread::sleep_for(std::chrono::milliseconds(1000));
	for (Io &io : ios)
		EXPECT_EQ(0, io.done.load()) << "held, not completed";
	uint64_t outstanding = 0;
	for (unsigned i = 0; i < 2; i++) {
		struct wharf_nvmf_host_queue_stats qs = {};
		qs.size = sizeof(qs);
		ASSERT_EQ(0, wharf_nvmf_host_queue_stats(
				     wharf_nvmf_host_queue(h, i), &qs));
		outstanding += qs.outstanding;
	}
	EXPECT_EQ(kHeld * 2, outstanding);

	ASSERT_TRUE(tgt_.Start("nvmf_host_recovery", TgtConfig()));
	for (Io &io : ios)
		EXPECT_EQ(0, WaitIo(&io)) << io.op << " " << io.slba;
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	for (Io &io : ios)
		EXPECT_EQ(1, io.done.load()) << "one callback per command";
	for (unsigned i = 0; i < kHeld; i++)
		EXPECT_TRUE(got[i] == data[i]) << "block " << i;
	// Everything acknowledged, before and after, reads back intact.
	std::vector<uint8_t> r(4096);
	for (unsigned i = 0; i < 16; i++) {
		ASSERT_EQ(0, DoIo(wharf_nvmf_host_queue(h, (i + 1) % 2), 'r',
				  (uint64_t)i * nlb, nlb, r.data()));
		EXPECT_TRUE(r == data[i]) << "block " << i;
	}
	for (unsigned i = 0; i < kHeld; i++) {
		ASSERT_EQ(0, DoIo(wharf_nvmf_host_queue(h, i % 2), 'r',
				  (uint64_t)(32 + i) * nlb, nlb, r.data()));
		EXPECT_TRUE(r == later[i]) << "block " << 32 + i;
	}
	EXPECT_TRUE(
		Poll([&] { return Stats(h).state == WHARF_NVMF_HOST_LIVE; }));
	struct wharf_nvmf_host_stats s = Stats(h);
	EXPECT_EQ(1u, s.losses);
	EXPECT_EQ(1u, s.reconnects);
	EXPECT_GE(s.reconnect_attempts, 1u);
	EXPECT_EQ(0u, s.failed_held);
	EXPECT_TRUE(st.Saw(WHARF_NVMF_HOST_LIVE));
	EXPECT_TRUE(st.Saw(WHARF_NVMF_HOST_RESETTING));
	EXPECT_TRUE(st.Saw(WHARF_NVMF_HOST_CONNECTING));
	EXPECT_FALSE(st.Saw(WHARF_NVMF_HOST_DEAD));
	struct wharf_nvmf_host_info in1 = {};
	in1.size = sizeof(in1);
	ASSERT_EQ(0, wharf_nvmf_host_info(h, &in1));
	EXPECT_EQ(in0.nr_io_queues, in1.nr_io_queues);
	std::cout << "reconnected: " << s.reconnect_attempts
		  << " attempt(s), cntlid " << in0.cntlid << " -> "
		  << in1.cntlid << ", " << s.retried << " retried\n";
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	EXPECT_TRUE(tgt_.BackToZero());
}

TEST_F(NvmfHostRecovery, TargetDownPastCtrlLossTmoFailsHeldAndNew)
{
	States st;
	wharf_nvmf_host *h = nullptr;
	std::string err;
	ASSERT_EQ(0, Connect(kPort, kSub, 2, 3000, &st, &err, &h)) << err;
	const uint32_t nlb = BlocksPer4k(h);
	std::vector<uint8_t> buf(4096);
	ASSERT_EQ(0,
		  DoIo(wharf_nvmf_host_queue(h, 1), 'r', 0, nlb, buf.data()));

	KillTarget();
	std::vector<Io> ios(4);
	std::vector<std::vector<uint8_t>> bufs(4, std::vector<uint8_t>(4096));
	for (unsigned i = 0; i < 4; i++) {
		ios[i].q = wharf_nvmf_host_queue(h, i % 2);
		ios[i].op = i < 2 ? 'r' : 'w';
		ios[i].slba = (uint64_t)i * nlb;
		ios[i].nlb = nlb;
		ios[i].buf = bufs[i].data();
		ASSERT_TRUE(StartIo(&ios[i]));
	}
	for (Io &io : ios)
		EXPECT_EQ(-ENODEV, WaitIo(&io));
	struct wharf_nvmf_host_stats s = Stats(h);
	EXPECT_EQ(WHARF_NVMF_HOST_DEAD, s.state);
	EXPECT_EQ(1u, s.losses);
	EXPECT_GE(s.reconnect_attempts, 1u);
	EXPECT_EQ(0u, s.reconnects);
	EXPECT_GE(s.failed_held, 1u);
	EXPECT_NE(0, s.last_error);
	EXPECT_TRUE(st.Saw(WHARF_NVMF_HOST_DEAD));
	// New commands fail at once, on every queue.
	EXPECT_EQ(-ENODEV,
		  DoIo(wharf_nvmf_host_queue(h, 0), 'r', 0, nlb, buf.data()));
	EXPECT_EQ(-ENODEV,
		  DoIo(wharf_nvmf_host_queue(h, 1), 'w', 0, nlb, buf.data()));
	for (unsigned i = 0; i < 2; i++) {
		struct wharf_nvmf_host_queue_stats qs = {};
		qs.size = sizeof(qs);
		ASSERT_EQ(0, wharf_nvmf_host_queue_stats(
				     wharf_nvmf_host_queue(h, i), &qs));
		EXPECT_EQ(0u, qs.outstanding);
		EXPECT_EQ(qs.submitted, qs.completed);
	}
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	std::cout << "dead after " << s.reconnect_attempts
		  << " attempt(s); last error " << strerror(-s.last_error)
		  << "\n";
	// The target, back, serves a new controller.
	ASSERT_TRUE(tgt_.Start("nvmf_host_recovery", TgtConfig()));
	ASSERT_EQ(0, Connect(kPort, kSub, 1, 3000, &st, &err, &h)) << err;
	EXPECT_EQ(0,
		  DoIo(wharf_nvmf_host_queue(h, 0), 'r', 0, nlb, buf.data()));
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
}

// fast_io_fail_tmo 500 ms: held commands and new ones fail with -ENOLINK
// while the target is down, reconnecting goes on, and once it is back the
// queues take commands again.
TEST_F(NvmfHostRecovery, FastIoFailFailsHeldButKeepsReconnecting)
{
	States st;
	wharf_nvmf_host *h = nullptr;
	std::string err;
	ASSERT_EQ(0, Connect(kPort, kSub, 2, WHARF_NVMF_HOST_CTRL_LOSS_TMO_MS,
			     &st, &err, &h, 500))
		<< err;
	const uint32_t nlb = BlocksPer4k(h);
	std::vector<uint8_t> buf(4096);
	KillTarget();
	ASSERT_TRUE(
		Poll([&] { return Stats(h).state != WHARF_NVMF_HOST_LIVE; }));
	Io io;
	io.q = wharf_nvmf_host_queue(h, 1);
	io.nlb = nlb;
	io.buf = buf.data();
	ASSERT_TRUE(StartIo(&io));
	EXPECT_EQ(-ENOLINK, WaitIo(&io));
	EXPECT_EQ(-ENOLINK,
		  DoIo(wharf_nvmf_host_queue(h, 0), 'r', 0, nlb, buf.data()));
	struct wharf_nvmf_host_stats s = Stats(h);
	EXPECT_NE(WHARF_NVMF_HOST_DEAD, s.state);
	EXPECT_NE(WHARF_NVMF_HOST_LIVE, s.state);
	// Held, then failed; or, submitted after the 500 ms, refused.
	EXPECT_EQ(io.submit_rc ? 0u : 1u, s.failed_held);
	ASSERT_TRUE(tgt_.Start("nvmf_host_recovery", TgtConfig()));
	ASSERT_TRUE(
		Poll([&] { return Stats(h).state == WHARF_NVMF_HOST_LIVE; }));
	for (unsigned i = 0; i < 2; i++)
		EXPECT_EQ(0, DoIo(wharf_nvmf_host_queue(h, i), 'r', 0, nlb,
				  buf.data()));
	EXPECT_EQ(1u, Stats(h).reconnects);
	EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
}

// nvmet-rdma: removing the port's link to the subsystem makes the kernel
// delete the controllers on that port (the host sees its queues
// disconnected); the link back lets the reconnect in.
TEST_F(NvmfHostRecovery, NvmetPortBounce)
{
	std::string c = kCfs, p = c + "/ports/33",
		    sub = c + "/subsystems/" + kNvmetSub;
	std::string out;
	std::string setup =
		"set -e; modprobe -a nvmet nvmet_rdma; mountpoint -q "
		"/sys/kernel/config || mount -t configfs none "
		"/sys/kernel/config; truncate -s 64M " +
		std::string(kNvmetImg) + "; mkdir " + sub + " " + sub +
		"/namespaces/1; echo -n " + kNvmetImg + " > " + sub +
		"/namespaces/1/device_path; echo 1 > " + sub +
		"/namespaces/1/buffered_io; echo 1 > " + sub +
		"/namespaces/1/enable; echo 1 > " + sub +
		"/attr_allow_any_host; mkdir " + p + "; echo rdma > " + p +
		"/addr_trtype; echo ipv4 > " + p + "/addr_adrfam; echo " +
		kAddr + " > " + p + "/addr_traddr; echo " +
		std::to_string(kNvmetPort) + " > " + p +
		"/addr_trsvcid; ln -s " + sub + " " + p + "/subsystems/" +
		kNvmetSub;
	std::string teardown = "rm -f " + p + "/subsystems/*; rmdir " + p +
			       "; echo 0 > " + sub +
			       "/namespaces/1/enable; rmdir " + sub +
			       "/namespaces/1 " + sub + "; rm -f " + kNvmetImg;
	Sh(teardown);
	ASSERT_EQ(0, Sh(setup, &out)) << out;

	States st;
	wharf_nvmf_host *h = nullptr;
	std::string err;
	EXPECT_EQ(0, Connect(kNvmetPort, kNvmetSub, 2,
			     WHARF_NVMF_HOST_CTRL_LOSS_TMO_MS, &st, &err, &h))
		<< err;
	if (h) {
		const uint32_t nlb = BlocksPer4k(h);
		auto a = Pattern(4096, 7);
		std::vector<uint8_t> r(4096, 0);
		EXPECT_EQ(0, DoIo(wharf_nvmf_host_queue(h, 0), 'w', 8 * nlb,
				  nlb, a.data()));
		EXPECT_EQ(0, Sh("rm " + p + "/subsystems/" + kNvmetSub, &out))
			<< out;
		EXPECT_TRUE(Poll([&] {
			return Stats(h).state != WHARF_NVMF_HOST_LIVE;
		}));
		Io io;
		io.q = wharf_nvmf_host_queue(h, 1);
		io.op = 'r';
		io.slba = 8 * nlb;
		io.nlb = nlb;
		io.buf = r.data();
		EXPECT_TRUE(StartIo(&io));
		std::this_thread::sleep_for(std::chrono::milliseconds(1000));
		EXPECT_EQ(0, Sh("ln -s " + sub + " " + p + "/subsystems/" +
					kNvmetSub,
				&out))
			<< out;
		EXPECT_EQ(0, WaitIo(&io));
		EXPECT_TRUE(r == a);
		// The read's queue may be back before the other one.
		EXPECT_TRUE(Poll([&] {
			return Stats(h).state == WHARF_NVMF_HOST_LIVE;
		}));
		struct wharf_nvmf_host_stats s = Stats(h);
		EXPECT_GE(s.reconnects, 1u);
		std::cout << "nvmet: " << s.reconnect_attempts
			  << " attempt(s), " << s.reconnects
			  << " reconnect(s)\n";
		EXPECT_EQ(0, wharf_nvmf_host_disconnect(h));
	}
	EXPECT_EQ(0, Sh(teardown, &out)) << out;
}

} // namespace
