/*
 * cm/conn_state.c - the connection state machine (see conn_state.h).
 *
 * Design: each input source has a handler that only decides the
 * state-specific part of a transition (next state, the calls to make, what
 * to deliver). finish() then applies the rules that hold for every
 * transition, so that no path can forget them:
 *  - timers: leaving a state disarms its timer; arming replaces it;
 *  - QP: leaving the states that own a QP moves it to ERR (unless already
 *    there) and releases it: recycled after TIMEWAIT_EXIT, quarantined
 *    otherwise (its number may still be in the peer's timewait);
 *  - held receives are dropped when the handshake fails;
 *  - on_disconnected is delivered, once, when an established connection
 *    reaches TIMEWAIT or a terminal state by any path;
 *  - flags record what was delivered and whether the final outcome was
 *    reported.
 */
#include "cm/conn_state.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

static bool is_terminal(unsigned int st)
{
	return st == WCM_ST_REJECTED || st == WCM_ST_CLOSED ||
	       st == WCM_ST_DESTROYED;
}

/* States in which the connection owns a QP. */
static bool has_qp(unsigned int st)
{
	return st == WCM_ST_CONNECTING || st == WCM_ST_ACCEPTING ||
	       st == WCM_ST_ESTABLISHED || st == WCM_ST_DISCONNECTING ||
	       st == WCM_ST_TIMEWAIT;
}

/* States in which early receives are held. */
static bool holds_recv(unsigned int st)
{
	return st == WCM_ST_CONNECTING || st == WCM_ST_ACCEPTING;
}

static bool is_final(unsigned int outcome)
{
	return outcome >= WCM_OUT_REJECTED_BY_APP;
}

static bool sm_valid(const struct wcm_conn_sm *sm)
{
	return sm->state < WCM_ST_COUNT && sm->side <= WCM_SIDE_PASSIVE &&
	       sm->timer < WCM_TIMER_COUNT;
}

static int begin(const struct wcm_conn_sm *sm, struct wcm_step *step)
{
	if (!step)
		return -EINVAL;
	memset(step, 0, sizeof(*step));
	if (!sm || !sm_valid(sm))
		return -EINVAL;
	step->next = *sm;
	return 0;
}

/* A transition to @st with @actions. */
static void go(struct wcm_step *s, unsigned int st, uint32_t actions)
{
	s->next.state = (uint8_t)st;
	s->actions |= actions;
}

static void arm(struct wcm_step *s, unsigned int st, uint32_t actions,
		unsigned int timer)
{
	go(s, st, actions | WCM_ACT_ARM_TIMER);
	s->timer = (uint8_t)timer;
}

static void fail(struct wcm_step *s, unsigned int st, uint32_t actions,
		 unsigned int error)
{
	go(s, st, actions | WCM_ACT_DELIVER_ERROR);
	s->error = (uint8_t)error;
	s->outcome = WCM_OUT_FAILED;
}

static void established(struct wcm_step *s)
{
	go(s, WCM_ST_ESTABLISHED,
	   WCM_ACT_DELIVER_ESTABLISHED | WCM_ACT_FLUSH_HELD_RECV);
	s->outcome = WCM_OUT_ESTABLISHED;
}

static void finish(const struct wcm_conn_sm *cur, struct wcm_step *s,
		   bool timewait_exit)
{
	struct wcm_conn_sm *n = &s->next;
	unsigned int from = cur->state, to = n->state;

	if (s->actions & WCM_ACT_ARM_TIMER) {
		if (cur->timer != WCM_TIMER_NONE)
			s->actions |= WCM_ACT_DISARM_TIMER;
		n->timer = s->timer;
	} else if (from != to) {
		if (cur->timer != WCM_TIMER_NONE)
			s->actions |= WCM_ACT_DISARM_TIMER;
		n->timer = WCM_TIMER_NONE;
	}
	if (has_qp(from) && !has_qp(to)) {
		if (from != WCM_ST_DISCONNECTING && from != WCM_ST_TIMEWAIT)
			s->actions |= WCM_ACT_QP_ERROR;
		s->actions |= timewait_exit ? WCM_ACT_RECYCLE_QP
					    : WCM_ACT_QUARANTINE_QP;
	}
	if (holds_recv(from) && !holds_recv(to) && to != WCM_ST_ESTABLISHED)
		s->actions |= WCM_ACT_DROP_HELD_RECV;
	if ((cur->flags & WCM_SM_ESTABLISHED) &&
	    !(cur->flags & WCM_SM_DISCONNECTED) &&
	    (to == WCM_ST_TIMEWAIT || is_terminal(to))) {
		s->actions |= WCM_ACT_DELIVER_DISCONNECTED;
		s->outcome = WCM_OUT_DISCONNECTED;
	}
	if (s->actions & WCM_ACT_DELIVER_ESTABLISHED)
		n->flags |= WCM_SM_ESTABLISHED;
	if (s->actions & WCM_ACT_DELIVER_DISCONNECTED)
		n->flags |= WCM_SM_DISCONNECTED;
	if (is_final(s->outcome))
		n->flags |= WCM_SM_FINAL;
}

