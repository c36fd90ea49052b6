/*
 * proto/nvme/auth.h - the pure pieces of NVMe in-band authentication
 * (DH-HMAC-CHAP, NVMe base 2.0 8.13) that the target and the host share:
 * DHHC-1 secrets, the key transformation, the two responses, the
 * augmented challenge and the FFDHE exchange. No state machine and no
 * I/O: the callers carry the messages of spec_fabrics.h.
 *
 * Byte for byte what the Linux kernel (nvme host and nvmet, 6.12)
 * computes, on OpenSSL 3.0's libcrypto:
 *
 *  - Secret: "DHHC-1:XX:<base64(key || CRC-32(key) little-endian)>:",
 *    XX the transformation hash (00 none, 01 SHA-256, 02 SHA-384,
 *    03 SHA-512), the key 32, 48 or 64 bytes, in any combination
 *    with XX (the kernel, 6.12 included, accepts any pairing).
 *  - Transformed key: HMAC-H(key, NQN || "NVMe-over-Fabrics"), H the
 *    secret's XX hash, so as long as H's digest; XX 00: the key as is.
 *    The host key is transformed with the host NQN, the controller key
 *    with the subsystem NQN.
 *  - Host response R1 = HMAC-Hc(transformed host key, C1 || le32 S1 ||
 *    le16 T_ID || 0x00 || "HostHost" || host NQN || 0x00 || subsystem
 *    NQN). Controller response R2 = HMAC-Hc(transformed controller
 *    key, C2 || le32 S2 || le16 T_ID || 0x00 || "Controller" ||
 *    subsystem NQN || 0x00 || host NQN). Hc is the Challenge's HASHID
 *    (unrelated to XX), challenges and responses are Hc's digest long,
 *    NQNs without their NUL. The 0x00 after T_ID is the secure channel
 *    byte, always 0 on RDMA.
 *  - With a DH group, C1 and C2 are replaced by their augmented form
 *    HMAC-Hc(Hc(shared secret), C) before the response is computed.
 *  - FFDHE (RFC 7919 groups): public values and the shared secret are
 *    big-endian and zero-padded to the group's size (256 .. 1024 bytes).
 *
 * Every secret this code derives on the way (decoded text, transformed
 * key, hashed shared secret, augmented challenge) is cleansed before it
 * returns, on every path; struct nvme_auth_key and the outputs are the
 * caller's to clear (nvme_auth_key_clear(), OPENSSL_cleanse()).
 *
 * All functions: any thread, reentrant, non-blocking (the FFDHE ones take
 * milliseconds of CPU for the large groups). Errors are negative errno.
 */
#ifndef WHARF_PROTO_NVME_AUTH_H
#define WHARF_PROTO_NVME_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/nvme/spec_fabrics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest digest (SHA-512): challenges, responses, transformed keys. */
#define NVME_AUTH_MAX_HASH_LEN 64
/* The longest secret key. */
#define NVME_AUTH_KEY_MAX 64
/* "DHHC-1:XX:" + base64 of 64 + 4 bytes (92) + ":" + NUL. */
#define NVME_AUTH_KEY_TEXT_MAX 104
/* The largest FFDHE public value / shared secret (ffdhe8192). */
#define NVME_AUTH_DH_MAX_LEN 1024

/* A DH-HMAC-CHAP secret, decoded. */
struct nvme_auth_key {
	uint8_t hash; /* transformation: 0 none, else NVME_AUTH_HASH_* */
	uint8_t len;  /* 32, 48 or 64 */
	uint8_t key[NVME_AUTH_KEY_MAX];
};

/**
 * nvme_auth_key_parse() - decode a "DHHC-1:XX:<base64>:" secret.
 * @text: the NUL-terminated secret, exactly in that form (no blanks; the
 *        trailing ':' is required). Base64 with or without '=' padding.
 * @key: the decoded key (untouched on failure).
 *
 * Stricter than the kernel, which also takes the text without its
 * trailing ':' (and nvmet trims blanks around it): trim a configuration
 * file's whitespace before calling.
 *
 * Return: 0; -EINVAL if @text or @key is NULL, the prefix is not
 * "DHHC-1:", XX is not two digits 00..03, the trailing ':' is missing,
 * the base64 is malformed, the decoded length is not 36, 52 or 68
 * bytes, or the CRC-32 does not match.
 */
int nvme_auth_key_parse(const char *text, struct nvme_auth_key *key);

