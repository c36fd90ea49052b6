/*
 * targets/nvmf/rdma_place.c - the RDMA binding's placement policy
 * (rdma_place.h).
 */
#include <string.h>

#include "targets/nvmf/rdma_place.h"
#include "proto/nvme/spec_fabrics.h"

int nvmf_rdma_pick_shard(const struct wharf_conn_request *req,
			 const struct wharf_cm_shard_load *shards,
			 unsigned nshards, void *arg)
{
	struct nvme_rdma_cm_req p;

	(void)shards;
	(void)arg;
	if (!req->private_data || req->private_data_len < sizeof(p) || !nshards)
		return -1;
	memcpy(&p, req->private_data, sizeof(p));
	if (p.qid == 0) /* admin queue: the library's least-loaded shard */
		return -1;
	return (int)(((unsigned)p.cntlid + p.qid) % nshards);
}
