/*
 * cm/overload.c - the owner shard's admission decisions (see overload.h).
 */
#include "cm/overload.h"

#include <errno.h>
#include <stddef.h>

bool wcm_overload_room(const struct wcm_room *r)
{
	return r && !r->closing && r->running < r->cap && r->budget_ok;
}

static enum wcm_refusal missing(const struct wcm_room *r)
{
	if (r->running >= r->cap)
		return WCM_REFUSE_HANDSHAKES;
	if (!r->budget_ok)
		return WCM_REFUSE_RECV_BUDGET;
	return WCM_REFUSE_NONE;
}

int wcm_overload_decide(const struct wcm_room *r, struct wcm_decision *out)
{
	if (!r || !out || !r->cap || !r->defer_max ||
	    (r->policy != WCM_OVERLOAD_DEFER &&
	     r->policy != WCM_OVERLOAD_REJECT_BUSY))
		return -EINVAL;
	out->why = WCM_REFUSE_NONE;
	if (r->closing) {
		out->verdict = WCM_REFUSE;
		out->why = WCM_REFUSE_DRAINING;
		return 0;
	}
	out->why = missing(r);
	if (r->policy == WCM_OVERLOAD_REJECT_BUSY) {
		out->verdict = out->why ? WCM_REFUSE : WCM_TAKE;
		return 0;
	}
	if (!out->why && !r->queued) {
		out->verdict = WCM_TAKE;
		return 0;
	}
	if (r->listener_deferred >= r->defer_max) {
		out->verdict = WCM_REFUSE;
		out->why = WCM_REFUSE_DEFER_FULL;
		return 0;
	}
	out->verdict = WCM_DEFER;
	return 0;
}

enum wcm_payload wcm_refusal_payload(enum wcm_overload policy,
				     bool has_callback, enum wcm_refusal why)
{
	if (why == WCM_REFUSE_NONE)
		return WCM_PAYLOAD_NONE;
	if (has_callback)
		return WCM_PAYLOAD_CALLBACK;
	if (policy == WCM_OVERLOAD_REJECT_BUSY &&
	    (why == WCM_REFUSE_HANDSHAKES || why == WCM_REFUSE_RECV_BUDGET ||
	     why == WCM_REFUSE_DRAINING))
		return WCM_PAYLOAD_BUSY;
	return WCM_PAYLOAD_NONE;
}
