/*
 * targets/nvmf/tgt_args.c - wharf-nvmf-tgt's command line: a config file
 * (-c) and/or flags that become configuration lines (config.h), parsed by
 * the core's parser so flags and files get the same checks and messages.
 * File lines come first; flag lines follow as "flags:N" (N counts the
 * flags), so a flag subsystem starts after the file's subsystems.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wharf/cm.h>

#include "cli/cli.h"
#include "targets/nvmf/tgt_main.h"

void tgt_usage(FILE *f)
{
	fputs("usage: wharf-nvmf-tgt [-c FILE] [OPTIONS]\n"
	      "An NVMe over Fabrics RDMA target on wharf (Linux nvme-rdma, "
	      "SPDK hosts).\n"
	      "\n"
	      "  -c, --config FILE       configuration file (syntax below)\n"
	      "  -l, --listen ADDR[:PORT]  listen address (port 4420), "
	      "repeatable\n"
	      "  -s, --subsystem NQN     start a subsystem; the next "
	      "-n/-a/-A/-e belong to it\n"
	      "  -n, --namespace 'NSID BACKING [block=N] "
	      "[io=direct|buffered]'\n"
	      "                          e.g. '1 ram:64M', '2 file:/srv/img' "
	      "or\n"
	      "                          '3 file:/dev/nvme0n1' (a block "
	      "device: direct I/O\n"
	      "                          and its own block size unless told "
	      "otherwise;\n"
	      "                          null:SIZE discards writes, reads "
	      "zeroes: benchmarks)\n"
	      "  -a, --allow-host NQN    allow a host NQN (repeatable)\n"
	      "  -A, --allow-any-host    allow every host (explicit)\n"
	      "  -e, --export ADDR[:PORT]  serve the subsystem on this "
	      "listen address\n"
	      "                          only (repeatable; default: on "
	      "every one)\n"
	      "  -t, --shards N|auto     shard threads (default: one per "
	      "core)\n"
	      "      --cpus LIST         pin shard i to the i-th CPU of LIST "
	      "(e.g. 0,2-3)\n"
	      "  -q, --queue-depth N     largest I/O queue (default 128)\n"
	      "  -i, --io-queues N       I/O queues per controller (default "
	      "8)\n"
	      "      --in-capsule BYTES  in-capsule data per I/O capsule "
	      "(default 4096)\n"
	      "      --max-io-size SIZE  largest transfer (default 128K)\n"
	      "  -p, --poll event|busy|adaptive  idle shards (default event)\n"
	      "      --spin-us N         adaptive: spin N us before blocking "
	      "(default 1000)\n"
	      "      --srq-depth N       receive buffers per shard (default "
	      "1024)\n"
	      "      --srq-max N         receive buffers a shard may grow to "
	      "(default\n"
	      "                          16384)\n"
	      "      --data-buffers N    data buffers per shard (default 256)\n"
	      "      --handshake-cap N   queue handshakes a shard runs at "
	      "once; "
	      "later\n"
	      "                          connects wait (default 1024)\n"
	      "      --defer-max-ms MS   longest wait of a connect before it "
	      "is "
	      "refused\n"
	      "                          with NO_RSC (default 20000, at most "
	      "60000)\n"
	      "      --defer-max N       connects waiting at once per listener "
	      "(default\n"
	      "                          4096)\n"
	      "      --rpc PATH          serve management requests "
	      "(JSON-RPC 2.0) on the\n"
	      "                          Unix socket PATH, mode 0600 "
	      "(wharf-nvmf-rpc --help)\n"
	      "  -v, --verbose           log connections\n"
	      "      --version           the version\n"
	      "  -h, --help              this text\n"
	      "\n"
	      "Config file: one directive per line, '#' comments:\n"
	      "  listen 198.18.0.1 4420\n"
	      "  shards 2 | cpus 0-1 | queue-depth 128 | io-queues 8 | "
	      "in-capsule 4096 | "
	      "max-io-size 128K\n"
	      "  subsystem nqn.2024-01.io.wharf:disk0\n"
	      "    serial WHARF0001\n"
	      "    namespace 1 ram:1G\n"
	      "    allow-host nqn.2014-08.org.nvmexpress:uuid:...   (or "
	      "allow-any-host)\n"
	      "    export 198.18.0.1 4420   (optional: only there)\n"
	      "\n"
	      "Each admin queue Connect is logged on stderr (controller "
	      "created, or\n"
	      "refused and why, with the host NQN, host ID and address; at "
	      "most 20\n"
	      "lines a second per shard).\n"
	      "Status and stats lines go to stderr, as every wharf tool's.\n"
	      "Signals: SIGUSR1 prints a stats line; SIGINT/SIGTERM shut down "
	      "cleanly (stats line at exit).\n",
	      f);
}

/* One flag as a configuration line. */
static int flag_line(struct tgt_args *a, const char *fmt, const char *v)
{
	char line[NVMF_CFG_LINE_MAX];
	char err[512];
	int rc;

	if (snprintf(line, sizeof(line), fmt, v) >= (int)sizeof(line)) {
		fprintf(stderr, "wharf-nvmf-tgt: option value too long\n");
		return -EINVAL;
	}
	rc = nvmf_config_line(&a->cfg, line, ++a->nflags, err, sizeof(err));
	if (rc)
		fprintf(stderr, "wharf-nvmf-tgt: %s\n", err);
	return rc;
}

