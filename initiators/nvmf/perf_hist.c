/*
 * initiators/nvmf/perf_hist.c - the latency histogram (perf_hist.h).
 */
#include "initiators/nvmf/perf_hist.h"

#include <math.h>
#include <string.h>

void ph_init(struct perf_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned ph_index(uint64_t v)
{
	unsigned e;

	if (v < 32)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	return ((e - 4) << 5) + (unsigned)((v >> (e - 5)) & 31);
}

uint64_t ph_lower(unsigned i)
{
	unsigned e;

	if (i < 32)
		return i;
	e = (i >> 5) + 4;
	return (uint64_t)(32 + (i & 31)) << (e - 5);
}

void ph_add(struct perf_hist *h, uint64_t v)
{
	h->b[ph_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void ph_merge(struct perf_hist *dst, const struct perf_hist *src)
{
	for (unsigned i = 0; i < PH_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t ph_percentile(const struct perf_hist *h, double p)
{
	uint64_t want, seen = 0;

	if (!h->count)
		return 0;
	want = (uint64_t)ceil(p * (double)h->count);
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < PH_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			uint64_t up = i + 1 < PH_BUCKETS ? ph_lower(i + 1) - 1
							 : UINT64_MAX;
			return up < h->max ? up : h->max;
		}
	}
	return h->max;
}
