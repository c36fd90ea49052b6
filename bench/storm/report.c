/*
 * bench/storm/report.c - a variant's result: built from the connections
 * the clients reported (wharf variants) or from cmtime's table, printed as
 * a table with cmtime's columns, summarised in one line, written as JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench/storm/storm.h"

static const struct {
	const char *name;
	enum storm_step from, to;
} wharf_steps[STORM_STEP_ROWS] = {
	{"window wait", STORM_T_START, STORM_T_ADMIT},
	{"create id", STORM_T_ADMIT, STORM_T_ID},
	{"resolve addr", STORM_T_ID, STORM_T_ADDR},
	{"resolve route", STORM_T_ADDR, STORM_T_ROUTE},
	{"take qp", STORM_T_ROUTE, STORM_T_QP},
	{"req to rep", STORM_T_QP, STORM_T_REPLY},
	{"rtu", STORM_T_REPLY, STORM_T_EST},
	{"connect", STORM_T_QP, STORM_T_EST},
	{"full connect", STORM_T_START, STORM_T_EST},
	{"msg rtt", STORM_T_EST, STORM_T_MSG},
	{"disconnect", STORM_T_DISC0, STORM_T_DISC1},
	{"destroy", STORM_T_DESTROY0, STORM_T_DESTROY1},
};

static void set_row(struct storm_result *r, const struct storm_step_row *row)
{
	size_t i = r->nrows++;

	r->rows[i] = *row;
	snprintf(r->row_names[i], sizeof(r->row_names[i]), "%s", row->name);
	r->rows[i].name = r->row_names[i];
}

void storm_result_from_conns(struct storm_result *r, const struct storm_conn *c,
			     size_t n, uint64_t *scratch)
{
	struct storm_step_row full;
	uint64_t est = 0, d0 = UINT64_MAX, d1 = 0;

	r->nrows = 0;
	for (size_t i = 0; i < STORM_STEP_ROWS; i++) {
		struct storm_step_row row;

		storm_step_row(c, n, wharf_steps[i].name, wharf_steps[i].from,
			       wharf_steps[i].to, &row);
		set_row(r, &row);
	}
	storm_step_row(c, n, "full", STORM_T_START, STORM_T_EST, &full);
	for (size_t i = 0; i < n; i++) {
		if (c[i].outcome == STORM_OUT_ESTABLISHED)
			est++;
		for (int s = STORM_T_DISC0; s <= STORM_T_DESTROY1; s++) {
			if (!c[i].t[s])
				continue;
			if (c[i].t[s] < d0)
				d0 = c[i].t[s];
			if (c[i].t[s] > d1)
				d1 = c[i].t[s];
		}
	}
	r->wall_s = full.total_ms / 1e3;
	r->conn_per_s = r->wall_s > 0 ? (double)est / r->wall_s : 0;
	r->teardown_s = d1 > d0 ? (double)(d1 - d0) / 1e9 : 0;
	r->has_tte = true;
	storm_tte(c, n, scratch, &r->tte);
	r->ncdf = storm_tte_cdf(c, n, scratch, r->cdf_us, r->cdf_frac, 101);
}

void storm_result_add_server_rows(struct storm_result *r,
				  const struct storm_conn *c, size_t n)
{
	static const struct {
		const char *name;
		enum storm_step from, to;
	} rows[] = {
		{"srv qp+rtr/rts", STORM_T_START, STORM_T_QP},
		{"srv accept", STORM_T_QP, STORM_T_SENT},
		{"srv rtu wait", STORM_T_SENT, STORM_T_EST},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct storm_step_row row;

		if (r->nrows >= sizeof(r->rows) / sizeof(r->rows[0]))
			return;
		storm_step_row(c, n, rows[i].name, rows[i].from, rows[i].to,
			       &row);
		set_row(r, &row);
	}
}

void storm_result_from_cmtime(struct storm_result *r,
			      const struct storm_cmtime *t)
{
	static const char *const connect_steps[] = {"create id", "resolve addr",
						    "resolve route",
						    "create qp", "connect"};
	double ms = 0;
	const struct storm_step_row *disc, *destroy;

	r->nrows = 0;
	for (size_t i = 0; i < t->nrows; i++)
		set_row(r, &t->rows[i]);
	/* cmtime runs its steps one after the other over all connections:
	 * create to established is the sum of their walls. */
	for (size_t i = 0; i < sizeof(connect_steps) / sizeof(*connect_steps);
	     i++) {
		const struct storm_step_row *row =
			storm_cmtime_row(t, connect_steps[i]);

		if (row)
			ms += row->total_ms;
	}
	r->wall_s = ms / 1e3;
	r->conn_per_s = r->wall_s > 0 ? (double)r->conns / r->wall_s : 0;
	disc = storm_cmtime_row(t, "disconnect");
	destroy = storm_cmtime_row(t, "destroy");
	r->teardown_s = ((disc ? disc->total_ms : 0) +
			 (destroy ? destroy->total_ms : 0)) /
			1e3;
}

