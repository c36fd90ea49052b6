// wharf-ublk on the 6.12 guest (Debian 12's 6.1 does not build ublk_drv)
// against wharf-nvmf-tgt (a RAM namespace).
//
// Add: /dev/ublkbN with two queues on two shards, its size the
// namespace's; `list` (text and JSON) shows it live; fio randwrite with
// verify=crc32c, then md5 (exit 0, the verify reads seen); discard and
// write zeroes read back as zeroes; mkfs.ext4, mount, files written,
// umount, fsck.ext4 -fn clean, the files' sums again; SIGUSR1 and
// SIGTERM: the stats lines, exit 0, the device gone.
//
// Recover: kill -9 of wharf-ublk while fio writes and verifies leaves
// /dev/ublkbN in place; `wharf-ublk recover --number N` takes it over,
// the held requests complete, fio exits 0 with its verify clean.
//
// Target restart: wharf-nvmf-tgt on a file (its data outlives the
// process) is killed with writes in flight under /dev/ublkbN and started
// again 1.5 s later; the host library reconnects (nvme-cli's -c 0.3 and
// -l 60), sends the held requests again, and fio exits 0 with its verify
// clean; the stats line counts the loss and the reconnect.
//
// Namespace removed: the operator removes the namespace under the
// device (the target's RPC): wharf-ublk says so, removes the device and
// exits 1.
//
// Bad input: a taken device number, recover and del of a device that does
// not exist, a subcommand that does not exist: each a clear reason and a
// non-zero exit, nothing left behind; without ublk_drv loaded, the
// reason.  `del` of a served device from
// another process: the server leaves cleanly.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/guest/guest_env.h"
#include "tests/guest/guest_proc.h"
#include "tests/guest/nvmf_guest_util.h"

namespace
{

using namespace nvmf_guest;
using wharf_guest::Clock;
using wharf_guest::Proc;

const char kAddr[] = "198.18.0.1";
const char kSub[] = "nqn.2024-01.io.wharf:ublk";
// The suite target's management socket: what reached it, per queue.
const char kRpcSock[] = "/tmp/ublk_test.sock";
// A port no other guest test uses.
const uint16_t kPort = 4448;

std::string UblkPath()
{
	return wharf_guest::built_program("initiators/ublk/wharf-ublk");
}

std::vector<std::string> UblkArgs(const char *verb)
{
	return {UblkPath(), verb,	 "--traddr",
		kAddr,	    "--trsvcid", std::to_string(kPort),
		"--subnqn", kSub,	 "--shards",
		"2",	    "--queues",	 "2"};
}

// The sum of every "KEY":N in the JSON text @j (a number per queue).
uint64_t SumField(const std::string &j, const std::string &key)
{
	uint64_t sum = 0;
	std::string pat = "\"" + key + "\":";
	for (size_t at = j.find(pat); at != std::string::npos;
	     at = j.find(pat, at + 1))
		sum += std::strtoull(j.c_str() + at + pat.size(), nullptr, 10);
	return sum;
}

// N of "/dev/ublkbN" in @log, or -1.
int DevNumber(const std::string &log)
{
	size_t at = log.find("/dev/ublkb");
	if (at == std::string::npos)
		return -1;
	return std::atoi(log.c_str() + at + 10);
}

// @p said "serving /dev/ublkbN" (within a minute): N into *@n.
::testing::AssertionResult Serving(Proc *p, int *n)
{
	if (!p->WaitFor("serving /dev/ublkb",
			Clock::now() + std::chrono::seconds(60)))
		return ::testing::AssertionFailure() << "not serving:\n"
						     << p->Output();
	*n = DevNumber(p->Output());
	if (*n < 0)
		return ::testing::AssertionFailure() << "no device number:\n"
						     << p->Output();
	return ::testing::AssertionSuccess();
}

// Writes to @dev at a fixed rate with a crc32c verify pass after them,
// so that a fault meets them; fio's output goes to @log.
void StartPacedFioVerify(Proc *fio, const std::string &dev,
			 const std::string &log)
{
	fio->Start({"fio", "--name=k", "--filename=" + dev, "--ioengine=libaio",
		    "--direct=1", "--iodepth=16", "--bs=4k", "--size=8M",
		    "--rw=randwrite", "--rate=,1M", "--do_verify=1",
		    "--verify_fatal=1", "--verify=crc32c"},
		   log);
}

// Device @n has completed @writes writes (its stat file's fifth field).
::testing::AssertionResult WritesDone(int n, uint64_t writes)
{
	std::string stat = "/sys/block/ublkb" + std::to_string(n) + "/stat";
	bool ok = Poll(
		[&] {
			std::istringstream s(ReadFile(stat));
			uint64_t f[5] = {0};
			for (auto &x : f)
				s >> x;
			return f[4] >= writes;
		},
		std::chrono::seconds(60));
	if (ok)
		return ::testing::AssertionSuccess();
	return ::testing::AssertionFailure() << ReadFile(stat);
}

// fio ended on its own, exit 0, no error, the verify's reads done.
void ExpectFioClean(Proc *fio)
{
	ASSERT_TRUE(fio->Wait(Clock::now() + std::chrono::seconds(180)))
		<< fio->Output();
	EXPECT_TRUE(fio->Exited0()) << fio->status << "\n" << fio->Output();
	EXPECT_NE(std::string::npos, fio->Output().find("err= 0"))
		<< fio->Output();
	EXPECT_NE(std::string::npos, fio->Output().find("READ: bw="))
		<< fio->Output();
}

class Ublk : public ::testing::Test
{
      protected:
	static Tgt *tgt_;
	static bool ublk_up_;

