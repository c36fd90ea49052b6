/*
 * initiators/nbd/nbd_proto.c - the NBD wire protocol (nbd_proto.h).
 */
#include "initiators/nbd/nbd_proto.h"

#include <errno.h>
#include <string.h>

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

void nbd_neg_greeting(uint8_t out[NBDP_GREETING_LEN])
{
	put64(out, NBDP_MAGIC);
	put64(out + 8, NBDP_IHAVEOPT);
	put16(out + 16, NBDP_FLAG_FIXED_NEWSTYLE | NBDP_FLAG_NO_ZEROES);
}

int nbd_neg_client_flags(struct nbd_neg *n, const struct nbd_export *exp,
			 const uint8_t b[4])
{
	uint32_t f = get32(b);

	n->exp = exp;
	n->no_zeroes = false;
	if (!(f & NBDP_FLAG_C_FIXED_NEWSTYLE) ||
	    (f & ~(NBDP_FLAG_C_FIXED_NEWSTYLE | NBDP_FLAG_C_NO_ZEROES)))
		return -EPROTO;
	n->no_zeroes = f & NBDP_FLAG_C_NO_ZEROES;
	return 0;
}

int nbd_opt_parse(const uint8_t b[NBDP_OPT_HDR_LEN], struct nbd_opt *o)
{
	if (get64(b) != NBDP_IHAVEOPT)
		return -EBADMSG;
	o->opt = get32(b + 8);
	o->len = get32(b + 12);
	return o->len > NBDP_OPT_MAX ? -EMSGSIZE : 0;
}

/* Appends an option reply header and @len data bytes. */
static size_t rep(uint8_t *out, uint32_t opt, uint32_t type, const void *data,
		  uint32_t len)
{
	put64(out, NBDP_REP_MAGIC);
	put32(out + 8, opt);
	put32(out + 12, type);
	put32(out + 16, len);
	if (len)
		memcpy(out + NBDP_OPT_REP_HDR_LEN, data, len);
	return NBDP_OPT_REP_HDR_LEN + len;
}

static bool name_ok(const struct nbd_export *e, const uint8_t *name,
		    uint32_t len)
{
	size_t el = strlen(e->name);

	return len == 0 || (len == el && !memcmp(name, e->name, len));
}

/* INFO / GO: u32 name length, name, u16 n, n x u16 info requests. */
static enum nbd_neg_result info_go(struct nbd_neg *n, const struct nbd_opt *o,
				   const uint8_t *p, uint8_t *out,
				   size_t *outlen)
{
	const struct nbd_export *e = n->exp;
	bool want_bs = false;
	uint32_t nl, nreq;
	uint8_t d[14];

	if (o->len < 6 || (nl = get32(p)) > o->len - 6 ||
	    o->len != 6 + nl + 2 * (uint64_t)(nreq = get16(p + 4 + nl))) {
		*outlen = rep(out, o->opt, NBDP_REP_ERR_INVALID, NULL, 0);
		return NBD_NEG_CONTINUE;
	}
	for (uint32_t i = 0; i < nreq; i++)
		if (get16(p + 6 + nl + 2 * i) == NBDP_INFO_BLOCK_SIZE)
			want_bs = true;
	if (!name_ok(e, p + 4, nl)) {
		*outlen = rep(out, o->opt, NBDP_REP_ERR_UNKNOWN, NULL, 0);
		return NBD_NEG_CONTINUE;
	}
	put16(d, NBDP_INFO_EXPORT);
	put64(d + 2, e->size);
	put16(d + 10, e->tflags);
	*outlen = rep(out, o->opt, NBDP_REP_INFO, d, 12);
	if (want_bs) {
		put16(d, NBDP_INFO_BLOCK_SIZE);
		put32(d + 2, e->block);
		put32(d + 6, e->block > 4096 ? e->block : 4096);
		put32(d + 10, e->max_payload);
		*outlen += rep(out + *outlen, o->opt, NBDP_REP_INFO, d, 14);
	}
	*outlen += rep(out + *outlen, o->opt, NBDP_REP_ACK, NULL, 0);
	return o->opt == NBDP_OPT_GO ? NBD_NEG_TRANSMIT : NBD_NEG_CONTINUE;
}

