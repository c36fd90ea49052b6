// The README's quick start, run in the guest exactly as written: the
// block between <!-- quickstart --> and <!-- /quickstart --> as one
// shell script (set -e: every line must succeed), with the built
// programs first on PATH, as `./wharf install` would put them.  Then
// what it claims is checked: the Linux host saw the disk, the live
// changes reached the target, the saved configuration holds them, the
// target stopped cleanly with its last stats line.
#include <libgen.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/guest/nvmf_guest_util.h"

namespace
{

using namespace nvmf_guest;

const char kNqn[] = "nqn.2024-01.io.example:disk0";

// The first ```sh block between the quick start's markers; "" if none.
std::string QuickStartBlock(const std::string &readme)
{
	size_t a = readme.find("<!-- quickstart -->");
	size_t b = readme.find("<!-- /quickstart -->");
	if (a == std::string::npos || b == std::string::npos || b < a)
		return "";
	size_t s = readme.find("```sh\n", a);
	size_t e = s == std::string::npos ? s : readme.find("\n```", s + 6);
	if (s == std::string::npos || e == std::string::npos || e > b)
		return "";
	return readme.substr(s + 6, e - s - 6 + 1);
}

std::string Dir(const std::string &path)
{
	return path.substr(0, path.rfind('/'));
}

// Whatever a failed run left: the host's controller, the target, the
// loop device.
struct Cleanup {
	~Cleanup()
	{
		Sh(std::string("nvme disconnect -n ") + kNqn +
		   "; pkill -f /tmp/wharf-tgt.conf; losetup -j /tmp/disk0.img "
		   "| cut -d: -f1 | xargs -r -n1 losetup -d; rm -f "
		   "/tmp/disk0.img");
	}
};

TEST(QuickStart, TheReadmeRunsAsWritten)
{
	WHARF_REQUIRE_GUEST();
	std::string tgt =
		wharf_guest::built_program("targets/nvmf/wharf-nvmf-tgt");
	std::string rpc =
		wharf_guest::built_program("targets/nvmf/wharf-nvmf-rpc");
	ASSERT_FALSE(tgt.empty() || rpc.empty()) << "programs not built";
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ASSERT_GT(n, 0);
	self[n] = 0;
	std::string readme =
		ReadFile(std::string(self) + ".runfiles/wharf/README.md");
	std::string block = QuickStartBlock(readme);
	ASSERT_FALSE(block.empty()) << "no quick start block in README.md";
	EXPECT_NE(std::string::npos, block.find("nvme connect"));

	Cleanup cleanup;
	std::string out;
	std::ofstream("/tmp/quickstart.sh")
		<< "set -e -x\nexport PATH=" << Dir(tgt) << ":" << Dir(rpc)
		<< ":$PATH\n"
		<< block;
	int rc = Sh("bash /tmp/quickstart.sh", &out, 240);
	ASSERT_EQ(0, rc) << out;
	// nvme list showed the disk; the controllers' list names this
	// machine's host; the stats arrived both ways.
	std::string host = Trim(ReadFile("/etc/nvme/hostnqn"));
	EXPECT_NE(std::string::npos, out.find("/dev/nvme")) << out;
	EXPECT_NE(std::string::npos, out.find(host)) << out;
	EXPECT_NE(std::string::npos, out.find("wharf-nvmf-tgt: stats:")) << out;
	// Each of the host's queues with its latency; the subsystem's
	// counters.
	EXPECT_NE(std::string::npos, out.find("\"latency_us\"")) << out;
	EXPECT_NE(std::string::npos, out.find("\"connects\": 1")) << out;
	// The saved configuration holds what changed at run time.
	std::string conf = ReadFile("/tmp/wharf-tgt.conf");
	EXPECT_NE(std::string::npos, conf.find("namespace 2 null:1073741824"))
		<< conf;
	EXPECT_NE(std::string::npos,
		  conf.find("8d3c7a52-93d1-4b7e-9c31-2f5e8a6b1c04"))
		<< conf;
	// The target left as told, with its last stats line.
	std::string log = ReadFile("/tmp/wharf-tgt.log");
	EXPECT_NE(std::string::npos, log.find("stats at exit")) << log;
	EXPECT_TRUE(NvmeCtrls("subsysnqn", kNqn).empty())
		<< "the host's controller is still there";
}

} // namespace
