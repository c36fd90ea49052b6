/*
 * qp/credit.h - send queue and RDMA READ credits of one QP (internal).
 *
 * A QP never has more than sq_max work requests posted and not completed
 * (its max_send_wr), and never more than rd_max RDMA READs outstanding (its
 * max_rd_atomic, the negotiated initiator depth).  Every WR wharf posts is
 * signaled, so each completion returns exactly the credits its post took.
 */
#ifndef WHARF_QP_CREDIT_H
#define WHARF_QP_CREDIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wqp_credit {
	uint32_t sq_max;
	uint32_t sq_used;
	uint32_t rd_max;
	uint32_t rd_used;
};

/* Why a WR cannot be posted now. */
enum wqp_credit_verdict {
	WQP_CREDIT_OK = 0,
	WQP_CREDIT_SQ_FULL = 1, /* sq_used == sq_max: wait for a completion */
	WQP_CREDIT_RD_FULL = 2, /* rd_used == rd_max: wait for a READ */
	WQP_CREDIT_RD_NONE = 3, /* rd_max == 0: READs never allowed */
};

/**
 * wqp_credit_init() - no WR outstanding.
 * Return: 0; -EINVAL for NULL or @sq_max 0.
 * Context: any thread; pure.
 */
int wqp_credit_init(struct wqp_credit *c, uint32_t sq_max, uint32_t rd_max);

/**
 * wqp_credit_check() - whether one more WR (a READ when @is_read) fits.
 * Context: any thread; pure.
 */
enum wqp_credit_verdict wqp_credit_check(const struct wqp_credit *c,
					 int is_read);

/**
 * wqp_credit_take() - account one posted WR.
 * Return: 0; or the verdict's reason as -EAGAIN (full) / -EPERM (READs
 * not allowed), nothing changed.
 * Context: any thread; pure.
 */
int wqp_credit_take(struct wqp_credit *c, int is_read);

/**
 * wqp_credit_put() - account one completed WR.
 * Return: 0; -EOVERFLOW when nothing (or no READ) was outstanding, nothing
 * changed (a duplicate completion).
 * Context: any thread; pure.
 */
int wqp_credit_put(struct wqp_credit *c, int is_read);

#ifdef __cplusplus
}
#endif

#endif
