/*
 * cm/conn_state.h - the connection state machine, as pure functions.
 *
 * One transition function per source of input: rdma_cm events, API calls,
 * QP events (async events and receive completions), timers, and the results
 * of the calls a step asked for. Each takes the current state and returns a
 * step: the next state, the actions to perform and what to report. Nothing
 * here touches a device; the owner shard performs the actions.
 *
 * Active:  IDLE -> ADDR_RESOLVING -> ROUTE_RESOLVING -> CONNECTING
 *          -> ESTABLISHED -> DISCONNECTING -> TIMEWAIT -> CLOSED
 *          CONNECTING -(REJ, caller decided to retry)-> RETRY_WAIT
 *          -(retry timer)-> ADDR_RESOLVING with a fresh rdma_cm_id
 * Passive: IDLE -(CONNECT_REQUEST)-> REQ_RECEIVED (the application decides,
 *          now or later) -> ACCEPTING -> ESTABLISHED ..., or -> REJECTED
 *          IDLE -(CONNECT_REQUEST, deferred)-> DEFERRED: the owner shard
 *          has no room for another handshake; the request waits, unseen
 *          by the application, until the request is presented again
 *          (-> REQ_RECEIVED), its timer runs out (-> REJECTED) or the
 *          peer gives up (-> CLOSED)
 * Peer disconnect: ESTABLISHED -(DISCONNECTED)-> TIMEWAIT (DREP sent)
 * Any state -(destroy)-> DESTROYED.
 *
 * Guarantees (each pinned by tests/unit/cm_conn_state_test.cc):
 *  - Never a hang: every state that waits for the network or the
 *    application (all but IDLE, ESTABLISHED and the terminal states) has a
 *    timer armed; a lost DREQ/DREP ends in forced teardown when the
 *    disconnect timer fires.
 *  - on_disconnected is delivered exactly once for every connection that
 *    delivered on_established, whatever ends it (peer, local disconnect,
 *    timeout, QP fatal, device removal, destroy), and never otherwise.
 *  - Receives completing before ESTABLISHED are held and delivered in order
 *    right after on_established; if the connection never establishes they
 *    are dropped (buffers returned).
 *  - COMM_EST before ESTABLISHED makes the library call rdma_notify();
 *    -EISCONN from it counts as success.
 *  - Exactly one final outcome per connection (for the counters).
 *
 * Using a step: commit step->next as the connection's state, then perform
 * the actions in ascending bit order (the WCM_ACT_* values are that
 * order). An API call made from a callback during the actions then sees
 * the new state. Feed the result of each WCM_ACT_* call that has a
 * WCM_CALL_* counterpart back through wcm_conn_on_call().
 */
#ifndef WHARF_CM_CONN_STATE_H
#define WHARF_CM_CONN_STATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum wcm_conn_state {
	WCM_ST_IDLE = 0,	/* created; nothing started */
	WCM_ST_ADDR_RESOLVING,	/* active: rdma_resolve_addr in flight */
	WCM_ST_ROUTE_RESOLVING, /* active: rdma_resolve_route in flight */
	WCM_ST_CONNECTING,	/* active: REQ sent, waiting for ESTABLISHED */
	WCM_ST_RETRY_WAIT,	/* active: rejected, backing off to retry */
	WCM_ST_REQ_RECEIVED,	/* passive: on_request delivered, app decides */
	WCM_ST_ACCEPTING,	/* passive: REP sent, waiting for ESTABLISHED */
	WCM_ST_ESTABLISHED,	/* on_established delivered */
	WCM_ST_DISCONNECTING,	/* local disconnect: waiting for DISCONNECTED */
	WCM_ST_TIMEWAIT,	/* disconnected; waiting for TIMEWAIT_EXIT */
	WCM_ST_REJECTED,	/* passive: REJ sent (terminal) */
	WCM_ST_CLOSED,		/* finished (terminal) */
	WCM_ST_DESTROYED,	/* destroyed by the application (terminal) */
	WCM_ST_DEFERRED,	/* passive: waiting for admission, not shown */
	WCM_ST_COUNT
};

enum wcm_side {
	WCM_SIDE_ACTIVE = 0,
	WCM_SIDE_PASSIVE = 1,
};

