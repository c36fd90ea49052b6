/*
 * qp/post.c - the send side of the data path.
 *
 * A post only validates, fills the wharf_wr and appends it to the QP's
 * queue; the QP goes on the res's dirty list.  wqp_flush() (from the res
 * poller each loop iteration, from the arm function before the shard
 * sleeps, or wharf_qp_res_flush()) takes from each dirty QP as many WRs as
 * its credits allow and chains them into one ibv_post_send().  Every WR is
 * signaled; its completion gives its credits back and hands the wharf_wr to
 * on_send_done().  A SEND or WRITE of at most the res's max_inline_data
 * bytes goes inline (inline.h): copied into the WQE by the post.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "qp/inline.h"
#include "qp/internal.h"
#include "qp/wr_id.h"

void wharf_wr_init(struct wharf_wr *wr, uint32_t tag)
{
	if (!wr)
		return;
	memset(wr, 0, sizeof(*wr));
	wr->tag = tag;
	wr->magic = WHARF_WR_MAGIC_IDLE;
}

static void mark_dirty(struct wharf_qp *qp)
{
	if (qp->dirty)
		return;
	qp->dirty = true;
	qp->dirty_next = qp->res->dirty;
	qp->res->dirty = qp;
}

void wqp_dirty_unlink(struct wharf_qp *qp)
{
	if (!qp->dirty)
		return;
	for (struct wharf_qp **pp = &qp->res->dirty; *pp;
	     pp = &(*pp)->dirty_next)
		if (*pp == qp) {
			*pp = qp->dirty_next;
			break;
		}
	qp->dirty = false;
	qp->dirty_next = NULL;
}

/* Counts a WR that will have to wait behind the WRs already queued. */
static void count_wait(struct wharf_qp *qp, bool is_read)
{
	uint32_t sq = qp->cr.sq_used + qp->q.len;
	uint32_t rd = qp->cr.rd_used + qp->q_reads;

	if (sq >= qp->cr.sq_max)
		qp->res->st.wrs_waited_sq++;
	else if (is_read && rd >= qp->cr.rd_max)
		qp->res->st.wrs_waited_rd++;
}

static int post(struct wharf_qp *qp, struct wharf_wr *wr, enum wharf_wr_op op,
		const struct ibv_sge *sgl, unsigned nsge)
{
	bool is_read = op == WHARF_WR_RDMA_READ;

	if (!qp || !wr || !wr->tag || wr->magic != WHARF_WR_MAGIC_IDLE ||
	    nsge > qp->res->o.max_send_sge || (nsge && !sgl) ||
	    ((uintptr_t)wr & WQP_WRID_KIND_MASK))
		return -EINVAL;
	if (!nsge && (op == WHARF_WR_RDMA_READ || op == WHARF_WR_RDMA_WRITE))
		return -EINVAL;
	if (qp->life != WQP_LIFE_LIVE || qp->vstate != IBV_QPS_RTS)
		return -ENOTCONN;
	if (is_read && !qp->cr.rd_max)
		return -EOPNOTSUPP;
	wr->op = (uint8_t)op;
	wr->nsge = (uint8_t)nsge;
	wr->status = IBV_WC_SUCCESS;
	wr->qp = qp;
	wr->send_flags =
		wqp_inline_fits(op, sgl, nsge, qp->res->o.max_inline_data)
			? IBV_SEND_INLINE
			: 0;
	if (nsge)
		memcpy(wr->sge, sgl, nsge * sizeof(*sgl));
	count_wait(qp, is_read);
	wr->magic = WHARF_WR_MAGIC_BUSY;
	wqp_wrq_push(&qp->q, wr);
	if (is_read)
		qp->q_reads++;
	mark_dirty(qp);
	return 0;
}

int wharf_qp_post_send(struct wharf_qp *qp, struct wharf_wr *wr,
		       const struct ibv_sge *sgl, unsigned nsge, bool with_imm,
		       uint32_t imm)
{
	int err = post(qp, wr, with_imm ? WHARF_WR_SEND_IMM : WHARF_WR_SEND,
		       sgl, nsge);

	if (!err)
		wr->imm_be = htobe32(imm);
	return err;
}

