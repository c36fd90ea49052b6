/*
 * qp/res.c - a shard's resources on one device: options, creation,
 * destruction, admission and counters.
 */
#include <errno.h>
#include <string.h>

#include "core/opts.h"
#include "qp/internal.h"

static uint32_t def(uint32_t v, uint32_t d)
{
	return v ? v : d;
}

/* Fills defaults and checks @o against the device. */
static int resolve(struct wharf_qp_res_opts *o, const struct ibv_device_attr *a)
{
	uint32_t max_sge = (uint32_t)a->max_sge < WHARF_WR_MAX_SGE
				   ? (uint32_t)a->max_sge
				   : WHARF_WR_MAX_SGE;

	if (o->no_srq) {
		o->srq_depth = 0;
	} else {
		o->srq_depth = def(o->srq_depth, WHARF_QP_DEFAULT_SRQ_DEPTH);
		if (!a->max_srq || o->srq_depth > (uint32_t)a->max_srq_wr)
			return -EINVAL;
	}
	o->recv_buf_size = def(o->recv_buf_size, WHARF_QP_DEFAULT_RECV_SIZE);
	o->recv_batch = def(o->recv_batch, 32);
	if (o->recv_batch > WQP_POST_BATCH)
		o->recv_batch = WQP_POST_BATCH;
	o->recv_credits = def(o->recv_credits, WHARF_QP_DEFAULT_RECV_CREDITS);
	if (!o->no_srq) {
		o->srq_limit = def(o->srq_limit, o->srq_depth / 4);
		if (o->srq_limit >= o->srq_depth)
			return -EINVAL;
		if (!o->recv_reserve)
			o->recv_reserve =
				wqp_admit_default_reserve(o->srq_depth);
		if (o->recv_reserve >= o->srq_depth)
			return -EINVAL;
		o->srq_max = def(o->srq_max, o->srq_depth);
		if (o->srq_max < o->srq_depth ||
		    o->srq_max > (uint32_t)a->max_srq_wr)
			return -EINVAL;
	} else {
		o->srq_max = 0;
	}
	o->sq_depth = def(o->sq_depth, WHARF_QP_DEFAULT_SQ_DEPTH);
	if (o->sq_depth > (uint32_t)a->max_qp_wr)
		return -EINVAL;
	o->max_send_sge = def(o->max_send_sge, max_sge);
	if (o->max_send_sge > max_sge)
		return -EINVAL;
	o->cq_max = def(o->cq_max, (uint32_t)a->max_cqe);
	if (o->cq_max > (uint32_t)a->max_cqe)
		return -EINVAL;
	if (o->no_pool) {
		o->pool_size = 0;
		o->pool_low_water = 0;
	} else {
		o->pool_size = def(o->pool_size, 64);
		o->pool_low_water = def(o->pool_low_water, o->pool_size / 2);
		if (o->pool_low_water > o->pool_size)
			return -EINVAL;
	}
	o->pool_batch = def(o->pool_batch, 8);
	o->quarantine_ms =
		o->no_quarantine_delay
			? 0
			: def(o->quarantine_ms, WHARF_QP_DEFAULT_QUARANTINE_MS);
	o->last_wqe_timeout_ms =
		def(o->last_wqe_timeout_ms, WQP_DEFAULT_LAST_WQE_MS);
	return 0;
}

static void teardown(struct wharf_qp_res *res)
{
	wqp_pool_fini(res);
	wqp_cq_teardown(res); /* no QP left on the CQ */
	wqp_srq_teardown(res);
	if (res->map.slots)
		wqp_qpn_map_fini(&res->map);
	if (res->timer)
		wharf_timer_destroy(res->timer);
	wharf_numa_free(res->arena, res);
}

void wharf_qp_res_opts_init(struct wharf_qp_res_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
}

int wharf_qp_res_create(struct wharf_qp_dev *dev, struct wharf_shard *shard,
			const struct wharf_qp_res_opts *opts,
			struct wharf_qp_res **out)
{
	struct wharf_qp_res_opts o;
	struct wharf_qp_res *res;
	unsigned idx;
	int err;

