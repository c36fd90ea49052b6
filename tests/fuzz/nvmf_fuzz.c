/*
 * tests/fuzz/nvmf_fuzz.c - libFuzzer entry point for the NVMe-oF target
 * core's handling of peer bytes: the RDMA CM REQ private data and the
 * command capsules of an admin and an I/O queue, driven the way the RDMA
 * binding will drive them (data buffers attached on NVMF_ACT_READ / _BUF,
 * held AERs resumed after ops->held_ready, killed queues destroyed), mixed
 * with keep-alive scans and namespace events.
 *
 * Every input runs against a fresh target (RAM namespaces), so a run is
 * deterministic and its end is checked: once every queue is destroyed the
 * target's counters (controllers, queues, requests, held requests) must
 * be zero. Each response must echo the command's CID and the queue's ID,
 * keep the phase tag 0 and an SQ head inside the queue; every requested
 * transfer must fit MDTS. A violation aborts. Keyed SGL addresses are
 * never dereferenced: "host data" comes from the input.
 *
 * Input layout (shorter inputs are zero-padded to the header):
 *   0      flags: bit0 admin connects to the discovery subsystem, bit1 do
 *          not enable the controller, bit2 connect I/O queue 1, bit3
 *          disable SQ flow control, bit4 KATO 2 s, bit5 no automatic
 *          Connect at all (the records must connect: both queues exist
 *          from the start), bit7 private data length from byte 33 (else
 *          56, the IB REQ field)
 *   1..32  RDMA CM REQ private data
 *   33..36 host IRD, host ORD, device max_qp_init_rd_atom, max_qp_rd_atom
 *   37..   records: op (1 byte), length (2 bytes LE), payload
 *          op & 3 == 0: capsule to the admin queue; 1: to the I/O queue;
 *          2: event (payload[0] % 5: keep-alive scan, clock +1 s, add RAM
 *          namespace, remove namespace, toggle namespace readiness);
 *          3: resume the held requests that became ready.
 *          op bit 2: fail a data transfer (nvmf_req_fail) instead of
 *          running the command.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/nvmf/nvmf.h"
#include "proto/nvme/spec_fabrics.h"
#include "tests/fuzz/fuzz_check.h"

#define HDR	37
#define NSLOTS	64
#define SUBNQN	"nqn.2024-01.io.wharf:fuzz"
#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:00000000-1111-2222-3333-4444"

static const char config[] = "listen 10.0.0.1\n"
			     "listen fd00::1 4421\n"
			     "queue-depth 32\n"
			     "io-queues 2\n"
			     "in-capsule 1024\n"
			     "max-io-size 16K\n"
			     "subsystem " SUBNQN "\n"
			     " namespace 1 ram:64K\n"
			     " namespace 2 ram:64K block=4096\n"
			     " allow-host " HOSTNQN "\n"
			     "subsystem nqn.2024-01.io.wharf:any\n"
			     " namespace 1 ram:4K\n"
			     " allow-any-host\n";

struct slot {
	struct nvmf_req req;
	struct nvmf_queue *q;
	int state; /* 0 free, 1 held, 2 ready */
	uint8_t buf[16384];
};

struct harness {
	struct nvmf_tgt *tgt;
	struct nvmf_queue *q[2]; /* admin, I/O queue 1 */
	uint16_t sq_size[2];
	bool dead[2];	/* no more capsules: killed, dropped or closed */
	bool killed[2]; /* ops->kill seen */
	uint64_t now;
	struct slot slots[NSLOTS];
	const uint8_t *fill; /* "host data" for RDMA READs */
	size_t fill_len;
};

static uint64_t now_ms(void *arg)
{
	return ((struct harness *)arg)->now;
}

