/* qp/credit.c - send queue and READ credits; see credit.h. */
#include <errno.h>
#include <stddef.h>

#include "qp/credit.h"

int wqp_credit_init(struct wqp_credit *c, uint32_t sq_max, uint32_t rd_max)
{
	if (!c || !sq_max)
		return -EINVAL;
	c->sq_max = sq_max;
	c->sq_used = 0;
	c->rd_max = rd_max;
	c->rd_used = 0;
	return 0;
}

enum wqp_credit_verdict wqp_credit_check(const struct wqp_credit *c,
					 int is_read)
{
	if (is_read && !c->rd_max)
		return WQP_CREDIT_RD_NONE;
	if (c->sq_used >= c->sq_max)
		return WQP_CREDIT_SQ_FULL;
	if (is_read && c->rd_used >= c->rd_max)
		return WQP_CREDIT_RD_FULL;
	return WQP_CREDIT_OK;
}

int wqp_credit_take(struct wqp_credit *c, int is_read)
{
	switch (wqp_credit_check(c, is_read)) {
	case WQP_CREDIT_OK:
		break;
	case WQP_CREDIT_RD_NONE:
		return -EPERM;
	default:
		return -EAGAIN;
	}
	c->sq_used++;
	if (is_read)
		c->rd_used++;
	return 0;
}

int wqp_credit_put(struct wqp_credit *c, int is_read)
{
	if (!c->sq_used || (is_read && !c->rd_used))
		return -EOVERFLOW;
	c->sq_used--;
	if (is_read)
		c->rd_used--;
	return 0;
}
