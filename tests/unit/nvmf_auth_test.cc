// NVMe in-band authentication on the target's core: a host with a
// DH-HMAC-CHAP secret gets AUTHREQ.ATR in its Connect response, nothing
// but Authentication Send / Receive runs until it authenticates, and the
// exchange is driven here as a host would drive it, with proto/nvme/auth's
// computations (themselves checked against independent values in
// nvme_auth_test): unidirectional with the null group, bidirectional
// with SHA-384 and ffdhe2048, a wrong secret, protocol errors, an I/O
// queue, and the secrets in the configuration and save_config.
#include <errno.h>

#include <string>
#include <vector>

#include "tests/unit/nvmf_test_util.h"

extern "C" {
#include "proto/nvme/auth.h"
#include "targets/nvmf/auth.h"
}

namespace
{

using namespace nvmf_test;

const char kAuthSub[] = "nqn.2024-01.io.wharf:auth";
const char kAuthHost[] = "nqn.2014-08.org.nvmexpress:uuid:"
			 "5a0c1c4e-0000-4000-8000-000000000001";

// A DHHC-1 secret: @len bytes of @fill, transform @hash.
std::string Secret(uint8_t fill, uint8_t len = 32, uint8_t hash = 0)
{
	nvme_auth_key k = {};
	char text[NVME_AUTH_KEY_TEXT_MAX];
	k.hash = hash;
	k.len = len;
	memset(k.key, fill, len);
	EXPECT_GT(nvme_auth_key_format(&k, text, sizeof(text)), 0);
	return text;
}

nvme_auth_key Key(const std::string &text)
{
	nvme_auth_key k = {};
	EXPECT_EQ(0, nvme_auth_key_parse(text.c_str(), &k));
	return k;
}

class NvmfAuth : public NvmfTest
{
      protected:
	std::string host_key_ = Secret(0x11, 32, 1);
	std::string ctrl_key_ = Secret(0x22, 48, 2);

	void SetUp() override
	{
		Create(std::string("listen 198.18.0.1 4420\n"
				   "subsystem ") +
		       kAuthSub + "\n  namespace 1 ram:1M\n  allow-host " +
		       kAuthHost + " dhchap-key=" + host_key_ +
		       "\n  allow-host " + kHost + "\nsubsystem " + kOther +
		       "\n  namespace 1 ram:64K\n  allow-host " + kAuthHost +
		       " dhchap-key=" + host_key_ +
		       " dhchap-ctrl-key=" + ctrl_key_ +
		       " dhchap-hash=sha384 dhchap-dhgroup=ffdhe2048\n");
	}

	nvmf_req AuthSend(nvmf_queue *q, const std::vector<uint8_t> &msg,
			  uint8_t secp = NVME_AUTH_SECP)
	{
		Capsule c = Fabrics(NVME_FCTYPE_AUTH_SEND, 21);
		nvme_auth_cmd a;
		memcpy(&a, &c.sqe, sizeof(a));
		a.secp = secp;
		a.spsp0 = NVME_AUTH_SPSP0;
		a.spsp1 = NVME_AUTH_SPSP1;
		a.tl_al = (uint32_t)msg.size();
		memcpy(&c.sqe, &a, sizeof(a));
		SetKeyed(&c.sqe, msg.data(), (uint32_t)msg.size());
		return Exec(q, c);
	}

	std::vector<uint8_t> AuthRecv(nvmf_queue *q, nvmf_req *out,
				      uint32_t al = 4096)
	{
		std::vector<uint8_t> buf(al, 0xEE);
		Capsule c = Fabrics(NVME_FCTYPE_AUTH_RECV, 22);
		nvme_auth_cmd a;
		memcpy(&a, &c.sqe, sizeof(a));
		a.secp = NVME_AUTH_SECP;
		a.spsp0 = NVME_AUTH_SPSP0;
		a.spsp1 = NVME_AUTH_SPSP1;
		a.tl_al = al;
		memcpy(&c.sqe, &a, sizeof(a));
		SetKeyed(&c.sqe, buf.data(), al);
		*out = Exec(q, c);
		return buf;
	}