/* Leave @s a no-op and return @err. */
static int reject_input(const struct wcm_conn_sm *sm, struct wcm_step *s,
			int err)
{
	memset(s, 0, sizeof(*s));
	s->next = *sm;
	return err;
}

int wcm_conn_sm_init(struct wcm_conn_sm *sm, enum wcm_side side)
{
	if (!sm || (unsigned int)side > WCM_SIDE_PASSIVE)
		return -EINVAL;
	memset(sm, 0, sizeof(*sm));
	sm->state = WCM_ST_IDLE;
	sm->side = (uint8_t)side;
	return 0;
}

/* REJECTED while connecting: retry or report. */
static void on_rejected(const struct wcm_conn_sm *sm,
			const struct wcm_cm_input *in, struct wcm_step *s)
{
	s->rej_status = in->status;
	if (in->retry) {
		arm(s, WCM_ST_RETRY_WAIT, 0, WCM_TIMER_RETRY);
		s->next.attempt = sm->attempt == UINT16_MAX ? UINT16_MAX
							    : sm->attempt + 1;
		s->outcome = WCM_OUT_RETRIED;
		return;
	}
	go(s, WCM_ST_CLOSED, WCM_ACT_DELIVER_REJECTED);
	s->outcome = WCM_OUT_REJECTED_BY_PEER;
}

/*
 * The peer went away during a handshake. @qp: the connection owns a QP
 * (only then can a DREQ arrive).
 */
static int handshake_lost(unsigned int ev, bool qp, struct wcm_step *s)
{
	switch (ev) {
	case WCM_CM_UNREACHABLE:
		fail(s, WCM_ST_CLOSED, 0, WCM_ERR_UNREACHABLE);
		return 0;
	case WCM_CM_REJECTED:
	case WCM_CM_CONNECT_ERROR:
		fail(s, WCM_ST_CLOSED, 0, WCM_ERR_CONNECT);
		return 0;
	case WCM_CM_DISCONNECTED:
		if (!qp) {
			fail(s, WCM_ST_CLOSED, 0, WCM_ERR_CONNECT);
			return 0;
		}
		/* A DREQ: answer it (DREP) and wait out timewait. */
		fail(s, WCM_ST_TIMEWAIT, WCM_ACT_DISCONNECT | WCM_ACT_QP_ERROR,
		     WCM_ERR_CONNECT);
		arm(s, WCM_ST_TIMEWAIT, 0, WCM_TIMER_TIMEWAIT);
		return 0;
	}
	return -EPROTO;
}

/* A resolve step: @ok moves on to @next doing @act, @err fails. */
static int resolving(unsigned int ev, unsigned int ok, unsigned int err,
		     unsigned int next, uint32_t act, unsigned int error,
		     struct wcm_step *s)
{
	if (ev == ok)
		arm(s, next, act, WCM_TIMER_STEP);
	else if (ev == err)
		fail(s, WCM_ST_CLOSED, 0, error);
	else
		return -EPROTO;
	return 0;
}

/*
 * A deferred request: presented again when the owner admits it, lost when
 * the peer or the device goes away.  The application never saw it, so
 * nothing is delivered.
 */
static int deferred(unsigned int ev, const struct wcm_cm_input *in,
		    struct wcm_step *s)
{
	switch (ev) {
	case WCM_CM_CONNECT_REQUEST:
		if (in->defer)
			return 0; /* still no room: keep waiting */
		arm(s, WCM_ST_REQ_RECEIVED, WCM_ACT_DELIVER_REQUEST,
		    WCM_TIMER_STEP);
		s->outcome = WCM_OUT_ADMITTED;
		return 0;
	case WCM_CM_REJECTED:
	case WCM_CM_CONNECT_ERROR:
	case WCM_CM_UNREACHABLE:
	case WCM_CM_DISCONNECTED:
	case WCM_CM_DEVICE_REMOVAL:
		go(s, WCM_ST_CLOSED, 0);
		s->outcome = WCM_OUT_DEFER_LOST;
		return 0;
	case WCM_CM_ADDR_CHANGE:
		return 0;
	}
	return -EPROTO;
}

