/*
 * qp/srq.c - receive buffers: the shared receive queue of a res and the
 * private receive queues of QPs that asked for one.
 *
 * Every SRQ buffer is in exactly one place: posted on the SRQ, lent to
 * on_recv() (during the call), kept by the application (held[]), or on the
 * pending stack waiting to be reposted.  Reposts go out in batches of
 * recv_batch chained WRs, immediately when the SRQ fell below its limit,
 * and entirely before the shard sleeps.  The SRQ limit is re-armed once the
 * SRQ is above it again, so IBV_EVENT_SRQ_LIMIT_REACHED keeps triggering
 * refills when data holds buffers.
 *
 * The SRQ starts with srq_depth buffers and may grow to srq_max: when
 * admission runs short, wqp_srq_grow() registers one more chunk of
 * srq_depth buffers (fewer for the last) and posts them.  The SRQ itself
 * is created for srq_max work requests, so growing needs no resize (which
 * not every device supports).  Buffers keep their number for life:
 * chunk = number / srq_depth.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "qp/internal.h"
#include "qp/wr_id.h"

static void arm_limit(struct wharf_qp_res *res)
{
	struct ibv_srq_attr attr = {.srq_limit = res->o.srq_limit};

	if (res->srq_limit_armed || res->srq_posted < res->o.srq_limit)
		return;
	if (!ibv_modify_srq(res->srq, &attr, IBV_SRQ_LIMIT))
		res->srq_limit_armed = true;
}

static struct wharf_buf_pool *chunk_of(const struct wharf_qp_res *res,
				       uint32_t idx)
{
	uint32_t c = idx / res->o.srq_depth;

	return c < res->nchunks ? res->chunks[c] : NULL;
}

/* SRQ buffer number @idx, or NULL. */
static void *srq_buf(const struct wharf_qp_res *res, uint32_t idx)
{
	struct wharf_buf_pool *p = chunk_of(res, idx);

	return p ? wharf_buf_pool_buf(p, idx % res->o.srq_depth) : NULL;
}

/* The number of SRQ buffer @buf, or -1. */
static int64_t srq_index(const struct wharf_qp_res *res, const void *buf)
{
	for (uint32_t c = 0; c < res->nchunks; c++) {
		int64_t i = wharf_buf_pool_index(res->chunks[c], buf);

		if (i >= 0)
			return (int64_t)c * res->o.srq_depth + i;
	}
	return -1;
}