static void held_ready(struct nvmf_queue *q, struct nvmf_req *req, void *arg)
{
	struct harness *h = arg;

	for (int i = 0; i < NSLOTS; i++)
		if (&h->slots[i].req == req) {
			CHECK(h->slots[i].state == 1 && h->slots[i].q == q);
			h->slots[i].state = 2;
			return;
		}
	CHECK(!"held_ready for an unknown request");
}

static void kill_cb(struct nvmf_queue *q, void *arg)
{
	struct harness *h = arg;

	for (int i = 0; i < 2; i++)
		if (h->q[i] == q) {
			CHECK(!h->killed[i]); /* at most once */
			h->killed[i] = true;
			h->dead[i] = true;
		}
}

static struct slot *free_slot(struct harness *h)
{
	for (int i = 0; i < NSLOTS; i++)
		if (!h->slots[i].state)
			return &h->slots[i];
	return NULL;
}

static void check_rsp(struct harness *h, int qi, const struct nvmf_req *req)
{
	const struct nvme_cqe *c = &req->rsp;

	CHECK(c->cid == req->cmd.common.cid);
	CHECK(c->sqid == (qi ? 1 : 0));
	CHECK((c->status & 1) == 0);
	CHECK(c->sqhd == NVME_SQHD_DISABLED || c->sqhd < h->sq_size[qi]);
}

/* Finish one action for @s (a request of queue @qi). */
static void settle(struct harness *h, int qi, struct slot *s, enum nvmf_act act,
		   bool fail)
{
	struct nvmf_queue *q = h->q[qi];

	if (act == NVMF_ACT_READ || act == NVMF_ACT_BUF) {
		CHECK(s->req.xfer_len > 0 &&
		      s->req.xfer_len <= nvmf_tgt_max_xfer(h->tgt));
		CHECK((act == NVMF_ACT_READ) == (s->req.xfer == NVMF_XFER_H2C));
		if (fail) {
			act = nvmf_req_fail(q, &s->req, 0);
		} else {
			memset(s->buf, 0, s->req.xfer_len);
			for (uint32_t i = 0; act == NVMF_ACT_READ &&
					     h->fill_len && i < s->req.xfer_len;
			     i++)
				s->buf[i] = h->fill[i % h->fill_len];
			s->req.data = s->buf;
			act = nvmf_req_exec(q, &s->req);
		}
	}
	switch (act) {
	case NVMF_ACT_WRITE_RESPOND:
		CHECK(s->req.xfer == NVMF_XFER_C2H && s->req.data == s->buf);
		CHECK(s->req.xfer_len <= nvmf_tgt_max_xfer(h->tgt));
		/* fall through */
	case NVMF_ACT_RESPOND:
		check_rsp(h, qi, &s->req);
		s->state = 0;
		if (s->req.close_after)
			h->dead[qi] = true;
		break;
	case NVMF_ACT_HOLD:
		s->state = 1;
		s->q = q;
		break;
	case NVMF_ACT_DROP:
		s->state = 0;
		h->dead[qi] = true;
		break;
	default:
		CHECK(!"unexpected action");
	}
	CHECK(nvmf_queue_inflight(q) <= 32);
}

static void capsule(struct harness *h, int qi, const uint8_t *p, size_t len,
		    bool fail)
{
	struct slot *s;

	if (!h->q[qi] || h->dead[qi])
		return;
	s = free_slot(h);
	if (!s)
		return;
	h->fill = p;
	h->fill_len = len;
	settle(h, qi, s, nvmf_req_recv(h->q[qi], &s->req, p, len), fail);
}

static void resume_ready(struct harness *h)
{
	for (int i = 0; i < NSLOTS; i++) {
		struct slot *s = &h->slots[i];
		int qi = s->q == h->q[1] && h->q[1] ? 1 : 0;

		if (s->state != 2)
			continue;
		CHECK(nvmf_req_resume(s->q, &s->req) == NVMF_ACT_RESPOND);
		check_rsp(h, qi, &s->req);
		s->state = 0;
	}
}

