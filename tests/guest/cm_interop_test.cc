// The proof against peers written by no one here: wharf-echo
// (targets/echo) against rdmacm-utils' stock ucmatose (RC) and udaddy
// (UD), in both roles, -c 100 -C 10.  Each run is bounded; a process that
// outlives its bound is killed and the test fails.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/guest/guest_env.h"

namespace
{

using Clock = std::chrono::steady_clock;
constexpr int kConns = 100;
constexpr int kBoundSec = 240;

std::string EchoPath()
{
	return wharf_guest::built_program("targets/echo/wharf-echo");
}

struct Proc {
	pid_t pid = -1;
	std::string log;
	int status = -1;

	// Starts @argv with stdout+stderr to @log; the stock tools under
	// stdbuf -oL (their printf would wait for exit), wharf-echo as it is
	// (it flushes; and an ASan build must come first in the preload
	// order, which stdbuf's LD_PRELOAD would break).
	void Start(const std::vector<std::string> &argv, const std::string &l)
	{
		bool stock = argv[0].find('/') == std::string::npos;
		log = l;
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			setpgid(0, 0);
			int fd = open(l.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
				      0644);
			dup2(fd, 1);
			dup2(fd, 2);
			std::vector<char *> a;
			if (stock) {
				a.push_back((char *)"stdbuf");
				a.push_back((char *)"-oL");
			}
			for (const std::string &s : argv)
				a.push_back((char *)s.c_str());
			a.push_back(nullptr);
			execvp(a[0], a.data());
			_exit(127);
		}
	}

	// Waits (bounded) for the exit; kills the group on timeout.
	bool Wait(Clock::time_point deadline)
	{
		while (Clock::now() < deadline) {
			pid_t r = waitpid(pid, &status, WNOHANG);
			if (r == pid)
				return true;
			std::this_thread::sleep_for(
				std::chrono::milliseconds(50));
		}
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		return false;
	}

	bool Exited0() const
	{
		return WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}

	std::string Output() const
	{
		std::ifstream f(log);
		std::stringstream s;
		s << f.rdbuf();
		return s.str();
	}

	// Waits until the log contains @what (bounded).
	bool WaitFor(const std::string &what, Clock::time_point deadline)
	{
		while (Clock::now() < deadline) {
			if (Output().find(what) != std::string::npos)
				return true;
			if (waitpid(pid, &status, WNOHANG) == pid) {
				pid = -1;
				return false;
			}
			std::this_thread::sleep_for(
				std::chrono::milliseconds(50));
		}
		return false;
	}
};

// Runs @server, waits for @ready in its output (plus a second: stock
// tools print before they listen), runs @client; both must exit 0.
void Exchange(const std::vector<std::string> &server, const std::string &ready,
	      const std::vector<std::string> &client, const std::string &sok,
	      const std::string &cok)
{
	auto deadline = Clock::now() + std::chrono::seconds(kBoundSec);
	Proc s, c;
	s.Start(server, "/tmp/cm_interop_server.log");
	ASSERT_TRUE(s.WaitFor(ready, deadline)) << s.Output();
	std::this_thread::sleep_for(std::chrono::seconds(1));
	c.Start(client, "/tmp/cm_interop_client.log");
	bool cdone = c.Wait(deadline);
	bool sdone = s.Wait(deadline);
	EXPECT_TRUE(cdone) << "client killed after " << kBoundSec << " s";
	EXPECT_TRUE(sdone) << "server killed after " << kBoundSec << " s";
	EXPECT_TRUE(c.Exited0()) << c.Output();
	EXPECT_TRUE(s.Exited0()) << s.Output();
	EXPECT_NE(std::string::npos, s.Output().find(sok)) << s.Output();
	EXPECT_NE(std::string::npos, c.Output().find(cok)) << c.Output();
}

class CmInterop : public ::testing::Test
{
      protected:
	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		echo_ = EchoPath();
		ASSERT_FALSE(echo_.empty()) << "wharf-echo not found";
	}
	std::string echo_;
	const std::string n_ = std::to_string(kConns);
	const std::string addr_ = wharf_guest::kRxeAddr;
	const std::string ok100_ = "success: " + std::to_string(kConns) +
				   " of " + std::to_string(kConns);
};

TEST_F(CmInterop, StockUcmatoseClientToWharfServer)
{
	Exchange({echo_, "-c", n_, "-C", "10", "--timeout", "200"}, "listening",
		 {"ucmatose", "-s", addr_, "-c", n_, "-C", "10"}, ok100_,
		 "return status 0");
}

// ucmatose starts all its connects at once: a storm from a standard peer,
// which does not retry a refusal.  With shards that run two handshakes at
// a time, the rest must wait (deferred), and every connection completes.
TEST_F(CmInterop, StockUcmatoseBurstBeyondTheHandshakeCapIsDeferred)
{
	Exchange({echo_, "-c", n_, "-C", "10", "-T", "2", "--handshake-cap",
		  "2", "--timeout", "200"},
		 "listening", {"ucmatose", "-s", addr_, "-c", n_, "-C", "10"},
		 ok100_, "return status 0");
	std::ifstream f("/tmp/cm_interop_server.log");
	std::stringstream s;
	s << f.rdbuf();
	std::string out = s.str();
	size_t at = out.find("deferred ");
	ASSERT_NE(std::string::npos, at) << out;
	EXPECT_GT(std::atoi(out.c_str() + at + 9), 0) << out;
	EXPECT_NE(std::string::npos, out.find("refused 0")) << out;
	EXPECT_NE(std::string::npos, out.find("timed out 0")) << out;
}

TEST_F(CmInterop, WharfClientToStockUcmatoseServer)
{
	Exchange({"ucmatose", "-c", n_, "-C", "10"}, "starting server",
		 {echo_, "-s", addr_, "-c", n_, "-C", "10", "--timeout", "200"},
		 "return status 0", ok100_);
}

TEST_F(CmInterop, StockUdaddyClientToWharfServer)
{
	Exchange({echo_, "--ud", "-c", n_, "-C", "10", "--timeout", "200"},
		 "listening", {"udaddy", "-s", addr_, "-c", n_, "-C", "10"},
		 ok100_, "return status 0");
}

TEST_F(CmInterop, WharfClientToStockUdaddyServer)
{
	Exchange({"udaddy", "-c", n_, "-C", "10"}, "starting server",
		 {echo_, "--ud", "-s", addr_, "-c", n_, "-C", "10", "--timeout",
		  "200"},
		 "return status 0", ok100_);
}

TEST_F(CmInterop, EchoHelpAndBadArguments)
{
	Proc h, b;
	auto deadline = Clock::now() + std::chrono::seconds(30);
	h.Start({echo_, "--help"}, "/tmp/cm_interop_help.log");
	ASSERT_TRUE(h.Wait(deadline));
	EXPECT_TRUE(h.Exited0());
	EXPECT_NE(std::string::npos, h.Output().find("usage: wharf-echo"));
	b.Start({echo_, "-c", "zero"}, "/tmp/cm_interop_bad.log");
	ASSERT_TRUE(b.Wait(deadline));
	EXPECT_TRUE(WIFEXITED(b.status) && WEXITSTATUS(b.status) == 2);
}

} // namespace
