/*
 * proto/nvme/auth_dh.c - DH-HMAC-CHAP's FFDHE exchange: a key pair in
 * one of the RFC 7919 groups (OpenSSL 3.0's named groups "ffdhe2048" ..
 * "ffdhe8192"), its public value and the shared secret with the peer's,
 * both big-endian and zero-padded to the group size as the kernel sends
 * and uses them. The peer's value is checked (exact length, 1 < y < p - 1,
 * and libcrypto's full public key check, which includes y^q = 1) before
 * it is used.
 */
#include "proto/nvme/auth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/dh.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

struct nvme_auth_dh {
	uint8_t dhgid;
	EVP_PKEY *pkey; /* the key pair */
};

static const struct {
	const char *name;
	size_t len; /* bytes of p */
} dh_groups[] = {
	[NVME_AUTH_DHGROUP_NULL] = {"null", 0},
	[NVME_AUTH_DHGROUP_2048] = {"ffdhe2048", 256},
	[NVME_AUTH_DHGROUP_3072] = {"ffdhe3072", 384},
	[NVME_AUTH_DHGROUP_4096] = {"ffdhe4096", 512},
	[NVME_AUTH_DHGROUP_6144] = {"ffdhe6144", 768},
	[NVME_AUTH_DHGROUP_8192] = {"ffdhe8192", 1024},
};

#define N_GROUPS (sizeof(dh_groups) / sizeof(dh_groups[0]))

size_t nvme_auth_dhgroup_len(uint8_t dhgid)
{
	return dhgid < N_GROUPS ? dh_groups[dhgid].len : 0;
}

const char *nvme_auth_dhgroup_name(uint8_t dhgid)
{
	return dhgid < N_GROUPS ? dh_groups[dhgid].name : NULL;
}

/* The libcrypto error of a failed call, forgotten: -EIO. */
static int lib_err(void)
{
	ERR_clear_error();
	return -EIO;
}

static int dh_wrap(uint8_t dhgid, EVP_PKEY *pkey, struct nvme_auth_dh **dh)
{
	struct nvme_auth_dh *d = calloc(1, sizeof(*d));

	if (!d) {
		EVP_PKEY_free(pkey);
		return -ENOMEM;
	}
	d->dhgid = dhgid;
	d->pkey = pkey;
	*dh = d;
	return 0;
}

int nvme_auth_dh_generate(uint8_t dhgid, struct nvme_auth_dh **dh)
{
	const char *name = nvme_auth_dhgroup_name(dhgid);
	EVP_PKEY *pkey = NULL;
	EVP_PKEY_CTX *ctx;
	OSSL_PARAM params[2];
	int ret = -EIO;

	if (!dh || !nvme_auth_dhgroup_len(dhgid))
		return -EINVAL;
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	if (!ctx)
		return -ENOMEM;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
						     (char *)name, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_PKEY_keygen_init(ctx) != 1 ||
	    EVP_PKEY_CTX_set_params(ctx, params) != 1 ||
	    EVP_PKEY_generate(ctx, &pkey) != 1) {
		ret = lib_err();
		goto out;
	}
	ret = dh_wrap(dhgid, pkey, dh);
out:
	EVP_PKEY_CTX_free(ctx);
	return ret;
}

/*
 * An EVP_PKEY of the group from @sel's parts: the group's parameters
 * alone, a public key, or a key pair.
 */
static int pkey_from(const char *group, const BIGNUM *pub, const BIGNUM *priv,
		     int sel, EVP_PKEY **out)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	int ret = -ENOMEM;

	*out = NULL;
	if (!bld)
		return -ENOMEM;
	if (!OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
					     group, 0) ||
	    (pub &&
	     !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PUB_KEY, pub)) ||
	    (priv &&
	     !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, priv)))
		goto out;
	params = OSSL_PARAM_BLD_to_param(bld);
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	if (!params || !ctx)
		goto out;
	if (EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, out, sel, params) != 1) {
		ret = lib_err();
		goto out;
	}
	ret = 0;
out:
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params); /* the private key's part: cleared */
	OSSL_PARAM_BLD_free(bld);
	return ret;
}

/* p of a key's group. */
static int group_p(const EVP_PKEY *pkey, BIGNUM **p)
{
	*p = NULL;
	if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_FFC_P, p) != 1)
		return lib_err();
	return 0;
}

/* 1 < y < p - 1. */
static bool in_range(const BIGNUM *y, const BIGNUM *p, BN_CTX *bn)
{
	BIGNUM *pm1 = BN_CTX_get(bn);

	if (!pm1 || !BN_sub(pm1, p, BN_value_one()))
		return false;
	return !BN_is_zero(y) && !BN_is_one(y) && BN_cmp(y, pm1) < 0;
}

