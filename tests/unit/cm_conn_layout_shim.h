/*
 * A connection's memory layout, checked from C (the runtime's internal
 * header uses C11 atomics): a passive connection's request private data
 * ends its passive part, sized to what arrived, which follows the
 * connection to another shard's arena and is freed once the handshake is
 * over; an active connection's callbacks are its own copy.
 */
#ifndef WHARF_TESTS_UNIT_CM_CONN_LAYOUT_SHIM_H
#define WHARF_TESTS_UNIT_CM_CONN_LAYOUT_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cm_layout_result {
	int err;	       /* 0, or the -errno of a setup step */
	size_t pdata_len;      /* the moved connection's request data length */
	int pdata_intact;      /* the bytes survived the move */
	int pdata_points_home; /* req.private_data points into the copy */
	int oversize_refused;  /* more than any transport reports: NULL */
	int active_ops_own;    /* an active connection's ops: its copy */
	int part_follows;      /* the moved connection's part points to it */
	int kept_in_handshake; /* trimmed while ACCEPTING: the request stays */
	int freed_when_over;   /* trimmed ESTABLISHED: the request is gone */
	int timer_freed;       /* ... and its idle timer too */
	int timer_recreated;   /* a disconnect's timer is made again */
};

/* Two shards; a passive connection with @len bytes of request data
 * built on shard 0 and moved to shard 1. */
void cm_layout_run(size_t len, struct cm_layout_result *out);

#ifdef __cplusplus
}
#endif

#endif
