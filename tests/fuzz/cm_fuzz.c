/*
 * tests/fuzz/cm_fuzz.c - libFuzzer entry point for every parser of
 * peer-supplied bytes in cm:
 *  - the private-data delivery path (wcm_conn_param_recv / wcm_pdata_recv)
 *    of a received rdma_conn_param, whose numbers also come from the peer;
 *  - accept negotiation against those numbers (NULL, explicit, role
 *    presets), and connect negotiation against fuzzed device limits;
 *  - the busy REJ payload decoder (on the raw input and on the delivered
 *    private data), and the retry decisions that use what it returns.
 * Every call must return one of its documented codes, and every success
 * must respect the negotiation rules; a violation aborts.
 *
 * Input layout (shorter inputs are zero-padded to the header):
 *   0      flags: bit0 UD, bit1 NULL private-data pointer, bit2 explicit
 *          accept parameters
 *   1..6   request: responder_resources, initiator_depth, flow_control,
 *          retry_count, rnr_retry_count, srq
 *   7..10  request qp_num (little-endian)
 *   11,12  device max_qp_rd_atom, max_qp_init_rd_atom
 *   13..15 application responder_resources, initiator_depth, retry counts
 *   16,17  role, queue depth
 *   18..21 random value for backoff
 *   22..   private data (the first 255 bytes are delivered)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "cm/conn_param.h"
#include "cm/rej_busy.h"
#include "tests/fuzz/fuzz_check.h"

#define HDR 22

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Decode peer bytes as a busy payload; check what comes back. */
static void fuzz_busy(const uint8_t *p, size_t len, uint32_t rnd)
{
	struct wcm_rej_busy b;
	struct wcm_retry_policy pol;
	uint8_t again[WCM_BUSY_LEN];
	uint32_t delay;
	int rc = wcm_rej_busy_decode(p, len, &b);

	CHECK(rc == 0 || rc == -ENOMSG || rc == -EPROTO);
	if (rc)
		return;
	CHECK(len >= WCM_BUSY_LEN && !memcmp(p, "WHRF", 4));
	CHECK(b.version >= 1 && b.reason >= 1);
	CHECK(b.retry_after_ms <= WCM_BUSY_RETRY_AFTER_MAX);
	CHECK(b.load_permille <= WCM_BUSY_LOAD_MAX);
	if (b.version == WCM_BUSY_VERSION) {
		/* A valid version 1 header re-encodes to the same bytes. */
		CHECK(b.reason <= WCM_BUSY_REASON_MAX);
		CHECK(!wcm_rej_busy_encode(&b, again, sizeof(again), NULL));
		if (p[5] == WCM_BUSY_LEN)
			CHECK(!memcmp(again, p, WCM_BUSY_LEN));
	}
	wcm_retry_policy_busy_default(&pol);
	rc = wcm_retry_busy(&pol, &b, rnd % 16, rnd, &delay);
	CHECK(rc == 0 || rc == -ECONNREFUSED);
	if (!rc) {
		uint32_t floor = b.retry_after_ms < pol.base_ms
					 ? pol.base_ms
					 : b.retry_after_ms;

		if (floor > pol.cap_ms)
			floor = pol.cap_ms;
		CHECK(delay >= floor && delay <= pol.cap_ms);
	}
}

static void check_negotiated(const struct wcm_conn_param *out, enum wcm_ps ps,
			     const struct wcm_dev_limits *dev,
			     const struct wcm_qp_info *qp)
{
	CHECK(out->qp_num == qp->qp_num);
	CHECK(out->retry_count <= WCM_RETRY_MAX);
	CHECK(out->rnr_retry_count <= WCM_RETRY_MAX);
	CHECK(out->flow_control <= 1 && out->srq <= 1);
	if (ps == WCM_PS_RC) {
		CHECK(out->responder_resources <= dev->max_qp_rd_atom);
		CHECK(out->initiator_depth <= dev->max_qp_init_rd_atom);
	} else {
		CHECK(!out->responder_resources && !out->initiator_depth);
	}
}

static void fuzz_accept(const struct wcm_conn_param *req, const uint8_t *h,
			enum wcm_ps ps, const struct wcm_dev_limits *dev)
{
	struct wcm_qp_info qp = {.qp_num = le32(h + 7) & 0xFFFFFF,
				 .srq = h[6] & 1};
	struct wcm_conn_param app, out;
	int rc;

