/*
 * cm/active.c - the active side: wharf_connect() and the actions that take
 * a connection through address and route resolution, the REQ and the RTU.
 *
 * wharf_connect() checks everything it can without a device (options,
 * private-data limit, depths against the largest device), then hands the
 * connection to its owner shard through the inbox; all librdmacm calls and
 * every callback happen there.  Parameters are checked again against the
 * device the route leads to before the REQ: a value that device refuses
 * fails the connect with -EINVAL and nothing is sent.
 *
 * The QP is the library's, not attached to the rdma_cm_id, so the CM
 * reports CONNECT_RESPONSE: the QP goes to RTR/RTS with the depths of the
 * REP (never above what we asked for) and rdma_establish() sends the RTU.
 */
#include <errno.h>
#include <string.h>

#include "base/opts.h"
#include "cm/qp_opts.h"
#include "cm/rt.h"

static uint32_t or_default(uint32_t v, uint32_t dflt)
{
	return v ? v : dflt;
}

void wharf_connect_opts_init(struct wharf_connect_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
	opts->qp.size = sizeof(opts->qp);
	opts->shard = WHARF_SHARD_ANY;
}

int wcm_act_resolve_addr(struct wharf_conn *c)
{
	enum rdma_port_space ps =
		c->ps == WCM_PS_UD ? RDMA_PS_UDP : RDMA_PS_TCP;

	if (!c->cm_id) {
		if (rdma_create_id(c->sh->chan, &c->cm_id, c, ps))
			return wcm_errno();
		c->id_ref = true;
		wcm_stamp(c, WHARF_STEP_ID_CREATED);
	}
	if (rdma_resolve_addr(
		    c->cm_id,
		    c->local.sa.sa_family ? (struct sockaddr *)&c->local : NULL,
		    (struct sockaddr *)&c->peer, (int)c->cfg->addr_ms))
		return wcm_errno();
	return 0;
}

int wcm_act_resolve_route(struct wharf_conn *c)
{
	wcm_stamp(c, WHARF_STEP_ADDR_RESOLVED);
	if (rdma_resolve_route(c->cm_id, (int)c->cfg->route_ms))
		return wcm_errno();
	return 0;
}

void wcm_act_restart(struct wharf_conn *c)
{
	wcm_destroy_id(c);
	c->dev = NULL;
	c->qpn_sent = false;
	memset(&c->act->peer_pdata, 0, sizeof(c->act->peer_pdata));
	c->act->rej_is_busy = false;
}

int wcm_act_connect(struct wharf_conn *c)
{
	struct wcm_qp_info qi = {0, 0};
	struct rdma_conn_param rp;
	struct wharf_qp_res *res;
	int err;

	if (!c->dev)
		return -ENODEV;
	wcm_stamp(c, WHARF_STEP_ROUTE_RESOLVED);
	/* Against the device the route leads to, before anything else. */
	err = wcm_conn_param_connect(c->act->want_null ? NULL : &c->act->want,
				     c->ps, &c->dev->lim, &qi, &c->neg);
	if (err)
		return err;
	if (c->ps == WCM_PS_RC) {
		res = wcm_res_admitting(c->sh, c->dev, wcm_conn_qp_opts(c),
					&err);
		if (!res)
			return err;
		err = wcm_take_qp(c, res);
		if (err)
			return err;
		err = wharf_qp_cm_init(c->qp, c->cm_id);
		if (err)
			return err;
		wcm_stamp(c, WHARF_STEP_QP_READY);
		qi.qp_num = wharf_qp_num(c->qp);
		qi.srq = wharf_qp_uses_srq(c->qp);
		err = wcm_conn_param_connect(c->act->want_null ? NULL
							       : &c->act->want,
					     c->ps, &c->dev->lim, &qi, &c->neg);
		if (err)
			return err;
	}
	err = wcm_conn_param_to_rdma(&c->neg, &rp);
	if (err)
		return err;
	if (rdma_connect(c->cm_id, &rp))
		return wcm_errno();
	wcm_stamp(c, WHARF_STEP_SENT);
	c->qpn_sent = true;
	return 0;
}

