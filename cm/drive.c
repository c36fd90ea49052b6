/*
 * cm/drive.c - executing the steps of the connection state machine.
 *
 * wcm_run() commits a step (cm/conn_state.h) as the connection's state,
 * counts its outcome, then performs its actions in ascending bit order.
 * Calls whose result matters (resolve, connect, establish, accept, reject,
 * disconnect, notify) feed it back through wcm_conn_on_call(), which may
 * produce a nested step; callbacks (on_established, on_disconnected, ...)
 * may call the API on the same connection, which runs a nested step too.
 *
 * After a nested step the outer one is superseded: the nested step started
 * from the state the outer one committed, so it already decided the timer,
 * the calls and the deliveries.  The outer step then only finishes what
 * releases resources, each idempotent: closing and releasing the QP,
 * dropping or flushing held receives (flushed receives are delivered only
 * while the connection still delivers data, else given back), and
 * destroying the rdma_cm_id.  Once a connection reaches a terminal state,
 * its rdma_cm_id is destroyed - after the ack when the step runs inside
 * the handling of one of its events (rdma_destroy_id waits for the ack).
 */
#include <errno.h>
#include <string.h>

#include "cm/rt.h"

static bool is_terminal(unsigned st)
{
	return st == WCM_ST_REJECTED || st == WCM_ST_CLOSED ||
	       st == WCM_ST_DESTROYED;
}

static bool is_noop(const struct wharf_conn *c, const struct wcm_step *st)
{
	return !st->actions && st->outcome == WCM_OUT_NONE &&
	       !memcmp(&st->next, &c->sm, sizeof(c->sm));
}

void wcm_destroy_id(struct wharf_conn *c)
{
	if (!c->cm_id)
		return;
	if (c->in_event) {
		c->destroy_id_pending = true;
		return;
	}
	c->port_num = c->cm_id->port_num;
	/* Late, on the shard's own channel: events.c says why. */
	if (c->cm_id->channel != c->sh->chan ||
	    !wcm_dead_id_push(c->sh, c->cm_id))
		rdma_destroy_id(c->cm_id);
	c->cm_id = NULL;
	c->id_ref = false;
	c->destroy_id_pending = false;
}

void wcm_arm_timer(struct wharf_conn *c, unsigned kind)
{
	uint32_t ms;

	switch (kind) {
	case WCM_TIMER_STEP:
		switch (c->sm.state) {
		case WCM_ST_ADDR_RESOLVING:
			ms = c->cfg->addr_ms + WCM_RESOLVE_GRACE_MS;
			break;
		case WCM_ST_ROUTE_RESOLVING:
			ms = c->cfg->route_ms + WCM_RESOLVE_GRACE_MS;
			break;
		case WCM_ST_REQ_RECEIVED:
			ms = c->cfg->decision_ms;
			break;
		case WCM_ST_ACCEPTING:
			ms = c->cfg->accept_ms;
			break;
		case WCM_ST_DEFERRED:
			ms = c->cfg->defer_ms;
			break;
		default:
			ms = c->cfg->connect_ms;
			break;
		}
		break;
	case WCM_TIMER_DISCONNECT:
		ms = c->cfg->disconnect_ms;
		break;
	case WCM_TIMER_TIMEWAIT:
		ms = c->cfg->timewait_ms;
		break;
	case WCM_TIMER_RETRY:
		ms = c->act->retry_delay_ms;
		break;
	default:
		return;
	}
	/* An established connection gave its timer back (wcm_conn_trim). */
	if ((!c->timer && wcm_conn_timer_create(c)) ||
	    wharf_timer_arm(c->timer, (uint64_t)ms * 1000000u))
		c->timer_lost = true; /* no bound: the wait ends now */
}

