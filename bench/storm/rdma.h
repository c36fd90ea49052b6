/*
 * bench/storm/rdma.h - the parts of storm that run RDMA (binary only):
 * the client processes, the wharf server variants, the cmtime variant, and
 * the few helpers they share.
 */
#ifndef WHARF_BENCH_STORM_RDMA_H
#define WHARF_BENCH_STORM_RDMA_H

#include <stdint.h>

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
/* User + system CPU seconds of this process. */
double storm_cpu_s(void);

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

/* The cmtime variant. */
int storm_run_cmtime(const struct storm_opts *o, struct storm_result *r);

#endif