int wharf_qp_post_send_inv(struct wharf_qp *qp, struct wharf_wr *wr,
			   const struct ibv_sge *sgl, unsigned nsge,
			   uint32_t rkey)
{
	int err;

	if (qp && !(qp->res->dev->attr.device_cap_flags &
		    IBV_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;
	err = post(qp, wr, WHARF_WR_SEND_INV, sgl, nsge);
	if (!err)
		wr->rkey = rkey;
	return err;
}

int wharf_qp_post_write(struct wharf_qp *qp, struct wharf_wr *wr,
			const struct ibv_sge *sgl, unsigned nsge,
			uint64_t remote_addr, uint32_t rkey, bool with_imm,
			uint32_t imm)
{
	int err = post(qp, wr,
		       with_imm ? WHARF_WR_RDMA_WRITE_IMM : WHARF_WR_RDMA_WRITE,
		       sgl, nsge);

	if (!err) {
		wr->remote_addr = remote_addr;
		wr->rkey = rkey;
		wr->imm_be = htobe32(imm);
	}
	return err;
}

int wharf_qp_post_read(struct wharf_qp *qp, struct wharf_wr *wr,
		       const struct ibv_sge *sgl, unsigned nsge,
		       uint64_t remote_addr, uint32_t rkey)
{
	int err = post(qp, wr, WHARF_WR_RDMA_READ, sgl, nsge);

	if (!err) {
		wr->remote_addr = remote_addr;
		wr->rkey = rkey;
	}
	return err;
}

static void to_ibv(const struct wharf_wr *wr, struct ibv_send_wr *s)
{
	static const enum ibv_wr_opcode opcode[] = {
		[WHARF_WR_SEND] = IBV_WR_SEND,
		[WHARF_WR_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
		[WHARF_WR_RDMA_WRITE] = IBV_WR_RDMA_WRITE,
		[WHARF_WR_RDMA_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
		[WHARF_WR_RDMA_READ] = IBV_WR_RDMA_READ,
		[WHARF_WR_SEND_INV] = IBV_WR_SEND_WITH_INV,
	};

	memset(s, 0, sizeof(*s));
	s->wr_id = wqp_wrid_send(wr);
	s->sg_list = (struct ibv_sge *)wr->sge;
	s->num_sge = wr->nsge;
	s->opcode = opcode[wr->op];
	s->send_flags = IBV_SEND_SIGNALED | wr->send_flags;
	if (wr->op == WHARF_WR_SEND_IMM || wr->op == WHARF_WR_RDMA_WRITE_IMM)
		s->imm_data = wr->imm_be;
	switch ((enum wharf_wr_op)wr->op) {
	case WHARF_WR_RDMA_WRITE:
	case WHARF_WR_RDMA_WRITE_IMM:
	case WHARF_WR_RDMA_READ:
		s->wr.rdma.remote_addr = wr->remote_addr;
		s->wr.rdma.rkey = wr->rkey;
		break;
	case WHARF_WR_SEND_INV:
		s->invalidate_rkey = wr->rkey;
		break;
	case WHARF_WR_NONE:
	case WHARF_WR_SEND:
	case WHARF_WR_SEND_IMM:
		break;
	}
}

/* Posts what @qp's credits allow; returns the ibv_post_send() calls. */
static int flush_qp(struct wharf_qp_res *res, struct wharf_qp *qp)
{
	int calls = 0;

	for (;;) {
		enum wqp_credit_verdict why;
		struct ibv_send_wr *bad = NULL;
		uint32_t n = wqp_wrq_take(&qp->q, &qp->cr, WQP_POST_BATCH,
					  res->batch, &why);
		uint32_t done;
		int err;

		if (!n)
			break;
		for (uint32_t i = 0; i < n; i++) {
			to_ibv(res->batch[i], &res->swr[i]);
			res->swr[i].next = i + 1 < n ? &res->swr[i + 1] : NULL;
			if (res->batch[i]->op == WHARF_WR_RDMA_READ)
				qp->q_reads--;
		}
		err = ibv_post_send(qp->ibqp, res->swr, &bad);
		calls++;
		res->st.post_calls++;
		done = err ? (bad ? (uint32_t)(bad - res->swr) : 0) : n;
		res->st.wrs_posted += done;
		for (uint32_t i = 0; i < done; i++)
			if (res->batch[i]->send_flags & IBV_SEND_INLINE)
				res->st.wrs_inline++;
		if (err) {
			for (uint32_t i = done; i < n; i++)
				if (res->batch[i]->op == WHARF_WR_RDMA_READ)
					qp->q_reads++;
			wqp_wrq_unpop(&qp->q, &qp->cr, res->batch + done,
				      n - done);
			wharf_ctx_log(res->dev->ctx, WHARF_LOG_ERROR,
				      "qp: ibv_post_send on QP %u: %d", qp->qpn,
				      err);
			break;
		}
		if (why != WQP_CREDIT_OK || n < WQP_POST_BATCH)
			break;
	}
	return calls;
}

int wqp_flush(struct wharf_qp_res *res)
{
	struct wharf_qp *list = res->dirty;
	struct wharf_qp *retry = NULL;
	int calls = 0;

	res->dirty = NULL;
	while (list) {
		struct wharf_qp *qp = list;

		list = qp->dirty_next;
		qp->dirty = false;
		if (qp->life != WQP_LIFE_LIVE || qp->vstate != IBV_QPS_RTS)
			continue;
		calls += flush_qp(res, qp);
		if (qp->q.len && qp->cr.sq_used == 0) {
			/* Nothing outstanding to wake it: post failed. */
			qp->dirty = true;
			qp->dirty_next = retry;
			retry = qp;
		}
	}
	while (retry) {
		struct wharf_qp *qp = retry;

		retry = qp->dirty_next;
		qp->dirty_next = res->dirty;
		res->dirty = qp;
	}
	return calls;
}

int wharf_qp_res_flush(struct wharf_qp_res *res)
{
	if (!res)
		return -EINVAL;
	return wqp_flush(res);
}

static void complete(struct wharf_qp *qp, struct wharf_wr *wr,
		     enum ibv_wc_status status)
{
	wr->status = status;
	wr->magic = WHARF_WR_MAGIC_IDLE;
	wr->next = NULL;
	if (wqp_qp_ops(qp)->on_send_done)
		wqp_qp_ops(qp)->on_send_done(qp, wr, qp->arg);
}

void wqp_send_complete(struct wharf_qp_res *res, const struct ibv_wc *wc)
{
	struct wharf_wr *wr = wqp_wrid_to_wr(wc->wr_id);
	struct wharf_qp *qp = wr ? wr->qp : NULL;

	if (!wr || !qp || qp->res != res || qp->qpn != wc->qp_num) {
		wharf_ctx_log(res->dev->ctx, WHARF_LOG_ERROR,
			      "qp: send completion for an unknown WR on QP %u",
			      wc->qp_num);
		return;
	}
	wqp_credit_put(&qp->cr, wr->op == WHARF_WR_RDMA_READ);
	if (wc->status != IBV_WC_SUCCESS)
		wqp_report_error(qp, wc->status);
	complete(qp, wr, wc->status);
	if (qp->life == WQP_LIFE_LIVE) {
		if (qp->q.len)
			mark_dirty(qp);
	} else {
		wqp_drain_check(qp);
	}
}

void wqp_cancel_queued(struct wharf_qp *qp)
{
	struct wharf_wr *wr;

	while ((wr = wqp_wrq_pop(&qp->q)))
		wqp_wrq_push(&qp->cancel, wr);
	qp->q_reads = 0;
}

void wqp_deliver_cancelled(struct wharf_qp *qp)
{
	struct wharf_wr *wr;

	while ((wr = wqp_wrq_pop(&qp->cancel)))
		complete(qp, wr, IBV_WC_WR_FLUSH_ERR);
}