static int cm_transition(const struct wcm_conn_sm *sm,
			 const struct wcm_cm_input *in, struct wcm_step *s)
{
	unsigned int ev = in->event;

	if (is_terminal(sm->state))
		return 0; /* late events after the end: nothing to do */
	if (ev == WCM_CM_ADDR_CHANGE)
		return 0;
	if (sm->state == WCM_ST_DEFERRED)
		return deferred(ev, in, s);
	if (ev == WCM_CM_DEVICE_REMOVAL) {
		if (sm->state == WCM_ST_IDLE)
			return -EPROTO;
		/* Established: finish() delivers on_disconnected. */
		if (sm->flags & (WCM_SM_FINAL | WCM_SM_ESTABLISHED))
			go(s, WCM_ST_CLOSED, 0);
		else
			fail(s, WCM_ST_CLOSED, 0, WCM_ERR_DEVICE);
		return 0;
	}
	switch (sm->state) {
	case WCM_ST_IDLE:
		if (sm->side != WCM_SIDE_PASSIVE ||
		    ev != WCM_CM_CONNECT_REQUEST)
			return -EPROTO;
		if (in->defer) {
			arm(s, WCM_ST_DEFERRED, 0, WCM_TIMER_STEP);
			s->outcome = WCM_OUT_DEFERRED;
			return 0;
		}
		arm(s, WCM_ST_REQ_RECEIVED, WCM_ACT_DELIVER_REQUEST,
		    WCM_TIMER_STEP);
		return 0;
	case WCM_ST_ADDR_RESOLVING:
		return resolving(ev, WCM_CM_ADDR_RESOLVED, WCM_CM_ADDR_ERROR,
				 WCM_ST_ROUTE_RESOLVING, WCM_ACT_RESOLVE_ROUTE,
				 WCM_ERR_ADDRESS, s);
	case WCM_ST_ROUTE_RESOLVING:
		return resolving(ev, WCM_CM_ROUTE_RESOLVED, WCM_CM_ROUTE_ERROR,
				 WCM_ST_CONNECTING, WCM_ACT_CONNECT,
				 WCM_ERR_ROUTE, s);
	case WCM_ST_CONNECTING:
		switch (ev) {
		case WCM_CM_ESTABLISHED:
			established(s);
			return 0;
		case WCM_CM_CONNECT_RESPONSE:
			go(s, WCM_ST_CONNECTING, WCM_ACT_ESTABLISH);
			return 0;
		case WCM_CM_REJECTED:
			on_rejected(sm, in, s);
			return 0;
		}
		return handshake_lost(ev, true, s);
	case WCM_ST_RETRY_WAIT:
		return 0; /* late events of the previous rdma_cm_id */
	case WCM_ST_REQ_RECEIVED:
		return handshake_lost(ev, false, s);
	case WCM_ST_ACCEPTING:
		if (ev == WCM_CM_ESTABLISHED) {
			established(s);
			return 0;
		}
		return handshake_lost(ev, true, s);
	case WCM_ST_ESTABLISHED:
		if (ev != WCM_CM_DISCONNECTED)
			return -EPROTO;
		/* The peer's DREQ: answer with a DREP, wait out timewait. */
		arm(s, WCM_ST_TIMEWAIT, WCM_ACT_DISCONNECT | WCM_ACT_QP_ERROR,
		    WCM_TIMER_TIMEWAIT);
		return 0;
	case WCM_ST_DISCONNECTING:
		if (ev != WCM_CM_DISCONNECTED)
			return -EPROTO;
		arm(s, WCM_ST_TIMEWAIT, 0, WCM_TIMER_TIMEWAIT);
		return 0;
	case WCM_ST_TIMEWAIT:
		if (ev == WCM_CM_TIMEWAIT_EXIT)
			go(s, WCM_ST_CLOSED, 0);
		else if (ev != WCM_CM_DISCONNECTED) /* a duplicate: ignore */
			return -EPROTO;
		return 0;
	}
	return -EINVAL;
}

