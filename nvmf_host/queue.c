/*
 * nvmf_host/queue.c - one NVMe-oF queue as a wharf connection: the
 * CM handshake, the registered slab of capsules and bounce buffers, the
 * Fabrics Connect, command slots, responses, timeouts, a loss (internal
 * commands failed, user commands held and posted again once the queue is
 * LIVE again) and teardown (the life of a queue and of a slot:
 * host_int.h).  The wnh_q_*() messages are the controller's recovery
 * (recover.c) acting on the queue, on its owner shard.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvmf_host/auth_run.h"
#include "nvmf_host/host_int.h"
#include "nvmf_host/subq.h"
#include "nvmf_host/retry.h"
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
	return wnh_queue_alive(q->state);
}

static void set_gone(struct wharf_nvmf_host_queue *q, bool gone)
{
	struct wharf_nvmf_host *h = q->h;

	pthread_mutex_lock(&h->lock);
	q->gone = gone;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

/* ------------------------------------------------------------------ */
/* Command slots                                                       */
/* ------------------------------------------------------------------ */

static void slot_put(struct wharf_nvmf_host_queue *q, struct wnh_slot *s)
{
	s->next_free = q->free;
	q->free = s;
}

/* @s's callback: the controller's answer when @answered (a read's bounce
 * data copied out first), else @err. */
static void slot_callback(struct wharf_nvmf_host_queue *q, struct wnh_slot *s,
			  int err, bool answered)
{
	wharf_nvmf_host_cb cb = s->cb;
	void *arg = s->arg;
	uint16_t st = 0;

	if (answered) {
		st = s->rsp.status;
		err = (st & 0x7FF) ? -EIO : 0;
		q->last_result = s->rsp.result;
		if (!err && s->user_buf)
			memcpy(s->user_buf, s->bounce, s->len);
	}
	s->cb = NULL;
	out_add(q, -1);
	cnt_inc(&q->n.completed);
	if (st & 0x7FF)
		cnt_inc(&q->n.nvme_errors);
	cb(err, st, arg);
}

/* Feeds @ev to @s (slot_sm.h) and carries out what it says: the slot
 * back on the free list, then its callback (@err unless it holds an
 * answer).  Returns false for a response it was not waiting for. */
static bool slot_feed(struct wharf_nvmf_host_queue *q, struct wnh_slot *s,
		      enum wnh_slot_ev ev, bool live, int err)
{
	struct wnh_slot_trans t = wnh_slot_next(s->state, ev, live);
	bool answered = wnh_slot_answered(s->state, ev);

	if (t.act & NHC_ACT_BAD)
		return false;
	s->state = t.next;
	if (t.act & NHC_ACT_PUT)
		slot_put(q, s);
	if (t.act & NHC_ACT_CALLBACK)
		slot_callback(q, s, err, answered);
	return true;
}

/* Completes @s now, with its answer if it has one, else @err.  A slot
 * posted on the current (closing) connection is not reused until that
 * connection is gone (ORPHAN). */
static void slot_fail(struct wharf_nvmf_host_queue *q, struct wnh_slot *s,
		      int err)
{
	slot_feed(q, s, NHC_EV_FAIL, false, err);
}

/* Posted on the current connection and owed a callback. */
static bool slot_posted(const struct wnh_slot *s)
{
	return s->state == NHC_POSTED || s->state == NHC_SENT ||
	       s->state == NHC_ANSWERED;
}

/* Every command still waiting for its callback (@user: user commands,
 * else internal ones) gets @err, or its answer if it has one.  A user
 * command in the caller's memory that is still posted keeps the
 * target's access to that memory until its connection is gone; the
 * caller may reuse the memory once the callback ran, so the queue's
 * registrations are dropped first (the next command registers again). */
