// Capsule validation through the whole core: every bad-capsule status
// (short capsule, oversized in-capsule data, FUSE / PSDT, SGL type and
// subtype, in-capsule offset and length, keyed length, data direction),
// Command ID conflicts, queue overrun, and the completion fields every
// response carries (CID, SQ ID, SQ head modulo the queue size, phase 0).
#include "tests/unit/nvmf_test_util.h"

namespace
{

using namespace nvmf_test;

class NvmfCapsule : public NvmfTest
{
      protected:
	nvmf_queue *admin_ = nullptr, *io_ = nullptr;
	uint16_t cntlid_ = 0;

	void SetUp() override
	{
		NvmfTest::SetUp();
		admin_ = Admin(kSub, &cntlid_);
		io_ = Io(1, cntlid_, 8);
	}

	Capsule Write(uint16_t cid, uint32_t nlb0 = 0)
	{
		Capsule c = Cmd(NVME_IO_WRITE, cid, 1);
		c.sqe.cdw12 = nlb0;
		return c;
	}

	void ExpectStatus(nvmf_queue *q, const Capsule &c, uint8_t sct,
			  uint8_t sc)
	{
		nvmf_req r = Exec(q, c);
		EXPECT_EQ(sct, Sct(r));
		EXPECT_EQ(sc, Sc(r));
		EXPECT_TRUE(Dnr(r));
		EXPECT_EQ(0u, nvmf_queue_inflight(q));
	}
};

TEST_F(NvmfCapsule, ShorterThanAnSqeIsDropped)
{
	Slot s;
	std::vector<uint8_t> b = Cmd(NVME_IO_FLUSH, 1, 1).Bytes();
	b.resize(63);
	EXPECT_EQ(NVMF_ACT_DROP, Run(io_, &s, b));
	b.clear();
	EXPECT_EQ(NVMF_ACT_DROP, Run(io_, &s, b));
	EXPECT_EQ(NVMF_ACT_DROP, nvmf_req_recv(io_, &s.req, nullptr, 64));
	EXPECT_EQ(3u, Stats().dropped);
	EXPECT_EQ(0u, nvmf_queue_inflight(io_));
}

TEST_F(NvmfCapsule, InCapsuleDataBeyondIoccszIsRejected)
{
	Capsule c = Write(1);
	c.icd.assign(4096 + 16, 0);
	SetInCapsule(&c.sqe, 0, 512);
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_SGL_INVALID_DLEN);
	c.icd.resize(4096); // exactly IOCCSZ: fine
	EXPECT_EQ(0, Status(Exec(io_, c)));
}

TEST_F(NvmfCapsule, FusedAndPrpAreInvalidField)
{
	Capsule c = Cmd(NVME_IO_FLUSH, 1, 1);
	c.sqe.flags |= 1; // FUSE first
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	c = Cmd(NVME_IO_FLUSH, 1, 1);
	c.sqe.flags = 0; // PSDT 00b: PRPs
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	c.sqe.flags = 0x80; // PSDT 10b
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	c.sqe.flags = NVME_FLAGS_PSDT_SGL;
	EXPECT_EQ(0, Status(Exec(io_, c)));
}

TEST_F(NvmfCapsule, SglTypeAndSubtype)
{
	std::vector<uint8_t> host(512);
	const uint8_t bad_types[] = {
		NVME_SGL_TYPE_DATA_BLOCK << 4 | NVME_SGL_SUB_ADDRESS,
		NVME_SGL_TYPE_BIT_BUCKET << 4,
		NVME_SGL_TYPE_SEGMENT << 4 | NVME_SGL_SUB_OFFSET,
		NVME_SGL_TYPE_LAST_SEGMENT << 4,
		NVME_SGL_TYPE_TRANSPORT << 4 | 0xA,
		NVME_SGL_TYPE_KEYED_DATA << 4 | NVME_SGL_SUB_OFFSET,
		NVME_SGL_TYPE_KEYED_DATA << 4 | 0x5,
		0xF0,
	};
	for (uint8_t t : bad_types) {
		Capsule c = Write(1);
		SetKeyed(&c.sqe, host.data(), 512);
		c.sqe.sgl.keyed.type = t;
		SCOPED_TRACE(t);
		ExpectStatus(io_, c, NVME_SCT_GENERIC,
			     NVME_SC_SGL_INVALID_TYPE);
	}
	// Commands without data never look at SGL1 (reserved there).
	Capsule c = Cmd(NVME_IO_FLUSH, 2, 1);
	c.sqe.sgl.keyed.type = 0xF0;
	EXPECT_EQ(0, Status(Exec(io_, c)));
}

