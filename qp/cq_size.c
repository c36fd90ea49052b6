/* qp/cq_size.c - CQ budget arithmetic; see cq_size.h. */
#include <errno.h>

#include "qp/cq_size.h"

#define CQ_MIN 16u

uint32_t wqp_cq_initial(uint32_t want, uint32_t srq_depth, uint32_t nqps,
			uint32_t per_qp, uint32_t max)
{
	uint64_t n =
		want ? want : (uint64_t)srq_depth + (uint64_t)nqps * per_qp;

	if (n < CQ_MIN)
		n = CQ_MIN;
	if (n > max)
		n = max;
	return (uint32_t)n;
}

int wqp_cq_plan(const struct wqp_cq_budget *b, uint32_t need,
		uint32_t *new_size)
{
	uint64_t total = (uint64_t)b->reserved + need;
	uint64_t grow;

	*new_size = b->size;
	if (total <= b->size)
		return 0;
	if (total > b->max)
		return -ENOSPC;
	grow = (uint64_t)b->size * 2;
	if (grow < total)
		grow = total;
	if (grow > b->max)
		grow = b->max;
	*new_size = (uint32_t)grow;
	return 1;
}

int wqp_cq_reserve(struct wqp_cq_budget *b, uint32_t need)
{
	if ((uint64_t)b->reserved + need > b->size)
		return -ENOSPC;
	b->reserved += need;
	return 0;
}

int wqp_cq_release(struct wqp_cq_budget *b, uint32_t n)
{
	if (n > b->reserved)
		return -EOVERFLOW;
	b->reserved -= n;
	return 0;
}

int wqp_cq_pick(const struct wqp_cq_budget *b, unsigned n, unsigned max_cqs,
		uint32_t cq_max, uint32_t need)
{
	uint32_t ns;

	if (need > cq_max)
		return -ENOSPC;
	for (unsigned i = 0; i < n; i++)
		if (wqp_cq_plan(&b[i], need, &ns) == 0)
			return (int)i;
	for (unsigned i = 0; i < n; i++)
		if (wqp_cq_plan(&b[i], need, &ns) == 1)
			return (int)i;
	return n < max_cqs ? WQP_CQ_PICK_NEW : -ENOSPC;
}
