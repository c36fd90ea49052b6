/*
 * qp/res.c - a shard's resources on one device: options, creation,
 * destruction, admission and counters.
 */
#include <errno.h>
#include <string.h>

#include "base/opts.h"
#include "qp/internal.h"

static void dev_limits(const struct ibv_device_attr *a,
		       struct wqp_dev_limits *d)
{
	*d = (struct wqp_dev_limits){
		.max_cqe = a->max_cqe > 0 ? (uint32_t)a->max_cqe : 0,
		.max_cq = a->max_cq > 0 ? (uint32_t)a->max_cq : 0,
		.max_qp = a->max_qp > 0 ? (uint32_t)a->max_qp : 0,
		.max_qp_wr = a->max_qp_wr > 0 ? (uint32_t)a->max_qp_wr : 0,
		.max_sge = a->max_sge > 0 ? (uint32_t)a->max_sge : 0,
		.max_srq = a->max_srq > 0 ? (uint32_t)a->max_srq : 0,
		.max_srq_wr = a->max_srq_wr > 0 ? (uint32_t)a->max_srq_wr : 0,
		.max_mr = a->max_mr > 0 ? (uint32_t)a->max_mr : 0,
		.max_mr_size = a->max_mr_size,
	};
}

/*
 * Fills @o's defaults and fits it to @dev; the notes go to the log at
 * @level (refusals always as errors).
 */
static int resolve(const struct wharf_qp_dev *dev, struct wharf_qp_res_opts *o,
		   enum wharf_log_level level)
{
	struct wqp_dev_limits d;
	struct wqp_fit fit;
	char line[160];
	int err;

	dev_limits(&dev->attr, &d);
	err = wqp_res_fit(o, &d, &fit);
	for (unsigned i = 0; i < fit.n; i++) {
		const struct wqp_fit_note *n = &fit.notes[i];

		wqp_fit_note_format(n, line, sizeof(line));
		wharf_ctx_log(dev->ctx,
			      n->action == WQP_FIT_REFUSED ? WHARF_LOG_ERROR
							   : level,
			      "qp: %s: %s",
			      ibv_get_device_name(dev->verbs->device), line);
	}
	if (!err && !o->last_wqe_timeout_ms)
		o->last_wqe_timeout_ms = WQP_DEFAULT_LAST_WQE_MS;
	return err;
}

int wharf_qp_res_opts_fit(const struct wharf_qp_dev *dev,
			  const struct wharf_qp_res_opts *opts,
			  struct wharf_qp_res_opts *out)
{
	struct wharf_qp_res_opts o;
	int err;

	if (!dev)
		return -EINVAL;
	err = wbase_opts_copy(&o, sizeof(o), opts);
	if (!err)
		err = resolve(dev, &o, WHARF_LOG_WARN);
	if (!err && out)
		err = wbase_out_copy(out, &o, sizeof(o));
	return err;
}

static void teardown(struct wharf_qp_res *res)
{
	wqp_pool_fini(res);
	wqp_cq_teardown(res); /* no QP left on the CQ */
	wqp_srq_teardown(res);
	if (res->map.slots)
		wqp_qpn_map_fini(&res->map);
	if (res->ops.v)
		wqp_ops_tab_fini(&res->ops);
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
	err = wbase_opts_copy(&o, sizeof(o), opts);
	if (err)
		return err;
	/* wharf_qp_res_opts_fit() told the clamps up front. */
	err = resolve(dev, &o, WHARF_LOG_DEBUG);
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
	if (!err)
		err = wqp_ops_tab_init(&res->ops, res->arena, WQP_OPS_TAB_MAX);
	if (!err && !o.no_srq)
		err = wqp_admit_init(&res->admit, o.srq_depth, o.recv_reserve);
	if (!err && !o.no_srq)
		err = wqp_admit_set_max(&res->admit, o.srq_max);
	if (!err)
		err = wqp_cq_setup(res);
	if (!err && !o.no_srq) {
		err = wqp_res_cq_claim(res, WQP_CQ_RECV, o.srq_depth);
		if (!err)
			err = wqp_srq_setup(res);
	}
	if (err) {
		teardown(res);
		return err;
	}
	res->dev_next = dev->res[idx];
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
	for (struct wharf_qp_res **pp = &res->dev->res[res->shard_idx]; *pp;
	     pp = &(*pp)->dev_next)
		if (*pp == res) {
			*pp = res->dev_next;
			break;
		}
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
	if (!wqp_res_send_room(res, res->o.sq_depth))
		return -EBUSY;
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
	st.cq_size = 0;
	st.cq_reserved = 0;
	for (unsigned i = 0; i < res->ncqs; i++) {
		st.cq_size += res->cqs[i].b.size;
		st.cq_reserved += res->cqs[i].b.reserved;
	}
	st.send_cqs = res->ncqs - WQP_CQ_SEND0;
	st.srq_depth = res->admit.depth;
	st.srq_max = res->o.srq_max;
	st.srq_posted = res->srq_posted;
	st.recv_pending = res->npending;
	st.admitted_credits = res->admit.admitted;
	st.qps_active = res->nactive;
	st.pool_free = res->free.len;
	st.pool_quarantined = res->quarantine.len;
	return wbase_out_copy(out, &st, sizeof(st));
}
