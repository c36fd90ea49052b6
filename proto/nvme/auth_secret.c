/*
 * proto/nvme/auth_secret.c - DH-HMAC-CHAP secrets as text: the
 * "DHHC-1:XX:<base64(key || CRC-32 le)>:" representation (NVMe base 2.0
 * 8.13.5.8) that nvme-cli, the kernel's configfs / sysfs and wharf's
 * configuration exchange. Strict: one form only, every error -EINVAL.
 */
#include "proto/nvme/auth.h"

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

#define PREFIX	   "DHHC-1:"
#define PREFIX_LEN 7
#define HEAD_LEN   10 /* "DHHC-1:XX:" */
#define CRC_LEN	   4
/* The decoded key and CRC, at most. */
#define RAW_MAX (NVME_AUTH_KEY_MAX + CRC_LEN)

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* CRC-32 (IEEE 802.3, reflected; zlib's crc32()), the kernel's ~crc32(~0). */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
	}
	return ~c;
}

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Standard base64 (RFC 4648), '=' padding optional but, when present,
 * complete; the unused low bits of the last character must be zero.
 */
static int b64_decode(const char *s, size_t n, uint8_t *out, size_t cap,
		      size_t *out_len)
{
	size_t pad = 0, o = 0;
	uint32_t acc = 0;
	unsigned int bits = 0;

	while (n > 0 && s[n - 1] == '=' && pad < 2) {
		n--;
		pad++;
	}
	if ((pad && (n + pad) % 4) || n % 4 == 1)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int v = b64_value((unsigned char)s[i]);

		if (v < 0)
			return -EINVAL;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o == cap)
				return -EINVAL;
			out[o++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (acc)
		return -EINVAL;
	*out_len = o;
	return 0;
}

static size_t b64_encode(const uint8_t *in, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		size_t left = n - i;

		if (left > 1)
			v |= (uint32_t)in[i + 1] << 8;
		if (left > 2)
			v |= in[i + 2];
		out[o++] = b64_alphabet[v >> 18 & 63];
		out[o++] = b64_alphabet[v >> 12 & 63];
		out[o++] = left > 1 ? b64_alphabet[v >> 6 & 63] : '=';
		out[o++] = left > 2 ? b64_alphabet[v & 63] : '=';
	}
	return o;
}

static bool key_len_ok(size_t len)
{
	return len == 32 || len == 48 || len == 64;
}

int nvme_auth_key_parse(const char *text, struct nvme_auth_key *key)
{
	uint8_t raw[RAW_MAX];
	size_t len, raw_len = 0, key_len;
	uint32_t crc;
	int ret = -EINVAL;

	if (!text || !key)
		return -EINVAL;
	len = strlen(text);
	if (len < HEAD_LEN + 1 || memcmp(text, PREFIX, PREFIX_LEN) ||
	    text[7] != '0' || text[8] < '0' || text[8] > '3' ||
	    text[9] != ':' || text[len - 1] != ':')
		return -EINVAL;
	if (b64_decode(text + HEAD_LEN, len - HEAD_LEN - 1, raw, sizeof(raw),
		       &raw_len))
		goto out;
	if (raw_len < CRC_LEN || !key_len_ok(raw_len - CRC_LEN))
		goto out;
	key_len = raw_len - CRC_LEN;
	crc = (uint32_t)raw[key_len] | (uint32_t)raw[key_len + 1] << 8 |
	      (uint32_t)raw[key_len + 2] << 16 |
	      (uint32_t)raw[key_len + 3] << 24;
	if (crc != crc32_ieee(raw, key_len))
		goto out;
	memset(key, 0, sizeof(*key));
	key->hash = (uint8_t)(text[8] - '0');
	key->len = (uint8_t)key_len;
	memcpy(key->key, raw, key_len);
	ret = 0;
out:
	OPENSSL_cleanse(raw, sizeof(raw));
	return ret;
}

int nvme_auth_key_format(const struct nvme_auth_key *key, char *buf,
			 size_t size)
{
	uint8_t raw[RAW_MAX];
	size_t need, o;
	uint32_t crc;

	if (!key || !buf || key->hash > NVME_AUTH_HASH_SHA512 ||
	    !key_len_ok(key->len))
		return -EINVAL;
	/* prefix, base64 of key + CRC, ':' and the NUL */
	need = HEAD_LEN + (key->len + CRC_LEN + 2) / 3 * 4 + 2;
	if (size < need)
		return -ENOSPC;
	memcpy(raw, key->key, key->len);
	crc = crc32_ieee(key->key, key->len);
	for (int i = 0; i < CRC_LEN; i++)
		raw[key->len + i] = (uint8_t)(crc >> (8 * i));
	memcpy(buf, PREFIX, PREFIX_LEN);
	buf[7] = '0';
	buf[8] = (char)('0' + key->hash);
	buf[9] = ':';
	o = HEAD_LEN + b64_encode(raw, key->len + CRC_LEN, buf + HEAD_LEN);
	buf[o++] = ':';
	buf[o] = '\0';
	OPENSSL_cleanse(raw, sizeof(raw));
	return (int)o;
}

void nvme_auth_key_clear(struct nvme_auth_key *key)
{
	if (key)
		OPENSSL_cleanse(key, sizeof(*key));
}

bool nvme_auth_key_valid(const char *text)
{
	struct nvme_auth_key k;
	bool ok = !nvme_auth_key_parse(text, &k);

	nvme_auth_key_clear(&k);
	return ok;
}
