// DH-HMAC-CHAP from wharf's host (<wharf/nvmf_host.h>, through
// wharf-nvmf-perf's nvme-cli options -S / -C) against the Linux target
// (nvmet on the 6.12 guest kernel, its hosts/NQN/dhchap_* attributes) and
// against wharf-nvmf-tgt: unidirectional with the null group and SHA-256,
// bidirectional with SHA-384 and ffdhe2048 under --verify; a wrong host
// secret, a wrong controller secret and no secret at all each end the
// connect with exit 2 and the reason; the connect time with and without
// authentication is printed side by side.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "tests/guest/dhchap_secret.h"
#include "tests/guest/nvmf_guest_util.h"

namespace
{

using namespace nvmf_guest;

const char kAddr[] = "198.18.0.1";
const char kCfs[] = "/sys/kernel/config/nvmet";
const char kImg[] = "/dev/shm/nvmf_host_auth_test.img";
// Ports no other guest test uses: nvmet's, wharf-nvmf-tgt's.
const uint16_t kNvmetPort = 4450, kWharfPort = 4451;
const char kPlain[] = "nqn.2024-01.io.wharf:hostauth-plain";
const char kUni[] = "nqn.2024-01.io.wharf:hostauth-uni";
const char kBidi[] = "nqn.2024-01.io.wharf:hostauth-bidi";
const char kHostUni[] = "nqn.2024-01.io.wharf:hostauth-h1";
const char kHostBidi[] = "nqn.2024-01.io.wharf:hostauth-h2";

class HostAuth : public ::testing::Test
{
      protected:
	static bool nvmet_up_;
	static Tgt *tgt_;
	static std::string key_, ctrl_key_, key2_;

	static void NvmetTeardown()
	{
		std::string c = kCfs;
		Sh("rm -f " + c + "/ports/45/subsystems/*; rmdir " + c +
		   "/ports/45; for s in " + kPlain + " " + kUni + " " + kBidi +
		   "; do rm -f " + c +
		   "/subsystems/$s/allowed_hosts/*; echo 0 > " + c +
		   "/subsystems/$s/namespaces/1/enable; rmdir " + c +
		   "/subsystems/$s/namespaces/1 " + c +
		   "/subsystems/$s; done; rmdir " + c + "/hosts/" + kHostUni +
		   " " + c + "/hosts/" + kHostBidi + "; rm -f " + kImg);
	}

	static void SetUpTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		key_ = DhchapSecret(0x21, 32, 1);
		key2_ = DhchapSecret(0x45, 48, 2);
		ctrl_key_ = DhchapSecret(0x67, 64, 3);
		std::string out, c = kCfs, h1 = c + "/hosts/" + kHostUni,
				 h2 = c + "/hosts/" + kHostBidi;
		std::string setup =
			"set -e; modprobe -a nvmet nvmet_rdma; "
			"mountpoint -q /sys/kernel/config || mount -t configfs "
			"none /sys/kernel/config; truncate -s 16M " +
			std::string(kImg) + "; mkdir " + h1 + " " + h2 +
			"; echo \"" + key_ + "\" > " + h1 +
			"/dhchap_key; echo \"hmac(sha256)\" > " + h1 +
			"/dhchap_hash; echo null > " + h1 +
			"/dhchap_dhgroup; echo \"" + key2_ + "\" > " + h2 +
			"/dhchap_key; echo \"" + ctrl_key_ + "\" > " + h2 +
			"/dhchap_ctrl_key; echo \"hmac(sha384)\" > " + h2 +
			"/dhchap_hash; echo ffdhe2048 > " + h2 +
			"/dhchap_dhgroup; for s in " + kPlain + " " + kUni +
			" " + kBidi + "; do mkdir " + c + "/subsystems/$s " +
			c + "/subsystems/$s/namespaces/1; echo -n " + kImg +
			" > " + c +
			"/subsystems/$s/namespaces/1/device_path; echo 1 > " +
			c +
			"/subsystems/$s/namespaces/1/buffered_io; echo 1 > " +
			c +
			"/subsystems/$s/namespaces/1/enable; done; echo 1 > " +
			c + "/subsystems/" + kPlain +
			"/attr_allow_any_host; ln -s " + h1 + " " + c +
			"/subsystems/" + kUni + "/allowed_hosts/; ln -s " + h2 +
			" " + c + "/subsystems/" + kBidi +
			"/allowed_hosts/; mkdir " + c +
			"/ports/45; echo rdma > " + c +
			"/ports/45/addr_trtype; echo ipv4 > " + c +
			"/ports/45/addr_adrfam; echo " + kAddr + " > " + c +
			"/ports/45/addr_traddr; echo " +
			std::to_string(kNvmetPort) + " > " + c +
			"/ports/45/addr_trsvcid; for s in " + kPlain + " " +
			kUni + " " + kBidi + "; do ln -s " + c +
			"/subsystems/$s " + c + "/ports/45/subsystems/$s; done";
		NvmetTeardown();
		nvmet_up_ = Sh(setup, &out) == 0;
		if (!nvmet_up_) {
			ADD_FAILURE() << "nvmet setup: " << out;
		}
		tgt_ = new Tgt();
		::testing::AssertionResult started = tgt_->Start(
			"nvmf_host_auth",
			std::string("listen ") + kAddr + " " +
				std::to_string(kWharfPort) +
				"\nshards 2\nsubsystem " + kBidi +
				"\n  namespace 1 ram:16M\n  allow-host " +
				kHostBidi + " dhchap-key=" + key2_ +
				" dhchap-ctrl-key=" + ctrl_key_ +
				" dhchap-hash=sha512 "
				"dhchap-dhgroup=ffdhe3072\n");
		if (!started) {
			ADD_FAILURE() << started.message();
		}
	}

