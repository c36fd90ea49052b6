/*
 * initiators/nbd/nbd_args.c - wharf-nbd's command line (nbd.h); the
 * controller options are wharf-nvmf-perf's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "initiators/nbd/nbd_args.h"
#include "initiators/nvmf/perf.h"

const char nbd_usage[] =
	"usage: wharf-nbd --traddr ADDR --subnqn NQN --device /dev/nbdN "
	"[OPTIONS]\n"
	"       wharf-nbd --traddr ADDR --subnqn NQN --socket PATH "
	"[OPTIONS]\n"
	"\n"
	"Exposes one namespace of an NVMe-oF RDMA controller, connected with\n"
	"<wharf/nvmf_host.h>, as a block device: through the kernel's NBD\n"
	"driver (--device; `modprobe nbd` first) or as an NBD server on a\n"
	"Unix socket (--socket; fixed newstyle, for qemu, libnbd, nbdfuse).\n"
	"Runs until SIGINT or SIGTERM (or the device is disconnected), then\n"
	"disconnects everything and prints its stats on stderr; SIGUSR1\n"
	"prints them at any time.\n"
	"\n"
	"  --traddr ADDR      target IPv4/IPv6 address (required)\n"
	"  --trsvcid PORT     target port (default 4420)\n"
	"  --subnqn NQN       subsystem NQN (required)\n"
	"  --hostnqn NQN      host NQN (default /etc/nvme/hostnqn, else\n"
	"                     one from a random host ID)\n"
	"  --nsid N           namespace (default 1)\n"
	"  --queues N         I/O queues (default one per shard)\n"
	"  --queue-size N     entries per I/O queue (default 128)\n"
	"  --shards N         shard threads (default one per core)\n"
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
	"  --help             this text\n";

int nbd_parse(int argc, char **argv, struct nbd_args *a, char *err,
	      size_t errlen)
{
	const struct perf_ctrl_opts co = {
		&a->traddr, &a->trsvcid, &a->subnqn, &a->hostnqn,
		&a->nsid,   &a->queues,	 &a->shards,
	};

	memset(a, 0, sizeof(*a));
	a->trsvcid = "4420";
	a->nsid = 1;
	a->max_io_size = 128 * 1024;
	a->export_name = "wharf";
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n = 0;
		int bad = 0, takes = 1;

		if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
			a->help = true;
			takes = 0;
		} else if (!strcmp(o, "--null-io")) {
			a->null_io = true;
			takes = 0;
		} else if (!strcmp(o, "--quiet")) {
			a->quiet = true;
			takes = 0;
		} else if (!v) {
			snprintf(err, errlen, "%s: missing value", o);
			return -EINVAL;
		} else if (perf_ctrl_opt(&co, o, v, &bad)) {
			/* parsed */
		} else if (!strcmp(o, "--queue-size")) {
			bad = perf_num(v, 65536, &n) || n < 2;
			a->queue_size = (uint32_t)n;
		} else if (!strcmp(o, "--max-io-size")) {
			bad = perf_num(v, 16u << 20, &n) || n < 4096;
			a->max_io_size = (uint32_t)n;
		} else if (!strcmp(o, "--device")) {
			a->device = v;
		} else if (!strcmp(o, "--connections")) {
			bad = perf_num(v, 64, &n) || n == 0;
			a->connections = (unsigned)n;
		} else if (!strcmp(o, "--timeout")) {
			bad = perf_num(v, 86400, &n) || n == 0;
			a->timeout_s = (unsigned)n;
		} else if (!strcmp(o, "--socket")) {
			a->socket = v;
		} else if (!strcmp(o, "--export-name")) {
			bad = strlen(v) > 4096;
			a->export_name = v;
		} else {
			snprintf(err, errlen, "unknown option %s", o);
			return -EINVAL;
		}
		if (bad) {
			snprintf(err, errlen, "%s: bad value '%s'", o, v);
			return -EINVAL;
		}
		i += takes;
	}
	if (a->help)
		return 0;
	if (!a->traddr || !a->subnqn) {
		snprintf(err, errlen, "--traddr and --subnqn are required");
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
