/* qp/wrq.c - per-QP queue of WRs waiting for credits; see wrq.h. */
#include "qp/wrq.h"

void wqp_wrq_init(struct wqp_wrq *q)
{
	q->head = NULL;
	q->tail = NULL;
	q->len = 0;
}

void wqp_wrq_push(struct wqp_wrq *q, struct wharf_wr *wr)
{
	wr->next = NULL;
	if (q->tail)
		q->tail->next = wr;
	else
		q->head = wr;
	q->tail = wr;
	q->len++;
}

struct wharf_wr *wqp_wrq_pop(struct wqp_wrq *q)
{
	struct wharf_wr *wr = q->head;

	if (!wr)
		return NULL;
	q->head = wr->next;
	if (!q->head)
		q->tail = NULL;
	wr->next = NULL;
	q->len--;
	return wr;
}

uint32_t wqp_wrq_take(struct wqp_wrq *q, struct wqp_credit *c, uint32_t max,
		      struct wharf_wr **out, enum wqp_credit_verdict *why)
{
	uint32_t n = 0;

	*why = WQP_CREDIT_OK;
	while (q->head && n < max) {
		int is_read = q->head->op == WHARF_WR_RDMA_READ;
		enum wqp_credit_verdict v = wqp_credit_check(c, is_read);

		if (v != WQP_CREDIT_OK) {
			*why = v;
			break;
		}
		wqp_credit_take(c, is_read);
		out[n++] = wqp_wrq_pop(q);
	}
	return n;
}

void wqp_wrq_unpop(struct wqp_wrq *q, struct wqp_credit *c,
		   struct wharf_wr **wrs, uint32_t n)
{
	while (n > 0) {
		struct wharf_wr *wr = wrs[--n];

		wqp_credit_put(c, wr->op == WHARF_WR_RDMA_READ);
		wr->next = q->head;
		q->head = wr;
		if (!q->tail)
			q->tail = wr;
		q->len++;
	}
}
