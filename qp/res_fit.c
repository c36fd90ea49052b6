/* qp/res_fit.c - a res's options against the device's limits; see res_fit.h. */
#include <errno.h>
#include <stdio.h>

#include "qp/admit.h"
#include "qp/res_fit.h"

static uint32_t def(uint32_t v, uint32_t d)
{
	return v ? v : d;
}

static void note(struct wqp_fit *fit, enum wqp_fit_action a, const char *option,
		 const char *limit, uint64_t asked, uint64_t allowed)
{
	if (!fit || fit->n >= WQP_FIT_NOTES_MAX)
		return;
	fit->notes[fit->n++] = (struct wqp_fit_note){
		.action = a,
		.option = option,
		.limit = limit,
		.asked = asked,
		.allowed = allowed,
	};
}

/* Lowers *@v to @max when above it, with a note. */
static void clamp(struct wqp_fit *fit, uint32_t *v, uint32_t max,
		  const char *option, const char *limit)
{
	if (*v <= max)
		return;
	note(fit, WQP_FIT_CLAMPED, option, limit, *v, max);
	*v = max;
}

/* Refuses @v above @max, with a note: returns -EINVAL. */
static int refuse_above(struct wqp_fit *fit, uint64_t v, uint64_t max,
			const char *option, const char *limit)
{
	if (v <= max)
		return 0;
	note(fit, WQP_FIT_REFUSED, option, limit, v, max);
	return -EINVAL;
}

/* What bounds a CQ: the device, or the caller's lower cq_max. */
static const char *cq_limit(const struct wharf_qp_res_opts *o,
			    const struct wqp_dev_limits *d)
{
	return o->cq_max < d->max_cqe ? "cq_max" : "max_cqe";
}

static int fit_srq(struct wharf_qp_res_opts *o, const struct wqp_dev_limits *d,
		   struct wqp_fit *fit)
{
	uint32_t max_chunks;
	int err = 0;

	if (o->no_srq) {
		o->srq_depth = 0;
		o->srq_max = 0;
		return 0;
	}
	if (!d->max_srq) {
		note(fit, WQP_FIT_REFUSED, "srq_depth", "max_srq", 1, 0);
		return -EINVAL;
	}
	o->srq_depth = def(o->srq_depth, WHARF_QP_DEFAULT_SRQ_DEPTH);
	err |= refuse_above(fit, o->srq_depth, d->max_srq_wr, "srq_depth",
			    "max_srq_wr");
	err |= refuse_above(fit, o->srq_depth, o->cq_max, "srq_depth",
			    cq_limit(o, d));
	err |= refuse_above(fit, (uint64_t)o->srq_depth * o->recv_buf_size,
			    d->max_mr_size, "srq_depth * recv_buf_size",
			    "max_mr_size");
	if (err)
		return -EINVAL;
	o->srq_limit = def(o->srq_limit, o->srq_depth / 4);
	if (o->srq_limit >= o->srq_depth)
		return -EINVAL;
	o->recv_reserve =
		def(o->recv_reserve, wqp_admit_default_reserve(o->srq_depth));
	if (o->recv_reserve >= o->srq_depth)
		return -EINVAL;
	o->srq_max = def(o->srq_max, o->srq_depth);
	if (o->srq_max < o->srq_depth)
		return -EINVAL;
	clamp(fit, &o->srq_max, d->max_srq_wr, "srq_max", "max_srq_wr");
	/* Every SRQ buffer may complete on the one receive CQ. */
	clamp(fit, &o->srq_max, o->cq_max, "srq_max", cq_limit(o, d));
	/* A chunk is an MR; leave half of them to the application. */
	max_chunks = d->max_mr / 2 ? d->max_mr / 2 : 1;
	if ((uint64_t)o->srq_max > (uint64_t)max_chunks * o->srq_depth)
		clamp(fit, &o->srq_max, max_chunks * o->srq_depth, "srq_max",
		      "max_mr");
	return 0;
}

int wqp_res_fit(struct wharf_qp_res_opts *o, const struct wqp_dev_limits *d,
		struct wqp_fit *fit)
{
	uint32_t max_sge =
		d->max_sge < WHARF_WR_MAX_SGE ? d->max_sge : WHARF_WR_MAX_SGE;
	int err = 0;

	if (fit)
		fit->n = 0;
	o->cq_max = def(o->cq_max, d->max_cqe);
	clamp(fit, &o->cq_max, d->max_cqe, "cq_max", "max_cqe");
	clamp(fit, &o->cq_size, o->cq_max, "cq_size", cq_limit(o, d));
	o->send_cq_max = def(o->send_cq_max, WQP_DEFAULT_SEND_CQ_MAX);
	clamp(fit, &o->send_cq_max, WQP_SEND_CQ_LIMIT, "send_cq_max",
	      "WQP_SEND_CQ_LIMIT");
	/* One receive CQ per res, and the application's own. */
	if (d->max_cq > 2)
		clamp(fit, &o->send_cq_max, d->max_cq - 2, "send_cq_max",
		      "max_cq");
	o->recv_buf_size = def(o->recv_buf_size, WHARF_QP_DEFAULT_RECV_SIZE);
	o->recv_batch = def(o->recv_batch, 32);
	if (o->recv_batch > WQP_POST_BATCH)
		o->recv_batch = WQP_POST_BATCH;
	o->recv_credits = def(o->recv_credits, WHARF_QP_DEFAULT_RECV_CREDITS);
	if (o->no_srq)
		err |= refuse_above(fit, o->recv_credits, d->max_qp_wr,
				    "recv_credits", "max_qp_wr");
	o->sq_depth = def(o->sq_depth, WHARF_QP_DEFAULT_SQ_DEPTH);
	err |= refuse_above(fit, o->sq_depth, d->max_qp_wr, "sq_depth",
			    "max_qp_wr");
	err |= refuse_above(fit, o->sq_depth, o->cq_max, "sq_depth",
			    cq_limit(o, d));
	o->max_send_sge = def(o->max_send_sge, max_sge);
	err |= refuse_above(fit, o->max_send_sge, max_sge, "max_send_sge",
			    "max_sge");
	if (err)
		return -EINVAL;
	if (fit_srq(o, d, fit))
		return -EINVAL;
	if (o->no_pool) {
		o->pool_size = 0;
		o->pool_low_water = 0;
	} else {
		o->pool_size = def(o->pool_size, 64);
		clamp(fit, &o->pool_size, d->max_qp / 4 ? d->max_qp / 4 : 1,
		      "pool_size", "max_qp");
		o->pool_low_water = def(o->pool_low_water, o->pool_size / 2);
		if (o->pool_low_water > o->pool_size)
			return -EINVAL;
	}
	o->pool_batch = def(o->pool_batch, 8);
	o->quarantine_ms =
		o->no_quarantine_delay
			? 0
			: def(o->quarantine_ms, WHARF_QP_DEFAULT_QUARANTINE_MS);
	return 0;
}

int wqp_fit_note_format(const struct wqp_fit_note *n, char *buf, size_t len)
{
	if (n->action == WQP_FIT_CLAMPED)
		return snprintf(buf, len,
				"%s %llu is more than the device allows "
				"(%s %llu): clamped to %llu",
				n->option, (unsigned long long)n->asked,
				n->limit, (unsigned long long)n->allowed,
				(unsigned long long)n->allowed);
	return snprintf(buf, len,
			"%s %llu does not fit the device (%s %llu): refused",
			n->option, (unsigned long long)n->asked, n->limit,
			(unsigned long long)n->allowed);
}
