/*
 * qp/qp.c - taking, closing and releasing QPs (the life in quarantine.h).
 */
#include <errno.h>
#include <string.h>

#include "base/opts.h"
#include "qp/internal.h"

static bool can_pool_take(const struct wharf_qp_res *res, bool private_rq,
			  uint32_t sq_depth)
{
	return !res->o.no_pool && !private_rq && sq_depth == res->o.sq_depth;
}

/* Room for @credits: now, or after growing the SRQ; -EBUSY when not. */
static int admit(struct wharf_qp_res *res, uint32_t credits)
{
	uint32_t short_by;

	while ((short_by = wqp_admit_shortfall(&res->admit, credits)) &&
	       short_by != UINT32_MAX)
		if (wqp_srq_grow(res))
			return -EBUSY;
	return short_by ? -EBUSY : 0;
}

void wharf_qp_opts_init(struct wharf_qp_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
}

int wharf_qp_take(struct wharf_qp_res *res, const struct wharf_qp_opts *in,
		  struct wharf_qp **out)
{
	struct wharf_qp_opts o;
	struct wharf_qp *qp = NULL;
	struct wharf_qp_ops ops;
	enum wqp_life_act a;
	uint16_t ops_idx;
	bool private_rq;
	uint32_t sq_depth, rq_depth, credits;
	unsigned scq;
	int err;

	if (!res || !in || !out)
		return -EINVAL;
	err = wbase_opts_copy(&o, sizeof(o), in);
	if (err)
		return err;
	if (!o.ops)
		return -EINVAL;
	err = wbase_opts_copy(&ops, sizeof(ops), o.ops);
	if (err)
		return err;
	if (o.min_rnr_timer > 31)
		return -EINVAL;
	err = wqp_ops_tab_intern(&res->ops, &ops, &ops_idx);
	if (err)
		return err;
	private_rq = o.private_rq || !res->srq;
	sq_depth = o.sq_depth ? o.sq_depth : res->o.sq_depth;
	if (sq_depth > (uint32_t)res->dev->attr.max_qp_wr)
		return -EINVAL;
	rq_depth = private_rq ? (o.rq_depth ? o.rq_depth : res->o.recv_credits)
			      : 0;
	if (rq_depth > (uint32_t)res->dev->attr.max_qp_wr)
		return -EINVAL;
	credits = private_rq ? 0
			     : (o.recv_credits ? o.recv_credits
					       : res->o.recv_credits);
	if (credits && admit(res, credits)) {
		res->st.admit_refused++;
		return -EBUSY;
	}
	err = wqp_res_cq_claim_qp(res, sq_depth, rq_depth, &scq);
	if (err)
		return err;
	if (can_pool_take(res, private_rq, sq_depth))
		qp = wqp_pool_take_free(res, scq);
	if (!qp) {
		if (can_pool_take(res, private_rq, sq_depth))
			res->st.pool_empty++;
		err = wqp_qp_create(res, scq, sq_depth, private_rq, rq_depth,
				    &qp);
		if (err) {
			wqp_res_cq_unclaim_qp(res, scq, sq_depth, rq_depth);
			return err;
		}
	}
	if (credits)
		wqp_admit_take(&res->admit, credits);
	wqp_life_step(&qp->life, WQP_EV_TAKE, WHARF_QP_FATE_UNUSED, true, &a);
	atomic_store_explicit(&qp->gen, ++res->gen, memory_order_relaxed);
	qp->ops_idx = ops_idx;
	qp->arg = o.arg;
	qp->recv_credits = credits;
	qp->min_rnr_timer = o.min_rnr_timer;
	qp->last_wqe = false;
	qp->error_reported = false;
	qp->fate = WHARF_QP_FATE_UNUSED;
	qp->act = WQP_ACT_NONE;
	qp->q_reads = 0;
	wqp_credit_init(&qp->cr, sq_depth, 0);
	res->nactive++;
	wqp_res_kick(res); /* the pool may need a refill */
	*out = qp;
	return 0;
}

int wharf_qp_close(struct wharf_qp *qp)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
	struct wharf_qp_res *res;
	enum wqp_life_act a;
	enum wqp_life was;
	int err;

	if (!qp)
		return -EINVAL;
	res = qp->res;
	was = qp->life;
	if (was != WQP_LIFE_TAKEN && was != WQP_LIFE_LIVE)
		return wqp_life_step(&qp->life, WQP_EV_CLOSE, qp->fate, true,
				     &a);
	if (was == WQP_LIFE_LIVE && qp->vstate != IBV_QPS_ERR) {
		err = ibv_modify_qp(qp->ibqp, &attr, IBV_QP_STATE);
		if (err)
			return -err;
	}
	wqp_life_step(&qp->life, WQP_EV_CLOSE, qp->fate, true, &a);
	if (was == WQP_LIFE_TAKEN) {
		qp->last_wqe = true; /* never received anything */
	} else {
		qp->vstate = IBV_QPS_ERR;
		if (!qp->last_wqe) {
			qp->deadline_ns =
				wharf_now_ns() +
				(uint64_t)res->o.last_wqe_timeout_ms * 1000000u;
			wqp_list_push(&res->closing, WQP_IN_CLOSING, qp);
		}
	}
	wqp_cancel_queued(qp);
	wqp_reap_add(qp);
	wqp_drain_check(qp);
	wqp_res_kick(res);
	return 0;
}

int wharf_qp_release(struct wharf_qp *qp, enum wharf_qp_fate fate)
{
	enum wqp_life_act a;
	enum wqp_life was;
	bool poolable;
	int err;

	if (!qp)
		return -EINVAL;
	/* A second release finds the QP past the states that take one. */
	was = qp->life;
	poolable = !qp->res->o.no_pool && !qp->broken && qp->pooled_shape;
	err = wqp_life_step(&qp->life, WQP_EV_RELEASE, fate, poolable, &a);
	if (err)
		return err;
	if (was == WQP_LIFE_TAKEN) /* never left RESET: nothing to drain */
		wqp_unclaim(qp);
	qp->fate = fate;
	qp->release_ns = wharf_now_ns();
	if (a != WQP_ACT_NONE) {
		qp->act = a;
		wqp_reap_add(qp);
		wqp_res_kick(qp->res);
	}
	return 0;
}

uint32_t wharf_qp_num(const struct wharf_qp *qp)
{
	return qp ? qp->qpn : 0;
}

bool wharf_qp_uses_srq(const struct wharf_qp *qp)
{
	return qp && !qp->private_rq;
}

struct ibv_qp *wharf_qp_ibv(const struct wharf_qp *qp)
{
	return qp ? qp->ibqp : NULL;
}

struct wharf_qp_res *wharf_qp_res_of(const struct wharf_qp *qp)
{
	return qp ? qp->res : NULL;
}
