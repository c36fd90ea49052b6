/*
 * nvmf_host/auth.c - the host's side of a DH-HMAC-CHAP transaction
 * (auth.h).  Pure but for libcrypto's random bytes (C2, the DH key
 * pair).
 */
#include "nvmf_host/auth.h"

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

#include "proto/nvme/spec_fabrics.h"

/* The Linux host's offer. */
static const uint8_t offered_hashes[] = {
	NVME_AUTH_HASH_SHA256,
	NVME_AUTH_HASH_SHA384,
	NVME_AUTH_HASH_SHA512,
};
static const uint8_t offered_groups[] = {
	NVME_AUTH_DHGROUP_NULL, NVME_AUTH_DHGROUP_2048, NVME_AUTH_DHGROUP_3072,
	NVME_AUTH_DHGROUP_4096, NVME_AUTH_DHGROUP_6144, NVME_AUTH_DHGROUP_8192,
};

void wnh_auth_init(struct wnh_auth *a, const struct nvme_auth_key *key,
		   const struct nvme_auth_key *ctrl_key, const char *hostnqn,
		   const char *subnqn, uint16_t t_id)
{
	memset(a, 0, sizeof(*a));
	a->key = key;
	a->ctrl_key = ctrl_key;
	a->hostnqn = hostnqn;
	a->subnqn = subnqn;
	a->t_id = t_id;
}

void wnh_auth_clear(struct wnh_auth *a)
{
	if (a)
		OPENSSL_cleanse(a->r2, sizeof(a->r2));
}

const char *wnh_auth_rce_str(uint8_t rce)
{
	switch (rce) {
	case NVME_AUTH_RCE_FAILED:
		return "authentication failed";
	case NVME_AUTH_RCE_NOT_USABLE:
		return "protocol not usable";
	case NVME_AUTH_RCE_CONCAT_MISMATCH:
		return "secure channel concatenation mismatch";
	case NVME_AUTH_RCE_HASH_UNUSABLE:
		return "hash function not usable";
	case NVME_AUTH_RCE_DHGROUP_UNUSABLE:
		return "DH group not usable";
	case NVME_AUTH_RCE_INCORRECT_PAYLOAD:
		return "incorrect payload";
	case NVME_AUTH_RCE_INCORRECT_MESSAGE:
		return "incorrect protocol message";
	default:
		return "unknown reason";
	}
}

/* Ends the transaction: FAILED with @err, nothing more to send. */
static enum wnh_auth_next failed(struct wnh_auth *a, int err, size_t *out_len)
{
	wnh_auth_clear(a);
	a->state = WNH_AUTH_FAILED;
	a->error = err;
	*out_len = 0;
	return WNH_AUTH_NEXT_FAIL;
}

/* The controller broke the protocol (or gave a wrong R2): AUTH_Failure2
 * with @exp to send, then FAILED with @err. */
static enum wnh_auth_next failure2(struct wnh_auth *a, uint8_t exp, int err,
				   uint8_t *out, size_t *out_len)
{
	struct nvme_auth_failure f = {0};

	failed(a, err, out_len);
	a->fail_exp = exp;
	f.auth_type = NVME_AUTH_TYPE_COMMON;
	f.auth_id = NVME_AUTH_MSG_FAILURE2;
	f.t_id = a->t_id;
	f.rescode = NVME_AUTH_RC_FAILED;
	f.rescode_exp = exp;
	memcpy(out, &f, sizeof(f));
	*out_len = sizeof(f);
	return WNH_AUTH_NEXT_FAIL;
}

static size_t negotiate(struct wnh_auth *a, uint8_t *out)
{
	struct nvme_auth_negotiate n = {0};
	struct nvme_auth_dhchap_desc d = {0};

	n.auth_type = NVME_AUTH_TYPE_COMMON;
	n.auth_id = NVME_AUTH_MSG_NEGOTIATE;
	n.t_id = a->t_id;
	n.sc_c = NVME_AUTH_SC_NONE;
	n.napd = 1;
	d.authid = NVME_AUTH_ID_DHCHAP;
	d.halen = sizeof(offered_hashes);
	d.dhlen = sizeof(offered_groups);
	memcpy(d.hash_ids, offered_hashes, sizeof(offered_hashes));
	memcpy(d.dh_ids, offered_groups, sizeof(offered_groups));
	memcpy(out, &n, sizeof(n));
	memcpy(out + sizeof(n), &d, sizeof(d));
	return sizeof(n) + sizeof(d);
}

