/*
 * targets/nvmf/latency.c - the latency histogram's buckets and
 * percentiles (latency.h).
 */
#include "targets/nvmf/latency.h"

unsigned nvmf_lat_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned b = 0;

	while (us > 1 && b < NVMF_LAT_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	return b;
}

uint64_t nvmf_lat_bucket_le_us(unsigned b)
{
	if (b >= NVMF_LAT_BUCKETS - 1)
		return UINT64_MAX;
	return (uint64_t)2 << b;
}

uint64_t nvmf_lat_percentile_us(const uint64_t *counts, unsigned permille)
{
	uint64_t total = 0, seen = 0, want;

	for (unsigned b = 0; b < NVMF_LAT_BUCKETS; b++)
		total += counts[b];
	if (!total)
		return 0;
	if (permille > 1000)
		permille = 1000;
	/* The rank of the percentile, rounded up, at least the first. */
	want = (total * permille + 999) / 1000;
	if (!want)
		want = 1;
	for (unsigned b = 0; b < NVMF_LAT_BUCKETS; b++) {
		seen += counts[b];
		if (seen >= want)
			return b == NVMF_LAT_BUCKETS - 1
				       ? (uint64_t)1 << (NVMF_LAT_BUCKETS - 1)
				       : nvmf_lat_bucket_le_us(b);
	}
	return (uint64_t)1 << (NVMF_LAT_BUCKETS - 1);
}
