/*
 * nvmf_host/ctrl_sm.h - the controller's recovery state machine as
 * pure functions: a transition table (state x event -> next state and
 * the actions the admin shard then carries out) and the reconnect
 * backoff.  No I/O, no clock: recover.c drives it at run time, the unit
 * test drives every event in every state.
 *
 *   NEW         the first bring-up (wharf_nvmf_host_connect() waits):
 *               a failure ends the connect, nothing reconnects
 *   LIVE        every queue connected
 *   RESETTING   a queue or the keep-alive failed: every queue is being
 *               closed, user commands held
 *   CONNECTING  every queue closed; waiting for the reconnect delay, or
 *               an attempt (the whole bring-up again) in progress
 *   DELETING    the application disconnects
 *   DEAD        ctrl_loss_tmo passed: held and new commands fail
 */
#ifndef WHARF_INITIATORS_NVMF_CTRL_SM_H
#define WHARF_INITIATORS_NVMF_CTRL_SM_H

#include <stdint.h>

#include <wharf/nvmf_host.h>

#ifdef __cplusplus
extern "C" {
#endif

enum wnh_ev {
	WNH_EV_UP = 0,	  /* the bring-up (or an attempt) finished */
	WNH_EV_LOSS,	  /* a queue, a bring-up step or keep-alive failed */
	WNH_EV_DOWN,	  /* every queue asked to close has closed */
	WNH_EV_RETRY,	  /* the reconnect delay passed */
	WNH_EV_LOSS_TMO,  /* ctrl_loss_tmo passed since the loss */
	WNH_EV_FAST_FAIL, /* fast_io_fail_tmo passed since the loss */
	WNH_EV_DELETE,	  /* the application disconnects */
	WNH_EV_COUNT,
};

/* What the admin shard does after a transition (bits). */
enum wnh_act {
	WNH_ACT_CONNECTED = 1u << 0, /* NEW -> LIVE: wake the connect call */
	WNH_ACT_TEARDOWN = 1u << 1,  /* stop keep-alive, close every queue */
	WNH_ACT_ARM_LOSS = 1u << 2,  /* arm ctrl_loss_tmo, fast_io_fail_tmo */
	WNH_ACT_ARM_RETRY = 1u << 3, /* arm the reconnect delay (backoff) */
	WNH_ACT_ATTEMPT = 1u << 4,   /* start the bring-up again */
	WNH_ACT_RESUME = 1u << 5,    /* LIVE again: cancel the loss timers */
	WNH_ACT_FAIL_HELD = 1u << 6, /* held and new commands: -ENODEV */
	WNH_ACT_FAST_FAIL = 1u << 7, /* held and new commands: -ENOLINK */
	WNH_ACT_STOP = 1u << 8,	     /* cancel every recovery timer */
};

struct wnh_trans {
	enum wharf_nvmf_host_state next;
	unsigned act; /* enum wnh_act bits; 0 = the event is ignored */
};

/* The transition of @s on @ev.  Unknown states or events: no change. */
struct wnh_trans wnh_ctrl_next(enum wharf_nvmf_host_state s, enum wnh_ev ev);

/* The delay before reconnect attempt @failed + 1 after a loss (@failed
 * attempts have failed since): @base_ms * 2^@failed, capped at
 * WNH_BACKOFF_CAP * @base_ms; @base_ms 0 counts as 1. */
#define WNH_BACKOFF_CAP 8u
uint64_t wnh_backoff_ms(uint32_t base_ms, unsigned failed);

const char *wnh_ev_name(enum wnh_ev ev);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NVMF_CTRL_SM_H */