	static void SetUpTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		std::string out;
		ublk_up_ = Sh("modprobe ublk_drv && test -c /dev/ublk-control",
			      &out) == 0;
		if (!ublk_up_) {
			ADD_FAILURE() << "modprobe ublk_drv: " << out;
		}
		tgt_ = new Tgt();
		::testing::AssertionResult started = tgt_->Start(
			"ublk_test",
			std::string("listen ") + kAddr + " " +
				std::to_string(kPort) +
				"\nshards 1\nsubsystem " + kSub +
				"\n  namespace 1 ram:64M\n  allow-any-host\n",
			{"--rpc", kRpcSock});
		if (!started) {
			ADD_FAILURE() << started.message();
		}
	}

	static void TearDownTestSuite()
	{
		if (tgt_) {
			EXPECT_TRUE(tgt_->Stop());
			delete tgt_;
			tgt_ = nullptr;
		}
	}

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		ASSERT_FALSE(UblkPath().empty()) << "wharf-ublk not built";
		ASSERT_TRUE(ublk_up_);
		ASSERT_NE(nullptr, tgt_);
	}

	// SIGTERM, a clean exit within the deadline, the final stats, the
	// device gone.
	static void Stop(Proc *p, int n)
	{
		ASSERT_GT(p->pid, 0) << p->Output();
		kill(p->pid, SIGTERM);
		ASSERT_TRUE(p->Wait(Clock::now() + std::chrono::seconds(60)))
			<< "wharf-ublk did not exit:\n"
			<< p->Output();
		EXPECT_TRUE(p->Exited0()) << p->status << "\n" << p->Output();
		EXPECT_NE(std::string::npos, p->Output().find("stats at exit"))
			<< p->Output();
		std::string dev = "/dev/ublkb" + std::to_string(n);
		EXPECT_TRUE(Poll([&] { return access(dev.c_str(), F_OK); }))
			<< dev << " is still there";
	}
};

Tgt *Ublk::tgt_;
bool Ublk::ublk_up_;

// A test that stops early still unmounts, stops its servers and removes
// every ublk device (with deadlines), so that the next finds none.
struct Cleanup {
	std::vector<Proc *> ps;
	~Cleanup()
	{
		Sh("umount /tmp/ublk_test_mnt 2>/dev/null");
		for (Proc *p : ps)
			if (p->pid > 0 &&
			    waitpid(p->pid, &p->status, WNOHANG) == 0) {
				kill(p->pid, SIGTERM);
				if (!p->Wait(Clock::now() +
					     std::chrono::seconds(60)))
					kill(p->pid, SIGKILL);
			}
		Sh(UblkPath() + " del --all --quiet", nullptr, 60);
	}
};