void wcm_run(struct wharf_conn *c, const struct wcm_step *st)
{
	uint32_t a = st->actions;
	unsigned gen;
	int rc;

	c->sm = st->next;
	gen = ++c->gen;
	c->refs++;
	wcm_count_outcome(c, st);
	wcm_dwin_settle(c);
#define LIVE (c->gen == gen)
	if ((a & WCM_ACT_DISARM_TIMER) && c->timer)
		wharf_timer_cancel(c->timer);
	if ((a & WCM_ACT_NOTIFY) && LIVE) {
		rc = wcm_act_notify(c);
		wcm_feed_call(c, WCM_CALL_NOTIFY, rc);
	}
	if ((a & WCM_ACT_RESTART) && LIVE)
		wcm_act_restart(c);
	if ((a & WCM_ACT_RESOLVE_ADDR) && LIVE)
		wcm_feed_call(c, WCM_CALL_RESOLVE_ADDR,
			      wcm_act_resolve_addr(c));
	if ((a & WCM_ACT_RESOLVE_ROUTE) && LIVE)
		wcm_feed_call(c, WCM_CALL_RESOLVE_ROUTE,
			      wcm_act_resolve_route(c));
	if ((a & WCM_ACT_CONNECT) && LIVE)
		wcm_feed_call(c, WCM_CALL_CONNECT, wcm_act_connect(c));
	if ((a & WCM_ACT_ESTABLISH) && LIVE)
		wcm_feed_call(c, WCM_CALL_ESTABLISH, wcm_act_establish(c));
	if ((a & WCM_ACT_ACCEPT) && LIVE)
		wcm_feed_call(c, WCM_CALL_ACCEPT, wcm_act_accept(c));
	if ((a & WCM_ACT_REJECT) && LIVE)
		wcm_feed_call(c, WCM_CALL_REJECT, wcm_act_reject(c));
	if ((a & WCM_ACT_DISCONNECT) && LIVE)
		wcm_feed_call(c, WCM_CALL_DISCONNECT, wcm_act_disconnect(c));
	if (a & WCM_ACT_QP_ERROR)
		wcm_qp_close(c);
	if ((a & WCM_ACT_DELIVER_REQUEST) && LIVE)
		wcm_deliver_request(c);
	if ((a & WCM_ACT_DELIVER_ESTABLISHED) && LIVE)
		wcm_deliver_established(c);
	if (a & WCM_ACT_FLUSH_HELD_RECV)
		wcm_held_flush(c);
	if (a & WCM_ACT_DROP_HELD_RECV)
		wcm_held_drop(c);
	if ((a & WCM_ACT_DELIVER_REJECTED) && LIVE)
		wcm_deliver_rejected(c);
	if ((a & WCM_ACT_DELIVER_ERROR) && LIVE)
		wcm_deliver_error(c, st->error);
	if ((a & WCM_ACT_DELIVER_DISCONNECTED) && LIVE)
		wcm_deliver_disconnected(c);
	if ((a & WCM_ACT_ARM_TIMER) && LIVE)
		wcm_arm_timer(c, st->timer);
	if (a & WCM_ACT_RECYCLE_QP)
		wcm_qp_release(c, true);
	if (a & WCM_ACT_QUARANTINE_QP)
		wcm_qp_release(c, false);
#undef LIVE
	if ((a & WCM_ACT_DESTROY_ID) || is_terminal(c->sm.state))
		wcm_destroy_id(c);
	if (c->timer_lost) {
		c->timer_lost = false;
		if (c->gen == gen) /* the wait it was for */
			wcm_conn_timeout(c);
	}
	wcm_conn_unref(c);
}

void wcm_feed_call(struct wharf_conn *c, enum wcm_call call, int rc)
{
	struct wcm_step st;

	if (rc && rc != -EISCONN)
		c->last_err = rc;
	if (wcm_conn_on_call(&c->sm, call, rc, &st) || is_noop(c, &st))
		return;
	wcm_run(c, &st);
}

void wcm_feed_cm(struct wharf_conn *c, const struct wcm_cm_input *in)
{
	struct wcm_step st;
	int err = wcm_conn_on_cm(&c->sm, in, &st);

	if (err == -EPROTO)
		wcm_count(c, WCM_C_PROTO);
	if (err || is_noop(c, &st))
		return;
	wcm_run(c, &st);
}
