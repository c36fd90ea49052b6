/*
 * targets/nvmf/auth.c - the controller's side of a DH-HMAC-CHAP
 * transaction (auth.h): the host's messages checked in their state, the
 * Challenge, Success1 and Failure1 built. Pure but for libcrypto's random
 * bytes (the challenge, the DH key pair).
 *
 * Choices, as nvmet makes them: the hash is the host's configured one if
 * the host offers it, else the first the host offers that is known; the
 * DH group must be the configured one (refused if the host does not offer
 * it); bidirectional authentication is what the host asks for in its
 * Reply (cvalid), refused if the host has no controller key.
 */
#include "targets/nvmf/auth.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

static uint16_t invalid_field(void)
{
	return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD) | NVME_DNR;
}

/* Protocol error: the next Receive answers Failure1 with @exp. */
static uint16_t fail(struct nvmf_auth *a, uint8_t exp)
{
	a->state = NVMF_AUTH_FAILURE1;
	a->fail_exp = exp;
	return 0;
}

static void end_xchg(struct nvmf_auth *a)
{
	nvme_auth_dh_free(a->dh);
	a->dh = NULL;
	OPENSSL_cleanse(a->c1, sizeof(a->c1));
	OPENSSL_cleanse(a->r2, sizeof(a->r2));
}

void nvmf_auth_init(struct nvmf_auth *a, const struct nvmf_auth_cfg *cfg,
		    const char *hostnqn, const char *subnqn)
{
	memset(a, 0, sizeof(*a));
	a->cfg = *cfg;
	snprintf(a->hostnqn, sizeof(a->hostnqn), "%s", hostnqn);
	snprintf(a->subnqn, sizeof(a->subnqn), "%s", subnqn);
}

void nvmf_auth_clear(struct nvmf_auth *a)
{
	if (!a)
		return;
	end_xchg(a);
	OPENSSL_cleanse(a, sizeof(*a));
}

