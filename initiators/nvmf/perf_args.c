/*
 * initiators/nvmf/perf_args.c - wharf-nvmf-perf's command line (perf.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wharf/nvmf_host.h>

#include "cli/cli.h"
#include "initiators/common/host_args.h"
#include "initiators/nvmf/perf.h"

const char perf_usage[] =
	"usage: wharf-nvmf-perf -a ADDR -n NQN [OPTIONS]\n"
	"\n"
	"Drives an NVMe-oF RDMA subsystem with <wharf/nvmf_host.h>: QD\n"
	"commands outstanding on each I/O queue for the given time, then a\n"
	"table (or --json) of IOPS, MiB/s and latency.  Progress on stderr.\n"
	"\n"
	"The controller (-a and -n required) and its recovery, as nvme\n"
	"connect takes them:\n"
	"\n" HOST_ARGS_USAGE "\n"
	"The load:\n"
	"\n"
	"  --qd N             commands outstanding per queue (default 32)\n"
	"  --io-size BYTES    bytes per command, a multiple of the block\n"
	"                     size; k/m/g suffixes (default 4k)\n"
	"  --pattern P        read, write, randread, randwrite (default\n"
	"                     randread)\n"
	"  --time S           seconds (default 10); SIGINT or SIGTERM ends\n"
	"                     the run sooner, as if the time were up: the\n"
	"                     commands drain, --verify reads back, the\n"
	"                     report covers the time run\n"
	"  --cpus LIST        one shard per CPU listed, e.g. 1, 0,2 or 0-3\n"
	"  --poll MODE        idle shards: event (default), busy, adaptive\n"
	"  --verify           every command slot owns its own blocks and\n"
	"                     writes them with a fresh pattern, reads them\n"
	"                     back and compares; exit 1 on a mismatch.  A\n"
	"                     write counts as acknowledged only once it\n"
	"                     completed with success (across reconnects\n"
	"                     too); only acknowledged data is compared,\n"
	"                     and each slot's last one is read once more\n"
	"                     at the end\n"
	"  --zero-copy        each queue's buffers registered once\n"
	"                     (wharf_nvmf_host_mem_reg()) and used in\n"
	"                     place: no bounce-buffer copy\n"
	"  --submit-thread    submit every command from one application\n"
	"                     thread (each call handed to the queue's\n"
	"                     shard), not from the completion callbacks\n"
	"                     on the shards\n"
	"  --discover         read the discovery controller's log (the\n"
	"                     well-known NQN unless --subnqn names one),\n"
	"                     print one line per entry and exit\n"
	"  --json             the result as one JSON object on stdout\n"
	"  --quiet            no progress lines\n"
	"  --version          the version\n"
	"  --help             this text\n"
	"\n"
	"Options take --opt VALUE or --opt=VALUE; sizes take k, m, g, t\n"
	"(powers of 1024), CPU lists ranges (0-3,8).\n";

const char *perf_pattern_name(enum perf_pattern p)
{
	switch (p) {
	case PERF_READ:
		return "read";
	case PERF_WRITE:
		return "write";
	case PERF_RANDREAD:
		return "randread";
	case PERF_RANDWRITE:
		return "randwrite";
	}
	return "?";
}

/* Codes of the options that have no short letter. */
enum {
	OPT_VERIFY = 0x100,
	OPT_ZERO_COPY,
	OPT_SUBMIT_THREAD,
	OPT_DISCOVER,
	OPT_JSON,
	OPT_QUIET,
	OPT_QD,
	OPT_IO_SIZE,
	OPT_PATTERN,
	OPT_TIME,
	OPT_CPUS,
	OPT_POLL,
};

static const struct option perf_longopts[] = {
	HOST_ARGS_LONGOPTS,
	{"help", no_argument, NULL, 'h'},
	{"verify", no_argument, NULL, OPT_VERIFY},
	{"zero-copy", no_argument, NULL, OPT_ZERO_COPY},
	{"submit-thread", no_argument, NULL, OPT_SUBMIT_THREAD},
	{"discover", no_argument, NULL, OPT_DISCOVER},
	{"json", no_argument, NULL, OPT_JSON},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"qd", required_argument, NULL, OPT_QD},
	{"io-size", required_argument, NULL, OPT_IO_SIZE},
	{"pattern", required_argument, NULL, OPT_PATTERN},
	{"time", required_argument, NULL, OPT_TIME},
	{"cpus", required_argument, NULL, OPT_CPUS},
	{"poll", required_argument, NULL, OPT_POLL},
	{NULL, 0, NULL, 0},
};

static int pattern(const char *v, enum perf_pattern *out)
{
	static const char *const names[] = {
		[PERF_READ] = "read",
		[PERF_WRITE] = "write",
		[PERF_RANDREAD] = "randread",
		[PERF_RANDWRITE] = "randwrite",
	};

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(v, names[i])) {
			*out = (enum perf_pattern)i;
			return 0;
		}
	return -EINVAL;
}

/* One option of perf's own with its value: 0 or -EINVAL. */
static int own_opt(void *arg, int c, const char *v)
{
	struct perf_args *a = arg;
	uint64_t n = 0;
	int rc = 0;

	switch (c) {
	case 'h':
		a->help = true;
		break;
	case HOST_OPT_VERSION:
		a->version = true;
		break;
	case OPT_VERIFY:
		a->verify = true;
		break;
	case OPT_ZERO_COPY:
		a->zero_copy = true;
		break;
	case OPT_SUBMIT_THREAD:
		a->submit_thread = true;
		break;
	case OPT_DISCOVER:
		a->discover = true;
		break;
	case OPT_JSON:
		a->json = true;
		break;
	case OPT_QUIET:
		a->quiet = true;
		break;
	case OPT_QD:
		rc = cli_u64(v, 1, 1024, &n);
		a->qd = (unsigned)n;
		break;
	case OPT_IO_SIZE:
		rc = cli_size(v, 512, 16u << 20, &n);
		a->io_size = (uint32_t)n;
		break;
	case OPT_PATTERN:
		rc = pattern(v, &a->pattern);
		break;
	case OPT_TIME:
		rc = cli_u64(v, 1, 86400, &n);
		a->time_s = (unsigned)n;
		break;
	case OPT_CPUS:
		rc = cli_cpu_list(v, CLI_CPU_LIMIT - 1, a->cpus, PERF_MAX_CPUS,
				  &a->ncpus);
		break;
	case OPT_POLL:
		rc = cli_poll_mode(v, &a->poll);
		break;
	default:
		rc = -EINVAL;
		break;
	}
	return rc;
}

int perf_parse(int argc, char **argv, struct perf_args *a, char *err,
	       size_t errlen)
{
	memset(a, 0, sizeof(*a));
	host_args_init(&a->host);
	a->qd = 32;
	a->io_size = 4096;
	a->pattern = PERF_RANDREAD;
	a->time_s = 10;
	if (host_args_parse(argc, argv, "h", perf_longopts, &a->host, own_opt,
			    a, err, errlen))
		return -EINVAL;
	if (a->help || a->version)
		return 0;
	if (!a->host.traddr || (!a->host.subnqn && !a->discover)) {
		snprintf(err, errlen,
			 "--traddr (-a) and --nqn (-n, --subnqn) are required");
		return -EINVAL;
	}
	return 0;
}