static void print_side(FILE *f, const char *name, const struct storm_side *s,
		       uint64_t est)
{
	double n = (double)est;

	if (!est) { /* nothing to divide by: totals */
		fprintf(f, "  %-7s CPU %.3f s, no connection established", name,
			s->cpu_s);
		if (s->reg_bytes >= 0)
			fprintf(f, ", registered %.0f B", s->reg_bytes);
		fputc('\n', f);
		return;
	}
	fprintf(f, "  %-7s CPU %.1f us/conn", name, s->cpu_s * 1e6 / n);
	if (s->heap_bytes >= 0)
		fprintf(f, ", heap %.0f B/conn", s->heap_bytes / n);
	if (s->reg_bytes >= 0)
		fprintf(f, ", registered %.0f B/conn", s->reg_bytes / n);
	if (s->pool_hits || s->pool_misses)
		fprintf(f, ", QP pool %" PRIu64 " hits / %" PRIu64 " created",
			s->pool_hits, s->pool_misses);
	if (s->teardown_cpu_s >= 0)
		fprintf(f, "; teardown CPU %.1f us/conn",
			s->teardown_cpu_s * 1e6 / n);
	fputc('\n', f);
}

/* The server node's CM messages: resends and duplicates are the cost of
 * an overrun peer. */
static void print_mads(FILE *f, const struct storm_cm_mads *m)
{
	static const char *const rows[STORM_MAD_DIRS] = {
		"sent", "of them resent", "received", "of them duplicates"};

	fprintf(f, "server node's CM messages:");
	for (unsigned t = 0; t < STORM_MAD_TYPES; t++)
		fprintf(f, " %8s", storm_mad_type_name(t));
	fputc('\n', f);
	for (unsigned d = 0; d < STORM_MAD_DIRS; d++) {
		fprintf(f, "  %-24s", rows[d]);
		for (unsigned t = 0; t < STORM_MAD_TYPES; t++)
			fprintf(f, " %8" PRIu64, m->n[d][t]);
		fputc('\n', f);
	}
}

static void print_stopped(FILE *f, const struct storm_outcomes *o)
{
	bool any = false;

	for (unsigned s = 0; s < STORM_T_COUNT; s++) {
		if (!o->stopped_after[s])
			continue;
		fprintf(f, "%s %s: %" PRIu64,
			any ? "," : "not established, last step:",
			storm_stamp_name(s), o->stopped_after[s]);
		any = true;
	}
	if (any)
		fputc('\n', f);
	/* One line per distinct reason, with its count. */
	for (unsigned i = 0; i < o->nfail; i++)
		fprintf(f, "not established: %s error %d (%s): %" PRIu64 "\n",
			storm_fail_kind_name(o->fail[i].kind), o->fail[i].err,
			o->fail[i].err ? strerror(-o->fail[i].err) : "no errno",
			o->fail[i].n);
}

