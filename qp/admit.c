/* qp/admit.c - receive budget admission; see admit.h. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "qp/admit.h"

uint32_t wqp_admit_default_reserve(uint32_t depth)
{
	uint32_t r = depth / 16;

	if (depth < 2)
		return 0;
	return r ? r : 1;
}

int wqp_admit_init(struct wqp_admit *a, uint32_t depth, uint32_t reserve)
{
	if (!a || !depth || reserve >= depth)
		return -EINVAL;
	a->depth = depth;
	a->max = depth;
	a->reserve = reserve;
	a->admitted = 0;
	return 0;
}

int wqp_admit_check(const struct wqp_admit *a, uint32_t credits)
{
	if (!credits)
		return -EINVAL;
	if ((uint64_t)a->admitted + credits > (uint64_t)a->depth - a->reserve)
		return -EBUSY;
	return 0;
}

int wqp_admit_take(struct wqp_admit *a, uint32_t credits)
{
	int err = wqp_admit_check(a, credits);

	if (!err)
		a->admitted += credits;
	return err;
}

int wqp_admit_put(struct wqp_admit *a, uint32_t credits)
{
	if (credits > a->admitted)
		return -EOVERFLOW;
	a->admitted -= credits;
	return 0;
}

uint32_t wqp_admit_capacity(const struct wqp_admit *a, uint32_t credits)
{
	if (!credits)
		return 0;
	return (a->depth - a->reserve) / credits;
}

int wqp_admit_set_max(struct wqp_admit *a, uint32_t max)
{
	if (max < a->depth)
		return -EINVAL;
	a->max = max;
	return 0;
}

uint32_t wqp_admit_shortfall(const struct wqp_admit *a, uint32_t credits)
{
	uint64_t need = (uint64_t)a->admitted + credits + a->reserve;

	if (!credits || need > a->max)
		return UINT32_MAX;
	return need > a->depth ? (uint32_t)(need - a->depth) : 0;
}

int wqp_admit_grow(struct wqp_admit *a, uint32_t n)
{
	if ((uint64_t)a->depth + n > a->max)
		return -EINVAL;
	a->depth += n;
	return 0;
}
