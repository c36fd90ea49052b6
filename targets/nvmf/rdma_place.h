/*
 * targets/nvmf/rdma_place.h - where the RDMA binding puts a new queue: the
 * owner-shard policy of its listeners (wharf_listen_opts.pick_shard).
 */
#ifndef WHARF_TARGETS_NVMF_RDMA_PLACE_H
#define WHARF_TARGETS_NVMF_RDMA_PLACE_H

#include <wharf/cm.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * nvmf_rdma_pick_shard() - the owner shard of a queue, from its REQ.
 * @req: the request; its private data is the NVMe RDMA REQ (qid at byte
 *       2, cntlid at byte 8; peer bytes, only read).
 * @shards: the shards' loads (unused: spreading is by queue ID).
 * @nshards: the number of shards.
 * @arg: unused.
 *
 * Admin queues (qid 0) and requests without the 32-byte REQ format take
 * the library's default policy (least loaded, NUMA-local); I/O queue qid
 * of controller cntlid goes to shard (cntlid + qid) % nshards, so one
 * controller's I/O queues spread over the shards and controllers start
 * on different shards.
 *
 * Return: a shard index, or -1 for the default policy.
 * Context: the listener's shard; pure, non-blocking.
 */
int nvmf_rdma_pick_shard(const struct wharf_conn_request *req,
			 const struct wharf_cm_shard_load *shards,
			 unsigned nshards, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_RDMA_PLACE_H */
