/*
 * cm/overload.h - what the owner shard does with a connection request it
 * may have no room for (pure decisions; the runtime is cm/defer.c).
 *
 * Room is two resources of the owner shard: passive handshakes running
 * (the handshake cap) and the SRQ receive budget the new QP would claim.
 * A request that finds room, and no earlier request still waiting on the
 * shard, is taken now.  Otherwise the listener's policy decides:
 *  - DEFER: the request waits, unanswered, in the shard's FIFO (the kernel
 *    CM has already sent the peer an MRA, which stretches the peer's wait
 *    for our REP far beyond the wait the FIFO allows; see cm.h), unless
 *    the listener already has defer_max requests waiting: then it is
 *    refused (DEFER_FULL).
 *  - REJECT_BUSY: refused at once (HANDSHAKES or RECV_BUDGET), for fleets
 *    of wharf clients that retry after the busy REJ's hint; such requests
 *    do not queue behind other listeners' deferred ones.
 * A closing cm refuses everything (DRAINING).  The head of the FIFO is
 * admitted as soon as there is room, so requests leave in arrival order.
 *
 * This is the only place that decides: the listener's shard hands every
 * request it could read over to its owner (it refuses only what it
 * cannot hand over: no device, no memory, a cm closing), and every
 * refusal's private data is chosen by wcm_refusal_payload() below.
 */
#ifndef WHARF_CM_OVERLOAD_H
#define WHARF_CM_OVERLOAD_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A listener's overload policy (enum wharf_overload in cm.h). */
enum wcm_overload {
	WCM_OVERLOAD_DEFER = 0,
	WCM_OVERLOAD_REJECT_BUSY = 1,
};

/* Why the library refuses a request itself (enum wharf_refusal in cm.h;
 * 1..3 are also the busy REJ's reasons, cm/rej_busy.h). */
enum wcm_refusal {
	WCM_REFUSE_NONE = 0,
	WCM_REFUSE_HANDSHAKES = 1,
	WCM_REFUSE_RECV_BUDGET = 2,
	WCM_REFUSE_DRAINING = 3,
	WCM_REFUSE_DEFER_TIMEOUT = 4,
	WCM_REFUSE_DEFER_FULL = 5,
	WCM_REFUSE_RESOURCES = 6,
};

/* What the owner shard sees when a request arrives. */
struct wcm_room {
	bool closing;		    /* the cm or the shard is shutting down */
	unsigned running;	    /* passive handshakes the shard runs */
	unsigned cap;		    /* handshake_cap (>= 1) */
	bool budget_ok;		    /* the receive budget admits the QP */
	unsigned queued;	    /* requests deferred on the shard */
	uint32_t listener_deferred; /* requests of this listener deferred */
	uint32_t defer_max;	    /* the listener's bound (>= 1) */
	enum wcm_overload policy;
};

enum wcm_verdict {
	WCM_TAKE = 0,	/* present the request now */
	WCM_DEFER = 1,	/* queue it: @why says what it waits for */
	WCM_REFUSE = 2, /* REJ: @why */
};

struct wcm_decision {
	enum wcm_verdict verdict;
	enum wcm_refusal why; /* DEFER: what is missing (NONE: only order) */
};

/**
 * wcm_overload_decide() - the fate of a newly arrived request.
 * Return: 0; -EINVAL for NULL arguments, cap or defer_max 0, or an unknown
 * policy.
 * Context: any thread; pure.
 */
int wcm_overload_decide(const struct wcm_room *room, struct wcm_decision *out);

/* Whose private data a refusal carries. */
enum wcm_payload {
	WCM_PAYLOAD_NONE = 0,	  /* a plain consumer-defined REJ */
	WCM_PAYLOAD_CALLBACK = 1, /* the listener's refusal callback's */
	WCM_PAYLOAD_BUSY = 2,	  /* wharf's busy payload (cm/rej_busy.h) */
};

/**
 * wcm_refusal_payload() - the private data of a refusal for @why by a
 * listener of @policy: its refusal callback's when it has one (the
 * callback speaks the peer's protocol); else, for a REJECT_BUSY listener
 * (a fleet of wharf clients) and a reason the busy payload has a code
 * for (HANDSHAKES, RECV_BUDGET, DRAINING), the busy payload; else none,
 * which every standard peer reads as a plain REJ.  NONE for WCM_REFUSE_NONE.
 * Context: any thread; pure.
 */
enum wcm_payload wcm_refusal_payload(enum wcm_overload policy,
				     bool has_callback, enum wcm_refusal why);

/**
 * wcm_overload_room() - whether the head of the FIFO may be presented now:
 * not closing, running < cap and the budget admits it (queued, the
 * listener fields and the policy are not read).
 * Context: any thread; pure.  NULL: false.
 */
bool wcm_overload_room(const struct wcm_room *room);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CM_OVERLOAD_H */