/* Posts up to @n pending buffers in one call; returns how many. */
static unsigned post_batch(struct wharf_qp_res *res, unsigned n)
{
	struct ibv_recv_wr wr[WQP_POST_BATCH], *bad = NULL;
	struct ibv_sge sge[WQP_POST_BATCH];
	uint32_t len = (uint32_t)wharf_buf_pool_stride(res->chunks[0]);
	int err;

	if (n > WQP_POST_BATCH)
		n = WQP_POST_BATCH;
	if (n > res->npending)
		n = res->npending;
	for (unsigned i = 0; i < n; i++) {
		uint32_t idx = res->pending[res->npending - 1 - i];

		sge[i].addr = (uintptr_t)srq_buf(res, idx);
		sge[i].length = len;
		sge[i].lkey = wharf_buf_pool_lkey(chunk_of(res, idx));
		wr[i].wr_id = wqp_wrid_recv(WQP_WRID_SRQ, idx);
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	if (!n)
		return 0;
	err = ibv_post_srq_recv(res->srq, wr, &bad);
	if (err) {
		/* Those before @bad were posted; the rest stay pending. */
		unsigned done = bad ? (unsigned)(bad - wr) : 0;

		wharf_ctx_log(res->dev->ctx, WHARF_LOG_ERROR,
			      "qp: ibv_post_srq_recv: %d", err);
		n = done;
	}
	res->npending -= n;
	res->srq_posted += n;
	res->st.srq_post_calls++;
	return n;
}

unsigned wqp_srq_repost(struct wharf_qp_res *res, bool all)
{
	unsigned total = 0;

	if (!res->srq)
		return 0;
	while (res->npending && (all || res->npending >= res->o.recv_batch ||
				 res->srq_posted < res->o.srq_limit)) {
		unsigned n = post_batch(res, res->o.recv_batch);

		if (!n)
			break;
		total += n;
	}
	arm_limit(res);
	return total;
}

void wqp_srq_recycle(struct wharf_qp_res *res, uint32_t index)
{
	res->pending[res->npending++] = index;
}

void wqp_srq_limit_event(struct wharf_qp_res *res)
{
	res->st.srq_limit_events++;
	res->srq_limit_armed = false;
	wqp_srq_repost(res, true);
}

/* Registers buffers [depth, depth + n) as one more chunk, queued to post. */
static int add_chunk(struct wharf_qp_res *res, uint32_t n)
{
	struct wharf_buf_pool_opts bo = {.size = sizeof(bo)};
	struct wharf_buf_pool *pool;
	uint32_t base = res->nchunks * res->o.srq_depth;
	int err;

	bo.arena = res->arena;
	bo.pd = res->dev->pd;
	bo.buf_size = res->o.recv_buf_size;
	bo.count = n;
	err = wharf_buf_pool_create(&bo, &pool);
	if (err)
		return err;
	res->chunks[res->nchunks++] = pool;
	/* All buffers leave the pool once; wharf tracks them by number. */
	for (uint32_t i = 0; i < n; i++) {
		void *b = wharf_buf_pool_get(pool);

		res->pending[res->npending++] =
			base + (uint32_t)wharf_buf_pool_index(pool, b);
	}
	res->st.recv_bytes += (uint64_t)n * wharf_buf_pool_stride(pool);
	return 0;
}

int wqp_srq_setup(struct wharf_qp_res *res)
{
	struct ibv_srq_init_attr sa = {0};
	uint32_t depth = res->o.srq_depth, max = res->o.srq_max;
	uint32_t nchunks = (max + depth - 1) / depth;
	int err;

	sa.srq_context = res;
	sa.attr.max_wr = max;
	sa.attr.max_sge = 1;
	res->srq = ibv_create_srq(res->dev->pd, &sa);
	if (!res->srq)
		return errno ? -errno : -ENOMEM;
	res->chunks =
		wharf_numa_alloc(res->arena, nchunks * sizeof(void *), 0, true);
	res->pending =
		wharf_numa_alloc(res->arena, max * sizeof(uint32_t), 0, false);
	res->held = wharf_numa_alloc(res->arena, max, 0, true);
	if (!res->chunks || !res->pending || !res->held)
		return -ENOMEM;
	err = add_chunk(res, depth);
	if (err)
		return err;
	wqp_srq_repost(res, true);
	if (res->srq_posted != depth)
		return -ENOMEM;
	return 0;
}

int wqp_srq_grow(struct wharf_qp_res *res)
{
	uint32_t have = res->admit.depth, max = res->o.srq_max;
	uint32_t n =
		max - have < res->o.srq_depth ? max - have : res->o.srq_depth;
	int err;

	if (!res->srq || !n)
		return -ENOSPC;
	err = wqp_res_cq_claim(res, WQP_CQ_RECV, n); /* their completions */
	if (err)
		return err;
	err = add_chunk(res, n);
	if (err) {
		wqp_cq_release(&res->cqs[WQP_CQ_RECV].b, n);
		wharf_ctx_log(res->dev->ctx, WHARF_LOG_WARN,
			      "qp: cannot grow the SRQ past %u buffers: %d",
			      have, err);
		return err;
	}
	wqp_admit_grow(&res->admit, n);
	res->st.srq_grows++;
	wqp_srq_repost(res, true);
	return 0;
}

void wqp_srq_teardown(struct wharf_qp_res *res)
{
	if (res->srq)
		ibv_destroy_srq(res->srq);
	res->srq = NULL;
	for (uint32_t c = 0; c < res->nchunks; c++)
		wharf_buf_pool_destroy(res->chunks[c]);
	res->nchunks = 0;
	wharf_numa_free(res->arena, res->chunks);
	wharf_numa_free(res->arena, res->pending);
	wharf_numa_free(res->arena, res->held);
	res->chunks = NULL;
	res->pending = NULL;
	res->held = NULL;
}

int wharf_qp_res_recv_put(struct wharf_qp_res *res, void *buf)
{
	int64_t idx;

	if (!res || !res->nchunks)
		return -EINVAL;
	idx = srq_index(res, buf);
	if (idx < 0 || !res->held[idx] || srq_buf(res, (uint32_t)idx) != buf)
		return -EINVAL;
	res->held[idx] = 0;
	res->st.recv_held--;
	wqp_srq_recycle(res, (uint32_t)idx);
	return 0;
}

/* Private receive queues ------------------------------------------------- */

static int rq_post(struct wharf_qp *qp, void *buf)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr = {0}, *bad = NULL;
	int64_t idx = wharf_buf_pool_index(qp->rq_bufs, buf);
	int err;

	sge.addr = (uintptr_t)buf;
	sge.length = (uint32_t)wharf_buf_pool_stride(qp->rq_bufs);
	sge.lkey = wharf_buf_pool_lkey(qp->rq_bufs);
	wr.wr_id = wqp_wrid_recv(WQP_WRID_RQ, (uint32_t)idx);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	err = ibv_post_recv(qp->ibqp, &wr, &bad);
	if (err) {
		wharf_buf_pool_put(qp->rq_bufs, buf);
		return -err;
	}
	qp->rq_posted++;
	return 0;
}

