/*
 * The cm runtime torture (C, because the runtime's internal header uses
 * C11 atomics): connections published and retired on every shard of a
 * real context while readers on every shard and an application thread
 * look them up by id and by QP.
 */
#ifndef WHARF_TESTS_UNIT_CM_TORTURE_SHIM_H
#define WHARF_TESTS_UNIT_CM_TORTURE_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cm_torture_result {
	int err;	    /* 0, or the -errno of a setup step */
	uint64_t created;   /* connections published */
	uint64_t destroyed; /* connections retired */
	uint64_t lookups;   /* lookups on shards and the app thread */
	uint64_t hits;	    /* lookups that found a live connection */
	uint64_t app_lookups;
	uint64_t bad;		/* a connection found with the wrong contents */
	uint64_t left_in_table; /* after teardown: must be 0 */
};

/* @nshards shards, @ops create/destroy operations per shard. */
void cm_torture_run(unsigned nshards, unsigned ops,
		    struct cm_torture_result *out);

#ifdef __cplusplus
}
#endif

#endif