static bool offered(const uint8_t *ids, size_t n, uint8_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* The Challenge: R1 (and C2) into the Reply. */
static enum wnh_auth_next challenge(struct wnh_auth *a, const uint8_t *in,
				    size_t in_len, uint8_t *out,
				    size_t *out_len)
{
	uint8_t skey[NVME_AUTH_DH_MAX_LEN];
	struct nvme_auth_challenge c;
	struct nvme_auth_reply r = {0};
	struct nvme_auth_xchg x = {0};
	struct nvme_auth_dh *dh = NULL;
	uint8_t *r1 = out + sizeof(r), *c2, *dhv;
	size_t dhlen;
	int rc = 0;

	if (in_len < sizeof(c))
		return failure2(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD, -EPROTO,
				out, out_len);
	memcpy(&c, in, sizeof(c));
	if (c.t_id != a->t_id)
		return failure2(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD, -EPROTO,
				out, out_len);
	if (!offered(offered_hashes, sizeof(offered_hashes), c.hashid) ||
	    c.hl != nvme_auth_hash_len(c.hashid))
		return failure2(a, NVME_AUTH_RCE_HASH_UNUSABLE, -EPROTO, out,
				out_len);
	if (!offered(offered_groups, sizeof(offered_groups), c.dhgid))
		return failure2(a, NVME_AUTH_RCE_DHGROUP_UNUSABLE, -EPROTO, out,
				out_len);
	dhlen = nvme_auth_dhgroup_len(c.dhgid);
	if (c.dhvlen != dhlen || in_len < sizeof(c) + c.hl + dhlen)
		return failure2(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD, -EPROTO,
				out, out_len);
	a->hash = c.hashid;
	a->hl = c.hl;
	a->dhgid = c.dhgid;
	c2 = r1 + a->hl;
	dhv = c2 + a->hl;
	x.hash_id = a->hash;
	x.t_id = a->t_id;
	x.hostnqn = a->hostnqn;
	x.subsysnqn = a->subnqn;
	if (dhlen) {
		rc = nvme_auth_dh_generate(a->dhgid, &dh);
		if (!rc)
			rc = nvme_auth_dh_public(dh, dhv, dhlen);
		if (!rc && nvme_auth_dh_shared(dh, in + sizeof(c) + c.hl, dhlen,
					       skey, dhlen)) {
			nvme_auth_dh_free(dh);
			OPENSSL_cleanse(skey, sizeof(skey));
			return failure2(a, NVME_AUTH_RCE_DHGROUP_UNUSABLE,
					-EPROTO, out, out_len);
		}
		nvme_auth_dh_free(dh);
		x.skey = skey;
		x.skey_len = dhlen;
	}
	if (!rc)
		rc = nvme_auth_host_response(a->key, &x, in + sizeof(c),
					     c.seqnum, r1);
	memset(c2, 0, a->hl);
	a->bidi = a->ctrl_key != NULL;
	if (!rc && a->bidi) {
		/* S2: any value but 0, which means "no C2". */
		rc = nvme_auth_random(&a->s2, sizeof(a->s2));
		a->s2 |= a->s2 ? 0 : 1;
		if (!rc)
			rc = nvme_auth_random(c2, a->hl);
		if (!rc)
			rc = nvme_auth_ctrl_response(a->ctrl_key, &x, c2, a->s2,
						     a->r2);
	}
	OPENSSL_cleanse(skey, sizeof(skey));
	if (rc)
		return failed(a, rc == -ENOMEM ? -ENOMEM : -EIO, out_len);
	r.auth_type = NVME_AUTH_TYPE_DHCHAP;
	r.auth_id = NVME_AUTH_MSG_REPLY;
	r.t_id = a->t_id;
	r.hl = a->hl;
	r.cvalid = a->bidi ? 1 : 0;
	r.dhvlen = (uint16_t)dhlen;
	r.seqnum = a->bidi ? a->s2 : 0;
	memcpy(out, &r, sizeof(r));
	*out_len = sizeof(r) + 2u * a->hl + dhlen;
	a->state = WNH_AUTH_SUCCESS1;
	return WNH_AUTH_NEXT_RECV;
}

/* Success1: R2 checked when the host asked for it; Success2 then. */
static enum wnh_auth_next success1(struct wnh_auth *a, const uint8_t *in,
				   size_t in_len, uint8_t *out, size_t *out_len)
{
	struct nvme_auth_success1 s;
	struct nvme_auth_success2 s2 = {0};

	if (in_len < sizeof(s))
		return failure2(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD, -EPROTO,
				out, out_len);
	memcpy(&s, in, sizeof(s));
	if (s.t_id != a->t_id || s.hl != a->hl)
		return failure2(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD, -EPROTO,
				out, out_len);
	if (!a->bidi) {
		wnh_auth_clear(a);
		a->state = WNH_AUTH_DONE;
		*out_len = 0;
		return WNH_AUTH_NEXT_DONE;
	}
	if (!(s.rvalid & 1) || in_len < sizeof(s) + a->hl)
		return failure2(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD, -EPROTO,
				out, out_len);
	if (!nvme_auth_equal(a->r2, in + sizeof(s), a->hl))
		return failure2(a, NVME_AUTH_RCE_FAILED, -EKEYREJECTED, out,
				out_len);
	wnh_auth_clear(a);
	s2.auth_type = NVME_AUTH_TYPE_DHCHAP;
	s2.auth_id = NVME_AUTH_MSG_SUCCESS2;
	s2.t_id = a->t_id;
	memcpy(out, &s2, sizeof(s2));
	*out_len = sizeof(s2);
	a->state = WNH_AUTH_DONE;
	return WNH_AUTH_NEXT_DONE;
}

enum wnh_auth_next wnh_auth_step(struct wnh_auth *a, const uint8_t *in,
				 size_t in_len, uint8_t *out, size_t *out_len)
{
	*out_len = 0;
	switch (a->state) {
	case WNH_AUTH_START:
		if (in)
			return failed(a, -EPROTO, out_len);
		*out_len = negotiate(a, out);
		a->state = WNH_AUTH_CHALLENGE;
		return WNH_AUTH_NEXT_RECV;
	case WNH_AUTH_CHALLENGE:
	case WNH_AUTH_SUCCESS1:
		break;
	case WNH_AUTH_DONE:
	case WNH_AUTH_FAILED:
	default:
		return failed(a, -EPROTO, out_len);
	}
	if (!in || in_len < 2)
		return failure2(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD, -EPROTO,
				out, out_len);
	if (in[0] == NVME_AUTH_TYPE_COMMON && in[1] == NVME_AUTH_MSG_FAILURE1) {
		struct nvme_auth_failure f = {0};

		memcpy(&f, in, in_len < sizeof(f) ? in_len : sizeof(f));
		a->peer_failed = true;
		a->peer_exp = f.rescode_exp;
		return failed(a, -EKEYREJECTED, out_len);
	}
	if (in[0] != NVME_AUTH_TYPE_DHCHAP)
		return failure2(a, NVME_AUTH_RCE_INCORRECT_MESSAGE, -EPROTO,
				out, out_len);
	if (a->state == WNH_AUTH_CHALLENGE) {
		if (in[1] != NVME_AUTH_MSG_CHALLENGE)
			return failure2(a, NVME_AUTH_RCE_INCORRECT_MESSAGE,
					-EPROTO, out, out_len);
		return challenge(a, in, in_len, out, out_len);
	}
	if (in[1] != NVME_AUTH_MSG_SUCCESS1)
		return failure2(a, NVME_AUTH_RCE_INCORRECT_MESSAGE, -EPROTO,
				out, out_len);
	return success1(a, in, in_len, out, out_len);
}