	if (!dev || !shard || !out || wharf_shard_ctx(shard) != dev->ctx)
		return -EINVAL;
	err = wcore_opts_copy(&o, sizeof(o), opts);
	if (err)
		return err;
	err = resolve(&o, &dev->attr);
	if (err)
		return err;
	idx = wharf_shard_index(shard);
	res = wharf_numa_alloc(wharf_shard_arena(shard), sizeof(*res), 64,
			       true);
	if (!res)
		return -ENOMEM;
	wqp_list_init(&res->free);
	wqp_list_init(&res->quarantine);
	wqp_list_init(&res->closing);
	/* Creating the timer also checks that this is the owning thread. */
	err = wharf_timer_create(shard, wqp_res_timer_fn, res, &res->timer);
	if (!err && dev->res[idx])
		err = -EEXIST;
	if (err) {
		if (res->timer)
			wharf_timer_destroy(res->timer);
		wharf_numa_free(wharf_shard_arena(shard), res);
		return err;
	}
	res->dev = dev;
	res->shard = shard;
	res->shard_idx = idx;
	res->arena = wharf_shard_arena(shard);
	res->o = o;
	res->id = atomic_fetch_add(&dev->next_res_id, 1);
	err = wqp_qpn_map_init(&res->map, o.pool_size * 2, res->arena);
	if (!err && !o.no_srq)
		err = wqp_admit_init(&res->admit, o.srq_depth, o.recv_reserve);
	if (!err && !o.no_srq)
		err = wqp_admit_set_max(&res->admit, o.srq_max);
	if (!err)
		err = wqp_cq_setup(
			res,
			wqp_cq_initial(o.cq_size, o.srq_depth, 0, 0, o.cq_max),
			wqp_cq_initial(o.cq_size, 0, o.pool_size, o.sq_depth,
				       o.cq_max));
	if (!err && !o.no_srq) {
		err = wqp_res_cq_claim(res, WQP_CQ_RECV, o.srq_depth);
		if (!err)
			err = wqp_srq_setup(res);
	}
	if (err) {
		teardown(res);
		return err;
	}
	dev->res[idx] = res;
	atomic_fetch_add(&dev->nres, 1);
	res->refilling = !o.no_pool; /* fill to pool_size at once */
	wqp_res_kick(res);
	*out = res;
	return 0;
}

int wharf_qp_res_destroy(struct wharf_qp_res *res)
{
	int err;

	if (!res)
		return 0;
	/* Also checks that this is the owning thread. */
	err = wharf_timer_cancel(res->timer);
	if (err < 0)
		return err;
	wqp_reap(res);
	if (res->nactive) {
		wqp_res_kick(res);
		return -EBUSY;
	}
	res->dev->res[res->shard_idx] = NULL;
	atomic_fetch_sub(&res->dev->nres, 1);
	teardown(res);
	return 0;
}

struct wharf_shard *wharf_qp_res_shard(const struct wharf_qp_res *res)
{
	return res ? res->shard : NULL;
}

int wharf_qp_res_admit(const struct wharf_qp_res *res, uint32_t credits)
{
	if (!res)
		return -EINVAL;
	if (!res->srq)
		return 0;
	/* What fits once the SRQ has grown as far as it may. */
	return wqp_admit_shortfall(&res->admit,
				   credits ? credits : res->o.recv_credits) ==
			       UINT32_MAX
		       ? -EBUSY
		       : 0;
}

int wharf_qp_res_stats(const struct wharf_qp_res *res,
		       struct wharf_qp_res_stats *out)
{
	struct wharf_qp_res_stats st;

	if (!res || !out || out->size < sizeof(size_t))
		return -EINVAL;
	st = res->st;
	st.size = sizeof(st);
	st.cq_size =
		res->cqs[WQP_CQ_RECV].b.size + res->cqs[WQP_CQ_SEND].b.size;
	st.cq_reserved = res->cqs[WQP_CQ_RECV].b.reserved +
			 res->cqs[WQP_CQ_SEND].b.reserved;
	st.srq_depth = res->admit.depth;
	st.srq_max = res->o.srq_max;
	st.srq_posted = res->srq_posted;
	st.recv_pending = res->npending;
	st.admitted_credits = res->admit.admitted;
	st.qps_active = res->nactive;
	st.pool_free = res->free.len;
	st.pool_quarantined = res->quarantine.len;
	return wcore_out_copy(out, &st, sizeof(st));
}