static void event(struct harness *h, const uint8_t *p, size_t len)
{
	uint32_t nsid = len > 1 ? p[1] % 4 + 1 : 1;

	switch (len ? p[0] % 5 : 0) {
	case 0:
		nvmf_tgt_kato_scan(h->tgt, h->now);
		break;
	case 1:
		h->now += 1000;
		break;
	case 2:
		nvmf_tgt_ns_add_ram(h->tgt, SUBNQN, nsid, 4096, 512);
		break;
	case 3:
		nvmf_tgt_ns_remove(h->tgt, SUBNQN, nsid);
		break;
	default:
		nvmf_tgt_ns_set_ready(h->tgt, SUBNQN, nsid,
				      len > 2 && (p[2] & 1));
		break;
	}
}

/* Connect queue @qi (qid @qi) with a well-formed Connect. */
static void connect(struct harness *h, int qi, const char *subnqn,
		    uint16_t cntlid, uint8_t cattr, uint32_t kato)
{
	uint8_t cap[64 + sizeof(struct nvme_connect_data)];
	struct nvme_connect_cmd c;
	struct nvme_connect_data d;
	struct slot *s = free_slot(h);

	memset(&c, 0, sizeof(c));
	c.opc = NVME_OPC_FABRICS;
	c.cid = 0xC0;
	c.fctype = NVME_FCTYPE_CONNECT;
	c.qid = (uint16_t)qi;
	c.sqsize = 31;
	c.cattr = cattr;
	c.kato = kato;
	c.sgl.addr = 0;
	c.sgl.unkeyed.len = sizeof(d);
	c.sgl.unkeyed.type =
		NVME_SGL_TYPE_DATA_BLOCK << 4 | NVME_SGL_SUB_OFFSET;
	memset(&d, 0, sizeof(d));
	d.cntlid = cntlid;
	snprintf(d.subnqn, sizeof(d.subnqn), "%s", subnqn);
	snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", HOSTNQN);
	memcpy(cap, &c, sizeof(c));
	memcpy(cap + 64, &d, sizeof(d));
	/* Admin in-capsule size is 8 KiB; I/O queues take 1 KiB. */
	settle(h, qi, s, nvmf_req_recv(h->q[qi], &s->req, cap, sizeof(cap)),
	       false);
}

static void enable(struct harness *h)
{
	struct nvme_prop_cmd p;
	struct slot *s = free_slot(h);

	memset(&p, 0, sizeof(p));
	p.opc = NVME_OPC_FABRICS;
	p.cid = 0xC1;
	p.fctype = NVME_FCTYPE_PROP_SET;
	p.ofst = 0x14;
	p.value = 1 | 6u << 16 | 4u << 20;
	settle(h, 0, s, nvmf_req_recv(h->q[0], &s->req, &p, sizeof(p)), false);
}

static void fuzz_pdata(const uint8_t *hd)
{
	struct nvme_rdma_limits lim = {.max_qid = 2,
				       .admin_depth = 32,
				       .io_depth = 32,
				       .dev_max_init_rd_atom = hd[35],
				       .dev_max_rd_atom = hd[36]};
	struct nvme_rdma_accept acc;
	size_t len = (hd[0] & 0x80) ? hd[33] % 57 : 56;
	uint8_t pd[56] = {0};
	uint16_t sts = 0;
	int rc;

	memcpy(pd, hd + 1, 32);
	rc = nvme_rdma_req_parse(&lim, pd, len, hd[33], hd[34], &acc, &sts);
	CHECK(rc == 0 || rc == -EPROTO);
	if (rc) {
		struct nvme_rdma_cm_rej rej;

		CHECK(sts >= NVME_RDMA_CM_INVALID_LEN &&
		      sts <= NVME_RDMA_CM_INVALID_ORD);
		CHECK(!nvme_rdma_rej_build(sts, &rej) && rej.sts == sts);
		return;
	}
	CHECK(len >= 32 && acc.qid <= lim.max_qid);
	CHECK(acc.sq_entries >= 2 &&
	      acc.sq_entries <= (acc.qid ? lim.io_depth : lim.admin_depth));
	CHECK(acc.host_rq >= acc.sq_entries);
	CHECK(acc.initiator_depth >= 1 && acc.initiator_depth <= hd[33] &&
	      acc.initiator_depth <= lim.dev_max_init_rd_atom &&
	      acc.initiator_depth <= acc.sq_entries);
	CHECK(acc.responder_resources == 0 && hd[34] <= lim.dev_max_rd_atom);
	CHECK(acc.rep.recfmt == 0 && acc.rep.crqsize == acc.sq_entries);
}

