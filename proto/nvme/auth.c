/*
 * proto/nvme/auth.c - DH-HMAC-CHAP's hashing: SHA-2 and HMAC by hash ID,
 * the key transformation, the augmented challenge and the host and
 * controller responses, in the kernel's byte order (see auth.h). HMAC
 * through OpenSSL 3.0's EVP_MAC, digests through EVP_Digest.
 */
#include "proto/nvme/auth.h"

#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

/* What the key transformation appends to the NQN. */
#define TRANSFORM_SEED	   "NVMe-over-Fabrics"
#define TRANSFORM_SEED_LEN 17

/* One piece of an HMAC's input. */
struct seg {
	const void *p;
	size_t len;
};

static const EVP_MD *hash_md(uint8_t hash_id)
{
	switch (hash_id) {
	case NVME_AUTH_HASH_SHA256:
		return EVP_sha256();
	case NVME_AUTH_HASH_SHA384:
		return EVP_sha384();
	case NVME_AUTH_HASH_SHA512:
		return EVP_sha512();
	default:
		return NULL;
	}
}

size_t nvme_auth_hash_len(uint8_t hash_id)
{
	switch (hash_id) {
	case NVME_AUTH_HASH_SHA256:
		return 32;
	case NVME_AUTH_HASH_SHA384:
		return 48;
	case NVME_AUTH_HASH_SHA512:
		return 64;
	default:
		return 0;
	}
}

const char *nvme_auth_hash_name(uint8_t hash_id)
{
	switch (hash_id) {
	case NVME_AUTH_HASH_SHA256:
		return "sha256";
	case NVME_AUTH_HASH_SHA384:
		return "sha384";
	case NVME_AUTH_HASH_SHA512:
		return "sha512";
	default:
		return NULL;
	}
}

/* OpenSSL's name of a digest, for the HMAC's "digest" parameter. */
static const char *md_param_name(uint8_t hash_id)
{
	switch (hash_id) {
	case NVME_AUTH_HASH_SHA256:
		return "SHA256";
	case NVME_AUTH_HASH_SHA384:
		return "SHA384";
	case NVME_AUTH_HASH_SHA512:
		return "SHA512";
	default:
		return NULL;
	}
}

int nvme_auth_hash(uint8_t hash_id, const void *data, size_t len, uint8_t *out)
{
	const EVP_MD *md = hash_md(hash_id);
	unsigned int out_len = 0;

	if (!md || !out || (!data && len))
		return -EINVAL;
	if (EVP_Digest(data, len, out, &out_len, md, NULL) != 1 ||
	    out_len != nvme_auth_hash_len(hash_id)) {
		ERR_clear_error();
		OPENSSL_cleanse(out, nvme_auth_hash_len(hash_id));
		return -EIO;
	}
	return 0;
}

/* HMAC-H(key, seg[0] || seg[1] || ...) into out (H's digest length). */
static int hmac_segs(uint8_t hash_id, const void *key, size_t key_len,
		     const struct seg *segs, size_t n, uint8_t *out)
{
	size_t hlen = nvme_auth_hash_len(hash_id), out_len = 0;
	OSSL_PARAM params[2];
	EVP_MAC_CTX *ctx = NULL;
	EVP_MAC *mac;
	int ret = -EIO;

	mac = EVP_MAC_fetch(NULL, OSSL_MAC_NAME_HMAC, NULL);
	if (!mac) {
		ret = -ENOMEM;
		goto out;
	}
	ctx = EVP_MAC_CTX_new(mac);
	if (!ctx) {
		ret = -ENOMEM;
		goto out;
	}
	params[0] = OSSL_PARAM_construct_utf8_string(
		OSSL_MAC_PARAM_DIGEST, (char *)md_param_name(hash_id), 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_MAC_init(ctx, key, key_len, params) != 1)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (segs[i].len &&
		    EVP_MAC_update(ctx, segs[i].p, segs[i].len) != 1)
			goto out;
	if (EVP_MAC_final(ctx, out, &out_len, hlen) != 1 || out_len != hlen)
		goto out;
	ret = 0;
out:
	if (ret) {
		ERR_clear_error();
		OPENSSL_cleanse(out, hlen);
	}
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return ret;
}

int nvme_auth_hmac(uint8_t hash_id, const void *key, size_t key_len,
		   const void *data, size_t len, uint8_t *out)
{
	struct seg s = {data, len};

	if (!nvme_auth_hash_len(hash_id) || !key || !key_len || !out ||
	    (!data && len))
		return -EINVAL;
	return hmac_segs(hash_id, key, key_len, &s, 1, out);
}

static bool key_ok(const struct nvme_auth_key *key)
{
	return key && key->hash <= NVME_AUTH_HASH_SHA512 &&
	       (key->len == 32 || key->len == 48 || key->len == 64);
}

