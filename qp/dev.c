/*
 * qp/dev.c - per-device state and the async-event reader.
 *
 * One shard (the async shard) watches context->async_fd.  For each event it
 * reads, it copies what identifies the target while the target cannot go
 * away, acknowledges the event, and sends the copy to the owning shard:
 *
 *  - QP events: the wharf_qp is qp->qp_context.  libibverbs'
 *    ibv_destroy_qp() returns only after every event it reported for the QP
 *    was acknowledged, and wharf frees a wharf_qp only after
 *    ibv_destroy_qp() returned, so reading the wharf_qp (its res id, shard,
 *    number and generation) before the acknowledgement is safe.
 *  - SRQ events: likewise through srq->srq_context (ibv_destroy_srq waits
 *    for acknowledgements too).
 *
 * The owner looks the target up again by (res id, QP number, generation):
 * a QP recycled or destroyed meanwhile does not match and the message is
 * dropped.  Messages hold a device reference, so the device outlives them.
 */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/opts.h"
#include "qp/internal.h"

#define ASYNC_BUDGET 64
#define SEND_RETRIES 1000

enum async_kind { ASYNC_QP, ASYNC_SRQ };

struct async_msg {
	struct wharf_qp_dev *dev;
	uint64_t res_id;
	unsigned shard;
	enum async_kind kind;
	enum ibv_event_type event;
	uint32_t qpn;
	uint32_t gen;
};

void wqp_dev_get(struct wharf_qp_dev *dev)
{
	atomic_fetch_add_explicit(&dev->refs, 1, memory_order_relaxed);
}

void wqp_dev_put(struct wharf_qp_dev *dev)
{
	if (atomic_fetch_sub_explicit(&dev->refs, 1, memory_order_acq_rel) != 1)
		return;
	free(dev->res);
	free(dev);
}

static void deliver_qp_event(struct wharf_qp_res *res,
			     const struct async_msg *m)
{
	struct wharf_qp *qp = wqp_qpn_map_find(&res->map, m->qpn);

	if (!qp ||
	    atomic_load_explicit(&qp->gen, memory_order_relaxed) != m->gen)
		return;
	res->st.async_events++;
	if (m->event == IBV_EVENT_QP_LAST_WQE_REACHED) {
		/* Completions before the event are in the CQ: reap them. */
		wqp_cq_poll(res, UINT32_MAX);
		qp->last_wqe = true;
		wqp_drain_check(qp);
		return;
	}
	if (qp->life != WQP_LIFE_LIVE && qp->life != WQP_LIFE_CLOSING)
		return;
	if (m->event == IBV_EVENT_QP_FATAL ||
	    m->event == IBV_EVENT_QP_REQ_ERR ||
	    m->event == IBV_EVENT_QP_ACCESS_ERR)
		qp->vstate = IBV_QPS_ERR;
	if (wqp_qp_ops(qp)->on_async)
		wqp_qp_ops(qp)->on_async(qp, m->event, qp->arg);
}

static void async_msg_fn(struct wharf_shard *shard, void *arg)
{
	struct async_msg *m = arg;
	struct wharf_qp_res *res = m->dev->res[m->shard];

	(void)shard;
	while (res && res->id != m->res_id)
		res = res->dev_next;
	if (res) {
		if (m->kind == ASYNC_QP) {
			deliver_qp_event(res, m);
		} else if (m->event == IBV_EVENT_SRQ_LIMIT_REACHED) {
			res->st.async_events++;
			wqp_srq_limit_event(res);
		} else {
			res->st.async_events++;
			wharf_ctx_log(m->dev->ctx, WHARF_LOG_ERROR,
				      "qp: SRQ event %s on shard %u",
				      ibv_event_type_str(m->event), m->shard);
		}
		wqp_reap(res);
		wqp_res_kick(res);
	}
	wqp_dev_put(m->dev);
	free(m);
}

