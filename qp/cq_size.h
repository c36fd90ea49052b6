/*
 * qp/cq_size.h - completion queue budget of one res (internal).
 *
 * Every WR that can produce a completion holds a CQ entry from the moment
 * it could be posted until its completion is polled: the SRQ's depth, and
 * each active QP's send queue depth plus its private receive queue depth.
 * A QP reserves its share before it leaves RESET and gives it back once
 * drained, so the CQ can never overrun.  When a reservation does not fit,
 * the CQ grows (at least doubling, capped at the maximum) or the
 * reservation is refused with -ENOSPC.  Sends are spread over several CQs
 * (wqp_cq_pick()): a shard with many QPs outgrows one device-sized CQ.
 */
#ifndef WHARF_QP_CQ_SIZE_H
#define WHARF_QP_CQ_SIZE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wqp_cq_budget {
	uint32_t size;	   /* entries the CQ has now */
	uint32_t reserved; /* entries claimed */
	uint32_t max;	   /* growth limit */
};

/**
 * wqp_cq_initial() - first CQ size: @srq_depth plus @nqps QPs of @per_qp
 * entries, at least 16, at most @max; @want (non-zero) overrides the sum
 * but not the bounds.
 * Context: any thread; pure.
 */
uint32_t wqp_cq_initial(uint32_t want, uint32_t srq_depth, uint32_t nqps,
			uint32_t per_qp, uint32_t max);

/**
 * wqp_cq_plan() - what reserving @need more entries takes.
 * @new_size: receives the size the CQ must be resized to (at least the
 * reservation, at least twice the current size, at most @b->max), or the
 * current size when it fits.
 * Return: 0 when it fits now; 1 when the CQ must grow to *@new_size first;
 * -ENOSPC when even @b->max cannot hold it.
 * Context: any thread; pure.
 */
int wqp_cq_plan(const struct wqp_cq_budget *b, uint32_t need,
		uint32_t *new_size);

/**
 * wqp_cq_reserve() - claim @need entries (after a successful plan and, if
 * asked for, resize: @b->size is then the size the device reports).
 * Return: 0; -ENOSPC when they do not fit (nothing changes).
 * Context: any thread; pure.
 */
int wqp_cq_reserve(struct wqp_cq_budget *b, uint32_t need);

/**
 * wqp_cq_release() - give back @n entries.
 * Return: 0; -EOVERFLOW when fewer were reserved (nothing changes).
 * Context: any thread; pure.
 */
int wqp_cq_release(struct wqp_cq_budget *b, uint32_t n);

/* wqp_cq_pick() found no room: a new CQ is needed. */
#define WQP_CQ_PICK_NEW (-1)

/**
 * wqp_cq_pick() - which of @n send CQs (budgets @b[0..n-1]) takes a QP of
 * @need entries: the first one it fits in as it is, else the first one
 * that can grow to hold it (growing beats another CQ to poll), else a new
 * one while fewer than @max_cqs exist.
 * Return: the index; WQP_CQ_PICK_NEW when a new CQ must be created;
 * -ENOSPC when @max_cqs CQs exist and none can hold it, or when @need is
 * more than one CQ can ever hold (@cq_max).
 * Context: any thread; pure.
 */
int wqp_cq_pick(const struct wqp_cq_budget *b, unsigned n, unsigned max_cqs,
		uint32_t cq_max, uint32_t need);

#ifdef __cplusplus
}
#endif

#endif