static struct nvmf_tgt *make_target(struct harness *h)
{
	struct nvmf_tgt_ops ops = {.size = sizeof(ops),
				   .now_ms = now_ms,
				   .held_ready = held_ready,
				   .kill = kill_cb};
	struct nvmf_config cfg;
	struct nvmf_tgt *tgt = NULL;
	char err[256];

	CHECK(!nvmf_config_parse(config, sizeof(config) - 1, "fuzz", &cfg, err,
				 sizeof(err)));
	CHECK(!nvmf_tgt_create(&cfg, &ops, h, &tgt, err, sizeof(err)));
	nvmf_config_free(&cfg);
	return tgt;
}

static struct nvmf_queue *make_queue(struct harness *h, uint16_t qid)
{
	struct nvmf_queue_params p = {
		.size = sizeof(p), .qid = qid, .sq_entries = 32};
	struct nvmf_queue *q = NULL;

	CHECK(!nvmf_queue_create(h->tgt, &p, &q));
	h->sq_size[qid] = 32;
	return q;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct harness h;
	struct nvmf_tgt_stats st;
	uint8_t hd[HDR] = {0};
	size_t pos = HDR;

	if (size)
		memcpy(hd, data, size < HDR ? size : HDR);
	fuzz_pdata(hd);

	memset(&h, 0, sizeof(h));
	h.now = 1000;
	h.tgt = make_target(&h);
	h.q[0] = make_queue(&h, 0);
	if (hd[0] & 32) {
		h.q[1] = make_queue(&h, 1);
	} else {
		connect(&h, 0, (hd[0] & 1) ? NVME_DISC_NQN : SUBNQN,
			NVME_CNTLID_DYNAMIC,
			(hd[0] & 8) ? NVME_CATTR_DISABLE_SQFLOW : 0,
			(hd[0] & 16) ? 2000 : 0);
		if (!(hd[0] & 2))
			enable(&h);
	}
	if ((hd[0] & 4) && !(hd[0] & 32)) {
		h.q[1] = make_queue(&h, 1);
		connect(&h, 1, (hd[0] & 1) ? NVME_DISC_NQN : SUBNQN,
			nvmf_queue_cntlid(h.q[0]), 0, 0);
	}

	while (pos + 3 <= size) {
		uint8_t op = data[pos];
		size_t len = (size_t)data[pos + 1] | (size_t)data[pos + 2] << 8;
		const uint8_t *p = data + pos + 3;

		pos += 3;
		if (len > size - pos)
			len = size - pos;
		pos += len;
		switch (op & 3) {
		case 0:
		case 1:
			capsule(&h, op & 1, p, len, op & 4);
			break;
		case 2:
			event(&h, p, len);
			break;
		default:
			resume_ready(&h);
			break;
		}
	}
	resume_ready(&h);

	/* Tear down like the binding: I/O queue, then admin queue. */
	nvmf_queue_destroy(h.q[1]);
	nvmf_queue_destroy(h.q[0]);
	nvmf_tgt_get_stats(h.tgt, &st);
	CHECK(st.ctrls == 0 && st.queues == 0 && st.reqs == 0 && st.held == 0);
	CHECK(nvmf_tgt_destroy(h.tgt) == 0);
	return 0;
}
