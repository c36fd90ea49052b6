/*
 * targets/nvmf/rdma_conn.c - the CM side of the RDMA binding: placement,
 * REQ validation / REJ, accept with the ACCEPT private data, and the
 * queue's end (see rdma_int.h for the life of a queue).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/nvmf/rdma_int.h"

/* The device attributes of the connection's device (cached per shard). */
static int shard_device(struct nr_shard *sh, struct wharf_conn *conn)
{
	struct ibv_pd *pd = wharf_conn_pd(conn);
	int err;

	if (!pd)
		return -ENODEV;
	if (sh->pd)
		return sh->pd == pd ? 0 : -EXDEV; /* one device per shard */
	err = ibv_query_device(pd->context, &sh->attr);
	if (err)
		return -err;
	sh->pd = pd;
	return 0;
}

/*
 * The shard's data buffers, registered once its first queue is accepted:
 * pinning megabytes inside the handshake would delay the REP (capsules
 * can only arrive after the accept).
 */
static int shard_buffers(struct nr_shard *sh)
{
	struct wharf_buf_pool_opts bo = {.size = sizeof(bo)};
	int rc;

	if (sh->bufs)
		return 0;
	bo.arena = wharf_shard_arena(sh->shard);
	bo.pd = sh->pd;
	bo.buf_size = sh->r->max_xfer;
	bo.count = sh->r->opts.data_buffers;
	rc = wharf_buf_pool_create(&bo, &sh->bufs);
	if (rc || !sh->aio)
		return rc;
	/* The same buffers as the ring's fixed buffers: a read lands where
	 * the RDMA WRITE sends from, a write leaves from where the RDMA READ
	 * put it, and the kernel maps neither per I/O. Optional. */
	rc = nvmf_aio_set_region(sh->aio, wharf_buf_pool_buf(sh->bufs, 0),
				 wharf_buf_pool_stride(sh->bufs) *
					 wharf_buf_pool_count(sh->bufs));
	if (rc)
		nr_log(sh->r,
		       "shard %u: data buffers not registered with io_uring "
		       "(%s): backend I/O maps them per operation",
		       sh->index, strerror(-rc));
	return 0;
}

static struct nr_queue *queue_new(struct nr_shard *sh, struct wharf_conn *conn,
				  const struct wharf_conn_request *req,
				  const struct nvme_rdma_accept *acc)
{
	struct nvmf_queue_params p = {.size = sizeof(p)};
	struct nr_queue *nq = calloc(1, sizeof(*nq));

	if (!nq)
		return NULL;
	nq->magic = NR_QUEUE_MAGIC;
	nq->sh = sh;
	nq->conn = conn;
	nq->conn_id = wharf_conn_id(conn);
	nq->qid = acc->qid;
	nq->listener = nvmf_tgt_listener_of(sh->r->tgt, req->local_addr);
	nvmf_sockaddr_str(req->peer_addr, nq->peer, sizeof(nq->peer));
	nvmf_sockaddr_str(req->local_addr, nq->local, sizeof(nq->local));
	p.listener = nq->listener;
	p.aio = sh->aio;
	/* Twice the entries, as nvmet-rdma allocates its responses: a
	 * slot is free only once its response SEND has completed here, but
	 * the host may reuse the SQ entry (and send the next capsule) as soon
	 * as it has the response, before that completion is polled. */
	nq->nslots = 2u * acc->sq_entries;
	nq->slots = calloc(nq->nslots, sizeof(*nq->slots));
	if (!nq->slots)
		goto fail;
	nq->mr = ibv_reg_mr(sh->pd, nq->slots, nq->nslots * sizeof(*nq->slots),
			    IBV_ACCESS_LOCAL_WRITE);
	if (!nq->mr)
		goto fail;
	for (uint32_t i = nq->nslots; i-- > 0;) {
		struct nr_slot *s = &nq->slots[i];

		s->nq = nq;
		s->data_wr.slot = s;
		s->rsp_wr.slot = s;
		atomic_init(&s->ready, false);
		s->next = nq->free;
		nq->free = s;
	}
	atomic_init(&nq->kill_pending, false);
	atomic_init(&nq->ready_pending, false);
	p.qid = acc->qid;
	p.sq_entries = acc->sq_entries;
	p.ctx = nq;
	if (nvmf_queue_create(sh->r->tgt, &p, &nq->q))
		goto fail;
	nq->next = sh->queues;
	if (sh->queues)
		sh->queues->prev = nq;
	sh->queues = nq;
	atomic_fetch_add(&sh->r->nq_alive, 1);
	atomic_fetch_add(&sh->n.queues, 1);
	return nq;
fail:
	if (nq->mr)
		ibv_dereg_mr(nq->mr);
	free(nq->slots);
	free(nq);
	return NULL;
}

