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

/* Posts up to @n pending buffers in one call; returns how many. */
static unsigned post_batch(struct wharf_qp_res *res, unsigned n)
{
	struct ibv_recv_wr wr[WQP_POST_BATCH], *bad = NULL;
	struct ibv_sge sge[WQP_POST_BATCH];
	uint32_t lkey = wharf_buf_pool_lkey(res->bufs);
	uint32_t len = (uint32_t)wharf_buf_pool_stride(res->bufs);
	int err;

	if (n > WQP_POST_BATCH)
		n = WQP_POST_BATCH;
	if (n > res->npending)
		n = res->npending;
	for (unsigned i = 0; i < n; i++) {
		uint32_t idx = res->pending[res->npending - 1 - i];

		sge[i].addr = (uintptr_t)wharf_buf_pool_buf(res->bufs, idx);
		sge[i].length = len;
		sge[i].lkey = lkey;
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

int wqp_srq_setup(struct wharf_qp_res *res)
{
	struct ibv_srq_init_attr sa = {0};
	struct wharf_buf_pool_opts bo = {.size = sizeof(bo)};
	uint32_t depth = res->o.srq_depth;
	int err;

	sa.srq_context = res;
	sa.attr.max_wr = depth;
	sa.attr.max_sge = 1;
	res->srq = ibv_create_srq(res->dev->pd, &sa);
	if (!res->srq)
		return errno ? -errno : -ENOMEM;
	bo.arena = res->arena;
	bo.pd = res->dev->pd;
	bo.buf_size = res->o.recv_buf_size;
	bo.count = depth;
	err = wharf_buf_pool_create(&bo, &res->bufs);
	if (err)
		return err;
	res->pending = wharf_numa_alloc(res->arena, depth * sizeof(uint32_t), 0,
					false);
	res->held = wharf_numa_alloc(res->arena, depth, 0, true);
	if (!res->pending || !res->held)
		return -ENOMEM;
	/* All buffers leave the pool once; wharf tracks them by index. */
	for (uint32_t i = 0; i < depth; i++) {
		void *b = wharf_buf_pool_get(res->bufs);

		res->pending[i] = (uint32_t)wharf_buf_pool_index(res->bufs, b);
	}
	res->npending = depth;
	res->st.recv_bytes +=
		(uint64_t)depth * wharf_buf_pool_stride(res->bufs);
	wqp_srq_repost(res, true);
	if (res->srq_posted != depth)
		return -ENOMEM;
	return 0;
}

void wqp_srq_teardown(struct wharf_qp_res *res)
{
	if (res->srq)
		ibv_destroy_srq(res->srq);
	res->srq = NULL;
	wharf_buf_pool_destroy(res->bufs);
	res->bufs = NULL;
	wharf_numa_free(res->arena, res->pending);
	wharf_numa_free(res->arena, res->held);
	res->pending = NULL;
	res->held = NULL;
}

int wharf_qp_res_recv_put(struct wharf_qp_res *res, void *buf)
{
	int64_t idx;

	if (!res || !res->bufs)
		return -EINVAL;
	idx = wharf_buf_pool_index(res->bufs, buf);
	if (idx < 0 || !res->held[idx] ||
	    wharf_buf_pool_buf(res->bufs, (uint32_t)idx) != buf)
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
	if (!qp->ops.on_recv)
		return false;
	return qp->ops.on_recv(qp, buf, &rx, qp->arg) == WHARF_QP_RECV_KEEP;
}

void wqp_recv_complete(struct wharf_qp_res *res, const struct ibv_wc *wc)
{
	struct wharf_qp *qp = wqp_qpn_map_find(&res->map, wc->qp_num);
	uint32_t idx = wqp_wrid_index(wc->wr_id);
	void *buf;

	if (wqp_wrid_kind(wc->wr_id) == WQP_WRID_SRQ) {
		buf = wharf_buf_pool_buf(res->bufs, idx);
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