TEST_F(Ublk, AddFioDiscardExt4)
{
	std::string out;
	Proc p;
	Cleanup cleanup{{&p}};
	p.Start(UblkArgs("add"), "/tmp/ublk_test_add.log");
	int n = -1;
	ASSERT_TRUE(Serving(&p, &n));
	std::string dev = "/dev/ublkb" + std::to_string(n);
	EXPECT_NE(std::string::npos, p.Output().find("2 queue(s)"))
		<< p.Output();
	// The namespace's size in 512-byte sectors.
	ASSERT_TRUE(Poll([&] {
		return ReadFile("/sys/block/ublkb" + std::to_string(n) +
				"/size")
			       .find("131072") == 0;
	}));

	ASSERT_EQ(0, Sh(UblkPath() + " list", &out)) << out;
	EXPECT_NE(std::string::npos,
		  out.find("ublkb" + std::to_string(n) + ": state live"))
		<< out;
	ASSERT_EQ(0, Sh(UblkPath() + " list --json", &out)) << out;
	EXPECT_NE(std::string::npos,
		  out.find("\"dev_id\": " + std::to_string(n) +
			   ", \"state\": \"live\""))
		<< out;
	EXPECT_NE(std::string::npos, out.find("\"size_bytes\": 67108864"))
		<< out;

	for (const char *v : {"crc32c", "md5"}) {
		std::string fio = "fio --name=v --filename=" + dev +
				  " --ioengine=libaio --direct=1 --iodepth=16 "
				  "--bsrange=4k-128k --size=8M --rw=randwrite "
				  "--do_verify=1 --verify_fatal=1 --verify=" +
				  v;
		ASSERT_EQ(0, Sh(fio, &out, 300)) << out;
		EXPECT_NE(std::string::npos, out.find("err= 0")) << out;
		EXPECT_NE(std::string::npos, out.find("READ: bw=")) << out;
	}

	// Discard (the RAM namespace promises zeroes) and write zeroes.
	ASSERT_EQ(0,
		  Sh("head -c 2097152 /dev/urandom > /tmp/ublk_test.rnd && "
		     "dd if=/tmp/ublk_test.rnd of=" +
			     dev +
			     " bs=64k seek=160 oflag=direct status=none && "
			     "blkdiscard -o 10485760 -l 1048576 " +
			     dev + " && blkdiscard -z -o 11534336 -l 1048576 " +
			     dev + " && dd if=" + dev +
			     " bs=64k skip=160 count=32 iflag=direct "
			     "status=none | cmp - /dev/zero -n 2097152",
		     &out))
		<< out;

	ASSERT_EQ(0,
		  Sh("mkfs.ext4 -q -F " + dev +
			     " && mkdir -p /tmp/ublk_test_mnt && mount " + dev +
			     " /tmp/ublk_test_mnt && for i in 1 2 3 4; do "
			     "head -c 1000000 /dev/urandom > "
			     "/tmp/ublk_test_mnt/f$i; done && md5sum "
			     "/tmp/ublk_test_mnt/f* > /tmp/ublk_test.md5 && "
			     "sync && umount /tmp/ublk_test_mnt && echo 3 > "
			     "/proc/sys/vm/drop_caches && fsck.ext4 -fn " +
			     dev + " && mount " + dev +
			     " /tmp/ublk_test_mnt && md5sum -c --quiet "
			     "/tmp/ublk_test.md5 && umount /tmp/ublk_test_mnt",
		     &out, 300))
		<< out;

	// On the target's side, while the controller is there: its queues
	// took the Flush, Dataset Management and Write Zeroes commands.
	std::string qp = RpcCall(kRpcSock, "nvmf_subsystem_get_qpairs",
				 std::string("{\"nqn\":\"") + kSub + "\"}");
	for (const char *k : {"flush_cmds", "dsm_cmds", "write_zeroes_cmds"})
		EXPECT_GT(SumField(qp, k), 0u) << k << "\n" << qp;
	kill(p.pid, SIGUSR1);
	EXPECT_TRUE(
		p.WaitFor("stats: ", Clock::now() + std::chrono::seconds(30)))
		<< p.Output();
	Stop(&p, n);
	std::string log = p.Output();
	EXPECT_GT(Stat(log, "reads"), 0u) << log;
	EXPECT_GT(Stat(log, "writes"), 0u) << log;
	EXPECT_GT(Stat(log, "flushes"), 0u) << "ext4 and sync flush" << log;
	EXPECT_GT(Stat(log, "discards"), 0u) << log;
	EXPECT_GT(Stat(log, "write_zeroes"), 0u) << log;
	EXPECT_EQ(0u, Stat(log, "errors")) << log;
	EXPECT_EQ(0u, Stat(log, "refused")) << log;
}

