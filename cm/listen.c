/*
 * cm/listen.c - listeners: one listening rdma_cm_id per address, on an
 * event channel of its own that one shard drains in bounded batches.
 *
 * For each CONNECT_REQUEST the listener's shard, before acknowledging the
 * event (its data goes with the ack): copies the request's parameters,
 * private data and addresses into a new connection, picks the owner shard
 * (the listener's policy, else wharf_numa_pick_shard() over handshakes +
 * connections + deferred requests, with a penalty for shards off the
 * device's NUMA nodes), acknowledges the event, then migrates the new
 * rdma_cm_id to the owner's channel (rdma_migrate_id waits for the acks
 * of the events already reported on the old channel, so it must come
 * after the ack), and hands the connection over through the owner's
 * inbox, where admission (defer.c, deciding by cm/overload.h) presents,
 * defers or refuses it, whatever the listener's policy.  The listener
 * refuses only what it cannot hand over: no device, no memory, a request
 * it cannot read, a cm closing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"
#include "cm/backlog.h"
#include "cm/qp_opts.h"
#include "cm/rt.h"

static unsigned pick_owner(struct wharf_listener *l, struct wcm_dev *dev,
			   const struct wharf_conn_request *req)
{
	struct wharf_cm *cm = l->cm;
	struct wharf_numa_shard_load loads[cm->nshards];
	struct wharf_cm_shard_load view[cm->nshards];
	int idx;

	for (unsigned i = 0; i < cm->nshards; i++) {
		struct wcm_shard *sh = cm->shards[i];
		uint32_t hs = atomic_load_explicit(&sh->hs_passive,
						   memory_order_relaxed) +
			      atomic_load_explicit(&sh->hs_active,
						   memory_order_relaxed);
		uint32_t n = atomic_load_explicit(&sh->nconns,
						  memory_order_relaxed) +
			     atomic_load_explicit(&sh->defer_n,
						  memory_order_relaxed);

		view[i] = (struct wharf_cm_shard_load){
			.handshakes = hs,
			.connections = n,
			.node = sh->node,
			.local = !dev->local_nodes ||
				 (dev->local_nodes >> sh->node) & 1,
		};
		loads[i] = (struct wharf_numa_shard_load){
			.node = sh->node, .load = (uint64_t)hs + n};
	}
	if (l->pick) {
		idx = l->pick(req, view, cm->nshards, l->pick_arg);
		if (idx >= 0 && (unsigned)idx < cm->nshards)
			return (unsigned)idx;
	}
	idx = wharf_numa_pick_shard(loads, cm->nshards, dev->local_nodes,
				    cm->remote_penalty);
	return idx < 0 ? 0 : (unsigned)idx;
}

/* The request as the application sees it (points into @c). */
static void request_view(struct wharf_conn *c, const struct wcm_dev *dev)
{
	const struct wcm_passive *p = c->pas;
	struct wharf_conn_request *r = &c->pas->req_view;

	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->ps = c->ps == WCM_PS_UD ? WHARF_PS_UD : WHARF_PS_RC;
	r->local_addr = (const struct sockaddr *)&c->local;
	r->peer_addr = (const struct sockaddr *)&c->peer;
	r->device = dev->name;
	r->responder_resources = p->req.responder_resources;
	r->initiator_depth = p->req.initiator_depth;
	r->flow_control = p->req.flow_control;
	r->retry_count = p->req.retry_count;
	r->rnr_retry_count = p->req.rnr_retry_count;
	r->srq = p->req.srq;
	r->remote_qp_num = p->req.qp_num;
	r->private_data = p->req_pdata_len ? p->req_pdata : NULL;
	r->private_data_len = p->req_pdata_len;
}

/* The request's parameters and private data, checked, into @req and
 * @pdata (whose length sizes the connection). */
static int read_request(enum wcm_ps ps, const struct rdma_cm_event *ev,
			struct wcm_conn_param *req, struct wcm_pdata *pdata)
{
	if (ps == WCM_PS_UD) {
		memset(req, 0, sizeof(*req));
		return wcm_pdata_recv(pdata, ev->param.ud.private_data,
				      ev->param.ud.private_data_len);
	}
	return wcm_conn_param_recv(&ev->param.conn, req, pdata);
}