void storm_print(FILE *f, const struct storm_result *r)
{
	const struct storm_outcomes *o = &r->out;

	fprintf(f, "\n== %s: %u connections, %u clients\n", r->name, r->conns,
		r->clients);
	if (!r->ran) {
		fprintf(f, "  did not run: %s\n", r->error);
		return;
	}
	if (r->error[0])
		fprintf(f, "  incomplete: %s\n", r->error);
	fprintf(f, "%-14s %10s %10s %10s %10s %10s\n", "step", "total ms",
		"max ms", "min us", "us / conn", "avg us");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct storm_step_row *row = &r->rows[i];

		if (!row->n && r->has_outcomes) { /* no connection got there */
			fprintf(f, "%-13s: %10s\n", row->name, "-");
			continue;
		}
		fprintf(f, "%-13s: %10.2f %10.2f %10.2f %10.2f", row->name,
			row->total_ms, row->max_ms, row->min_us,
			row->us_per_conn);
		if (row->avg_us >= 0)
			fprintf(f, " %10.2f", row->avg_us);
		fputc('\n', f);
	}
	fprintf(f, "create->established: %.3f s, %.0f connections/s\n",
		r->wall_s, r->conn_per_s);
	if (r->has_tte && r->tte.n)
		fprintf(f,
			"time to established (ms): p50 %.2f  p90 %.2f  p99 "
			"%.2f  p999 %.2f  max %.2f  (p99/p50 %.2f)\n",
			r->tte.p50_us / 1e3, r->tte.p90_us / 1e3,
			r->tte.p99_us / 1e3, r->tte.p999_us / 1e3,
			r->tte.max_us / 1e3,
			r->tte.p50_us > 0 ? r->tte.p99_us / r->tte.p50_us : 0);
	fprintf(f, "teardown: %.3f s\n", r->teardown_s);
	if (r->has_outcomes) {
		fprintf(f,
			"outcomes: %" PRIu64 " attempts: established %" PRIu64
			", rejected %" PRIu64 " (app %" PRIu64
			", busy %" PRIu64,
			o->attempts, o->n[STORM_OUT_ESTABLISHED],
			o->n[STORM_OUT_REJECTED], o->rej_app, o->rej_busy);
		for (unsigned i = 0; i < STORM_REJ_REASONS; i++)
			if (o->rej_reason[i])
				fprintf(f, ", reason %u: %" PRIu64, i,
					o->rej_reason[i]);
		fprintf(f,
			"), busy retried %" PRIu64 ", timed out %" PRIu64
			", unreachable %" PRIu64 ", failed %" PRIu64
			", killed %" PRIu64 " (%u client processes)"
			", unaccounted %" PRIu64 "\n",
			o->busy_retried, o->n[STORM_OUT_TIMED_OUT],
			o->n[STORM_OUT_UNREACHABLE], o->n[STORM_OUT_FAILED],
			o->n[STORM_OUT_KILLED], r->killed,
			o->n[STORM_OUT_NONE]);
		print_stopped(f, o);
		if (r->has_server_counts)
			fprintf(f,
				"server: requests %" PRIu64
				", accepted %" PRIu64 ", rejected app %" PRIu64
				" / busy %" PRIu64 ", timed out %" PRIu64
				", failed %" PRIu64 ", aborted %" PRIu64
				", disconnected %" PRIu64
				", forced teardowns %" PRIu64 "\n",
				r->srv_requests, r->srv_accepted,
				r->srv_rejected_app, r->srv_rejected_busy,
				r->srv_timed_out, r->srv_failed, r->srv_aborted,
				r->srv_disconnected, r->srv_forced);
		if (r->mads.ok)
			print_mads(f, &r->mads);
		if (r->has_window) /* the clients are wharf's */
			fprintf(f,
				"clients: disconnected %" PRIu64
				", forced teardowns %" PRIu64
				" (no DREP within wharf's disconnect timer)\n",
				r->cli_disconnected, r->cli_forced);
		if (r->has_window)
			fprintf(f,
				"client connect windows: %" PRIu64 "-%" PRIu64
				" at the end, widened %" PRIu64
				" and narrowed %" PRIu64 " times\n",
				r->window_lo, r->window_hi, r->window_grows,
				r->window_shrinks);
		print_side(f, "server", &r->server,
			   o->n[STORM_OUT_ESTABLISHED]);
		print_side(f, "clients", &r->client,
			   o->n[STORM_OUT_ESTABLISHED]);
	}
	if (!r->has_outcomes && (r->server.cpu_s > 0 || r->client.cpu_s > 0))
		fprintf(f,
			"CPU: server %.1f us/conn, client %.1f us/conn "
			"(both processes, whole run)\n",
			r->server.cpu_s * 1e6 / (r->conns ? r->conns : 1),
			r->client.cpu_s * 1e6 / (r->conns ? r->conns : 1));
	if (r->has_reclaim)
		fprintf(f,
			"server reclaimed everything: %s (%s) after %.2f s\n",
			r->reclaimed ? "yes" : "NO", r->reclaim_what,
			r->reclaim_s);
}