TEST_F(NvmfCapsule, KeyedLengthMustCoverTheTransfer)
{
	std::vector<uint8_t> host(1024, 0x11);
	Capsule c = Write(1, 1); // 2 blocks = 1024 bytes
	SetKeyed(&c.sqe, host.data(), 1023);
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_SGL_INVALID_DLEN);
	SetKeyed(&c.sqe, host.data(), 0);
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_SGL_INVALID_DLEN);
	// Longer than needed is fine (SGLS bit 18): only 1024 bytes move.
	SetKeyed(&c.sqe, host.data(), 0xFFFFFF, true);
	Slot s;
	EXPECT_EQ(NVMF_ACT_READ,
		  nvmf_req_recv(io_, &s.req, c.Bytes().data(), 64));
	EXPECT_EQ(1024u, s.req.xfer_len);
	EXPECT_EQ(NVMF_XFER_H2C, s.req.xfer);
	EXPECT_EQ((uint64_t)(uintptr_t)host.data(), s.req.rdma_addr);
	EXPECT_EQ(0x1234u, s.req.rdma_key);
	EXPECT_TRUE(s.req.rdma_invalidate);
	EXPECT_EQ(1u, nvmf_queue_inflight(io_));
	nvmf_req_abort(io_, &s.req);
	EXPECT_EQ(0u, nvmf_queue_inflight(io_));
}

TEST_F(NvmfCapsule, InCapsuleOffsetAndLength)
{
	Capsule c = Write(1);
	c.icd.assign(1024, 0x77);
	SetInCapsule(&c.sqe, 4097, 512); // offset beyond ICD size
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_SGL_INVALID_OFS);
	SetInCapsule(&c.sqe, 600, 512); // runs past the data received
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_SGL_INVALID_DLEN);
	SetInCapsule(&c.sqe, 0, 511); // shorter than the transfer
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_SGL_INVALID_DLEN);
	SetInCapsule(&c.sqe, UINT64_MAX - 10, 512);
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_SGL_INVALID_OFS);
	SetInCapsule(&c.sqe, 512, 512); // at an offset: fine
	EXPECT_EQ(0, Status(Exec(io_, c)));
}

