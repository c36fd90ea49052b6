// The host's side of DH-HMAC-CHAP (nvmf_host/auth.h) against the
// target's (targets/nvmf/auth.h), message by message as Authentication
// Send and Receive carry them: every hash with the null group and with
// an FFDHE group, bidirectional, a wrong host secret (Failure1), a wrong
// controller secret (the host's Failure2), and a controller that breaks
// the protocol.  That the two agree with the Linux host and nvmet is the
// guest tests' to show; that the computations are the kernel's,
// nvme_auth_test's.
#include <errno.h>
#include <string.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "nvmf_host/auth.h"
#include "proto/nvme/auth.h"
#include "targets/nvmf/auth.h"
}

namespace
{

const char kHost[] = "nqn.2014-08.org.nvmexpress:uuid:"
		     "5a0c1c4e-0000-4000-8000-000000000002";
const char kSub[] = "nqn.2024-01.io.wharf:hostauth";

nvme_auth_key MakeKey(uint8_t fill, uint8_t len, uint8_t hash)
{
	nvme_auth_key k = {};
	k.hash = hash;
	k.len = len;
	memset(k.key, fill, len);
	return k;
}

struct Pair {
	nvmf_auth_cfg cfg{};
	nvmf_auth tgt{};
	wnh_auth host{};
	nvme_auth_key host_key{}, host_ctrl_key{};
	bool bidi = false;
	uint32_t s1 = 7;
	std::vector<uint8_t> out = std::vector<uint8_t>(WNH_AUTH_MAX_MSG);
	std::vector<uint8_t> in = std::vector<uint8_t>(WNH_AUTH_RECV_LEN);
	int sends = 0;

	// The target knows @tk (and @tck: bidirectional allowed) and wants
	// @hash / @dh; the host has @hk and, when @bidi, @hck.
	Pair(const nvme_auth_key &tk, const nvme_auth_key *tck, uint8_t hash,
	     uint8_t dh, const nvme_auth_key &hk, const nvme_auth_key *hck)
	{
		nvmf_auth_cfg_init(&cfg);
		cfg.key = tk;
		if (tck) {
			cfg.has_ctrl_key = true;
			cfg.ctrl_key = *tck;
		}
		cfg.hash = hash;
		cfg.dhgroup = dh;
		nvmf_auth_init(&tgt, &cfg, kHost, kSub);
		host_key = hk;
		bidi = hck != nullptr;
		if (hck)
			host_ctrl_key = *hck;
		wnh_auth_init(&host, &host_key, bidi ? &host_ctrl_key : nullptr,
			      kHost, kSub, 0x1234);
	}
	~Pair()
	{
		nvmf_auth_clear(&tgt);
		wnh_auth_clear(&host);
	}

