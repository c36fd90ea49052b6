// wharf-nvmf-tgt against a host written by no one here: the guest
// kernel's nvme-rdma, driven by the stock nvme-cli and fio. One target
// for the whole suite (cases run in order): discovery, connect with the
// default and with 2 I/O queues, the namespace's size, fio randwrite with
// crc32c verify then randread, disconnect, 5 connect / disconnect cycles
// with the target's counters back to zero, a host NQN the allow-list
// refuses, a subsystem exported on its second listener only, namespaces
// and hosts changed through the management RPC under fio, and a
// subsystem and a listener created and removed at run time, then the
// saved configuration restarted; each Connect in the target's audit log
// with the host's NQN and address.
// Every command is bounded by `timeout`.
#include <dirent.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

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
const char kBound[] = "nqn.2024-01.io.wharf:bound";
const char kPort2[] = "4445"; // the only listener kBound is exported on
const char kRpcSock[] = "/tmp/nvmf_kernel_host.sock";

// One JSON-RPC exchange with the target's --rpc socket.
std::string Rpc(const std::string &method, const std::string &params = "{}")
{
	return nvmf_guest::RpcCall(kRpcSock, method, params);
}
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
				"\nlisten 198.18.0.1 " + kPort2 +
				"\nshards 2\nqueue-depth 128\nio-queues 4\n"
				"subsystem " +
				kSub +
				"\n  serial WHARFGUEST1\n"
				"  namespace 1 ram:64M\n  allow-host " +
				hostnqn_ + "\nsubsystem " + kClosed +
				"\n  namespace 1 ram:1M\n  allow-host "
				"nqn.2014-08.org.nvmexpress:uuid:"
				"00000000-0000-0000-0000-000000000001\n"
				"subsystem " +
				kBound +
				"\n  namespace 1 ram:1M\n  allow-any-host\n"
				"  export 198.18.0.1 " +
				kPort2 + "\n",
			{"--rpc", kRpcSock}));
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

	// The namespace block device of controller @ctrl (the last one
	// listed when it has several).
	static std::string Block(const std::string &ctrl)
	{
		std::vector<std::string> b = NvmeBlockNames(ctrl);
		return b.empty() ? "" : b.back();
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

// Ten cycles (twenty took 50 s of the suite's 25 minutes): what leaks
// per cycle shows in the counters after the first, and each cycle adds
// another two and a half seconds of the host's connect and scan.
// Five cycles: a leak of a controller, queue or buffer shows in the
// counters after the first; more cycles only cost suite time.
TEST_F(KernelHost, FiveConnectDisconnectCycles)
{
	std::map<std::string, uint64_t> before = tgt_->Stats();
	for (int i = 0; i < 5; i++) {
		std::string out;
		ASSERT_EQ(0, Connect(kSub, "--nr-io-queues=2", &out))
			<< "cycle " << i << ": " << out;
		ASSERT_FALSE(WaitBlock().empty()) << "cycle " << i;
		ASSERT_EQ(0, Disconnect(&out)) << "cycle " << i << ": " << out;
	}
	EXPECT_TRUE(tgt_->BackToZero());
	std::map<std::string, uint64_t> after = tgt_->Stats();
	EXPECT_EQ(before["ctrls_created"] + 5, after["ctrls_created"]);
	EXPECT_EQ(before["accepted"] + 15, after["accepted"]);
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

TEST_F(KernelHost, SubsystemServedOnItsExportedListenerOnly)
{
	std::string out, log;
	// A host identity of its own (the kernel keeps one host ID per NQN
	// while a controller uses it).
	const std::string hostid = "5b3f9e2a-0c1d-4e5f-8a9b-0c1d2e3f4a5b";
	const std::string host = "nqn.2014-08.org.nvmexpress:uuid:" + hostid;
	// Discovery through the first listener does not show kBound;
	// through its own it does, at that port.
	ASSERT_EQ(0, Sh(std::string("nvme discover -t rdma -a 198.18.0.1 -s ") +
				kPort + " --hostnqn=" + hostnqn_,
			&out))
		<< out;
	EXPECT_EQ(std::string::npos, out.find(kBound)) << out;
	ASSERT_EQ(0, Sh(std::string("nvme discover -t rdma -a 198.18.0.1 -s ") +
				kPort2 + " --hostnqn=" + hostnqn_,
			&out))
		<< out;
	size_t at = out.find(kBound);
	ASSERT_NE(std::string::npos, at) << out;
	EXPECT_EQ(std::string::npos, out.find(kBound, at + 1)) << out;
	size_t svc = out.rfind("trsvcid:", at);
	ASSERT_NE(std::string::npos, svc) << out;
	svc = out.find_first_not_of(' ', svc + 8);
	EXPECT_EQ(kPort2, out.substr(svc, 4)) << out;
	// Through the first listener kBound is unknown: refused, and the
	// audit log says who and why.
	EXPECT_NE(0, Sh(std::string("nvme connect -t rdma -a 198.18.0.1 -s ") +
				kPort + " -n " + kBound + " --hostnqn=" + host +
				" --hostid=" + hostid,
			&out))
		<< out;
	EXPECT_EQ("", Ctrl(kBound));
	// Through its own it connects.
	ASSERT_EQ(0, Sh(std::string("nvme connect -t rdma -a 198.18.0.1 -s ") +
				kPort2 + " -n " + kBound +
				" --hostnqn=" + host + " --hostid=" + hostid,
			&out))
		<< out;
	std::string ctrl;
	Poll([&] { return !(ctrl = Ctrl(kBound)).empty(); });
	EXPECT_NE("", ctrl);
	EXPECT_EQ(0, Sh(std::string("nvme disconnect -n ") + kBound, &out))
		<< out;
	log = tgt_->Log();
	EXPECT_NE(std::string::npos,
		  log.find("connect: refused host " + host + " hostid " +
			   hostid + " from 198.18.0.1:"))
		<< log;
	EXPECT_NE(std::string::npos,
		  log.find(std::string(" on 198.18.0.1:") + kPort +
			   " subsystem " + kBound +
			   ": subsystem not exported on this listener"))
		<< log;
	// The accepted one: "connect: controller N for host H hostid I from
	// A on 198.18.0.1:4445 subsystem kBound", one line.
	size_t ok = log.find(" for host " + host + " hostid " + hostid);
	ASSERT_NE(std::string::npos, ok) << log;
	size_t bol = log.rfind('\n', ok) + 1, eol = log.find('\n', ok);
	std::string line = log.substr(bol, eol - bol);
	EXPECT_EQ(0u, line.find("wharf-nvmf-tgt: connect: controller "))
		<< line;
	EXPECT_NE(std::string::npos, line.find(std::string(" on 198.18.0.1:") +
					       kPort2 + " subsystem " + kBound))
		<< line;
	EXPECT_TRUE(tgt_->BackToZero());
}

// The block device of namespace @nsid of controller @ctrl, or "".
std::string NsDev(const std::string &ctrl, uint32_t nsid)
{
	for (const std::string &n : NvmeBlockNames(ctrl))
		if (Trim(ReadFile("/sys/block/" + n + "/nsid")) ==
		    std::to_string(nsid))
			return n;
	return "";
}

TEST_F(KernelHost, RpcChangesWhileTheHostRuns)
{
	std::string out;
	const std::string sub = std::string("\"nqn\":\"") + kSub + "\"";
	const std::string ok =
		"{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":1}\n";
	ASSERT_EQ(0, Connect(kSub, "", &out)) << out;
	ASSERT_FALSE(WaitBlock().empty());
	std::string ctrl1 = Ctrl(kSub);
	std::string dev1 = NsDev(ctrl1, 1);
	ASSERT_FALSE(dev1.empty());
	// Verified writes to namespace 1 all along (32 MiB at 2 MiB/s, then
	// read back).
	Sh("rm -f /tmp/rpc_fio.rc; (fio --name=r --filename=/dev/" + dev1 +
	   " --ioengine=libaio --direct=1 --bs=4k --iodepth=8 --size=32M"
	   " --rw=randwrite --rate=,2M --verify=crc32c --do_verify=1"
	   " --verify_fatal=1 --verify_state_save=0 >/tmp/rpc_fio.out 2>&1; "
	   "echo $? >/tmp/rpc_fio.rc)"
	   " >/dev/null 2>&1 &");
	// Namespace 2 added and removed a hundred times; the host follows
	// each change (a namespace attribute notice each time) before the
	// next.
	auto cycles0 = std::chrono::steady_clock::now();
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(ok,
			  Rpc("nvmf_subsystem_add_ns",
			      "{" + sub + ",\"nsid\":2,\"bdev\":\"null:1M\"}"))
			<< i;
		ASSERT_TRUE(Poll([&] { return !NsDev(ctrl1, 2).empty(); }))
			<< "cycle " << i << ": the host never saw namespace 2";
		ASSERT_EQ(ok, Rpc("nvmf_subsystem_remove_ns",
				  "{" + sub + ",\"nsid\":2}"))
			<< i;
		ASSERT_TRUE(Poll([&] { return NsDev(ctrl1, 2).empty(); }))
			<< "cycle " << i << ": namespace 2 never left the host";
	}
	std::cout << "100 add/remove cycles, each seen by the host: "
		  << std::chrono::duration<double>(
			     std::chrono::steady_clock::now() - cycles0)
			     .count()
		  << " s" << std::endl;
	// A second host, let in at run time, then removed.
	const std::string id2 = "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6";
	const std::string host2 = "nqn.2014-08.org.nvmexpress:uuid:" + id2;
	ASSERT_EQ(ok, Rpc("nvmf_subsystem_add_host",
			  "{" + sub + ",\"host\":\"" + host2 + "\"}"));
	// Through the second listener (kSub has no export lines): nvme-cli
	// refuses a second controller to the same address and subsystem,
	// whatever the host NQN ("already connected").
	ASSERT_EQ(0, Sh(std::string("nvme connect -t rdma -a 198.18.0.1 -s ") +
				kPort2 + " -n " + kSub + " --hostnqn=" + host2 +
				" --hostid=" + id2,
			&out))
		<< out;
	std::vector<std::string> c2;
	ASSERT_TRUE(Poll([&] {
		c2 = NvmeCtrls("hostnqn", host2);
		return !c2.empty();
	}));
	out = Rpc("nvmf_subsystem_get_controllers", "{" + sub + "}");
	EXPECT_NE(std::string::npos, out.find(host2)) << out;
	EXPECT_NE(std::string::npos, out.find(hostnqn_)) << out;
	auto t0 = std::chrono::steady_clock::now();
	EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":1},"
		  "\"id\":1}\n",
		  Rpc("nvmf_subsystem_remove_host",
		      "{" + sub + ",\"host\":\"" + host2 + "\"}"));
	EXPECT_TRUE(Poll([&] {
		out = Rpc("nvmf_subsystem_get_controllers", "{" + sub + "}");
		return out.find(host2) == std::string::npos;
	})) << out;
	double gone_ms = std::chrono::duration<double, std::milli>(
				 std::chrono::steady_clock::now() - t0)
				 .count();
	RecordProperty("removed_host_gone_ms", std::to_string(gone_ms));
	printf("removed host's controller gone from the target in %.0f ms\n",
	       gone_ms);
	EXPECT_NE(std::string::npos, out.find(hostnqn_)) << out;
	Sh("nvme disconnect -d " + c2[0], &out);
	// Any host on a subsystem that lists hosts is refused with the
	// reason; on kBound (any host) the list goes on and off again.
	out = Rpc("nvmf_subsystem_allow_any_host",
		  "{" + sub + ",\"allow_any_host\":true}");
	EXPECT_NE(std::string::npos, out.find("remove them first")) << out;
	const std::string bound = std::string("\"nqn\":\"") + kBound + "\"";
	for (const char *v : {"false", "true"})
		EXPECT_EQ(
			"{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":0},"
			"\"id\":1}\n",
			Rpc("nvmf_subsystem_allow_any_host",
			    "{" + bound + ",\"allow_any_host\":" + v + "}"))
			<< v;
	EXPECT_EQ("live",
		  Trim(ReadFile("/sys/class/nvme/" + ctrl1 + "/state")));
	out = Rpc("rpc_get_methods");
	EXPECT_NE(std::string::npos, out.find("nvmf_subsystem_get_qpairs"))
		<< out;
	// Namespace 1's writes never failed; its controller stayed live.
	// (the shell creates the file before it writes the status)
	EXPECT_TRUE(
		Poll([&] { return !Trim(ReadFile("/tmp/rpc_fio.rc")).empty(); },
		     std::chrono::seconds(120)));
	EXPECT_EQ("0", Trim(ReadFile("/tmp/rpc_fio.rc")))
		<< ReadFile("/tmp/rpc_fio.out");
	EXPECT_NE(std::string::npos,
		  ReadFile("/tmp/rpc_fio.out").find("err= 0"))
		<< ReadFile("/tmp/rpc_fio.out");
	EXPECT_EQ("live",
		  Trim(ReadFile("/sys/class/nvme/" + ctrl1 + "/state")));
	// The running configuration, saved.
	out = Rpc("save_config");
	EXPECT_NE(std::string::npos,
		  out.find(std::string("allow-host ") + hostnqn_))
		<< out;
	ASSERT_EQ(0, Disconnect(&out)) << out;
	EXPECT_TRUE(tgt_->BackToZero());
}

