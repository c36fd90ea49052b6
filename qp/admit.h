/*
 * qp/admit.h - receive budget admission of one res (internal).
 *
 * The SRQ holds srq_depth buffers.  Each admitted QP claims credits: the
 * number of messages its peer may have in flight toward it (what the cm
 * layer advertises, e.g. NVMe-oF's crqsize).  A reserve is never handed
 * out, so connect and control messages still find a buffer when every
 * admitted peer uses all its credits and the application holds them (a
 * target without a reserve cannot even connect then).  A new QP is
 * admitted while
 *
 *     admitted + credits <= depth - reserve.
 *
 * The SRQ may grow (res option srq_max): depth is what it holds now, max
 * what it may hold.  wqp_admit_shortfall() tells how many buffers it must
 * gain for a QP to fit, and wqp_admit_grow() records what it gained.
 */
#ifndef WHARF_QP_ADMIT_H
#define WHARF_QP_ADMIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wqp_admit {
	uint32_t depth;	   /* SRQ buffers now */
	uint32_t max;	   /* SRQ buffers at most (>= depth) */
	uint32_t reserve;  /* kept for connect/control traffic */
	uint32_t admitted; /* credits claimed */
};

/**
 * wqp_admit_default_reserve() - srq_depth / 16, at least 1 (0 for a
 * depth below 2).
 * Context: any thread; pure.
 */
uint32_t wqp_admit_default_reserve(uint32_t depth);

/**
 * wqp_admit_init() - nothing admitted, max = @depth (no growth).
 * Return: 0; -EINVAL for NULL, depth 0 or @reserve >= @depth.
 * Context: any thread; pure.
 */
int wqp_admit_init(struct wqp_admit *a, uint32_t depth, uint32_t reserve);

/**
 * wqp_admit_check() - whether @credits more fit.
 * Return: 0; -EBUSY when not; -EINVAL for @credits 0.
 * Context: any thread; pure.
 */
int wqp_admit_check(const struct wqp_admit *a, uint32_t credits);

/**
 * wqp_admit_take() - claim @credits (after the same check).
 * Return: as wqp_admit_check(); nothing changes on error.
 * Context: any thread; pure.
 */
int wqp_admit_take(struct wqp_admit *a, uint32_t credits);

/**
 * wqp_admit_put() - give back @credits.
 * Return: 0; -EOVERFLOW when fewer were admitted (nothing changes).
 * Context: any thread; pure.
 */
int wqp_admit_put(struct wqp_admit *a, uint32_t credits);

/**
 * wqp_admit_set_max() - let the SRQ grow to @max buffers.
 * Return: 0; -EINVAL when @max is below the current depth.
 * Context: any thread; pure.
 */
int wqp_admit_set_max(struct wqp_admit *a, uint32_t max);

/**
 * wqp_admit_shortfall() - buffers the SRQ must gain before @credits more
 * fit: 0 when they fit now, UINT32_MAX when they would not fit even at
 * max (or @credits is 0).
 * Context: any thread; pure.
 */
uint32_t wqp_admit_shortfall(const struct wqp_admit *a, uint32_t credits);

/**
 * wqp_admit_grow() - the SRQ gained @n buffers.
 * Return: 0; -EINVAL when that passes max (nothing changes).
 * Context: any thread; pure.
 */
int wqp_admit_grow(struct wqp_admit *a, uint32_t n);

/**
 * wqp_admit_capacity() - how many QPs of @credits each the budget admits
 * in total (0 for @credits 0).
 * Context: any thread; pure.
 */
uint32_t wqp_admit_capacity(const struct wqp_admit *a, uint32_t credits);

#ifdef __cplusplus
}
#endif

#endif
