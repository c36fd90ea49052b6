/*
 * cli/cli.c - numbers, sizes, CPU lists and poll modes for the programs
 * (cli.h).
 */
#include "cli/cli.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* Decimal digits from *@s into @out, stopping at the first non-digit;
 * -EINVAL for no digit or a value beyond 64 bits. */
static int digits(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*s = p;
	*out = v;
	return 0;
}

int cli_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;

	if (!s || !out || digits(&s, &v) || *s || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (!out || cli_u64(s, min, max, &v))
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static unsigned suffix_shift(char c)
{
	switch (c) {
	case 'k':
	case 'K':
		return 10;
	case 'm':
	case 'M':
		return 20;
	case 'g':
	case 'G':
		return 30;
	case 't':
	case 'T':
		return 40;
	default:
		return 0;
	}
}

int cli_poll_mode(const char *s, int *out)
{
	static const char *const names[] = {"event", "busy", "adaptive"};

	for (int i = 0; i < 3; i++)
		if (s && !strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

int cli_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	unsigned shift;

	if (!s || !out || digits(&s, &v))
		return -EINVAL;
	if (*s) {
		shift = suffix_shift(*s);
		if (!shift || s[1])
			return -EINVAL;
		if (v > UINT64_MAX >> shift)
			return -EINVAL;
		v <<= shift;
	}
	if (v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_cpu_list(const char *s, unsigned max_cpu, int *cpus, unsigned max,
		 unsigned *n)
{
	unsigned count = 0;

	if (!s || !cpus || !n || !*s || max_cpu >= CLI_CPU_LIMIT)
		return -EINVAL;
	for (;;) {
		uint64_t lo, hi;

		if (digits(&s, &lo) || lo > max_cpu)
			return -EINVAL;
		hi = lo;
		if (*s == '-') {
			s++;
			if (digits(&s, &hi) || hi > max_cpu || hi < lo)
				return -EINVAL;
		}
		for (uint64_t c = lo; c <= hi; c++) {
			if (count == max)
				return -E2BIG;
			cpus[count++] = (int)c;
		}
		if (!*s)
			break;
		if (*s != ',')
			return -EINVAL;
		s++;
	}
	*n = count;
	return 0;
}

int cli_parse(int argc, char **argv, const char *shortopts,
	      const struct option *longopts, cli_opt_fn fn, void *arg,
	      char *err, size_t errlen)
{
	char spec[64];
	int c, idx;

	if (snprintf(spec, sizeof(spec), ":%s", shortopts) >= (int)sizeof(spec))
		return -EINVAL;
	optind = 0; /* getopt starts anew */
	opterr = 0;
	while ((c = getopt_long(argc, argv, spec, longopts, &idx)) != -1) {
		if (c == ':' || c == '?') {
			snprintf(err, errlen, "%s: %s", argv[optind - 1],
				 c == ':' ? "missing value" : "unknown option");
			return -EINVAL;
		}
		idx = -1;
		for (int i = 0; longopts[i].name && idx < 0; i++)
			if (longopts[i].val == c && !longopts[i].flag)
				idx = i;
		if (fn(arg, c, optarg)) {
			/* A secret is not echoed to a terminal or a log. */
			if (idx >= 0 && strstr(longopts[idx].name, "secret"))
				snprintf(err, errlen,
					 "--%s: bad value (not shown)",
					 longopts[idx].name);
			else if (idx >= 0)
				snprintf(err, errlen, "--%s: bad value '%s'",
					 longopts[idx].name,
					 optarg ? optarg : "");
			else
				snprintf(err, errlen, "-%c: bad value '%s'", c,
					 optarg ? optarg : "");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

void cli_version(FILE *f, const char *prog)
{
	fprintf(f, "%s (wharf) %s\n", prog, CLI_WHARF_VERSION);
}
