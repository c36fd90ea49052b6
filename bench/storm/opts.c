/*
 * bench/storm/opts.c - storm's command line: defaults, parsing with a
 * message for every bad value, --help, and the two deterministic choices
 * the options imply (which connections are rejected, how many client
 * processes are killed).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench/storm/storm.h"
#include "cli/cli.h"

void storm_opts_init(struct storm_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->conns = 2000;
	o->clients = 1;
	o->addr = "198.18.0.1";
	o->cmtime = "cmtime";
	o->variants = STORM_V_ALL;
	o->timeout_s = 300;
	o->png = "storm.png";
}

void storm_usage(FILE *f)
{
	fputs("usage: storm [OPTIONS]\n"
	      "\n"
	      "Connection storm: a wharf server and client processes on the "
	      "first RDMA\n"
	      "device (rxe0 in the soft-RoCE guest), one variant after the "
	      "other in one\n"
	      "run: wharf (S shards, QP pool), wharf1 (one shard, no pool), "
	      "cmtime (the\n"
	      "stock rdmacm-utils tool, same connection count).  A table per "
	      "variant on\n"
	      "stdout, progress on stderr, a summary line at the end.\n"
	      "\n"
	      "  --conns N      connections per variant (default 2000); each "
	      "takes a local\n"
	      "                 port: at most the size of "
	      "net.ipv4.ip_local_port_range - 1\n"
	      "  --clients T    client processes, N/T connections each "
	      "(default 1, as\n"
	      "                 cmtime's one client process, and one more per "
	      "10,000\n"
	      "                 connections; more processes share the client "
	      "machine's\n"
	      "                 CPUs among themselves)\n"
	      "  --shards S     server shards of the wharf variant (default: "
	      "one per CPU\n"
	      "                 of the server's)\n"
	      "  --share-cpus   one node: the server and the clients on every "
	      "CPU; by\n"
	      "                 default the server takes the first half of the "
	      "CPUs (or\n"
	      "                 --shards of them) and the client processes the "
	      "rest, one\n"
	      "                 each in turn; cmtime's server and client the "
	      "same\n"
	      "  --ramp R       arrivals per second over all clients "
	      "(default 0: at once)\n"
	      "  --reject F     fraction the server rejects with private "
	      "data (0..1)\n"
	      "  --kill F       fraction of client processes killed "
	      "mid-handshake (0..1);\n"
	      "                 the server must reclaim everything, checked "
	      "and reported\n"
	      "  --variants L   comma list of wharf,wharf1,cmtime (default "
	      "all)\n"
	      "  --addr A       server address (default 198.18.0.1)\n"
	      "  --cmtime PATH  the cmtime binary (default cmtime)\n"
	      "  --clients-at HOST:PORT\n"
	      "                 run the client processes on another machine, "
	      "through\n"
	      "                 `storm relay PORT TIMEOUT_S` there (TCP), "
	      "cmtime's\n"
	      "                 client too; no --kill\n"
	      "  --timeout S    per variant (default 300)\n"
	      "  --client-timeout MS\n"
	      "                 the clients' address and route resolution "
	      "timeouts\n"
	      "                 (default: wharf's, 2000 ms each)\n"
	      "  --window N|adaptive|none\n"
	      "                 each client shard's connect window: handshakes "
	      "it runs at\n"
	      "                 once, the rest wait in order; N fixed, "
	      "'adaptive' (the\n"
	      "                 default: wharf's, 32 growing while handshakes "
	      "keep their\n"
	      "                 time, up to 1024), 'none' all at once\n"
	      "  --json FILE    write every variant's numbers as JSON\n"
	      "  --gnuplot FILE write a gnuplot script (data inline) that "
	      "draws --png\n"
	      "  --png FILE     the image it draws (default storm.png)\n"
	      "  --msg          once established, one message each way "
	      "(client SEND,\n"
	      "                 server SEND back), timed as 'msg rtt'\n"
	      "  --quick        100 connections, 2 clients (unless given)\n"
	      "  --version      the version\n"
	      "  --help         this text\n"
	      "\n"
	      "Exit status: 0 when every variant that ran accounted for "
	      "every attempt and\n"
	      "established every connection but those --reject and --kill "
	      "fail on purpose\n"
	      "(and, with --kill, the server reclaimed everything); 1 "
	      "otherwise; 2 for\n"
	      "bad options.\n",
	      f);
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	uint32_t v;

	if (cli_u32(s, min, max, &v))
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || isnan(v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_variants(const char *s, unsigned *out)
{
	char buf[128], *save = NULL, *tok;
	unsigned v = 0;

	if (!s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "wharf"))
			v |= STORM_V_WHARF;
		else if (!strcmp(tok, "wharf1"))
			v |= STORM_V_WHARF1;
		else if (!strcmp(tok, "cmtime"))
			v |= STORM_V_CMTIME;
		else
			return -EINVAL;
	}
	if (!v)
		return -EINVAL;
	*out = v;
	return 0;
}

enum {
	OPT_QUICK = 0x100,
	OPT_MSG,
	OPT_VERSION,
	OPT_CONNS,
	OPT_CLIENTS,
	OPT_SHARDS,
	OPT_RAMP,
	OPT_REJECT,
	OPT_KILL,
	OPT_CLIENT_TIMEOUT,
	OPT_WINDOW,
	OPT_TIMEOUT,
	OPT_VARIANTS,
	OPT_CLIENTS_AT,
	OPT_JSON,
	OPT_GNUPLOT,
	OPT_PNG,
	OPT_ADDR,
	OPT_CMTIME,
	OPT_SHARE_CPUS,
};

static const struct option storm_longopts[] = {
	{"help", no_argument, NULL, 'h'},
	{"quick", no_argument, NULL, OPT_QUICK},
	{"msg", no_argument, NULL, OPT_MSG},
	{"version", no_argument, NULL, OPT_VERSION},
	{"conns", required_argument, NULL, OPT_CONNS},
	{"clients", required_argument, NULL, OPT_CLIENTS},
	{"shards", required_argument, NULL, OPT_SHARDS},
	{"ramp", required_argument, NULL, OPT_RAMP},
	{"reject", required_argument, NULL, OPT_REJECT},
	{"kill", required_argument, NULL, OPT_KILL},
	{"client-timeout", required_argument, NULL, OPT_CLIENT_TIMEOUT},
	{"window", required_argument, NULL, OPT_WINDOW},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"variants", required_argument, NULL, OPT_VARIANTS},
	{"clients-at", required_argument, NULL, OPT_CLIENTS_AT},
	{"json", required_argument, NULL, OPT_JSON},
	{"gnuplot", required_argument, NULL, OPT_GNUPLOT},
	{"png", required_argument, NULL, OPT_PNG},
	{"addr", required_argument, NULL, OPT_ADDR},
	{"cmtime", required_argument, NULL, OPT_CMTIME},
	{"share-cpus", no_argument, NULL, OPT_SHARE_CPUS},
	{NULL, 0, NULL, 0},
};

/* One option with its value @v: 0 or -EINVAL. */
static int one_opt(struct storm_opts *o, int c, const char *v)
{
	switch (c) {
	case 'h':
		o->help = true;
		return 0;
	case OPT_QUICK:
		o->quick = true;
		return 0;
	case OPT_MSG:
		o->msg = true;
		return 0;
	case OPT_SHARE_CPUS:
		o->share_cpus = true;
		return 0;
	case OPT_VERSION:
		o->version = true;
		return 0;
	case OPT_CONNS:
		return parse_uint(v, 1, 1000000, &o->conns);
	case OPT_CLIENTS:
		return parse_uint(v, 1, 256, &o->clients);
	case OPT_SHARDS:
		return parse_uint(v, 1, 1024, &o->shards);
	case OPT_RAMP:
		return parse_double(v, 0, 1e9, &o->ramp);
	case OPT_REJECT:
		return parse_double(v, 0, 1, &o->reject);
	case OPT_KILL:
		return parse_double(v, 0, 1, &o->kill);
	case OPT_CLIENT_TIMEOUT:
		return parse_uint(v, 1, 600000, &o->client_timeout_ms);
	case OPT_WINDOW:
		if (!strcmp(v, "none")) {
			o->window = STORM_WINDOW_NONE;
			return 0;
		}
		if (!strcmp(v, "adaptive")) {
			o->window = 0;
			return 0;
		}
		return parse_uint(v, 1, 1000000, &o->window);
	case OPT_TIMEOUT:
		return parse_uint(v, 1, 86400, &o->timeout_s);
	case OPT_VARIANTS:
		return parse_variants(v, &o->variants);
	case OPT_CLIENTS_AT:
		o->clients_at = v;
		return strchr(v, ':') ? 0 : -EINVAL;
	case OPT_JSON:
		o->json = v;
		return 0;
	case OPT_GNUPLOT:
		o->plot = v;
		return 0;
	case OPT_PNG:
		o->png = v;
		return 0;
	case OPT_ADDR:
		o->addr = v;
		return 0;
	case OPT_CMTIME:
		o->cmtime = v;
		return 0;
	default:
		return -EINVAL;
	}
}

