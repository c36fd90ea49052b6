/*
 * bench/storm/opts.c - storm's command line: defaults, parsing with a
 * message for every bad value, --help, and the two deterministic choices
 * the options imply (which connections are rejected, how many client
 * processes are killed).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench/storm/storm.h"

void storm_opts_init(struct storm_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->conns = 2000;
	o->clients = 4;
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
	      "(default 4)\n"
	      "  --shards S     server shards of the wharf variant (default: "
	      "one per CPU)\n"
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
	      "                 `storm relay PORT TIMEOUT_S` there (TCP); the "
	      "wharf\n"
	      "                 variants only (default wharf,wharf1), no "
	      "--kill\n"
	      "  --timeout S    per variant (default 300)\n"
	      "  --client-timeout MS\n"
	      "                 the clients' address and route resolution "
	      "timeouts\n"
	      "                 (default: wharf's, 2000 ms each)\n"
	      "  --window N     each client shard's connect window: handshakes "
	      "it runs at\n"
	      "                 once, the rest wait in order ('none': all at "
	      "once;\n"
	      "                 default: wharf's, 64)\n"
	      "  --json FILE    write every variant's numbers as JSON\n"
	      "  --gnuplot FILE write a gnuplot script (data inline) that "
	      "draws --png\n"
	      "  --png FILE     the image it draws (default storm.png)\n"
	      "  --msg          once established, one message each way "
	      "(client SEND,\n"
	      "                 server SEND back), timed as 'msg rtt'\n"
	      "  --quick        100 connections, 2 clients (unless given)\n"
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
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (unsigned)v;
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

int storm_opts_parse(struct storm_opts *o, int argc, char **argv, char *err,
		     size_t errlen)
{
	bool conns_set = false, clients_set = false, variants_set = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = 0;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			o->help = true;
			continue;
		}
		if (!strcmp(a, "--quick")) {
			o->quick = true;
			continue;
		}
		if (!strcmp(a, "--msg")) {
			o->msg = true;
			continue;
		}
		if (strncmp(a, "--", 2) ||
		    (strcmp(a, "--conns") && strcmp(a, "--clients") &&
		     strcmp(a, "--shards") && strcmp(a, "--ramp") &&
		     strcmp(a, "--reject") && strcmp(a, "--kill") &&
		     strcmp(a, "--json") && strcmp(a, "--addr") &&
		     strcmp(a, "--cmtime") && strcmp(a, "--variants") &&
		     strcmp(a, "--timeout") && strcmp(a, "--client-timeout") &&
		     strcmp(a, "--window") && strcmp(a, "--gnuplot") &&
		     strcmp(a, "--png") && strcmp(a, "--clients-at")))
			return fail(err, errlen, "unknown option '%s'", a);
		if (!v)
			return fail(err, errlen, "%s needs a value", a);
		i++;
		if (!strcmp(a, "--conns")) {
			rc = parse_uint(v, 1, 1000000, &o->conns);
			conns_set = true;
		} else if (!strcmp(a, "--clients")) {
			rc = parse_uint(v, 1, 256, &o->clients);
			clients_set = true;
		} else if (!strcmp(a, "--shards")) {
			rc = parse_uint(v, 1, 1024, &o->shards);
		} else if (!strcmp(a, "--ramp")) {
			rc = parse_double(v, 0, 1e9, &o->ramp);
		} else if (!strcmp(a, "--reject")) {
			rc = parse_double(v, 0, 1, &o->reject);
		} else if (!strcmp(a, "--kill")) {
			rc = parse_double(v, 0, 1, &o->kill);
		} else if (!strcmp(a, "--client-timeout")) {
			rc = parse_uint(v, 1, 600000, &o->client_timeout_ms);
		} else if (!strcmp(a, "--window")) {
			if (!strcmp(v, "none"))
				o->window = STORM_WINDOW_NONE;
			else
				rc = parse_uint(v, 1, 1000000, &o->window);
		} else if (!strcmp(a, "--timeout")) {
			rc = parse_uint(v, 1, 86400, &o->timeout_s);
		} else if (!strcmp(a, "--variants")) {
			rc = parse_variants(v, &o->variants);
			variants_set = true;
		} else if (!strcmp(a, "--clients-at")) {
			o->clients_at = v;
			rc = strchr(v, ':') ? 0 : -EINVAL;
		} else if (!strcmp(a, "--json")) {
			o->json = v;
		} else if (!strcmp(a, "--gnuplot")) {
			o->plot = v;
		} else if (!strcmp(a, "--png")) {
			o->png = v;
		} else if (!strcmp(a, "--addr")) {
			o->addr = v;
		} else if (!strcmp(a, "--cmtime")) {
			o->cmtime = v;
		}
		if (rc)
			return fail(err, errlen, "bad value '%s' for %s", v, a);
	}
	if (o->quick) {
		if (!conns_set)
			o->conns = 100;
		if (!clients_set)
			o->clients = 2;
	}
	if (o->clients_at) {
		/* cmtime runs its own client here; a killed client is a
		 * process on the other machine. */
		if (!variants_set)
			o->variants = STORM_V_WHARF | STORM_V_WHARF1;
		if (o->variants & STORM_V_CMTIME)
			return fail(
				err, errlen,
				"--clients-at runs the wharf variants only");
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
