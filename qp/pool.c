/*
 * qp/pool.c - QP creation and destruction, the pool, the quarantine, the
 * receive-side drain wait, and the reap step that finishes teardowns.
 *
 * Lists (each QP is in at most one):
 *   free        pooled QPs in RESET, oldest released first (FIFO);
 *   quarantine  drained QPs released with TIMEWAIT_EXIT, by deadline;
 *   closing     closing QPs waiting for their receive side, by deadline.
 * Both timed lists are FIFOs whose deadlines only grow (a constant delay
 * after a monotonic time), so the res timer only looks at their heads.
 *
 * The res timer also refills the pool: below the low-water mark it creates
 * pool_batch QPs per tick (bounded work per loop iteration) until the pool
 * is full again.  Recycled QPs are kept up to twice the pool size, so
 * that the ones coming out of quarantine replace creations instead of
 * being destroyed because the refill got there first.
 */
#include <errno.h>
#include <string.h>

#include "qp/internal.h"

/* A server holds a QP per connection, thousands per shard: in the
 * allocator's 192-byte size class (docs/bench/storm.md, heap per
 * connection).  Growing past it costs 32 bytes more per connection. */
_Static_assert(sizeof(struct wharf_qp) <= 192, "a QP outgrew 192 bytes");

void wqp_list_init(struct wqp_list *l)
{
	wcore_list_init(&l->head);
	l->len = 0;
}

struct wharf_qp *wqp_list_first(const struct wqp_list *l)
{
	return wcore_list_first_entry(&l->head, struct wharf_qp, link);
}

void wqp_list_push(struct wqp_list *l, enum wqp_list_id id, struct wharf_qp *qp)
{
	if (id == WQP_IN_FREE)
		qp->res->cqs[qp->scq].pooled_sq += qp->sq_depth;
	qp->list = id;
	wcore_list_add_tail(&l->head, &qp->link);
	l->len++;
}

void wqp_list_del(struct wqp_list *l, struct wharf_qp *qp)
{
	if (qp->list == WQP_IN_FREE)
		qp->res->cqs[qp->scq].pooled_sq -= qp->sq_depth;
	wcore_list_del(&qp->link);
	qp->list = WQP_IN_NONE;
	l->len--;
}

struct wharf_qp *wqp_list_pop(struct wqp_list *l)
{
	struct wharf_qp *qp = wqp_list_first(l);

	if (qp)
		wqp_list_del(l, qp);
	return qp;
}

static void list_leave(struct wharf_qp *qp)
{
	struct wharf_qp_res *res = qp->res;

	switch (qp->list) {
	case WQP_IN_FREE:
		wqp_list_del(&res->free, qp);
		break;
	case WQP_IN_QUARANTINE:
		wqp_list_del(&res->quarantine, qp);
		break;
	case WQP_IN_CLOSING:
		wqp_list_del(&res->closing, qp);
		break;
	case WQP_IN_NONE:
		break;
	}
}

struct wharf_qp *wqp_pool_take_free(struct wharf_qp_res *res, unsigned scq)
{
	struct wcore_list *n;

	for (n = res->free.head.next; n != &res->free.head; n = n->next) {
		struct wharf_qp *qp =
			wcore_list_entry(n, struct wharf_qp, link);

		if (qp->scq == scq) {
			wqp_list_del(&res->free, qp);
			return qp;
		}
	}
	return NULL;
}

int wqp_qp_create(struct wharf_qp_res *res, unsigned scq, uint32_t sq_depth,
		  bool private_rq, uint32_t rq_depth, struct wharf_qp **out)
{
	struct ibv_qp_init_attr qa = {0};
	struct wharf_qp *qp;
	int err;

	qp = wharf_numa_alloc(res->arena, sizeof(*qp), 0, true);
	if (!qp)
		return -ENOMEM;
	qp->res = res;
	wcore_list_init(&qp->link);
	qp->life = WQP_LIFE_FREE;
	qp->vstate = IBV_QPS_RESET;
	qp->sq_depth = sq_depth;
	qp->private_rq = private_rq;
	qp->rq_depth = private_rq ? rq_depth : 0;
	qp->pooled_shape = !private_rq && sq_depth == res->o.sq_depth;
	wqp_wrq_init(&qp->q);
	wqp_wrq_init(&qp->cancel);
	qa.qp_context = qp;
	qp->scq = (uint16_t)scq;
	qa.send_cq = res->cqs[scq].cq;
	qa.recv_cq = res->cqs[WQP_CQ_RECV].cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = sq_depth;
	qa.cap.max_send_sge = res->o.max_send_sge;
	qa.cap.max_inline_data = res->o.max_inline_data;
	if (private_rq) {
		struct wharf_buf_pool_opts bo = {.size = sizeof(bo)};

		bo.arena = res->arena;
		bo.pd = res->dev->pd;
		bo.buf_size = res->o.recv_buf_size;
		bo.count = rq_depth;
		err = wharf_buf_pool_create(&bo, &qp->rq_bufs);
		if (err)
			goto fail;
		qa.cap.max_recv_wr = rq_depth;
		qa.cap.max_recv_sge = 1;
	} else {
		qa.srq = res->srq;
	}
	qp->ibqp = ibv_create_qp(res->dev->pd, &qa);
	if (!qp->ibqp && errno == EINVAL && qa.cap.max_inline_data) {
		/* The device cannot copy that much inline: post from memory. */
		wharf_ctx_log(res->dev->ctx, WHARF_LOG_INFO,
			      "qp: device refuses %u bytes of inline data; "
			      "sends read registered memory",
			      qa.cap.max_inline_data);
		res->o.max_inline_data = 0;
		qa.cap.max_inline_data = 0;
		qp->ibqp = ibv_create_qp(res->dev->pd, &qa);
	}
	if (!qp->ibqp) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	qp->qpn = qp->ibqp->qp_num;
	err = wqp_qpn_map_insert(&res->map, qp->qpn, qp);
	if (err)
		goto fail;
	if (qp->rq_bufs)
		res->st.recv_bytes +=
			(uint64_t)rq_depth * wharf_buf_pool_stride(qp->rq_bufs);
	*out = qp;
	return 0;
fail:
	if (qp->ibqp)
		ibv_destroy_qp(qp->ibqp);
	wharf_buf_pool_destroy(qp->rq_bufs);
	wharf_numa_free(res->arena, qp);
	return err;
}