static void forward(struct wharf_qp_dev *dev, struct async_msg *m)
{
	struct wharf_shard *shard = wharf_ctx_shard(dev->ctx, m->shard);
	struct async_msg *copy = malloc(sizeof(*copy));
	int err = -ENOMEM;

	if (copy && shard) {
		*copy = *m;
		wqp_dev_get(dev);
		for (int i = 0; i < SEND_RETRIES; i++) {
			err = wharf_shard_send(shard, async_msg_fn, copy);
			if (err != -EAGAIN)
				break;
			sched_yield();
		}
		if (!err)
			return;
		wqp_dev_put(dev);
	}
	free(copy);
	wharf_ctx_log(dev->ctx, WHARF_LOG_ERROR,
		      "qp: async event %s for shard %u dropped (%d)",
		      ibv_event_type_str(m->event), m->shard, err);
}

/*
 * Copies what identifies the target; returns false for other events.  The
 * async fd is the device context's, shared with any QP the process made
 * on it outside wharf: only QPs and SRQs on the device's own PD are ours.
 */
static bool describe(const struct wharf_qp_dev *dev,
		     const struct ibv_async_event *ev, struct async_msg *m)
{
	switch (ev->event_type) {
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct wharf_qp *qp = ev->element.qp->qp_context;

		if (ev->element.qp->pd != dev->pd || !qp)
			return false;
		m->kind = ASYNC_QP;
		m->res_id = qp->res->id;
		m->shard = qp->res->shard_idx;
		m->qpn = qp->qpn;
		m->gen = atomic_load_explicit(&qp->gen, memory_order_relaxed);
		return true;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct wharf_qp_res *res = ev->element.srq->srq_context;

		if (ev->element.srq->pd != dev->pd || !res)
			return false;
		m->kind = ASYNC_SRQ;
		m->res_id = res->id;
		m->shard = res->shard_idx;
		return true;
	}
	default:
		return false;
	}
}

static void async_watch_fn(struct wharf_watch *watch, int fd, uint32_t events,
			   void *arg)
{
	struct wharf_qp_dev *dev = arg;

	(void)watch;
	(void)fd;
	(void)events;
	for (int i = 0; i < ASYNC_BUDGET; i++) {
		struct ibv_async_event ev;
		struct async_msg m = {.dev = dev};
		bool ours;

		if (ibv_get_async_event(dev->verbs, &ev))
			return; /* EAGAIN: drained */
		m.event = ev.event_type;
		ours = describe(dev, &ev, &m);
		ibv_ack_async_event(&ev);
		if (ours)
			forward(dev, &m);
		else
			wharf_ctx_log(dev->ctx, WHARF_LOG_WARN,
				      "qp: device event %s",
				      ibv_event_type_str(m.event));
	}
}

static void watch_msg_fn(struct wharf_shard *shard, void *arg)
{
	struct wharf_qp_dev *dev = arg;
	int err = wharf_shard_watch(shard, dev->verbs->async_fd, WHARF_WATCH_IN,
				    async_watch_fn, dev, &dev->watch);

	if (err)
		wharf_ctx_log(dev->ctx, WHARF_LOG_ERROR,
			      "qp: cannot watch async events (%d)", err);
	wqp_dev_put(dev);
}

void wharf_qp_dev_opts_init(struct wharf_qp_dev_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
}

int wharf_qp_dev_open(struct wharf_ctx *ctx, struct ibv_context *verbs,
		      const struct wharf_qp_dev_opts *opts_in,
		      struct wharf_qp_dev **out)
{
	struct wharf_qp_dev_opts opts;
	struct wharf_qp_dev *dev;
	int err, flags;