int wcm_act_establish(struct wharf_conn *c)
{
	uint8_t resp = c->act->peer_param.responder_resources;
	uint8_t init = c->act->peer_param.initiator_depth;
	int err;

	if (!c->qp)
		return -ENOTCONN;
	wcm_stamp(c, WHARF_STEP_REPLY);
	/* The REP's values, local view; never above what we offered. */
	if (resp > c->neg.responder_resources)
		resp = c->neg.responder_resources;
	if (init > c->neg.initiator_depth)
		init = c->neg.initiator_depth;
	c->act->peer_param.responder_resources = resp;
	c->act->peer_param.initiator_depth = init;
	err = wharf_qp_cm_rtr_rts(c->qp, c->cm_id, resp, init);
	if (err)
		return err;
	if (rdma_establish(c->cm_id))
		return wcm_errno();
	return 0;
}

/* ---------------------------------------------------------------- */
/* wharf_connect                                                     */
/* ---------------------------------------------------------------- */

static void start_item(struct wcm_inbox_item *item)
{
	struct wharf_conn *c =
		(struct wharf_conn *)((char *)item -
				      offsetof(struct wharf_conn, inbox));
	int err;

	c->refs++;
	c->adopted = true;
	wcm_stamp(c, WHARF_STEP_ADOPTED);
	c->handover_ref = false;
	err = wcm_conn_setup(c);
	if (err) { /* cannot happen for a fresh id but for -ENOMEM */
		wharf_ctx_log(c->cm->ctx, WHARF_LOG_ERROR,
			      "cm: connect %#llx: setup: %d",
			      (unsigned long long)c->id, err);
		c->in_handshake = false;
		atomic_fetch_sub_explicit(&c->sh->hs_active, 1,
					  memory_order_relaxed);
		wcm_count_shard(c->sh, WCM_C_FAILED);
		c->refs--;
		wcm_conn_free_unpublished(c);
		return;
	}
	c->app_ref = true;
	wcm_count(c, WCM_C_CONNECTS);
	wcm_conn_sm_init(&c->sm, WCM_SIDE_ACTIVE);
	if (c->sh->closing ||
	    atomic_load_explicit(&c->cm->closing, memory_order_relaxed))
		c->quiet = true;
	wcm_window_enter(c); /* starts it now or when a slot frees */
	wcm_conn_unref(c);
}

static int check_depth(uint8_t v, uint32_t max)
{
	return v != WCM_RD_ATOM_DEV_MAX && v > max ? -EINVAL : 0;
}

/* Copy what the application asked for into @c (not yet published). */
static int copy_param(struct wharf_conn *c, const struct wharf_conn_param *in)
{
	struct wharf_conn_param p;
	int err;

	if (!in) {
		c->act->want_null = true;
		return 0;
	}
	err = wbase_opts_copy(&p, sizeof(p), in);
	if (err)
		return err;
	err = wcm_pdata_check(WCM_MSG_CONNECT, c->ps, p.private_data,
			      p.private_data_len);
	if (err)
		return err;
	if (c->ps == WCM_PS_RC &&
	    (check_depth(p.responder_resources, c->cm->max_rd_atom) ||
	     check_depth(p.initiator_depth, c->cm->max_init_rd_atom)))
		return -EINVAL;
	memset(&c->act->want, 0, sizeof(c->act->want));
	if (p.private_data_len)
		memcpy(c->act->want_pdata, p.private_data, p.private_data_len);
	c->act->want.private_data =
		p.private_data_len ? c->act->want_pdata : NULL;
	c->act->want.private_data_len = p.private_data_len;
	c->act->want.responder_resources = p.responder_resources;
	c->act->want.initiator_depth = p.initiator_depth;
	c->act->want.flow_control = p.flow_control;
	c->act->want.retry_count = p.retry_count;
	c->act->want.rnr_retry_count = p.rnr_retry_count;
	return 0;
}