static bool in_list(const uint8_t *ids, uint8_t n, uint8_t id)
{
	for (uint8_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* AUTH_Negotiate: pick the hash and DH group, start a transaction. */
static uint16_t negotiate(struct nvmf_auth *a, const uint8_t *msg, size_t len)
{
	struct nvme_auth_negotiate n;
	const struct nvme_auth_dhchap_desc *d = NULL;

	end_xchg(a);
	memcpy(&n, msg, sizeof(n));
	a->t_id = n.t_id;
	if (n.sc_c != NVME_AUTH_SC_NONE)
		return fail(a, NVME_AUTH_RCE_CONCAT_MISMATCH);
	if (!n.napd || len < sizeof(n) + (size_t)n.napd * sizeof(*d))
		return fail(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD);
	for (uint8_t i = 0; i < n.napd && !d; i++) {
		const struct nvme_auth_dhchap_desc *p =
			(const void *)(msg + sizeof(n) + i * sizeof(*p));

		if (p->authid == NVME_AUTH_ID_DHCHAP)
			d = p;
	}
	if (!d)
		return fail(a, NVME_AUTH_RCE_NOT_USABLE);
	if (d->halen > NVME_AUTH_MAX_HASH_IDS ||
	    d->dhlen > NVME_AUTH_MAX_DH_IDS)
		return fail(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD);
	a->hash = 0;
	if (in_list(d->hash_ids, d->halen, a->cfg.hash))
		a->hash = a->cfg.hash;
	for (uint8_t i = 0; i < d->halen && !a->hash; i++)
		if (nvme_auth_hash_len(d->hash_ids[i]))
			a->hash = d->hash_ids[i];
	if (!a->hash)
		return fail(a, NVME_AUTH_RCE_HASH_UNUSABLE);
	if (!in_list(d->dh_ids, d->dhlen, a->cfg.dhgroup))
		return fail(a, NVME_AUTH_RCE_DHGROUP_UNUSABLE);
	a->hl = (uint8_t)nvme_auth_hash_len(a->hash);
	a->dhgid = a->cfg.dhgroup;
	a->state = NVMF_AUTH_CHALLENGE;
	return 0;
}

/* DH-HMAC-CHAP_Reply: check R1, prepare R2. */
static uint16_t reply(struct nvmf_auth *a, const uint8_t *msg, size_t len)
{
	uint8_t skey[NVME_AUTH_DH_MAX_LEN], r1[NVME_AUTH_MAX_HASH_LEN];
	size_t dhlen = nvme_auth_dhgroup_len(a->dhgid);
	struct nvme_auth_xchg x = {.hash_id = a->hash,
				   .t_id = a->t_id,
				   .hostnqn = a->hostnqn,
				   .subsysnqn = a->subnqn};
	struct nvme_auth_reply r;
	const uint8_t *rsp, *c2, *dhv;
	bool ok;

	memcpy(&r, msg, sizeof(r));
	if (r.t_id != a->t_id)
		return fail(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD);
	if (r.hl != a->hl || r.dhvlen != dhlen ||
	    len < sizeof(r) + 2u * a->hl + dhlen)
		return fail(a, NVME_AUTH_RCE_INCORRECT_PAYLOAD);
	rsp = msg + sizeof(r);
	c2 = rsp + a->hl;
	dhv = c2 + a->hl;
	if (dhlen) {
		if (nvme_auth_dh_shared(a->dh, dhv, dhlen, skey, dhlen))
			return fail(a, NVME_AUTH_RCE_DHGROUP_UNUSABLE);
		x.skey = skey;
		x.skey_len = dhlen;
	}
	ok = !nvme_auth_host_response(&a->cfg.key, &x, a->c1, a->s1, r1) &&
	     nvme_auth_equal(r1, rsp, a->hl);
	a->bidi = r.cvalid & 1;
	if (ok && a->bidi)
		ok = a->cfg.has_ctrl_key &&
		     !nvme_auth_ctrl_response(&a->cfg.ctrl_key, &x, c2,
					      r.seqnum, a->r2);
	OPENSSL_cleanse(skey, sizeof(skey));
	OPENSSL_cleanse(r1, sizeof(r1));
	nvme_auth_dh_free(a->dh);
	a->dh = NULL;
	if (!ok)
		return fail(a, NVME_AUTH_RCE_FAILED);
	a->state = NVMF_AUTH_SUCCESS1;
	return 0;
}

uint16_t nvmf_auth_send(struct nvmf_auth *a, const uint8_t *msg, size_t len,
			uint32_t s1)
{
	uint8_t type, id;

	if (a->state == NVMF_AUTH_FAILED) /* final: the queue is closing */
		return 0;
	if (len < sizeof(struct nvme_auth_failure))
		return invalid_field();
	type = msg[0];
	id = msg[1];
	if (type == NVME_AUTH_TYPE_COMMON && id == NVME_AUTH_MSG_FAILURE2) {
		end_xchg(a);
		a->state = NVMF_AUTH_FAILED;
		return 0;
	}
	if (type == NVME_AUTH_TYPE_COMMON && id == NVME_AUTH_MSG_NEGOTIATE) {
		if (len < sizeof(struct nvme_auth_negotiate))
			return invalid_field();
		if (!a->authenticated &&
		    ++a->attempts > NVMF_AUTH_MAX_ATTEMPTS) {
			end_xchg(a);
			a->state = NVMF_AUTH_FAILED;
			return 0;
		}
		a->s1 = s1;
		return negotiate(a, msg, len);
	}
	if (len < 16) /* Reply and Success2 headers */
		return invalid_field();
	if (type != NVME_AUTH_TYPE_DHCHAP)
		return fail(a, NVME_AUTH_RCE_INCORRECT_MESSAGE);
	switch (a->state) {
	case NVMF_AUTH_REPLY:
		if (id != NVME_AUTH_MSG_REPLY)
			return fail(a, NVME_AUTH_RCE_INCORRECT_MESSAGE);
		return reply(a, msg, len);
	case NVMF_AUTH_SUCCESS2:
		if (id != NVME_AUTH_MSG_SUCCESS2 ||
		    ((const struct nvme_auth_success2 *)(const void *)msg)
				    ->t_id != a->t_id) {
			/* The host reads nothing after Success2: no
			 * Failure1 would reach it. */
			end_xchg(a);
			a->state = NVMF_AUTH_FAILED;
			return 0;
		}
		end_xchg(a);
		a->state = NVMF_AUTH_DONE;
		a->authenticated = true;
		return 0;
	case NVMF_AUTH_DONE: /* likewise: nobody reads a Failure1 */
		end_xchg(a);
		a->state = NVMF_AUTH_FAILED;
		return 0;
	case NVMF_AUTH_FAILURE1: /* the Failure1 is still to be read */
		return 0;
	case NVMF_AUTH_NEGOTIATE:
	case NVMF_AUTH_CHALLENGE:
	case NVMF_AUTH_SUCCESS1:
	case NVMF_AUTH_FAILED:
		break;
	}
	return fail(a, NVME_AUTH_RCE_INCORRECT_MESSAGE);
}

/* The Challenge: C1, S1 and our DH public value. */
static uint16_t challenge(struct nvmf_auth *a, uint8_t *buf, size_t al,
			  size_t *len)
{
	struct nvme_auth_challenge c = {.auth_type = NVME_AUTH_TYPE_DHCHAP,
					.auth_id = NVME_AUTH_MSG_CHALLENGE};
	size_t dhlen = nvme_auth_dhgroup_len(a->dhgid);
	size_t n = sizeof(c) + a->hl + dhlen;

	if (al < n)
		return invalid_field();
	if (nvme_auth_random(a->c1, a->hl) ||
	    (dhlen &&
	     (nvme_auth_dh_generate(a->dhgid, &a->dh) ||
	      nvme_auth_dh_public(a->dh, buf + sizeof(c) + a->hl, dhlen)))) {
		fail(a, NVME_AUTH_RCE_FAILED);
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL);
	}
	c.t_id = a->t_id;
	c.hl = a->hl;
	c.hashid = a->hash;
	c.dhgid = a->dhgid;
	c.dhvlen = (uint16_t)dhlen;
	c.seqnum = a->s1;
	memcpy(buf, &c, sizeof(c));
	memcpy(buf + sizeof(c), a->c1, a->hl);
	*len = n;
	a->state = NVMF_AUTH_REPLY;
	return 0;
}

uint16_t nvmf_auth_recv(struct nvmf_auth *a, uint8_t *buf, size_t al,
			size_t *len)
{
	struct nvme_auth_success1 s = {.auth_type = NVME_AUTH_TYPE_DHCHAP,
				       .auth_id = NVME_AUTH_MSG_SUCCESS1};
	struct nvme_auth_failure f = {.auth_type = NVME_AUTH_TYPE_COMMON,
				      .auth_id = NVME_AUTH_MSG_FAILURE1,
				      .rescode = NVME_AUTH_RC_FAILED};

	*len = 0;
	switch (a->state) {
	case NVMF_AUTH_CHALLENGE:
		return challenge(a, buf, al, len);
	case NVMF_AUTH_SUCCESS1:
		if (al < sizeof(s) + a->hl)
			return invalid_field();
		s.t_id = a->t_id;
		s.hl = a->hl;
		s.rvalid = a->bidi;
		memcpy(buf, &s, sizeof(s));
		if (a->bidi)
			memcpy(buf + sizeof(s), a->r2, a->hl);
		else
			memset(buf + sizeof(s), 0, a->hl);
		*len = sizeof(s) + a->hl;
		if (a->bidi) {
			a->state = NVMF_AUTH_SUCCESS2;
		} else {
			end_xchg(a);
			a->state = NVMF_AUTH_DONE;
			a->authenticated = true;
		}
		return 0;
	case NVMF_AUTH_NEGOTIATE:
	case NVMF_AUTH_REPLY:
	case NVMF_AUTH_SUCCESS2:
	case NVMF_AUTH_DONE:
		fail(a, NVME_AUTH_RCE_INCORRECT_MESSAGE);
		break;
	case NVMF_AUTH_FAILURE1:
	case NVMF_AUTH_FAILED: /* final: Failure1 again */
		if (!a->fail_exp)
			a->fail_exp = NVME_AUTH_RCE_FAILED;
		break;
	}
	if (al < sizeof(f))
		return invalid_field();
	f.t_id = a->t_id;
	f.rescode_exp = a->fail_exp;
	memcpy(buf, &f, sizeof(f));
	*len = sizeof(f);
	end_xchg(a);
	a->state = NVMF_AUTH_FAILED;
	return 0;
}
