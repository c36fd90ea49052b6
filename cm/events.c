/*
 * cm/events.c - a shard's rdma_cm event channel: every event of the
 * connections the shard owns.
 *
 * The channel is drained in batches of WCM_SHARD_BATCH (the watch is
 * level-triggered: the rest waits for the next loop iteration).  For each
 * event the data the state machine or the application will need is copied
 * out of it (parameters, private data, the UD address handle), the state
 * machine runs, then the event is acknowledged, and only then may the
 * connection's rdma_cm_id be destroyed.
 *
 * A passive connection is normally adopted by the owner through the inbox
 * (shard.c) right after the listener migrated its rdma_cm_id here; when one
 * of its events overtakes the hand-over, it is adopted on that event.
 */
#include <errno.h>
#include <string.h>

#include "cm/rt.h"

static int status_err(int status, int dflt)
{
	if (status < 0)
		return status;
	return dflt;
}

/* REJECTED: what came with it, and whether to retry (active side). */
static void rejected(struct wharf_conn *c, const struct rdma_cm_event *ev,
		     struct wcm_cm_input *in)
{
	const void *pd = c->ps == WCM_PS_UD ? ev->param.ud.private_data
					    : ev->param.conn.private_data;
	uint8_t len = c->ps == WCM_PS_UD ? ev->param.ud.private_data_len
					 : ev->param.conn.private_data_len;
	uint32_t delay;

	c->rej_reason = ev->status;
	c->last_err = -ECONNREFUSED;
	if (!c->act) /* a passive side's REP refused: nothing to deliver */
		return;
	if (wcm_pdata_recv(&c->act->peer_pdata, pd, len))
		memset(&c->act->peer_pdata, 0, sizeof(c->act->peer_pdata));
	c->act->rej_is_busy =
		!wcm_rej_busy_decode(c->act->peer_pdata.bytes,
				     c->act->peer_pdata.len, &c->act->rej_busy);
	if (c->sm.side != WCM_SIDE_ACTIVE || c->sm.state != WCM_ST_CONNECTING)
		return;
	if (c->cfg->stale_retry &&
	    !wcm_retry_stale(&c->cfg->stale, ev->status, c->sm.attempt,
			     wcm_rand(c->sh), &delay)) {
		in->retry = 1;
	} else if (c->cfg->busy_retry && c->act->rej_is_busy &&
		   ev->status == WCM_REJ_REASON_CONSUMER &&
		   !wcm_retry_busy(&c->cfg->busy, &c->act->rej_busy,
				   c->sm.attempt, wcm_rand(c->sh), &delay)) {
		in->retry = 1;
	}
	if (in->retry)
		c->act->retry_delay_ms = delay;
}

/* UD ESTABLISHED on the active side: the SIDR reply. */
static int ud_resolved(struct wharf_conn *c, const struct rdma_cm_event *ev)
{
	const struct rdma_ud_param *ud = &ev->param.ud;

	c->act->ud_qpn = ud->qp_num & WCM_QP_NUM_MAX;
	c->act->ud_qkey = ud->qkey;
	c->act->ud_ah_attr = ud->ah_attr;
	if (wcm_pdata_recv(&c->act->peer_pdata, ud->private_data,
			   ud->private_data_len))
		return -EPROTO;
	if (!c->dev)
		return -ENODEV;
	c->act->ud_ah = ibv_create_ah(c->dev->ud_pd, &c->act->ud_ah_attr);
	if (!c->act->ud_ah)
		return errno ? -errno : -ENOMEM;
	return 0;
}

static void handle(struct wharf_conn *c, struct rdma_cm_event *ev)
{
	struct wcm_cm_input in = {.status = ev->status};
	enum wcm_cm_event we;
	int err;

	if (wcm_cm_event_from_rdma(ev->event, &we))
		return;
	in.event = (uint8_t)we;
	switch (we) {
	case WCM_CM_ADDR_RESOLVED:
		c->dev = wcm_dev_find(c->cm, ev->id->verbs);
		c->port_num = ev->id->port_num;
		if (!c->dev) {
			in.event = WCM_CM_ADDR_ERROR;
			c->last_err = -ENODEV;
		}
		break;
	case WCM_CM_ADDR_ERROR:
	case WCM_CM_ROUTE_ERROR:
	case WCM_CM_CONNECT_ERROR:
		c->last_err = status_err(ev->status, -EIO);
		break;
	case WCM_CM_UNREACHABLE:
		c->last_err = status_err(ev->status, -EHOSTUNREACH);
		break;
	case WCM_CM_CONNECT_RESPONSE:
		err = wcm_conn_param_recv(&ev->param.conn, &c->act->peer_param,
					  &c->act->peer_pdata);
		if (err) {
			in.event = WCM_CM_CONNECT_ERROR;
			c->last_err = err;
		}
		break;
	case WCM_CM_ESTABLISHED:
		if (c->ps != WCM_PS_UD || c->sm.side != WCM_SIDE_ACTIVE)
			break;
		err = ud_resolved(c, ev);
		if (err) {
			in.event = WCM_CM_CONNECT_ERROR;
			c->last_err = err;
		}
		break;
	case WCM_CM_REJECTED:
		rejected(c, ev, &in);
		break;
	case WCM_CM_DEVICE_REMOVAL:
		c->last_err = -ENODEV;
		break;
	default:
		break;
	}
	wcm_feed_cm(c, &in);
}

