/*
 * initiators/nbd/nbd_args.c - wharf-nbd's command line (nbd_args.h); the
 * controller options are the host programs' shared ones (host_args.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "initiators/common/host_args.h"
#include "initiators/nbd/nbd_args.h"

const char nbd_usage[] =
	"usage: wharf-nbd -a ADDR -n NQN --device /dev/nbdN [OPTIONS]\n"
	"       wharf-nbd -a ADDR -n NQN --socket PATH [OPTIONS]\n"
	"\n"
	"Exposes one namespace of an NVMe-oF RDMA controller, connected with\n"
	"<wharf/nvmf_host.h>, as a block device: through the kernel's NBD\n"
	"driver (--device; `modprobe nbd` first) or as an NBD server on a\n"
	"Unix socket (--socket; fixed newstyle, for qemu, libnbd, nbdfuse).\n"
	"Runs until SIGINT or SIGTERM (or the device is disconnected), then\n"
	"disconnects everything and prints its stats on stderr; SIGUSR1\n"
	"prints them at any time.\n"
	"\n"
	"The controller (-a and -n required) and its recovery, as nvme\n"
	"connect takes them; while the controller reconnects, the device's\n"
	"requests wait:\n"
	"\n" HOST_ARGS_USAGE "\n"
	"The device:\n"
	"\n"
	"  --queue-size N     entries per I/O queue (default 128)\n"
	"  --max-io-size B    largest NVMe transfer; larger requests are\n"
	"                     split; k/m suffixes (default 128k)\n"
	"  --device PATH      kernel mode: this /dev/nbdN\n"
	"  --connections N    kernel mode: NBD connections (default one per\n"
	"                     I/O queue)\n"
	"  --timeout S        kernel mode: the driver's request timeout\n"
	"  --socket PATH      socket mode: listen on this Unix socket\n"
	"  --export-name NAME socket mode: the export's name (default\n"
	"                     \"wharf\"; the default export \"\" is the same)\n"
	"  --null-io          benchmark the NBD path alone: answer every\n"
	"                     request without an NVMe command (reads return\n"
	"                     zeroes, writes are dropped)\n"
	"  --quiet            no progress lines\n"
	"  --version          the version\n"
	"  --help             this text\n"
	"\n"
	"Options take --opt VALUE or --opt=VALUE.\n";

enum {
	OPT_NULL_IO = 0x100,
	OPT_QUIET,
	OPT_QUEUE_SIZE,
	OPT_MAX_IO_SIZE,
	OPT_DEVICE,
	OPT_CONNECTIONS,
	OPT_TIMEOUT,
	OPT_SOCKET,
	OPT_EXPORT_NAME,
};

static const struct option nbd_longopts[] = {
	HOST_ARGS_LONGOPTS,
	{"help", no_argument, NULL, 'h'},
	{"null-io", no_argument, NULL, OPT_NULL_IO},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"queue-size", required_argument, NULL, OPT_QUEUE_SIZE},
	{"max-io-size", required_argument, NULL, OPT_MAX_IO_SIZE},
	{"device", required_argument, NULL, OPT_DEVICE},
	{"connections", required_argument, NULL, OPT_CONNECTIONS},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"socket", required_argument, NULL, OPT_SOCKET},
	{"export-name", required_argument, NULL, OPT_EXPORT_NAME},
	{NULL, 0, NULL, 0},
};

/* One option of wharf-nbd's own with its value: 0 or -EINVAL. */
static int own_opt(void *arg, int c, const char *v)
{
	struct nbd_args *a = arg;
	uint64_t n = 0;
	int rc = 0;

	switch (c) {
	case 'h':
		a->help = true;
		break;
	case HOST_OPT_VERSION:
		a->version = true;
		break;
	case OPT_NULL_IO:
		a->null_io = true;
		break;
	case OPT_QUIET:
		a->quiet = true;
		break;
	case OPT_QUEUE_SIZE:
		rc = cli_u64(v, 2, 65536, &n);
		a->queue_size = (uint32_t)n;
		break;
	case OPT_MAX_IO_SIZE:
		rc = cli_size(v, 4096, 16u << 20, &n);
		a->max_io_size = (uint32_t)n;
		break;
	case OPT_DEVICE:
		a->device = v;
		break;
	case OPT_CONNECTIONS:
		rc = cli_u64(v, 1, 64, &n);
		a->connections = (unsigned)n;
		break;
	case OPT_TIMEOUT:
		rc = cli_u64(v, 1, 86400, &n);
		a->timeout_s = (unsigned)n;
		break;
	case OPT_SOCKET:
		a->socket = v;
		break;
	case OPT_EXPORT_NAME:
		rc = strlen(v) > 4096 ? -EINVAL : 0;
		a->export_name = v;
		break;
	default:
		rc = -EINVAL;
		break;
	}
	return rc;
}

int nbd_parse(int argc, char **argv, struct nbd_args *a, char *err,
	      size_t errlen)
{
	memset(a, 0, sizeof(*a));
	host_args_init(&a->host);
	a->max_io_size = 128 * 1024;
	a->export_name = "wharf";
	if (host_args_parse(argc, argv, "h", nbd_longopts, &a->host, own_opt, a,
			    err, errlen))
		return -EINVAL;
	if (a->help || a->version)
		return 0;
	if (!a->host.traddr || !a->host.subnqn) {
		snprintf(err, errlen,
			 "--traddr (-a) and --nqn (-n, --subnqn) are required");
		return -EINVAL;
	}
	if (!a->device == !a->socket) {
		snprintf(err, errlen, "one of --device and --socket is needed");
		return -EINVAL;
	}
	if (a->socket && (a->connections || a->timeout_s)) {
		snprintf(err, errlen,
			 "--connections and --timeout are for --device");
		return -EINVAL;
	}
	return 0;
}
