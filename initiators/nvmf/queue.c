/*
 * initiators/nvmf/queue.c - one NVMe-oF queue as a wharf connection: the
 * CM handshake, the registered slab of capsules and bounce buffers, the
 * Fabrics Connect, command slots, responses, timeouts, failure and
 * teardown (the life of a queue and of a slot: host_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "initiators/nvmf/host_int.h"
#include "proto/nvme/rdma_pdata.h"

/* Counters have one writer (the owner shard): no locked add. */
static void cnt_inc(atomic_uint_fast64_t *c)
{
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static void out_add(struct wharf_nvmf_host_queue *q, int d)
{
	uint_fast32_t v =
		atomic_load_explicit(&q->n.outstanding, memory_order_relaxed);

	atomic_store_explicit(&q->n.outstanding, v + (uint_fast32_t)d,
			      memory_order_relaxed);
}

static bool alive(const struct wharf_nvmf_host_queue *q)
{
	return q->state == NHQ_CONNECTING || q->state == NHQ_LIVE;
}

/* ------------------------------------------------------------------ */
/* Teardown                                                            */
/* ------------------------------------------------------------------ */

static void check_gone(struct wharf_nvmf_host_queue *q)
{
	struct wharf_nvmf_host *h = q->h;

	if (!q->destroyed || q->wr_inflight || q->gone)
		return;
	wharf_timer_destroy(q->sweep);
	q->sweep = NULL;
	pthread_mutex_lock(&h->lock);
	q->gone = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static void destroy_conn(struct wharf_nvmf_host_queue *q)
{
	struct wharf_conn *c = q->conn;

	if (q->destroyed)
		return;
	q->destroyed = true;
	q->conn = NULL;
	wharf_timer_destroy(q->sweep);
	q->sweep = NULL;
	if (c)
		wharf_conn_destroy(c);
	check_gone(q);
}

static void close_conn(struct wharf_nvmf_host_queue *q)
{
	if (q->destroyed || !q->conn)
		return;
	if (!q->established || wharf_disconnect(q->conn) == -ENOTCONN)
		destroy_conn(q);
	/* 0 or -EALREADY: on_disconnected destroys it. */
}

/* Every command still waiting for its callback gets @err. */
static void abort_all(struct wharf_nvmf_host_queue *q, int err)
{
	for (uint32_t i = 0; q->slots && i < q->entries; i++) {
		struct wnh_slot *s = &q->slots[i];
		wharf_nvmf_host_cb cb = s->cb;

		if (!s->busy || !cb)
			continue;
		s->cb = NULL;
		out_add(q, -1);
		cnt_inc(&q->n.completed);
		cb(err, 0, s->arg);
	}
}

void wnh_queue_fail(struct wharf_nvmf_host_queue *q, int err)
{
	if (!alive(q))
		return;
	q->state = NHQ_FAILED;
	atomic_store(&q->n.error, err);
	wharf_ctx_log(q->h->ctx, WHARF_LOG_WARN,
		      "nvmf host: queue %u failed: %s", q->qid, strerror(-err));
	wnh_fail(q->h, err, "queue %u failed: %s", q->qid, strerror(-err));
	abort_all(q, -ECONNABORTED);
	close_conn(q);
}

static void close_fn(struct wharf_conn *conn, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;

	if (conn && !q->destroyed)
		q->conn = conn;
	if (alive(q)) {
		q->state = NHQ_CLOSING;
		abort_all(q, -ECONNABORTED);
	}
	q->state = NHQ_CLOSING;
	if (!conn) {
		/* Destroyed already (refused, failed): only WRs to wait for. */
		check_gone(q);
		return;
	}
	close_conn(q);
}

void wnh_queue_close(struct wharf_nvmf_host_queue *q)
{
	struct wharf_nvmf_host *h = q->h;
	int rc;

	if (!q->started) {
		pthread_mutex_lock(&h->lock);
		q->gone = true;
		pthread_mutex_unlock(&h->lock);
		return;
	}
	while ((rc = wharf_conn_call(h->cm, q->conn_id, close_fn, q)) ==
	       -EAGAIN)
		sched_yield();
	if (rc) { /* the cm is shutting down: nothing will run */
		pthread_mutex_lock(&h->lock);
		q->gone = true;
		pthread_mutex_unlock(&h->lock);
	}
}

void wnh_queue_free(struct wharf_nvmf_host_queue *q)
{
	if (q->mr)
		ibv_dereg_mr(q->mr);
	q->mr = NULL;
	free(q->slab);
	q->slab = NULL;
	free(q->slots);
	q->slots = NULL;
}

/* ------------------------------------------------------------------ */
/* Command slots                                                       */
/* ------------------------------------------------------------------ */

static void slot_put(struct wharf_nvmf_host_queue *q, struct wnh_slot *s)
{
	s->busy = false;
	s->next_free = q->free;
	q->free = s;
}

static void slot_complete(struct wharf_nvmf_host_queue *q, struct wnh_slot *s)
{
	wharf_nvmf_host_cb cb = s->cb;
	void *arg = s->arg;
	uint16_t st = s->rsp.status;
	int status = (st & 0x7FF) ? -EIO : 0;

	q->last_result = s->rsp.result;
	if (!status && s->user_buf)
		memcpy(s->user_buf, s->bounce, s->len);
	s->cb = NULL;
	slot_put(q, s);
	out_add(q, -1);
	cnt_inc(&q->n.completed);
	if (status)
		cnt_inc(&q->n.nvme_errors);
	cb(status, st, arg);
}

int wnh_submit(struct wharf_nvmf_host_queue *q, const union nvmf_cmd *cmd,
	       enum wnh_dir dir, void *buf, uint32_t len, wharf_nvmf_host_cb cb,
	       void *arg)
{
	struct wnh_slot *s = q->free;
	union nvmf_cmd *c;
	struct ibv_sge sge;
	int rc;

	if (!(q->state == NHQ_LIVE ||
	      (q->state == NHQ_CONNECTING && q->established)))
		return -ENOTCONN;
	if (!s)
		return -EAGAIN;
	if (len > q->bounce_size)
		return -EINVAL;
	c = (union nvmf_cmd *)s->capsule;
	memcpy(c, cmd, sizeof(*c));
	c->common.cid = (uint16_t)(s - q->slots);
	sge.addr = (uintptr_t)s->capsule;
	sge.length = NVMF_SQE_SIZE;
	sge.lkey = q->mr->lkey;
	s->user_buf = NULL;
	s->len = len;
	switch (dir) {
	case NH_DIR_TO_CTRL:
		if (cmd->common.opc != NVMF_OPC_FABRICS &&
		    len <= q->in_capsule) {
			memcpy(s->capsule + NVMF_SQE_SIZE, buf, len);
			wnh_sgl_in_capsule(&c->common.sgl, len);
			sge.length += len;
			cnt_inc(&q->n.in_capsule);
		} else {
			memcpy(s->bounce, buf, len);
			wnh_sgl_keyed(&c->common.sgl, (uintptr_t)s->bounce, len,
				      q->mr->rkey);
			cnt_inc(&q->n.keyed);
		}
		break;
	case NH_DIR_FROM_CTRL:
		s->user_buf = buf;
		wnh_sgl_keyed(&c->common.sgl, (uintptr_t)s->bounce, len,
			      q->mr->rkey);
		break;
	case NH_DIR_NONE:
		wnh_sgl_keyed(&c->common.sgl, 0, 0, 0);
		break;
	}
	wharf_wr_init(&s->wr, NH_WR_TAG);
	rc = wharf_qp_post_send(wharf_conn_qp(q->conn), &s->wr, &sge, 1, false,
				0);
	if (rc)
		return rc;
	q->free = s->next_free;
	s->busy = true;
	s->sent = false;
	s->answered = false;
	s->cb = cb;
	s->arg = arg;
	s->deadline_ms = wnh_now_ms() + q->timeout_ms;
	q->wr_inflight++;
	out_add(q, 1);
	cnt_inc(&q->n.submitted);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Timeouts                                                            */
/* ------------------------------------------------------------------ */

static uint64_t sweep_ns(const struct wharf_nvmf_host_queue *q)
{
	uint64_t ms = q->timeout_ms / 4;

	if (ms > 250)
		ms = 250;
	if (ms < 5)
		ms = 5;
	return ms * 1000000ull;
}

static void sweep_fn(struct wharf_timer *t, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	uint64_t now = wnh_now_ms();

	for (uint32_t i = 0; alive(q) && i < q->entries; i++) {
		struct wnh_slot *s = &q->slots[i];
		wharf_nvmf_host_cb cb = s->cb;

		if (!s->busy || !cb || s->deadline_ms > now)
			continue;
		s->cb = NULL;
		out_add(q, -1);
		cnt_inc(&q->n.completed);
		cnt_inc(&q->n.timeouts);
		cb(-ETIMEDOUT, 0, s->arg);
		wnh_queue_fail(q, -ETIMEDOUT);
	}
	if (alive(q))
		wharf_timer_arm(t, sweep_ns(q));
}

/* ------------------------------------------------------------------ */
/* Connection callbacks                                                */
/* ------------------------------------------------------------------ */

static int setup_slab(struct wharf_nvmf_host_queue *q, struct ibv_pd *pd)
{
	size_t caps, i;

	q->capsule_stride = (NVMF_SQE_SIZE + q->in_capsule + 63) & ~63u;
	caps = (size_t)q->capsule_stride * q->entries;
	caps = (caps + 4095) & ~(size_t)4095;
	q->slab_len = caps + (size_t)q->bounce_size * q->entries;
	if (posix_memalign((void **)&q->slab, 4096, q->slab_len))
		return -ENOMEM;
	memset(q->slab, 0, q->slab_len);
	q->slots = calloc(q->entries, sizeof(*q->slots));
	if (!q->slots)
		return -ENOMEM;
	q->mr = ibv_reg_mr(pd, q->slab, q->slab_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE);
	if (!q->mr)
		return -errno;
	for (i = q->entries; i-- > 0;) {
		struct wnh_slot *s = &q->slots[i];

		s->q = q;
		s->capsule = q->slab + i * q->capsule_stride;
		s->bounce = q->slab + caps + i * q->bounce_size;
		slot_put(q, s);
	}
	return 0;
}

static void connect_done(int status, uint16_t nvme_status, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	struct wharf_nvmf_host *h = q->h;
	char st[96];

	if (status == -EIO) {
		uint32_t dw0 = (uint32_t)q->last_result;
		uint32_t ipo = dw0 & 0xFFFF, iattr = (dw0 >> 16) & 0xFF;
		const char *field = "";

		if (iattr == NVMF_CONNECT_IATTR_DATA)
			field = ipo == 256   ? ", field subnqn"
				: ipo == 512 ? ", field hostnqn"
				: ipo == 16  ? ", field cntlid"
					     : ", field in the Connect data";
		wnh_status_str(nvme_status, st, sizeof(st));
		wnh_fail(h, -ECONNREFUSED,
			 "queue %u: Fabrics Connect to %s refused: %s%s",
			 q->qid, h->subnqn, st, field);
		wnh_queue_fail(q, -ECONNREFUSED);
		return;
	}
	if (status) {
		wnh_fail(h, status, "queue %u: Fabrics Connect: %s", q->qid,
			 strerror(-status));
		wnh_queue_fail(q, status);
		return;
	}
	q->state = NHQ_LIVE;
	if (q->qid == 0) {
		h->info.cntlid = (uint16_t)q->last_result;
		wnh_admin_connected(h);
	} else {
		wnh_io_ready(h);
	}
}

static void on_established(struct wharf_conn *conn,
			   const struct wharf_conn_info *info, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	struct wharf_nvmf_host *h = q->h;
	struct nvmf_connect_data data;
	union nvmf_cmd cmd;
	int rc;

	q->conn = conn;
	q->established = true;
	if (q->state != NHQ_CONNECTING) {
		close_conn(q);
		return;
	}
	if (info->private_data_len >= sizeof(struct nvmf_rdma_cm_rep)) {
		struct nvmf_rdma_cm_rep rep;

		memcpy(&rep, info->private_data, sizeof(rep));
		if (rep.crqsize >= 2 && rep.crqsize < q->entries)
			q->entries = rep.crqsize;
	}
	rc = setup_slab(q, wharf_conn_pd(conn));
	if (!rc)
		rc = wharf_timer_create(q->shard, sweep_fn, q, &q->sweep);
	if (!rc)
		rc = wharf_timer_arm(q->sweep, sweep_ns(q));
	if (rc) {
		wnh_fail(h, rc, "queue %u: setting up: %s", q->qid,
			 strerror(-rc));
		wnh_queue_fail(q, rc);
		return;
	}
	wnh_cmd_connect(&cmd, q->qid, q->entries, h->kato_ms);
	rc = wnh_connect_data(&data, h->hostid,
			      q->qid ? h->info.cntlid : NVMF_CNTLID_DYNAMIC,
			      h->subnqn, h->hostnqn);
	if (!rc)
		rc = wnh_submit(q, &cmd, NH_DIR_TO_CTRL, &data, sizeof(data),
				connect_done, q);
	if (rc) {
		wnh_fail(h, rc, "queue %u: sending Connect: %s", q->qid,
			 strerror(-rc));
		wnh_queue_fail(q, rc);
	}
}

static void on_rejected(struct wharf_conn *conn,
			const struct wharf_conn_reject *rej, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	struct nvmf_rdma_cm_rej r = {0};

	q->conn = conn;
	if (rej->private_data_len >= sizeof(r))
		memcpy(&r, rej->private_data, sizeof(r));
	wnh_fail(q->h, -ECONNREFUSED,
		 "queue %u: the target rejected the connection: REJ reason %d, "
		 "NVMe-oF status %u (%s)",
		 q->qid, rej->reason, r.sts, nvmf_rdma_cm_sts_str(r.sts));
	q->state = NHQ_FAILED;
	atomic_store(&q->n.error, -ECONNREFUSED);
	destroy_conn(q);
}

static void on_error(struct wharf_conn *conn, enum wharf_conn_error error,
		     int err, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	int e;

	q->conn = conn;
	switch (error) {
	case WHARF_CONN_ERR_ADDRESS:
	case WHARF_CONN_ERR_ROUTE:
	case WHARF_CONN_ERR_UNREACHABLE:
		e = -EHOSTUNREACH;
		break;
	case WHARF_CONN_ERR_TIMEOUT:
		e = -ETIMEDOUT;
		break;
	default:
		e = err < 0 ? err : -ECONNREFUSED;
		break;
	}
	wnh_fail(q->h, e, "queue %u: connecting failed (step %d): %s", q->qid,
		 (int)error, strerror(-err));
	q->state = NHQ_FAILED;
	atomic_store(&q->n.error, e);
	destroy_conn(q);
}

static void on_disconnected(struct wharf_conn *conn, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;

	if (!q->destroyed)
		q->conn = conn;
	if (alive(q))
		wharf_ctx_log(q->h->ctx, WHARF_LOG_WARN,
			      "nvmf host: queue %u: disconnected by the target",
			      q->qid);
	wnh_queue_fail(q, -ECONNRESET);
	destroy_conn(q);
}

static int on_recv(struct wharf_conn *conn, void *buf,
		   const struct wharf_qp_recv *rx, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	struct wnh_rsp rsp;
	struct wnh_slot *s;
	int rc;

	(void)conn;
	if (!alive(q) || (rx->flags & WHARF_QP_RECV_WRITE))
		return 0;
	rc = wnh_rsp_parse(buf, rx->len, q->entries, &rsp);
	s = rc ? NULL : &q->slots[rsp.cid];
	if (!s || !s->busy || s->answered || !s->cb) {
		cnt_inc(&q->n.bad_responses);
		wharf_ctx_log(q->h->ctx, WHARF_LOG_WARN,
			      "nvmf host: queue %u: bad response (%u bytes): "
			      "%s",
			      q->qid, rx->len,
			      rc == -EMSGSIZE ? "shorter than a completion"
			      : rc	      ? "command id out of range"
					      : "command id not outstanding");
		wnh_queue_fail(q, -EPROTO);
		return 0;
	}
	s->rsp = rsp;
	s->answered = true;
	if (s->sent)
		slot_complete(q, s);
	return 0;
}

static void on_send_done(struct wharf_conn *conn, struct wharf_wr *wr,
			 void *arg)
{
	struct wnh_slot *s = wharf_wr_entry(wr, struct wnh_slot, wr, NH_WR_TAG);
	struct wharf_nvmf_host_queue *q = arg;

	(void)conn;
	if (!s)
		return;
	q->wr_inflight--;
	s->sent = true;
	if (wr->status != IBV_WC_SUCCESS && alive(q)) {
		wharf_ctx_log(
			q->h->ctx, WHARF_LOG_WARN,
			"nvmf host: queue %u: send of command %u: %s", q->qid,
			(unsigned)(s - q->slots),
			ibv_wc_status_str((enum ibv_wc_status)wr->status));
		wnh_queue_fail(q, -ECONNRESET);
	} else if (alive(q) && s->answered && s->cb)
		slot_complete(q, s);
	check_gone(q);
}

const struct wharf_conn_ops wnh_conn_ops = {
	.size = sizeof(struct wharf_conn_ops),
	.on_established = on_established,
	.on_rejected = on_rejected,
	.on_error = on_error,
	.on_disconnected = on_disconnected,
	.on_recv = on_recv,
	.on_send_done = on_send_done,
};

/* ------------------------------------------------------------------ */
/* Starting                                                            */
/* ------------------------------------------------------------------ */

int wnh_queue_start(struct wharf_nvmf_host_queue *q)
{
	struct wharf_nvmf_host *h = q->h;
	struct nvmf_rdma_cm_req req;
	struct wharf_connect_opts co;
	struct wharf_conn_param p;
	int rc;

	rc = nvmf_rdma_req_build(q->qid, q->entries,
				 q->qid ? h->info.cntlid : 0, &req);
	if (rc)
		return rc;
	wharf_conn_param_init(&p);
	p.private_data = &req;
	p.private_data_len = sizeof(req);
	/* The controller RDMA READs our data: we serve reads (IRD), never
	 * issue them (ORD 0), as Linux and SPDK hosts. */
	p.responder_resources = WHARF_RD_ATOM_DEV_MAX;
	p.initiator_depth = 0;
	p.flow_control = 1;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	wharf_connect_opts_init(&co);
	co.dst = (const struct sockaddr *)&h->dst;
	co.param = &p;
	co.ops = &wnh_conn_ops;
	co.arg = q;
	co.shard = (int)q->shard_index;
	co.qp.recv_credits = q->entries;
	if (q->entries + 1 > WHARF_QP_DEFAULT_SQ_DEPTH)
		co.qp.sq_depth = q->entries + 1;
	q->state = NHQ_CONNECTING;
	rc = wharf_connect(h->cm, &co, &q->conn_id);
	if (!rc)
		q->started = true;
	return rc;
}