void storm_print_summary(FILE *f, const struct storm_result *rs, size_t n)
{
	const struct storm_result *w = NULL, *c = NULL;
	bool ok = true;

	fprintf(f, "storm:");
	for (size_t i = 0; i < n; i++) {
		const struct storm_result *r = &rs[i];

		if (!r->ran) {
			fprintf(f, " %s did not run;", r->name);
			ok = false;
			continue;
		}
		fprintf(f, " %s %.0f conn/s", r->name, r->conn_per_s);
		if (r->has_tte && r->tte.n)
			fprintf(f, " (p99 %.1f ms)", r->tte.p99_us / 1e3);
		fputc(';', f);
		if (r->error[0])
			ok = false;
		if (!strncmp(r->name, "wharf ", 6) && !w)
			w = r;
		if (!strncmp(r->name, "cmtime", 6))
			c = r;
	}
	if (w && c && c->conn_per_s > 0)
		fprintf(f, " wharf/cmtime %.2fx;",
			w->conn_per_s / c->conn_per_s);
	fprintf(f, " %s\n",
		ok ? "every attempt accounted for, every expected connection "
		     "established"
		   : "FAILED (see above)");
}

static void json_side(struct cli_json *j, const char *key,
		      const struct storm_side *s)
{
	cli_json_obj(j, key);
	cli_json_num(j, "cpu_s", s->cpu_s);
	cli_json_num(j, "teardown_cpu_s", s->teardown_cpu_s);
	cli_json_num(j, "heap_bytes", s->heap_bytes);
	cli_json_num(j, "registered_bytes", s->reg_bytes);
	cli_json_u64(j, "pool_hits", s->pool_hits);
	cli_json_u64(j, "pool_created", s->pool_misses);
	cli_json_end(j);
}

static void json_outcomes(struct cli_json *j, const struct storm_outcomes *o)
{
	cli_json_obj(j, "outcomes");
	cli_json_u64(j, "attempts", o->attempts);
	for (unsigned i = 0; i < STORM_OUT_COUNT; i++)
		cli_json_u64(j, storm_outcome_name(i), o->n[i]);
	cli_json_u64(j, "rejected_app", o->rej_app);
	cli_json_u64(j, "rejected_busy", o->rej_busy);
	cli_json_obj(j, "rejected_by_reason");
	for (unsigned i = 0; i < STORM_REJ_REASONS; i++) {
		char k[8];

		if (!o->rej_reason[i])
			continue;
		snprintf(k, sizeof(k), "%u", i);
		cli_json_u64(j, k, o->rej_reason[i]);
	}
	cli_json_end(j);
	cli_json_u64(j, "busy_retried", o->busy_retried);
	cli_json_arr(j, "not_established_by_reason");
	for (unsigned i = 0; i < o->nfail; i++) {
		cli_json_obj(j, NULL);
		cli_json_str(j, "error", storm_fail_kind_name(o->fail[i].kind));
		cli_json_i64(j, "errno", o->fail[i].err);
		cli_json_u64(j, "count", o->fail[i].n);
		cli_json_end(j);
	}
	cli_json_end(j);
	cli_json_obj(j, "not_established_last_step");
	for (unsigned i = 0; i < STORM_T_COUNT; i++)
		if (o->stopped_after[i])
			cli_json_u64(j, storm_stamp_name(i),
				     o->stopped_after[i]);
	cli_json_end(j);
	cli_json_end(j);
}