static void copy_request(struct wharf_conn *c, const struct rdma_cm_event *ev,
			 const struct wcm_conn_param *req,
			 const struct wcm_pdata *pdata)
{
	struct rdma_cm_id *id = ev->id;
	struct sockaddr *sa;
	size_t len;

	c->pas->req = *req;
	memcpy(c->pas->req_pdata, pdata->bytes, pdata->len);
	c->pas->req.private_data = pdata->len ? c->pas->req_pdata : NULL;
	c->pas->req.private_data_len = pdata->len;
	sa = rdma_get_local_addr(id);
	len = wcm_sockaddr_len(sa);
	memcpy(&c->local, sa, len <= sizeof(c->local) ? len : 0);
	sa = rdma_get_peer_addr(id);
	len = wcm_sockaddr_len(sa);
	memcpy(&c->peer, sa, len <= sizeof(c->peer) ? len : 0);
}

/* Refuse a request before any connection exists for it (@req: as far as
 * it was read, or NULL). */
static void refuse(struct wharf_listener *l, struct rdma_cm_event *ev,
		   struct wcm_shard *owner,
		   const struct wharf_conn_request *req, enum wcm_refusal why)
{
	struct rdma_cm_id *id = ev->id;
	uint8_t buf[WCM_PDATA_REJECT_RC];
	size_t len = wcm_refusal_pdata(l, owner, req, why, buf);
	enum wcm_ctr ctr = wcm_refusal_ctr(why);

	rdma_reject(id, len ? buf : NULL, (uint8_t)len);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
	wcm_count_shard(l->sh, ctr);
	wcm_count_listener(l, ctr);
}

static void adopt_item(struct wcm_inbox_item *item)
{
	struct wharf_conn *c =
		(struct wharf_conn *)((char *)item -
				      offsetof(struct wharf_conn, inbox));

	c->refs++;
	if (!c->adopted)
		wcm_adopt(c);
	c->handover_ref = false;
	wcm_conn_unref(c);
}

static void on_request(struct wharf_listener *l, struct rdma_cm_event *ev)
{
	struct wharf_cm *cm = l->cm;
	struct rdma_cm_id *id = ev->id;
	struct wcm_dev *dev = wcm_dev_find(cm, id->verbs);
	struct wcm_shard *owner;
	struct wcm_conn_param req;
	struct wcm_pdata pdata;
	struct wharf_conn *c;

	wcm_count_shard(l->sh, WCM_C_REQUESTS);
	wcm_count_listener(l, WCM_C_REQUESTS);
	if (!dev || atomic_load_explicit(&cm->closing, memory_order_relaxed)) {
		refuse(l, ev, l->sh, NULL,
		       dev ? WCM_REFUSE_DRAINING : WCM_REFUSE_RESOURCES);
		return;
	}
	if (read_request(l->ps, ev, &req, &pdata)) {
		wcm_count_shard(l->sh, WCM_C_PROTO);
		refuse(l, ev, l->sh, NULL, WCM_REFUSE_RESOURCES);
		return;
	}
	/* Build the connection on shard 0's arena first: we do not know
	 * the owner before the request is parsed. */
	c = wcm_conn_alloc(cm->shards[0], l->ps, WCM_SIDE_PASSIVE, pdata.len);
	if (!c) {
		refuse(l, ev, l->sh, NULL, WCM_REFUSE_RESOURCES);
		return;
	}
	copy_request(c, ev, &req, &pdata);
	request_view(c, dev);
	owner = cm->shards[pick_owner(l, dev, &c->pas->req_view)];
	if (owner != cm->shards[0]) { /* move it to the owner's node */
		struct wharf_conn *o = wcm_conn_move(c, owner);

		if (o)
			c = o;
	}
	c->sh = owner;
	c->dev = dev;
	c->port_num = id->port_num;
	c->cm_id = id;
	c->id_ref = true;
	c->handover_ref = true;
	c->in_handshake = true;
	c->listener = l;
	atomic_fetch_add_explicit(&l->refs, 1, memory_order_relaxed);
	c->ops = &l->ops;
	c->arg = l->arg;
	c->cfg = &l->cfg;
	c->pas->qp_opts = l->cfg.qp;
	request_view(c, dev);
	atomic_fetch_add_explicit(&owner->hs_passive, 1, memory_order_relaxed);
	id->context = c;
	rdma_ack_cm_event(ev);
	if (rdma_migrate_id(id, owner->chan)) {
		/* Still ours: nothing can reach the connection. */
		int err = wcm_errno();

		atomic_fetch_sub_explicit(&owner->hs_passive, 1,
					  memory_order_relaxed);
		wharf_ctx_log(cm->ctx, WHARF_LOG_WARN,
			      "cm: rdma_migrate_id: %d", err);
		{
			uint8_t buf[WCM_PDATA_REJECT_RC];
			size_t len =
				wcm_refusal_pdata(l, owner, &c->pas->req_view,
						  WCM_REFUSE_RESOURCES, buf);

			rdma_reject(id, len ? buf : NULL, (uint8_t)len);
		}
		rdma_destroy_id(id);
		wcm_conn_free_unpublished(c);
		wcm_count_shard(l->sh, WCM_C_FAILED);
		wcm_count_listener(l, WCM_C_FAILED);
		return;
	}
	c->inbox.fn = adopt_item;
	wcm_inbox_push(owner, &c->inbox);
}

