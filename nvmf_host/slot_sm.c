/*
 * nvmf_host/slot_sm.c - a command slot's transitions (slot_sm.h).
 */
#include "nvmf_host/slot_sm.h"

#define T(n, a) ((struct wnh_slot_trans){.next = (n), .act = (a)})

/* A response a state does not wait for: a protocol error on a live
 * queue, ignored on a closing one. */
static struct wnh_slot_trans stray(enum wnh_slot_state s, bool live)
{
	return T(s, live ? NHC_ACT_BAD : 0);
}

struct wnh_slot_trans wnh_slot_next(enum wnh_slot_state s, enum wnh_slot_ev ev,
				    bool live)
{
	switch (s) {
	case NHC_FREE:
		if (ev == NHC_EV_SUBMIT)
			return T(NHC_HELD, 0);
		if (ev == NHC_EV_RESPONSE)
			return stray(s, live);
		break;
	case NHC_HELD:
		switch (ev) {
		case NHC_EV_CANCEL:
			return T(NHC_FREE, NHC_ACT_PUT);
		case NHC_EV_POST:
			return T(NHC_POSTED, 0);
		case NHC_EV_FAIL:
			return T(NHC_FREE, NHC_ACT_CALLBACK | NHC_ACT_PUT);
		case NHC_EV_RESPONSE:
			return stray(s, live);
		default:
			break;
		}
		break;
	case NHC_POSTED:
		switch (ev) {
		case NHC_EV_SEND_DONE:
			return T(NHC_SENT, 0);
		case NHC_EV_RESPONSE:
			return T(NHC_ANSWERED, 0);
		case NHC_EV_FAIL:
			return T(NHC_ORPHAN, NHC_ACT_CALLBACK);
		case NHC_EV_GONE:
			return T(NHC_HELD, 0);
		default:
			break;
		}
		break;
	case NHC_SENT:
		switch (ev) {
		case NHC_EV_RESPONSE:
			return live ? T(NHC_FREE,
					NHC_ACT_CALLBACK | NHC_ACT_PUT)
				    : T(NHC_ANSWERED, 0);
		case NHC_EV_FAIL:
			return T(NHC_ORPHAN, NHC_ACT_CALLBACK);
		case NHC_EV_GONE:
			return T(NHC_HELD, 0);
		default:
			break;
		}
		break;
	case NHC_ANSWERED:
		switch (ev) {
		case NHC_EV_SEND_DONE:
			return live ? T(NHC_FREE,
					NHC_ACT_CALLBACK | NHC_ACT_PUT)
				    : T(s, 0);
		case NHC_EV_FAIL:
			return T(NHC_ORPHAN, NHC_ACT_CALLBACK);
		case NHC_EV_GONE:
			return T(NHC_FREE, NHC_ACT_CALLBACK | NHC_ACT_PUT);
		case NHC_EV_RESPONSE:
			return stray(s, live);
		default:
			break;
		}
		break;
	case NHC_ORPHAN:
		if (ev == NHC_EV_GONE)
			return T(NHC_FREE, NHC_ACT_PUT);
		if (ev == NHC_EV_RESPONSE)
			return stray(s, live);
		break;
	default:
		break;
	}
	return T(s, 0);
}

bool wnh_slot_answered(enum wnh_slot_state s, enum wnh_slot_ev ev)
{
	return s == NHC_ANSWERED ||
	       (ev == NHC_EV_RESPONSE && (s == NHC_POSTED || s == NHC_SENT));
}

const char *wnh_slot_state_name(enum wnh_slot_state s)
{
	static const char *const names[NHC_STATE_COUNT] = {
		"free", "held", "posted", "sent", "answered", "orphan",
	};

	return (unsigned)s < NHC_STATE_COUNT ? names[s] : "?";
}
