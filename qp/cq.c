/*
 * qp/cq.c - the completion queues of a res: one for receives (the SRQ's
 * buffers, private receive queues) and one for sends, on one completion
 * channel, so that a shard's connections have two device-sized CQs (rxe's
 * max_cqe is 32767) and a storm of receive buffers does not crowd out send
 * queues.  Both are driven the ways a shard runs:
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
	if (qp->ops.on_error)
		qp->ops.on_error(qp, status, qp->arg);
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

	for (unsigned i = 0; i < WQP_CQ_COUNT; i++)
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
	for (unsigned i = 0; i < WQP_CQ_COUNT; i++) {
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
		struct wqp_cq *c =
			&res->cqs[cq == res->cqs[WQP_CQ_SEND].cq ? WQP_CQ_SEND
								 : WQP_CQ_RECV];

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
	c->cq = ibv_create_cq(res->dev->verbs, (int)entries, res, res->chan,
			      res->o.comp_vector);
	if (!c->cq)
		return errno ? -errno : -ENOMEM;
	c->b.size = (uint32_t)c->cq->cqe;
	c->b.max = res->o.cq_max > c->b.size ? res->o.cq_max : c->b.size;
	c->b.reserved = 0;
	return 0;
}

int wqp_cq_setup(struct wharf_qp_res *res, uint32_t recv, uint32_t send)
{
	int flags, err;

	res->chan = ibv_create_comp_channel(res->dev->verbs);
	if (!res->chan)
		return errno ? -errno : -ENOMEM;
	flags = fcntl(res->chan->fd, F_GETFL);
	if (flags < 0 || fcntl(res->chan->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	err = cq_create(res, &res->cqs[WQP_CQ_RECV], recv);
	if (!err)
		err = cq_create(res, &res->cqs[WQP_CQ_SEND], send);
	if (err)
		return err;
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
	for (unsigned i = 0; i < WQP_CQ_COUNT; i++) {
		struct wqp_cq *c = &res->cqs[i];

		if (c->cq) {
			if (c->unacked)
				ibv_ack_cq_events(c->cq, c->unacked);
			ibv_destroy_cq(c->cq);
		}
		c->cq = NULL;
		c->unacked = 0;
	}
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

int wqp_res_cq_claim_qp(struct wharf_qp_res *res, uint32_t sq, uint32_t rq)
{
	int err = wqp_res_cq_claim(res, WQP_CQ_SEND, sq);

	if (err || !rq)
		return err;
	err = wqp_res_cq_claim(res, WQP_CQ_RECV, rq);
	if (err)
		wqp_cq_release(&res->cqs[WQP_CQ_SEND].b, sq);
	return err;
}

void wqp_res_cq_unclaim_qp(struct wharf_qp_res *res, uint32_t sq, uint32_t rq)
{
	wqp_cq_release(&res->cqs[WQP_CQ_SEND].b, sq);
	wqp_cq_release(&res->cqs[WQP_CQ_RECV].b, rq);
}