int nvme_auth_dh_import(uint8_t dhgid, const uint8_t *priv, size_t len,
			struct nvme_auth_dh **dh)
{
	const char *name = nvme_auth_dhgroup_name(dhgid);
	BIGNUM *x = NULL, *g = NULL, *p = NULL, *y = NULL;
	EVP_PKEY *params = NULL, *pkey = NULL;
	BN_CTX *bn = NULL;
	int ret;

	if (!dh || !priv || !len || !nvme_auth_dhgroup_len(dhgid))
		return -EINVAL;
	ret = pkey_from(name, NULL, NULL, EVP_PKEY_KEY_PARAMETERS, &params);
	if (ret)
		goto out;
	ret = group_p(params, &p);
	if (ret)
		goto out;
	ret = -ENOMEM;
	bn = BN_CTX_secure_new();
	if (!bn)
		goto out;
	BN_CTX_start(bn);
	x = BN_secure_new();
	y = BN_new();
	if (!x || !y)
		goto out;
	BN_set_flags(x, BN_FLG_CONSTTIME);
	if (!BN_bin2bn(priv, (int)len, x))
		goto out;
	if (!in_range(x, p, bn)) {
		ret = -EINVAL;
		goto out;
	}
	if (EVP_PKEY_get_bn_param(params, OSSL_PKEY_PARAM_FFC_G, &g) != 1 ||
	    !BN_mod_exp(y, g, x, p, bn)) {
		ret = lib_err();
		goto out;
	}
	ret = pkey_from(name, y, x, EVP_PKEY_KEYPAIR, &pkey);
	if (ret == 0)
		ret = dh_wrap(dhgid, pkey, dh);
out:
	if (bn)
		BN_CTX_end(bn);
	BN_CTX_free(bn);
	BN_clear_free(x);
	BN_free(y);
	BN_free(g);
	BN_free(p);
	EVP_PKEY_free(params);
	return ret;
}

int nvme_auth_dh_public(const struct nvme_auth_dh *dh, uint8_t *out, size_t len)
{
	BIGNUM *y = NULL;
	int ret = 0;

	if (!dh || !out || len != nvme_auth_dhgroup_len(dh->dhgid))
		return -EINVAL;
	if (EVP_PKEY_get_bn_param(dh->pkey, OSSL_PKEY_PARAM_PUB_KEY, &y) != 1 ||
	    BN_bn2binpad(y, out, (int)len) != (int)len)
		ret = lib_err();
	BN_free(y);
	return ret;
}

int nvme_auth_dh_shared(const struct nvme_auth_dh *dh, const uint8_t *peer,
			size_t peer_len, uint8_t *out, size_t len)
{
	size_t glen, out_len = len;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *peer_key = NULL;
	BIGNUM *p = NULL, *y = NULL;
	BN_CTX *bn = NULL;
	int ret;

	if (!dh || !peer || !out)
		return -EINVAL;
	glen = nvme_auth_dhgroup_len(dh->dhgid);
	if (peer_len != glen || len != glen)
		return -EINVAL;
	ret = group_p(dh->pkey, &p);
	if (ret)
		goto out;
	ret = -ENOMEM;
	bn = BN_CTX_new();
	if (!bn)
		goto out;
	BN_CTX_start(bn);
	y = BN_bin2bn(peer, (int)peer_len, NULL);
	if (!y)
		goto out;
	if (!in_range(y, p, bn)) {
		ret = -EINVAL;
		goto out;
	}
	ret = pkey_from(nvme_auth_dhgroup_name(dh->dhgid), y, NULL,
			EVP_PKEY_PUBLIC_KEY, &peer_key);
	if (ret)
		goto out;
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, dh->pkey, NULL);
	if (!ctx) {
		ret = -ENOMEM;
		goto out;
	}
	if (EVP_PKEY_derive_init(ctx) != 1 ||
	    EVP_PKEY_CTX_set_dh_pad(ctx, 1) != 1) {
		ret = lib_err();
		goto out;
	}
	/* validate: the full public key check, the subgroup's included */
	if (EVP_PKEY_derive_set_peer_ex(ctx, peer_key, 1) != 1) {
		ERR_clear_error();
		ret = -EINVAL;
		goto out;
	}
	if (EVP_PKEY_derive(ctx, out, &out_len) != 1 || out_len != len) {
		ret = lib_err();
		goto out;
	}
	ret = 0;
out:
	if (ret)
		OPENSSL_cleanse(out, len);
	if (bn)
		BN_CTX_end(bn);
	BN_CTX_free(bn);
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(peer_key);
	BN_free(y);
	BN_free(p);
	return ret;
}

void nvme_auth_dh_free(struct nvme_auth_dh *dh)
{
	if (!dh)
		return;
	EVP_PKEY_free(dh->pkey); /* clears the private key */
	free(dh);
}