static void copy_cfg(struct wcm_cfg *cfg, const struct wharf_connect_opts *o)
{
	struct wcm_retry_policy d;

	cfg->addr_ms = or_default(o->resolve_addr_timeout_ms, WCM_DEF_ADDR_MS);
	cfg->route_ms =
		or_default(o->resolve_route_timeout_ms, WCM_DEF_ROUTE_MS);
	cfg->connect_ms = or_default(o->connect_timeout_ms, WCM_DEF_CONNECT_MS);
	cfg->disconnect_ms =
		or_default(o->disconnect_timeout_ms, WCM_DEF_DISCONNECT_MS);
	cfg->timewait_ms =
		or_default(o->timewait_timeout_ms, WCM_DEF_TIMEWAIT_MS);
	cfg->decision_ms = WCM_DEF_DECISION_MS;
	cfg->accept_ms = WCM_DEF_ACCEPT_MS;
	cfg->stale_retry = !o->no_stale_retry;
	wcm_retry_policy_stale_default(&d);
	cfg->stale.max_attempts =
		or_default(o->stale_retry_max, d.max_attempts);
	cfg->stale.base_ms = or_default(o->stale_retry_base_ms, d.base_ms);
	cfg->stale.cap_ms = or_default(o->stale_retry_cap_ms, d.cap_ms);
	cfg->busy_retry = o->busy_retry;
	wcm_retry_policy_busy_default(&d);
	cfg->busy.max_attempts = or_default(o->busy_retry_max, d.max_attempts);
	cfg->busy.base_ms = or_default(o->busy_retry_base_ms, d.base_ms);
	cfg->busy.cap_ms = or_default(o->busy_retry_cap_ms, d.cap_ms);
	cfg->qp = o->qp;
}

static struct wcm_shard *pick_shard(struct wharf_cm *cm, int want)
{
	struct wcm_shard *cur = wcm_shard_cur(cm), *best = NULL;
	uint64_t best_load = UINT64_MAX;

	if (want >= 0)
		return cm->shards[want];
	if (cur)
		return cur;
	for (unsigned i = 0; i < cm->nshards; i++) {
		struct wcm_shard *sh = cm->shards[i];
		uint64_t load =
			(uint64_t)atomic_load_explicit(&sh->hs_passive,
						       memory_order_relaxed) +
			atomic_load_explicit(&sh->hs_active,
					     memory_order_relaxed) +
			atomic_load_explicit(&sh->nconns, memory_order_relaxed);

		if (load < best_load) {
			best_load = load;
			best = sh;
		}
	}
	return best;
}

int wharf_connect(struct wharf_cm *cm, const struct wharf_connect_opts *in,
		  uint64_t *id)
{
	struct wharf_connect_opts o;
	struct wcm_shard *sh;
	struct wharf_conn *c;
	size_t dlen, slen = 0;
	uint64_t seq;
	int err;

	if (!cm || !in)
		return -EINVAL;
	err = wbase_opts_copy(&o, sizeof(o), in);
	if (err)
		return err;
	if (!o.dst || !o.ops || (o.ps != WHARF_PS_RC && o.ps != WHARF_PS_UD) ||
	    o.shard < WHARF_SHARD_ANY ||
	    (o.shard >= 0 && (unsigned)o.shard >= cm->nshards) ||
	    wcm_qp_opts_check(&o.qp))
		return -EINVAL;
	dlen = wcm_sockaddr_len(o.dst);
	if (o.src)
		slen = wcm_sockaddr_len(o.src);
	if (!dlen || dlen > sizeof(struct sockaddr_storage) ||
	    (o.src && (!slen || o.src->sa_family != o.dst->sa_family)))
		return -EINVAL;
	if (atomic_load_explicit(&cm->closing, memory_order_relaxed))
		return -ESHUTDOWN;
	sh = pick_shard(cm, o.shard);
	c = wcm_conn_alloc(sh, o.ps == WHARF_PS_UD ? WCM_PS_UD : WCM_PS_RC,
			   WCM_SIDE_ACTIVE, 0);
	if (!c)
		return -ENOMEM;
	err = wbase_opts_copy(&c->act->ops, sizeof(c->act->ops), o.ops);
	if (!err)
		err = copy_param(c, o.param);
	if (err) {
		wcm_conn_free_unpublished(c);
		return err;
	}
	seq = atomic_fetch_add_explicit(&sh->next_seq, 1, memory_order_relaxed);
	if (wcm_conn_id_make(sh->index, seq, &c->id)) {
		wcm_conn_free_unpublished(c);
		return -EOVERFLOW;
	}
	memcpy(&c->peer, o.dst, dlen);
	if (o.src)
		memcpy(&c->local, o.src, slen);
	c->arg = o.arg;
	copy_cfg(&c->act->cfg, &o);
	c->cfg = &c->act->cfg;
	c->in_handshake = true;
	c->handover_ref = true;
	atomic_fetch_add_explicit(&sh->hs_active, 1, memory_order_relaxed);
	if (id)
		*id = c->id;
	c->inbox.fn = start_item;
	wcm_inbox_push(sh, &c->inbox);
	return 0;
}