	rc = wcm_conn_param_accept(NULL, req, ps, dev, &qp, &out);
	CHECK(rc == 0);
	check_negotiated(&out, ps, dev, &qp);
	if (ps == WCM_PS_RC) {
		CHECK(out.initiator_depth <= req->initiator_depth);
		CHECK(out.responder_resources <= req->responder_resources);
	}

	memset(&app, 0, sizeof(app));
	app.responder_resources = h[13];
	app.initiator_depth = h[14];
	app.retry_count = h[15] & 0xF;
	app.rnr_retry_count = h[15] >> 4;
	rc = wcm_conn_param_preset((enum wcm_role)(h[16] % 5), h[17], dev, req,
				   h[0] >> 4 & 3, &app);
	CHECK(rc == 0 || rc == -EINVAL);
	if (h[0] & 4) {
		app.private_data = req->private_data;
		app.private_data_len = req->private_data_len;
	}
	rc = wcm_conn_param_accept(&app, req, ps, dev, &qp, &out);
	CHECK(rc == 0 || rc == -EINVAL);
	if (!rc) {
		check_negotiated(&out, ps, dev, &qp);
		CHECK(out.private_data_len <=
		      wcm_pdata_limit(WCM_MSG_ACCEPT, ps));
		if (ps == WCM_PS_RC)
			CHECK(out.initiator_depth <= req->initiator_depth);
	}

	rc = wcm_conn_param_connect(&app, ps, dev, &qp, &out);
	CHECK(rc == 0 || rc == -EINVAL);
	if (!rc) {
		check_negotiated(&out, ps, dev, &qp);
		CHECK(out.private_data_len <=
		      wcm_pdata_limit(WCM_MSG_CONNECT, ps));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t h[HDR] = {0};
	struct rdma_conn_param ev;
	struct wcm_conn_param req;
	struct wcm_dev_limits dev;
	struct wcm_pdata pd;
	enum wcm_ps ps;
	size_t plen;
	uint32_t rnd, delay;
	int rc;

	if (size)
		memcpy(h, data, size < HDR ? size : HDR);
	ps = (h[0] & 1) ? WCM_PS_UD : WCM_PS_RC;
	rnd = le32(h + 18);
	plen = size > HDR ? size - HDR : 0;
	if (plen > 255)
		plen = 255;

	/* The raw input as REJ private data. */
	fuzz_busy(data, size, rnd);

	memset(&ev, 0, sizeof(ev));
	ev.private_data = (h[0] & 2) ? NULL : (plen ? data + HDR : NULL);
	ev.private_data_len = (uint8_t)plen;
	ev.responder_resources = h[1];
	ev.initiator_depth = h[2];
	ev.flow_control = h[3];
	ev.retry_count = h[4];
	ev.rnr_retry_count = h[5];
	ev.srq = h[6];
	ev.qp_num = le32(h + 7);
	rc = wcm_conn_param_recv(&ev, &req, &pd);
	CHECK(rc == 0 || rc == -EPROTO);
	if (rc) {
		CHECK(ev.private_data == NULL && plen > 0 && pd.len == 0);
		return 0;
	}
	/* Delivered with the reported length, byte for byte. */
	CHECK(pd.len == plen && req.private_data_len == plen);
	CHECK(!plen || !memcmp(pd.bytes, data + HDR, plen));
	CHECK(req.qp_num <= WCM_QP_NUM_MAX);
	fuzz_busy(pd.bytes, pd.len, rnd);

	rc = wcm_dev_limits_init(&dev, h[11], h[12]);
	CHECK(rc == 0 && dev.max_qp_rd_atom <= 254);
	fuzz_accept(&req, h, ps, &dev);

	rc = wcm_retry_stale(&(struct wcm_retry_policy){5, 10, 1000},
			     (int)(rnd % 64), rnd >> 8 & 7, rnd, &delay);
	CHECK(rc == 0 || rc == -ECONNREFUSED);
	if (!rc)
		CHECK(delay >= 10 && delay <= 1000);
	CHECK(wcm_backoff_ms(le32(h + 1), h[5], rnd, le32(h + 11)) <=
	      (le32(h + 11) ? le32(h + 11) : 1));
	return 0;
}
