/*
 * initiators/nvmf/perf_hist.h - a latency histogram for wharf-nvmf-perf:
 * 32 linear buckets per power of two (about 3% resolution), fixed size,
 * no allocation on the recording path; one writer (the shard that owns
 * the queue), merged after the run.
 */
#ifndef WHARF_INITIATORS_NVMF_PERF_HIST_H
#define WHARF_INITIATORS_NVMF_PERF_HIST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PH_BUCKETS 1920 /* (63 - 4) * 32 + 32 */

struct perf_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min, max;
	uint64_t b[PH_BUCKETS];
};

void ph_init(struct perf_hist *h);
void ph_add(struct perf_hist *h, uint64_t v);
void ph_merge(struct perf_hist *dst, const struct perf_hist *src);
/* The bucket of @v, and the smallest value of bucket @i. */
unsigned ph_index(uint64_t v);
uint64_t ph_lower(unsigned i);
/* The value below which a fraction @p (0..1] of the samples lie: the
 * upper end of the bucket holding the ceil(p * count)-th sample, capped
 * at max; 0 for an empty histogram. */
uint64_t ph_percentile(const struct perf_hist *h, double p);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NVMF_PERF_HIST_H */