	// AUTH_Negotiate offering every hash and @groups.
	static std::vector<uint8_t> Negotiate(uint16_t tid,
					      std::vector<uint8_t> groups)
	{
		nvme_auth_negotiate n = {};
		nvme_auth_dhchap_desc d = {};
		n.auth_type = NVME_AUTH_TYPE_COMMON;
		n.auth_id = NVME_AUTH_MSG_NEGOTIATE;
		n.t_id = tid;
		n.napd = 1;
		d.authid = NVME_AUTH_ID_DHCHAP;
		d.halen = 3;
		d.hash_ids[0] = NVME_AUTH_HASH_SHA256;
		d.hash_ids[1] = NVME_AUTH_HASH_SHA384;
		d.hash_ids[2] = NVME_AUTH_HASH_SHA512;
		d.dhlen = (uint8_t)groups.size();
		memcpy(d.dh_ids, groups.data(), groups.size());
		std::vector<uint8_t> m(sizeof(n) + sizeof(d));
		memcpy(m.data(), &n, sizeof(n));
		memcpy(m.data() + sizeof(n), &d, sizeof(d));
		return m;
	}

	struct Outcome {
		nvme_auth_success1 s1 = {};
		std::vector<uint8_t> r2;
		bool r2_ok = false;
		nvme_auth_failure failure = {};
		bool failed = false;
		nvmf_req last = {};
	};