int wcm_conn_on_cm(const struct wcm_conn_sm *sm, const struct wcm_cm_input *in,
		   struct wcm_step *step)
{
	int ret = begin(sm, step);

	if (ret)
		return ret;
	if (!in || in->event >= WCM_CM_EVENT_COUNT)
		return reject_input(sm, step, -EINVAL);
	ret = cm_transition(sm, in, step);
	if (ret)
		return reject_input(sm, step, ret);
	finish(sm, step, in->event == WCM_CM_TIMEWAIT_EXIT);
	return 0;
}

/* Errors of API calls, by state; 0 = valid. */
static int api_check(const struct wcm_conn_sm *sm, unsigned int call)
{
	bool active = sm->side == WCM_SIDE_ACTIVE;
	unsigned int st = sm->state;

	if (st == WCM_ST_DESTROYED)
		return -EINVAL;
	switch (call) {
	case WCM_API_CONNECT:
		if (!active)
			return -EINVAL;
		if (st == WCM_ST_IDLE)
			return 0;
		if (st == WCM_ST_ESTABLISHED)
			return -EISCONN;
		if (st == WCM_ST_ADDR_RESOLVING ||
		    st == WCM_ST_ROUTE_RESOLVING || st == WCM_ST_CONNECTING ||
		    st == WCM_ST_RETRY_WAIT)
			return -EALREADY;
		return -EINVAL;
	case WCM_API_ACCEPT:
	case WCM_API_REJECT:
		if (active || st == WCM_ST_IDLE || st == WCM_ST_DEFERRED)
			return -EINVAL; /* no request the application holds */
		if (st == WCM_ST_REQ_RECEIVED)
			return 0;
		if (st == WCM_ST_ESTABLISHED)
			return -EISCONN;
		if (st == WCM_ST_ACCEPTING)
			return call == WCM_API_ACCEPT ? -EALREADY : -EBUSY;
		if (st == WCM_ST_REJECTED)
			return -EALREADY;
		return -ENOTCONN;
	case WCM_API_NOTIFY:
		if (st == WCM_ST_CONNECTING || st == WCM_ST_ACCEPTING ||
		    st == WCM_ST_ESTABLISHED)
			return 0;
		return -ENOTCONN;
	case WCM_API_DISCONNECT:
		if (st == WCM_ST_ESTABLISHED)
			return 0;
		return st == WCM_ST_DISCONNECTING ? -EALREADY : -ENOTCONN;
	case WCM_API_DESTROY:
		return 0;
	}
	return -EINVAL;
}

static void api_transition(const struct wcm_conn_sm *sm, unsigned int call,
			   struct wcm_step *s)
{
	unsigned int st = sm->state;

	switch (call) {
	case WCM_API_CONNECT:
		arm(s, WCM_ST_ADDR_RESOLVING, WCM_ACT_RESOLVE_ADDR,
		    WCM_TIMER_STEP);
		break;
	case WCM_API_ACCEPT:
		arm(s, WCM_ST_ACCEPTING, WCM_ACT_ACCEPT, WCM_TIMER_STEP);
		break;
	case WCM_API_REJECT:
		go(s, WCM_ST_REJECTED, WCM_ACT_REJECT);
		s->outcome = WCM_OUT_REJECTED_BY_APP;
		break;
	case WCM_API_NOTIFY:
		/* Established already: rdma_notify would say EISCONN. */
		if (st != WCM_ST_ESTABLISHED)
			go(s, st, WCM_ACT_NOTIFY);
		break;
	case WCM_API_DISCONNECT:
		arm(s, WCM_ST_DISCONNECTING,
		    WCM_ACT_DISCONNECT | WCM_ACT_QP_ERROR,
		    WCM_TIMER_DISCONNECT);
		break;
	case WCM_API_DESTROY:
		go(s, WCM_ST_DESTROYED, WCM_ACT_DESTROY_ID);
		if (st == WCM_ST_REQ_RECEIVED || st == WCM_ST_DEFERRED)
			s->actions |=
				WCM_ACT_REJECT; /* do not leave it hanging */
		if (st == WCM_ST_ESTABLISHED)
			s->actions |= WCM_ACT_DISCONNECT;
		if (!(sm->flags & (WCM_SM_FINAL | WCM_SM_ESTABLISHED)))
			s->outcome = WCM_OUT_ABORTED;
		break;
	}
}

