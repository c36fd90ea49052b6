/*
 * bench/storm - the connection-storm benchmark (internal header).
 *
 * The pure pieces (options, outcome accounting, per-step statistics and
 * percentiles, the cmtime table parser, the JSON writer and the table
 * printer) live in storm_lib, which tests/unit drives; the parts that need
 * RDMA (the wharf server, the client processes, running cmtime) are in the
 * binary only.
 *
 * Times are CLOCK_MONOTONIC nanoseconds, which every process of the run
 * shares, so client and server stamps compare directly.
 */
#ifndef WHARF_BENCH_STORM_H
#define WHARF_BENCH_STORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* CPUs on one node (placement.c)                                      */
/* ------------------------------------------------------------------ */

#define STORM_MAX_CPUS 256

/* Where the server's shards and the client processes run. */
struct storm_placement {
	unsigned nserver, nclient;  /* both 0: no split */
	int server[STORM_MAX_CPUS]; /* OS CPU numbers */
	int client[STORM_MAX_CPUS];
};

/*
 * From the @n CPUs storm may use (@allowed, increasing): with @split_ok
 * (one node, no --share-cpus) and two CPUs or more, the server gets the
 * first @server_want (0: half of them, rounded down) and the clients the
 * rest.  No split when one CPU is all there is or @server_want leaves the
 * clients none (--shards as many as the CPUs).
 */
void storm_placement_plan(const int *allowed, unsigned n, bool split_ok,
			  unsigned server_want, struct storm_placement *p);
/* Whether the server and the clients have CPUs of their own. */
static inline bool storm_placement_split(const struct storm_placement *p)
{
	return p->nclient > 0;
}
/* Client process @k's CPU, or -1 (no split: the library places it). */
int storm_placement_client_cpu(const struct storm_placement *p, unsigned k);
/* "server on CPUs 0, clients on CPUs 1" or "every process on every CPU". */
void storm_placement_format(const struct storm_placement *p, char *buf,
			    size_t len);

/* ------------------------------------------------------------------ */
/* Options (opts.c)                                                    */
/* ------------------------------------------------------------------ */

/* Variants, as bits of storm_opts.variants. */
enum {
	STORM_V_WHARF = 1u << 0,  /* S shards, QP pool on */
	STORM_V_WHARF1 = 1u << 1, /* one shard, no QP pool */
	STORM_V_CMTIME = 1u << 2, /* the stock cmtime */
	STORM_V_ALL = 7u,
};

struct storm_opts {
	unsigned conns;	    /* connections per variant */
	unsigned clients;   /* client processes */
	unsigned shards;    /* server shards of the "wharf" variant; 0 = CPUs */
	double ramp;	    /* arrivals per second (all clients); 0 = at once */
	double reject;	    /* fraction the server rejects, 0..1 */
	double kill;	    /* fraction of client processes killed, 0..1 */
	const char *json;   /* JSON output file or NULL */
	const char *plot;   /* gnuplot script to write, or NULL */
	const char *png;    /* the image that script draws */
	const char *addr;   /* server address (IPv4) */
	const char *cmtime; /* the cmtime binary */
	const char *clients_at;	    /* HOST:PORT of a relay (relay.c) or NULL */
	unsigned variants;	    /* STORM_V_* bits */
	unsigned timeout_s;	    /* per variant */
	unsigned client_timeout_ms; /* clients' resolve timeouts; 0 = wharf's */
	unsigned window;	    /* clients' connect window; 0 = wharf's */
	bool share_cpus; /* one node: no CPUs of their own (placement.c) */
	bool quick;
	bool msg; /* one message each way per connection */
	bool help;
	bool version;
	/* Not an option: filled by main from the CPUs it may use. */
	struct storm_placement place;
};

/* Connections one client process takes by default (opts.c). */
#define STORM_CONNS_PER_CLIENT 10000u

/* storm_opts.window: --window none. */
#define STORM_WINDOW_NONE (~0u)

/* Defaults (2,000 connections, 4 clients, every variant, rxe0's address). */
void storm_opts_init(struct storm_opts *o);

/*
 * Parses argv[1..argc-1] into @o (start from storm_opts_init()).  Return 0,
 * or -EINVAL with a message in @err (an unknown option, a missing or bad
 * value: not a number, out of range, a fraction outside 0..1).  --quick
 * sets 100 connections and 2 clients unless --conns / --clients say
 * otherwise.
 */
