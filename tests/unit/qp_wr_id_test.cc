/* wr_id kind tags and typed WR contexts (qp/wr_id.h, wharf_wr_entry). */
#include <gtest/gtest.h>

#include <cstddef>

extern "C" {
#include "qp/wr_id.h"
}

namespace
{

constexpr uint32_t kReadTag = 0x52454144;  /* 'READ' */
constexpr uint32_t kReplyTag = 0x52504c59; /* 'RPLY' */

struct ReadCtx {
	int id;
	wharf_wr wr;
	char payload[24];
};

struct ReplyCtx {
	char hdr[3];
	wharf_wr wr;
};

} // namespace

TEST(QpWrId, SendRoundTripNeedsBusyMagic)
{
	ReadCtx c{};
	c.wr.tag = kReadTag;
	c.wr.magic = WHARF_WR_MAGIC_BUSY;
	uint64_t id = wqp_wrid_send(&c.wr);
	ASSERT_NE(id, 0u);
	EXPECT_EQ(wqp_wrid_kind(id), WQP_WRID_SEND);
	EXPECT_EQ(wqp_wrid_to_wr(id), &c.wr);
	/* Completed (idle) or foreign memory: no pointer comes back. */
	c.wr.magic = WHARF_WR_MAGIC_IDLE;
	EXPECT_EQ(wqp_wrid_to_wr(id), nullptr);
	c.wr.magic = 0;
	EXPECT_EQ(wqp_wrid_to_wr(id), nullptr);
}

TEST(QpWrId, MisalignedOrNullRefused)
{
	alignas(8) unsigned char raw[sizeof(wharf_wr) + 8] = {};
	EXPECT_EQ(wqp_wrid_send(nullptr), 0u);
	EXPECT_EQ(wqp_wrid_send((const wharf_wr *)(raw + 4)), 0u);
	EXPECT_EQ(wqp_wrid_to_wr(0), nullptr);
	EXPECT_EQ(wqp_wrid_to_wr(WQP_WRID_SEND), nullptr);
}

TEST(QpWrId, ReceiveIdsAreNeverPointers)
{
	uint64_t id = wqp_wrid_recv(WQP_WRID_SRQ, 1023);
	EXPECT_EQ(wqp_wrid_kind(id), WQP_WRID_SRQ);
	EXPECT_EQ(wqp_wrid_index(id), 1023u);
	EXPECT_EQ(wqp_wrid_to_wr(id), nullptr);
	id = wqp_wrid_recv(WQP_WRID_RQ, UINT32_MAX);
	EXPECT_EQ(wqp_wrid_kind(id), WQP_WRID_RQ);
	EXPECT_EQ(wqp_wrid_index(id), UINT32_MAX);
	EXPECT_EQ(wqp_wrid_recv(WQP_WRID_SEND, 1), 0u);
	EXPECT_EQ(wqp_wrid_recv(WQP_WRID_BAD, 1), 0u);
	EXPECT_EQ(wqp_wrid_kind(4), WQP_WRID_BAD);
	EXPECT_EQ(wqp_wrid_kind(7), WQP_WRID_BAD);
}

TEST(QpWrId, EntryChecksTheTypeTag)
{
	ReadCtx r{};
	ReplyCtx p{};
	r.wr.tag = kReadTag;
	p.wr.tag = kReplyTag;
	EXPECT_EQ(wharf_wr_entry(&r.wr, ReadCtx, wr, kReadTag), &r);
	EXPECT_EQ(wharf_wr_entry(&p.wr, ReplyCtx, wr, kReplyTag), &p);
	/* The wrong type is refused instead of miscast. */
	EXPECT_EQ(wharf_wr_entry(&p.wr, ReadCtx, wr, kReadTag), nullptr);
	EXPECT_EQ(wharf_wr_entry(&r.wr, ReplyCtx, wr, kReplyTag), nullptr);
	EXPECT_EQ(wharf_wr_entry((wharf_wr *)nullptr, ReadCtx, wr, kReadTag),
		  nullptr);
	/* Tag 0 never matches, even an uninitialised (zero) WR. */
	wharf_wr z{};
	EXPECT_EQ(wharf_wr_entry(&z, ReadCtx, wr, 0u), nullptr);
}
