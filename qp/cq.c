/*
 * qp/cq.c - the completion queues of a res: one for receives (the SRQ's
 * buffers, private receive queues) and one or more for sends, all on one
 * completion channel.  A device caps each CQ (rxe's max_cqe is 32767) and
 * every send queue holds entries on its CQ, so a shard with many QPs
 * spreads them over several send CQs: a new QP goes on the first send CQ
 * with room, else the first that can still grow (ibv_resize_cq), else a
 * new one, up to send_cq_max (wqp_cq_pick()).  Receives stay on one CQ:
 * an SRQ's completions reach the receive CQ of whichever QP consumed the
 * buffer, so each receive CQ would have to hold the whole SRQ.  All CQs
 * are driven the ways a shard runs:
 *
 *  - poller (every loop iteration, busy or not): poll a bounded number of
 *    completions and dispatch them, then flush every QP's queued posts
 *    (those of the iteration's messages, timers and fds and those of the
 *    completion callbacks: one ibv_post_send() per QP), repost receive
 *    buffers, reap;
 *  - arm (before the shard blocks): flush everything, repost every pending
 *    buffer, ibv_req_notify_cq(), then poll once more so that a completion
 *    that slipped in before arming keeps the shard awake;
 *  - channel watch (event mode wake-up): take the CQ events (acknowledged
 *    in batches), mark the CQ unarmed and poll.
 *
 * Completions are demultiplexed by wc.qp_num through the shard-local map;
 * send completions carry their wharf_wr (wr_id.h).
 */
#include <errno.h>
#include <fcntl.h>

#include "qp/internal.h"
#include "qp/wr_id.h"

void wqp_report_error(struct wharf_qp *qp, enum ibv_wc_status status)
{
	qp->res->st.wc_errors++;
	if (qp->life != WQP_LIFE_LIVE || qp->error_reported)
		return;
	qp->error_reported = true;
	qp->vstate = IBV_QPS_ERR;
	if (wqp_qp_ops(qp)->on_error)
		wqp_qp_ops(qp)->on_error(qp, status, qp->arg);
}

static void dispatch(struct wharf_qp_res *res, const struct ibv_wc *wc)
{
	switch (wqp_wrid_kind(wc->wr_id)) {
	case WQP_WRID_SEND:
		wqp_send_complete(res, wc);
		break;
	case WQP_WRID_SRQ:
	case WQP_WRID_RQ:
		wqp_recv_complete(res, wc);
		break;
	default:
		wharf_ctx_log(res->dev->ctx, WHARF_LOG_ERROR,
			      "qp: completion with a foreign wr_id %#llx",
			      (unsigned long long)wc->wr_id);
		break;
	}
}

static unsigned poll_one(struct wharf_qp_res *res, struct ibv_cq *cq,
			 unsigned rounds)
{
	struct ibv_wc wc[WQP_POLL_BATCH];
	unsigned total = 0;

	for (unsigned r = 0; r < rounds; r++) {
		int n = ibv_poll_cq(cq, WQP_POLL_BATCH, wc);

		if (n < 0) {
			wharf_ctx_log(res->dev->ctx, WHARF_LOG_ERROR,
				      "qp: ibv_poll_cq: %d", n);
			break;
		}
		for (int i = 0; i < n; i++)
			dispatch(res, &wc[i]);
		total += (unsigned)n;
		if (n < (int)WQP_POLL_BATCH)
			break;
	}
	return total;
}

unsigned wqp_cq_poll(struct wharf_qp_res *res, unsigned rounds)
{
	unsigned total = 0;

	for (unsigned i = 0; i < res->ncqs; i++)
		total += poll_one(res, res->cqs[i].cq, rounds);
	res->st.completions += total;
	return total;
}

static int res_poll(struct wharf_shard *shard, void *arg)
{
	struct wharf_qp_res *res = arg;
	unsigned work = 0;
	int posted;

	(void)shard;
	/*
	 * Completions first: the WRs their callbacks post join the ones
	 * posted earlier in this iteration (messages, timers, fds), and each
	 * QP gets one ibv_post_send() for all of them.
	 */
	work += wqp_cq_poll(res, WQP_POLL_ROUNDS);
	posted = wqp_flush(res);
	work += posted > 0 ? (unsigned)posted : 0;
	work += wqp_srq_repost(res, false);
	if (res->reap) {
		wqp_reap(res);
		wqp_res_kick(res);
		work++;
	}
	return (int)work;
}

