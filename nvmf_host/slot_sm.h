/*
 * nvmf_host/slot_sm.h - a command slot's life as a pure transition
 * table (state x event x whether the queue completes commands now ->
 * next state and what the queue then does).  No I/O: queue.c feeds it,
 * the unit test drives every event in every state.
 *
 *   FREE      on the queue's free list
 *   HELD      taken by a command that is not posted on the current
 *             connection: submitted while the queue reconnects, or held
 *             across a loss; posted when the queue is LIVE again
 *   POSTED    its SEND posted; neither the SEND's completion nor the
 *             response has arrived
 *   SENT      the SEND completed; the response has not arrived
 *   ANSWERED  the response arrived and the callback is owed: it runs when
 *             the SEND completes (a live queue) or when the connection is
 *             gone (a closing one, which never resends an answered command)
 *   ORPHAN    the callback already ran (with an error) while the command
 *             was posted: the slot is not reused before its connection is
 *             gone, so a late RDMA WRITE cannot land in a new command
 * A command both sent and answered on a live queue completes at once and
 * its slot is FREE again.
 */
#ifndef WHARF_NVMF_HOST_SLOT_SM_H
#define WHARF_NVMF_HOST_SLOT_SM_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum wnh_slot_state {
	NHC_FREE = 0,
	NHC_HELD,
	NHC_POSTED,
	NHC_SENT,
	NHC_ANSWERED,
	NHC_ORPHAN,
	NHC_STATE_COUNT,
};

enum wnh_slot_ev {
	NHC_EV_SUBMIT = 0, /* a command takes the slot */
	NHC_EV_CANCEL,	   /* its first post failed: the submit returns an
			    * error and the slot is unused */
	NHC_EV_POST,	   /* its SEND was posted */
	NHC_EV_SEND_DONE,  /* the SEND's completion (success or flush) */
	NHC_EV_RESPONSE,   /* a response with its command id */
	NHC_EV_FAIL,	   /* the queue ends it now: an error, or its answer */
	NHC_EV_GONE,	   /* the connection it was posted on is gone */
	NHC_EV_COUNT,
};

/* What the queue does after a transition (bits). */
enum wnh_slot_act {
	NHC_ACT_CALLBACK = 1u << 0, /* run the callback: with the answer if
				     * the slot holds one, else the error */
	NHC_ACT_PUT = 1u << 1,	    /* back on the free list */
	NHC_ACT_BAD = 1u << 2,	    /* a response for a command that is not
				     * waiting for one: a protocol error */
};

struct wnh_slot_trans {
	enum wnh_slot_state next;
	unsigned act; /* enum wnh_slot_act bits */
};

/*
 * The transition of a slot in @s on @ev.  @live: the queue completes
 * commands as they finish (LIVE, or the Fabrics Connect and its
 * authentication in flight);
 * false while its connection closes (responses are kept for when it is
 * gone, a stray one is ignored).  An event a state does not expect
 * leaves it as it is, with no action (BAD for a response).
 */
struct wnh_slot_trans wnh_slot_next(enum wnh_slot_state s, enum wnh_slot_ev ev,
				    bool live);

/* Whether a slot in @s, after @ev, holds the controller's answer. */
bool wnh_slot_answered(enum wnh_slot_state s, enum wnh_slot_ev ev);

const char *wnh_slot_state_name(enum wnh_slot_state s);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_NVMF_HOST_SLOT_SM_H */
