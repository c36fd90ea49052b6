/*
 * initiators/nvmf/perf_args.c - wharf-nvmf-perf's command line (perf.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wharf/nvmf_host.h>

#include "initiators/nvmf/perf.h"

const char perf_usage[] =
	"usage: wharf-nvmf-perf --traddr ADDR --subnqn NQN [OPTIONS]\n"
	"\n"
	"Drives an NVMe-oF RDMA subsystem with <wharf/nvmf_host.h>: QD\n"
	"commands outstanding on each I/O queue for the given time, then a\n"
	"table (or --json) of IOPS, MiB/s and latency.  Progress on stderr.\n"
	"\n"
	"  --traddr ADDR      target IPv4/IPv6 address (required)\n"
	"  --trsvcid PORT     target port (default 4420)\n"
	"  --subnqn NQN       subsystem NQN (required)\n"
	"  --hostnqn NQN      host NQN (default /etc/nvme/hostnqn, else\n"
	"                     one from a random host ID)\n"
	"  --nsid N           namespace (default 1)\n"
	"  --qd N             commands outstanding per queue (default 32)\n"
	"  --io-size BYTES    bytes per command, a multiple of the block\n"
	"                     size; k/m suffixes (default 4k)\n"
	"  --pattern P        read, write, randread, randwrite (default\n"
	"                     randread)\n"
	"  --time S           seconds (default 10); SIGINT or SIGTERM ends\n"
	"                     the run sooner, as if the time were up: the\n"
	"                     commands drain, --verify reads back, the\n"
	"                     report covers the time run\n"
	"  --queues N         I/O queues (default one per shard)\n"
	"  --shards N         shard threads (default one per core)\n"
	"  --cpus LIST        one shard per CPU listed, e.g. 1 or 0,2\n"
	"  --poll MODE        idle shards: event (default), busy, adaptive\n"
	"  --reconnect-delay MS  after losing the controller (the target\n"
	"                     disconnected, a timeout, a failed Keep Alive),\n"
	"                     wait this long before reconnecting, doubling\n"
	"                     after each failed attempt, at most 8x (default\n"
	"                     2000); commands in flight are held and sent\n"
	"                     again, so the run goes on\n"
	"  --ctrl-loss-tmo MS give up reconnecting after this long: held\n"
	"                     commands fail with ENODEV (default 600000;\n"
	"                     0: at the first loss)\n"
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
	"  --help             this text\n";

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

int perf_num(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end == 'k' || *end == 'K') {
		v *= 1024;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		v *= 1024 * 1024;
		end++;
	}
	if (*end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_cpus(const char *v, struct perf_args *a)
{
	a->ncpus = 0;
	while (*v) {
		char *end;
		long c = strtol(v, &end, 10);

		if (end == v || c < 0 || c > 4095 || a->ncpus == PERF_MAX_CPUS)
			return 1;
		a->cpus[a->ncpus++] = (int)c;
		if (*end == ',')
			end++;
		else if (*end)
			return 1;
		v = end;
	}
	return a->ncpus == 0;
}

int perf_ctrl_opt(const struct perf_ctrl_opts *c, const char *o, const char *v,
		  int *bad)
{
	uint64_t n = 0;

	if (!strcmp(o, "--traddr")) {
		*c->traddr = v;
	} else if (!strcmp(o, "--trsvcid")) {
		*bad = perf_num(v, 65535, &n);
		*c->trsvcid = v;
	} else if (!strcmp(o, "--subnqn")) {
		*c->subnqn = v;
	} else if (!strcmp(o, "--hostnqn")) {
		*c->hostnqn = v;
	} else if (!strcmp(o, "--nsid")) {
		*bad = perf_num(v, 0xFFFFFFFEu, &n) || n == 0;
		*c->nsid = (uint32_t)n;
	} else if (!strcmp(o, "--queues")) {
		*bad = perf_num(v, 1024, &n) || n == 0;
		*c->queues = (unsigned)n;
	} else if (!strcmp(o, "--shards")) {
		*bad = perf_num(v, 1024, &n) || n == 0;
		*c->shards = (unsigned)n;
	} else {
		return 0;
	}
	return 1;
}

int perf_parse(int argc, char **argv, struct perf_args *a, char *err,
	       size_t errlen)
{
	const struct perf_ctrl_opts co = {
		&a->traddr, &a->trsvcid, &a->subnqn, &a->hostnqn,
		&a->nsid,   &a->queues,	 &a->shards,
	};

	memset(a, 0, sizeof(*a));
	a->trsvcid = "4420";
	a->nsid = 1;
	a->qd = 32;
	a->io_size = 4096;
	a->pattern = PERF_RANDREAD;
	a->time_s = 10;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n = 0;
		int bad = 0, takes = 1;

		if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
			a->help = true;
			takes = 0;
		} else if (!strcmp(o, "--verify")) {
			a->verify = true;
			takes = 0;
		} else if (!strcmp(o, "--zero-copy")) {
			a->zero_copy = true;
			takes = 0;
		} else if (!strcmp(o, "--submit-thread")) {
			a->submit_thread = true;
			takes = 0;
		} else if (!strcmp(o, "--discover")) {
			a->discover = true;
			takes = 0;
		} else if (!strcmp(o, "--json")) {
			a->json = true;
			takes = 0;
		} else if (!strcmp(o, "--quiet")) {
			a->quiet = true;
			takes = 0;
		} else if (!v) {
			snprintf(err, errlen, "%s: missing value", o);
			return -EINVAL;
		} else if (perf_ctrl_opt(&co, o, v, &bad)) {
			/* parsed */
		} else if (!strcmp(o, "--qd")) {
			bad = perf_num(v, 1024, &n) || n == 0;
			a->qd = (unsigned)n;
		} else if (!strcmp(o, "--io-size")) {
			bad = perf_num(v, 16u << 20, &n) || n < 512;
			a->io_size = (uint32_t)n;
		} else if (!strcmp(o, "--pattern")) {
			if (!strcmp(v, "read"))
				a->pattern = PERF_READ;
			else if (!strcmp(v, "write"))
				a->pattern = PERF_WRITE;
			else if (!strcmp(v, "randread"))
				a->pattern = PERF_RANDREAD;
			else if (!strcmp(v, "randwrite"))
				a->pattern = PERF_RANDWRITE;
			else
				bad = 1;
		} else if (!strcmp(o, "--time")) {
			bad = perf_num(v, 86400, &n) || n == 0;
			a->time_s = (unsigned)n;
		} else if (!strcmp(o, "--cpus")) {
			bad = parse_cpus(v, a);
		} else if (!strcmp(o, "--poll")) {
			if (!strcmp(v, "event"))
				a->poll = 0;
			else if (!strcmp(v, "busy"))
				a->poll = 1;
			else if (!strcmp(v, "adaptive"))
				a->poll = 2;
			else
				bad = 1;
		} else if (!strcmp(o, "--reconnect-delay")) {
			bad = perf_num(v, 3600000, &n) || n == 0;
			a->reconnect_delay_ms = (uint32_t)n;
		} else if (!strcmp(o, "--ctrl-loss-tmo")) {
			bad = perf_num(v, 86400000, &n);
			a->ctrl_loss_tmo_ms =
				n ? (uint32_t)n : WHARF_NVMF_HOST_TMO_AT_ONCE;
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
	if (!a->traddr || (!a->subnqn && !a->discover)) {
		snprintf(err, errlen, "--traddr and --subnqn are required");
		return -EINVAL;
	}
	return 0;
}