void nr_queue_maybe_free(struct nr_queue *nq)
{
	struct nr_shard *sh = nq->sh;

	if (!nq->ended || nq->in_request || nq->wr_inflight)
		return;
	/* The core's queue goes only now: its controller, and a deleted
	 * subsystem's files with it, must outlive every backend operation
	 * still in the kernel for this queue. */
	nvmf_queue_destroy(nq->q);
	nq->q = NULL;
	if (nq->prev)
		nq->prev->next = nq->next;
	else
		sh->queues = nq->next;
	if (nq->next)
		nq->next->prev = nq->prev;
	ibv_dereg_mr(nq->mr);
	free(nq->slots);
	nq->magic = 0;
	free(nq);
	atomic_fetch_sub(&sh->r->nq_alive, 1);
}

void nr_queue_end(struct nr_queue *nq)
{
	struct wharf_conn *conn = nq->conn;

	if (nq->ended)
		return;
	nq->ended = true;
	nr_log(nq->sh->r, "queue %u (conn %#llx) ended", nq->qid,
	       (unsigned long long)nq->conn_id);
	nr_queue_drop_requests(nq);
	/* nvmf_queue_destroy() in nr_queue_maybe_free(), once no work
	 * request or backend operation of this queue is in flight. */
	nq->conn = NULL;
	atomic_fetch_sub(&nq->sh->n.queues, 1);
	if (conn)
		wharf_conn_destroy(conn);
	nr_queue_maybe_free(nq);
}

void nr_queue_kill(struct nr_queue *nq)
{
	if (nq->ended || nq->disconnecting)
		return;
	atomic_fetch_add(&nq->sh->n.kills, 1);
	if (!nq->established) {
		nr_queue_end(nq);
		return;
	}
	nq->disconnecting = true;
	if (wharf_disconnect(nq->conn))
		nr_queue_end(nq);
	/* else on_disconnected ends it */
}

static void reject(struct nr_shard *sh, struct wharf_conn *conn, uint16_t sts)
{
	struct nvme_rdma_cm_rej rej;

	atomic_fetch_add(&sh->n.rejected, 1);
	nr_log(sh->r, "reject: %s", nvme_rdma_cm_sts_str(sts));
	if (!nvme_rdma_rej_build(sts, &rej))
		wharf_reject(conn, &rej, sizeof(rej));
	wharf_conn_destroy(conn);
}

