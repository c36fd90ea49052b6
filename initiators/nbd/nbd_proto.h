/*
 * initiators/nbd/nbd_proto.h - the NBD wire protocol as wharf-nbd speaks
 * it: the fixed newstyle handshake (greeting, client flags, options and
 * their replies) and the transmission phase (28-byte requests, 16-byte
 * simple replies).  Pure functions over byte buffers, no I/O and no
 * state beyond struct nbd_neg: the unit tests and the fuzz target drive
 * them with any bytes.  All integers on the wire are big-endian.
 *
 * Negotiation (nbd_neg_*): the server sends the greeting; the client
 * answers 4 bytes of flags; then each option (16-byte header, payload)
 * goes through nbd_neg_option(), which writes the reply bytes and says
 * whether to go on, enter transmission or close.  Options other than
 * EXPORT_NAME, INFO, GO and ABORT are refused with NBD_REP_ERR_UNSUP.
 *
 * Transmission (nbd_req_*): nbd_req_parse() checks the magic;
 * nbd_req_check() decides what a request may do against the export
 * (alignment, range, size limit) and returns the NBD error to reply.
 */
#ifndef WHARF_INITIATORS_NBD_PROTO_H
#define WHARF_INITIATORS_NBD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NBDP_MAGIC	     0x4e42444d41474943ull /* "NBDMAGIC" */
#define NBDP_IHAVEOPT	     0x49484156454f5054ull /* "IHAVEOPT" */
#define NBDP_REP_MAGIC	     0x3e889045565a9ull
#define NBDP_REQUEST_MAGIC   0x25609513u
#define NBDP_SIMPLE_REPLY    0x67446698u
#define NBDP_GREETING_LEN    18u
#define NBDP_OPT_HDR_LEN     16u
#define NBDP_OPT_REP_HDR_LEN 20u
#define NBDP_REQ_LEN	     28u
#define NBDP_REPLY_LEN	     16u
/* Longest option payload accepted (an NBD name is at most 4 KiB). */
#define NBDP_OPT_MAX 8192u

/* Handshake flags (server) and client flags. */
#define NBDP_FLAG_FIXED_NEWSTYLE   (1u << 0)
#define NBDP_FLAG_NO_ZEROES	   (1u << 1)
#define NBDP_FLAG_C_FIXED_NEWSTYLE (1u << 0)
#define NBDP_FLAG_C_NO_ZEROES	   (1u << 1)

/* Options. */
#define NBDP_OPT_EXPORT_NAME 1u
#define NBDP_OPT_ABORT	     2u
#define NBDP_OPT_INFO	     6u
#define NBDP_OPT_GO	     7u

/* Option reply types. */
#define NBDP_REP_ACK	      1u
#define NBDP_REP_INFO	      3u
#define NBDP_REP_ERR_UNSUP    (0x80000000u | 1)
#define NBDP_REP_ERR_INVALID  (0x80000000u | 3)
#define NBDP_REP_ERR_UNKNOWN  (0x80000000u | 6)
#define NBDP_REP_ERR_TOO_BIG  (0x80000000u | 9)
#define NBDP_INFO_EXPORT      0u
#define NBDP_INFO_NAME	      1u
#define NBDP_INFO_DESCRIPTION 2u
#define NBDP_INFO_BLOCK_SIZE  3u

/* Transmission flags. */
#define NBDP_TFLAG_HAS_FLAGS	     (1u << 0)
#define NBDP_TFLAG_READ_ONLY	     (1u << 1)
#define NBDP_TFLAG_SEND_FLUSH	     (1u << 2)
#define NBDP_TFLAG_SEND_FUA	     (1u << 3)
#define NBDP_TFLAG_SEND_TRIM	     (1u << 5)
#define NBDP_TFLAG_SEND_WRITE_ZEROES (1u << 6)
#define NBDP_TFLAG_CAN_MULTI_CONN    (1u << 8)

