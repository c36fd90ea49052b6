/*
 * bench/storm/rdma.h - the parts of storm that run RDMA (binary only):
 * the client processes, the wharf server variants, the cmtime variant, and
 * the few helpers they share.
 */
#ifndef WHARF_BENCH_STORM_RDMA_H
#define WHARF_BENCH_STORM_RDMA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <wharf/core.h>

#include "bench/storm/storm.h"

/* Private data of every storm REQ: magic, then the global connection
 * index, little endian. */
#define STORM_MAGIC	"STRM"
#define STORM_PDATA_LEN 8
/* What the server's REJ carries. */
#define STORM_REJ_TEXT "storm: rejected by the server"

/* jemalloc's allocated bytes, or -1 when malloc is not jemalloc's. */
double storm_heap_bytes(void);
/* The allocator's live allocations by size class (jemalloc's bins and
 * large extents), to say what a connection's heap is made of. */
#define STORM_HEAP_CLASSES 256
struct storm_heap_classes {
	size_t n;
	size_t size[STORM_HEAP_CLASSES];
	size_t count[STORM_HEAP_CLASSES];
};
int storm_heap_classes(struct storm_heap_classes *h);
/* With STORM_HEAP_PROF=DIR (and jemalloc's profiling on, MALLOC_CONF=
 * prof:true,lg_prof_sample:0), a heap profile DIR/TAG.heap for jeprof. */
void storm_heap_prof_dump(const char *tag);
/* One line: what each class gained from @a to @b, per connection. */
void storm_heap_classes_print(FILE *f, const struct storm_heap_classes *a,
			      const struct storm_heap_classes *b,
			      unsigned conns);
/* User + system CPU seconds of this process. */
double storm_cpu_s(void);

/* The CPUs the calling thread may run on, increasing, at most @cap;
 * their count, or -errno. */
int storm_cpus_allowed(int *cpus, unsigned cap);
/* Restricts the calling thread to the @n CPUs of @cpus; the processes it
 * spawns inherit the set.  0 or -errno. */
int storm_cpus_bind(const int *cpus, unsigned n);

/* Largest SRQ chunk of the server (one MR of 256-byte buffers). */
#define STORM_SRQ_CHUNK_MAX 8192u
/* The QP shape of every storm connection, both sides (storm sends no
 * data): STORM_SQ_DEPTH send WRs of one SGE, and CQs sized upfront for
 * the SRQ (@ro->srq_depth, set first) and @conns QPs, so that they never
 * have to grow during the storm (the device's max_cqe caps each, with a
 * warning at wharf_cm_create(); more send CQs take the rest). */
#define STORM_SQ_DEPTH 2
struct wharf_qp_res_opts;
void storm_res_shape(struct wharf_qp_res_opts *ro, unsigned conns);

/* `storm client ADDR PORT FIRST COUNT RATE`: one client process; talks
 * to the parent over stdin/stdout (see client.c). */
int storm_client_main(int argc, char **argv);
/* `storm relay PORT TIMEOUT_S` (relay.c): the clients of --clients-at. */
int storm_relay_main(int argc, char **argv);
/* Tells the relay at HOST:PORT to exit; 0 or -errno. */
int storm_relay_quit(const char *hostport);

/* A wharf variant: server in this process, clients as child processes. */
int storm_run_wharf(const struct storm_opts *o, unsigned shards, bool pool,
		    struct storm_result *r);

/* The cmtime variant (with --clients-at, its client runs at the relay). */
int storm_run_cmtime(const struct storm_opts *o, struct storm_result *r);
/* `storm cmtime-client CMTIME ADDR CONNS PORT TIMEOUT_S` (cmtime_run.c):
 * the relay's side of a remote cmtime client; cmtime's output, then one
 * line with its CPU time. */
int storm_cmtime_client_main(int argc, char **argv);

#endif
