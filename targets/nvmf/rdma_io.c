/*
 * targets/nvmf/rdma_io.c - the data path of the RDMA binding: capsules in,
 * RDMA READ / WRITE of keyed data, completions out, held requests and
 * kills handed to the owner shard (the slot life is in rdma_int.h).
 *
 * A host that asked for remote invalidation (keyed SGL subtype Fh) gets
 * its response as a SEND with Invalidate of the SGL's key, after the data
 * (same QP, so ordered): it then need not post a LOCAL_INV and wait for it
 * before completing the I/O, which Linux's nvme-rdma otherwise does for
 * every read.  On a device without memory management extensions the
 * response is a plain SEND and the host invalidates by itself.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "targets/nvmf/rdma_int.h"

static void slot_act(struct nr_slot *s, enum nvmf_act act);

static void buf_put(struct nr_slot *s)
{
	struct nr_shard *sh = s->nq->sh;

	if (!s->buf)
		return;
	if (s->bounce) {
		free(s->buf);
		s->bounce = false;
		s->buf = NULL;
		return;
	}
	wharf_buf_pool_put(sh->bufs, s->buf);
	s->buf = NULL;
	atomic_fetch_sub(&sh->n.bufs_in_use, 1);
}

static void disconnect(struct nr_queue *nq)
{
	if (nq->ended || nq->disconnecting)
		return;
	nq->disconnecting = true;
	if (!nq->established || wharf_disconnect(nq->conn))
		nr_queue_end(nq);
}

/* The first waiter of the shard gets a buffer back and goes on. */
static void wake_waiter(struct nr_shard *sh)
{
	struct nr_slot *w = sh->wait_head;

	if (!w)
		return;
	sh->wait_head = w->next;
	if (!sh->wait_head)
		sh->wait_tail = NULL;
	w->next = NULL;
	w->waiting = false;
	slot_act(w, w->reading ? NVMF_ACT_READ : NVMF_ACT_BUF);
}

static void slot_free(struct nr_slot *s)
{
	struct nr_queue *nq = s->nq;
	struct nr_shard *sh = nq->sh;
	bool close = s->close_after;
	bool had_buf = s->buf != NULL && !s->bounce; /* a pool buffer */

	buf_put(s);
	s->busy = false;
	s->close_after = false;
	s->reading = false;
	s->next = nq->free;
	nq->free = s;
	if (close)
		disconnect(nq);
	if (had_buf)
		wake_waiter(sh);
}

static int post(struct nr_slot *s, struct nr_wr *w,
		int (*fn)(struct nr_slot *, struct nr_wr *))
{
	int err;

	wharf_wr_init(&w->wr, NR_WR_TAG);
	err = fn(s, w);
	if (err)
		return err;
	s->pending++;
	s->nq->wr_inflight++;
	return 0;
}

static int do_send(struct nr_slot *s, struct nr_wr *w)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&s->req.rsp,
		.length = sizeof(s->req.rsp),
		.lkey = s->nq->mr->lkey,
	};

	struct wharf_qp *qp = wharf_conn_qp(s->nq->conn);

	if (s->req.rdma_invalidate) {
		int err = wharf_qp_post_send_inv(qp, &w->wr, &sge, 1,
						 s->req.rdma_key);

		if (err != -EOPNOTSUPP)
			return err;
	}
	return wharf_qp_post_send(qp, &w->wr, &sge, 1, false, 0);
}

static int do_data(struct nr_slot *s, struct nr_wr *w)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->req.data,
		.length = s->req.xfer_len,
		.lkey = wharf_buf_pool_lkey(s->nq->sh->bufs),
	};
	struct wharf_qp *qp = wharf_conn_qp(s->nq->conn);

	if (s->reading)
		return wharf_qp_post_read(qp, &w->wr, &sge, 1, s->req.rdma_addr,
					  s->req.rdma_key);
	return wharf_qp_post_write(qp, &w->wr, &sge, 1, s->req.rdma_addr,
				   s->req.rdma_key, false, 0);
}

/* Send the completion (after the data, for WRITE_RESPOND). */
static void respond(struct nr_slot *s, bool write)
{
	s->close_after = s->req.close_after;
	s->reading = false;
	if (write && post(s, &s->data_wr, do_data))
		goto fail;
	if (post(s, &s->rsp_wr, do_send))
		goto fail;
	return;
fail: /* the QP is closing: its end reclaims the rest */
	if (!s->pending)
		slot_free(s);
	disconnect(s->nq);
}