int wcm_conn_on_api(const struct wcm_conn_sm *sm, enum wcm_api call,
		    struct wcm_step *step)
{
	int ret = begin(sm, step);

	if (ret)
		return ret;
	ret = api_check(sm, (unsigned int)call);
	if (ret)
		return reject_input(sm, step, ret);
	api_transition(sm, (unsigned int)call, step);
	finish(sm, step, false);
	return 0;
}

int wcm_conn_on_qp(const struct wcm_conn_sm *sm, enum wcm_qp_event ev,
		   struct wcm_step *step)
{
	unsigned int st;
	int ret = begin(sm, step);

	if (ret)
		return ret;
	st = sm->state;
	switch (ev) {
	case WCM_QP_COMM_EST:
		if (holds_recv(st))
			go(step, st, WCM_ACT_NOTIFY);
		break;
	case WCM_QP_FATAL:
		if (st == WCM_ST_ESTABLISHED)
			arm(step, WCM_ST_DISCONNECTING,
			    WCM_ACT_DISCONNECT | WCM_ACT_QP_ERROR,
			    WCM_TIMER_DISCONNECT);
		else if (holds_recv(st))
			fail(step, WCM_ST_CLOSED, 0, WCM_ERR_CONNECT);
		break;
	case WCM_QP_RECV:
		if (holds_recv(st))
			go(step, st, WCM_ACT_HOLD_RECV);
		else if (st == WCM_ST_ESTABLISHED || st == WCM_ST_DISCONNECTING)
			go(step, st, WCM_ACT_DELIVER_RECV);
		else
			go(step, st, WCM_ACT_DROP_RECV);
		break;
	default:
		return reject_input(sm, step, -EINVAL);
	}
	finish(sm, step, false);
	return 0;
}

int wcm_conn_on_timer(const struct wcm_conn_sm *sm, enum wcm_timer timer,
		      struct wcm_step *step)
{
	struct wcm_conn_sm fired;
	unsigned int st;
	int ret = begin(sm, step);

	if (ret)
		return ret;
	if (timer == WCM_TIMER_NONE || (unsigned int)timer >= WCM_TIMER_COUNT)
		return reject_input(sm, step, -EINVAL);
	if (timer != sm->timer)
		return 0; /* a stale expiry */
	st = sm->state;
	switch (timer) {
	case WCM_TIMER_STEP:
		if (st == WCM_ST_REQ_RECEIVED) {
			fail(step, WCM_ST_REJECTED, WCM_ACT_REJECT,
			     WCM_ERR_TIMEOUT);
		} else if (st == WCM_ST_DEFERRED) {
			/* Never shown: refused, nothing delivered. */
			go(step, WCM_ST_REJECTED, WCM_ACT_REJECT);
			step->outcome = WCM_OUT_DEFER_EXPIRED;
		} else
			fail(step, WCM_ST_CLOSED, 0, WCM_ERR_TIMEOUT);
		break;
	case WCM_TIMER_DISCONNECT: /* lost DREQ/DREP: forced teardown */
	case WCM_TIMER_TIMEWAIT:
		go(step, WCM_ST_CLOSED, 0);
		break;
	case WCM_TIMER_RETRY:
		arm(step, WCM_ST_ADDR_RESOLVING,
		    WCM_ACT_RESTART | WCM_ACT_RESOLVE_ADDR, WCM_TIMER_STEP);
		break;
	default: /* NONE and out of range were refused above */
		break;
	}
	/* The timer that fired is no longer armed: nothing to disarm. */
	fired = *sm;
	fired.timer = WCM_TIMER_NONE;
	finish(&fired, step, false);
	return 0;
}

int wcm_conn_on_call(const struct wcm_conn_sm *sm, enum wcm_call call, int rc,
		     struct wcm_step *step)
{
	unsigned int st;
	int ret = begin(sm, step);

