// bench/storm end to end in the soft-RoCE guest, small: 80 connections
// from 4 client processes, 10% rejected by the server with private data,
// one client process killed mid-storm.  Every attempt must be accounted
// for (established, rejected by reason, timed out, ..., or killed with its
// process), and the server must come back to zero connections, handshakes
// and active QPs.  The run is bounded (killed and failed past kBoundSec);
// nothing here asserts on durations.
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bench/storm/storm.h"
#include "tests/guest/guest_env.h"

namespace
{

constexpr int kBoundSec = 300;
constexpr unsigned kConns = 80, kClients = 4;
constexpr double kReject = 0.1, kKill = 0.25;

// bazel-bin/tests/guest/storm_guest_test -> bazel-bin/bench/storm/storm.
std::string StormPath()
{
	std::error_code ec;
	std::string self = std::filesystem::read_symlink("/proc/self/exe", ec);
	size_t at = self.rfind("/tests/guest/");
	if (ec || at == std::string::npos)
		return "";
	std::string bin = self.substr(0, at) + "/bench/storm/storm";
	return access(bin.c_str(), X_OK) == 0 ? bin : "";
}

// Runs @argv with stdout+stderr to @log; returns its wait status, or -1
// when it outlived kBoundSec (then killed).
int RunStorm(const std::vector<std::string> &argv, const std::string &log)
{
	pid_t pid = fork();
	if (pid == 0) {
		FILE *f = freopen(log.c_str(), "w", stdout);
		(void)f;
		dup2(1, 2);
		std::vector<char *> a;
		for (const std::string &s : argv)
			a.push_back(const_cast<char *>(s.c_str()));
		a.push_back(nullptr);
		execv(a[0], a.data());
		_exit(127);
	}
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::seconds(kBoundSec);
	int st = 0;
	while (std::chrono::steady_clock::now() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

std::string Read(const std::string &path)
{
	std::ifstream f(path);
	std::stringstream s;
	s << f.rdbuf();
	return s.str();
}

// The text of the JSON object that follows "key": (braces balanced).
std::string Section(const std::string &json, const std::string &key)
{
	size_t at = json.find("\"" + key + "\": {");
	if (at == std::string::npos)
		return "";
	size_t start = json.find('{', at), depth = 0;
	for (size_t i = start; i < json.size(); i++) {
		if (json[i] == '{')
			depth++;
		else if (json[i] == '}' && --depth == 0)
			return json.substr(start, i - start + 1);
	}
	return "";
}

// The number after "key": in @text; -1 when missing.
double Num(const std::string &text, const std::string &key)
{
	size_t at = text.find("\"" + key + "\": ");
	if (at == std::string::npos)
		return -1;
	return std::strtod(text.c_str() + at + key.size() + 4, nullptr);
}

TEST(StormGuest, EveryAttemptAccountedForAndTheServerReclaimsKilledClients)
{
	WHARF_REQUIRE_GUEST();
	std::string bin = StormPath();
	ASSERT_FALSE(bin.empty()) << "bench/storm/storm not found";
	std::string json = "/tmp/storm_guest_test.json";
	std::string log = "/tmp/storm_guest_test.log";
	int st = RunStorm({bin, "--conns", std::to_string(kConns), "--clients",
			   std::to_string(kClients), "--reject",
			   std::to_string(kReject), "--kill",
			   std::to_string(kKill), "--variants", "wharf",
			   "--shards", "2", "--client-timeout", "30000",
			   "--timeout", "240", "--json", json},
			  log);
	std::string out = Read(log);
	ASSERT_NE(-1, st) << "storm outlived " << kBoundSec << " s:\n" << out;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
	std::string j = Read(json);
	ASSERT_FALSE(j.empty()) << out;

	std::string o = Section(j, "outcomes");
	ASSERT_FALSE(o.empty()) << j;
	EXPECT_EQ(kConns, Num(o, "attempts")) << o;
	EXPECT_EQ(0, Num(o, "unaccounted")) << o;
	unsigned victims = storm_kill_count(kClients, kKill);
	ASSERT_EQ(1u, victims);
	unsigned per = kConns / kClients;
	EXPECT_EQ(victims * per, Num(o, "killed")) << o;
	EXPECT_EQ(victims, Num(j, "killed_clients"));
	double sum = 0;
	for (const char *k : {"established", "rejected", "timed_out",
			      "unreachable", "failed", "killed"})
		sum += Num(o, k);
	EXPECT_EQ(kConns, sum) << o;

	// The server rejects by index: the surviving clients' share, exactly,
	// unless some of theirs never reached it.
	unsigned want = 0;
	for (unsigned g = 0; g < kConns - victims * per; g++)
		want += storm_should_reject(g, kReject);
	ASSERT_GT(want, 0u);
	if (Num(o, "timed_out") == 0 && Num(o, "failed") == 0 &&
	    Num(o, "unreachable") == 0) {
		EXPECT_EQ(want, Num(o, "rejected_app")) << o;
	} else {
		EXPECT_LE(Num(o, "rejected_app"), want) << o;
	}

	std::string r = Section(j, "reclaim");
	ASSERT_FALSE(r.empty()) << j;
	EXPECT_NE(std::string::npos, r.find("\"reclaimed\": true")) << r;
	EXPECT_NE(std::string::npos,
		  r.find("0 connections, 0 handshakes, 0 QPs active"))
		<< r;
	std::string s = Section(j, "server_counters");
	ASSERT_FALSE(s.empty()) << j;
	// The killed client's requests that reached the server count there.
	EXPECT_GE(Num(s, "rejected_app"), Num(o, "rejected_app")) << s;
}

// Sets net.ipv4.ip_local_port_range for the test's life.
class PortRange
{
      public:
	PortRange(unsigned lo, unsigned hi)
	{
		old_ = Read(kPath);
		std::ofstream(kPath) << lo << " " << hi << "\n";
	}
	~PortRange()
	{
		std::ofstream(kPath) << old_;
	}

      private:
	static constexpr const char *kPath =
		"/proc/sys/net/ipv4/ip_local_port_range";
	std::string old_;
};

// A storm whose connections fail exits 1 and says FAILED, with the
// reason counted: two of the range's ten ports are held by rdma_cm ids
// of this test, the server takes one, so two of the nine clients find
// no local port (the up-front check counts the range, not who holds it).
TEST(StormGuest, AStormWhoseConnectionsFailExitsOne)
{
	WHARF_REQUIRE_GUEST();
	std::string bin = StormPath();
	ASSERT_FALSE(bin.empty());
	PortRange range(50000, 50009);
	rdma_event_channel *ch = rdma_create_event_channel();
	ASSERT_NE(nullptr, ch);
	rdma_cm_id *held[2] = {};
	for (rdma_cm_id *&id : held) {
		ASSERT_EQ(0, rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP));
		sockaddr_in a = {};
		a.sin_family = AF_INET;
		inet_pton(AF_INET, wharf_guest::kRxeAddr, &a.sin_addr);
		ASSERT_EQ(0, rdma_bind_addr(id, (sockaddr *)&a)) << errno;
	}
	std::string log = "/tmp/storm_guest_fail.log";
	std::string json = "/tmp/storm_guest_fail.json";
	int st = RunStorm({bin, "--conns", "9", "--clients", "1", "--variants",
			   "wharf", "--shards", "1", "--timeout", "120",
			   "--json", json},
			  log);
	for (rdma_cm_id *id : held)
		rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	std::string out = Read(log);
	ASSERT_NE(-1, st) << out;
	ASSERT_TRUE(WIFEXITED(st)) << out;
	EXPECT_EQ(1, WEXITSTATUS(st)) << out;
	EXPECT_NE(std::string::npos, out.find("FAILED")) << out;
	EXPECT_NE(std::string::npos, out.find("not established: address error"))
		<< out;
	std::string o = Section(Read(json), "outcomes");
	EXPECT_EQ(9, Num(o, "attempts")) << o;
	EXPECT_EQ(7, Num(o, "established")) << o;
	EXPECT_EQ(2, Num(o, "failed")) << o;
}

TEST(StormGuest, BadOptionsExitTwo)
{
	WHARF_REQUIRE_GUEST();
	std::string bin = StormPath();
	ASSERT_FALSE(bin.empty());
	std::string log = "/tmp/storm_guest_bad.log";
	int st = RunStorm({bin, "--kill", "1.5"}, log);
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(2, WEXITSTATUS(st));
	EXPECT_NE(std::string::npos, Read(log).find("--kill")) << Read(log);
}

} // namespace
