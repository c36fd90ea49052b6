// The proof against peers written by no one here: wharf-echo
// (targets/echo) against rdmacm-utils' stock ucmatose (RC) and udaddy
// (UD), in both roles, -c 100 -C 10.  Each run is bounded; a process that
// outlives its bound is killed and the test fails.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/guest/guest_env.h"
#include "tests/guest/guest_proc.h"

namespace
{

using wharf_guest::Clock;
using wharf_guest::Proc;
constexpr int kConns = 100;
constexpr int kBoundSec = 240;

std::string EchoPath()
{
	return wharf_guest::built_program("targets/echo/wharf-echo");
}

void Exchange(const std::vector<std::string> &server, const std::string &ready,
	      const std::vector<std::string> &client, const std::string &sok,
	      const std::string &cok)
{
	wharf_guest::Exchange(server, ready, client, sok, cok, kBoundSec,
			      "/tmp/cm_interop");
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
