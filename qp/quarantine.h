/*
 * qp/quarantine.h - the life of a pooled QP and the quarantine rule
 * (internal; the rule itself is explained in <wharf/qp.h>).
 *
 *   FREE --take--> TAKEN --leave RESET--> LIVE --close--> CLOSING
 *   TAKEN --close--> CLOSING                 (nothing to drain)
 *   CLOSING --drained--> CLOSED --release(fate)--> by fate
 *   CLOSING --release(fate)--> CLOSING_RELEASED --drained--> by fate
 *   TAKEN --release(fate)--> by fate          (never left RESET)
 *   QUARANTINE --expire--> FREE
 *
 * "By fate": UNUSED -> FREE (reset now), TIMEWAIT_EXIT -> QUARANTINE (free
 * after quarantine_ms), UNKNOWN -> DEAD (destroy); a QP that cannot be
 * pooled (private receive queue, other shape, failed modify, no pool) goes
 * DEAD whatever the fate.  LIVE cannot be released without a close.
 */
#ifndef WHARF_QP_QUARANTINE_H
#define WHARF_QP_QUARANTINE_H

#include <stdbool.h>
#include <stdint.h>

#include "qp/qp.h"

#ifdef __cplusplus
extern "C" {
#endif

enum wqp_life {
	WQP_LIFE_FREE = 0,
	WQP_LIFE_TAKEN,
	WQP_LIFE_LIVE,
	WQP_LIFE_CLOSING,
	WQP_LIFE_CLOSING_RELEASED,
	WQP_LIFE_CLOSED,
	WQP_LIFE_QUARANTINE,
	WQP_LIFE_DEAD,
};

enum wqp_life_ev {
	WQP_EV_TAKE = 0,
	WQP_EV_LEAVE_RESET,
	WQP_EV_CLOSE,
	WQP_EV_DRAINED,
	WQP_EV_RELEASE,
	WQP_EV_EXPIRE,
};

/* What the runtime must do after a step. */
enum wqp_life_act {
	WQP_ACT_NONE = 0,
	WQP_ACT_POOL,	    /* move to RESET, append to the free list */
	WQP_ACT_QUARANTINE, /* append to the quarantine list, with deadline */
	WQP_ACT_DESTROY,    /* ibv_destroy_qp and free */
};

/**
 * wqp_life_step() - apply @ev to @state.
 * @fate: the release's fate (WQP_EV_RELEASE), or the fate stored at
 * release (WQP_EV_DRAINED from CLOSING_RELEASED); ignored otherwise.
 * @poolable: whether the QP may go back to the pool at all.
 * @act: receives the action.
 * Return: 0; -EBUSY for a release of a LIVE QP; -EINVAL for any other
 * event that is not allowed in @state or a bad @fate (nothing changes).
 * Closing a QP that is already closing or closed is a no-op.
 * Context: any thread; pure.
 */
int wqp_life_step(enum wqp_life *state, enum wqp_life_ev ev,
		  enum wharf_qp_fate fate, bool poolable,
		  enum wqp_life_act *act);

/**
 * wqp_quarantine_deadline() - when a QP released at @released_ns
 * (CLOSED/TIMEWAIT_EXIT, or drained later) may be reused.
 * Context: any thread; pure; saturates.
 */
uint64_t wqp_quarantine_deadline(uint64_t released_ns, uint32_t quarantine_ms);

/**
 * wqp_pool_refill() - how many QPs to create in one background step.
 * @nfree: QPs free now; @size: target; @low_water: refill starts below it;
 * @batch: most per step; @refilling: in/out hysteresis flag (set when
 * refilling started, cleared once @size is reached).
 * Context: any thread; pure.
 */
uint32_t wqp_pool_refill(uint32_t nfree, uint32_t size, uint32_t low_water,
			 uint32_t batch, bool *refilling);

#ifdef __cplusplus
}
#endif

#endif
