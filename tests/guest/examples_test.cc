// The examples as a user builds them: examples/server.c and client.c
// compiled with nothing but cc $(pkg-config --cflags --libs wharf) against
// an install of //:dist, and run with that install's libwharf.so.0 (all
// three from //examples, built on the host), against each other and against
// the stock ucmatose in both roles (-c 1 -C 1): the server's message, the
// client's answer, the server's disconnect; each side exits 0 only when its
// message was sent and the other's received.  Each run is bounded; a process
// that outlives it is killed.
#include <stdlib.h>
#include <unistd.h>

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
		std::string lib = DataFile("examples/libwharf.so.0");
		built_ = access(Server().c_str(), X_OK) == 0 &&
			 access(Client().c_str(), X_OK) == 0 &&
			 access(lib.c_str(), R_OK) == 0;
		setenv("LD_LIBRARY_PATH", lib.substr(0, lib.rfind('/')).c_str(),
		       1);
	}

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		ASSERT_TRUE(built_)
			<< "the built examples or their libwharf.so.0 missing";
	}

	void Run(const std::vector<std::string> &server,
		 const std::string &ready,
		 const std::vector<std::string> &client, const std::string &sok,
		 const std::string &cok)
	{
		wharf_guest::Exchange(server, ready, client, sok, cok,
				      kBoundSec, "/tmp/examples");
	}

	static std::string Server()
	{
		return DataFile("examples/server");
	}
	static std::string Client()
	{
		return DataFile("examples/client");
	}
	const std::string addr_ = wharf_guest::kRxeAddr;

	static bool built_;
};

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