TEST_F(NvmfCapsule, InCapsuleDataCannotCarryControllerToHostData)
{
	Capsule c = Cmd(NVME_IO_READ, 1, 1);
	c.icd.assign(512, 0);
	SetInCapsule(&c.sqe, 0, 512);
	ExpectStatus(io_, c, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
}

TEST_F(NvmfCapsule, CommandIdConflict)
{
	std::vector<uint8_t> host(512);
	Capsule c = Write(42);
	SetKeyed(&c.sqe, host.data(), 512);
	Slot first;
	std::vector<uint8_t> b = c.Bytes();
	ASSERT_EQ(NVMF_ACT_READ,
		  nvmf_req_recv(io_, &first.req, b.data(), b.size()));
	// Same CID while the first is in flight.
	nvmf_req r = Exec(io_, Cmd(NVME_IO_FLUSH, 42, 1));
	EXPECT_EQ(NVME_SC_CID_CONFLICT, Sc(r));
	EXPECT_EQ(42, r.rsp.cid);
	EXPECT_EQ(1u, nvmf_queue_inflight(io_));
	// The first one still completes normally and frees its CID.
	first.buf.assign(512, 1);
	first.req.data = first.buf.data();
	EXPECT_EQ(NVMF_ACT_RESPOND, nvmf_req_exec(io_, &first.req));
	EXPECT_EQ(0, Status(first.req));
	EXPECT_EQ(0, Status(Exec(io_, Cmd(NVME_IO_FLUSH, 42, 1))));
}

TEST_F(NvmfCapsule, OverrunningTheQueueIsDropped)
{
	std::vector<uint8_t> host(512);
	std::vector<Slot> slots(9);
	for (uint16_t i = 0; i < 8; i++) { // 8 entries
		Capsule c = Write(i);
		SetKeyed(&c.sqe, host.data(), 512);
		std::vector<uint8_t> b = c.Bytes();
		ASSERT_EQ(NVMF_ACT_READ, nvmf_req_recv(io_, &slots[i].req,
						       b.data(), b.size()));
	}
	std::vector<uint8_t> b = Write(8).Bytes();
	EXPECT_EQ(NVMF_ACT_DROP,
		  nvmf_req_recv(io_, &slots[8].req, b.data(), b.size()));
	EXPECT_EQ(8u, nvmf_queue_inflight(io_));
	for (uint16_t i = 0; i < 8; i++)
		EXPECT_EQ(NVMF_ACT_RESPOND,
			  nvmf_req_fail(io_, &slots[i].req,
					NVME_STATUS(NVME_SCT_GENERIC,
						    NVME_SC_TRANSIENT_XPORT)));
	EXPECT_EQ(NVME_SC_TRANSIENT_XPORT, Sc(slots[0].req));
	EXPECT_FALSE(Dnr(slots[0].req));
	EXPECT_EQ(0u, nvmf_queue_inflight(io_));
}

TEST_F(NvmfCapsule, EveryCompletionCarriesSqHeadSqIdAndCid)
{
	// Connect completed (head 1) on this 8-entry queue; 20 more wrap it.
	for (uint16_t i = 0; i < 20; i++) {
		nvmf_req r =
			Exec(io_, Cmd(NVME_IO_FLUSH, (uint16_t)(100 + i), 1));
		EXPECT_EQ((i + 2) % 8, r.rsp.sqhd) << i;
		EXPECT_EQ(1, r.rsp.sqid);
		EXPECT_EQ(100 + i, r.rsp.cid);
		EXPECT_EQ(0, r.rsp.status & 1); // phase tag reserved: 0
	}
	// Errors too.
	nvmf_req r = Exec(io_, Cmd(0x7E, 7, 1));
	EXPECT_EQ(NVME_SC_INVALID_OPCODE, Sc(r));
	EXPECT_EQ((20 + 2) % 8, r.rsp.sqhd);
	EXPECT_EQ(7, r.rsp.cid);
	EXPECT_EQ(0, r.rsp.status & 1);
}

TEST_F(NvmfCapsule, ExecAndFailOnlyInTheRightState)
{
	Slot s;
	memset(&s.req, 0, sizeof(s.req));
	EXPECT_EQ(NVMF_ACT_DROP, nvmf_req_exec(io_, &s.req));
	EXPECT_EQ(NVMF_ACT_DROP, nvmf_req_fail(io_, &s.req, 1));
	EXPECT_EQ(NVMF_ACT_DROP, nvmf_req_resume(io_, &s.req));
	nvmf_req_abort(io_, &s.req); // no-op
	EXPECT_EQ(0u, nvmf_queue_inflight(io_));
	// A buffer never attached: Internal Error, not a crash.
	std::vector<uint8_t> host(512);
	Capsule c = Cmd(NVME_IO_READ, 3, 1);
	SetKeyed(&c.sqe, host.data(), 512);
	std::vector<uint8_t> b = c.Bytes();
	ASSERT_EQ(NVMF_ACT_BUF, nvmf_req_recv(io_, &s.req, b.data(), b.size()));
	EXPECT_EQ(NVMF_ACT_RESPOND, nvmf_req_exec(io_, &s.req));
	EXPECT_EQ(NVME_SC_INTERNAL, Sc(s.req));
}

TEST_F(NvmfCapsule, KilledQueueDropsNewCapsules)
{
	nvmf_tgt_kato_scan(tgt_, UINT64_MAX); // kato 0: nothing expires
	EXPECT_TRUE(fake_.killed.empty());
	DestroyQueue(admin_); // ends the association: kills the I/O queue
	ASSERT_TRUE(fake_.WasKilled(io_));
	Slot s;
	EXPECT_EQ(NVMF_ACT_DROP, Run(io_, &s, Cmd(NVME_IO_FLUSH, 1, 1)));
}

} // namespace
