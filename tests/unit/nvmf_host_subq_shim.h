// C entry points to the host's per-thread submission rings
// (nvmf_host/subq.c) for the C++ test: a queue with only what the rings
// use, on a real shard, whose commands "issue" by completing at once.
#ifndef WHARF_TESTS_UNIT_NVMF_HOST_SUBQ_SHIM_H
#define WHARF_TESTS_UNIT_NVMF_HOST_SUBQ_SHIM_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wharf_shard;
struct wharf_nvmf_host_queue;

/* A queue of @entries owned by @shard, its rings' poller started there;
 * NULL on failure.  Blocks until the shard ran the start. */
struct wharf_nvmf_host_queue *subq_shim_queue_new(struct wharf_shard *shard,
						  unsigned entries);
/* Retires the rings on the owner (what they hold is issued), then frees. */
void subq_shim_queue_free(struct wharf_nvmf_host_queue *q);
/* Whether the owner said it may sleep and no submitter has woken it. */
bool subq_shim_armed(struct wharf_nvmf_host_queue *q);
/* A read through the calling thread's ring: wnh_subq_submit()'s result. */
int subq_shim_read(struct wharf_nvmf_host_queue *q);
/* Commands the owners issued (and completed) so far, all queues. */
unsigned subq_shim_issued(void);

#ifdef __cplusplus
}
#endif

#endif