static void listener_ready(struct wharf_watch *w, int fd, uint32_t events,
			   void *arg)
{
	struct wharf_listener *l = arg;

	(void)w;
	(void)fd;
	(void)events;
	for (unsigned i = 0; i < l->batch; i++) {
		struct rdma_cm_event *ev;

		if (rdma_get_cm_event(l->chan, &ev))
			break; /* EAGAIN: the rest waits for the next round */
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			on_request(l, ev);
			continue;
		}
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			wharf_ctx_log(l->cm->ctx, WHARF_LOG_WARN,
				      "cm: device removed under a listener");
		rdma_ack_cm_event(ev);
	}
}

/* ---------------------------------------------------------------- */
/* Setup and teardown (on the listener's shard)                      */
/* ---------------------------------------------------------------- */

static int listener_start(struct wharf_listener *l)
{
	enum rdma_port_space ps =
		l->ps == WCM_PS_UD ? RDMA_PS_UDP : RDMA_PS_TCP;
	int err;

	l->chan = rdma_create_event_channel();
	if (!l->chan)
		return wcm_errno();
	err = wcm_set_nonblock(l->chan->fd);
	if (err)
		goto fail;
	if (rdma_create_id(l->chan, &l->id, l, ps)) {
		err = wcm_errno();
		goto fail;
	}
	if (rdma_bind_addr(l->id, (struct sockaddr *)&l->addr) ||
	    rdma_listen(l->id, l->backlog)) {
		err = wcm_errno();
		goto fail;
	}
	l->port = ntohs(rdma_get_src_port(l->id));
	err = wharf_shard_watch(l->sh->shard, l->chan->fd, WHARF_WATCH_IN,
				listener_ready, l, &l->watch);
	if (!err)
		return 0;
fail:
	if (l->id)
		rdma_destroy_id(l->id);
	l->id = NULL;
	rdma_destroy_event_channel(l->chan);
	l->chan = NULL;
	return err;
}

static void listener_stop(struct wharf_listener *l)
{
	if (l->watch)
		wharf_watch_remove(l->watch);
	l->watch = NULL;
	if (l->id)
		rdma_destroy_id(l->id);
	l->id = NULL;
	if (l->chan)
		rdma_destroy_event_channel(l->chan);
	l->chan = NULL;
}

struct lmsg {
	struct wharf_listener *l;
	struct wcm_sync *sync;
	bool stop;
};

static void lmsg_fn(struct wharf_shard *shard, void *arg)
{
	struct lmsg *m = arg;
	int err = 0;

	(void)shard;
	if (m->stop)
		listener_stop(m->l);
	else
		err = listener_start(m->l);
	wcm_sync_done(m->sync, err);
}

/* Run start/stop on the listener's shard and wait for it. */
static int on_listener_shard(struct wharf_listener *l, bool stop)
{
	struct lmsg m = {.l = l, .stop = stop};
	int err;

	if (wharf_shard_current() == l->sh->shard) {
		if (stop) {
			listener_stop(l);
			return 0;
		}
		return listener_start(l);
	}
	m.sync = wcm_sync_new(1);
	if (!m.sync)
		return -ENOMEM;
	err = wharf_shard_send(l->sh->shard, lmsg_fn, &m);
	if (err) {
		wcm_sync_done(m.sync, err);
		(void)wcm_sync_wait(m.sync);
		return err;
	}
	return wcm_sync_wait(m.sync);
}

void wharf_listen_opts_init(struct wharf_listen_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
	opts->qp.size = sizeof(opts->qp);
}