int storm_opts_parse(struct storm_opts *o, int argc, char **argv, char *err,
		     size_t errlen);

/* The --help text. */
void storm_usage(FILE *f);

/* Whether client-global connection @g is one the server rejects, so that
 * exactly floor(n * fraction) of connections 0..n-1 are. */
bool storm_should_reject(uint32_t g, double fraction);

/* How many of @clients processes --kill @fraction kills (at least one when
 * @fraction > 0, never all of them when there are two or more). */
unsigned storm_kill_count(unsigned clients, double fraction);

/* ------------------------------------------------------------------ */
/* One connection as a client saw it, and the outcomes (outcome.c)    */
/* ------------------------------------------------------------------ */

enum storm_outcome {
	STORM_OUT_NONE = 0,    /* no report (the accounting failed) */
	STORM_OUT_ESTABLISHED, /* established (then disconnected) */
	STORM_OUT_REJECTED,    /* REJ; reason in rej_reason */
	STORM_OUT_TIMED_OUT,   /* a step timer ran out */
	STORM_OUT_UNREACHABLE, /* the peer did not answer */
	STORM_OUT_FAILED,      /* address, route, connect, device errors */
	STORM_OUT_KILLED,      /* its client process was killed */
	STORM_OUT_COUNT
};

/* Client-side steps, indexes of storm_conn.t. */
enum storm_step {
	STORM_T_START = 0, /* just before wharf_connect() */
	STORM_T_ADMIT,	   /* the connect window let it start */
	STORM_T_ID,	   /* rdma_create_id() returned */
	STORM_T_ADDR,	   /* address resolved */
	STORM_T_ROUTE,	   /* route resolved */
	STORM_T_QP,	   /* QP taken and in INIT */
	STORM_T_SENT,	   /* REQ sent */
	STORM_T_REPLY,	   /* REP received */
	STORM_T_EST,	   /* established */
	STORM_T_MSG,	   /* --msg: the server's answer arrived */
	STORM_T_DISC0,	   /* wharf_disconnect() called */
	STORM_T_DISC1,	   /* on_disconnected */
	STORM_T_DESTROY0,  /* wharf_conn_destroy() called */
	STORM_T_DESTROY1,  /* ... returned */
	STORM_T_COUNT
};

struct storm_conn {
	uint64_t t[STORM_T_COUNT]; /* 0 = not reached */
	uint8_t outcome;	   /* enum storm_outcome */
	uint8_t rej_reason;	   /* IB REJ reason (REJECTED) */
	bool rej_app;		   /* REJ carried the server's private data */
	bool rej_busy;		   /* REJ was wharf's busy REJ */
	uint8_t fail_kind;	   /* enum wharf_conn_error (on_error) */
	int32_t fail_err;	   /* its -errno */
};

#define STORM_REJ_REASONS 64
/* Distinct (error, errno) pairs counted; more go to the last. */
#define STORM_FAIL_REASONS 16

/* How many attempts ended with one on_error (error, errno) pair. */
struct storm_fail_reason {
	uint8_t kind; /* enum wharf_conn_error */
	int32_t err;
	uint64_t n;
};

struct storm_outcomes {
	uint64_t attempts;
	uint64_t n[STORM_OUT_COUNT];
	uint64_t rej_app;			/* REJ with our private data */
	uint64_t rej_busy;			/* busy REJ after retries */
	uint64_t rej_reason[STORM_REJ_REASONS]; /* other REJs by reason */
	uint64_t busy_retried;			/* client cm counter */
	/* Timed out, unreachable or failed: the last step each reached
	 * (index of storm_conn.t, START .. REPLY). */
	uint64_t stopped_after[STORM_T_COUNT];
	/* Timed out, unreachable or failed, by reason, in order of first
	 * appearance. */
	struct storm_fail_reason fail[STORM_FAIL_REASONS];
	unsigned nfail;
};

const char *storm_outcome_name(enum storm_outcome o);
/*
 * The local port range in @path (/proc/sys/net/ipv4/ip_local_port_range):
 * 0, or -errno / -EINVAL.
 */
int storm_port_range_read(const char *path, unsigned *lo, unsigned *hi);
/*
 * 0 when @conns connections from one address to one server port fit the
 * local port range [@lo, @hi]; else -ENOSPC and the limit and the remedy
 * in @err.
 */