void wqp_qp_destroy(struct wharf_qp *qp)
{
	struct wharf_qp_res *res = qp->res;
	int err;

	list_leave(qp);
	wqp_qpn_map_remove(&res->map, qp->qpn);
	/* Blocks until the async shard acknowledged this QP's events. */
	err = ibv_destroy_qp(qp->ibqp);
	if (err)
		wharf_ctx_log(res->dev->ctx, WHARF_LOG_ERROR,
			      "qp: ibv_destroy_qp(%u): %d", qp->qpn, err);
	if (qp->rq_bufs) {
		res->st.recv_bytes -= (uint64_t)qp->rq_depth *
				      wharf_buf_pool_stride(qp->rq_bufs);
		wharf_buf_pool_destroy(qp->rq_bufs);
	}
	res->st.qps_destroyed++;
	wharf_numa_free(res->arena, qp);
}

void wqp_reap_add(struct wharf_qp *qp)
{
	if (qp->in_reap)
		return;
	qp->in_reap = true;
	qp->reap_next = qp->res->reap;
	qp->res->reap = qp;
}

void wqp_unclaim(struct wharf_qp *qp)
{
	struct wharf_qp_res *res = qp->res;

	if (qp->recv_credits)
		wqp_admit_put(&res->admit, qp->recv_credits);
	wqp_res_cq_unclaim_qp(res, qp->scq, qp->sq_depth, qp->rq_depth);
}

static bool to_reset(struct wharf_qp *qp)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_RESET};

	if (qp->vstate == IBV_QPS_RESET)
		return true;
	if (ibv_modify_qp(qp->ibqp, &attr, IBV_QP_STATE))
		return false;
	qp->vstate = IBV_QPS_RESET;
	return true;
}

bool wqp_taken(const struct wharf_qp *qp)
{
	return qp->list != WQP_IN_FREE && qp->list != WQP_IN_QUARANTINE;
}

/* @qp stops counting as taken (its claims are already given back). */
static void deactivate(struct wharf_qp *qp)
{
	if (wqp_taken(qp))
		qp->res->nactive--;
}

/* Carries out a pool/quarantine/destroy decision. */
static void act(struct wharf_qp *qp, enum wqp_life_act a)
{
	struct wharf_qp_res *res = qp->res;

	if (a == WQP_ACT_NONE)
		return;
	deactivate(qp);
	list_leave(qp);
	/* Posted, then closed in the same iteration: still on the list. */
	wqp_dirty_unlink(qp);
	switch (a) {
	case WQP_ACT_NONE:
		return;
	case WQP_ACT_QUARANTINE:
		qp->deadline_ns = wqp_quarantine_deadline(qp->release_ns,
							  res->o.quarantine_ms);
		wqp_list_push(&res->quarantine, WQP_IN_QUARANTINE, qp);
		return;
	case WQP_ACT_POOL:
		if (res->o.no_pool || qp->broken || !qp->pooled_shape ||
		    res->free.len >= 2 * res->o.pool_size || !to_reset(qp)) {
			wqp_qp_destroy(qp);
			return;
		}
		qp->life = WQP_LIFE_FREE;
		qp->ops_idx = 0;
		qp->arg = NULL;
		res->st.pool_recycled++;
		wqp_list_push(&res->free, WQP_IN_FREE, qp);
		return;
	case WQP_ACT_DESTROY:
		wqp_qp_destroy(qp);
		return;
	}
}

static bool poolable(const struct wharf_qp *qp)
{
	return !qp->res->o.no_pool && !qp->broken && qp->pooled_shape;
}

static bool drained(const struct wharf_qp *qp)
{
	if (qp->cr.sq_used || qp->q.len || qp->cancel.len)
		return false;
	if (qp->private_rq)
		return qp->last_wqe || !qp->rq_posted;
	return qp->last_wqe;
}

