/*
 * nbd_fuzz.c - wharf-nbd's NBD wire parsing (initiators/nbd/nbd_proto.h)
 * on peer bytes.  Byte 0 picks the stage: even, the handshake (4 bytes
 * of client flags, then options: a 16-byte header and its payload, as
 * many as the input holds); odd, the transmission phase (28-byte
 * requests, each parsed and checked against a small export).  Every
 * option reply fits its buffer and is a well-formed series of replies
 * (or the 10 / 134 bytes of EXPORT_NAME); every request accepted lies
 * inside the export, aligned, within the payload limit.
 */
#include <errno.h>
#include <string.h>

#include "initiators/nbd/nbd_proto.h"
#include "tests/fuzz/fuzz_check.h"

static const struct nbd_export exp = {
	.name = "disk",
	.size = 1u << 20,
	.tflags = NBDP_TFLAG_HAS_FLAGS | NBDP_TFLAG_SEND_FLUSH |
		  NBDP_TFLAG_SEND_TRIM | NBDP_TFLAG_SEND_WRITE_ZEROES,
	.block = 512,
	.max_payload = 65536,
};

static uint64_t get(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void check_replies(const uint8_t *out, size_t len, uint32_t opt)
{
	size_t at = 0;

	while (at < len) {
		CHECK(at + NBDP_OPT_REP_HDR_LEN <= len);
		CHECK(get(out + at, 8) == NBDP_REP_MAGIC);
		CHECK(get(out + at + 8, 4) == opt);
		at += NBDP_OPT_REP_HDR_LEN + get(out + at + 16, 4);
	}
	CHECK(at == len);
}

static void handshake(const uint8_t *d, size_t n)
{
	struct nbd_neg neg;
	uint8_t out[NBD_NEG_OUT_MAX];

	if (n < 4 || nbd_neg_client_flags(&neg, &exp, d))
		return;
	d += 4;
	n -= 4;
	while (n >= NBDP_OPT_HDR_LEN) {
		struct nbd_opt o;
		enum nbd_neg_result res;
		size_t olen = 0;
		int rc = nbd_opt_parse(d, &o);

		if (rc) {
			CHECK(rc == -EBADMSG || rc == -EMSGSIZE);
			return;
		}
		d += NBDP_OPT_HDR_LEN;
		n -= NBDP_OPT_HDR_LEN;
		if (o.len > n)
			return;
		res = nbd_neg_option(&neg, &o, d, out, sizeof(out), &olen);
		CHECK(olen <= sizeof(out));
		if (o.opt == NBDP_OPT_EXPORT_NAME) {
			CHECK(res != NBD_NEG_CONTINUE);
			CHECK(res == NBD_NEG_CLOSE ? olen == 0
						   : olen == 10 || olen == 134);
		} else {
			CHECK(olen >= NBDP_OPT_REP_HDR_LEN);
			check_replies(out, olen, o.opt);
			CHECK(res != NBD_NEG_TRANSMIT || o.opt == NBDP_OPT_GO);
		}
		if (res != NBD_NEG_CONTINUE)
			return;
		d += o.len;
		n -= o.len;
	}
}

static void transmission(const uint8_t *d, size_t n)
{
	for (; n >= NBDP_REQ_LEN; d += NBDP_REQ_LEN, n -= NBDP_REQ_LEN) {
		struct nbd_req r;
		bool fatal = true;
		uint32_t err;

		if (nbd_req_parse(d, &r)) {
			CHECK(get(d, 4) != NBDP_REQUEST_MAGIC);
			return;
		}
		if (r.type == NBDP_CMD_DISC)
			return;
		err = nbd_req_check(&exp, &r, &fatal);
		CHECK(!fatal || (err && r.type == NBDP_CMD_WRITE));
		if (err || r.type == NBDP_CMD_FLUSH)
			continue;
		CHECK(r.len > 0 && r.len % exp.block == 0);
		CHECK(r.offset % exp.block == 0);
		CHECK(r.offset < exp.size && r.len <= exp.size - r.offset);
		CHECK(r.type == NBDP_CMD_TRIM ||
		      r.type == NBDP_CMD_WRITE_ZEROES ||
		      r.len <= exp.max_payload);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		transmission(data + 1, size - 1);
	else
		handshake(data + 1, size - 1);
	return 0;
}