static void on_request(struct wharf_conn *conn,
		       const struct wharf_conn_request *req, void *arg)
{
	struct nvmf_rdma *r = arg;
	struct nr_shard *sh =
		&r->shards[wharf_shard_index(wharf_conn_shard(conn))];
	struct wharf_conn_param cp = {.size = sizeof(cp)};
	struct wharf_conn_qp_opts qs = {0};
	struct nvme_rdma_limits lim;
	struct nvme_rdma_accept acc;
	struct nr_queue *nq;
	uint16_t sts = NVME_RDMA_CM_NO_RSC;
	int err;

	if (shard_device(sh, conn)) {
		reject(sh, conn, NVME_RDMA_CM_NO_RSC);
		return;
	}
	nvmf_tgt_rdma_limits(r->tgt, sh->attr.max_qp_init_rd_atom,
			     sh->attr.max_qp_rd_atom, &lim);
	/* Local view: the event's initiator_depth is the host's IRD. */
	err = nvme_rdma_req_parse(&lim, req->private_data,
				  req->private_data_len, req->initiator_depth,
				  req->responder_resources, &acc, &sts);
	if (!err && nvmf_tgt_check_cntlid(r->tgt, acc.qid, acc.cntlid)) {
		err = -EPROTO;
		sts = NVME_RDMA_CM_INVALID_CNTLID;
	}
	if (err) {
		reject(sh, conn, err == -EPROTO ? sts : NVME_RDMA_CM_NO_RSC);
		return;
	}
	nq = queue_new(sh, conn, req, &acc);
	if (!nq) {
		reject(sh, conn, NVME_RDMA_CM_NO_RSC);
		return;
	}
	wharf_conn_set_arg(conn, nq);
	/* A data WR and a response per command the queue may hold (the
	 * shard's CQ must hold them all): sized by what this host asked
	 * for, not by the deepest queue the target allows. */
	qs.size = sizeof(qs);
	qs.sq_depth = 2u * acc.sq_entries + 8;
	(void)wharf_conn_set_qp(conn, &qs);
	cp.private_data = &acc.rep;
	cp.private_data_len = sizeof(acc.rep);
	cp.responder_resources = acc.responder_resources;
	cp.initiator_depth = acc.initiator_depth;
	cp.flow_control = req->flow_control;
	cp.rnr_retry_count = 7;
	nq->in_request = true; /* on_error may run inside wharf_accept() */
	err = wharf_accept(conn, &cp);
	if (!err) {
		atomic_fetch_add(&sh->n.accepted, 1);
		nr_log(r, "queue %u accepted on shard %u (%u entries)", acc.qid,
		       sh->index, acc.sq_entries);
		err = shard_buffers(sh);
		if (err) {
			fprintf(stderr,
				"wharf-nvmf-tgt: data buffers of shard %u: "
				"%s\n",
				sh->index, strerror(-err));
			nr_queue_kill(nq);
		}
	} else if (!nq->ended) {
		/* Nothing was sent (-EINVAL...): refuse it ourselves. */
		nr_log(r, "accept: %s", strerror(-err));
		if (err == -EINVAL || err == -EALREADY) {
			struct nvme_rdma_cm_rej rej;

			if (!nvme_rdma_rej_build(NVME_RDMA_CM_NO_RSC, &rej))
				wharf_reject(conn, &rej, sizeof(rej));
		}
		nr_queue_end(nq);
	}
	nq->in_request = false;
	nr_queue_maybe_free(nq);
}

/* The audit trail: every admin queue Connect, at most NVMF_AUDIT_PER_SEC
 * lines a second per shard (the rest counted, and said on the next line):
 * always printed, -v or not, as nvmet logs each controller. */
void nr_ops_connect_audit(struct nvmf_queue *q,
			  const struct nvmf_connect_audit *a, void *arg)
{
	struct nr_queue *nq = nvmf_queue_ctx(q);
	char line[1024];
	uint64_t held;

	(void)arg;
	if (!nvmf_audit_admit(&nq->sh->audit, wharf_now_ms(), &held)) {
		nr_count(&nq->sh->n.audit_held);
		return;
	}
	nvmf_audit_format(line, sizeof(line), a, nq->peer, nq->local, held);
	fprintf(stderr, "wharf-nvmf-tgt: %s\n", line);
}

static void on_established(struct wharf_conn *conn,
			   const struct wharf_conn_info *info, void *arg)
{
	struct nr_queue *nq = nr_queue_of(arg);

	(void)conn;
	(void)info;
	if (nq)
		nq->established = true;
}

static void on_error(struct wharf_conn *conn, enum wharf_conn_error error,
		     int err, void *arg)
{
	struct nr_queue *nq = nr_queue_of(arg);

	(void)conn;
	if (!nq)
		return;
	nr_log(nq->sh->r, "queue %u failed (%d): %s", nq->qid, (int)error,
	       strerror(-err));
	nr_queue_end(nq);
}

static void on_disconnected(struct wharf_conn *conn, void *arg)
{
	struct nr_queue *nq = nr_queue_of(arg);

	(void)conn;
	if (nq)
		nr_queue_end(nq);
}

const struct wharf_conn_ops nr_conn_ops = {
	.size = sizeof(struct wharf_conn_ops),
	.on_request = on_request,
	.on_established = on_established,
	.on_error = on_error,
	.on_disconnected = on_disconnected,
	.on_recv = nr_on_recv,
	.on_send_done = nr_on_send_done,
};