static void json_result(struct cli_json *j, const struct storm_result *r)
{
	cli_json_obj(j, NULL);
	cli_json_str(j, "name", r->name);
	cli_json_bool(j, "ran", r->ran);
	cli_json_str(j, "error", r->error[0] ? r->error : NULL);
	cli_json_u64(j, "conns", r->conns);
	cli_json_u64(j, "clients", r->clients);
	cli_json_u64(j, "shards", r->shards);
	cli_json_num(j, "create_to_established_s", r->wall_s);
	cli_json_num(j, "conn_per_s", r->conn_per_s);
	cli_json_num(j, "teardown_s", r->teardown_s);
	cli_json_arr(j, "steps");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct storm_step_row *row = &r->rows[i];

		cli_json_obj(j, NULL);
		cli_json_str(j, "step", row->name);
		cli_json_u64(j, "n", row->n);
		cli_json_num(j, "total_ms", row->total_ms);
		cli_json_num(j, "max_ms", row->max_ms);
		cli_json_num(j, "min_us", row->min_us);
		cli_json_num(j, "us_per_conn", row->us_per_conn);
		if (row->avg_us >= 0)
			cli_json_num(j, "avg_us", row->avg_us);
		cli_json_end(j);
	}
	cli_json_end(j);
	if (r->has_tte) {
		cli_json_obj(j, "time_to_established_us");
		cli_json_u64(j, "n", r->tte.n);
		cli_json_num(j, "p50", r->tte.p50_us);
		cli_json_num(j, "p90", r->tte.p90_us);
		cli_json_num(j, "p99", r->tte.p99_us);
		cli_json_num(j, "p999", r->tte.p999_us);
		cli_json_num(j, "max", r->tte.max_us);
		cli_json_end(j);
		cli_json_arr(j, "cdf_us_fraction");
		for (size_t i = 0; i < r->ncdf; i++) {
			cli_json_arr(j, NULL);
			cli_json_num(j, NULL, r->cdf_us[i]);
			cli_json_num(j, NULL, r->cdf_frac[i]);
			cli_json_end(j);
		}
		cli_json_end(j);
	}
	if (r->has_outcomes) {
		json_outcomes(j, &r->out);
		json_side(j, "server", &r->server);
		json_side(j, "clients", &r->client);
		cli_json_u64(j, "killed_clients", r->killed);
	}
	if (r->has_window) {
		cli_json_obj(j, "client_window");
		cli_json_u64(j, "end_min", r->window_lo);
		cli_json_u64(j, "end_max", r->window_hi);
		cli_json_u64(j, "grows", r->window_grows);
		cli_json_u64(j, "shrinks", r->window_shrinks);
		cli_json_end(j);
		cli_json_obj(j, "client_counters");
		cli_json_u64(j, "disconnected", r->cli_disconnected);
		cli_json_u64(j, "forced_teardowns", r->cli_forced);
		cli_json_end(j);
	}
	if (r->has_server_counts) {
		cli_json_obj(j, "server_counters");
		cli_json_u64(j, "requests", r->srv_requests);
		cli_json_u64(j, "accepted", r->srv_accepted);
		cli_json_u64(j, "rejected_app", r->srv_rejected_app);
		cli_json_u64(j, "rejected_busy", r->srv_rejected_busy);
		cli_json_u64(j, "timed_out", r->srv_timed_out);
		cli_json_u64(j, "failed", r->srv_failed);
		cli_json_u64(j, "aborted", r->srv_aborted);
		cli_json_u64(j, "disconnected", r->srv_disconnected);
		cli_json_u64(j, "forced_teardowns", r->srv_forced);
		cli_json_end(j);
	}
	if (r->mads.ok) {
		static const char *const keys[STORM_MAD_DIRS] = {
			"sent", "resent", "received", "duplicates"};

		cli_json_obj(j, "server_cm_messages");
		for (unsigned d = 0; d < STORM_MAD_DIRS; d++) {
			cli_json_obj(j, keys[d]);
			for (unsigned t = 0; t < STORM_MAD_TYPES; t++)
				cli_json_u64(j, storm_mad_type_name(t),
					     r->mads.n[d][t]);
			cli_json_end(j);
		}
		cli_json_end(j);
	}
	if (r->has_reclaim) {
		cli_json_obj(j, "reclaim");
		cli_json_bool(j, "reclaimed", r->reclaimed);
		cli_json_num(j, "seconds", r->reclaim_s);
		cli_json_str(j, "state", r->reclaim_what);
		cli_json_end(j);
	}
	cli_json_end(j);
}

void storm_json_results(struct cli_json *j, const struct storm_opts *o,
			const struct storm_result *rs, size_t n)
{
	cli_json_obj(j, NULL);
	cli_json_u64(j, "conns", o->conns);
	cli_json_u64(j, "clients", o->clients);
	/* 2: the clients on another machine (--clients-at) */
	cli_json_u64(j, "nodes", o->clients_at ? 2 : 1);
	cli_json_obj(j, "placement");
	cli_json_bool(j, "split", storm_placement_split(&o->place));
	cli_json_arr(j, "server_cpus");
	for (unsigned i = 0; i < o->place.nserver; i++)
		cli_json_i64(j, NULL, o->place.server[i]);
	cli_json_end(j);
	cli_json_arr(j, "client_cpus");
	for (unsigned i = 0; i < o->place.nclient; i++)
		cli_json_i64(j, NULL, o->place.client[i]);
	cli_json_end(j);
	cli_json_end(j);
	cli_json_num(j, "ramp", o->ramp);
	cli_json_num(j, "reject", o->reject);
	cli_json_num(j, "kill", o->kill);
	cli_json_arr(j, "variants");
	for (size_t i = 0; i < n; i++)
		json_result(j, &rs[i]);
	cli_json_end(j);
	cli_json_end(j);
}

void storm_json_doc(struct cli_json *j, const void *arg)
{
	const struct storm_doc *d = arg;

	storm_json_results(j, d->o, d->rs, d->n);
}
