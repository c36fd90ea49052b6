// Unit tests for targets/nvmf/rdma_pdata: every RDMA_CM_REJECT status of
// the NVMe RDMA transport binding, the accepted queue parameters and the
// target preset depths, and the private data formats byte by byte.
#include <errno.h>
#include <string.h>

#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "proto/nvme/rdma_pdata.h"
}

namespace
{

nvme_rdma_limits Limits()
{
	nvme_rdma_limits l;
	l.max_qid = 8;
	l.admin_depth = 32;
	l.io_depth = 128;
	l.dev_max_init_rd_atom = 16;
	l.dev_max_rd_atom = 16;
	return l;
}

nvme_rdma_cm_req Req(uint16_t qid, uint16_t hrq, uint16_t hsq,
		     uint16_t cntlid = 0)
{
	nvme_rdma_cm_req r;
	memset(&r, 0, sizeof(r));
	r.qid = qid;
	r.hrqsize = hrq;
	r.hsqsize = hsq;
	r.cntlid = cntlid;
	return r;
}

// Parse @r padded to the 56 bytes IB delivers; return the REJ status or 0.
uint16_t Parse(const nvme_rdma_cm_req &r, nvme_rdma_accept *acc,
	       uint8_t ird = 16, uint8_t ord = 0,
	       nvme_rdma_limits lim = Limits())
{
	uint8_t buf[56] = {0};
	uint16_t sts = 0xDEAD;

	memcpy(buf, &r, sizeof(r));
	int rc = nvme_rdma_req_parse(&lim, buf, sizeof(buf), ird, ord, acc,
				     &sts);
	if (rc == 0)
		return 0;
	EXPECT_EQ(-EPROTO, rc);
	return sts;
}

TEST(NvmfRdmaPdata, WireLayout)
{
	nvme_rdma_cm_req r;
	ASSERT_EQ(0, nvme_rdma_req_build(3, 128, 7, &r));
	const uint8_t *b = (const uint8_t *)&r;
	// recfmt 0, qid 3, hrqsize 128, hsqsize 127, cntlid 7, little-endian.
	const uint8_t want[10] = {0, 0, 3, 0, 128, 0, 127, 0, 7, 0};
	EXPECT_EQ(0, memcmp(b, want, sizeof(want)));
	for (size_t i = 10; i < sizeof(r); i++)
		EXPECT_EQ(0, b[i]) << i;
	EXPECT_EQ(-EINVAL, nvme_rdma_req_build(1, 1, 0, &r));
	EXPECT_EQ(-EINVAL, nvme_rdma_req_build(1, 70000, 0, &r));

	nvme_rdma_cm_rej rej;
	ASSERT_EQ(0, nvme_rdma_rej_build(NVME_RDMA_CM_INVALID_ORD, &rej));
	const uint8_t rej_want[4] = {0, 0, 8, 0};
	EXPECT_EQ(0, memcmp(&rej, rej_want, 4));
	EXPECT_EQ(-EINVAL, nvme_rdma_rej_build(0, &rej));
	EXPECT_EQ(-EINVAL, nvme_rdma_rej_build(10, &rej));
	EXPECT_EQ(-EINVAL, nvme_rdma_rej_build(1, nullptr));
}

TEST(NvmfRdmaPdata, AcceptsLinuxHostAdminAndIo)
{
	nvme_rdma_accept acc;
	// Linux: admin queue hrqsize 32, hsqsize 31; IRD = device max, ORD 0.
	ASSERT_EQ(0, Parse(Req(0, 32, 31), &acc, 16, 0));
	EXPECT_EQ(0, acc.qid);
	EXPECT_EQ(32, acc.sq_entries);
	EXPECT_EQ(32, acc.host_rq);
	EXPECT_EQ(16, acc.initiator_depth); // min(32, dev 16, host 16)
	EXPECT_EQ(0, acc.responder_resources);
	EXPECT_EQ(0, acc.rep.recfmt);
	EXPECT_EQ(32, acc.rep.crqsize);
	const uint8_t *b = (const uint8_t *)&acc.rep;
	for (size_t i = 4; i < sizeof(acc.rep); i++)
		EXPECT_EQ(0, b[i]);

	ASSERT_EQ(0, Parse(Req(4, 128, 127, 9), &acc, 4, 0));
	EXPECT_EQ(4, acc.qid);
	EXPECT_EQ(9, acc.cntlid);
	EXPECT_EQ(128, acc.sq_entries);
	EXPECT_EQ(128, acc.rep.crqsize);
	EXPECT_EQ(4, acc.initiator_depth); // the host's IRD is the cap
}

TEST(NvmfRdmaPdata, InitiatorDepthIsMinOfQueueDeviceAndHost)
{
	nvme_rdma_accept acc;
	nvme_rdma_limits l = Limits();
	l.dev_max_init_rd_atom = 200;
	ASSERT_EQ(0, Parse(Req(1, 8, 7), &acc, 100, 0, l));
	EXPECT_EQ(8, acc.initiator_depth); // the queue depth caps it
	ASSERT_EQ(0, Parse(Req(1, 128, 127), &acc, 100, 0, l));
	EXPECT_EQ(100, acc.initiator_depth); // the host's IRD
	l.dev_max_init_rd_atom = 3;
	ASSERT_EQ(0, Parse(Req(1, 128, 127), &acc, 100, 0, l));
	EXPECT_EQ(3, acc.initiator_depth); // the device
}

TEST(NvmfRdmaPdata, InvalidLength)
{
	nvme_rdma_limits l = Limits();
	nvme_rdma_accept acc;
	uint8_t buf[32] = {0};
	uint16_t sts = 0;

	EXPECT_EQ(-EPROTO,
		  nvme_rdma_req_parse(&l, nullptr, 0, 1, 0, &acc, &sts));
	EXPECT_EQ(NVME_RDMA_CM_INVALID_LEN, sts);
	sts = 0;
	EXPECT_EQ(-EPROTO, nvme_rdma_req_parse(&l, buf, 31, 1, 0, &acc, &sts));
	EXPECT_EQ(NVME_RDMA_CM_INVALID_LEN, sts);
	sts = 0;
	EXPECT_EQ(-EPROTO,
		  nvme_rdma_req_parse(&l, nullptr, 32, 1, 0, &acc, &sts));
	EXPECT_EQ(NVME_RDMA_CM_INVALID_LEN, sts);
}

TEST(NvmfRdmaPdata, InvalidRecfmt)
{
	nvme_rdma_accept acc;
	nvme_rdma_cm_req r = Req(0, 32, 31);
	r.recfmt = 1;
	EXPECT_EQ(NVME_RDMA_CM_INVALID_RECFMT, Parse(r, &acc));
}

TEST(NvmfRdmaPdata, InvalidQid)
{
	nvme_rdma_accept acc;
	EXPECT_EQ(0, Parse(Req(8, 32, 31), &acc));
	EXPECT_EQ(NVME_RDMA_CM_INVALID_QID, Parse(Req(9, 32, 31), &acc));
	EXPECT_EQ(NVME_RDMA_CM_INVALID_QID, Parse(Req(0xFFFF, 32, 31), &acc));
}

TEST(NvmfRdmaPdata, InvalidHsqsize)
{
	nvme_rdma_accept acc;
	// 0's based: 0 means a 1-entry queue.
	EXPECT_EQ(NVME_RDMA_CM_INVALID_HSQSIZE, Parse(Req(0, 32, 0), &acc));
	// Admin: 32 entries at most (hsqsize 31); Linux sends exactly that.
	EXPECT_EQ(NVME_RDMA_CM_INVALID_HSQSIZE, Parse(Req(0, 33, 32), &acc));
	// I/O: 128 entries at most.
	EXPECT_EQ(0, Parse(Req(1, 128, 127), &acc));
	EXPECT_EQ(NVME_RDMA_CM_INVALID_HSQSIZE, Parse(Req(1, 129, 128), &acc));
	EXPECT_EQ(NVME_RDMA_CM_INVALID_HSQSIZE,
		  Parse(Req(1, 0xFFFF, 0xFFFF), &acc));
}

TEST(NvmfRdmaPdata, InvalidHrqsize)
{
	nvme_rdma_accept acc;
	EXPECT_EQ(NVME_RDMA_CM_INVALID_HRQSIZE, Parse(Req(1, 0, 15), &acc));
	EXPECT_EQ(NVME_RDMA_CM_INVALID_HRQSIZE, Parse(Req(1, 15, 15), &acc));
	EXPECT_EQ(0, Parse(Req(1, 16, 15), &acc));
	EXPECT_EQ(0, Parse(Req(1, 500, 15), &acc)); // more is fine
	EXPECT_EQ(500, acc.host_rq);
}

TEST(NvmfRdmaPdata, InvalidIrdAndOrd)
{
	nvme_rdma_accept acc;
	EXPECT_EQ(NVME_RDMA_CM_INVALID_IRD, Parse(Req(1, 16, 15), &acc, 0, 0));
	// ORD up to what the device could serve is accepted, granted 0.
	ASSERT_EQ(0, Parse(Req(1, 16, 15), &acc, 1, 16));
	EXPECT_EQ(0, acc.responder_resources);
	EXPECT_EQ(NVME_RDMA_CM_INVALID_ORD, Parse(Req(1, 16, 15), &acc, 1, 17));
}

TEST(NvmfRdmaPdata, NoResourcesWhenDeviceCannotRead)
{
	nvme_rdma_accept acc;
	nvme_rdma_limits l = Limits();
	l.dev_max_init_rd_atom = 0;
	EXPECT_EQ(NVME_RDMA_CM_NO_RSC, Parse(Req(1, 16, 15), &acc, 4, 0, l));
}

TEST(NvmfRdmaPdata, FirstFailingRuleWins)
{
	nvme_rdma_accept acc;
	nvme_rdma_cm_req r = Req(99, 0, 0);
	r.recfmt = 5;
	EXPECT_EQ(NVME_RDMA_CM_INVALID_RECFMT, Parse(r, &acc, 0, 255));
	r.recfmt = 0;
	EXPECT_EQ(NVME_RDMA_CM_INVALID_QID, Parse(r, &acc, 0, 255));
	r.qid = 1;
	EXPECT_EQ(NVME_RDMA_CM_INVALID_HSQSIZE, Parse(r, &acc, 0, 255));
	r.hsqsize = 3;
	EXPECT_EQ(NVME_RDMA_CM_INVALID_HRQSIZE, Parse(r, &acc, 0, 255));
	r.hrqsize = 4;
	EXPECT_EQ(NVME_RDMA_CM_INVALID_IRD, Parse(r, &acc, 0, 255));
	EXPECT_EQ(NVME_RDMA_CM_INVALID_ORD, Parse(r, &acc, 1, 255));
	EXPECT_EQ(0, Parse(r, &acc, 1, 0));
}

TEST(NvmfRdmaPdata, ErrorLeavesAcceptUntouchedAndChecksArgs)
{
	nvme_rdma_accept acc, before;
	memset(&acc, 0x5A, sizeof(acc));
	before = acc;
	EXPECT_NE(0, Parse(Req(0, 32, 0), &acc));
	EXPECT_EQ(0, memcmp(&acc, &before, sizeof(acc)));

	nvme_rdma_limits l = Limits();
	uint16_t sts;
	nvme_rdma_cm_req r = Req(0, 32, 31);
	EXPECT_EQ(-EINVAL,
		  nvme_rdma_req_parse(nullptr, &r, 32, 1, 0, &acc, &sts));
	EXPECT_EQ(-EINVAL,
		  nvme_rdma_req_parse(&l, &r, 32, 1, 0, nullptr, &sts));
	EXPECT_EQ(-EINVAL,
		  nvme_rdma_req_parse(&l, &r, 32, 1, 0, &acc, nullptr));
	l.max_qid = 0;
	EXPECT_EQ(-EINVAL, nvme_rdma_req_parse(&l, &r, 32, 1, 0, &acc, &sts));
	l = Limits();
	l.io_depth = 1;
	EXPECT_EQ(-EINVAL, nvme_rdma_req_parse(&l, &r, 32, 1, 0, &acc, &sts));
}

TEST(NvmfRdmaPdata, StatusStrings)
{
	for (uint16_t s = 1; s <= 9; s++)
		EXPECT_STRNE("unknown", nvme_rdma_cm_sts_str(s)) << s;
	EXPECT_STREQ("unknown", nvme_rdma_cm_sts_str(0));
	EXPECT_STREQ("invalid IRD", nvme_rdma_cm_sts_str(7));
}

} // namespace
