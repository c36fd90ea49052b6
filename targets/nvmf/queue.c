/*
 * targets/nvmf/queue.c - queues and the request state machine: receive a
 * capsule, decide the data transfer, run the command, stamp the
 * completion (CID, SQ ID, SQ head, status; phase tag 0 on fabrics).
 *
 *   recv -- check/prep/bind --+-- no data / in-capsule -- exec --+-- DONE
 *                             +-- keyed SGL: WAIT_DATA -- exec --+
 *                             +-- in-capsule for the backend:    +-- HELD
 *                                 WAIT_DATA (COPY) -- exec ------+
 *                                                                +-- BACKEND
 *   HELD (AER) -- event: ops->held_ready -- READY -- resume -- DONE
 *   BACKEND -- io_uring completion: backend_done --+-- next step: BACKEND
 *                                                  +-- DONE
 *
 * A failure at any step completes the request with its status. The CID
 * enters the queue's set at recv and leaves it at completion; a capsule
 * reusing an outstanding CID is answered Command ID Conflict without
 * touching the outstanding one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets/nvmf/internal.h"

int nvmf_queue_create(struct nvmf_tgt *tgt, const struct nvmf_queue_params *p,
		      struct nvmf_queue **out)
{
	struct nvmf_queue *q;
	uint32_t depth;
	int rc;

	if (!tgt || !p || !out || p->size < sizeof(*p) || p->qid > tgt->max_qid)
		return -EINVAL;
	depth = p->qid ? tgt->io_depth : NVMF_ADMIN_DEPTH;
	if (p->sq_entries < 2 || p->sq_entries > depth)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	rc = nvmf_cidset_init(&q->cids, p->sq_entries);
	if (rc) {
		free(q);
		return rc;
	}
	q->tgt = tgt;
	q->ctx = p->ctx;
	q->qid = p->qid;
	q->listener = p->listener;
	/* In the same shard callback (RCU read-side) as the binding's
	 * match of the slot: a removal of the slot cannot fall between. */
	if (p->listener && p->listener <= NVMF_CFG_MAX_LISTEN)
		q->listener_gen = (uint32_t)atomic_load_explicit(
			&tgt->listen_gen[p->listener - 1],
			memory_order_acquire);
	q->sq_entries = p->sq_entries;
	q->sq_size = p->sq_entries;
	q->icd_size = nvmf_tgt_icd_size(tgt, p->qid);
	q->aio = p->aio;
	atomic_init(&q->killed, false);
	atomic_init(&q->auth_deadline_ms, 0);
	nvmf_stat_add(&tgt->n_queues, 1);
	*out = q;
	return 0;
}

void nvmf_queue_destroy(struct nvmf_queue *q)
{
	struct nvmf_tgt *tgt;

	if (!q)
		return;
	tgt = q->tgt;
	if (q->ctrl)
		nvmf_ctrl_detach(q);
	nvmf_auth_clear(q->auth);
	free(q->auth);
	nvmf_stat_add(&tgt->n_reqs, -(int64_t)q->inflight);
	nvmf_cidset_fini(&q->cids);
	nvmf_stat_add(&tgt->n_queues, -1);
	free(q);
}

void *nvmf_queue_ctx(const struct nvmf_queue *q)
{
	return q->ctx;
}

uint16_t nvmf_queue_cntlid(const struct nvmf_queue *q)
{
	return q->live && q->ctrl ? q->ctrl->cntlid : 0;
}

uint32_t nvmf_queue_inflight(const struct nvmf_queue *q)
{
	return q->inflight;
}

void nvmf_queue_kill_locked(struct nvmf_queue *q)
{
	if (atomic_exchange(&q->killed, true))
		return;
	q->tgt->ops.kill(q, q->tgt->arg);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A single writer's counter (the queue's shard), read by the RPC. */
static void bump(atomic_uint_fast64_t *c)
{
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* The queue's command counters and latency histogram (not an AER's: it
 * waits for an event, not for the target). */
static void account(struct nvmf_queue *q, const struct nvmf_req *req,
		    uint16_t status)
{
	bump(&q->n_cmds);
	if (status)
		bump(&q->n_errors);
	if (q->qid == 0 && req->cmd.common.opc == NVME_ADM_ASYNC_EVENT)
		return;
	bump(&q->lat[nvmf_lat_bucket(now_ns() - req->start_ns)]);
}

