/* Which work requests go inline (qp/inline.h). */
#include <gtest/gtest.h>

extern "C" {
#include "qp/inline.h"
}

namespace
{

ibv_sge sge(uint32_t len)
{
	return ibv_sge{0x1000, len, 0};
}

TEST(QpInline, SendsAndWritesUpToTheLimit)
{
	ibv_sge one = sge(16);
	for (wharf_wr_op op :
	     {WHARF_WR_SEND, WHARF_WR_SEND_IMM, WHARF_WR_SEND_INV,
	      WHARF_WR_RDMA_WRITE, WHARF_WR_RDMA_WRITE_IMM}) {
		EXPECT_TRUE(wqp_inline_fits(op, &one, 1, 16)) << op;
		EXPECT_TRUE(wqp_inline_fits(op, &one, 1, 64)) << op;
		EXPECT_FALSE(wqp_inline_fits(op, &one, 1, 15)) << op;
	}
}

TEST(QpInline, TheWholeGatherListCounts)
{
	ibv_sge two[2] = {sge(40), sge(24)};

	EXPECT_TRUE(wqp_inline_fits(WHARF_WR_SEND, two, 2, 64));
	EXPECT_FALSE(wqp_inline_fits(WHARF_WR_SEND, two, 2, 63));
	EXPECT_TRUE(wqp_inline_fits(WHARF_WR_SEND, two, 1, 40));
}

TEST(QpInline, LengthsDoNotWrapAround)
{
	ibv_sge big[2] = {sge(0xffffffffu), sge(2)};

	EXPECT_FALSE(wqp_inline_fits(WHARF_WR_SEND, big, 2, 0xffffffffu));
}

TEST(QpInline, NeverForReadsEmptyOrDisabled)
{
	ibv_sge one = sge(16), zero = sge(0);

	EXPECT_FALSE(wqp_inline_fits(WHARF_WR_RDMA_READ, &one, 1, 64));
	EXPECT_FALSE(wqp_inline_fits(WHARF_WR_NONE, &one, 1, 64));
	EXPECT_FALSE(wqp_inline_fits(WHARF_WR_SEND, &one, 1, 0));
	EXPECT_FALSE(wqp_inline_fits(WHARF_WR_SEND, &one, 0, 64));
	EXPECT_FALSE(wqp_inline_fits(WHARF_WR_SEND, nullptr, 1, 64));
	EXPECT_FALSE(wqp_inline_fits(WHARF_WR_SEND, &zero, 1, 64));
}

} // namespace