int storm_ports_check(unsigned conns, unsigned lo, unsigned hi, char *err,
		      size_t errlen);
/* The name of an enum wharf_conn_error ("address", "route", ...). */
const char *storm_fail_kind_name(unsigned kind);
/* The name of what a step stamp means ("route resolved", ...). */
const char *storm_stamp_name(enum storm_step s);

/* Adds @n connections to @out (attempts included). */
void storm_outcomes_add(struct storm_outcomes *out,
			const struct storm_conn *conns, size_t n);

/* 0 when every attempt has exactly one outcome and none is NONE; else
 * -EPROTO with what is missing in @err. */
int storm_outcomes_check(const struct storm_outcomes *o, char *err,
			 size_t errlen);

/* 0 when every attempt established but those the run asked to fail: the
 * server's application rejects (--reject) and the killed clients
 * (--kill); else -EIO with how many established and what became of the
 * rest in @err.  A storm whose connections failed is not a success. */
int storm_outcomes_expected(const struct storm_outcomes *o, char *err,
			    size_t errlen);

/* ------------------------------------------------------------------ */
/* Statistics (stats.c)                                                */
/* ------------------------------------------------------------------ */

/* The p-th percentile (0 < p <= 100) of @v (sorted ascending, @n > 0) by
 * the nearest-rank method; 0 for n == 0. */
uint64_t storm_percentile(const uint64_t *sorted, size_t n, double p);

/* One row of the step table, cmtime's columns (plus the average). */
struct storm_step_row {
	const char *name;
	uint64_t n;	    /* connections that went through the step */
	double total_ms;    /* first start to last end (wall) */
	double max_ms;	    /* longest one */
	double min_us;	    /* shortest one */
	double us_per_conn; /* total / n */
	double avg_us;	    /* mean duration */
};

/* Step @name from stamp @from to stamp @to over the connections that have
 * both. */
void storm_step_row(const struct storm_conn *c, size_t n, const char *name,
		    enum storm_step from, enum storm_step to,
		    struct storm_step_row *out);

/* Time to established (START..EST) of the established connections:
 * quantiles in microseconds. */
struct storm_tte {
	uint64_t n;
	double p50_us, p90_us, p99_us, p999_us, max_us;
};
/* @scratch has room for @n values. */
void storm_tte(const struct storm_conn *c, size_t n, uint64_t *scratch,
	       struct storm_tte *out);

/* Cumulative distribution of time-to-established: @points pairs (us,
 * fraction) into @us / @frac, evenly spaced in rank; returns how many. */
size_t storm_tte_cdf(const struct storm_conn *c, size_t n, uint64_t *scratch,
		     double *us, double *frac, size_t points);

/* ------------------------------------------------------------------ */
/* cmtime's table (cmtime.c)                                           */
/* ------------------------------------------------------------------ */

#define STORM_CMTIME_ROWS 16

struct storm_cmtime {
	size_t nrows;
	struct storm_step_row rows[STORM_CMTIME_ROWS];
	char names[STORM_CMTIME_ROWS][32];
};

/* Parses cmtime's client output (rdma-core 44: "step total ms max ms
 * min us us / conn" then one "name : a b c d" line per step; other lines
 * and carriage returns are ignored).  @conns sets each row's n.  Return 0;
 * -ENODATA when there is no table; -EBADMSG for a malformed row. */
int storm_cmtime_parse(const char *text, unsigned conns,
		       struct storm_cmtime *out);

/* The row named @name, or NULL. */
const struct storm_step_row *storm_cmtime_row(const struct storm_cmtime *t,
					      const char *name);

/* ------------------------------------------------------------------ */
/* A variant's result, printed (report.c)                              */
/* ------------------------------------------------------------------ */

#define STORM_STEP_ROWS 12

struct storm_side {
	double cpu_s;	       /* user + system */
	double teardown_cpu_s; /* of it, from the disconnects on; < 0 unknown */
	double heap_bytes;     /* jemalloc allocated, delta; < 0 unknown */
	double reg_bytes;      /* registered receive bytes; < 0 unknown */
	uint64_t pool_hits;    /* QP takes served by the pool */
	uint64_t pool_misses;  /* QP takes that created one inline */
};