	if (!ctx || !verbs || !out)
		return -EINVAL;
	err = wbase_opts_copy(&opts, sizeof(opts), opts_in);
	if (err)
		return err;
	if (opts.async_shard >= wharf_ctx_shard_count(ctx))
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->ctx = ctx;
	dev->verbs = verbs;
	dev->nshards = wharf_ctx_shard_count(ctx);
	dev->async_shard = wharf_ctx_shard(ctx, opts.async_shard);
	atomic_init(&dev->refs, 1);
	atomic_init(&dev->next_res_id, 1);
	dev->res = calloc(dev->nshards, sizeof(*dev->res));
	if (!dev->res) {
		err = -ENOMEM;
		goto fail;
	}
	err = ibv_query_device(verbs, &dev->attr);
	if (err) {
		err = -err;
		goto fail;
	}
	dev->pd = ibv_alloc_pd(verbs);
	if (!dev->pd) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	flags = fcntl(verbs->async_fd, F_GETFL);
	if (flags < 0 ||
	    fcntl(verbs->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		err = -errno;
		goto fail;
	}
	err = wharf_shard_watch(dev->async_shard, verbs->async_fd,
				WHARF_WATCH_IN, async_watch_fn, dev,
				&dev->watch);
	if (err == -EPERM) {
		dev->watch_by_msg = true;
		wqp_dev_get(dev);
		err = wharf_shard_send(dev->async_shard, watch_msg_fn, dev);
		if (err)
			wqp_dev_put(dev);
	}
	if (err)
		goto fail;
	*out = dev;
	return 0;
fail:
	if (dev->pd)
		ibv_dealloc_pd(dev->pd);
	free(dev->res);
	free(dev);
	return err;
}

struct unwatch_msg {
	struct wharf_qp_dev *dev;
	sem_t done;
};

static void unwatch_msg_fn(struct wharf_shard *shard, void *arg)
{
	struct unwatch_msg *m = arg;

	(void)shard;
	if (m->dev->watch)
		wharf_watch_remove(m->dev->watch);
	m->dev->watch = NULL;
	sem_post(&m->done);
}

/* Removes the watch on the async shard and waits for it: messages from
 * one thread run in order, so this one runs after an install in flight. */
static int unwatch_by_msg(struct wharf_qp_dev *dev)
{
	struct unwatch_msg m = {.dev = dev};
	int err;

	sem_init(&m.done, 0, 0);
	err = wharf_shard_send(dev->async_shard, unwatch_msg_fn, &m);
	while (err == -EAGAIN) {
		sched_yield();
		err = wharf_shard_send(dev->async_shard, unwatch_msg_fn, &m);
	}
	if (!err)
		while (sem_wait(&m.done) && errno == EINTR)
			;
	sem_destroy(&m.done);
	return err == -ESHUTDOWN ? 0 : err;
}

static int unwatch(struct wharf_qp_dev *dev)
{
	struct wharf_shard *cur = wharf_shard_current();
	int err;

	if (cur && cur != dev->async_shard)
		return -EPERM;
	/* Installed by the async shard: only it may read @watch. */
	if (!cur && dev->watch_by_msg)
		return unwatch_by_msg(dev);
	if (!dev->watch)
		return 0;
	err = wharf_watch_remove(dev->watch);
	if (!err) {
		dev->watch = NULL;
		return 0;
	}
	/* Installed before the shards ran; they run now. */
	if (err == -EPERM && !cur)
		return unwatch_by_msg(dev);
	return err;
}

int wharf_qp_dev_close(struct wharf_qp_dev *dev)
{
	struct wharf_shard *cur = wharf_shard_current();
	int err;

	if (!dev)
		return 0;
	if (cur && cur != dev->async_shard)
		return -EPERM;
	if (atomic_load(&dev->nres))
		return -EBUSY;
	/* First, so that nothing changes when memory is still registered. */
	err = ibv_dealloc_pd(dev->pd);
	if (err)
		return -err;
	dev->pd = NULL;
	err = unwatch(dev);
	wqp_dev_put(dev);
	return err;
}

struct ibv_pd *wharf_qp_dev_pd(const struct wharf_qp_dev *dev)
{
	return dev ? dev->pd : NULL;
}

const struct ibv_device_attr *wharf_qp_dev_attr(const struct wharf_qp_dev *dev)
{
	return dev ? &dev->attr : NULL;
}

struct ibv_context *wharf_qp_dev_verbs(const struct wharf_qp_dev *dev)
{
	return dev ? dev->verbs : NULL;
}