enum nbd_neg_result nbd_neg_option(struct nbd_neg *n, const struct nbd_opt *o,
				   const uint8_t *payload, uint8_t *out,
				   size_t cap, size_t *outlen)
{
	*outlen = 0;
	if (cap < NBD_NEG_OUT_MAX || !n->exp)
		return NBD_NEG_CLOSE;
	switch (o->opt) {
	case NBDP_OPT_EXPORT_NAME:
		/* No error reply exists for this option: close. */
		if (!name_ok(n->exp, payload, o->len))
			return NBD_NEG_CLOSE;
		put64(out, n->exp->size);
		put16(out + 8, n->exp->tflags);
		*outlen = 10;
		if (!n->no_zeroes) {
			memset(out + 10, 0, 124);
			*outlen += 124;
		}
		return NBD_NEG_TRANSMIT;
	case NBDP_OPT_ABORT:
		*outlen = rep(out, o->opt, NBDP_REP_ACK, NULL, 0);
		return NBD_NEG_CLOSE;
	case NBDP_OPT_INFO:
	case NBDP_OPT_GO:
		return info_go(n, o, payload, out, outlen);
	default:
		*outlen = rep(out, o->opt, NBDP_REP_ERR_UNSUP, NULL, 0);
		return NBD_NEG_CONTINUE;
	}
}

int nbd_req_parse(const uint8_t b[NBDP_REQ_LEN], struct nbd_req *r)
{
	if (get32(b) != NBDP_REQUEST_MAGIC)
		return -EBADMSG;
	r->flags = get16(b + 4);
	r->type = get16(b + 6);
	r->handle = get64(b + 8);
	r->offset = get64(b + 16);
	r->len = get32(b + 24);
	return 0;
}

uint32_t nbd_req_check(const struct nbd_export *exp, const struct nbd_req *r,
		       bool *fatal)
{
	bool past_end = r->offset > exp->size || r->len > exp->size - r->offset;
	bool aligned = exp->block <= 1 || (r->offset % exp->block == 0 &&
					   r->len % exp->block == 0);

	*fatal = false;
	switch (r->type) {
	case NBDP_CMD_READ:
	case NBDP_CMD_WRITE:
		if (r->len > exp->max_payload) {
			*fatal = r->type == NBDP_CMD_WRITE;
			return NBDP_EOVERFLOW;
		}
		if (r->type == NBDP_CMD_WRITE &&
		    (exp->tflags & NBDP_TFLAG_READ_ONLY))
			return NBDP_EPERM;
		if (r->len == 0 || !aligned)
			return NBDP_EINVAL;
		if (past_end)
			return r->type == NBDP_CMD_READ ? NBDP_EINVAL
							: NBDP_ENOSPC;
		return 0;
	case NBDP_CMD_FLUSH:
		if (!(exp->tflags & NBDP_TFLAG_SEND_FLUSH))
			return NBDP_ENOTSUP;
		return 0;
	case NBDP_CMD_TRIM:
	case NBDP_CMD_WRITE_ZEROES:
		if (!(exp->tflags & (r->type == NBDP_CMD_TRIM
					     ? NBDP_TFLAG_SEND_TRIM
					     : NBDP_TFLAG_SEND_WRITE_ZEROES)))
			return NBDP_ENOTSUP;
		if (r->len == 0 || !aligned)
			return NBDP_EINVAL;
		return past_end ? NBDP_ENOSPC : 0;
	default:
		return NBDP_EINVAL;
	}
}

void nbd_reply(uint8_t out[NBDP_REPLY_LEN], uint32_t error, uint64_t handle)
{
	put32(out, NBDP_SIMPLE_REPLY);
	put32(out + 4, error);
	put64(out + 8, handle);
}

uint32_t nbd_errno(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return 0;
	case EPERM:
		return NBDP_EPERM;
	case ENOMEM:
		return NBDP_ENOMEM;
	case EINVAL:
		return NBDP_EINVAL;
	case ENOSPC:
		return NBDP_ENOSPC;
	case EOVERFLOW:
		return NBDP_EOVERFLOW;
	case EOPNOTSUPP:
		return NBDP_ENOTSUP;
	default:
		return NBDP_EIO;
	}
}
