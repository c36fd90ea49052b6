/*
 * cm/cm.c - creating and destroying a context's connection manager.
 *
 * Create: devices first (their limits bound wharf_connect()'s checks and
 * their index keys the QP table), then the tables, then every shard's
 * channel, watch and poller (shard.c).  Destroy runs the other way: shards
 * tear down their connections and wait for every QP to drain, the devices
 * close, a grace-period barrier lets the last frees run, the tables go.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"
#include "cm/conn_rcu.h"
#include "cm/rt.h"

struct wharf_ctx *wharf_cm_ctx(const struct wharf_cm *cm)
{
	return cm ? cm->ctx : NULL;
}

static void cm_free(struct wharf_cm *cm)
{
	wcm_shards_stop(cm);
	wcm_devs_close(cm);
	if (cm->table) {
		wcm_rcu_barrier();
		wcm_conn_table_destroy(cm->table);
	}
	free(cm);
}

int wharf_cm_create(struct wharf_ctx *ctx, const struct wharf_cm_opts *in,
		    struct wharf_cm **out)
{
	struct wharf_cm_opts o;
	struct wharf_cm *cm;
	int err;

	if (!ctx || !out)
		return -EINVAL;
	if (wharf_shard_current())
		return -EDEADLK;
	err = wbase_opts_copy(&o, sizeof(o), in);
	if (err)
		return err;
	if (o.async_shard >= wharf_ctx_shard_count(ctx))
		return -EINVAL;
	cm = calloc(1, sizeof(*cm));
	if (!cm)
		return -ENOMEM;
	cm->ctx = ctx;
	cm->numa = wharf_ctx_numa(ctx);
	cm->nshards = wharf_ctx_shard_count(ctx);
	cm->handshake_cap =
		o.handshake_cap ? o.handshake_cap : WCM_DEF_HANDSHAKE_CAP;
	if (!o.connect_window) {
		cm->win_start = WCM_WCTL_DEF_START;
		cm->win_lo = WCM_WCTL_DEF_LO;
		cm->win_hi = o.connect_window_max ? o.connect_window_max
						  : WCM_WCTL_DEF_HI;
	} else {
		cm->win_start = cm->win_lo = cm->win_hi = o.connect_window;
	}
	cm->busy_retry_after_ms = o.busy_retry_after_ms ? o.busy_retry_after_ms
							: WCM_DEF_BUSY_RETRY_MS;
	if (cm->busy_retry_after_ms > WCM_BUSY_RETRY_AFTER_MAX)
		cm->busy_retry_after_ms = WCM_BUSY_RETRY_AFTER_MAX;
	cm->remote_penalty =
		o.remote_penalty ? o.remote_penalty : WCM_DEF_REMOTE_PENALTY;
	cm->res_per_dev =
		o.res_per_device ? o.res_per_device : WCM_DEF_RES_PER_DEV;
	if (cm->res_per_dev > WCM_RES_PER_DEV_MAX) {
		free(cm);
		return -EINVAL;
	}
	atomic_init(&cm->closing, false);
	err = wbase_opts_copy(&cm->res_opts, sizeof(cm->res_opts), o.res_opts);
	if (err)
		goto fail;
	err = wcm_devs_open(cm, o.async_shard);
	if (err)
		goto fail;
	err = wcm_conn_table_create(1024, &cm->table);
	if (err)
		goto fail;
	err = wcm_shards_start(cm);
	if (err)
		goto fail;
	*out = cm;
	return 0;
fail:
	atomic_store(&cm->closing, true);
	cm_free(cm);
	return err;
}

int wharf_cm_destroy(struct wharf_cm *cm)
{
	if (!cm)
		return 0;
	if (wharf_shard_current())
		return -EDEADLK;
	atomic_store(&cm->closing, true);
	cm_free(cm);
	return 0;
}