static uint32_t or_default(uint32_t v, uint32_t dflt)
{
	return v ? v : dflt;
}

static int accept_param_copy(struct wharf_listener *l,
			     const struct wharf_conn_param *p)
{
	int err = wbase_opts_copy(&l->accept_param, sizeof(l->accept_param), p);

	if (err)
		return err;
	err = wcm_pdata_check(WCM_MSG_ACCEPT, l->ps,
			      l->accept_param.private_data,
			      l->accept_param.private_data_len);
	if (err)
		return err;
	if (l->accept_param.private_data_len)
		memcpy(l->accept_pdata, l->accept_param.private_data,
		       l->accept_param.private_data_len);
	l->accept_param.private_data =
		l->accept_param.private_data_len ? l->accept_pdata : NULL;
	l->has_accept_param = true;
	return 0;
}

int wharf_listen(struct wharf_cm *cm, const struct wharf_listen_opts *in,
		 struct wharf_listener **out)
{
	struct wharf_listen_opts o;
	struct wharf_listener *l;
	size_t alen;
	int err;

	if (!cm || !in || !out)
		return -EINVAL;
	err = wbase_opts_copy(&o, sizeof(o), in);
	if (err)
		return err;
	if (!o.addr || !o.ops || (o.ps != WHARF_PS_RC && o.ps != WHARF_PS_UD) ||
	    o.shard >= cm->nshards || o.backlog < 0 ||
	    wcm_qp_opts_check(&o.qp) ||
	    (o.overload != WHARF_OVERLOAD_DEFER &&
	     o.overload != WHARF_OVERLOAD_REJECT_BUSY) ||
	    o.defer_max_ms > WHARF_DEFER_MAX_MS_LIMIT)
		return -EINVAL;
	alen = wcm_sockaddr_len(o.addr);
	if (!alen || alen > sizeof(struct sockaddr_storage))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->cm = cm;
	l->sh = cm->shards[o.shard];
	l->ps = o.ps == WHARF_PS_UD ? WCM_PS_UD : WCM_PS_RC;
	err = wbase_opts_copy(&l->ops, sizeof(l->ops), o.ops);
	if (!err && o.accept_param)
		err = accept_param_copy(l, o.accept_param);
	if (err) {
		free(l);
		return err;
	}
	memcpy(&l->addr, o.addr, alen);
	l->arg = o.arg;
	l->pick = o.pick_shard;
	l->pick_arg = o.pick_arg;
	l->batch = or_default(o.batch, WCM_DEF_BATCH);
	l->backlog = o.backlog ? o.backlog
			       : wcm_backlog_read(WCM_MAX_BACKLOG_PATH,
						  WCM_DEF_BACKLOG);
	l->cfg.decision_ms =
		or_default(o.decision_timeout_ms, WCM_DEF_DECISION_MS);
	l->cfg.accept_ms = or_default(o.accept_timeout_ms, WCM_DEF_ACCEPT_MS);
	l->cfg.disconnect_ms =
		or_default(o.disconnect_timeout_ms, WCM_DEF_DISCONNECT_MS);
	l->cfg.timewait_ms =
		or_default(o.timewait_timeout_ms, WCM_DEF_TIMEWAIT_MS);
	l->cfg.connect_ms = WCM_DEF_CONNECT_MS;
	l->cfg.defer_ms = or_default(o.defer_max_ms, WCM_DEF_DEFER_MS);
	l->overload = o.overload == WHARF_OVERLOAD_REJECT_BUSY
			      ? WCM_OVERLOAD_REJECT_BUSY
			      : WCM_OVERLOAD_DEFER;
	l->defer_max = or_default(o.defer_max, WCM_DEF_DEFER_MAX);
	l->refusal = o.refusal;
	l->refusal_arg = o.refusal_arg;
	atomic_init(&l->deferred, 0);
	l->cfg.qp = o.qp;
	atomic_init(&l->refs, 1);
	err = on_listener_shard(l, false);
	if (err) {
		free(l);
		return err;
	}
	*out = l;
	return 0;
}

int wharf_listener_destroy(struct wharf_listener *l)
{
	if (!l)
		return 0;
	(void)on_listener_shard(l, true);
	if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 1)
		free(l);
	return 0;
}

uint16_t wharf_listener_port(const struct wharf_listener *l)
{
	return l ? l->port : 0;
}

int wharf_listener_backlog(const struct wharf_listener *l)
{
	return l ? l->backlog : 0;
}
