/* qp/quarantine.c - pooled QP life and quarantine; see quarantine.h. */
#include <errno.h>

#include "qp/quarantine.h"

static int by_fate(enum wharf_qp_fate fate, bool poolable, enum wqp_life *state,
		   enum wqp_life_act *act)
{
	switch (fate) {
	case WHARF_QP_FATE_UNUSED:
		*state = poolable ? WQP_LIFE_FREE : WQP_LIFE_DEAD;
		*act = poolable ? WQP_ACT_POOL : WQP_ACT_DESTROY;
		return 0;
	case WHARF_QP_FATE_TIMEWAIT_EXIT:
		*state = poolable ? WQP_LIFE_QUARANTINE : WQP_LIFE_DEAD;
		*act = poolable ? WQP_ACT_QUARANTINE : WQP_ACT_DESTROY;
		return 0;
	case WHARF_QP_FATE_UNKNOWN:
		*state = WQP_LIFE_DEAD;
		*act = WQP_ACT_DESTROY;
		return 0;
	}
	return -EINVAL;
}

static bool fate_ok(enum wharf_qp_fate fate)
{
	return fate == WHARF_QP_FATE_UNUSED ||
	       fate == WHARF_QP_FATE_TIMEWAIT_EXIT ||
	       fate == WHARF_QP_FATE_UNKNOWN;
}

int wqp_life_step(enum wqp_life *state, enum wqp_life_ev ev,
		  enum wharf_qp_fate fate, bool poolable,
		  enum wqp_life_act *act)
{
	enum wqp_life s = *state;

	*act = WQP_ACT_NONE;
	switch (ev) {
	case WQP_EV_TAKE:
		if (s != WQP_LIFE_FREE)
			return -EINVAL;
		*state = WQP_LIFE_TAKEN;
		return 0;
	case WQP_EV_LEAVE_RESET:
		if (s == WQP_LIFE_LIVE)
			return 0;
		if (s != WQP_LIFE_TAKEN)
			return -EINVAL;
		*state = WQP_LIFE_LIVE;
		return 0;
	case WQP_EV_CLOSE:
		if (s == WQP_LIFE_TAKEN || s == WQP_LIFE_LIVE) {
			*state = WQP_LIFE_CLOSING;
			return 0;
		}
		if (s == WQP_LIFE_CLOSING || s == WQP_LIFE_CLOSING_RELEASED ||
		    s == WQP_LIFE_CLOSED)
			return 0;
		return -EINVAL;
	case WQP_EV_DRAINED:
		if (s == WQP_LIFE_CLOSING) {
			*state = WQP_LIFE_CLOSED;
			return 0;
		}
		if (s == WQP_LIFE_CLOSING_RELEASED) {
			if (!fate_ok(fate))
				return -EINVAL;
			return by_fate(fate, poolable, state, act);
		}
		return -EINVAL;
	case WQP_EV_RELEASE:
		if (!fate_ok(fate))
			return -EINVAL;
		if (s == WQP_LIFE_LIVE)
			return -EBUSY;
		if (s == WQP_LIFE_CLOSING) {
			*state = WQP_LIFE_CLOSING_RELEASED;
			return 0;
		}
		if (s == WQP_LIFE_TAKEN || s == WQP_LIFE_CLOSED)
			return by_fate(fate, poolable, state, act);
		return -EINVAL;
	case WQP_EV_EXPIRE:
		if (s != WQP_LIFE_QUARANTINE)
			return -EINVAL;
		*state = WQP_LIFE_FREE;
		*act = WQP_ACT_POOL;
		return 0;
	}
	return -EINVAL;
}

uint64_t wqp_quarantine_deadline(uint64_t released_ns, uint32_t quarantine_ms)
{
	uint64_t d = (uint64_t)quarantine_ms * 1000000u;

	if (released_ns > UINT64_MAX - d)
		return UINT64_MAX;
	return released_ns + d;
}

uint32_t wqp_pool_refill(uint32_t nfree, uint32_t size, uint32_t low_water,
			 uint32_t batch, bool *refilling)
{
	uint32_t want;

	if (nfree >= size) {
		*refilling = false;
		return 0;
	}
	if (!*refilling && nfree >= low_water)
		return 0;
	want = size - nfree;
	if (want > batch)
		want = batch;
	/* Until this step fills it. */
	*refilling = nfree + want < size;
	return want;
}
