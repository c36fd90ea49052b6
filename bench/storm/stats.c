/*
 * bench/storm/stats.c - per-step rows with cmtime's columns, and the
 * distribution of time-to-established (nearest-rank percentiles, CDF).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/storm/storm.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t storm_percentile(const uint64_t *sorted, size_t n, double p)
{
	size_t rank;

	if (!n)
		return 0;
	if (p <= 0)
		return sorted[0];
	/* p * n / 100 in floating point can land just above an integer
	 * (99.9 * 1000 / 100 = 999.0000000000001): not a rank more. */
	rank = (size_t)ceil(p * (double)n / 100.0 - 1e-9);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

void storm_step_row(const struct storm_conn *c, size_t n, const char *name,
		    enum storm_step from, enum storm_step to,
		    struct storm_step_row *out)
{
	uint64_t first = UINT64_MAX, last = 0, max = 0, min = UINT64_MAX;
	double sum = 0;

	memset(out, 0, sizeof(*out));
	out->name = name;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = c[i].t[from], b = c[i].t[to], d;

		if (!a || !b || b < a)
			continue;
		d = b - a;
		out->n++;
		sum += (double)d;
		if (a < first)
			first = a;
		if (b > last)
			last = b;
		if (d > max)
			max = d;
		if (d < min)
			min = d;
	}
	if (!out->n)
		return;
	out->total_ms = (double)(last - first) / 1e6;
	out->max_ms = (double)max / 1e6;
	out->min_us = (double)min / 1e3;
	out->us_per_conn = out->total_ms * 1e3 / (double)out->n;
	out->avg_us = sum / (double)out->n / 1e3;
}

/* Time-to-established of the established connections into @v, sorted. */
static size_t tte_sorted(const struct storm_conn *c, size_t n, uint64_t *v)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (c[i].outcome == STORM_OUT_ESTABLISHED &&
		    c[i].t[STORM_T_START] &&
		    c[i].t[STORM_T_EST] >= c[i].t[STORM_T_START])
			v[k++] = c[i].t[STORM_T_EST] - c[i].t[STORM_T_START];
	qsort(v, k, sizeof(*v), cmp_u64);
	return k;
}

void storm_tte(const struct storm_conn *c, size_t n, uint64_t *scratch,
	       struct storm_tte *out)
{
	size_t k = tte_sorted(c, n, scratch);

	memset(out, 0, sizeof(*out));
	out->n = k;
	out->p50_us = (double)storm_percentile(scratch, k, 50) / 1e3;
	out->p90_us = (double)storm_percentile(scratch, k, 90) / 1e3;
	out->p99_us = (double)storm_percentile(scratch, k, 99) / 1e3;
	out->p999_us = (double)storm_percentile(scratch, k, 99.9) / 1e3;
	out->max_us = k ? (double)scratch[k - 1] / 1e3 : 0;
}

size_t storm_tte_cdf(const struct storm_conn *c, size_t n, uint64_t *scratch,
		     double *us, double *frac, size_t points)
{
	size_t k = tte_sorted(c, n, scratch);

	if (!k || points < 2)
		return 0;
	for (size_t i = 0; i < points; i++) {
		double f = (double)i / (double)(points - 1);
		size_t rank = (size_t)ceil(f * (double)k);

		if (rank < 1)
			rank = 1;
		us[i] = (double)scratch[rank - 1] / 1e3;
		frac[i] = (double)rank / (double)k;
	}
	return points;
}