	// A whole transaction as the Linux host runs it, with @key; asks for
	// bidirectional authentication with @ctrl_key when given.
	Outcome Authenticate(nvmf_queue *q, const char *subnqn,
			     const std::string &key,
			     const std::string &ctrl_key = "")
	{
		Outcome o;
		nvmf_req r = AuthSend(q, Negotiate(7, {0, 1, 2, 3, 4, 5}));
		EXPECT_EQ(0, Status(r));
		std::vector<uint8_t> ch = AuthRecv(q, &r);
		EXPECT_EQ(0, Status(r));
		nvme_auth_challenge c;
		memcpy(&c, ch.data(), sizeof(c));
		if (c.auth_id == NVME_AUTH_MSG_FAILURE1) {
			memcpy(&o.failure, ch.data(), sizeof(o.failure));
			o.failed = true;
			o.last = r;
			return o;
		}
		EXPECT_EQ(NVME_AUTH_MSG_CHALLENGE, c.auth_id);
		EXPECT_EQ(7, c.t_id);
		EXPECT_NE(0u, c.seqnum);
		size_t hl = nvme_auth_hash_len(c.hashid);
		EXPECT_EQ(hl, c.hl);
		const uint8_t *c1 = ch.data() + sizeof(c);
		std::vector<uint8_t> skey, pub;
		nvme_auth_xchg x = {};
		x.hash_id = c.hashid;
		x.t_id = 7;
		x.hostnqn = kAuthHost;
		x.subsysnqn = subnqn;
		if (c.dhvlen) {
			nvme_auth_dh *dh = nullptr;
			EXPECT_EQ(0, nvme_auth_dh_generate(c.dhgid, &dh));
			skey.resize(c.dhvlen);
			pub.resize(c.dhvlen);
			EXPECT_EQ(0, nvme_auth_dh_public(dh, pub.data(),
							 pub.size()));
			EXPECT_EQ(0, nvme_auth_dh_shared(dh, c1 + hl, c.dhvlen,
							 skey.data(),
							 skey.size()));
			nvme_auth_dh_free(dh);
			x.skey = skey.data();
			x.skey_len = skey.size();
		}
		nvme_auth_key hk = Key(key);
		uint8_t r1[64], c2[64];
		EXPECT_EQ(0,
			  nvme_auth_host_response(&hk, &x, c1, c.seqnum, r1));
		memset(c2, 0x5C, sizeof(c2));
		nvme_auth_reply rp = {};
		rp.auth_type = NVME_AUTH_TYPE_DHCHAP;
		rp.auth_id = NVME_AUTH_MSG_REPLY;
		rp.t_id = 7;
		rp.hl = (uint8_t)hl;
		rp.cvalid = !ctrl_key.empty();
		rp.dhvlen = c.dhvlen;
		rp.seqnum = 4242;
		std::vector<uint8_t> m(sizeof(rp) + 2 * hl + c.dhvlen);
		memcpy(m.data(), &rp, sizeof(rp));
		memcpy(m.data() + sizeof(rp), r1, hl);
		if (rp.cvalid)
			memcpy(m.data() + sizeof(rp) + hl, c2, hl);
		if (c.dhvlen)
			memcpy(m.data() + sizeof(rp) + 2 * hl, pub.data(),
			       pub.size());
		r = AuthSend(q, m);
		EXPECT_EQ(0, Status(r));
		std::vector<uint8_t> s = AuthRecv(q, &r);
		o.last = r;
		if (s[1] == NVME_AUTH_MSG_FAILURE1) {
			memcpy(&o.failure, s.data(), sizeof(o.failure));
			o.failed = true;
			return o;
		}
		memcpy(&o.s1, s.data(), sizeof(o.s1));
		EXPECT_EQ(NVME_AUTH_MSG_SUCCESS1, o.s1.auth_id);
		o.r2.assign(s.begin() + sizeof(o.s1),
			    s.begin() + sizeof(o.s1) + hl);
		if (rp.cvalid) {
			nvme_auth_key ck = Key(ctrl_key);
			uint8_t want[64];
			EXPECT_EQ(0, nvme_auth_ctrl_response(&ck, &x, c2, 4242,
							     want));
			o.r2_ok = !memcmp(want, o.r2.data(), hl);
			nvme_auth_success2 s2 = {};
			s2.auth_type = NVME_AUTH_TYPE_DHCHAP;
			s2.auth_id = NVME_AUTH_MSG_SUCCESS2;
			s2.t_id = 7;
			std::vector<uint8_t> m2(sizeof(s2));
			memcpy(m2.data(), &s2, sizeof(s2));
			o.last = AuthSend(q, m2);
		}
		return o;
	}
};

TEST_F(NvmfAuth, AHostWithASecretAuthenticatesBeforeAnythingElse)
{
	nvmf_queue *q = NewQueue(0, 32);
	nvmf_req r =
		Connect(q, 0, 31, kAuthSub, kAuthHost, NVME_CNTLID_DYNAMIC);
	ASSERT_EQ(0, Status(r));
	EXPECT_TRUE(r.rsp.result & NVME_CONNECT_AUTHREQ_ATR);
	// Nothing else runs before the transaction: Authentication Required.
	r = PropGet(q, NVME_PROP_CAP, NVME_PROP_SIZE_8);
	EXPECT_EQ(NVME_SCT_CMD, Sct(r));
	EXPECT_EQ(NVME_SC_AUTH_REQUIRED, Sc(r));
	EXPECT_TRUE(Dnr(r));
	Outcome o = Authenticate(q, kAuthSub, host_key_);
	ASSERT_FALSE(o.failed) << (int)o.failure.rescode_exp;
	EXPECT_EQ(0, o.s1.rvalid);
	EXPECT_EQ(std::vector<uint8_t>(32, 0), o.r2); // R2 zero, SHA-256
	EXPECT_FALSE(o.last.close_after);
	EXPECT_EQ(0, Status(PropSet(q, NVME_PROP_CC, CcEnable())));
	EXPECT_EQ(1u, Stats().auth_ok);
	EXPECT_EQ(0u, Stats().auth_failed);
	// Its I/O queues authenticate too.
	uint16_t cntlid = nvmf_queue_cntlid(q);
	nvmf_queue *io = NewQueue(1, 32);
	r = Connect(io, 1, 31, kAuthSub, kAuthHost, cntlid);
	ASSERT_EQ(0, Status(r));
	EXPECT_TRUE(r.rsp.result & NVME_CONNECT_AUTHREQ_ATR);
	EXPECT_EQ(cntlid, r.rsp.result & 0xFFFF);
	ASSERT_FALSE(Authenticate(io, kAuthSub, host_key_).failed);
	EXPECT_EQ(2u, Stats().auth_ok);
	// A host without a secret here connects as before.
	nvmf_queue *plain = NewQueue(0, 32);
	r = Connect(plain, 0, 31, kAuthSub, kHost, NVME_CNTLID_DYNAMIC);
	ASSERT_EQ(0, Status(r));
	EXPECT_FALSE(r.rsp.result & NVME_CONNECT_AUTHREQ_ATR);
	EXPECT_EQ(0, Status(PropSet(plain, NVME_PROP_CC, CcEnable())));
	// and cannot start a transaction it has no secret for.
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(AuthSend(plain, Negotiate(1, {0}))));
}