int wqp_rq_fill(struct wharf_qp *qp)
{
	void *buf;

	while ((buf = wharf_buf_pool_get(qp->rq_bufs))) {
		int err = rq_post(qp, buf);

		if (err)
			return err;
	}
	return 0;
}

void wqp_rq_repost(struct wharf_qp *qp, void *buf)
{
	if (qp->life == WQP_LIFE_LIVE && qp->vstate != IBV_QPS_ERR)
		rq_post(qp, buf);
	else
		wharf_buf_pool_put(qp->rq_bufs, buf);
}

/* Receive completions ---------------------------------------------------- */

static bool accepts_recv(const struct wharf_qp *qp)
{
	return qp && qp->life == WQP_LIFE_LIVE &&
	       (qp->vstate == IBV_QPS_RTR || qp->vstate == IBV_QPS_RTS);
}

/* Calls on_recv; returns true when the application keeps @buf. */
static bool deliver(struct wharf_qp *qp, void *buf, const struct ibv_wc *wc)
{
	struct wharf_qp_recv rx = {.len = wc->byte_len};

	if (wc->wc_flags & IBV_WC_WITH_IMM) {
		rx.flags |= WHARF_QP_RECV_IMM;
		rx.imm = be32toh(wc->imm_data);
	}
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		rx.flags |= WHARF_QP_RECV_WRITE;
		rx.len = 0;
	}
	if (!wqp_qp_ops(qp)->on_recv)
		return false;
	return wqp_qp_ops(qp)->on_recv(qp, buf, &rx, qp->arg) ==
	       WHARF_QP_RECV_KEEP;
}

void wqp_recv_complete(struct wharf_qp_res *res, const struct ibv_wc *wc)
{
	struct wharf_qp *qp = wqp_qpn_map_find(&res->map, wc->qp_num);
	uint32_t idx = wqp_wrid_index(wc->wr_id);
	void *buf;

	if (wqp_wrid_kind(wc->wr_id) == WQP_WRID_SRQ) {
		buf = srq_buf(res, idx);
		if (!buf)
			return;
		res->srq_posted--;
		if (wc->status != IBV_WC_SUCCESS) {
			if (qp)
				wqp_report_error(qp, wc->status);
		} else if (accepts_recv(qp) && deliver(qp, buf, wc)) {
			res->held[idx] = 1;
			res->st.recv_held++;
			return;
		}
		wqp_srq_recycle(res, idx);
		return;
	}
	/* Private receive queue: the QP exists until it is drained. */
	if (!qp || !qp->rq_bufs)
		return;
	buf = wharf_buf_pool_buf(qp->rq_bufs, idx);
	if (!buf)
		return;
	qp->rq_posted--;
	if (wc->status != IBV_WC_SUCCESS)
		wqp_report_error(qp, wc->status);
	else if (accepts_recv(qp))
		deliver(qp, buf, wc); /* KEEP is not supported here */
	wqp_rq_repost(qp, buf);
	if (qp->life != WQP_LIFE_LIVE)
		wqp_drain_check(qp);
}
