/*
 * bench/storm/main.c - storm: the connection-storm benchmark.  Runs the
 * variants one after the other in one process (see storm --help), prints
 * a table per variant and a summary line, writes the JSON.  `storm client
 * ...` is the client process the wharf variants spawn (client.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/storm/rdma.h"
#include "cli/cli.h"

static struct storm_result results[3];

int main(int argc, char **argv)
{
	struct storm_opts o;
	char err[256] = "";
	size_t n = 0;
	unsigned ncpu = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	bool ok = true;

	if (argc > 1 && !strcmp(argv[1], "client"))
		return storm_client_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "cmtime-client"))
		return storm_cmtime_client_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "relay"))
		return storm_relay_main(argc - 1, argv + 1);
	storm_opts_init(&o);
	if (storm_opts_parse(&o, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "storm: %s (%s); see storm --help\n", err,
			strerror(EINVAL));
		return 2;
	}
	if (o.help) {
		storm_usage(stdout);
		return 0;
	}
	if (o.version) {
		cli_version(stdout, "storm");
		return 0;
	}
	{
		unsigned lo, hi;

		if (!storm_port_range_read(
			    "/proc/sys/net/ipv4/ip_local_port_range", &lo,
			    &hi) &&
		    storm_ports_check(o.conns, lo, hi, err, sizeof(err))) {
			fprintf(stderr, "storm: %s\n", err);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!o.clients_at) {
		static int allowed[STORM_MAX_CPUS];
		int na = storm_cpus_allowed(allowed, STORM_MAX_CPUS);
		char where[256];

		storm_placement_plan(allowed, na > 0 ? (unsigned)na : 0,
				     !o.share_cpus, o.shards, &o.place);
		/* This thread and what it spawns (cmtime's server) stay off
		 * the clients' CPUs. */
		if (storm_placement_split(&o.place) &&
		    storm_cpus_bind(o.place.server, o.place.nserver)) {
			fprintf(stderr, "storm: cannot bind to the server's "
					"CPUs; every process on every CPU\n");
			o.place.nserver = o.place.nclient = 0;
		}
		storm_placement_format(&o.place, where, sizeof(where));
		printf("storm: one node: %s%s\n", where,
		       storm_placement_split(&o.place)
			       ? " (--share-cpus: every process on "
				 "every CPU)"
			       : "");
	}
	if (o.variants & STORM_V_WHARF) {
		struct storm_result *r = &results[n++];
		unsigned s = o.shards			       ? o.shards
			     : storm_placement_split(&o.place) ? o.place.nserver
							       : ncpu;

		snprintf(r->name, sizeof(r->name), "wharf (%u shards, pool)",
			 s);
		storm_run_wharf(&o, s, true, r);
		storm_print(stdout, r);
	}
	if (o.variants & STORM_V_WHARF1) {
		struct storm_result *r = &results[n++];

		snprintf(r->name, sizeof(r->name), "wharf1 (1 shard, no pool)");
		storm_run_wharf(&o, 1, false, r);
		storm_print(stdout, r);
	}
	if (o.variants & STORM_V_CMTIME) {
		struct storm_result *r = &results[n++];

		snprintf(r->name, sizeof(r->name), "cmtime");
		storm_run_cmtime(&o, r);
		storm_print(stdout, r);
	}
	if (o.clients_at && storm_relay_quit(o.clients_at))
		fprintf(stderr, "storm: the relay at %s did not take 'quit'\n",
			o.clients_at);
	putchar('\n');
	storm_print_summary(stdout, results, n);
	if (o.json) {
		struct storm_doc doc = {.o = &o, .rs = results, .n = n};
		int rc = cli_json_write(o.json, CLI_JSON_PRETTY, storm_json_doc,
					&doc);

		if (rc) {
			fprintf(stderr, "storm: %s: %s\n", o.json,
				strerror(-rc));
			return 1;
		}
	}
	if (o.plot) {
		FILE *f = fopen(o.plot, "w");

		if (!f) {
			fprintf(stderr, "storm: %s: %s\n", o.plot,
				strerror(errno));
			return 1;
		}
		storm_gnuplot(f, results, n, o.png);
		fclose(f);
	}
	for (size_t i = 0; i < n; i++)
		if (!results[i].ran || results[i].error[0])
			ok = false;
	return ok ? 0 : 1;
}