/* rdma_cm events (enum rdma_cm_event_type, the ones a connection sees). */
enum wcm_cm_event {
	WCM_CM_ADDR_RESOLVED = 0,
	WCM_CM_ADDR_ERROR,
	WCM_CM_ROUTE_RESOLVED,
	WCM_CM_ROUTE_ERROR,
	WCM_CM_CONNECT_REQUEST,
	WCM_CM_CONNECT_RESPONSE, /* REP received; no QP on the rdma_cm_id */
	WCM_CM_CONNECT_ERROR,
	WCM_CM_UNREACHABLE,
	WCM_CM_REJECTED,
	WCM_CM_ESTABLISHED,
	WCM_CM_DISCONNECTED,
	WCM_CM_DEVICE_REMOVAL,
	WCM_CM_ADDR_CHANGE, /* ignored: the connection may well survive */
	WCM_CM_TIMEWAIT_EXIT,
	WCM_CM_EVENT_COUNT
};

/* API calls on a connection. */
enum wcm_api {
	WCM_API_CONNECT = 0,
	WCM_API_ACCEPT,
	WCM_API_REJECT,
	WCM_API_NOTIFY, /* wharf_notify(conn, IBV_EVENT_COMM_EST) */
	WCM_API_DISCONNECT,
	WCM_API_DESTROY,
	WCM_API_COUNT
};

/* QP events: async events and receive completions. */
enum wcm_qp_event {
	WCM_QP_COMM_EST = 0, /* IBV_EVENT_COMM_EST */
	WCM_QP_FATAL,	     /* IBV_EVENT_QP_FATAL / _REQ_ERR / _ACCESS_ERR */
	WCM_QP_RECV,	     /* a receive completed successfully */
	WCM_QP_EVENT_COUNT
};

/* Timers. One is armed at a time; its duration comes from the options. */
enum wcm_timer {
	WCM_TIMER_NONE = 0,
	WCM_TIMER_STEP,	      /* resolve, connect, accept, app decision */
	WCM_TIMER_DISCONNECT, /* DREQ sent, DISCONNECTED not yet seen */
	WCM_TIMER_TIMEWAIT,   /* TIMEWAIT_EXIT not yet seen */
	WCM_TIMER_RETRY,      /* backoff before a retry (wcm_retry_*) */
	WCM_TIMER_COUNT
};

/* Calls whose result is fed back (wcm_conn_on_call()). */
enum wcm_call {
	WCM_CALL_RESOLVE_ADDR = 0,
	WCM_CALL_RESOLVE_ROUTE,
	WCM_CALL_CONNECT,
	WCM_CALL_ESTABLISH,
	WCM_CALL_ACCEPT,
	WCM_CALL_REJECT,
	WCM_CALL_NOTIFY,
	WCM_CALL_DISCONNECT,
	WCM_CALL_COUNT
};

/* Why a connection failed (on_error). */
enum wcm_conn_error {
	WCM_ERR_NONE = 0,
	WCM_ERR_ADDRESS,     /* ADDR_ERROR or rdma_resolve_addr failed */
	WCM_ERR_ROUTE,	     /* ROUTE_ERROR or rdma_resolve_route failed */
	WCM_ERR_CONNECT,     /* CONNECT_ERROR, a failed call, QP fatal, ... */
	WCM_ERR_UNREACHABLE, /* UNREACHABLE */
	WCM_ERR_TIMEOUT,     /* a step timer fired */
	WCM_ERR_DEVICE,	     /* DEVICE_REMOVAL before establishment */
};

/* What a step tells the counters. */
enum wcm_outcome {
	WCM_OUT_NONE = 0,
	WCM_OUT_ESTABLISHED,	  /* on_established delivered */
	WCM_OUT_RETRIED,	  /* rejected, retrying (step->rej_status) */
	WCM_OUT_DEFERRED,	  /* the request waits for admission */
	WCM_OUT_ADMITTED,	  /* a deferred request is presented */
	WCM_OUT_REJECTED_BY_APP,  /* final: the application rejected */
	WCM_OUT_REJECTED_BY_PEER, /* final: on_rejected delivered */
	WCM_OUT_FAILED,		  /* final: on_error delivered (step->error) */
	WCM_OUT_DISCONNECTED,	  /* final: on_disconnected delivered */
	WCM_OUT_ABORTED,	  /* final: destroyed before established */
	WCM_OUT_DEFER_EXPIRED,	  /* final: deferred too long, REJ sent */
	WCM_OUT_DEFER_LOST,	  /* final: the peer or device went away
				     while the request was deferred */
};

