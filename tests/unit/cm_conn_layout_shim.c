/* tests/unit/cm_conn_layout_shim.c - see cm_conn_layout_shim.h. */
#include "tests/unit/cm_conn_layout_shim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm/rt.h"

void cm_layout_run(size_t len, struct cm_layout_result *out)
{
	static const struct wcm_cfg cfg = {.disconnect_ms = 1000};
	struct wharf_ctx_opts co;
	struct wharf_ctx *ctx = NULL;
	struct wharf_cm cm;
	struct wharf_conn *c, *o, *a;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&cm, 0, sizeof(cm));
	wharf_ctx_opts_init(&co);
	co.nshards = 2;
	co.app_driven = true; /* this thread may act as the shards' owner */
	err = wharf_ctx_create(&co, &ctx);
	if (err)
		goto out;
	cm.ctx = ctx;
	cm.nshards = 2;
	cm.numa = wharf_ctx_numa(ctx);
	cm.shards = calloc(2, sizeof(*cm.shards));
	err = cm.shards ? 0 : -ENOMEM;
	for (unsigned i = 0; !err && i < 2; i++)
		err = wcm_shard_alloc(&cm, i);
	if (err)
		goto out;

	c = wcm_conn_alloc(cm.shards[0], WCM_PS_RC, WCM_SIDE_PASSIVE, len);
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	/* As the listener fills it (listen.c). */
	for (size_t i = 0; i < len; i++)
		c->pas->req_pdata[i] = (uint8_t)(0xA5 ^ i);
	c->pas->req.private_data = len ? c->pas->req_pdata : NULL;
	c->pas->req.private_data_len = len;
	o = wcm_conn_move(c, cm.shards[1]); /* frees @c */
	if (!o) {
		err = -ENOMEM;
		goto out;
	}
	out->pdata_len = o->pas->req_pdata_len;
	out->pdata_intact = 1;
	for (size_t i = 0; i < len; i++)
		if (o->pas->req_pdata[i] != (uint8_t)(0xA5 ^ i))
			out->pdata_intact = 0;
	out->pdata_points_home =
		len ? o->pas->req.private_data == o->pas->req_pdata
		    : o->pas->req.private_data == NULL;
	out->part_follows = o->pas->conn == o;
	/* The handshake's state goes when it is over, on the owner shard
	 * (here: this thread: the shards are application-driven). */
	o->cfg = &cfg;
	err = wcm_conn_timer_create(o);
	if (err) {
		wcm_conn_free_unpublished(o);
		goto out;
	}
	o->sm.state = WCM_ST_ACCEPTING;
	wcm_conn_trim(o);
	out->kept_in_handshake = o->pas != NULL &&
				 wharf_conn_get_request(o) != NULL &&
				 o->timer != NULL;
	o->sm.state = WCM_ST_ESTABLISHED;
	wcm_conn_trim(o);
	out->freed_when_over = o->pas == NULL &&
			       wharf_conn_get_request(o) == NULL &&
			       wcm_conn_qp_opts(o) == &o->cfg->qp;
	out->timer_freed = o->timer == NULL;
	/* A disconnect's bound: the timer comes back. */
	o->sm.state = WCM_ST_DISCONNECTING;
	wcm_arm_timer(o, WCM_TIMER_DISCONNECT);
	out->timer_recreated = o->timer != NULL &&
			       wharf_timer_armed(o->timer) && !o->timer_lost;
	if (o->timer)
		wharf_timer_destroy(o->timer);
	o->timer = NULL;
	wcm_conn_free_unpublished(o);

	out->oversize_refused =
		wcm_conn_alloc(cm.shards[0], WCM_PS_RC, WCM_SIDE_PASSIVE,
			       WCM_PDATA_RX_MAX + 1) == NULL;
	a = wcm_conn_alloc(cm.shards[0], WCM_PS_RC, WCM_SIDE_ACTIVE, 0);
	if (!a) {
		err = -ENOMEM;
		goto out;
	}
	out->active_ops_own = a->ops == &a->act->ops;
	wcm_conn_free_unpublished(a);
out:
	out->err = err;
	for (unsigned i = 0; cm.shards && i < 2; i++) {
		if (cm.shards[i])
			free(cm.shards[i]->res);
		free(cm.shards[i]);
	}
	free(cm.shards);
	if (ctx)
		wharf_ctx_destroy(ctx);
}
