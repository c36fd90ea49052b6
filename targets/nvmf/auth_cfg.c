/*
 * targets/nvmf/auth_cfg.c - a host's DH-HMAC-CHAP secrets and choices as
 * the configuration file and the management RPC write them (auth.h):
 * nvme-cli's and nvmet's names (dhchap key, controller key, hash, DH
 * group), read and written back the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/nvmf/auth.h"

#include <openssl/crypto.h>

static const struct {
	const char *name;
	uint8_t id;
} hashes[] = {
	{"sha256", NVME_AUTH_HASH_SHA256},
	{"sha384", NVME_AUTH_HASH_SHA384},
	{"sha512", NVME_AUTH_HASH_SHA512},
};

static const struct {
	const char *name;
	uint8_t id;
} groups[] = {
	{"null", NVME_AUTH_DHGROUP_NULL},
	{"ffdhe2048", NVME_AUTH_DHGROUP_2048},
	{"ffdhe3072", NVME_AUTH_DHGROUP_3072},
	{"ffdhe4096", NVME_AUTH_DHGROUP_4096},
	{"ffdhe6144", NVME_AUTH_DHGROUP_6144},
	{"ffdhe8192", NVME_AUTH_DHGROUP_8192},
};

void nvmf_auth_cfg_init(struct nvmf_auth_cfg *a)
{
	memset(a, 0, sizeof(*a));
	a->hash = NVME_AUTH_HASH_SHA256;
	a->dhgroup = NVME_AUTH_DHGROUP_NULL;
}

/* Whether the @n bytes before '=' are @name. */
static bool name_is(const char *word, size_t n, const char *name)
{
	return n == strlen(name) && !strncmp(word, name, n);
}

int nvmf_auth_cfg_option(const char *word, struct nvmf_auth_cfg *a, char *why,
			 size_t whylen)
{
	const char *eq = strchr(word, '=');
	size_t n = eq ? (size_t)(eq - word) : 0;
	const char *v = eq ? eq + 1 : NULL;

	if (!eq)
		return -ENOENT;
	if (name_is(word, n, "dhchap-key")) {
		if (nvme_auth_key_parse(v, &a->key)) {
			snprintf(why, whylen,
				 "dhchap-key: not a DHHC-1:XX:BASE64: secret "
				 "(nvme gen-dhchap-key makes one)");
			return -EINVAL;
		}
		return 0;
	}
	if (name_is(word, n, "dhchap-ctrl-key")) {
		if (nvme_auth_key_parse(v, &a->ctrl_key)) {
			snprintf(why, whylen,
				 "dhchap-ctrl-key: not a DHHC-1:XX:BASE64: "
				 "secret");
			return -EINVAL;
		}
		a->has_ctrl_key = true;
		return 0;
	}
	if (name_is(word, n, "dhchap-hash")) {
		for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
			if (!strcmp(v, hashes[i].name)) {
				a->hash = hashes[i].id;
				return 0;
			}
		snprintf(why, whylen,
			 "dhchap-hash: \"%.32s\" is not sha256, sha384 or "
			 "sha512",
			 v);
		return -EINVAL;
	}
	if (name_is(word, n, "dhchap-dhgroup")) {
		for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
			if (!strcmp(v, groups[i].name)) {
				a->dhgroup = groups[i].id;
				return 0;
			}
		snprintf(why, whylen,
			 "dhchap-dhgroup: \"%.32s\" is not null or "
			 "ffdhe2048..ffdhe8192",
			 v);
		return -EINVAL;
	}
	return -ENOENT;
}

int nvmf_auth_cfg_check(const struct nvmf_auth_cfg *a, char *why, size_t whylen)
{
	if (!a->key.len &&
	    (a->has_ctrl_key || a->hash != NVME_AUTH_HASH_SHA256 ||
	     a->dhgroup != NVME_AUTH_DHGROUP_NULL)) {
		snprintf(why, whylen,
			 "dhchap-ctrl-key, -hash and -dhgroup need a "
			 "dhchap-key");
		return -EINVAL;
	}
	return 0;
}

void nvmf_auth_cfg_words(const struct nvmf_auth_cfg *a, char *buf, size_t len)
{
	char k[NVME_AUTH_KEY_TEXT_MAX];
	size_t off = 0;

	buf[0] = '\0';
	if (!a->key.len)
		return;
	if (nvme_auth_key_format(&a->key, k, sizeof(k)) > 0)
		off += (size_t)snprintf(buf + off, len - off, " dhchap-key=%s",
					k);
	if (a->has_ctrl_key && off < len &&
	    nvme_auth_key_format(&a->ctrl_key, k, sizeof(k)) > 0)
		off += (size_t)snprintf(buf + off, len - off,
					" dhchap-ctrl-key=%s", k);
	for (size_t i = 0; off < len && i < sizeof(hashes) / sizeof(hashes[0]);
	     i++)
		if (a->hash == hashes[i].id && a->hash != NVME_AUTH_HASH_SHA256)
			off += (size_t)snprintf(buf + off, len - off,
						" dhchap-hash=%s",
						hashes[i].name);
	for (size_t i = 0; off < len && i < sizeof(groups) / sizeof(groups[0]);
	     i++)
		if (a->dhgroup == groups[i].id &&
		    a->dhgroup != NVME_AUTH_DHGROUP_NULL)
			snprintf(buf + off, len - off, " dhchap-dhgroup=%s",
				 groups[i].name);
	OPENSSL_cleanse(k, sizeof(k));
}

struct nvmf_auth_cfg *nvmf_auth_cfg_dup(const struct nvmf_auth_cfg *a)
{
	struct nvmf_auth_cfg *d = malloc(sizeof(*d));

	if (d)
		*d = *a;
	return d;
}

void nvmf_auth_cfg_free(struct nvmf_auth_cfg *a)
{
	if (!a)
		return;
	OPENSSL_cleanse(a, sizeof(*a));
	free(a);
}

int nvmf_hosts_grow(char ***hosts, struct nvmf_auth_cfg ***auth, size_t n)
{
	char **h = realloc(*hosts, (n + 1) * sizeof(*h));
	struct nvmf_auth_cfg **a;

	if (h)
		*hosts = h;
	a = realloc(*auth, (n + 1) * sizeof(*a));
	if (a)
		*auth = a;
	return h && a ? 0 : -ENOMEM;
}