TEST_F(Ublk, KilledServerRecovered)
{
	std::string out;
	Proc p, r, fio;
	Cleanup cleanup{{&p, &r, &fio}};
	p.Start(UblkArgs("add"), "/tmp/ublk_test_kill.log");
	int n = -1;
	ASSERT_TRUE(Serving(&p, &n));
	std::string dev = "/dev/ublkb" + std::to_string(n);

	// Writes at a fixed rate, so that the kill meets them; then the
	// verify reads every block back.
	StartPacedFioVerify(&fio, dev, "/tmp/ublk_test_fio.log");
	ASSERT_TRUE(WritesDone(n, 200)); // fio is writing
	kill(p.pid, SIGKILL);
	ASSERT_TRUE(p.Wait(Clock::now() + std::chrono::seconds(30)));
	EXPECT_EQ(0, access(dev.c_str(), F_OK)) << dev << " went with it";

	auto args = UblkArgs("recover");
	args.insert(args.end(), {"--number", std::to_string(n)});
	r.Start(args, "/tmp/ublk_test_recover.log");
	ASSERT_TRUE(r.WaitFor("recovered /dev/ublkb",
			      Clock::now() + std::chrono::seconds(90)))
		<< r.Output();
	ExpectFioClean(&fio);
	Stop(&r, n);
	EXPECT_GT(Stat(r.Output(), "writes"), 0u) << r.Output();
	EXPECT_EQ(0u, Stat(r.Output(), "errors")) << r.Output();
}

TEST_F(Ublk, TargetRestartUnderDevice)
{
	const std::string img = "/tmp/ublk_test_restart.img";
	const uint16_t port = kPort + 1;
	const std::string conf =
		std::string("listen ") + kAddr + " " + std::to_string(port) +
		"\nshards 1\nsubsystem " + kSub +
		"\n  namespace 1 file:" + img + "\n  allow-any-host\n";
	std::string out;
	ASSERT_EQ(0, Sh("rm -f " + img + "; truncate -s 32M " + img, &out))
		<< out;
	Tgt t;
	ASSERT_TRUE(t.Start("ublk_test_restart", conf));
	Proc p, fio;
	Cleanup cleanup{{&p, &fio}};
	// nvme-cli's short forms and seconds.
	p.Start({UblkPath(), "add", "-a", kAddr, "-s", std::to_string(port),
		 "-n", kSub, "--shards", "2", "-i", "2", "-c", "0.3", "-l",
		 "60"},
		"/tmp/ublk_test_restart_ublk.log");
	int n = -1;
	ASSERT_TRUE(Serving(&p, &n));
	std::string dev = "/dev/ublkb" + std::to_string(n);

	StartPacedFioVerify(&fio, dev, "/tmp/ublk_test_restart_fio.log");
	ASSERT_TRUE(WritesDone(n, 200));
	// Stopped first, so that writes are certainly outstanding when it
	// dies; the outage is the point, not a wait for a state.
	ASSERT_TRUE(t.Kill(SIGSTOP));
	ASSERT_TRUE(t.Kill(SIGKILL));
	ASSERT_TRUE(Poll([&] { return !t.Alive(); }));
	std::this_thread::sleep_for(std::chrono::milliseconds(1500));
	ASSERT_TRUE(t.Start("ublk_test_restart", conf));

	ExpectFioClean(&fio);
	Stop(&p, n);
	EXPECT_EQ(0u, Stat(p.Output(), "errors")) << p.Output();
	EXPECT_GE(Stat(p.Output(), "losses"), 1u) << p.Output();
	EXPECT_NE(UINT64_MAX, Stat(p.Output(), "losses")) << p.Output();
	EXPECT_GE(Stat(p.Output(), "reconnects"), 1u) << p.Output();
	EXPECT_NE(UINT64_MAX, Stat(p.Output(), "reconnects")) << p.Output();
	EXPECT_TRUE(t.Stop());
	Sh("rm -f " + img);
}

