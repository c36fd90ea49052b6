/*
 * qp/wrq.h - the FIFO of work requests waiting to be posted on one QP
 * (internal).
 *
 * Posts append to the queue; the shard's flush takes a batch from the head
 * in order, as far as the QP's credits allow, and chains it into one
 * ibv_post_send().  A WR that does not fit (send queue full, READ depth
 * reached) stops the batch: nothing behind it overtakes it, as in the
 * HCA's own send queue.
 */
#ifndef WHARF_QP_WRQ_H
#define WHARF_QP_WRQ_H

#include <stddef.h>
#include <stdint.h>

#include "qp/credit.h"
#include "qp/qp.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wqp_wrq {
	struct wharf_wr *head;
	struct wharf_wr *tail;
	uint32_t len;
};

/** wqp_wrq_init() - an empty queue.  Context: any thread; pure. */
void wqp_wrq_init(struct wqp_wrq *q);

/** wqp_wrq_push() - append @wr (its next is overwritten). */
void wqp_wrq_push(struct wqp_wrq *q, struct wharf_wr *wr);

/** wqp_wrq_pop() - remove and return the head, or NULL when empty. */
struct wharf_wr *wqp_wrq_pop(struct wqp_wrq *q);

/**
 * wqp_wrq_take() - remove up to @max WRs from the head, in order, while
 * @c admits them, taking their credits.
 * @out: receives the WRs in posting order.
 * @why: receives why the batch stopped: WQP_CREDIT_OK when the queue
 * emptied or @max was reached, else the head's verdict.
 * Return: the number of WRs taken.
 * Context: any thread; pure.
 */
uint32_t wqp_wrq_take(struct wqp_wrq *q, struct wqp_credit *c, uint32_t max,
		      struct wharf_wr **out, enum wqp_credit_verdict *why);

/**
 * wqp_wrq_unpop() - put WRs that could not be posted back at the head,
 * giving back their credits (ibv_post_send() refused them).
 * @wrs: @n WRs in posting order, as taken.
 * Context: any thread; pure.
 */
void wqp_wrq_unpop(struct wqp_wrq *q, struct wqp_credit *c,
		   struct wharf_wr **wrs, uint32_t n);

#ifdef __cplusplus
}
#endif

#endif