static int res_arm(struct wharf_shard *shard, void *arg)
{
	struct wharf_qp_res *res = arg;
	unsigned n;

	(void)shard;
	wqp_flush(res);
	wqp_srq_repost(res, true);
	for (unsigned i = 0; i < res->ncqs; i++) {
		struct wqp_cq *c = &res->cqs[i];

		if (c->armed)
			continue;
		if (ibv_req_notify_cq(c->cq, 0))
			return 1; /* cannot sleep on it: keep polling */
		c->armed = true;
	}
	n = wqp_cq_poll(res, WQP_POLL_ROUNDS);
	if (res->reap) {
		wqp_reap(res);
		wqp_res_kick(res);
		n++;
	}
	return (int)n;
}

static void chan_watch_fn(struct wharf_watch *watch, int fd, uint32_t events,
			  void *arg)
{
	struct wharf_qp_res *res = arg;
	struct ibv_cq *cq;
	void *ctx;

	(void)watch;
	(void)fd;
	(void)events;
	while (!ibv_get_cq_event(res->chan, &cq, &ctx)) {
		struct wqp_cq *c = ctx; /* cq_context: the CQ's entry */

		c->armed = false;
		res->st.cq_events++;
		if (++c->unacked >= WQP_CQ_ACK_BATCH) {
			ibv_ack_cq_events(c->cq, c->unacked);
			c->unacked = 0;
		}
	}
	res_poll(res->shard, res);
}

static int cq_create(struct wharf_qp_res *res, struct wqp_cq *c,
		     uint32_t entries)
{
	c->cq = ibv_create_cq(res->dev->verbs, (int)entries, c, res->chan,
			      res->o.comp_vector);
	if (!c->cq)
		return errno ? -errno : -ENOMEM;
	c->b.size = (uint32_t)c->cq->cqe;
	c->b.max = res->o.cq_max > c->b.size ? res->o.cq_max : c->b.size;
	c->b.reserved = 0;
	return 0;
}

/* First size of a send CQ: the pool's send queues (or cq_size). */
static uint32_t send_cq_initial(const struct wharf_qp_res *res)
{
	const struct wharf_qp_res_opts *o = &res->o;

	return wqp_cq_initial(o->cq_size, 0, o->pool_size, o->sq_depth,
			      o->cq_max);
}

