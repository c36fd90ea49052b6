/*
 * nvmf_host/queue_sm.c - a queue's transitions (queue_sm.h).
 */
#include "nvmf_host/queue_sm.h"

#define T(n, a) ((struct wnh_qtrans){.next = (n), .act = (a)})

bool wnh_queue_alive(enum wnh_qstate s)
{
	return s == NHQ_CONNECTING || s == NHQ_FABRICS || s == NHQ_LIVE;
}

struct wnh_qtrans wnh_queue_next(enum wnh_qstate s, enum wnh_qev ev)
{
	if ((unsigned)s >= NHQ_STATE_COUNT)
		return T(s, 0);
	switch (ev) {
	case NHQ_EV_START:
		return s == NHQ_DOWN ? T(NHQ_CONNECTING, NHQ_ACT_CONNECT)
				     : T(s, 0);
	case NHQ_EV_START_FAILED:
		return s == NHQ_CONNECTING ? T(NHQ_DOWN, 0) : T(s, 0);
	case NHQ_EV_ESTABLISHED:
		if (s == NHQ_CONNECTING)
			return T(NHQ_FABRICS, NHQ_ACT_SEND_CONNECT);
		/* Lost or closed while the handshake ran: end it. */
		return s == NHQ_RESETTING || s == NHQ_CLOSING
			       ? T(s, NHQ_ACT_CLOSE_CONN)
			       : T(s, 0);
	case NHQ_EV_CONNECTED:
		return s == NHQ_FABRICS ? T(NHQ_LIVE, NHQ_ACT_RESUME) : T(s, 0);
	case NHQ_EV_LOST:
		return wnh_queue_alive(s)
			       ? T(NHQ_RESETTING,
				   NHQ_ACT_FAIL_INTERNAL | NHQ_ACT_CLOSE_CONN)
			       : T(s, 0);
	case NHQ_EV_GONE:
		return s == NHQ_RESETTING ? T(NHQ_DOWN, NHQ_ACT_RESET_DONE)
					  : T(s, 0);
	case NHQ_EV_CLOSE:
		return T(NHQ_CLOSING, NHQ_ACT_FAIL_ALL | NHQ_ACT_CLOSE_CONN);
	default:
		return T(s, 0);
	}
}

const char *wnh_qstate_name(enum wnh_qstate s)
{
	static const char *const names[NHQ_STATE_COUNT] = {
		"down", "connecting", "fabrics", "live", "resetting", "closing",
	};

	return (unsigned)s < NHQ_STATE_COUNT ? names[s] : "?";
}