// A subsystem created, exported on a new listener and deleted through the
// RPC while the kernel host keeps its first controller; the saved
// configuration then restarts the target to the same state. Runs last:
// it restarts the suite's target.
TEST_F(KernelHost, SubsystemsAndListenersChangeAtRunTime)
{
	const char kNew[] = "nqn.2024-01.io.wharf:runtime";
	const char kPort3[] = "4447"; // a listener added at run time
	const std::string ok =
		"{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":1}\n";
	const std::string nsub = std::string("\"nqn\":\"") + kNew + "\"";
	auto la = [](const char *port) {
		return std::string(",\"listen_address\":{\"trtype\":\"RDMA\","
				   "\"adrfam\":\"IPv4\",\"traddr\":"
				   "\"198.18.0.1\",\"trsvcid\":\"") +
		       port + "\"}";
	};
	auto connect_new = [&](const char *port, std::string *out) {
		return Sh(
			std::string("nvme connect -t rdma -a 198.18.0.1 -s ") +
				port + " -n " + kNew + " --hostnqn=" + hostnqn_,
			out);
	};
	std::string out;
	ASSERT_EQ(0, Connect(kSub, "", &out)) << out;
	ASSERT_FALSE(WaitBlock().empty());
	std::string ctrl1 = Ctrl(kSub);

	// Created, given a namespace and a listener of its own.
	ASSERT_EQ(ok, Rpc("nvmf_create_subsystem",
			  "{" + nsub + ",\"allow_any_host\":true}"));
	ASSERT_EQ(ok, Rpc("nvmf_subsystem_add_ns",
			  "{" + nsub + ",\"nsid\":1,\"bdev\":\"ram:4M\"}"));
	// Served nowhere yet: the host is refused on the first listener.
	EXPECT_NE(0, connect_new(kPort, &out)) << out;
	ASSERT_EQ(ok, Rpc("nvmf_subsystem_add_listener",
			  "{" + nsub + la(kPort3) + "}"));
	EXPECT_NE(
		std::string::npos,
		tgt_->Log().find(std::string("listening on 198.18.0.1 port ") +
				 kPort3));
	ASSERT_EQ(0, Sh(std::string("nvme discover -t rdma -a 198.18.0.1 -s ") +
				kPort3 + " --hostnqn=" + hostnqn_,
			&out))
		<< out;
	EXPECT_NE(std::string::npos, out.find(kNew)) << out;
	ASSERT_EQ(0, connect_new(kPort3, &out)) << out;
	std::string ctrl2;
	ASSERT_TRUE(Poll([&] {
		ctrl2 = Ctrl(kNew);
		return !ctrl2.empty() && !Block(ctrl2).empty();
	}));
	EXPECT_EQ(std::to_string((4u << 20) / 512),
		  Trim(ReadFile("/sys/block/" + Block(ctrl2) + "/size")));

	// Off that listener: its controller is torn down. kSub and kClosed
	// have no export lines (every listener), so it still answers.
	EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":1},"
		  "\"id\":1}\n",
		  Rpc("nvmf_subsystem_remove_listener",
		      "{" + nsub + la(kPort3) + "}"));
	EXPECT_TRUE(Poll([&] {
		return Trim(ReadFile("/sys/class/nvme/" + ctrl2 + "/state")) !=
		       "live";
	}));
	Sh(std::string("nvme disconnect -n ") + kNew, &out);
	ASSERT_EQ(0, Sh(std::string("nvme discover -t rdma -a 198.18.0.1 -s ") +
				kPort3 + " --hostnqn=" + hostnqn_,
			&out))
		<< out;
	EXPECT_EQ(std::string::npos, out.find(kNew)) << out;
	// Taken off it too, nothing is served there: the listener stops
	// (kSub's host, on the first listener, is not touched).
	for (const char *nqn : {kSub, kClosed})
		EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":"
			  "0},\"id\":1}\n",
			  Rpc("nvmf_subsystem_remove_listener",
			      std::string("{\"nqn\":\"") + nqn + "\"" +
				      la(kPort3) + "}"));
	EXPECT_NE(0, Sh(std::string("nvme discover -t rdma -a 198.18.0.1 -s ") +
				kPort3 + " --hostnqn=" + hostnqn_,
			&out))
		<< "still listening on " << kPort3 << ": " << out;

	// On the first listener, then deleted under its host.
	ASSERT_EQ(ok, Rpc("nvmf_subsystem_add_listener",
			  "{" + nsub + la(kPort) + "}"));
	ASSERT_EQ(0, connect_new(kPort, &out)) << out;
	ASSERT_TRUE(Poll([&] { return !(ctrl2 = Ctrl(kNew)).empty(); }));
	auto t0 = std::chrono::steady_clock::now();
	EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":1},"
		  "\"id\":1}\n",
		  Rpc("nvmf_delete_subsystem", "{" + nsub + "}"));
	printf("delete_subsystem with a host connected: %.0f ms\n",
	       std::chrono::duration<double, std::milli>(
		       std::chrono::steady_clock::now() - t0)
		       .count());
	EXPECT_TRUE(Poll([&] {
		return Trim(ReadFile("/sys/class/nvme/" + ctrl2 + "/state")) !=
		       "live";
	}));
	Sh(std::string("nvme disconnect -n ") + kNew, &out);
	out = Rpc("nvmf_get_subsystems");
	EXPECT_EQ(std::string::npos, out.find(kNew)) << out;
	// The first host never noticed.
	EXPECT_EQ("live",
		  Trim(ReadFile("/sys/class/nvme/" + ctrl1 + "/state")));
	ASSERT_EQ(0, Disconnect(&out)) << out;
	EXPECT_TRUE(tgt_->BackToZero());

	// A last change of each kind, saved, and the target restarted from
	// what was saved: the same configuration comes back.
	ASSERT_EQ(ok, Rpc("nvmf_create_subsystem",
			  "{" + nsub + ",\"serial_number\":\"RT1\"}"));
	ASSERT_EQ(ok, Rpc("nvmf_subsystem_add_listener",
			  "{" + nsub + la(kPort3) + "}"));
	ASSERT_EQ(ok, Rpc("nvmf_subsystem_add_host",
			  "{" + nsub + ",\"host\":\"" + hostnqn_ + "\"}"));
	ASSERT_EQ(ok, Rpc("nvmf_subsystem_add_ns",
			  "{" + nsub + ",\"nsid\":3,\"bdev\":\"null:1G\"}"));
	std::string saved_path = "/tmp/nvmf_kernel_host.saved.conf";
	out = Rpc("save_config", "{\"path\":\"" + saved_path + "\"}");
	ASSERT_NE(std::string::npos, out.find("\"result\"")) << out;
	std::string saved = ReadFile(saved_path);
	EXPECT_NE(std::string::npos,
		  saved.find(std::string("listen 198.18.0.1 ") + kPort3 + "\n"))
		<< saved;
	ASSERT_TRUE(tgt_->Stop());
	ASSERT_TRUE(
		tgt_->Start("nvmf_kernel_host", saved, {"--rpc", kRpcSock}));
	out = Rpc("save_config", "{\"path\":\"" + saved_path + "\"}");
	EXPECT_EQ(saved, ReadFile(saved_path)) << "before:\n"
					       << saved << "after restart:\n"
					       << ReadFile(saved_path);
	// And the host connects through the restored listener.
	ASSERT_EQ(0, connect_new(kPort3, &out)) << out;
	ASSERT_TRUE(Poll([&] { return !Ctrl(kNew).empty(); }));
	Sh(std::string("nvme disconnect -n ") + kNew, &out);
	EXPECT_TRUE(tgt_->BackToZero());
}

} // namespace