static void conn_event(struct rdma_cm_event *ev)
{
	struct wharf_conn *c = ev->id->context;

	if (!c) {
		rdma_ack_cm_event(ev);
		return;
	}
	c->refs++;
	c->in_event = true;
	if (!c->adopted)
		wcm_adopt(c);
	if (c->inserted && ev->id == c->cm_id)
		handle(c, ev);
	c->in_event = false;
	rdma_ack_cm_event(ev);
	if (c->destroy_id_pending)
		wcm_destroy_id(c);
	wcm_conn_unref(c);
}

/* Reads and runs up to @max events; true when the channel is drained. */
static bool read_events(struct wcm_shard *sh, unsigned max)
{
	for (unsigned i = 0; i < max; i++) {
		struct rdma_cm_event *ev;

		if (rdma_get_cm_event(sh->chan, &ev))
			return true; /* EAGAIN: drained */
		conn_event(ev);
	}
	return false;
}

/* The queued ids (the late destruction below), the channel read dry. */
static unsigned destroy_dead(struct wcm_shard *sh)
{
	unsigned n = sh->ndead;

	for (unsigned i = 0; i < n; i++)
		rdma_destroy_id(sh->dead_ids[i]);
	/* A destroy cannot queue another: the ids are no connection's. */
	sh->ndead = 0;
	return n;
}

void wcm_shard_chan_ready(struct wharf_watch *w, int fd, uint32_t events,
			  void *arg)
{
	struct wcm_shard *sh = arg;

	(void)w;
	(void)fd;
	(void)events;
	if (read_events(sh, WCM_SHARD_BATCH))
		(void)destroy_dead(sh);
}

/*
 * Events before deadlines.  The loop reads ready fds before it runs due
 * timers, but a shard's channel gives WCM_SHARD_BATCH events per read:
 * after a stall (a client process starved of CPU, a burst of thousands of
 * answers) the answer to a wait can sit in the channel behind more than
 * one batch when the wait's timer comes due, and the wait would end as a
 * timeout although the peer answered in time.  So a connection's timer
 * first reads the channel (bounded) and judges only what is still
 * waiting (passive.c).
 */
void wcm_shard_catch_up(struct wcm_shard *sh)
{
	if (sh->chan && read_events(sh, WCM_DEAD_READ))
		(void)destroy_dead(sh);
}

/*
 * Late id destruction.  The kernel's rdma_destroy_id (ucma's
 * ucma_destroy_private_ctx, 6.1 and 6.12) walks every unread event of
 * the id's channel to drop the id's own.  A shard that destroys ids
 * while thousands of DISCONNECTEDs wait unread on its channel pays for
 * each of them at every destroy: teardown goes quadratic (profiled at
 * 30,000 on two nodes: 21 % of the server node's CPU in that one
 * function).  So an id on the shard's own channel is queued (its
 * context cleared: a late event for it is acked and dropped) and
 * destroyed once the channel has been read dry, when the walk is short.
 * Only then: destroying after a bounded read whatever was left unread
 * put the walk back (a client of 10,000 connections whose DISCONNECTEDs
 * arrive faster than one read of 4,096 events paid it at every destroy).
 * The queue grows to WCM_DEAD_IDS_MAX; past that an id is destroyed at
 * once.  The shard's poller reads and flushes at every loop pass and
 * keeps the loop awake while ids wait.
 */
bool wcm_dead_id_push(struct wcm_shard *sh, struct rdma_cm_id *id)
{
	if (!sh->chan)
		return false;
	if (sh->ndead == sh->dead_cap) {
		unsigned cap =
			sh->dead_cap ? 2 * sh->dead_cap : WCM_DEAD_IDS_MIN;
		struct rdma_cm_id **ids;

		if (cap > WCM_DEAD_IDS_MAX)
			return false;
		ids = realloc(sh->dead_ids, cap * sizeof(*ids));
		if (!ids)
			return false;
		sh->dead_ids = ids;
		sh->dead_cap = cap;
	}
	id->context = NULL;
	sh->dead_ids[sh->ndead++] = id;
	return true;
}

unsigned wcm_dead_ids_flush(struct wcm_shard *sh, bool force)
{
	if (!sh->ndead)
		return 0;
	/* Bounded: a steady inflow never keeps the rest of the loop
	 * waiting for longer than this read. */
	if (!read_events(sh, WCM_DEAD_READ) && !force)
		return 0;
	return destroy_dead(sh);
}
