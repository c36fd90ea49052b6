/* CQ budget: sizing, growth and refusal (qp/cq_size.h). */
#include <errno.h>

#include <gtest/gtest.h>

extern "C" {
#include "qp/cq_size.h"
}

TEST(QpCqSize, InitialCoversSrqAndPool)
{
	EXPECT_EQ(wqp_cq_initial(0, 1024, 64, 128, 1u << 22), 1024u + 64 * 128);
	EXPECT_EQ(wqp_cq_initial(0, 0, 0, 0, 100), 16u);
	EXPECT_EQ(wqp_cq_initial(0, 1024, 1000, 128, 32767), 32767u);
	EXPECT_EQ(wqp_cq_initial(500, 1024, 64, 128, 32767), 500u);
}

TEST(QpCqSize, FitsWithoutResize)
{
	wqp_cq_budget b = {256, 200, 4096};
	uint32_t ns = 0;
	EXPECT_EQ(wqp_cq_plan(&b, 56, &ns), 0);
	EXPECT_EQ(ns, 256u);
	EXPECT_EQ(wqp_cq_reserve(&b, 56), 0);
	EXPECT_EQ(b.reserved, 256u);
}

TEST(QpCqSize, GrowsAtLeastDoubling)
{
	wqp_cq_budget b = {256, 250, 4096};
	uint32_t ns = 0;
	ASSERT_EQ(wqp_cq_plan(&b, 10, &ns), 1);
	EXPECT_EQ(ns, 512u);
	/* A big claim grows to what it needs. */
	ASSERT_EQ(wqp_cq_plan(&b, 1000, &ns), 1);
	EXPECT_EQ(ns, 1250u);
	/* Not past the maximum. */
	b = {3000, 2990, 4096};
	ASSERT_EQ(wqp_cq_plan(&b, 100, &ns), 1);
	EXPECT_EQ(ns, 4096u);
}

TEST(QpCqSize, RefusedBeyondMaximumNeverOverrun)
{
	wqp_cq_budget b = {4096, 4000, 4096};
	uint32_t ns = 0;
	EXPECT_EQ(wqp_cq_plan(&b, 97, &ns), -ENOSPC);
	EXPECT_EQ(wqp_cq_reserve(&b, 97), -ENOSPC);
	EXPECT_EQ(b.reserved, 4000u);
	EXPECT_EQ(wqp_cq_plan(&b, 96, &ns), 0);
	/* Reserving without the resize the plan asked for is refused. */
	b = {256, 250, 4096};
	EXPECT_EQ(wqp_cq_reserve(&b, 10), -ENOSPC);
}

TEST(QpCqSize, ReleaseChecksUnderflow)
{
	wqp_cq_budget b = {256, 10, 256};
	EXPECT_EQ(wqp_cq_release(&b, 11), -EOVERFLOW);
	EXPECT_EQ(b.reserved, 10u);
	EXPECT_EQ(wqp_cq_release(&b, 10), 0);
	EXPECT_EQ(b.reserved, 0u);
}

TEST(QpCqSize, NoOverflowInArithmetic)
{
	wqp_cq_budget b = {UINT32_MAX, UINT32_MAX - 1, UINT32_MAX};
	uint32_t ns = 0;
	EXPECT_EQ(wqp_cq_plan(&b, 2, &ns), -ENOSPC);
	EXPECT_EQ(wqp_cq_reserve(&b, 2), -ENOSPC);
}

TEST(QpCqSize, PickPrefersRoomThenGrowthThenANewCq)
{
	/* Room as it is in the second: no resize. */
	wqp_cq_budget b[3] = {{256, 250, 256}, {256, 100, 4096}, {0, 0, 0}};
	EXPECT_EQ(wqp_cq_pick(b, 2, 4, 4096, 10), 1);
	/* No room as it is: the first that can grow. */
	b[1].reserved = 250;
	EXPECT_EQ(wqp_cq_pick(b, 2, 4, 4096, 10), 1);
	/* Neither can grow: a new CQ while under the count. */
	b[1].max = 256;
	EXPECT_EQ(wqp_cq_pick(b, 2, 4, 4096, 10), WQP_CQ_PICK_NEW);
	EXPECT_EQ(wqp_cq_pick(b, 2, 2, 4096, 10), -ENOSPC);
	/* None yet. */
	EXPECT_EQ(wqp_cq_pick(b, 0, 4, 4096, 10), WQP_CQ_PICK_NEW);
	/* More than any one CQ holds. */
	EXPECT_EQ(wqp_cq_pick(b, 0, 4, 4096, 4097), -ENOSPC);
}

TEST(QpCqSize, PickSpreadsManyQpsOverCqsOfADeviceLimit)
{
	/* 20,000 QPs of 2 send entries on CQs of at most 4096 entries. */
	wqp_cq_budget b[16] = {};
	unsigned n = 0;
	for (int q = 0; q < 20000; q++) {
		int i = wqp_cq_pick(b, n, 16, 4096, 2);
		ASSERT_NE(i, -ENOSPC) << q;
		if (i == WQP_CQ_PICK_NEW) {
			b[n] = {64, 0, 4096};
			i = (int)n++;
		}
		uint32_t ns;
		if (wqp_cq_plan(&b[i], 2, &ns) == 1)
			b[i].size = ns;
		ASSERT_EQ(wqp_cq_reserve(&b[i], 2), 0);
	}
	EXPECT_EQ(n, 10u); /* 40,000 entries / 4096 */
	for (unsigned i = 0; i + 1 < n; i++)
		EXPECT_EQ(b[i].reserved, 4096u);
	/* A release makes room in a full CQ: it is reused first. */
	ASSERT_EQ(wqp_cq_release(&b[3], 2), 0);
	EXPECT_EQ(wqp_cq_pick(b, n, 16, 4096, 2), 3);
}