	// Runs the host's steps, each message sent to the target and each
	// Receive answered by it, until the host is done or failed.
	wnh_auth_next Run()
	{
		size_t len = 0;
		wnh_auth_next next =
			wnh_auth_step(&host, nullptr, 0, out.data(), &len);
		for (int guard = 0; guard < 8; guard++) {
			if (len) {
				sends++;
				EXPECT_EQ(0, nvmf_auth_send(&tgt, out.data(),
							    len, s1));
			}
			if (next != WNH_AUTH_NEXT_RECV)
				return next;
			size_t got = 0;
			std::fill(in.begin(), in.end(), 0);
			EXPECT_EQ(0, nvmf_auth_recv(&tgt, in.data(), in.size(),
						    &got));
			next = wnh_auth_step(&host, in.data(), in.size(),
					     out.data(), &len);
		}
		ADD_FAILURE() << "no end";
		return WNH_AUTH_NEXT_FAIL;
	}
};

TEST(NvmfHostAuth, EveryHashWithAndWithoutDh)
{
	for (uint8_t hash : {NVME_AUTH_HASH_SHA256, NVME_AUTH_HASH_SHA384,
			     NVME_AUTH_HASH_SHA512})
		for (uint8_t dh :
		     {NVME_AUTH_DHGROUP_NULL, NVME_AUTH_DHGROUP_2048}) {
			nvme_auth_key k = MakeKey(0x31, 32, 1);
			Pair p(k, nullptr, hash, dh, k, nullptr);
			EXPECT_EQ(WNH_AUTH_NEXT_DONE, p.Run())
				<< int(hash) << "/" << int(dh);
			EXPECT_EQ(WNH_AUTH_DONE, p.host.state);
			EXPECT_EQ(hash, p.host.hash);
			EXPECT_EQ(dh, p.host.dhgid);
			EXPECT_EQ(NVMF_AUTH_DONE, p.tgt.state);
			EXPECT_TRUE(p.tgt.authenticated);
			EXPECT_FALSE(p.tgt.bidi);
			// Negotiate and Reply; no Success2 one way.
			EXPECT_EQ(2, p.sends);
		}
}

TEST(NvmfHostAuth, BidirectionalChecksTheController)
{
	nvme_auth_key hk = MakeKey(0x41, 48, 2), ck = MakeKey(0x42, 64, 3);
	Pair p(hk, &ck, NVME_AUTH_HASH_SHA384, NVME_AUTH_DHGROUP_3072, hk, &ck);
	EXPECT_EQ(WNH_AUTH_NEXT_DONE, p.Run());
	EXPECT_TRUE(p.host.bidi);
	EXPECT_TRUE(p.tgt.bidi);
	EXPECT_EQ(NVMF_AUTH_DONE, p.tgt.state) << "Success2 reached it";
	EXPECT_EQ(3, p.sends);
}

TEST(NvmfHostAuth, AWrongHostSecretIsRefusedWithFailure1)
{
	nvme_auth_key tk = MakeKey(0x51, 32, 0), hk = MakeKey(0x52, 32, 0);
	Pair p(tk, nullptr, NVME_AUTH_HASH_SHA256, NVME_AUTH_DHGROUP_NULL, hk,
	       nullptr);
	EXPECT_EQ(WNH_AUTH_NEXT_FAIL, p.Run());
	EXPECT_EQ(WNH_AUTH_FAILED, p.host.state);
	EXPECT_EQ(-EKEYREJECTED, p.host.error);
	EXPECT_EQ(NVME_AUTH_RCE_FAILED, p.host.peer_exp);
	EXPECT_FALSE(p.tgt.authenticated);
	EXPECT_STREQ("authentication failed",
		     wnh_auth_rce_str(p.host.peer_exp));
}

TEST(NvmfHostAuth, AWrongControllerSecretIsRefusedWithFailure2)
{
	nvme_auth_key hk = MakeKey(0x61, 32, 1), ck = MakeKey(0x62, 32, 1),
		      other = MakeKey(0x63, 32, 1);
	Pair p(hk, &ck, NVME_AUTH_HASH_SHA256, NVME_AUTH_DHGROUP_NULL, hk,
	       &other);
	EXPECT_EQ(WNH_AUTH_NEXT_FAIL, p.Run());
	EXPECT_EQ(-EKEYREJECTED, p.host.error);
	EXPECT_EQ(NVME_AUTH_RCE_FAILED, p.host.fail_exp);
	EXPECT_EQ(0, p.host.peer_exp);
	// The Failure2 went out and ended the target's side too.
	EXPECT_EQ(NVMF_AUTH_FAILED, p.tgt.state);
}

TEST(NvmfHostAuth, AControllerThatBreaksTheProtocol)
{
	nvme_auth_key k = MakeKey(0x71, 32, 1);
	std::vector<uint8_t> out(WNH_AUTH_MAX_MSG), in(WNH_AUTH_RECV_LEN);
	nvmf_auth_cfg cfg;
	nvmf_auth tgt;
	size_t len = 0, got = 0;

	nvmf_auth_cfg_init(&cfg);
	cfg.key = k;
	struct Case {
		const char *what;
		void (*mangle)(uint8_t *msg);
		uint8_t exp;
	};
	const Case cases[] = {
		{"another transaction", [](uint8_t *m) { m[4] ^= 0xff; },
		 NVME_AUTH_RCE_INCORRECT_PAYLOAD},
		{"a hash not offered", [](uint8_t *m) { m[8] = 0x09; },
		 NVME_AUTH_RCE_HASH_UNUSABLE},
		{"a DH group not offered", [](uint8_t *m) { m[9] = 0x07; },
		 NVME_AUTH_RCE_DHGROUP_UNUSABLE},
		{"a public value for the null group",
		 [](uint8_t *m) { m[10] = 1; },
		 NVME_AUTH_RCE_INCORRECT_PAYLOAD},
		{"Success1 instead of the Challenge",
		 [](uint8_t *m) { m[1] = NVME_AUTH_MSG_SUCCESS1; },
		 NVME_AUTH_RCE_INCORRECT_MESSAGE},
		{"a message of another type", [](uint8_t *m) { m[0] = 0x07; },
		 NVME_AUTH_RCE_INCORRECT_MESSAGE},
	};
	for (const Case &c : cases) {
		wnh_auth host;
		wnh_auth_init(&host, &k, nullptr, kHost, kSub, 9);
		nvmf_auth_init(&tgt, &cfg, kHost, kSub);
		ASSERT_EQ(WNH_AUTH_NEXT_RECV,
			  wnh_auth_step(&host, nullptr, 0, out.data(), &len));
		ASSERT_EQ(0, nvmf_auth_send(&tgt, out.data(), len, 3));
		std::fill(in.begin(), in.end(), 0);
		ASSERT_EQ(0, nvmf_auth_recv(&tgt, in.data(), in.size(), &got));
		c.mangle(in.data());
		EXPECT_EQ(WNH_AUTH_NEXT_FAIL,
			  wnh_auth_step(&host, in.data(), in.size(), out.data(),
					&len))
			<< c.what;
		EXPECT_EQ(-EPROTO, host.error) << c.what;
		EXPECT_EQ(c.exp, host.fail_exp) << c.what;
		// The Failure2 to send names the reason.
		ASSERT_EQ(sizeof(nvme_auth_failure), len) << c.what;
		EXPECT_EQ(NVME_AUTH_TYPE_COMMON, out[0]);
		EXPECT_EQ(NVME_AUTH_MSG_FAILURE2, out[1]);
		EXPECT_EQ(c.exp, out[7]) << c.what;
		EXPECT_EQ(0, nvmf_auth_send(&tgt, out.data(), len, 3));
		EXPECT_EQ(NVMF_AUTH_FAILED, tgt.state) << c.what;
		// Nothing moves a failed transaction again.
		EXPECT_EQ(WNH_AUTH_NEXT_FAIL,
			  wnh_auth_step(&host, in.data(), in.size(), out.data(),
					&len));
		EXPECT_EQ(0u, len);
		nvmf_auth_clear(&tgt);
	}
}

TEST(NvmfHostAuth, TheNegotiateOffersWhatTheLinuxHostOffers)
{
	nvme_auth_key k = MakeKey(0x81, 32, 0);
	wnh_auth host;
	std::vector<uint8_t> out(WNH_AUTH_MAX_MSG);
	size_t len = 0;

	wnh_auth_init(&host, &k, nullptr, kHost, kSub, 0x55aa);
	ASSERT_EQ(WNH_AUTH_NEXT_RECV,
		  wnh_auth_step(&host, nullptr, 0, out.data(), &len));
	ASSERT_EQ(sizeof(nvme_auth_negotiate) + sizeof(nvme_auth_dhchap_desc),
		  len);
	nvme_auth_negotiate n;
	nvme_auth_dhchap_desc d;
	memcpy(&n, out.data(), sizeof(n));
	memcpy(&d, out.data() + sizeof(n), sizeof(d));
	EXPECT_EQ(0x55aa, n.t_id);
	EXPECT_EQ(NVME_AUTH_SC_NONE, n.sc_c);
	EXPECT_EQ(1, n.napd);
	EXPECT_EQ(NVME_AUTH_ID_DHCHAP, d.authid);
	ASSERT_EQ(3, d.halen);
	EXPECT_EQ(NVME_AUTH_HASH_SHA256, d.hash_ids[0]);
	EXPECT_EQ(NVME_AUTH_HASH_SHA512, d.hash_ids[2]);
	ASSERT_EQ(6, d.dhlen);
	EXPECT_EQ(NVME_AUTH_DHGROUP_NULL, d.dh_ids[0]);
	EXPECT_EQ(NVME_AUTH_DHGROUP_8192, d.dh_ids[5]);
	// A Receive before anything was sent is not a step the host takes.
	wnh_auth other;
	wnh_auth_init(&other, &k, nullptr, kHost, kSub, 1);
	EXPECT_EQ(WNH_AUTH_NEXT_FAIL,
		  wnh_auth_step(&other, out.data(), len, out.data(), &len));
	EXPECT_EQ(-EPROTO, other.error);
}

} // namespace
