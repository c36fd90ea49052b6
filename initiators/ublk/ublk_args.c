/*
 * initiators/ublk/ublk_args.c - wharf-ublk's command line (ublk_args.h);
 * the controller options are the host programs' shared ones
 * (host_args.h), the recovery ones nvme-cli's names and units.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "initiators/common/host_args.h"
#include "initiators/ublk/ublk_args.h"

const char ublk_usage[] =
	"usage: wharf-ublk add -a ADDR -n NQN [OPTIONS]\n"
	"       wharf-ublk recover --number N -a ADDR -n NQN [OPTIONS]\n"
	"       wharf-ublk del --number N | --all\n"
	"       wharf-ublk list [--number N] [--json]\n"
	"\n"
	"Exposes one namespace of an NVMe-oF RDMA controller, connected with\n"
	"<wharf/nvmf_host.h>, as /dev/ublkbN through the kernel's ublk driver\n"
	"(Linux 6.0 and later; `modprobe ublk_drv` first).  `add` creates the\n"
	"device and serves it in the foreground until SIGINT or SIGTERM,\n"
	"which remove it; SIGUSR1 prints the stats line.  Each ublk queue is\n"
	"served on the shard that owns its NVMe I/O queue.  The device is\n"
	"created with user recovery: when wharf-ublk dies, /dev/ublkbN stays\n"
	"and holds its I/O until `recover` takes it over (the held requests\n"
	"are sent again) or `del` removes it.\n"
	"\n"
	"add and recover: the controller (-a and -n required) and its\n"
	"recovery, as nvme connect takes them (one ublk queue per I/O\n"
	"queue); while the controller reconnects, the device's requests\n"
	"wait:\n"
	"\n" HOST_ARGS_USAGE "\n"
	"The device:\n"
	"\n"
	"  --cpus LIST           one shard per CPU listed, e.g. 1, 0,2 or 0-3\n"
	"  --poll MODE           idle shards: event (default), busy, adaptive\n"
	"  --queue-depth N       requests per ublk queue (default the I/O\n"
	"                        queue's size, at most 128)\n"
	"  --max-io-size B       largest request; k/m suffixes (default 128k)\n"
	"  --number N            the device number (add: default the first\n"
	"                        free; recover, del, list: the device)\n"
	"  --all                 del: every ublk device\n"
	"  --json                list: JSON\n"
	"  --quiet               no progress lines\n"
	"  --version             the version\n"
	"  --help                this text\n"
	"\n"
	"Options take --opt VALUE or --opt=VALUE.\n";

enum {
	OPT_QUIET = 0x100,
	OPT_QUEUE_DEPTH,
	OPT_MAX_IO_SIZE,
	OPT_NUMBER,
	OPT_ALL,
	OPT_JSON,
	OPT_CPUS,
	OPT_POLL,
};

static const struct option ublk_longopts[] = {
	HOST_ARGS_LONGOPTS,
	{"help", no_argument, NULL, 'h'},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"queue-depth", required_argument, NULL, OPT_QUEUE_DEPTH},
	{"max-io-size", required_argument, NULL, OPT_MAX_IO_SIZE},
	{"number", required_argument, NULL, OPT_NUMBER},
	{"all", no_argument, NULL, OPT_ALL},
	{"json", no_argument, NULL, OPT_JSON},
	{"cpus", required_argument, NULL, OPT_CPUS},
	{"poll", required_argument, NULL, OPT_POLL},
	{NULL, 0, NULL, 0},
};

static int own_opt(void *arg, int c, const char *v)
{
	struct ublk_args *a = arg;
	uint64_t n = 0;
	int rc = 0;

	switch (c) {
	case 'h':
		a->help = true;
		break;
	case HOST_OPT_VERSION:
		a->version = true;
		break;
	case OPT_QUIET:
		a->quiet = true;
		break;
	case OPT_QUEUE_DEPTH:
		rc = cli_u64(v, 1, 4096, &n);
		a->queue_depth = (uint32_t)n;
		break;
	case OPT_MAX_IO_SIZE:
		rc = cli_size(v, 4096, 1u << 20, &n);
		a->max_io_size = (uint32_t)n;
		break;
	case OPT_NUMBER:
		rc = cli_u64(v, 0, 1u << 20, &n);
		a->number = (int)n;
		break;
	case OPT_ALL:
		a->all = true;
		break;
	case OPT_JSON:
		a->json = true;
		break;
	case OPT_CPUS:
		rc = cli_cpu_list(v, CLI_CPU_LIMIT - 1, a->cpus, UBLK_MAX_CPUS,
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

static const struct {
	const char *name;
	enum ublk_verb verb;
} verbs[] = {
	{"add", UBLK_VERB_ADD},
	{"recover", UBLK_VERB_RECOVER},
	{"del", UBLK_VERB_DEL},
	{"list", UBLK_VERB_LIST},
};

int ublk_parse(int argc, char **argv, struct ublk_args *a, char *err,
	       size_t errlen)
{
	const char *v = argc > 1 ? argv[1] : NULL;

	memset(a, 0, sizeof(*a));
	host_args_init(&a->host);
	a->max_io_size = 128 * 1024;
	a->number = UBLK_ARGS_ANY_NUMBER;
	if (v && (!strcmp(v, "--help") || !strcmp(v, "-h"))) {
		a->help = true;
		return 0;
	}
	if (v && !strcmp(v, "--version")) {
		a->version = true;
		return 0;
	}
	for (size_t i = 0; v && i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(v, verbs[i].name))
			a->verb = verbs[i].verb;
	if (!a->verb) {
		if (v)
			snprintf(err, errlen,
				 "'%s' is not add, recover, del or list", v);
		else
			snprintf(err, errlen,
				 "no subcommand (add, recover, del or list)");
		return -EINVAL;
	}
	if (host_args_parse(argc - 1, argv + 1, "h", ublk_longopts, &a->host,
			    own_opt, a, err, errlen))
		return -EINVAL;
	if (a->help || a->version)
		return 0;
	if (a->ncpus && a->host.shards && a->host.shards != a->ncpus) {
		snprintf(err, errlen, "--shards %u but %u CPUs in --cpus",
			 a->host.shards, a->ncpus);
		return -EINVAL;
	}
	switch (a->verb) {
	case UBLK_VERB_RECOVER:
		if (a->number < 0) {
			snprintf(err, errlen, "recover needs --number");
			return -EINVAL;
		}
		/* fall through */
	case UBLK_VERB_ADD:
		if (!a->host.traddr || !a->host.subnqn) {
			snprintf(err, errlen,
				 "--traddr (-a) and --nqn (-n, --subnqn) are "
				 "required");
			return -EINVAL;
		}
		if (a->all || a->json) {
			snprintf(err, errlen,
				 "--all and --json are for del "
				 "and list");
			return -EINVAL;
		}
		break;
	case UBLK_VERB_DEL:
		if ((a->number < 0) == !a->all) {
			snprintf(err, errlen,
				 "del takes one of --number and --all");
			return -EINVAL;
		}
		break;
	case UBLK_VERB_LIST:
		if (a->all) {
			snprintf(err, errlen, "--all is for del");
			return -EINVAL;
		}
		break;
	}
	return 0;
}