TEST_F(NvmfAuth, BidirectionalWithFfdheAndSha384)
{
	nvmf_queue *q = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q, 0, 31, kOther, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	Outcome o = Authenticate(q, kOther, host_key_, ctrl_key_);
	ASSERT_FALSE(o.failed) << (int)o.failure.rescode_exp;
	EXPECT_EQ(1, o.s1.rvalid);
	EXPECT_EQ(48u, o.r2.size()); // SHA-384, the configured hash
	EXPECT_TRUE(o.r2_ok) << "R2 is not the controller's response";
	EXPECT_EQ(0, Status(o.last)); // Success2 taken
	EXPECT_EQ(0, Status(PropSet(q, NVME_PROP_CC, CcEnable())));
	EXPECT_EQ(1u, Stats().auth_ok);
}

TEST_F(NvmfAuth, AWrongSecretEndsInFailure1AndTheQueueCloses)
{
	nvmf_queue *q = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q, 0, 31, kAuthSub, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	Outcome o = Authenticate(q, kAuthSub, Secret(0x12, 32, 1));
	ASSERT_TRUE(o.failed);
	EXPECT_EQ(NVME_AUTH_RC_FAILED, o.failure.rescode);
	EXPECT_EQ(NVME_AUTH_RCE_FAILED, o.failure.rescode_exp);
	EXPECT_TRUE(o.last.close_after);
	EXPECT_EQ(NVME_SC_AUTH_REQUIRED,
		  Sc(PropGet(q, NVME_PROP_CAP, NVME_PROP_SIZE_8)));
	EXPECT_EQ(1u, Stats().auth_failed);
	EXPECT_EQ(0u, Stats().auth_ok);
	// A host asking for bidirectional authentication where it has no
	// controller key is refused too.
	nvmf_queue *q2 = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q2, 0, 31, kAuthSub, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	o = Authenticate(q2, kAuthSub, host_key_, ctrl_key_);
	ASSERT_TRUE(o.failed);
	EXPECT_EQ(NVME_AUTH_RCE_FAILED, o.failure.rescode_exp);
}

TEST_F(NvmfAuth, ProtocolErrorsAnswerWithTheirReason)
{
	nvmf_queue *q = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q, 0, 31, kOther, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	nvmf_req r;
	// Not DH-HMAC-CHAP's security protocol: Invalid Field.
	r = AuthSend(q, Negotiate(1, {1}), 0xEA);
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(r));
	// A message shorter than any header: Invalid Field.
	r = AuthSend(q, std::vector<uint8_t>(4, 0));
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(r));
	// The configured group (ffdhe2048) not offered.
	ASSERT_EQ(0, Status(AuthSend(q, Negotiate(2, {0, 3}))));
	std::vector<uint8_t> f = AuthRecv(q, &r);
	EXPECT_EQ(NVME_AUTH_MSG_FAILURE1, f[1]);
	EXPECT_EQ(NVME_AUTH_RCE_DHGROUP_UNUSABLE, f[7]);
	EXPECT_TRUE(r.close_after);
	// A Reply before any Negotiate: incorrect protocol message.
	nvmf_queue *q2 = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q2, 0, 31, kOther, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	std::vector<uint8_t> reply(16 + 2 * 48 + 256, 0);
	reply[0] = NVME_AUTH_TYPE_DHCHAP;
	reply[1] = NVME_AUTH_MSG_REPLY;
	ASSERT_EQ(0, Status(AuthSend(q2, reply)));
	f = AuthRecv(q2, &r);
	EXPECT_EQ(NVME_AUTH_MSG_FAILURE1, f[1]);
	EXPECT_EQ(NVME_AUTH_RCE_INCORRECT_MESSAGE, f[7]);
	// An allocation length the Challenge does not fit: Invalid Field,
	// and the transaction goes on.
	nvmf_queue *q3 = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q3, 0, 31, kOther, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	ASSERT_EQ(0, Status(AuthSend(q3, Negotiate(3, {1}))));
	AuthRecv(q3, &r, 64);
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(r));
	std::vector<uint8_t> ch = AuthRecv(q3, &r);
	EXPECT_EQ(0, Status(r));
	EXPECT_EQ(NVME_AUTH_MSG_CHALLENGE, ch[1]);
	// The host giving up (Failure2) closes the queue.
	nvme_auth_failure f2 = {};
	f2.auth_type = NVME_AUTH_TYPE_COMMON;
	f2.auth_id = NVME_AUTH_MSG_FAILURE2;
	f2.t_id = 3;
	std::vector<uint8_t> m(sizeof(f2));
	memcpy(m.data(), &f2, sizeof(f2));
	r = AuthSend(q3, m);
	EXPECT_EQ(0, Status(r));
	EXPECT_TRUE(r.close_after);
	EXPECT_EQ(3u, Stats().auth_failed);
}

