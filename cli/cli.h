/*
 * cli/cli.h - the programs' command-line toolbox (internal to wharf's
 * programs and benchmarks; not part of libwharf).
 *
 * One way to read a number, a size and a CPU list, so that every tool
 * takes the same spellings and refuses the same mistakes: no sign, no
 * leading blank, no trailing text, no wrap-around, a range checked
 * after the suffix is applied.  Options are parsed with getopt_long
 * (so --opt=value and --opt value both work); --version prints
 * cli_version().
 */
#ifndef WHARF_CLI_CLI_H
#define WHARF_CLI_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * cli_u64() - a decimal number in [@min, @max].
 * Return: 0; -EINVAL for NULL, an empty string, a sign or blank, any
 * character after the digits, or a number outside the range (also one
 * beyond 64 bits).
 */
int cli_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/** cli_u32() - cli_u64() into 32 bits (@max at most UINT32_MAX). */
int cli_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

/**
 * cli_size() - a size in bytes: a decimal number with an optional
 * suffix k, m, g or t (either case, powers of 1024; "4k" = 4096), in
 * [@min, @max].
 * Return: 0; -EINVAL as cli_u64(), an unknown suffix, or a product that
 * overflows 64 bits.
 */
int cli_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/**
 * cli_cpu_list() - a CPU list, as taskset -c and cpusets spell it:
 * numbers and ranges separated by commas ("0-3,8,10-11"), in the order
 * given (a CPU may repeat).
 * @max_cpu: the highest CPU number taken (below CLI_CPU_LIMIT).
 * @cpus: receives the CPUs, at most @max of them; @n: how many.
 * Return: 0; -EINVAL for an empty list, a bad number, a CPU above
 * @max_cpu, a range whose end is below its start; -E2BIG for more than
 * @max CPUs.  Nothing is written to @n on failure.
 */
int cli_cpu_list(const char *s, unsigned max_cpu, int *cpus, unsigned max,
		 unsigned *n);

/**
 * cli_poll_mode() - how idle shards wait, by name: "event" (0, block in
 * epoll), "busy" (1, spin), "adaptive" (2, spin a while, then block):
 * enum wharf_poll_mode's values.
 * Return: 0; -EINVAL for any other name.
 */
int cli_poll_mode(const char *s, int *out);

/* The CPU numbers a list may name: 0 .. CLI_CPU_LIMIT - 1. */
#define CLI_CPU_LIMIT 4096u

/* One option getopt_long returned (its code) with its value (NULL for a
 * flag): 0, or -EINVAL when the value is not valid for it. */
typedef int (*cli_opt_fn)(void *arg, int opt, const char *val);

/**
 * cli_parse() - read @argv with getopt_long, from the start (tests may
 * call it more than once), calling @fn for each option.
 * @shortopts: the short options, after getopt's leading ':' (e.g. "h").
 * Return: 0; -EINVAL with the reason in @err: an unknown option, a
 * missing value, a value @fn refused ("--NAME: bad value 'V'"; the value
 * left out for an option whose name has "secret" in it), or an
 * argument that is not an option.
 * Context: not thread-safe (getopt's globals).
 */
int cli_parse(int argc, char **argv, const char *shortopts,
	      const struct option *longopts, cli_opt_fn fn, void *arg,
	      char *err, size_t errlen);

/** cli_version() - print "PROG (wharf) VERSION" and a newline to @f. */
void cli_version(FILE *f, const char *prog);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CLI_CLI_H */