TEST_F(Ublk, NamespaceRemovedUnderDevice)
{
	const std::string sock = "/tmp/ublk_test_ns.sock";
	const uint16_t port = kPort + 2;
	Tgt t;
	ASSERT_TRUE(t.Start(
		"ublk_test_ns",
		std::string("listen ") + kAddr + " " + std::to_string(port) +
			"\nshards 1\nsubsystem " + kSub +
			"\n  namespace 1 ram:16M\n  allow-any-host\n",
		{"--rpc", sock}));
	Proc p;
	Cleanup cleanup{{&p}};
	p.Start({UblkPath(), "add", "-a", kAddr, "-s", std::to_string(port),
		 "-n", kSub, "--shards", "2", "-i", "2"},
		"/tmp/ublk_test_ns_ublk.log");
	int n = -1;
	ASSERT_TRUE(Serving(&p, &n));
	// The operator takes the namespace away: the host hears of it (a
	// namespace attribute notice), wharf-ublk says so, removes the
	// device and exits 1.
	EXPECT_EQ(
		"{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":1}\n",
		RpcCall(sock, "nvmf_subsystem_remove_ns",
			std::string("{\"nqn\":\"") + kSub + "\",\"nsid\":1}"));
	ASSERT_TRUE(p.Wait(Clock::now() + std::chrono::seconds(60)))
		<< p.Output();
	EXPECT_TRUE(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 1)
		<< p.status << "\n"
		<< p.Output();
	EXPECT_NE(std::string::npos, p.Output().find("namespace 1 is gone"))
		<< p.Output();
	EXPECT_NE(std::string::npos, p.Output().find("stats at exit"))
		<< p.Output();
	std::string dev = "/dev/ublkb" + std::to_string(n);
	EXPECT_TRUE(Poll([&] { return access(dev.c_str(), F_OK); }))
		<< dev << " is still there";
	EXPECT_TRUE(t.Stop());
}

TEST_F(Ublk, BadInputClearReasons)
{
	std::string out;
	Proc p, q;
	Cleanup cleanup{{&p, &q}};
	auto args = UblkArgs("add");
	args.insert(args.end(), {"--number", "7"});
	p.Start(args, "/tmp/ublk_test_taken1.log");
	ASSERT_TRUE(p.WaitFor("serving /dev/ublkb7",
			      Clock::now() + std::chrono::seconds(60)))
		<< p.Output();
	q.Start(args, "/tmp/ublk_test_taken2.log");
	ASSERT_TRUE(q.Wait(Clock::now() + std::chrono::seconds(60)));
	EXPECT_FALSE(q.Exited0());
	EXPECT_NE(std::string::npos, q.Output().find("the number is taken"))
		<< q.Output();
	// `del` from elsewhere while it serves: the server sees its device
	// stopped and leaves cleanly, the device gone.
	ASSERT_EQ(0, Sh(UblkPath() + " del --number 7", &out, 90)) << out;
	EXPECT_NE(std::string::npos, out.find("removed /dev/ublkb7")) << out;
	ASSERT_TRUE(p.Wait(Clock::now() + std::chrono::seconds(60)))
		<< p.Output();
	EXPECT_TRUE(p.Exited0()) << p.status << "\n" << p.Output();
	EXPECT_NE(std::string::npos, p.Output().find("was stopped elsewhere"))
		<< p.Output();
	EXPECT_NE(std::string::npos, p.Output().find("stats at exit"))
		<< p.Output();
	EXPECT_NE(0, access("/dev/ublkb7", F_OK));

	EXPECT_NE(0, Sh(UblkPath() + " del --number 9", &out));
	EXPECT_NE(std::string::npos, out.find("device 9")) << out;
	auto rec = UblkArgs("recover");
	rec.insert(rec.end(), {"--number", "9"});
	Proc rp;
	rp.Start(rec, "/tmp/ublk_test_norec.log");
	ASSERT_TRUE(rp.Wait(Clock::now() + std::chrono::seconds(60)));
	EXPECT_FALSE(rp.Exited0());
	EXPECT_NE(std::string::npos, rp.Output().find("device 9"))
		<< rp.Output();
	EXPECT_NE(0, Sh(UblkPath() + " attach", &out));
	EXPECT_NE(std::string::npos, out.find("not add, recover, del or list"))
		<< out;
	ASSERT_EQ(0, Sh(UblkPath() + " list --json", &out)) << out;
	EXPECT_EQ("[]", Trim(out)) << "nothing left behind";
	// Without the driver: the reason, and where the driver is.
	ASSERT_EQ(0, Sh("rmmod ublk_drv", &out)) << out;
	EXPECT_EQ(2, Sh(UblkPath() + " add -a " + kAddr + " -s " +
				std::to_string(kPort) + " -n " + kSub,
			&out))
		<< out;
	EXPECT_NE(std::string::npos, out.find("modprobe ublk_drv")) << out;
	ASSERT_EQ(0, Sh("modprobe ublk_drv && test -c /dev/ublk-control", &out))
		<< out;
}

} // namespace