/* Actions, in execution order. */
enum {
	WCM_ACT_DISARM_TIMER = 1u << 0,
	WCM_ACT_HOLD_RECV = 1u << 1,	 /* park this receive */
	WCM_ACT_DELIVER_RECV = 1u << 2,	 /* deliver this receive now */
	WCM_ACT_DROP_RECV = 1u << 3,	 /* return its buffer undelivered */
	WCM_ACT_NOTIFY = 1u << 4,	 /* rdma_notify(id, COMM_EST) */
	WCM_ACT_RESTART = 1u << 5,	 /* fresh rdma_cm_id (and QP later) */
	WCM_ACT_RESOLVE_ADDR = 1u << 6,	 /* rdma_resolve_addr */
	WCM_ACT_RESOLVE_ROUTE = 1u << 7, /* rdma_resolve_route */
	WCM_ACT_CONNECT = 1u << 8,	 /* take a QP, rdma_connect */
	WCM_ACT_ESTABLISH = 1u << 9,	 /* QP to RTR/RTS, rdma_establish */
	WCM_ACT_ACCEPT = 1u << 10,	 /* take a QP, QP to RTS, accept */
	WCM_ACT_REJECT = 1u << 11,	 /* rdma_reject */
	WCM_ACT_DISCONNECT = 1u << 12,	 /* rdma_disconnect: DREQ or DREP */
	WCM_ACT_QP_ERROR = 1u << 13,	 /* QP to ERR: flush its work */
	WCM_ACT_DELIVER_REQUEST = 1u << 14,
	WCM_ACT_DELIVER_ESTABLISHED = 1u << 15,
	WCM_ACT_FLUSH_HELD_RECV = 1u << 16, /* held receives, in order */
	WCM_ACT_DROP_HELD_RECV = 1u << 17,  /* return held buffers */
	WCM_ACT_DELIVER_REJECTED = 1u << 18,
	WCM_ACT_DELIVER_ERROR = 1u << 19,
	WCM_ACT_DELIVER_DISCONNECTED = 1u << 20,
	WCM_ACT_ARM_TIMER = 1u << 21,	  /* step->timer */
	WCM_ACT_RECYCLE_QP = 1u << 22,	  /* QP left timewait: reusable */
	WCM_ACT_QUARANTINE_QP = 1u << 23, /* timewait unknown: quarantine */
	WCM_ACT_DESTROY_ID = 1u << 24,	  /* after acking the current event */
};

/* wcm_conn_sm.flags */
#define WCM_SM_ESTABLISHED  0x01 /* on_established was delivered */
#define WCM_SM_DISCONNECTED 0x02 /* on_disconnected was delivered */
#define WCM_SM_FINAL	    0x04 /* a final outcome was reported */

/* The state of one connection (owned by its shard). */
struct wcm_conn_sm {
	uint8_t state;	  /* enum wcm_conn_state */
	uint8_t side;	  /* enum wcm_side */
	uint8_t timer;	  /* enum wcm_timer armed, or WCM_TIMER_NONE */
	uint8_t flags;	  /* WCM_SM_* */
	uint16_t attempt; /* retries made (RETRY_WAIT entries) */
};

/* A rdma_cm event as the state machine needs it. */
struct wcm_cm_input {
	uint8_t event; /* enum wcm_cm_event */
	uint8_t retry; /* REJECTED: the caller's policy (wcm_retry_stale /
			  wcm_retry_busy with next.attempt) says retry */
	uint8_t defer; /* CONNECT_REQUEST in IDLE: the owner has no room
			  for the handshake now (cm/overload.h) */
	int status;    /* event->status; for REJECTED the REJ reason */
};

/* The result of a transition. */
struct wcm_step {
	struct wcm_conn_sm next; /* commit before performing the actions */
	uint32_t actions;	 /* WCM_ACT_* */
	uint8_t timer;		 /* with WCM_ACT_ARM_TIMER: which */
	uint8_t error;	 /* with WCM_ACT_DELIVER_ERROR: wcm_conn_error */
	uint8_t outcome; /* enum wcm_outcome */
	int rej_status;	 /* with DELIVER_REJECTED or OUT_RETRIED */
};

/**
 * wcm_conn_sm_init() - a new connection in IDLE.
 * @sm: the state to initialise.
 * @side: WCM_SIDE_ACTIVE for wharf_connect, WCM_SIDE_PASSIVE for a
 *        connection created for a CONNECT_REQUEST.
 *
 * Return: 0; -EINVAL if @sm is NULL or @side unknown.
 * Context: any thread; pure, non-blocking.
 */
int wcm_conn_sm_init(struct wcm_conn_sm *sm, enum wcm_side side);

/**
 * wcm_conn_on_cm() - transition on a rdma_cm event.
 * @sm: the current state.
 * @in: the event.
 * @step: the result. On every return it is filled; on error it is a
 *        no-op (next == *@sm, no actions).
 *
 * Return: 0; -EPROTO for an event that makes no sense in a live state
 * (ignored: count it); -EINVAL for NULL arguments, an unknown event or a
 * corrupt @sm. Late events in terminal states return 0 with no actions.
 * Context: the connection's owner shard (or any thread: it is pure);
 * non-blocking.
 */