/* Stamp the completion and release the CID. */
static enum nvmf_act finish(struct nvmf_queue *q, struct nvmf_req *req,
			    uint16_t status)
{
	struct nvme_cqe *rsp = &req->rsp;

	account(q, req, status);
	if (req->cid_held) {
		nvmf_cidset_del(&q->cids, req->cmd.common.cid);
		req->cid_held = false;
	}
	if (q->sqflow_off) {
		rsp->sqhd = NVME_SQHD_DISABLED;
	} else {
		q->sqhd = (q->sqhd + 1) % q->sq_size;
		rsp->sqhd = (uint16_t)q->sqhd;
	}
	rsp->sqid = q->qid;
	rsp->cid = req->cmd.common.cid;
	rsp->status = (uint16_t)(status << 1); /* phase tag 0 */
	if (status && q->ctrl)
		nvmf_ctrl_log_error(q->ctrl, req, q->qid, status);
	if (status && req->cmd.common.opc == NVME_OPC_FABRICS &&
	    req->cmd.fabrics.fctype == NVME_FCTYPE_CONNECT)
		nvmf_stat_add(&q->tgt->n_connects_failed, 1);
	req->state = NVMF_REQ_DONE;
	q->inflight--;
	nvmf_stat_add(&q->tgt->n_reqs, -1);
	if (!status && req->xfer == NVMF_XFER_C2H && req->xfer_len)
		return NVMF_ACT_WRITE_RESPOND;
	return NVMF_ACT_RESPOND;
}

/* Whether @req must wait for the queue's authentication: every command
 * but Authentication Send / Receive, once Connect asked for it. */
static bool auth_blocks(const struct nvmf_queue *q, const struct nvmf_req *req)
{
	if (!q->auth || nvmf_auth_ok(q->auth))
		return false;
	return req->cmd.common.opc != NVME_OPC_FABRICS ||
	       (req->cmd.fabrics.fctype != NVME_FCTYPE_AUTH_SEND &&
		req->cmd.fabrics.fctype != NVME_FCTYPE_AUTH_RECV);
}

/* Route a command to its family's prep step. */
static uint16_t prep(struct nvmf_queue *q, struct nvmf_req *req)
{
	if (auth_blocks(q, req))
		return nvmf_sts(NVME_SCT_CMD, NVME_SC_AUTH_REQUIRED);
	if (req->cmd.common.opc == NVME_OPC_FABRICS) {
		req->kind = NVMF_KIND_FABRICS;
		return nvmf_fabrics_prep(q, req);
	}
	if (!q->live)
		return nvmf_sts_gen(NVME_SC_CMD_SEQ_ERROR);
	if (q->qid == 0) {
		req->kind = NVMF_KIND_ADMIN;
		return nvmf_admin_prep(q, req);
	}
	req->kind = NVMF_KIND_IO;
	return nvmf_io_prep(q, req);
}

/* Route a command to its family's exec step and complete it. */
static enum nvmf_act run(struct nvmf_queue *q, struct nvmf_req *req)
{
	uint16_t sts;

	switch (req->kind) {
	case NVMF_KIND_FABRICS:
		sts = nvmf_fabrics_exec(q, req);
		break;
	case NVMF_KIND_ADMIN:
		sts = nvmf_admin_exec(q, req);
		break;
	case NVMF_KIND_IO:
		sts = nvmf_io_exec(q, req);
		break;
	default:
		sts = nvmf_sts_gen(NVME_SC_INTERNAL);
	}
	/* Admin and Fabrics commands (an I/O queue's Connect too) restart
	 * the keep-alive timer (kato.h); I/O commands do not. */
	if (req->kind != NVMF_KIND_IO && q->ctrl)
		atomic_store(&q->ctrl->ka_last_ms, nvmf_now(q->tgt));
	if (req->held) /* parked by the AER handler, state set under lock */
		return NVMF_ACT_HOLD;
	if (sts == NVMF_STS_PENDING) {
		req->state = NVMF_REQ_BACKEND;
		return NVMF_ACT_ASYNC;
	}
	return finish(q, req, sts);
}

/* Count and return NVMF_ACT_DROP. */
static enum nvmf_act drop(struct nvmf_queue *q)
{
	nvmf_stat_add(&q->tgt->n_dropped, 1);
	return NVMF_ACT_DROP;
}

