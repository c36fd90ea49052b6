/*
 * initiators/common/host_args.h - the command-line options of the
 * programs on the NVMe-oF host module that name a controller (the
 * target's address, the NQNs, the namespace, queues and shards): one
 * spelling and one check for wharf-nvmf-perf and wharf-nbd.
 */
#ifndef WHARF_INITIATORS_COMMON_HOST_ARGS_H
#define WHARF_INITIATORS_COMMON_HOST_ARGS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/cli.h"

#ifdef __cplusplus
extern "C" {
#endif

/* getopt_long codes of the shared options (above any character). */
enum host_args_opt {
	HOST_OPT_TRADDR = 0x1000,
	HOST_OPT_TRSVCID,
	HOST_OPT_SUBNQN,
	HOST_OPT_HOSTNQN,
	HOST_OPT_NSID,
	HOST_OPT_QUEUES,
	HOST_OPT_SHARDS,
	HOST_OPT_VERSION,
};

/* Their entries, for a program's struct option table. */
/* clang-format off */
#define HOST_ARGS_LONGOPTS                                               \
	{"traddr", required_argument, NULL, HOST_OPT_TRADDR},            \
	{"trsvcid", required_argument, NULL, HOST_OPT_TRSVCID},          \
	{"subnqn", required_argument, NULL, HOST_OPT_SUBNQN},            \
	{"hostnqn", required_argument, NULL, HOST_OPT_HOSTNQN},          \
	{"nsid", required_argument, NULL, HOST_OPT_NSID},                \
	{"queues", required_argument, NULL, HOST_OPT_QUEUES},            \
	{"shards", required_argument, NULL, HOST_OPT_SHARDS},            \
	{"version", no_argument, NULL, HOST_OPT_VERSION}
/* clang-format on */

/* Where the shared options go in a program's own struct. */
struct host_args {
	const char **traddr, **trsvcid, **subnqn, **hostnqn;
	uint32_t *nsid;
	unsigned *queues, *shards;
};

/**
 * host_args_opt() - getopt_long's @opt with its @val, when it is one of
 * the shared options (HOST_OPT_VERSION is the program's to handle).
 * Return: 1 when taken; 0 when @opt is not one of them; -EINVAL when
 * @val is not valid for it (a port above 65535, nsid 0 or FFFFFFFFh,
 * queues or shards 0 or above 1024).
 */
int host_args_opt(const struct host_args *c, int opt, const char *val);

/**
 * host_args_parse() - cli_parse() over @argv with @longopts (which hold
 * HOST_ARGS_LONGOPTS): the shared options into @c, every other one to
 * @own with @arg.
 * Return: as cli_parse().
 */
int host_args_parse(int argc, char **argv, const struct option *longopts,
		    const struct host_args *c, cli_opt_fn own, void *arg,
		    char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_COMMON_HOST_ARGS_H */
