// The examples as a user builds them: libwharf installed from //:dist into
// a fresh prefix, examples/server.c and client.c compiled with nothing but
// cc $(pkg-config --cflags --libs wharf), then run against each other and
// against the stock ucmatose in both roles (-c 1 -C 1): the server's
// message, the client's answer, the server's disconnect; each side exits 0
// only when its message was sent and the other's received.  Each run is
// bounded; a process that outlives it is killed.
#include <stdlib.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/guest/guest_env.h"
#include "tests/guest/guest_proc.h"

namespace
{

constexpr int kBoundSec = 120;

// A data file of this test: in its runfiles, else from the repo root.
std::string DataFile(const std::string &path)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		std::string p = std::string(self) + ".runfiles/wharf/" + path;
		if (access(p.c_str(), R_OK) == 0)
			return p;
	}
	return path;
}

class Examples : public ::testing::Test
{
      protected:
	static void SetUpTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		char tmpl[] = "/tmp/wharf-examples.XXXXXX";
		ASSERT_NE(nullptr, mkdtemp(tmpl));
		prefix_ = tmpl;
		std::string cc = "cc -Wall -Werror -o " + prefix_ + "/";
		std::string pc = " $(pkg-config --cflags --libs wharf)";
		std::string cmd =
			"set -e; " + DataFile("tools/install/install.sh") +
			" install " + DataFile("wharf-dist.tar") +
			" --prefix " + prefix_ +
			"; export PKG_CONFIG_PATH=" + prefix_ +
			"/lib/pkgconfig; " + cc + "server " +
			DataFile("examples/server.c") + pc + "; " + cc +
			"client " + DataFile("examples/client.c") + pc;
		built_ = system(cmd.c_str()) == 0;
		setenv("LD_LIBRARY_PATH", (prefix_ + "/lib").c_str(), 1);
	}

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		ASSERT_TRUE(built_)
			<< "install or build of the examples failed";
	}

	void Run(const std::vector<std::string> &server,
		 const std::string &ready,
		 const std::vector<std::string> &client, const std::string &sok,
		 const std::string &cok)
	{
		wharf_guest::Exchange(server, ready, client, sok, cok,
				      kBoundSec, "/tmp/examples");
	}

	std::string Server()
	{
		return prefix_ + "/server";
	}
	std::string Client()
	{
		return prefix_ + "/client";
	}
	const std::string addr_ = wharf_guest::kRxeAddr;

	static std::string prefix_;
	static bool built_;
};

std::string Examples::prefix_;
bool Examples::built_ = false;

TEST_F(Examples, ServerAndClient)
{
	Run({Server(), addr_, "7481"}, "listening", {Client(), addr_, "7481"},
	    "received \"hello from the wharf client\"",
	    "received \"hello from wharf\"");
}

TEST_F(Examples, ClientAgainstUcmatose)
{
	Run({"ucmatose", "-b", addr_, "-p", "7482", "-c", "1", "-C", "1"},
	    "starting server", {Client(), addr_, "7482"}, "return status 0",
	    "client: disconnected");
}

TEST_F(Examples, UcmatoseAgainstServer)
{
	Run({Server(), addr_, "7483"}, "listening",
	    {"ucmatose", "-s", addr_, "-p", "7483", "-c", "1", "-C", "1"},
	    "server: disconnected", "return status 0");
}

} // namespace