enum nvmf_act nvmf_req_recv(struct nvmf_queue *q, struct nvmf_req *req,
			    const void *capsule, size_t len)
{
	uint16_t sts;
	int rc;

	if (!q || !req)
		return NVMF_ACT_DROP;
	memset(req, 0, sizeof(*req));
	req->start_ns = now_ns();
	if (!capsule || len < NVME_SQE_SIZE ||
	    atomic_load_explicit(&q->killed, memory_order_relaxed))
		return drop(q);
	memcpy(&req->cmd, capsule, NVME_SQE_SIZE);
	rc = nvmf_cidset_add(&q->cids, req->cmd.common.cid);
	if (rc == -ENOSPC) /* more commands than queue entries */
		return drop(q);
	q->inflight++;
	nvmf_stat_add(&q->tgt->n_reqs, 1);
	if (rc)
		return finish(q, req, nvmf_sts_gen(NVME_SC_CID_CONFLICT));
	req->cid_held = true;
	sts = nvmf_capsule_check(&req->cmd, len, q->icd_size);
	if (!sts)
		sts = prep(q, req);
	if (sts)
		return finish(q, req, sts);
	if (req->xfer == NVMF_XFER_NONE || !req->xfer_len)
		return run(q, req);
	sts = nvmf_capsule_bind(req, capsule, len, q->icd_size);
	if (sts)
		return finish(q, req, sts);
	if (req->data && nvmf_io_needs_copy(q, req)) {
		req->state = NVMF_REQ_WAIT_DATA; /* the binding copies it */
		return NVMF_ACT_COPY;
	}
	if (req->data) /* in-capsule */
		return run(q, req);
	req->state = NVMF_REQ_WAIT_DATA;
	return req->xfer == NVMF_XFER_H2C ? NVMF_ACT_READ : NVMF_ACT_BUF;
}

enum nvmf_act nvmf_req_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	if (!q || !req || req->state != NVMF_REQ_WAIT_DATA)
		return NVMF_ACT_DROP;
	if (!req->data)
		return finish(q, req, nvmf_sts_gen(NVME_SC_INTERNAL));
	return run(q, req);
}

enum nvmf_act nvmf_req_backend_done(struct nvmf_queue *q, struct nvmf_req *req,
				    int res)
{
	uint16_t sts;

	if (!q || !req || req->state != NVMF_REQ_BACKEND)
		return NVMF_ACT_DROP;
	sts = nvmf_io_step(q, req, res);
	if (sts == NVMF_STS_PENDING)
		return NVMF_ACT_ASYNC;
	return finish(q, req, sts);
}

enum nvmf_act nvmf_req_resume(struct nvmf_queue *q, struct nvmf_req *req)
{
	if (!q || !req || req->state != NVMF_REQ_READY)
		return NVMF_ACT_DROP;
	req->held = false;
	return finish(q, req, req->held_status);
}

enum nvmf_act nvmf_req_fail(struct nvmf_queue *q, struct nvmf_req *req,
			    uint16_t status)
{
	if (!q || !req || req->state != NVMF_REQ_WAIT_DATA)
		return NVMF_ACT_DROP;
	if (!status)
		status = nvmf_sts_gen(NVME_SC_DATA_XFER_ERROR);
	return finish(q, req, status);
}

void nvmf_req_abort(struct nvmf_queue *q, struct nvmf_req *req)
{
	struct nvmf_ctrl *c;
	uint8_t state;

	if (!q || !req)
		return;
	c = q->ctrl;
	/* A held request may turn READY on another thread: decide locked. */
	if (c)
		pthread_mutex_lock(&c->lock);
	state = req->state;
	if (state == NVMF_REQ_HELD && c)
		nvmf_aer_unlink_locked(c, req);
	if (c)
		pthread_mutex_unlock(&c->lock);
	if (state != NVMF_REQ_HELD && state != NVMF_REQ_WAIT_DATA &&
	    state != NVMF_REQ_READY && state != NVMF_REQ_BACKEND)
		return;
	if (req->cid_held)
		nvmf_cidset_del(&q->cids, req->cmd.common.cid);
	req->cid_held = false;
	req->held = false;
	req->state = NVMF_REQ_DONE;
	q->inflight--;
	nvmf_stat_add(&q->tgt->n_reqs, -1);
}