TEST_F(NvmfAuth, AFailureIsFinalAndAttemptsAreCapped)
{
	nvmf_queue *q = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q, 0, 31, kAuthSub, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	ASSERT_TRUE(Authenticate(q, kAuthSub, Secret(0x12, 32, 1)).failed);
	// Nothing brings a failed queue back: not a new transaction with the
	// right secret.
	nvmf_req r = AuthSend(q, Negotiate(8, {0}));
	EXPECT_EQ(0, Status(r));
	EXPECT_TRUE(r.close_after);
	std::vector<uint8_t> f = AuthRecv(q, &r);
	EXPECT_EQ(NVME_AUTH_MSG_FAILURE1, f[1]);
	EXPECT_EQ(NVME_SC_AUTH_REQUIRED,
		  Sc(PropGet(q, NVME_PROP_CAP, NVME_PROP_SIZE_8)));
	EXPECT_EQ(1u, Stats().auth_failed);
	// Three transactions may start before one succeeds; the fourth
	// closes the queue (each one costs the shard a DH key pair).
	nvmf_queue *q2 = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q2, 0, 31, kOther, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	for (int i = 0; i < NVMF_AUTH_MAX_ATTEMPTS; i++) {
		r = AuthSend(q2, Negotiate((uint16_t)i, {1}));
		EXPECT_FALSE(r.close_after) << i;
		AuthRecv(q2, &r); // a Challenge never answered
		EXPECT_EQ(0, Status(r));
	}
	r = AuthSend(q2, Negotiate(9, {1}));
	EXPECT_TRUE(r.close_after);
	EXPECT_EQ(2u, Stats().auth_failed);
}

TEST_F(NvmfAuth, WrongTransactionIdsAndLateMessages)
{
	nvmf_queue *q = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q, 0, 31, kAuthSub, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	nvmf_req r;
	ASSERT_EQ(0, Status(AuthSend(q, Negotiate(5, {0}))));
	AuthRecv(q, &r);
	ASSERT_EQ(0, Status(r));
	// A Reply of another transaction: incorrect payload.
	std::vector<uint8_t> reply(16 + 2 * 32, 0);
	reply[0] = NVME_AUTH_TYPE_DHCHAP;
	reply[1] = NVME_AUTH_MSG_REPLY;
	reply[4] = 6; // t_id 6, not 5
	reply[6] = 32;
	ASSERT_EQ(0, Status(AuthSend(q, reply)));
	std::vector<uint8_t> f = AuthRecv(q, &r);
	EXPECT_EQ(NVME_AUTH_MSG_FAILURE1, f[1]);
	EXPECT_EQ(NVME_AUTH_RCE_INCORRECT_PAYLOAD, f[7]);
	// An authenticated queue that gets a stray DH-HMAC-CHAP message
	// closes at once (no Failure1 would be read).
	nvmf_queue *q2 = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q2, 0, 31, kAuthSub, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	ASSERT_FALSE(Authenticate(q2, kAuthSub, host_key_).failed);
	nvme_auth_success2 s2 = {};
	s2.auth_type = NVME_AUTH_TYPE_DHCHAP;
	s2.auth_id = NVME_AUTH_MSG_SUCCESS2;
	std::vector<uint8_t> m(sizeof(s2));
	memcpy(m.data(), &s2, sizeof(s2));
	r = AuthSend(q2, m);
	EXPECT_EQ(0, Status(r));
	EXPECT_TRUE(r.close_after);
	EXPECT_EQ(NVME_SC_AUTH_REQUIRED,
		  Sc(PropGet(q2, NVME_PROP_CAP, NVME_PROP_SIZE_8)));
	// An I/O queue that has not authenticated runs no I/O.
	nvmf_queue *a = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(a, 0, 31, kAuthSub, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	ASSERT_FALSE(Authenticate(a, kAuthSub, host_key_).failed);
	ASSERT_EQ(0, Status(PropSet(a, NVME_PROP_CC, CcEnable())));
	nvmf_queue *io = NewQueue(1, 32);
	ASSERT_EQ(0, Status(Connect(io, 1, 31, kAuthSub, kAuthHost,
				    nvmf_queue_cntlid(a))));
	r = Exec(io, Cmd(NVME_IO_FLUSH, 3, 1));
	EXPECT_EQ(NVME_SCT_CMD, Sct(r));
	EXPECT_EQ(NVME_SC_AUTH_REQUIRED, Sc(r));
	ASSERT_FALSE(Authenticate(io, kAuthSub, host_key_).failed);
	EXPECT_EQ(0, Status(Exec(io, Cmd(NVME_IO_FLUSH, 4, 1))));
}

TEST_F(NvmfAuth, AQueueThatNeverAuthenticatesIsEnded)
{
	nvmf_queue *q = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q, 0, 31, kAuthSub, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	nvmf_queue *done = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(done, 0, 31, kAuthSub, kAuthHost,
				    NVME_CNTLID_DYNAMIC)));
	ASSERT_FALSE(Authenticate(done, kAuthSub, host_key_).failed);
	fake_.now += NVMF_AUTH_TIMEOUT_MS - 1;
	nvmf_tgt_kato_scan(tgt_, fake_.now);
	EXPECT_FALSE(fake_.WasKilled(q));
	fake_.now += 1;
	nvmf_tgt_kato_scan(tgt_, fake_.now);
	EXPECT_TRUE(fake_.WasKilled(q));
	EXPECT_FALSE(fake_.WasKilled(done));
	EXPECT_EQ(1u, Stats().auth_failed);
}

