/*
 * qp_demux: the cost of finding a completion's QP by wc.qp_num, the two
 * ways wharf could do it, in the same run:
 *
 *  - qp's shard-local open-addressing map (qp/qpn_map.h): every QP on a
 *    shard's CQ belongs to that shard, so no atomics and no RCU;
 *  - cm's global lock-free RCU table keyed by (device, QP number)
 *    (cm/conn_table.h), under urcu_qsbr_read_lock().
 *
 * N QPs (QP numbers as a device hands them out: consecutive from a random
 * base), then lookups in a random order (completions from many QPs
 * interleave).  Host only: no device needed.  Progress on stderr, table on
 * stdout.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu/urcu-qsbr.h>

#include <wharf/core.h>

#include "cli/cli.h"
#include "cli/json.h"

#include "cm/conn_rcu.h"
#include "cm/conn_table.h"
#include "qp/qpn_map.h"

struct conn {
	struct wcm_conn_entry e;
	uint32_t qpn;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

static void free_conn(struct wcm_conn_entry *e)
{
	(void)e; /* the array owns them */
}

#define MAX_SIZES 32

struct row {
	uint32_t qps;
	double map_ns, rcu_ns;
};

struct doc {
	uint64_t lookups;
	struct row rows[MAX_SIZES];
	unsigned n;
};

static void json_doc(struct cli_json *j, const void *arg)
{
	const struct doc *d = arg;

	cli_json_obj(j, NULL);
	cli_json_str(j, "tool", "qp_demux");
	cli_json_u64(j, "lookups", d->lookups);
	cli_json_arr(j, "tables");
	for (unsigned i = 0; i < d->n; i++) {
		cli_json_obj(j, NULL);
		cli_json_u64(j, "qps", d->rows[i].qps);
		cli_json_num(j, "map_ns_per_lookup", d->rows[i].map_ns);
		cli_json_num(j, "rcu_ns_per_lookup", d->rows[i].rcu_ns);
		cli_json_end(j);
	}
	cli_json_end(j);
	cli_json_end(j);
}

static void usage(const char *argv0)
{
	printf("usage: %s [--lookups N] [--sizes N,N,...] [--json FILE]\n"
	       "  ns per QP-number lookup: shard-local map vs cm's RCU "
	       "table.\n"
	       "  --lookups  lookups per measurement (default 20000000)\n"
	       "  --sizes    QPs per table (default 64,1024,16384)\n"
	       "  --json     also write the results as JSON (- = stdout)\n",
	       argv0);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"lookups", 1, NULL, 'l'}, {"sizes", 1, NULL, 's'},
		{"json", 1, NULL, 'J'},	   {"help", 0, NULL, 'h'},
		{"version", 0, NULL, 'V'}, {NULL, 0, NULL, 0}};
	uint64_t lookups = 20000000;
	char sizes_buf[128] = "64,1024,16384";
	const char *json = NULL;
	struct doc d = {.lookups = 0};
	int o;

	while ((o = getopt_long(argc, argv, "l:s:h", opts, NULL)) != -1) {
		switch (o) {
		case 'l':
			if (cli_u64(optarg, 1, UINT64_MAX, &lookups)) {
				usage(argv[0]);
				return 2;
			}
			break;
		case 's':
			snprintf(sizes_buf, sizeof(sizes_buf), "%s", optarg);
			break;
		case 'J':
			json = optarg;
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		case 'V':
			cli_version(stdout, "qp_demux");
			return 0;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (!lookups || wcm_rcu_register_thread()) {
		usage(argv[0]);
		return 2;
	}
	printf("%8s %14s %14s\n", "qps", "map ns/lookup", "rcu ns/lookup");
	for (char *tok = strtok(sizes_buf, ","); tok; tok = strtok(NULL, ",")) {
		uint32_t n = 0;
		struct conn *c = cli_u32(tok, 1, 1u << 24, &n)
					 ? NULL
					 : calloc(n, sizeof(*c));
		uint32_t *order = malloc(sizeof(uint32_t) * 65536);
		struct wcm_conn_table *t = NULL;
		struct wcm_conn_id_gen gen;
		struct wqp_qpn_map m;
		uint32_t base = rnd() & 0x7fffff;
		uintptr_t sink = 0;
		uint64_t t0, t_map, t_rcu;

		if (!n || !c || !order || wqp_qpn_map_init(&m, n, NULL) ||
		    wcm_conn_table_create(n, &t) ||
		    wcm_conn_id_gen_init(&gen, 0)) {
			fprintf(stderr, "setup failed for %u\n", n);
			return 1;
		}
		fprintf(stderr, "%u QPs ...\n", n);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t id;

			c[i].qpn = (base + i) & 0xffffff;
			if (wcm_conn_id_gen_next(&gen, &id) ||
			    wcm_conn_table_insert(t, &c[i].e, id) ||
			    wcm_conn_table_bind_qp(t, &c[i].e, 0, c[i].qpn) ||
			    wqp_qpn_map_insert(&m, c[i].qpn, &c[i])) {
				fprintf(stderr, "insert failed\n");
				return 1;
			}
		}
		for (uint32_t i = 0; i < 65536; i++)
			order[i] = c[rnd() % n].qpn;
		t0 = wharf_now_ns();
		for (unsigned long i = 0; i < lookups; i++)
			sink += (uintptr_t)wqp_qpn_map_find(&m,
							    order[i & 65535]);
		t_map = wharf_now_ns() - t0;
		t0 = wharf_now_ns();
		urcu_qsbr_read_lock();
		for (unsigned long i = 0; i < lookups; i++) {
			sink += (uintptr_t)wcm_conn_table_lookup_qp(
				t, 0, order[i & 65535]);
			if ((i & 1023) == 1023) {
				urcu_qsbr_read_unlock();
				wcm_rcu_quiescent_state();
				urcu_qsbr_read_lock();
			}
		}
		urcu_qsbr_read_unlock();
		t_rcu = wharf_now_ns() - t0;
		printf("%8u %14.1f %14.1f\n", n, (double)t_map / lookups,
		       (double)t_rcu / lookups);
		if (d.n < MAX_SIZES)
			d.rows[d.n++] = (struct row){n, (double)t_map / lookups,
						     (double)t_rcu / lookups};
		if (!sink)
			fprintf(stderr, "(lookups found nothing)\n");
		for (uint32_t i = 0; i < n; i++)
			wcm_conn_table_remove(t, &c[i].e, free_conn);
		wcm_rcu_thread_offline();
		wcm_rcu_barrier();
		wcm_rcu_thread_online();
		wcm_conn_table_destroy(t);
		wqp_qpn_map_fini(&m);
		free(order);
		free(c);
	}
	wcm_rcu_unregister_thread();
	d.lookups = lookups;
	if (json) {
		int err = cli_json_write(json, CLI_JSON_PRETTY, json_doc, &d);

		if (err) {
			fprintf(stderr, "qp_demux: %s: %s\n", json,
				strerror(-err));
			return 1;
		}
	}
	return 0;
}