int wcm_conn_on_cm(const struct wcm_conn_sm *sm, const struct wcm_cm_input *in,
		   struct wcm_step *step);

/**
 * wcm_conn_on_api() - transition on an API call.
 * @sm: the current state.
 * @call: the call.
 * @step: the result; a no-op on error.
 *
 * Return: 0 if the call is valid now (NOTIFY when ESTABLISHED: 0, nothing
 * to do, as rdma_notify's EISCONN); otherwise, with no state change:
 * -EINVAL  wrong side (accept on an active connection, connect on a
 *          passive one), a connection that cannot be reused (connect after
 *          it ended), destroyed, or NULL arguments / unknown call;
 * -EALREADY the same operation is in progress or done (connect while
 *          connecting, accept while accepting, reject after reject,
 *          disconnect while disconnecting);
 * -EISCONN connect / accept / reject when established;
 * -EBUSY   reject while accepting;
 * -ENOTCONN notify / disconnect with no connection (yet or any more),
 *          accept / reject after the request is gone.
 * Context: the connection's owner shard (or any thread: it is pure);
 * non-blocking.
 */
int wcm_conn_on_api(const struct wcm_conn_sm *sm, enum wcm_api call,
		    struct wcm_step *step);

/**
 * wcm_conn_on_qp() - transition on a QP event or a receive completion.
 * @sm: the current state.
 * @ev: the event.
 * @step: the result; a no-op on error.
 *
 * WCM_QP_RECV always yields exactly one of HOLD_RECV, DELIVER_RECV or
 * DROP_RECV, so no buffer is ever lost.
 *
 * Return: 0; -EINVAL for NULL arguments, an unknown event or a corrupt
 * @sm.
 * Context: the connection's owner shard (or any thread: it is pure);
 * non-blocking.
 */
int wcm_conn_on_qp(const struct wcm_conn_sm *sm, enum wcm_qp_event ev,
		   struct wcm_step *step);

/**
 * wcm_conn_on_timer() - transition when a timer fires.
 * @sm: the current state.
 * @timer: the timer that fired; one that is not the armed one (a stale
 *         expiry racing with a disarm) is ignored.
 * @step: the result; a no-op on error.
 *
 * Return: 0; -EINVAL for NULL arguments, an unknown timer or a corrupt
 * @sm.
 * Context: the connection's owner shard (or any thread: it is pure);
 * non-blocking.
 */
int wcm_conn_on_timer(const struct wcm_conn_sm *sm, enum wcm_timer timer,
		      struct wcm_step *step);

/**
 * wcm_conn_on_call() - transition on the result of a call a step asked for.
 * @sm: the current state.
 * @call: the call.
 * @rc: its result, 0 or -errno. For NOTIFY, -EISCONN counts as success;
 *      a NOTIFY failure changes nothing (the CM or the timer decides).
 * @step: the result; a no-op on error.
 *
 * Return: 0; -EINVAL for NULL arguments, an unknown call or a corrupt @sm.
 * A result that does not belong to the current state is ignored (0).
 * Context: the connection's owner shard (or any thread: it is pure);
 * non-blocking.
 */
int wcm_conn_on_call(const struct wcm_conn_sm *sm, enum wcm_call call, int rc,
		     struct wcm_step *step);

/**
 * wcm_cm_event_from_rdma() - map enum rdma_cm_event_type.
 * @rdma_event: the event->event value.
 * @out: the wharf event.
 *
 * Return: 0; -EINVAL if @out is NULL; -ENOTSUP for events a connection
 * does not handle (multicast, ...).
 * Context: any thread; pure, non-blocking.
 */
int wcm_cm_event_from_rdma(int rdma_event, enum wcm_cm_event *out);

/**
 * wcm_notify_event_check() - validate wharf_notify()'s event.
 * @ibv_event: an enum ibv_event_type value.
 *
 * Return: 0 for IBV_EVENT_COMM_EST, the only event rdma_notify(3) takes;
 * -EINVAL otherwise.
 * Context: any thread; pure, non-blocking.
 */
int wcm_notify_event_check(int ibv_event);

/**
 * wcm_conn_state_name() - a state's name, for logs and tests.
 * @state: the state.
 *
 * Return: a static string; "?" for an unknown state.
 * Context: any thread; pure, non-blocking.
 */
const char *wcm_conn_state_name(unsigned int state);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CM_CONN_STATE_H */