/**
 * nvme_auth_key_format() - encode a key as a DHHC-1 secret (padded
 * base64, as nvme-cli's gen-dhchap-key prints it).
 * @key: hash 0..3, len 32, 48 or 64.
 * @buf: where the NUL-terminated text goes.
 * @size: its size (NVME_AUTH_KEY_TEXT_MAX always fits).
 *
 * Return: the text's length (without the NUL); -EINVAL for a NULL
 * argument or an invalid @key; -ENOSPC if @size is too small.
 */
int nvme_auth_key_format(const struct nvme_auth_key *key, char *buf,
			 size_t size);

/* nvme_auth_key_clear() - cleanse a key (NULL is ignored). */
void nvme_auth_key_clear(struct nvme_auth_key *key);

/* nvme_auth_key_valid() - whether @text is a secret nvme_auth_key_parse()
 * takes (the key decoded on the way is cleansed). */
bool nvme_auth_key_valid(const char *text);

/* The digest length of a hash ID (32, 48, 64), 0 if unknown. */
size_t nvme_auth_hash_len(uint8_t hash_id);

/* "sha256", "sha384", "sha512"; NULL if unknown. */
const char *nvme_auth_hash_name(uint8_t hash_id);

/**
 * nvme_auth_hash() - H(@data) for a hash ID.
 * @out: nvme_auth_hash_len(@hash_id) bytes.
 *
 * Return: 0; -EINVAL for an unknown hash or a NULL pointer (@data may be
 * NULL when @len is 0); -EIO if libcrypto fails.
 */
int nvme_auth_hash(uint8_t hash_id, const void *data, size_t len, uint8_t *out);

/**
 * nvme_auth_hmac() - HMAC-H(@key, @data) for a hash ID.
 * @key: @key_len >= 1 bytes.
 * @out: nvme_auth_hash_len(@hash_id) bytes.
 *
 * Return: 0; -EINVAL for an unknown hash, an empty key or a NULL pointer
 * (@data may be NULL when @len is 0); -ENOMEM / -EIO if libcrypto fails.
 */
int nvme_auth_hmac(uint8_t hash_id, const void *key, size_t key_len,
		   const void *data, size_t len, uint8_t *out);

/**
 * nvme_auth_transform_key() - the transformed key of a secret.
 * @key: the secret (hash 0..3, len 32, 48 or 64).
 * @nqn: the host NQN for the host key, the subsystem NQN for the
 *       controller key.
 * @out: NVME_AUTH_MAX_HASH_LEN bytes.
 * @out_len: the transformed key's length (the hash's digest, or @key's
 *           length when it has no transformation hash).
 *
 * Return: 0; -EINVAL for a NULL argument or an invalid @key; -ENOMEM /
 * -EIO if libcrypto fails (@out cleansed).
 */
int nvme_auth_transform_key(const struct nvme_auth_key *key, const char *nqn,
			    uint8_t *out, size_t *out_len);

/**
 * nvme_auth_augmented_challenge() - HMAC-H(H(@skey), @challenge).
 * @skey: the DH shared secret, @skey_len >= 1 bytes.
 * @challenge: nvme_auth_hash_len(@hash_id) bytes.
 * @out: as many bytes.
 *
 * Return: 0; -EINVAL for an unknown hash, an empty secret or a NULL
 * pointer; -ENOMEM / -EIO if libcrypto fails (@out cleansed).
 */
int nvme_auth_augmented_challenge(uint8_t hash_id, const uint8_t *skey,
				  size_t skey_len, const uint8_t *challenge,
				  uint8_t *out);

/* What both responses of one transaction are computed over. */
struct nvme_auth_xchg {
	uint8_t hash_id;       /* the Challenge's HASHID */
	uint16_t t_id;	       /* the transaction ID of the messages */
	const char *hostnqn;   /* as the Connect data carried it */
	const char *subsysnqn; /* likewise */
	const uint8_t *skey;   /* DH shared secret; NULL for the null group */
	size_t skey_len;       /* its length (the group size), 0 if NULL */
};

/**
 * nvme_auth_host_response() - R1, the host's response to C1 / S1.
 * @host_key: the host's secret (transformed here with x->hostnqn).
 * @x: the transaction.
 * @c1: the controller's challenge, nvme_auth_hash_len(x->hash_id) bytes.
 * @s1: the Challenge's SEQNUM.
 * @r1: as many bytes: what the host sends in its Reply, what the
 *      controller compares the Reply with (nvme_auth_equal()).
 *
 * Return: 0; -EINVAL for a NULL argument, an unknown hash, an invalid
 * key or skey / skey_len disagreeing; -ENOMEM / -EIO if libcrypto fails
 * (@r1 cleansed).
 */