	static void TearDownTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		NvmetTeardown();
		if (tgt_) {
			EXPECT_TRUE(tgt_->Stop());
			delete tgt_;
			tgt_ = nullptr;
		}
	}

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		ASSERT_TRUE(nvmet_up_);
		ASSERT_NE(nullptr, tgt_);
	}

	// wharf-nvmf-perf against @port / @nqn as @host with @extra: its exit
	// status and output (stderr too).
	static int Perf(uint16_t port, const char *nqn, const char *host,
			const std::string &extra, std::string *out)
	{
		std::string perf = wharf_guest::built_program(
			"initiators/nvmf/wharf-nvmf-perf");
		return Sh(perf + " -a " + kAddr + " -s " +
				  std::to_string(port) + " -n " + nqn +
				  (host ? std::string(" -q ") + host : "") +
				  " -i 2 --shards 2 --qd 4 --time 2 --quiet " +
				  extra + " 2>&1",
			  out, 120);
	}

	static double ConnectMs(const std::string &out)
	{
		size_t at = out.find("connected in ");
		return at == std::string::npos
			       ? -1
			       : std::strtod(out.c_str() + at + 13, nullptr);
	}
};

bool HostAuth::nvmet_up_;
Tgt *HostAuth::tgt_;
std::string HostAuth::key_, HostAuth::ctrl_key_, HostAuth::key2_;

TEST_F(HostAuth, UnidirectionalAgainstNvmetAndTheConnectTime)
{
	std::string out, plain;
	ASSERT_EQ(0, Perf(kNvmetPort, kPlain, nullptr, "", &plain)) << plain;
	ASSERT_EQ(0, Perf(kNvmetPort, kUni, kHostUni, "-S " + key_, &out))
		<< out;
	EXPECT_NE(std::string::npos, out.find("(DH-HMAC-CHAP)")) << out;
	EXPECT_NE(std::string::npos, out.find(" 0 errors")) << out;
	std::cout << "connect to nvmet: " << ConnectMs(plain)
		  << " ms without authentication, " << ConnectMs(out)
		  << " ms with DH-HMAC-CHAP (SHA-256, null group, 3 queues)"
		  << std::endl;
	EXPECT_GT(ConnectMs(out), 0);
}

TEST_F(HostAuth, BidirectionalFfdheAgainstNvmetWithVerify)
{
	std::string out;
	ASSERT_EQ(0, Perf(kNvmetPort, kBidi, kHostBidi,
			  "-S " + key2_ + " -C " + ctrl_key_ +
				  " --pattern randwrite --verify",
			  &out))
		<< out;
	EXPECT_NE(std::string::npos, out.find("bidirectional")) << out;
	EXPECT_NE(std::string::npos, out.find("0 verify mismatches")) << out;
	std::cout << "connect to nvmet: " << ConnectMs(out)
		  << " ms with bidirectional DH-HMAC-CHAP (SHA-384, "
		     "ffdhe2048, 3 queues)"
		  << std::endl;
}

TEST_F(HostAuth, BidirectionalAgainstWharfNvmfTgt)
{
	std::string out;
	ASSERT_EQ(0, Perf(kWharfPort, kBidi, kHostBidi,
			  "-S " + key2_ + " -C " + ctrl_key_ +
				  " --pattern randwrite --verify",
			  &out))
		<< out;
	EXPECT_NE(std::string::npos, out.find("0 verify mismatches")) << out;
	auto s = tgt_->Stats();
	EXPECT_GE(s["auth_ok"], 3u) << "the admin queue and two I/O queues";
	EXPECT_EQ(0u, s["auth_failed"]);
}

TEST_F(HostAuth, WrongOrMissingSecretsEndTheConnectWithTheReason)
{
	std::string out;
	// The host's secret is not the one nvmet has: its Failure1.
	EXPECT_EQ(2, Perf(kNvmetPort, kUni, kHostUni, "-S " + key2_, &out))
		<< out;
	EXPECT_NE(std::string::npos,
		  out.find("DH-HMAC-CHAP: the controller refused the host"))
		<< out;
	EXPECT_NE(std::string::npos, out.find("Key was rejected")) << out;
	// The host holds another controller secret than nvmet: nvmet's R2
	// is not the one the host computes, and the host refuses it.
	EXPECT_EQ(2, Perf(kNvmetPort, kBidi, kHostBidi,
			  "-S " + key2_ + " -C " + key_, &out))
		<< out;
	EXPECT_NE(std::string::npos,
		  out.find("the controller's response is wrong"))
		<< out;
	// No secret where one is required.
	EXPECT_EQ(2, Perf(kNvmetPort, kUni, kHostUni, "", &out)) << out;
	EXPECT_NE(std::string::npos,
		  out.find("requires in-band authentication"))
		<< out;
	// A malformed secret never reaches the wire.
	EXPECT_NE(0,
		  Perf(kNvmetPort, kUni, kHostUni, "-S DHHC-1:01:abc:", &out))
		<< out;
	EXPECT_NE(std::string::npos, out.find("--dhchap-secret: bad value"))
		<< out;
	EXPECT_EQ(std::string::npos, out.find("abc")) << "the secret echoed";
	// Against wharf-nvmf-tgt too, which counts the refusal.
	uint64_t failed = tgt_->Stats()["auth_failed"];
	EXPECT_EQ(2, Perf(kWharfPort, kBidi, kHostBidi, "-S " + key_, &out))
		<< out;
	EXPECT_GT(tgt_->Stats()["auth_failed"], failed);
	EXPECT_TRUE(tgt_->BackToZero());
}

} // namespace
