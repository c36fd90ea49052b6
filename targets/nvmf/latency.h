/*
 * targets/nvmf/latency.h - a command latency histogram an operator can
 * read: power-of-two buckets of microseconds, percentiles read off the
 * bucket bounds.  Pure functions; the counters themselves are the
 * queue's (internal.h), written by its shard, read by the RPC.
 */
#ifndef WHARF_TARGETS_NVMF_LATENCY_H
#define WHARF_TARGETS_NVMF_LATENCY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bucket 0: under 2 us; bucket i (1 .. 22): [2^i, 2^(i+1)) us; the last
 * (23): 2^23 us (8.4 s) and longer. */
#define NVMF_LAT_BUCKETS 24

/** nvmf_lat_bucket() - the bucket of a latency of @ns nanoseconds. */
unsigned nvmf_lat_bucket(uint64_t ns);

/** nvmf_lat_bucket_le_us() - the upper bound of bucket @b, microseconds
 * (UINT64_MAX for the last). */
uint64_t nvmf_lat_bucket_le_us(unsigned b);

/**
 * nvmf_lat_percentile_us() - the latency under which @permille of the
 * @counts (NVMF_LAT_BUCKETS of them) fall, as the upper bound of the
 * bucket that reaches it (so at most 2x the true value).
 * Return: that bound in microseconds; 0 when there are no counts; for the
 * last bucket its lower bound (2^23 us).
 */
uint64_t nvmf_lat_percentile_us(const uint64_t *counts, unsigned permille);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_LATENCY_H */
