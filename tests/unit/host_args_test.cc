// The host programs' shared controller options (nvme-cli's names, short
// forms and seconds) and the host identifier's text forms.
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include <list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "initiators/common/host_args.h"
#include "proto/nvme/auth.h"
#include "proto/nvme/hostid.h"
}

namespace
{

const struct option kLongopts[] = {
	HOST_ARGS_LONGOPTS,
	{"help", no_argument, nullptr, 'h'},
	{"own", required_argument, nullptr, 0x200},
	{nullptr, 0, nullptr, 0},
};

struct Own {
	std::string val;
	bool help = false;
};

int OwnOpt(void *arg, int c, const char *v)
{
	auto *o = static_cast<Own *>(arg);

	if (c == 'h') {
		o->help = true;
		return 0;
	}
	if (c == 0x200) {
		o->val = v;
		return 0;
	}
	return -EINVAL;
}

// Parses @args as a program would: the results point into the argument
// strings, so those are kept until the test program ends.
int Parse(std::vector<std::string> args, host_args *h, Own *own,
	  std::string *err = nullptr)
{
	static std::list<std::vector<std::string>> kept;
	std::vector<char *> argv;
	char e[256] = "";

	args.insert(args.begin(), "prog");
	kept.push_back(std::move(args));
	std::vector<std::string> &v = kept.back();
	for (auto &s : v)
		argv.push_back(&s[0]);
	argv.push_back(nullptr);
	host_args_init(h);
	int rc = host_args_parse((int)v.size(), argv.data(), "h", kLongopts, h,
				 OwnOpt, own, e, sizeof(e));
	if (err)
		*err = e;
	return rc;
}

const char kUuid[] = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
// 32 bytes of 0x11, no transformation, as nvme gen-dhchap-key prints it.
std::string SecretText(uint8_t fill, uint8_t hash)
{
	nvme_auth_key k = {};
	char text[NVME_AUTH_KEY_TEXT_MAX];
	k.hash = hash;
	k.len = 32;
	memset(k.key, fill, 32);
	EXPECT_GT(nvme_auth_key_format(&k, text, sizeof(text)), 0);
	return text;
}
const std::string kSecretS = SecretText(0x11, 0),
		  kSecret2S = SecretText(0x22, 1);
const char *const kSecret = kSecretS.c_str(), *const kSecret2 =
						      kSecret2S.c_str();
const uint8_t kUuidBytes[16] = {0x1b, 0x4e, 0x28, 0xba, 0x2f, 0xa1, 0x11, 0xd2,
				0x88, 0x3f, 0x00, 0x16, 0xd3, 0xcc, 0xa4, 0x27};

TEST(HostArgs, NvmeCliShortFormsAndAliases)
{
	host_args h;
	Own own;

	ASSERT_EQ(0, Parse({"-a",    "10.0.0.1", "-s", "4421", "-n", "nqn.sub",
			    "-q",    "nqn.host", "-I", kUuid,  "-i", "3",
			    "-k",    "7",	 "-c", "1",    "-l", "60",
			    "--own", "x",	 "-h"},
			   &h, &own));
	EXPECT_STREQ("10.0.0.1", h.traddr);
	EXPECT_STREQ("4421", h.trsvcid);
	EXPECT_STREQ("nqn.sub", h.subnqn);
	EXPECT_STREQ("nqn.host", h.hostnqn);
	ASSERT_TRUE(h.has_hostid);
	EXPECT_EQ(0, memcmp(kUuidBytes, h.hostid, 16));
	EXPECT_EQ(3u, h.queues);
	EXPECT_EQ(7000u, h.kato_ms);
	EXPECT_EQ(1000u, h.reconnect_delay_ms);
	EXPECT_EQ(60000u, h.ctrl_loss_tmo_ms);
	EXPECT_EQ("x", own.val) << "the program's own options still reach it";
	EXPECT_TRUE(own.help);

	// nvme-cli's long names are the same options as wharf's.
	ASSERT_EQ(0, Parse({"--traddr=a", "--nqn", "n1", "--nr-io-queues=2"},
			   &h, &own));
	EXPECT_STREQ("n1", h.subnqn);
	EXPECT_EQ(2u, h.queues);
	ASSERT_EQ(0, Parse({"--subnqn", "n2", "--queues", "4"}, &h, &own));
	EXPECT_STREQ("n2", h.subnqn);
	EXPECT_EQ(4u, h.queues);
}

TEST(HostArgs, DhchapSecretsReachTheLibrary)
{
	host_args h;
	Own own;
	wharf_nvmf_host_opts o{};

	ASSERT_EQ(0, Parse({"-S", kSecret, "--dhchap-ctrl-secret", kSecret2},
			   &h, &own));
	host_args_apply(&h, &o);
	EXPECT_STREQ(kSecret, o.dhchap_secret);
	EXPECT_STREQ(kSecret2, o.dhchap_ctrl_secret);
}

TEST(HostArgs, DefaultsLeaveTheLibrarysOwn)
{
	host_args h;
	Own own;
	wharf_nvmf_host_opts o{};

	ASSERT_EQ(0, Parse({}, &h, &own));
	EXPECT_STREQ("4420", h.trsvcid);
	EXPECT_EQ(1u, h.nsid);
	EXPECT_FALSE(h.has_hostid);
	host_args_apply(&h, &o);
	EXPECT_EQ(nullptr, o.hostid);
	EXPECT_EQ(nullptr, o.hostnqn);
	EXPECT_EQ(0u, o.kato_ms);
	EXPECT_EQ(nullptr, o.dhchap_secret);
	EXPECT_EQ(0u, o.reconnect_delay_ms);
	EXPECT_EQ(0u, o.ctrl_loss_tmo_ms);
	EXPECT_EQ(0u, o.fast_io_fail_tmo_ms);
	EXPECT_EQ(0u, o.nr_io_queues);
}

TEST(HostArgs, SecondsAsNvmeCliTakesThem)
{
	host_args h;
	Own own;
	wharf_nvmf_host_opts o{};

	// 600 is ten minutes (it was 0.6 s when perf took milliseconds).
	ASSERT_EQ(0, Parse({"--ctrl-loss-tmo", "600"}, &h, &own));
	EXPECT_EQ(600000u, h.ctrl_loss_tmo_ms);
	// Decimals down to the millisecond.
	ASSERT_EQ(0, Parse({"-c", "0.3", "-l", "2.25", "--fast_io_fail_tmo",
			    "1.005"},
			   &h, &own));
	EXPECT_EQ(300u, h.reconnect_delay_ms);
	EXPECT_EQ(2250u, h.ctrl_loss_tmo_ms);
	EXPECT_EQ(1005u, h.fast_io_fail_tmo_ms);
	// -1: forever / never; 0 the default, as nvme-cli leaves it out.
	ASSERT_EQ(0, Parse({"-l", "-1", "-F", "0.001", "-k", "0"}, &h, &own));
	host_args_apply(&h, &o);
	EXPECT_EQ(WHARF_NVMF_HOST_TMO_INFINITE, o.ctrl_loss_tmo_ms);
	EXPECT_EQ(1u, o.fast_io_fail_tmo_ms);
	EXPECT_EQ(0u, o.kato_ms);
	EXPECT_FALSE(o.no_keep_alive);
	ASSERT_EQ(0, Parse({"-l", "0", "--fast_io_fail_tmo", "-1", "-c", "0"},
			   &h, &own));
	host_args_apply(&h, &o);
	EXPECT_EQ(0u, o.ctrl_loss_tmo_ms) << "the default, not at once";
	EXPECT_EQ(0u, o.fast_io_fail_tmo_ms) << "0 is the library's never";
	EXPECT_EQ(0u, o.reconnect_delay_ms);
}

TEST(HostArgs, BadValuesNameTheOption)
{
	host_args h;
	Own own;
	std::string err;

	for (const auto &bad : std::vector<std::vector<std::string>>{
		     {"-c", "-1"},	   // only the timeouts take -1
		     {"-k", "-1"},	   //
		     {"-l", "-2"},	   //
		     {"-l", "0.0001"},	   // below a millisecond
		     {"-l", ".5"},	   //
		     {"-l", "5."},	   //
		     {"-l", "2592001"},	   // above 30 days
		     {"-l", "1e3"},	   //
		     {"-l", ""},	   //
		     {"-s", "65536"},	   //
		     {"--nsid", "0"},	   //
		     {"-i", "0"},	   //
		     {"-I", "not-a-uuid"}, //
		     {"-I", "1b4e28ba2fa111d2883f0016d3cca427"}, // no dashes
		     {"-I", std::string(kUuid) + "0"}, // one digit more
		     {"--hostid", "1b4e28ba-2fa1-11d2-883f-0016d3cca42g"},
		     {"-S", "secret"}, //
		     {"--dhchap-ctrl-secret", "DHHC-1:00:AAAA:"},
	     }) {
		EXPECT_EQ(-EINVAL, Parse(bad, &h, &own, &err))
			<< bad[0] << " " << bad[1];
		EXPECT_NE(std::string::npos, err.find("bad value")) << err;
	}
	EXPECT_EQ(-EINVAL, Parse({"-l", "-2"}, &h, &own, &err));
	EXPECT_EQ("--ctrl-loss-tmo: bad value '-2'", err);
	EXPECT_EQ(-EINVAL,
		  Parse({"-S", "DHHC-1:00:c2VjcmV0:"}, &h, &own, &err));
	EXPECT_EQ("--dhchap-secret: bad value (not shown)", err);
	EXPECT_EQ(-EINVAL, Parse({"-C", kSecret}, &h, &own, &err));
	EXPECT_EQ("--dhchap-ctrl-secret needs --dhchap-secret", err);
	EXPECT_EQ(-EINVAL, Parse({"-Z"}, &h, &own, &err));
	EXPECT_EQ(-EINVAL, Parse({"-n"}, &h, &own, &err));
	EXPECT_NE(std::string::npos, err.find("missing value")) << err;
}

TEST(HostId, UuidText)
{
	uint8_t b[16];

	ASSERT_EQ(0, nvme_uuid_parse(kUuid, b));
	EXPECT_EQ(0, memcmp(kUuidBytes, b, 16));
	ASSERT_EQ(0,
		  nvme_uuid_parse("1B4E28BA-2FA1-11D2-883F-0016D3CCA427", b));
	EXPECT_EQ(0, memcmp(kUuidBytes, b, 16)) << "either case";
	memset(b, 0xee, sizeof(b));
	EXPECT_EQ(-EINVAL, nvme_uuid_parse("", b));
	EXPECT_EQ(-EINVAL, nvme_uuid_parse("1b4e28ba-2fa1-11d2-883f", b));
	EXPECT_EQ(-EINVAL,
		  nvme_uuid_parse("1b4e28ba-2fa1-11d2-883f-0016d3cca427 ", b));
	EXPECT_EQ(-EINVAL,
		  nvme_uuid_parse("1b4e28ba+2fa1-11d2-883f-0016d3cca427", b));
	EXPECT_EQ(0xee, b[0]) << "untouched on failure";
}

TEST(HostId, FromNqnAndTheDefaultOrder)
{
	const std::string nqn = std::string(NVME_NQN_UUID_PREFIX) + kUuid;
	const char other[] = "00000000-0000-0000-0000-0000000000aa";
	const std::string other_nqn = std::string(NVME_NQN_UUID_PREFIX) + other;
	uint8_t b[16];

	ASSERT_EQ(0, nvme_hostid_from_nqn(nqn.c_str(), b));
	EXPECT_EQ(0, memcmp(kUuidBytes, b, 16));
	EXPECT_EQ(-EINVAL, nvme_hostid_from_nqn("nqn.2024-01.io.wharf:h", b));
	EXPECT_EQ(-EINVAL,
		  nvme_hostid_from_nqn("nqn.2014-08.org.nvmexpress:uuid:1", b));

	// /etc/nvme/hostid first, as libnvme reads it.
	ASSERT_EQ(0, nvme_hostid_default(other_nqn.c_str(), kUuid,
					 other_nqn.c_str(), b));
	EXPECT_EQ(0, memcmp(kUuidBytes, b, 16));
	ASSERT_EQ(0, nvme_hostid_default(nullptr, kUuid, other_nqn.c_str(), b));
	EXPECT_EQ(0, memcmp(kUuidBytes, b, 16));
	// Without it (or unreadable), the UUID of the host NQN in use: the
	// one named, else /etc/nvme/hostnqn's.
	ASSERT_EQ(0, nvme_hostid_default(nqn.c_str(), "garbage",
					 other_nqn.c_str(), b));
	EXPECT_EQ(0, memcmp(kUuidBytes, b, 16));
	ASSERT_EQ(0, nvme_hostid_default(nullptr, nullptr, nqn.c_str(), b));
	EXPECT_EQ(0, memcmp(kUuidBytes, b, 16));
	memset(b, 0xee, sizeof(b));
	EXPECT_EQ(-ENOENT, nvme_hostid_default("nqn.2024-01.io.wharf:h",
					       nullptr, nqn.c_str(), b));
	EXPECT_EQ(-ENOENT, nvme_hostid_default(nullptr, nullptr, nullptr, b));
	EXPECT_EQ(0xee, b[0]);
}

} // namespace
