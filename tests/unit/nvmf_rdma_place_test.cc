// The RDMA binding's placement policy (nvmf_rdma_pick_shard): admin queues go
// to the library's default policy, I/O queues spread by qid and the REQ's
// cntlid, and REQs too short to carry a qid fall back to the default.
#include <string.h>

#include <gtest/gtest.h>

extern "C" {
#include "proto/nvme/rdma_pdata.h"
#include "targets/nvmf/rdma_place.h"
}

namespace
{

int Pick(const void *pdata, size_t len, unsigned nshards)
{
	wharf_conn_request req = {};
	wharf_cm_shard_load loads[8] = {};

	req.size = sizeof(req);
	req.private_data = pdata;
	req.private_data_len = len;
	return nvmf_rdma_pick_shard(&req, loads, nshards, nullptr);
}

int PickQueue(uint16_t qid, uint16_t cntlid, unsigned nshards)
{
	uint8_t pd[56] = {}; // IB pads the REQ's private data to 56 bytes
	nvme_rdma_cm_req req;

	EXPECT_EQ(0, nvme_rdma_req_build(qid, 32, cntlid, &req));
	memcpy(pd, &req, sizeof(req));
	return Pick(pd, sizeof(pd), nshards);
}

TEST(NvmfRdmaPlace, AdminQueuesTakeTheDefaultPolicy)
{
	EXPECT_LT(PickQueue(0, 0, 4), 0);
}

TEST(NvmfRdmaPlace, IoQueuesOfOneControllerSpreadOverTheShards)
{
	bool seen[4] = {};

	for (uint16_t qid = 1; qid <= 4; qid++) {
		int s = PickQueue(qid, 7, 4);
		ASSERT_GE(s, 0);
		ASSERT_LT(s, 4);
		seen[s] = true;
	}
	for (bool b : seen)
		EXPECT_TRUE(b);
	// Another controller's first queue starts elsewhere.
	EXPECT_NE(PickQueue(1, 7, 4), PickQueue(1, 8, 4));
}

TEST(NvmfRdmaPlace, ShortOrMissingPrivateDataTakesTheDefaultPolicy)
{
	uint8_t pd[16] = {0, 0, 1, 0};

	EXPECT_LT(Pick(nullptr, 0, 2), 0);
	EXPECT_LT(Pick(pd, sizeof(pd), 2), 0);
	EXPECT_LT(PickQueue(1, 0, 0), 0); // no shard to pick
}

} // namespace