int nvme_auth_host_response(const struct nvme_auth_key *host_key,
			    const struct nvme_auth_xchg *x, const uint8_t *c1,
			    uint32_t s1, uint8_t *r1);

/**
 * nvme_auth_ctrl_response() - R2, the controller's response to C2 / S2
 * (bidirectional authentication).
 * @ctrl_key: the controller's secret (transformed with x->subsysnqn).
 * @c2: the host's challenge from its Reply.
 * @s2: the Reply's SEQNUM.
 * @r2: nvme_auth_hash_len(x->hash_id) bytes: Success1's response.
 *
 * Return: as nvme_auth_host_response().
 */
int nvme_auth_ctrl_response(const struct nvme_auth_key *ctrl_key,
			    const struct nvme_auth_xchg *x, const uint8_t *c2,
			    uint32_t s2, uint8_t *r2);

/* Constant-time comparison of two responses. */
bool nvme_auth_equal(const uint8_t *a, const uint8_t *b, size_t len);

/**
 * nvme_auth_random() - @len bytes from libcrypto's CSPRNG (challenges).
 * Return: 0; -EINVAL; -EIO if the generator failed (@buf not to be used).
 * Context: any thread; does not block once the generator is seeded.
 */
int nvme_auth_random(void *buf, size_t len);

/* ---- FFDHE (auth_dh.c) --------------------------------------------- */

/* One side's DH key pair of an exchange (the private key inside). */
struct nvme_auth_dh;

/* A group's size in bytes (256 .. 1024); 0 for the null group / unknown. */
size_t nvme_auth_dhgroup_len(uint8_t dhgid);

/* "null", "ffdhe2048" .. "ffdhe8192"; NULL if unknown. */
const char *nvme_auth_dhgroup_name(uint8_t dhgid);

/**
 * nvme_auth_dh_generate() - a fresh key pair in an FFDHE group.
 * @dhgid: NVME_AUTH_DHGROUP_2048 .. _8192.
 * @dh: the key pair, for nvme_auth_dh_free().
 *
 * Return: 0; -EINVAL for the null group, an unknown group or a NULL @dh;
 * -ENOMEM / -EIO if libcrypto fails.
 */
int nvme_auth_dh_generate(uint8_t dhgid, struct nvme_auth_dh **dh);

/**
 * nvme_auth_dh_import() - a key pair from a given private key (known
 * answer tests and tools; an exchange uses nvme_auth_dh_generate()).
 * @priv: the private exponent, big-endian, @len bytes, 1 < x < p - 1.
 *
 * Return: as nvme_auth_dh_generate(); -EINVAL for an out-of-range key.
 */
int nvme_auth_dh_import(uint8_t dhgid, const uint8_t *priv, size_t len,
			struct nvme_auth_dh **dh);

/**
 * nvme_auth_dh_public() - the public value g^x mod p to send.
 * @out: big-endian, zero-padded to @len.
 * @len: exactly nvme_auth_dhgroup_len() of the group.
 *
 * Return: 0; -EINVAL for a NULL argument or another length; -EIO if
 * libcrypto fails.
 */
int nvme_auth_dh_public(const struct nvme_auth_dh *dh, uint8_t *out,
			size_t len);

/**
 * nvme_auth_dh_shared() - the shared secret with the peer's public value.
 * @peer: the peer's public value as received: big-endian, exactly the
 *        group's size, 1 < y < p - 1 and in the prime-order subgroup.
 * @out: the shared secret, big-endian, zero-padded to @len.
 * @len: the group's size.
 *
 * Return: 0; -EINVAL for a NULL argument, a wrong length or an invalid
 * peer value (the exchange fails: DH group not usable / incorrect
 * payload); -ENOMEM / -EIO if libcrypto fails (@out cleansed).
 */
int nvme_auth_dh_shared(const struct nvme_auth_dh *dh, const uint8_t *peer,
			size_t peer_len, uint8_t *out, size_t len);

/* nvme_auth_dh_free() - free a key pair, cleansing it (NULL ignored). */
void nvme_auth_dh_free(struct nvme_auth_dh *dh);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_PROTO_NVME_AUTH_H */