/* Commands and their flags. */
#define NBDP_CMD_READ	      0u
#define NBDP_CMD_WRITE	      1u
#define NBDP_CMD_DISC	      2u
#define NBDP_CMD_FLUSH	      3u
#define NBDP_CMD_TRIM	      4u
#define NBDP_CMD_WRITE_ZEROES 6u
#define NBDP_CMD_FLAG_FUA     (1u << 0)
#define NBDP_CMD_FLAG_NO_HOLE (1u << 1)

/* Error values of replies. */
#define NBDP_EPERM     1u
#define NBDP_EIO       5u
#define NBDP_ENOMEM    12u
#define NBDP_EINVAL    22u
#define NBDP_ENOSPC    28u
#define NBDP_EOVERFLOW 75u
#define NBDP_ENOTSUP   95u

/* What the export offers, fixed before negotiation. */
struct nbd_export {
	const char *name;     /* also "" (the default export) is accepted */
	uint64_t size;	      /* bytes */
	uint16_t tflags;      /* NBDP_TFLAG_*, HAS_FLAGS included */
	uint32_t block;	      /* minimum (and alignment) block size */
	uint32_t max_payload; /* largest READ / WRITE */
};

enum nbd_neg_result {
	NBD_NEG_CONTINUE = 0, /* reply written; read the next option */
	NBD_NEG_TRANSMIT,     /* reply written; transmission starts */
	NBD_NEG_CLOSE,	      /* reply (if any) written; close */
};

struct nbd_neg {
	const struct nbd_export *exp;
	bool no_zeroes; /* the client set C_NO_ZEROES */
};

/* The 18-byte greeting into @out. */
void nbd_neg_greeting(uint8_t out[NBDP_GREETING_LEN]);
/* The client's 4 flag bytes: 0, or -EPROTO when FIXED_NEWSTYLE is
 * missing or an unknown bit is set (close the connection). */
int nbd_neg_client_flags(struct nbd_neg *n, const struct nbd_export *exp,
			 const uint8_t b[4]);

struct nbd_opt {
	uint32_t opt;
	uint32_t len; /* payload bytes that follow */
};

/* A 16-byte option header: 0, -EBADMSG for a wrong magic, -EMSGSIZE when
 * the payload exceeds NBDP_OPT_MAX (close in both cases). */
int nbd_opt_parse(const uint8_t b[NBDP_OPT_HDR_LEN], struct nbd_opt *o);

/*
 * nbd_neg_option - answer one option.
 * @o, @payload: the parsed header and its o->len payload bytes.
 * @out, @cap: where the reply bytes go (cap >= NBD_NEG_OUT_MAX);
 * *@outlen receives how many to send.
 */
#define NBD_NEG_OUT_MAX 256u
enum nbd_neg_result nbd_neg_option(struct nbd_neg *n, const struct nbd_opt *o,
				   const uint8_t *payload, uint8_t *out,
				   size_t cap, size_t *outlen);

struct nbd_req {
	uint16_t flags;
	uint16_t type;
	uint64_t handle;
	uint64_t offset;
	uint32_t len;
};

/* A 28-byte request: 0, or -EBADMSG for a wrong magic (close). */
int nbd_req_parse(const uint8_t b[NBDP_REQ_LEN], struct nbd_req *r);

/*
 * nbd_req_check - what to answer @r on export @exp.
 * Return: 0 (serve it); an NBDP_E* value to reply without serving:
 * NBDP_EINVAL for an unknown command, a range not aligned to the block
 * size or past the end (reads, and zero-length data commands),
 * NBDP_ENOSPC for a write, trim or write-zeroes past the end,
 * NBDP_EOVERFLOW for a READ or WRITE above max_payload, NBDP_ENOTSUP for
 * a command the transmission flags did not offer.  A refused WRITE's
 * payload must still be read and discarded; *@fatal is set when it
 * cannot be, because it is above max_payload (reply, then close).
 */
uint32_t nbd_req_check(const struct nbd_export *exp, const struct nbd_req *r,
		       bool *fatal);

/* A 16-byte simple reply. */
void nbd_reply(uint8_t out[NBDP_REPLY_LEN], uint32_t error, uint64_t handle);

/* errno (negative or positive) to the NBD error value. */
uint32_t nbd_errno(int err);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NBD_PROTO_H */