TEST_F(NvmfAuth, SecretsInTheConfigurationAndSaved)
{
	struct {
		const char *opts;
		const char *err;
	} bad[] = {
		{" dhchap-key=DHHC-1:00:nope:", "not a DHHC-1"},
		{" dhchap-ctrl-key=DHHC-1:00:nope:", "not a DHHC-1"},
		{" dhchap-hash=md5", "is not sha256, sha384 or sha512"},
		{" dhchap-dhgroup=ffdhe1024", "is not null or ffdhe2048"},
		{" dhchap-hash=sha512", "need a dhchap-key"},
		{" colour=blue", "\"colour\" is not dhchap-key"},
		// A misspelt name: the secret after it is not echoed.
		{" dhchap_key=DHHC-1:00:"
		 "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=:",
		 "\"dhchap_key\" is not dhchap-key"},
	};
	for (const auto &b : bad) {
		std::string text = std::string("listen 10.0.0.1\nsubsystem ") +
				   kAuthSub + "\n  allow-host " + kAuthHost +
				   b.opts + "\n";
		nvmf_config cfg;
		char err[256] = "";
		EXPECT_EQ(-EINVAL,
			  nvmf_config_parse(text.data(), text.size(), "t", &cfg,
					    err, sizeof(err)))
			<< b.opts;
		EXPECT_NE(nullptr, strstr(err, b.err)) << err;
		EXPECT_EQ(nullptr, strstr(err, "QUFB")) << err;
		nvmf_config_free(&cfg);
	}
	// save_config writes the secrets back as given (the config file
	// and the saved one are the operator's, mode 0600).
	char *text = nullptr;
	nvmf_config cfg;
	nvmf_config_init(&cfg, "t");
	ASSERT_EQ(0, nvmf_tgt_save_config(tgt_, &cfg, &text, nullptr));
	std::string saved = text;
	free(text);
	EXPECT_NE(std::string::npos,
		  saved.find(std::string("allow-host ") + kAuthHost +
			     " dhchap-key=" + host_key_ + "\n"))
		<< saved;
	EXPECT_NE(std::string::npos,
		  saved.find(" dhchap-ctrl-key=" + ctrl_key_ +
			     " dhchap-hash=sha384 dhchap-dhgroup=ffdhe2048\n"))
		<< saved;
	nvmf_config_free(&cfg);
}

} // namespace