void wqp_drain_check(struct wharf_qp *qp)
{
	if ((qp->life == WQP_LIFE_CLOSING ||
	     qp->life == WQP_LIFE_CLOSING_RELEASED) &&
	    drained(qp))
		wqp_reap_add(qp);
}

/*
 * One QP of the reap list: cancelled WRs, drain completion, decisions.
 * @qp->in_reap stays set while callbacks run, so a release from on_closed()
 * only records its action, which is carried out here.
 */
static void reap_one(struct wharf_qp *qp)
{
	enum wqp_life_act a = WQP_ACT_NONE;

	if (qp->cancel.len)
		wqp_deliver_cancelled(qp);
	if ((qp->life == WQP_LIFE_CLOSING ||
	     qp->life == WQP_LIFE_CLOSING_RELEASED) &&
	    drained(qp)) {
		if (qp->list == WQP_IN_CLOSING)
			wqp_list_del(&qp->res->closing, qp);
		wqp_life_step(&qp->life, WQP_EV_DRAINED, qp->fate, poolable(qp),
			      &a);
		/* Every completion is in: the CQ room is free again.  The
		 * QP leaves CLOSING here, once: on_closed runs once. */
		wqp_unclaim(qp);
		if (wqp_qp_ops(qp)->on_closed)
			wqp_qp_ops(qp)->on_closed(qp, qp->arg);
	}
	if (qp->act != WQP_ACT_NONE) {
		a = qp->act;
		qp->act = WQP_ACT_NONE;
	}
	qp->in_reap = false;
	act(qp, a);
}

void wqp_reap(struct wharf_qp_res *res)
{
	while (res->reap) {
		struct wharf_qp *qp = res->reap;

		res->reap = qp->reap_next;
		qp->reap_next = NULL;
		reap_one(qp);
	}
}

static void expire(struct wharf_qp_res *res, uint64_t now)
{
	struct wharf_qp *qp;

	while ((qp = wqp_list_first(&res->closing)) && qp->deadline_ns <= now) {
		wqp_list_del(&res->closing, qp);

		if (!qp->last_wqe) {
			qp->last_wqe = true;
			res->st.last_wqe_timeouts++;
			if (!qp->private_rq &&
			    !atomic_exchange(&res->dev->last_wqe_warned, true))
				wharf_ctx_log(
					res->dev->ctx, WHARF_LOG_WARN,
					"qp: no IBV_EVENT_QP_LAST_WQE_REACHED "
					"within %u ms; draining by timeout",
					res->o.last_wqe_timeout_ms);
		}
		wqp_drain_check(qp);
	}
	while ((qp = wqp_list_first(&res->quarantine)) &&
	       qp->deadline_ns <= now) {
		enum wqp_life_act a;

		wqp_life_step(&qp->life, WQP_EV_EXPIRE, qp->fate, true, &a);
		act(qp, a);
	}
}

static void refill(struct wharf_qp_res *res)
{
	uint32_t n;

	if (res->o.no_pool)
		return;
	n = wqp_pool_refill(res->free.len, res->o.pool_size,
			    res->o.pool_low_water, res->o.pool_batch,
			    &res->refilling);
	for (uint32_t i = 0; i < n; i++) {
		/* On the send CQ the next take will pick. */
		int scq = wqp_res_send_cq(res, res->o.sq_depth, true);
		struct wharf_qp *qp;

		if (scq < 0 || wqp_qp_create(res, (unsigned)scq,
					     res->o.sq_depth, false, 0, &qp)) {
			res->refilling = false; /* retried at the next kick */
			return;
		}
		res->st.pool_created++;
		wqp_list_push(&res->free, WQP_IN_FREE, qp);
	}
}

void wqp_res_kick(struct wharf_qp_res *res)
{
	uint64_t next = UINT64_MAX, now;
	bool refilling = res->refilling;
	struct wharf_qp *qp;

	if (!res->timer)
		return;
	if (res->reap ||
	    (!res->o.no_pool && wqp_pool_refill(res->free.len, res->o.pool_size,
						res->o.pool_low_water,
						res->o.pool_batch, &refilling)))
		next = 0;
	if ((qp = wqp_list_first(&res->closing)) && qp->deadline_ns < next)
		next = qp->deadline_ns;
	if ((qp = wqp_list_first(&res->quarantine)) && qp->deadline_ns < next)
		next = qp->deadline_ns;
	if (next == UINT64_MAX) {
		wharf_timer_cancel(res->timer);
		return;
	}
	now = wharf_now_ns();
	wharf_timer_arm(res->timer, next > now ? next - now : 0);
}

void wqp_res_timer_fn(struct wharf_timer *timer, void *arg)
{
	struct wharf_qp_res *res = arg;

	(void)timer;
	expire(res, wharf_now_ns());
	wqp_reap(res);
	refill(res);
	wqp_res_kick(res);
}

void wqp_pool_fini(struct wharf_qp_res *res)
{
	struct wharf_qp *qp;

	while ((qp = wqp_list_pop(&res->free)))
		wqp_qp_destroy(qp);
	while ((qp = wqp_list_pop(&res->quarantine)))
		wqp_qp_destroy(qp);
}