/* The kernel IB CM's MAD counters of a node (cm_mads.c). */
enum {
	STORM_MAD_TX,
	STORM_MAD_TX_RETRIES,
	STORM_MAD_RX,
	STORM_MAD_RX_DUP,
	STORM_MAD_DIRS
};
enum {
	STORM_MAD_REQ,
	STORM_MAD_REP,
	STORM_MAD_RTU,
	STORM_MAD_REJ,
	STORM_MAD_DREQ,
	STORM_MAD_DREP,
	STORM_MAD_TYPES
};
struct storm_cm_mads {
	bool ok; /* read (the node has ib_cm counters) */
	/* [direction][type]: sent (resends included), of them resent,
	 * received (duplicates included), of them duplicates. */
	uint64_t n[STORM_MAD_DIRS][STORM_MAD_TYPES];
};

#define STORM_SYSFS_IB "/sys/class/infiniband"

/* Reads and sums every device's and port's counters under @root
 * (/sys/class/infiniband); 0, -ENOENT when none has any, or -errno. */
int storm_cm_mads_read(const char *root, struct storm_cm_mads *m);
/* @after - @before, per counter (0 where a counter went back). */
void storm_cm_mads_delta(struct storm_cm_mads *out,
			 const struct storm_cm_mads *before,
			 const struct storm_cm_mads *after);
const char *storm_mad_type_name(unsigned t);

struct storm_result {
	char name[48];
	bool ran;
	char error[160]; /* why it did not run or is incomplete */
	unsigned conns, clients, shards;
	double wall_s;	   /* first start to last established */
	double teardown_s; /* first disconnect to last destroy */
	double conn_per_s; /* established / wall */
	size_t nrows;
	struct storm_step_row rows[STORM_STEP_ROWS + STORM_CMTIME_ROWS];
	char row_names[STORM_STEP_ROWS + STORM_CMTIME_ROWS][32];
	bool has_tte;
	struct storm_tte tte;
	size_t ncdf;
	double cdf_us[101], cdf_frac[101];
	bool has_outcomes;
	struct storm_outcomes out;
	struct storm_side server, client;
	bool has_reclaim;
	bool reclaimed;	  /* server back to zero after the run */
	double reclaim_s; /* time it took after the last client ended */
	char reclaim_what[160];
	unsigned killed; /* client processes killed */
	/* The clients' connect windows at the end (narrowest and widest;
	 * 0: none) and the adaptive windows' moves, summed. */
	bool has_window;
	uint64_t window_lo, window_hi, window_grows, window_shrinks;
	/* The server's own counters over the storm (wharf_cm_stats). */
	bool has_server_counts;
	uint64_t srv_requests, srv_accepted, srv_rejected_app,
		srv_rejected_busy, srv_timed_out, srv_failed, srv_aborted,
		srv_disconnected, srv_forced;
	/* The same two of the clients' cms, summed. */
	uint64_t cli_disconnected, cli_forced;
	/* The server node's CM messages over the variant (mads.ok: read). */
	struct storm_cm_mads mads;
};

/* Fills the step rows, wall time, rate, time-to-established and CDF of a
 * wharf variant from its connections. */
void storm_result_from_conns(struct storm_result *r, const struct storm_conn *c,
			     size_t n, uint64_t *scratch);

/* Adds the server's rows from its side of the connections: t[START] the
 * hand-over, t[QP] QP ready, t[SENT] REP sent, t[EST] established. */
void storm_result_add_server_rows(struct storm_result *r,
				  const struct storm_conn *c, size_t n);

/* Fills a cmtime variant from its parsed table. */
void storm_result_from_cmtime(struct storm_result *r,
			      const struct storm_cmtime *t);

void storm_print(FILE *f, const struct storm_result *r);
void storm_print_summary(FILE *f, const struct storm_result *rs, size_t n);
/* A gnuplot script (data inline) drawing @png: the CDF of time to
 * established per variant, and connections/s per variant. */
void storm_gnuplot(FILE *f, const struct storm_result *rs, size_t n,
		   const char *png);
void storm_json_results(struct cli_json *j, const struct storm_opts *o,
			const struct storm_result *rs, size_t n);
/* The results document as cli_json_write() builds it (@arg: a storm_doc). */
struct storm_doc {
	const struct storm_opts *o;
	const struct storm_result *rs;
	size_t n;
};
void storm_json_doc(struct cli_json *j, const void *arg);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_BENCH_STORM_H */