static void abort_some(struct wharf_nvmf_host_queue *q, bool user, int err)
{
	for (uint32_t i = 0; user && q->slots && i < q->entries; i++) {
		struct wnh_slot *s = &q->slots[i];

		if (s->kind == NHK_USER && s->mem &&
		    (s->state == NHC_POSTED || s->state == NHC_SENT)) {
			wnh_mem_drop(q);
			break;
		}
	}
	for (uint32_t i = 0; q->slots && i < q->entries; i++) {
		struct wnh_slot *s = &q->slots[i];

		if (s->state == NHC_FREE || s->state == NHC_ORPHAN ||
		    (s->kind == NHK_USER) != user)
			continue;
		if (user && s->state != NHC_ANSWERED)
			cnt_inc(&q->n.failed_held);
		slot_fail(q, s, err);
	}
}

/* Posts @s's capsule on the current connection, with the current MR. */
static int slot_post(struct wharf_nvmf_host_queue *q, struct wnh_slot *s)
{
	union nvme_cmd *c = (union nvme_cmd *)s->capsule;
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->capsule,
		.length = NVME_SQE_SIZE,
		.lkey = q->mr->lkey,
	};
	uint32_t key;
	int rc;

	if (s->in_cap) {
		wnh_sgl_in_capsule(&c->common.sgl, s->len);
		sge.length += s->len;
	} else if (s->dir == NH_DIR_NONE) {
		wnh_sgl_keyed(&c->common.sgl, 0, 0, 0);
	} else if (s->mem) {
		rc = wnh_mem_key(q, s->mem, &key);
		if (rc)
			return rc;
		wnh_sgl_keyed(&c->common.sgl, (uintptr_t)s->data, s->len, key);
	} else {
		wnh_sgl_keyed(&c->common.sgl, (uintptr_t)s->bounce, s->len,
			      q->mr->rkey);
	}
	wharf_wr_init(&s->wr, NH_WR_TAG);
	rc = wharf_qp_post_send(wharf_conn_qp(q->conn), &s->wr, &sge, 1, false,
				0);
	if (rc)
		return rc;
	if (s->tries++)
		cnt_inc(&q->n.retried);
	slot_feed(q, s, NHC_EV_POST, false, 0);
	s->deadline_ms = wharf_now_ms() + q->timeout_ms;
	q->wr_inflight++;
	return 0;
}

/* The queue is LIVE (again): post every held command. */
static void resubmit(struct wharf_nvmf_host_queue *q)
{
	for (uint32_t i = 0; q->state == NHQ_LIVE && i < q->entries; i++) {
		struct wnh_slot *s = &q->slots[i];
		uint32_t key;
		int rc, err;

		if (s->state != NHC_HELD)
			continue;
		if (wnh_disposition(false, 0, s->tries, NH_MAX_TRIES) ==
		    WNH_DISP_GIVE_UP) {
			err = atomic_load(&q->n.error);
			cnt_inc(&q->n.failed_held);
			slot_fail(q, s, err ? err : -EIO);
			continue;
		}
		/* The caller's memory on the new PD: its failure is the
		 * command's, not the queue's. */
		if (s->mem && (rc = wnh_mem_key(q, s->mem, &key))) {
			cnt_inc(&q->n.failed_held);
			slot_fail(q, s, rc);
			continue;
		}
		rc = slot_post(q, s);
		if (rc)
			wnh_queue_fail(q, rc);
	}
}

int wnh_submit(struct wharf_nvmf_host_queue *q, const union nvme_cmd *cmd,
	       enum wnh_dir dir, void *buf, uint32_t len, wharf_nvmf_host_cb cb,
	       void *arg)
{
	return wnh_submit_mem(q, cmd, dir, NULL, buf, len, cb, arg);
}