struct storm_parse_ctx {
	struct storm_opts *o;
	bool conns_set, clients_set;
};

static int storm_opt(void *arg, int c, const char *v)
{
	struct storm_parse_ctx *p = arg;

	p->conns_set |= c == OPT_CONNS;
	p->clients_set |= c == OPT_CLIENTS;
	return one_opt(p->o, c, v);
}

int storm_opts_parse(struct storm_opts *o, int argc, char **argv, char *err,
		     size_t errlen)
{
	struct storm_parse_ctx p = {.o = o};
	bool conns_set, clients_set;

	if (cli_parse(argc, argv, "h", storm_longopts, storm_opt, &p, err,
		      errlen))
		return -EINVAL;
	conns_set = p.conns_set;
	clients_set = p.clients_set;
	if (o->quick) {
		if (!conns_set)
			o->conns = 100;
		if (!clients_set)
			o->clients = 2;
	}
	/* One client process holds at most STORM_CONNS_PER_CLIENT unless
	 * told otherwise (its receive queue and CQs must fit the device). */
	if (!clients_set && o->conns > o->clients * STORM_CONNS_PER_CLIENT)
		o->clients = (o->conns + STORM_CONNS_PER_CLIENT - 1) /
			     STORM_CONNS_PER_CLIENT;
	if (o->clients_at) {
		/* A killed client is a process on the other machine. */
		if (o->kill > 0)
			return fail(err, errlen,
				    "--kill needs local clients (no "
				    "--clients-at)");
	}
	if (o->clients > o->conns)
		return fail(err, errlen, "--clients %u is more than --conns %u",
			    o->clients, o->conns);
	return 0;
}

bool storm_should_reject(uint32_t g, double fraction)
{
	if (fraction <= 0)
		return false;
	return floor((double)(g + 1) * fraction) > floor((double)g * fraction);
}

unsigned storm_kill_count(unsigned clients, double fraction)
{
	unsigned k;

	if (fraction <= 0 || !clients)
		return 0;
	k = (unsigned)floor(clients * fraction);
	if (!k)
		k = 1;
	if (clients >= 2 && k >= clients)
		k = clients - 1;
	return k;
}