	if (ret)
		return ret;
	if ((unsigned int)call >= WCM_CALL_COUNT)
		return reject_input(sm, step, -EINVAL);
	st = sm->state;
	if (call == WCM_CALL_ESTABLISH && !rc && st == WCM_ST_CONNECTING) {
		established(step);
	} else if (rc && call != WCM_CALL_NOTIFY && call != WCM_CALL_REJECT) {
		if (call == WCM_CALL_RESOLVE_ADDR &&
		    st == WCM_ST_ADDR_RESOLVING)
			fail(step, WCM_ST_CLOSED, 0, WCM_ERR_ADDRESS);
		else if (call == WCM_CALL_RESOLVE_ROUTE &&
			 st == WCM_ST_ROUTE_RESOLVING)
			fail(step, WCM_ST_CLOSED, 0, WCM_ERR_ROUTE);
		else if ((call == WCM_CALL_CONNECT ||
			  call == WCM_CALL_ESTABLISH) &&
			 st == WCM_ST_CONNECTING)
			fail(step, WCM_ST_CLOSED, 0, WCM_ERR_CONNECT);
		else if (call == WCM_CALL_ACCEPT && st == WCM_ST_ACCEPTING)
			fail(step, WCM_ST_CLOSED, WCM_ACT_REJECT,
			     WCM_ERR_CONNECT);
		else if (call == WCM_CALL_DISCONNECT &&
			 st == WCM_ST_DISCONNECTING)
			go(step, WCM_ST_CLOSED, 0); /* forced teardown */
	}
	finish(sm, step, false);
	return 0;
}

int wcm_cm_event_from_rdma(int rdma_event, enum wcm_cm_event *out)
{
	static const struct {
		int rdma;
		enum wcm_cm_event wcm;
	} map[] = {
		{RDMA_CM_EVENT_ADDR_RESOLVED, WCM_CM_ADDR_RESOLVED},
		{RDMA_CM_EVENT_ADDR_ERROR, WCM_CM_ADDR_ERROR},
		{RDMA_CM_EVENT_ROUTE_RESOLVED, WCM_CM_ROUTE_RESOLVED},
		{RDMA_CM_EVENT_ROUTE_ERROR, WCM_CM_ROUTE_ERROR},
		{RDMA_CM_EVENT_CONNECT_REQUEST, WCM_CM_CONNECT_REQUEST},
		{RDMA_CM_EVENT_CONNECT_RESPONSE, WCM_CM_CONNECT_RESPONSE},
		{RDMA_CM_EVENT_CONNECT_ERROR, WCM_CM_CONNECT_ERROR},
		{RDMA_CM_EVENT_UNREACHABLE, WCM_CM_UNREACHABLE},
		{RDMA_CM_EVENT_REJECTED, WCM_CM_REJECTED},
		{RDMA_CM_EVENT_ESTABLISHED, WCM_CM_ESTABLISHED},
		{RDMA_CM_EVENT_DISCONNECTED, WCM_CM_DISCONNECTED},
		{RDMA_CM_EVENT_DEVICE_REMOVAL, WCM_CM_DEVICE_REMOVAL},
		{RDMA_CM_EVENT_ADDR_CHANGE, WCM_CM_ADDR_CHANGE},
		{RDMA_CM_EVENT_TIMEWAIT_EXIT, WCM_CM_TIMEWAIT_EXIT},
	};
	size_t i;

	if (!out)
		return -EINVAL;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (map[i].rdma == rdma_event) {
			*out = map[i].wcm;
			return 0;
		}
	}
	return -ENOTSUP;
}

int wcm_notify_event_check(int ibv_event)
{
	return ibv_event == IBV_EVENT_COMM_EST ? 0 : -EINVAL;
}

const char *wcm_conn_state_name(unsigned int state)
{
	static const char *const names[WCM_ST_COUNT] = {
		[WCM_ST_IDLE] = "IDLE",
		[WCM_ST_ADDR_RESOLVING] = "ADDR_RESOLVING",
		[WCM_ST_ROUTE_RESOLVING] = "ROUTE_RESOLVING",
		[WCM_ST_CONNECTING] = "CONNECTING",
		[WCM_ST_RETRY_WAIT] = "RETRY_WAIT",
		[WCM_ST_REQ_RECEIVED] = "REQ_RECEIVED",
		[WCM_ST_ACCEPTING] = "ACCEPTING",
		[WCM_ST_ESTABLISHED] = "ESTABLISHED",
		[WCM_ST_DISCONNECTING] = "DISCONNECTING",
		[WCM_ST_TIMEWAIT] = "TIMEWAIT",
		[WCM_ST_REJECTED] = "REJECTED",
		[WCM_ST_CLOSED] = "CLOSED",
		[WCM_ST_DESTROYED] = "DESTROYED",
		[WCM_ST_DEFERRED] = "DEFERRED",
	};

	return state < WCM_ST_COUNT ? names[state] : "?";
}