/* READ / BUF: attach a data buffer (or wait for one), then go on. */
static void with_buffer(struct nr_slot *s, bool read)
{
	struct nr_queue *nq = s->nq;
	struct nr_shard *sh = nq->sh;

	s->reading = read;
	if (!sh->bufs) { /* its creation failed: the queue is being killed */
		slot_act(s,
			 nvmf_req_fail(nq->q, &s->req,
				       NVME_STATUS(NVME_SCT_GENERIC,
						   NVME_SC_TRANSIENT_XPORT)));
		return;
	}
	s->buf = wharf_buf_pool_get(sh->bufs);
	if (!s->buf) {
		nr_count(&sh->n.buf_waits);
		s->waiting = true;
		s->next = NULL;
		if (sh->wait_tail)
			sh->wait_tail->next = s;
		else
			sh->wait_head = s;
		sh->wait_tail = s;
		return;
	}
	atomic_fetch_add(&sh->n.bufs_in_use, 1);
	s->req.data = s->buf;
	if (!read) {
		slot_act(s, nvmf_req_exec(nq->q, &s->req));
		return;
	}
	if (post(s, &s->data_wr, do_data)) {
		nvmf_req_abort(nq->q, &s->req);
		slot_free(s);
		disconnect(nq);
	}
}

/*
 * COPY: in-capsule data bound for the backend, which reads it after the
 * capsule's receive buffer is reposted: copy it now, into a pool buffer,
 * or (none free: waiting would lose the capsule) an aligned heap one.
 */
static void copy_in(struct nr_slot *s)
{
	struct nr_queue *nq = s->nq;
	struct nr_shard *sh = nq->sh;
	uint32_t len = s->req.xfer_len;
	void *buf = sh->bufs ? wharf_buf_pool_get(sh->bufs) : NULL;

	if (buf) {
		atomic_fetch_add(&sh->n.bufs_in_use, 1);
	} else {
		buf = aligned_alloc(4096, (len + 4095) / 4096 * 4096);
		if (!buf) {
			slot_act(s,
				 nvmf_req_fail(
					 nq->q, &s->req,
					 NVME_STATUS(NVME_SCT_GENERIC,
						     NVME_SC_TRANSIENT_XPORT)));
			return;
		}
		s->bounce = true;
		nr_count(&sh->n.bounces);
	}
	memcpy(buf, s->req.data, len);
	s->buf = buf;
	s->req.data = buf;
	slot_act(s, nvmf_req_exec(nq->q, &s->req));
}

static void slot_act(struct nr_slot *s, enum nvmf_act act)
{
	switch (act) {
	case NVMF_ACT_COPY:
		copy_in(s);
		return;
	case NVMF_ACT_ASYNC: /* with the backend: counts as a pending WR */
		s->pending++;
		s->nq->wr_inflight++;
		return;
	case NVMF_ACT_RESPOND:
	case NVMF_ACT_WRITE_RESPOND:
		respond(s, act == NVMF_ACT_WRITE_RESPOND);
		return;
	case NVMF_ACT_READ:
	case NVMF_ACT_BUF:
		with_buffer(s, act == NVMF_ACT_READ);
		return;
	case NVMF_ACT_HOLD:
		return; /* held_ready brings it back */
	case NVMF_ACT_DROP:
	default:
		slot_free(s);
		disconnect(s->nq);
		return;
	}
}

int nr_on_recv(struct wharf_conn *conn, void *buf,
	       const struct wharf_qp_recv *rx, void *arg)
{
	struct nr_queue *nq = nr_queue_of(arg);
	struct nr_slot *s;

	(void)conn;
	if (!nq || nq->ended || !nq->q)
		return 0;
	nr_count(&nq->sh->n.capsules);
	s = nq->free;
	if (!s) { /* the host overran its queue: no response possible */
		disconnect(nq);
		return 0;
	}
	nq->free = s->next;
	s->next = NULL;
	s->busy = true;
	/* In-capsule data is consumed here: the buffer is reposted. */
	slot_act(s, nvmf_req_recv(nq->q, &s->req, buf, rx->len));
	return 0;
}

/* Something a slot of an ended queue waited for is back: the core forgot
 * the request already; the slot (and, last, the queue) can go. */
static void ended_done(struct nr_slot *s)
{
	if (!s->pending) {
		buf_put(s);
		s->busy = false;
	}
	nr_queue_maybe_free(s->nq);
}