int wqp_cq_setup(struct wharf_qp_res *res)
{
	int flags, err;

	res->chan = ibv_create_comp_channel(res->dev->verbs);
	if (!res->chan)
		return errno ? -errno : -ENOMEM;
	flags = fcntl(res->chan->fd, F_GETFL);
	if (flags < 0 || fcntl(res->chan->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	res->cqs = wharf_numa_alloc(
		res->arena, (1 + res->o.send_cq_max) * sizeof(*res->cqs), 64,
		true);
	if (!res->cqs)
		return -ENOMEM;
	for (unsigned i = 0; i < 2; i++) {
		err = cq_create(res, &res->cqs[i],
				i == WQP_CQ_RECV
					? wqp_cq_initial(res->o.cq_size,
							 res->o.srq_depth, 0, 0,
							 res->o.cq_max)
					: send_cq_initial(res));
		if (err)
			return err;
		res->ncqs++;
	}
	err = wharf_shard_watch(res->shard, res->chan->fd, WHARF_WATCH_IN,
				chan_watch_fn, res, &res->chan_watch);
	if (err)
		return err;
	return wharf_shard_poller_add(res->shard, res_poll, res_arm, res,
				      &res->poller);
}

void wqp_cq_teardown(struct wharf_qp_res *res)
{
	if (res->poller)
		wharf_poller_remove(res->poller);
	if (res->chan_watch)
		wharf_watch_remove(res->chan_watch);
	res->poller = NULL;
	res->chan_watch = NULL;
	for (unsigned i = 0; res->cqs && i < res->ncqs; i++) {
		struct wqp_cq *c = &res->cqs[i];

		if (c->cq) {
			if (c->unacked)
				ibv_ack_cq_events(c->cq, c->unacked);
			ibv_destroy_cq(c->cq);
		}
		c->cq = NULL;
		c->unacked = 0;
	}
	if (res->cqs)
		wharf_numa_free(res->arena, res->cqs);
	res->cqs = NULL;
	res->ncqs = 0;
	if (res->chan)
		ibv_destroy_comp_channel(res->chan);
	res->chan = NULL;
}

int wqp_res_cq_claim(struct wharf_qp_res *res, unsigned which, uint32_t need)
{
	struct wqp_cq *c = &res->cqs[which];
	uint32_t size;
	int plan = wqp_cq_plan(&c->b, need, &size);

	if (plan < 0) {
		res->st.cq_full++;
		return -ENOSPC;
	}
	if (plan > 0) {
		if (ibv_resize_cq(c->cq, (int)size)) {
			res->st.cq_full++;
			return -ENOSPC;
		}
		c->b.size = (uint32_t)c->cq->cqe;
		if (c->b.size > c->b.max)
			c->b.max = c->b.size;
		res->st.cq_resizes++;
	}
	return wqp_cq_reserve(&c->b, need) ? -ENOSPC : 0;
}

/*
 * wqp_cq_pick() over @res's send CQs; with @pooled, free QPs count as
 * claims on the CQ they are bound to (a refill then binds new ones where
 * takes will look for them).
 */
static int pick(const struct wharf_qp_res *res, uint32_t sq, bool pooled)
{
	struct wqp_cq_budget b[WQP_SEND_CQ_LIMIT];
	unsigned nsend = res->ncqs - WQP_CQ_SEND0;

	for (unsigned k = 0; k < nsend; k++) {
		b[k] = res->cqs[WQP_CQ_SEND0 + k].b;
		if (pooled)
			b[k].reserved += res->cqs[WQP_CQ_SEND0 + k].pooled_sq;
	}
	return wqp_cq_pick(b, nsend, res->o.send_cq_max, res->o.cq_max, sq);
}

bool wqp_res_send_room(const struct wharf_qp_res *res, uint32_t sq)
{
	return pick(res, sq, false) != -ENOSPC;
}

int wqp_res_send_cq(struct wharf_qp_res *res, uint32_t sq, bool pooled)
{
	unsigned nsend = res->ncqs - WQP_CQ_SEND0;
	int i = pick(res, sq, pooled), err;

	if (i >= 0)
		return WQP_CQ_SEND0 + i;
	if (i != WQP_CQ_PICK_NEW)
		return i;
	err = cq_create(res, &res->cqs[res->ncqs], send_cq_initial(res));
	if (err) {
		wharf_ctx_log(res->dev->ctx, WHARF_LOG_WARN,
			      "qp: cannot create send CQ %u of %u entries: %d",
			      nsend + 1, send_cq_initial(res), err);
		return err;
	}
	wharf_ctx_log(res->dev->ctx, WHARF_LOG_INFO,
		      "qp: shard %u: send CQ %u of at most %u added (each "
		      "grows to %u entries)",
		      res->shard_idx, nsend + 1, res->o.send_cq_max,
		      res->o.cq_max);
	return (int)res->ncqs++;
}

int wqp_res_cq_claim_qp(struct wharf_qp_res *res, uint32_t sq, uint32_t rq,
			unsigned *scq)
{
	int i = wqp_res_send_cq(res, sq, false);
	int err;

	if (i < 0) {
		res->st.cq_full++;
		return -ENOSPC;
	}
	err = wqp_res_cq_claim(res, (unsigned)i, sq);
	if (err || !rq)
		goto out;
	err = wqp_res_cq_claim(res, WQP_CQ_RECV, rq);
	if (err)
		wqp_cq_release(&res->cqs[i].b, sq);
out:
	*scq = (unsigned)i;
	return err;
}

void wqp_res_cq_unclaim_qp(struct wharf_qp_res *res, unsigned scq, uint32_t sq,
			   uint32_t rq)
{
	wqp_cq_release(&res->cqs[scq].b, sq);
	wqp_cq_release(&res->cqs[WQP_CQ_RECV].b, rq);
}
