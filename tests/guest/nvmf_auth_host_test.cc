// DH-HMAC-CHAP between wharf-nvmf-tgt and the Linux host (6.12 guest
// kernel: nvme-rdma with CONFIG_NVME_HOST_AUTH, driven by the stock
// nvme-cli's --dhchap-secret / --dhchap-ctrl-secret). The host with the
// right secret connects (unidirectional with the null group;
// bidirectional with SHA-384 and ffdhe2048, fio verify through it); a wrong secret, a
// wrong controller secret and no secret at all are refused, counted, and
// leave nothing behind. The connect time with and without authentication
// is printed and recorded side by side.
#include <unistd.h>

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "tests/guest/dhchap_secret.h"
#include "tests/guest/nvmf_guest_util.h"

namespace
{

using namespace nvmf_guest;

const char kPlain[] = "nqn.2024-01.io.wharf:plain";
const char kUni[] = "nqn.2024-01.io.wharf:uni";
const char kBidi[] = "nqn.2024-01.io.wharf:bidi";

class AuthHost : public ::testing::Test
{
      protected:
	static Tgt *tgt_;
	static std::string hostnqn_, key_, ctrl_key_;

	static void SetUpTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		std::string out;
		ASSERT_EQ(0, Sh("modprobe -a nvme_rdma nvme_fabrics", &out))
			<< out;
		hostnqn_ = Trim(ReadFile("/etc/nvme/hostnqn"));
		ASSERT_FALSE(hostnqn_.empty()) << "no /etc/nvme/hostnqn";
		key_ = DhchapSecret(0x30, 32, 1);
		ctrl_key_ = DhchapSecret(0x70, 48, 2);
		tgt_ = new Tgt();
		ASSERT_TRUE(tgt_->Start(
			"nvmf_auth_host",
			std::string("listen 198.18.0.1 4460\nshards 2\n"
				    "subsystem ") +
				kPlain +
				"\n  namespace 1 ram:4M\n  allow-host " +
				hostnqn_ + "\nsubsystem " + kUni +
				"\n  namespace 1 ram:4M\n  allow-host " +
				hostnqn_ + " dhchap-key=" + key_ +
				"\nsubsystem " + kBidi +
				"\n  namespace 1 ram:4M\n  allow-host " +
				hostnqn_ + " dhchap-key=" + key_ +
				" dhchap-ctrl-key=" + ctrl_key_ +
				" dhchap-hash=sha384 "
				"dhchap-dhgroup=ffdhe2048\n"));
	}