void nr_on_send_done(struct wharf_conn *conn, struct wharf_wr *wr, void *arg)
{
	struct nr_wr *w = wharf_wr_entry(wr, struct nr_wr, wr, NR_WR_TAG);
	struct nr_slot *s;
	struct nr_queue *nq;
	bool ok;

	(void)conn;
	(void)arg;
	if (!w)
		return;
	s = w->slot;
	nq = s->nq;
	ok = wr->status == IBV_WC_SUCCESS;
	s->pending--;
	nq->wr_inflight--;
	if (!ok)
		nr_count(&nq->sh->n.wc_errors);
	else if (w == &s->rsp_wr) {
		nr_count(&nq->sh->n.responses);
		if (wr->op == WHARF_WR_SEND_INV)
			nr_count(&nq->sh->n.responses_inv);
	} else if (s->reading)
		nr_count(&nq->sh->n.rdma_reads);
	else
		nr_count(&nq->sh->n.rdma_writes);
	if (nq->ended) {
		ended_done(s);
		return;
	}
	if (w == &s->data_wr && s->reading) {
		/* The host's data is here (or not): run the command. */
		slot_act(s, ok ? nvmf_req_exec(nq->q, &s->req)
			       : nvmf_req_fail(nq->q, &s->req, 0));
		return;
	}
	if (!ok)
		disconnect(nq);
	if (!s->pending)
		slot_free(s);
}

/* A backend operation of a slot's request completed (shard thread). */
void nr_aio_done(struct nvmf_aio_op *op, int res, void *arg)
{
	struct nvmf_req *req =
		(struct nvmf_req *)((char *)op -
				    offsetof(struct nvmf_req, aio));
	struct nr_slot *s = (struct nr_slot *)req; /* req is the first field */
	struct nr_queue *nq = s->nq;

	(void)arg;
	s->pending--;
	nq->wr_inflight--;
	if (nq->ended) {
		ended_done(s);
		return;
	}
	slot_act(s, nvmf_req_backend_done(nq->q, &s->req, res));
}

void nr_slot_resume(struct nr_slot *s)
{
	struct nr_queue *nq = s->nq;

	if (nq->ended || !atomic_exchange(&s->ready, false))
		return;
	slot_act(s, nvmf_req_resume(nq->q, &s->req));
}

/* The queue ends: forget what the core still waits for. */
void nr_queue_drop_requests(struct nr_queue *nq)
{
	struct nr_shard *sh = nq->sh;
	struct nr_slot **pp = &sh->wait_head, *w;

	sh->wait_tail = NULL;
	while ((w = *pp)) {
		if (w->nq == nq) {
			*pp = w->next;
			w->waiting = false;
		} else {
			sh->wait_tail = w;
			pp = &w->next;
		}
	}
	for (uint32_t i = 0; i < nq->nslots; i++) {
		struct nr_slot *s = &nq->slots[i];

		if (!s->busy)
			continue;
		nvmf_req_abort(nq->q, &s->req);
		if (!s->pending) {
			buf_put(s);
			s->busy = false;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Hand-overs from the core (any thread, core locks held)              */
/* ------------------------------------------------------------------ */

static void held_fn(struct wharf_conn *conn, void *arg)
{
	if (conn) /* alive: so is the queue that owns the slot */
		nr_slot_resume(arg);
}

void nr_ops_held_ready(struct nvmf_queue *q, struct nvmf_req *req, void *arg)
{
	struct nvmf_rdma *r = arg;
	struct nr_slot *s = (struct nr_slot *)req; /* req is the first field */
	struct nr_queue *nq = nvmf_queue_ctx(q);

	atomic_store(&s->ready, true);
	if (wharf_conn_call(r->cm, nq->conn_id, held_fn, s)) {
		atomic_store(&nq->ready_pending, true);
		atomic_fetch_add(&nq->sh->n.handoff_retries, 1);
	}
}

static void kill_fn(struct wharf_conn *conn, void *arg)
{
	struct nr_queue *nq = arg;

	if (conn && atomic_exchange(&nq->kill_pending, false))
		nr_queue_kill(nq);
}

void nr_ops_kill(struct nvmf_queue *q, void *arg)
{
	struct nvmf_rdma *r = arg;
	struct nr_queue *nq = nvmf_queue_ctx(q);

	atomic_store(&nq->kill_pending, true);
	if (wharf_conn_call(r->cm, nq->conn_id, kill_fn, nq))
		atomic_fetch_add(&nq->sh->n.handoff_retries, 1);
}

/* Periodic, on the owner shard: hand-overs the message ring refused. */
void nr_shard_sweep(struct nr_shard *sh)
{
	struct nr_queue *nq, *next;

	for (nq = sh->queues; nq; nq = next) {
		next = nq->next;
		if (nq->ended)
			continue;
		if (atomic_exchange(&nq->ready_pending, false))
			for (uint32_t i = 0; i < nq->nslots && !nq->ended; i++)
				nr_slot_resume(&nq->slots[i]);
		if (atomic_exchange(&nq->kill_pending, false))
			nr_queue_kill(nq);
	}
}
