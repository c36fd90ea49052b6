/*
 * nvmf_host/queue_sm.h - a queue's life as a pure transition table
 * (state x event -> next state and what the owner shard then does).
 * No I/O: queue.c feeds it, the unit test drives every event in every
 * state.
 *
 *   DOWN        no connection; held user commands wait for the next
 *               attempt (START)
 *   CONNECTING  wharf_connect() issued, the CM handshake under way
 *   FABRICS     established: the slab is registered and the Fabrics
 *               Connect is in flight, then the DH-HMAC-CHAP
 *               transaction if the Connect asked for one (the only
 *               commands the queue takes)
 *   LIVE        the Connect (and authentication) succeeded: commands
 *               flow
 *   RESETTING   lost (a timeout, a bad response, a transport error, a
 *               refusal) or closed by the controller's recovery: internal
 *               commands completed with an error, user commands held,
 *               the connection closing; DOWN once it is gone
 *   CLOSING     the application disconnects: every command completed,
 *               the connection closing; final
 */
#ifndef WHARF_NVMF_HOST_QUEUE_SM_H
#define WHARF_NVMF_HOST_QUEUE_SM_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum wnh_qstate {
	NHQ_DOWN = 0,
	NHQ_CONNECTING,
	NHQ_FABRICS,
	NHQ_LIVE,
	NHQ_RESETTING,
	NHQ_CLOSING,
	NHQ_STATE_COUNT,
};

enum wnh_qev {
	NHQ_EV_START = 0,    /* the recovery (or bring-up) starts the queue */
	NHQ_EV_START_FAILED, /* wharf_connect() refused at once */
	NHQ_EV_ESTABLISHED,  /* on_established */
	NHQ_EV_CONNECTED,    /* the Fabrics Connect succeeded */
	NHQ_EV_LOST,	     /* a loss, or the recovery resets the queue */
	NHQ_EV_GONE,	     /* its connection is gone (every WR completed) */
	NHQ_EV_CLOSE,	     /* the application disconnects */
	NHQ_EV_COUNT,
};

/* What the owner shard does after a transition (bits). */
enum wnh_qact {
	NHQ_ACT_CONNECT = 1u << 0,	 /* wharf_connect() */
	NHQ_ACT_SEND_CONNECT = 1u << 1,	 /* register, send the Connect */
	NHQ_ACT_RESUME = 1u << 2,	 /* admin: bring-up goes on; I/O:
					   * post the held commands */
	NHQ_ACT_FAIL_INTERNAL = 1u << 3, /* complete internal commands with
					   * an error (user ones are held) */
	NHQ_ACT_FAIL_ALL = 1u << 4,	 /* complete every command */
	NHQ_ACT_CLOSE_CONN = 1u << 5,	 /* disconnect / destroy it */
	NHQ_ACT_RESET_DONE = 1u << 6,	 /* deregister, settle the slots */
};

struct wnh_qtrans {
	enum wnh_qstate next;
	unsigned act; /* enum wnh_qact bits; 0 and next == state: ignored */
};

/* The transition of a queue in @s on @ev.  Unknown states or events: no
 * change, no action. */
struct wnh_qtrans wnh_queue_next(enum wnh_qstate s, enum wnh_qev ev);

/* Whether a queue in @s completes commands as they finish (the slot
 * table's `live`): CONNECTING, FABRICS, LIVE. */
bool wnh_queue_alive(enum wnh_qstate s);

const char *wnh_qstate_name(enum wnh_qstate s);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_NVMF_HOST_QUEUE_SM_H */