/* ADDR[:PORT], [V6]:PORT or a bare V6 address -> "WORD ADDR PORT" (listen
 * and export). */
static int addr_flag(struct tgt_args *a, const char *word, const char *v)
{
	char buf[128], line[192];
	const char *addr = buf, *port = NULL;
	char *c;

	snprintf(buf, sizeof(buf), "%s", v);
	if (buf[0] == '[') {
		addr = buf + 1;
		c = strchr(buf, ']');
		if (c) {
			*c = 0;
			if (c[1] == ':')
				port = c + 2;
		}
	} else if ((c = strchr(buf, ':')) && !strchr(c + 1, ':')) {
		*c = 0;
		port = c + 1;
	}
	snprintf(line, sizeof(line), "%s %s %s", word, addr, port ? port : "");
	return flag_line(a, "%s", line);
}

#define TGT_SHORTOPTS "c:l:s:n:a:Ae:t:q:i:p:vh"

static const struct option longopts[] = {
	{"config", required_argument, NULL, 'c'},
	{"listen", required_argument, NULL, 'l'},
	{"subsystem", required_argument, NULL, 's'},
	{"namespace", required_argument, NULL, 'n'},
	{"allow-host", required_argument, NULL, 'a'},
	{"allow-any-host", no_argument, NULL, 'A'},
	{"export", required_argument, NULL, 'e'},
	{"shards", required_argument, NULL, 't'},
	{"cpus", required_argument, NULL, 'C'},
	{"queue-depth", required_argument, NULL, 'q'},
	{"io-queues", required_argument, NULL, 'i'},
	{"in-capsule", required_argument, NULL, 'I'},
	{"max-io-size", required_argument, NULL, 'M'},
	{"poll", required_argument, NULL, 'p'},
	{"srq-depth", required_argument, NULL, 'D'},
	{"srq-max", required_argument, NULL, 'Y'},
	{"data-buffers", required_argument, NULL, 'B'},
	{"spin-us", required_argument, NULL, 'S'},
	{"handshake-cap", required_argument, NULL, 'H'},
	{"defer-max-ms", required_argument, NULL, 'W'},
	{"defer-max", required_argument, NULL, 'X'},
	{"rpc", required_argument, NULL, 'R'},
	{"verbose", no_argument, NULL, 'v'},
	{"version", no_argument, NULL, 'V'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int parse_u32(const char *s, uint32_t *out)
{
	return cli_u32(s, 0, UINT32_MAX, out);
}

static int poll_mode(const char *s, enum wharf_poll_mode *out)
{
	if (!strcmp(s, "event"))
		*out = WHARF_POLL_EVENT;
	else if (!strcmp(s, "busy"))
		*out = WHARF_POLL_BUSY;
	else if (!strcmp(s, "adaptive"))
		*out = WHARF_POLL_ADAPTIVE;
	else
		return -EINVAL;
	return 0;
}

/* The option a numeric flag sets. */
static uint32_t *u32_opt(struct nvmf_rdma_opts *o, int c)
{
	switch (c) {
	case 'D':
		return &o->srq_depth;
	case 'B':
		return &o->data_buffers;
	case 'H':
		return &o->handshake_cap;
	case 'W':
		return &o->defer_max_ms;
	case 'X':
		return &o->defer_max;
	case 'Y':
		return &o->srq_max;
	default:
		return &o->adaptive_spin_us;
	}
}

/* Loads the file (a->config) first: its lines are numbered in the file. */
static int load_file(struct tgt_args *a)
{
	char err[512];
	int rc;

	if (!a->config) {
		nvmf_config_init(&a->cfg, "flags");
		return 0;
	}
	rc = nvmf_config_load(a->config, &a->cfg, err, sizeof(err));
	if (rc)
		fprintf(stderr, "wharf-nvmf-tgt: %s\n", err);
	snprintf(a->cfg.source, sizeof(a->cfg.source), "flags");
	return rc;
}

int tgt_args_parse(struct tgt_args *a, int argc, char **argv)
{
	char err[512];
	int c, rc = 0;

	memset(a, 0, sizeof(*a));
	a->opts.size = sizeof(a->opts);
	/* First pass: --help, --version and the file (the flags after it
	 * add to it); the second reads the flags in order. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, TGT_SHORTOPTS, longopts, NULL)) !=
	       -1) {
		if (c == 'h') {
			tgt_usage(stdout);
			return 1;
		}
		if (c == 'V') {
			cli_version(stdout, "wharf-nvmf-tgt");
			return 1;
		}
		if (c == 'c')
			a->config = optarg;
	}
	rc = load_file(a);
	if (rc)
		return rc;
	optind = 0;
	opterr = 1;
	while (!rc && (c = getopt_long(argc, argv, TGT_SHORTOPTS, longopts,
				       NULL)) != -1) {
		switch (c) {
		case 'c':
			break; /* loaded first */
		case 'l':
			rc = addr_flag(a, "listen", optarg);
			break;
		case 'e':
			rc = addr_flag(a, "export", optarg);
			break;
		case 's':
			rc = flag_line(a, "subsystem %s", optarg);
			break;
		case 'n':
			rc = flag_line(a, "namespace %s", optarg);
			break;
		case 'a':
			rc = flag_line(a, "allow-host %s", optarg);
			break;
		case 'A':
			rc = flag_line(a, "allow-any-host%s", "");
			break;
		case 't':
			rc = flag_line(a, "shards %s", optarg);
			break;
		case 'C':
			rc = flag_line(a, "cpus %s", optarg);
			break;
		case 'q':
			rc = flag_line(a, "queue-depth %s", optarg);
			break;
		case 'i':
			rc = flag_line(a, "io-queues %s", optarg);
			break;
		case 'I':
			rc = flag_line(a, "in-capsule %s", optarg);
			break;
		case 'M':
			rc = flag_line(a, "max-io-size %s", optarg);
			break;
		case 'p':
			rc = poll_mode(optarg, &a->opts.poll_mode);
			if (rc)
				fprintf(stderr,
					"wharf-nvmf-tgt: --poll: event, busy "
					"or adaptive\n");
			break;
		case 'D':
		case 'B':
		case 'S':
		case 'H':
		case 'W':
		case 'X':
		case 'Y':
			rc = parse_u32(optarg, u32_opt(&a->opts, c));
			if (rc)
				fprintf(stderr,
					"wharf-nvmf-tgt: bad number '%s'\n",
					optarg);
			break;
		case 'R':
			a->rpc = optarg;
			break;
		case 'v':
			a->opts.verbose = true;
			break;
		default:
			rc = -EINVAL;
		}
	}
	if (!rc && a->opts.srq_max &&
	    a->opts.srq_max < (a->opts.srq_depth ? a->opts.srq_depth : 1024u)) {
		fprintf(stderr,
			"wharf-nvmf-tgt: --srq-max: below the SRQ depth\n");
		rc = -EINVAL;
	}
	if (!rc && a->opts.defer_max_ms > WHARF_DEFER_MAX_MS_LIMIT) {
		fprintf(stderr, "wharf-nvmf-tgt: --defer-max-ms: at most %u\n",
			WHARF_DEFER_MAX_MS_LIMIT);
		rc = -EINVAL;
	}
	if (!rc && optind < argc) {
		fprintf(stderr, "wharf-nvmf-tgt: unexpected argument '%s'\n",
			argv[optind]);
		rc = -EINVAL;
	}
	if (!rc) {
		if (a->config)
			snprintf(a->cfg.source, sizeof(a->cfg.source), "%s",
				 a->config);
		rc = nvmf_config_finish(&a->cfg, err, sizeof(err));
		if (rc)
			fprintf(stderr, "wharf-nvmf-tgt: %s\n", err);
	}
	if (rc)
		fprintf(stderr, "Try 'wharf-nvmf-tgt --help'.\n");
	return rc;
}