int nvme_auth_transform_key(const struct nvme_auth_key *key, const char *nqn,
			    uint8_t *out, size_t *out_len)
{
	struct seg s[2];
	int ret;

	if (!key_ok(key) || !nqn || !out || !out_len)
		return -EINVAL;
	if (key->hash == 0) {
		memcpy(out, key->key, key->len);
		*out_len = key->len;
		return 0;
	}
	s[0] = (struct seg){nqn, strlen(nqn)};
	s[1] = (struct seg){TRANSFORM_SEED, TRANSFORM_SEED_LEN};
	ret = hmac_segs(key->hash, key->key, key->len, s, 2, out);
	if (ret)
		return ret;
	*out_len = nvme_auth_hash_len(key->hash);
	return 0;
}

int nvme_auth_augmented_challenge(uint8_t hash_id, const uint8_t *skey,
				  size_t skey_len, const uint8_t *challenge,
				  uint8_t *out)
{
	size_t hlen = nvme_auth_hash_len(hash_id);
	uint8_t hashed[NVME_AUTH_MAX_HASH_LEN];
	struct seg s;
	int ret;

	if (!hlen || !skey || !skey_len || !challenge || !out)
		return -EINVAL;
	ret = nvme_auth_hash(hash_id, skey, skey_len, hashed);
	if (ret == 0) {
		s = (struct seg){challenge, hlen};
		ret = hmac_segs(hash_id, hashed, hlen, &s, 1, out);
	}
	if (ret)
		OPENSSL_cleanse(out, hlen);
	OPENSSL_cleanse(hashed, sizeof(hashed));
	return ret;
}

/*
 * HMAC-Hc(transform(key, key_nqn), C' || le32 seq || le16 t_id || 0x00 ||
 * label || nqn_a || 0x00 || nqn_b), C' the challenge, augmented when the
 * exchange has a shared secret.
 */
static int chap_response(const struct nvme_auth_key *key,
			 const struct nvme_auth_xchg *x, const uint8_t *chal,
			 uint32_t seq, const char *label, const char *nqn_a,
			 const char *nqn_b, uint8_t *out)
{
	uint8_t tkey[NVME_AUTH_MAX_HASH_LEN], aug[NVME_AUTH_MAX_HASH_LEN];
	size_t hlen = nvme_auth_hash_len(x->hash_id), tkey_len = 0;
	const uint8_t *c = chal;
	const uint8_t zero = 0;
	uint8_t seq_le[4], tid_le[2];
	struct seg s[8];
	int ret;

	for (int i = 0; i < 4; i++)
		seq_le[i] = (uint8_t)(seq >> (8 * i));
	tid_le[0] = (uint8_t)x->t_id;
	tid_le[1] = (uint8_t)(x->t_id >> 8);

	ret = nvme_auth_transform_key(key, nqn_a, tkey, &tkey_len);
	if (ret)
		goto out;
	if (x->skey) {
		ret = nvme_auth_augmented_challenge(x->hash_id, x->skey,
						    x->skey_len, chal, aug);
		if (ret)
			goto out;
		c = aug;
	}
	s[0] = (struct seg){c, hlen};
	s[1] = (struct seg){seq_le, sizeof(seq_le)};
	s[2] = (struct seg){tid_le, sizeof(tid_le)};
	s[3] = (struct seg){&zero, 1}; /* secure channel: none */
	s[4] = (struct seg){label, strlen(label)};
	s[5] = (struct seg){nqn_a, strlen(nqn_a)};
	s[6] = (struct seg){&zero, 1};
	s[7] = (struct seg){nqn_b, strlen(nqn_b)};
	ret = hmac_segs(x->hash_id, tkey, tkey_len, s, 8, out);
out:
	if (ret)
		OPENSSL_cleanse(out, hlen);
	OPENSSL_cleanse(tkey, sizeof(tkey));
	OPENSSL_cleanse(aug, sizeof(aug));
	return ret;
}

static bool xchg_ok(const struct nvme_auth_xchg *x)
{
	return x && nvme_auth_hash_len(x->hash_id) && x->hostnqn &&
	       x->subsysnqn && !x->skey == !x->skey_len;
}

int nvme_auth_host_response(const struct nvme_auth_key *host_key,
			    const struct nvme_auth_xchg *x, const uint8_t *c1,
			    uint32_t s1, uint8_t *r1)
{
	if (!key_ok(host_key) || !xchg_ok(x) || !c1 || !r1)
		return -EINVAL;
	return chap_response(host_key, x, c1, s1, "HostHost", x->hostnqn,
			     x->subsysnqn, r1);
}

int nvme_auth_ctrl_response(const struct nvme_auth_key *ctrl_key,
			    const struct nvme_auth_xchg *x, const uint8_t *c2,
			    uint32_t s2, uint8_t *r2)
{
	if (!key_ok(ctrl_key) || !xchg_ok(x) || !c2 || !r2)
		return -EINVAL;
	return chap_response(ctrl_key, x, c2, s2, "Controller", x->subsysnqn,
			     x->hostnqn, r2);
}

bool nvme_auth_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
	return CRYPTO_memcmp(a, b, len) == 0;
}

int nvme_auth_random(void *buf, size_t len)
{
	if (!buf || len > (size_t)INT32_MAX)
		return -EINVAL;
	return RAND_bytes(buf, (int)len) == 1 ? 0 : -EIO;
}