int wnh_submit_mem(struct wharf_nvmf_host_queue *q, const union nvme_cmd *cmd,
		   enum wnh_dir dir, struct wharf_nvmf_host_mem *mem, void *buf,
		   uint32_t len, wharf_nvmf_host_cb cb, void *arg)
{
	struct wnh_slot *s = q->free;
	bool user = q->qid && cmd->common.opc != NVME_OPC_FABRICS;
	union nvme_cmd *c;
	int rc;

	if (user && (q->state == NHQ_CONNECTING || q->state == NHQ_FABRICS ||
		     q->state == NHQ_RESETTING || q->state == NHQ_DOWN)) {
		if (q->fail_new)
			return q->fail_new;
	} else if (!(q->state == NHQ_LIVE || q->state == NHQ_FABRICS)) {
		return -ENOTCONN;
	}
	if (!s)
		return -EAGAIN;
	if (len > q->bounce_size)
		return -EINVAL;
	q->free = s->next_free;
	slot_feed(q, s, NHC_EV_SUBMIT, false, 0);
	c = (union nvme_cmd *)s->capsule;
	memcpy(c, cmd, sizeof(*c));
	c->common.cid = (uint16_t)(s - q->slots);
	s->len = len;
	s->dir = dir;
	s->kind = user ? NHK_USER
		  : !q->qid && cmd->common.opc == NVME_ADM_ASYNC_EVENT
			  ? NHK_EVENT
			  : NHK_INTERNAL;
	s->tries = 0;
	s->in_cap = dir == NH_DIR_TO_CTRL &&
		    cmd->common.opc != NVME_OPC_FABRICS && len <= q->in_capsule;
	s->mem = s->in_cap || dir == NH_DIR_NONE ? NULL : mem;
	s->data = buf;
	s->user_buf = dir == NH_DIR_FROM_CTRL && !s->mem ? buf : NULL;
	if (s->in_cap)
		memcpy(s->capsule + NVME_SQE_SIZE, buf, len);
	else if (dir == NH_DIR_TO_CTRL && !s->mem)
		memcpy(s->bounce, buf, len);
	if (q->state == NHQ_LIVE || !user) {
		rc = slot_post(q, s);
		if (rc) {
			slot_feed(q, s, NHC_EV_CANCEL, false, 0);
			return rc;
		}
	} /* else held until the queue is LIVE again */
	s->cb = cb;
	s->arg = arg;
	out_add(q, 1);
	cnt_inc(&q->n.submitted);
	if (dir == NH_DIR_TO_CTRL)
		cnt_inc(s->in_cap ? &q->n.in_capsule : &q->n.keyed);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Teardown                                                            */
/* ------------------------------------------------------------------ */

/* RESETTING and gone: deregister the MR (the next connection may have
 * another PD), complete what was answered, hold the rest, go DOWN. */
static void reset_done(struct wharf_nvmf_host_queue *q)
{
	if (q->mr)
		ibv_dereg_mr(q->mr);
	q->mr = NULL;
	wnh_mem_drop(q);
	for (uint32_t i = 0; q->slots && i < q->entries; i++) {
		struct wnh_slot *s = &q->slots[i];

		/* Answered: completed, never resent; else held, and
		 * resubmit() sends it again or gives up (retry.h). */
		slot_feed(q, s, NHC_EV_GONE, false, 0);
	}
	if (q->reply) {
		q->reply = false;
		wnh_ctrl_down(q);
	}
}

static struct wnh_qtrans queue_feed(struct wharf_nvmf_host_queue *q,
				    enum wnh_qev ev);

static void check_gone(struct wharf_nvmf_host_queue *q)
{
	if (q->link != NHL_DESTROYED || q->wr_inflight || q->call_pending)
		return;
	q->link = NHL_NONE;
	wharf_timer_destroy(q->sweep);
	q->sweep = NULL;
	queue_feed(q, NHQ_EV_GONE); /* RESETTING: reset_done() */
	set_gone(q, true);
}

static void destroy_conn(struct wharf_nvmf_host_queue *q)
{
	struct wharf_conn *c = q->conn;

	if (q->link != NHL_OPEN)
		return;
	q->link = NHL_DESTROYED;
	q->conn = NULL;
	wharf_timer_destroy(q->sweep);
	q->sweep = NULL;
	if (c)
		wharf_conn_destroy(c);
	check_gone(q);
}

static void close_conn(struct wharf_nvmf_host_queue *q)
{
	if (q->link != NHL_OPEN || !q->conn)
		return;
	/* -ENOTCONN: not established (or already disconnected); 0 or
	 * -EALREADY: on_disconnected destroys it. */
	if (wharf_disconnect(q->conn) == -ENOTCONN)
		destroy_conn(q);
}

static void close_fn(struct wharf_conn *conn, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;

	q->call_pending = false;
	if (conn && q->link == NHL_OPEN)
		q->conn = conn;
	if (conn) {
		close_conn(q);
		return;
	}
	if (q->link == NHL_OPEN)
		q->link = NHL_DESTROYED; /* nothing left to destroy */
	check_gone(q);
}

/* Closes the queue's connection (if any), on the owner shard: at once
 * when the connection is known here, else through wharf_conn_call(),
 * which finds one that is still being set up. */
static void close_queue(struct wharf_nvmf_host_queue *q)
{
	if (q->link != NHL_OPEN)
		return;
	if (q->conn) {
		close_conn(q);
	} else if (!q->call_pending) {
		if (wharf_conn_call(q->h->cm, q->conn_id, close_fn, q)) {
			/* the cm is shutting down: nothing will run */
			q->link = NHL_NONE;
			set_gone(q, true);
		} else {
			q->call_pending = true; /* not gone before it ran */
		}
	}
}

/* Feeds @ev to the queue's table (queue_sm.h) and carries out the
 * actions that need nothing but the queue; the caller does the others
 * (CONNECT, SEND_CONNECT, RESUME) when the returned transition has them. */
static struct wnh_qtrans queue_feed(struct wharf_nvmf_host_queue *q,
				    enum wnh_qev ev)
{
	struct wnh_qtrans t = wnh_queue_next(q->state, ev);

	q->state = t.next;
	if (t.act & NHQ_ACT_FAIL_ALL)
		abort_some(q, true, -ECONNABORTED);
	if (t.act & (NHQ_ACT_FAIL_INTERNAL | NHQ_ACT_FAIL_ALL))
		abort_some(q, false, -ECONNABORTED);
	if (t.act & NHQ_ACT_RESET_DONE)
		reset_done(q);
	if (t.act & NHQ_ACT_CLOSE_CONN)
		close_queue(q);
	return t;
}

/* Lost: hold user commands, fail internal ones, close the connection. */
static void lose(struct wharf_nvmf_host_queue *q)
{
	queue_feed(q, NHQ_EV_LOST);
}

void wnh_q_reset(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;

	(void)shard;
	if (q->state == NHQ_DOWN || q->state == NHQ_CLOSING ||
	    q->link == NHL_NONE) {
		wnh_ctrl_down(q);
		return;
	}
	q->reply = true;
	if (alive(q))
		lose(q);
}

void wnh_q_kill(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;

	(void)shard;
	if (q->state == NHQ_CLOSING)
		return;
	q->fail_new = -ENODEV;
	abort_some(q, true, -ENODEV);
}

void wnh_q_fast_fail(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;

	(void)shard;
	if (q->state == NHQ_LIVE || q->state == NHQ_CLOSING || q->fail_new)
		return;
	q->fail_new = -ENOLINK;
	abort_some(q, true, -ENOLINK);
}

void wnh_q_close(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;

	(void)shard;
	queue_feed(q, NHQ_EV_CLOSE);
	if (q->link == NHL_NONE)
		set_gone(q, true); /* wake the waiter */
}

void wnh_q_start(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	int rc;

	(void)shard;
	if (q->state == NHQ_CLOSING || q->link != NHL_NONE)
		return;
	rc = q->qid ? wnh_subq_start(q) : 0;
	if (!rc)
		rc = wnh_queue_start(q);
	if (rc) {
		atomic_store(&q->n.error, rc);
		wnh_fail(q->h, rc, "queue %u: connect: %s", q->qid,
			 strerror(-rc));
		wnh_ctrl_lost(q);
	}
}

void wnh_queue_free(struct wharf_nvmf_host_queue *q)
{
	wnh_mem_free_all(q);
	if (q->mr)
		ibv_dereg_mr(q->mr);
	q->mr = NULL;
	free(q->slab);
	q->slab = NULL;
	free(q->slots);
	q->slots = NULL;
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

/* A posted command past its deadline fails the queue (a loss): an
 * internal one completes with -ETIMEDOUT, a user one is held. */
static void sweep_fn(struct wharf_timer *t, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	uint64_t now = wharf_now_ms();

	for (uint32_t i = 0; alive(q) && i < q->entries; i++) {
		struct wnh_slot *s = &q->slots[i];

		if (!slot_posted(s) || s->kind == NHK_EVENT ||
		    s->deadline_ms > now)
			continue;
		cnt_inc(&q->n.timeouts);
		if (s->kind != NHK_USER) /* the slot waits for the connection */
			slot_fail(q, s, -ETIMEDOUT);
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

	if (q->slab) /* a reconnect: the slots (held commands) stay */
		goto reg;
	q->capsule_stride = (NVME_SQE_SIZE + q->in_capsule + 63) & ~63u;
	caps = (size_t)q->capsule_stride * q->entries;
	caps = (caps + 4095) & ~(size_t)4095;
	q->slab_len = caps + (size_t)q->bounce_size * q->entries;
	if (posix_memalign((void **)&q->slab, 4096, q->slab_len))
		return -ENOMEM;
	memset(q->slab, 0, q->slab_len);
	q->slots = calloc(q->entries, sizeof(*q->slots));
	if (!q->slots)
		return -ENOMEM;
	for (i = q->entries; i-- > 0;) {
		struct wnh_slot *s = &q->slots[i];

		s->q = q;
		s->capsule = q->slab + i * q->capsule_stride;
		s->bounce = q->slab + caps + i * q->bounce_size;
		slot_put(q, s);
	}
reg:
	q->mr = ibv_reg_mr(pd, q->slab, q->slab_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE);
	return q->mr ? 0 : -errno;
}

/* @q is lost with @err (it failed, was refused, or could not connect). */
static void queue_lost(struct wharf_nvmf_host_queue *q, int err)
{
	if (!alive(q))
		return;
	atomic_store(&q->n.error, err);
	/* Told before lose() may make the queue gone: once it is gone the
	 * application may free it, and no message may point at it then. */
	wnh_ctrl_lost(q);
	lose(q);
}

void wnh_queue_fail(struct wharf_nvmf_host_queue *q, int err)
{
	if (!alive(q))
		return;
	wnh_fail(q->h, err, "queue %u failed: %s", q->qid, strerror(-err));
	queue_lost(q, err);
}

static void connected(struct wharf_nvmf_host_queue *q, uint32_t dw0);

/* The end of the queue's authentication (auth_run.c logged a failure). */
static void authenticated(struct wharf_nvmf_host_queue *q, int err,
			  uint32_t dw0)
{
	if (!err) {
		connected(q, dw0);
		return;
	}
	if (alive(q))
		queue_lost(q, err);
}

static void connect_done(int status, uint16_t nvme_status, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	struct wharf_nvmf_host *h = q->h;
	uint32_t dw0;
	char st[96];
	int rc;

	if (status && !alive(q))
		return; /* aborted: the queue is closing */
	if (status == -EIO) {
		uint32_t dw0 = (uint32_t)q->last_result;
		uint32_t ipo = dw0 & 0xFFFF, iattr = (dw0 >> 16) & 0xFF;
		const char *field = "";

		if (iattr == NVME_CONNECT_IATTR_DATA)
			field = ipo == 256   ? ", field subnqn"
				: ipo == 512 ? ", field hostnqn"
				: ipo == 16  ? ", field cntlid"
					     : ", field in the Connect data";
		wnh_status_str(nvme_status, st, sizeof(st));
		wnh_fail(h, -ECONNREFUSED,
			 "queue %u: Fabrics Connect to %s refused: %s%s",
			 q->qid, h->subnqn, st, field);
		queue_lost(q, -ECONNREFUSED);
		return;
	}
	if (status) {
		wnh_fail(h, status, "queue %u: Fabrics Connect: %s", q->qid,
			 strerror(-status));
		queue_lost(q, status);
		return;
	}
	dw0 = (uint32_t)q->last_result;
	if (!(dw0 & (NVME_CONNECT_AUTHREQ_ATR | NVME_CONNECT_AUTHREQ_ASCR))) {
		connected(q, dw0);
		return;
	}
	/* The controller wants the host to prove who it is first. */
	if (!alive(q))
		return;
	if (dw0 & NVME_CONNECT_AUTHREQ_ASCR)
		rc = -EACCES;
	else if (!h->has_auth_key)
		rc = -EACCES;
	else
		rc = wnh_auth_start(q, dw0, authenticated);
	if (rc) {
		wnh_fail(h, rc, "queue %u: %s", q->qid,
			 rc != -EACCES ? strerror(-rc)
			 : dw0 & NVME_CONNECT_AUTHREQ_ASCR
				 ? "the controller requires a secure channel "
				   "(TLS), which RDMA does not carry"
				 : "the controller requires in-band "
				   "authentication (DH-HMAC-CHAP) and no "
				   "secret was given");
		queue_lost(q, rc);
	}
}

/* The queue may carry commands now (Connect answered with @dw0, and
 * authenticated if asked). */
static void connected(struct wharf_nvmf_host_queue *q, uint32_t dw0)
{
	struct wharf_nvmf_host *h = q->h;

	/* A Connect answered just before a loss completes here with its
	 * answer while the queue resets: too late to go LIVE. */
	if (!(queue_feed(q, NHQ_EV_CONNECTED).act & NHQ_ACT_RESUME))
		return;
	q->fail_new = 0;
	if (q->qid == 0) {
		h->cntlid = (uint16_t)dw0;
		wnh_admin_connected(h);
	} else {
		resubmit(q);
		if (q->state == NHQ_LIVE)
			wnh_ctrl_up(q);
	}
}

static void on_established(struct wharf_conn *conn,
			   const struct wharf_conn_info *info, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	struct wharf_nvmf_host *h = q->h;
	struct nvme_connect_data data;
	union nvme_cmd cmd;
	int rc = 0;

	q->conn = conn;
	/* Lost or closed while the handshake ran: the table closes it. */
	if (!(queue_feed(q, NHQ_EV_ESTABLISHED).act & NHQ_ACT_SEND_CONNECT))
		return;
	if (info->private_data_len >= sizeof(struct nvme_rdma_cm_rep)) {
		struct nvme_rdma_cm_rep rep;

		memcpy(&rep, info->private_data, sizeof(rep));
		if (rep.crqsize >= 2 && rep.crqsize < q->entries) {
			if (q->slots) /* held commands may use every slot */
				rc = -EPROTO;
			else
				q->entries = rep.crqsize;
		}
	}
	if (!rc)
		rc = setup_slab(q, wharf_conn_pd(conn));
	if (!rc)
		rc = wharf_timer_create(q->shard, sweep_fn, q, &q->sweep);
	if (!rc)
		rc = wharf_timer_arm(q->sweep, sweep_ns(q));
	if (rc) {
		wnh_fail(h, rc, "queue %u: setting up: %s", q->qid,
			 rc == -EPROTO ? "the target shrank the queue"
				       : strerror(-rc));
		queue_lost(q, rc);
		return;
	}
	wnh_cmd_connect(&cmd, q->qid, q->entries, h->kato_ms);
	rc = wnh_connect_data(&data, h->hostid,
			      q->qid ? h->cntlid : NVME_CNTLID_DYNAMIC,
			      h->subnqn, h->hostnqn);
	if (!rc)
		rc = wnh_submit(q, &cmd, NH_DIR_TO_CTRL, &data, sizeof(data),
				connect_done, q);
	if (rc) {
		wnh_fail(h, rc, "queue %u: sending Connect: %s", q->qid,
			 strerror(-rc));
		queue_lost(q, rc);
	}
}

static void on_rejected(struct wharf_conn *conn,
			const struct wharf_conn_reject *rej, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	struct nvme_rdma_cm_rej r = {0};

	q->conn = conn;
	if (rej->private_data_len >= sizeof(r))
		memcpy(&r, rej->private_data, sizeof(r));
	if (alive(q))
		wnh_fail(q->h, -ECONNREFUSED,
			 "queue %u: the target rejected the connection: REJ "
			 "reason %d, NVMe-oF status %u (%s)",
			 q->qid, rej->reason, r.sts,
			 nvme_rdma_cm_sts_str(r.sts));
	queue_lost(q, -ECONNREFUSED);
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
	if (alive(q))
		wnh_fail(q->h, e, "queue %u: connecting failed (step %d): %s",
			 q->qid, (int)error, strerror(-err));
	queue_lost(q, e);
	destroy_conn(q);
}

static void on_disconnected(struct wharf_conn *conn, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;

	int e = -ECONNRESET;

	if (q->link == NHL_OPEN)
		q->conn = conn;
	if (q->auth && wnh_auth_run_replied(q->auth))
		e = -EKEYREJECTED;
	if (alive(q) && e == -EKEYREJECTED)
		wnh_fail(q->h, e,
			 "queue %u: DH-HMAC-CHAP: the controller refused the "
			 "host: it disconnected after the host's response "
			 "(nvmet ends a host whose secret is wrong)",
			 q->qid);
	else if (alive(q))
		wnh_fail(q->h, e, "queue %u: disconnected by the target",
			 q->qid);
	queue_lost(q, e);
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
	if (rx->flags & WHARF_QP_RECV_WRITE)
		return 0;
	rc = wnh_rsp_parse(buf, rx->len, q->entries, &rsp);
	s = rc ? NULL : &q->slots[rsp.cid];
	if (q->state != NHQ_RESETTING && !alive(q))
		return 0;
	/* A response for a waiting command is its answer.  While the
	 * connection closes (not alive) the slot table keeps it for
	 * reset_done, which completes it and never resends it, as Linux
	 * completes what it reaps while draining; a stray one is ignored. */
	if (s && (s->state == NHC_POSTED || s->state == NHC_SENT))
		s->rsp = rsp;
	if ((s && slot_feed(q, s, NHC_EV_RESPONSE, alive(q), 0)) || !alive(q))
		return 0;
	cnt_inc(&q->n.bad_responses);
	wnh_fail(q->h, -EPROTO, "queue %u: bad response (%u bytes): %s", q->qid,
		 rx->len,
		 rc == -EMSGSIZE ? "shorter than a completion"
		 : rc		 ? "command id out of range"
				 : "command id not outstanding");
	queue_lost(q, -EPROTO);
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
	/* A failed SEND ends the queue: an answered command then completes
	 * when the connection is gone, like the others. */
	slot_feed(q, s, NHC_EV_SEND_DONE,
		  alive(q) && wr->status == IBV_WC_SUCCESS, 0);
	if (wr->status != IBV_WC_SUCCESS && alive(q)) {
		wnh_fail(q->h, -ECONNRESET, "queue %u: send of command %u: %s",
			 q->qid, (unsigned)(s - q->slots),
			 ibv_wc_status_str((enum ibv_wc_status)wr->status));
		queue_lost(q, -ECONNRESET);
	}
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
	struct nvme_rdma_cm_req req;
	struct wharf_connect_opts co;
	struct wharf_conn_param p;
	int rc;

	rc = nvme_rdma_req_build(q->qid, q->entries, q->qid ? h->cntlid : 0,
				 &req);
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
	co.disconnect_timeout_ms = NVME_RDMA_DISCONNECT_MS;
	if (q->entries + 1 > WHARF_QP_DEFAULT_SQ_DEPTH)
		co.qp.sq_depth = q->entries + 1;
	if (!(queue_feed(q, NHQ_EV_START).act & NHQ_ACT_CONNECT))
		return -EBUSY; /* not DOWN: the caller checked */
	q->conn = NULL;
	/* Before the connect: from then on the owner shard may run the
	 * connection's events, which read the link, while a thread that
	 * brings the controller up is still in here. */
	q->link = NHL_OPEN;
	set_gone(q, false);
	rc = wharf_connect(h->cm, &co, &q->conn_id);
	if (rc) {
		q->link = NHL_NONE; /* no connection: gone, as before */
		set_gone(q, true);
		queue_feed(q, NHQ_EV_START_FAILED);
		return rc;
	}
	return 0;
}