	static void TearDownTestSuite()
	{
		if (!tgt_)
			return;
		for (const char *n : {kPlain, kUni, kBidi})
			Sh(std::string("nvme disconnect -n ") + n);
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

	// nvme connect to @nqn with @extra; its exit status, the time it
	// took in *ms.
	static int Connect(const char *nqn, const std::string &extra,
			   std::string *out, double *ms = nullptr)
	{
		auto t0 = std::chrono::steady_clock::now();
		int rc =
			Sh(std::string("nvme connect -t rdma -a 198.18.0.1 -s "
				       "4460 -n ") +
				   nqn + " --hostnqn=" + hostnqn_ + " " + extra,
			   out);
		if (ms)
			*ms = std::chrono::duration<double, std::milli>(
				      std::chrono::steady_clock::now() - t0)
				      .count();
		return rc;
	}

	// The block device of @nqn's controller (nvmeAnB, or with native
	// multipath the path node nvmeAcBnC's nvmeAnC), once it is there.
	static std::string Block(const char *nqn)
	{
		std::string dev;
		Poll([&] {
			for (const std::string &c : NvmeCtrls("subsysnqn", nqn))
				for (const std::string &n : NvmeBlockNames(c))
					if (access(("/dev/" + n).c_str(),
						   F_OK) == 0)
						dev = n;
			return !dev.empty();
		});
		return dev;
	}

	// 4 MiB written with crc32c and read back through @dev.
	static void VerifyIo(const std::string &dev)
	{
		std::string out;
		EXPECT_EQ(0, Sh("fio --name=v --filename=/dev/" + dev +
					" --ioengine=libaio --direct=1 "
					"--bs=4k --iodepth=4 --size=4M "
					"--rw=randwrite --verify=crc32c "
					"--do_verify=1 --verify_fatal=1 "
					"--verify_state_save=0",
				&out))
			<< out;
	}
};

Tgt *AuthHost::tgt_ = nullptr;
std::string AuthHost::hostnqn_;
std::string AuthHost::key_;
std::string AuthHost::ctrl_key_;

TEST_F(AuthHost, TheRightSecretConnectsAndTheConnectTimeIsRecorded)
{
	std::string out;
	// The boot's first connect loads and warms up the host's path: not
	// measured. Then plain and authenticated connects alternate, twice
	// each, so that neither side gets the warmer moment.
	ASSERT_EQ(0, Connect(kPlain, "", &out)) << out;
	ASSERT_FALSE(Block(kPlain).empty());
	Sh(std::string("nvme disconnect -n ") + kPlain, &out);
	double plain_ms[2] = {0, 0}, auth_ms[2] = {0, 0};
	auto before = tgt_->Stats();
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, Connect(kPlain, "", &out, &plain_ms[i])) << out;
		ASSERT_FALSE(Block(kPlain).empty());
		Sh(std::string("nvme disconnect -n ") + kPlain, &out);
		ASSERT_EQ(0, Connect(kUni, "--dhchap-secret=" + key_, &out,
				     &auth_ms[i]))
			<< out << tgt_->Log();
		ASSERT_FALSE(Block(kUni).empty());
		EXPECT_EQ(0,
			  Sh(std::string("nvme disconnect -n ") + kUni, &out))
			<< out;
	}
	auto after = tgt_->Stats();
	// Each connect authenticated the admin queue and every I/O queue.
	EXPECT_GE(after["auth_ok"] - before["auth_ok"], 4u);
	EXPECT_EQ(after["auth_failed"], before["auth_failed"]);
	printf("nvme connect: %.0f and %.0f ms without authentication, %.0f "
	       "and %.0f ms with (SHA-256, null group)\n",
	       plain_ms[0], plain_ms[1], auth_ms[0], auth_ms[1]);
	for (int i = 0; i < 2; i++) {
		RecordProperty("connect_ms_plain_" + std::to_string(i + 1),
			       std::to_string(plain_ms[i]));
		RecordProperty("connect_ms_dhchap_sha256_null_" +
				       std::to_string(i + 1),
			       std::to_string(auth_ms[i]));
	}
	EXPECT_TRUE(tgt_->BackToZero());
}

TEST_F(AuthHost, BidirectionalWithFfdhe2048)
{
	std::string out;
	double ms = 0;
	ASSERT_EQ(0, Connect(kBidi,
			     "--dhchap-secret=" + key_ +
				     " --dhchap-ctrl-secret=" + ctrl_key_,
			     &out, &ms))
		<< out << tgt_->Log();
	std::string dev = Block(kBidi);
	ASSERT_FALSE(dev.empty());
	VerifyIo(dev);
	printf("nvme connect: %.0f ms with bidirectional authentication "
	       "(SHA-384, ffdhe2048)\n",
	       ms);
	RecordProperty("connect_ms_dhchap_sha384_ffdhe2048",
		       std::to_string(ms));
	EXPECT_EQ(0, Sh(std::string("nvme disconnect -n ") + kBidi, &out))
		<< out;
	EXPECT_TRUE(tgt_->BackToZero());
}

TEST_F(AuthHost, WrongOrMissingSecretsAreRefused)
{
	std::string out;
	auto before = tgt_->Stats();
	// A wrong host secret: the target's Failure1.
	EXPECT_NE(0,
		  Connect(kUni, "--dhchap-secret=" + DhchapSecret(0x31, 32, 1),
			  &out))
		<< out;
	// The right host secret, a wrong controller secret: the host
	// refuses the controller's response.
	EXPECT_NE(0,
		  Connect(kBidi,
			  "--dhchap-secret=" + key_ + " --dhchap-ctrl-secret=" +
				  DhchapSecret(0x71, 48, 2),
			  &out))
		<< out;
	// No secret where one is required: no queue, no controller.
	EXPECT_NE(0, Connect(kUni, "", &out)) << out;
	EXPECT_TRUE(NvmeCtrls("subsysnqn", kUni).empty());
	EXPECT_TRUE(NvmeCtrls("subsysnqn", kBidi).empty());
	auto after = tgt_->Stats();
	// The wrong secret (Failure1) and the host's refusal of the wrong
	// controller response (its Failure2); the host without a secret
	// gives up before any message.
	EXPECT_EQ(after["auth_failed"] - before["auth_failed"], 2u);
	EXPECT_EQ(after["auth_ok"], before["auth_ok"]);
	EXPECT_TRUE(tgt_->BackToZero());
}

} // namespace
