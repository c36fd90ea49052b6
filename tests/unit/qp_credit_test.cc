/* Send queue and RDMA READ credit accounting (qp/credit.h). */
#include <gtest/gtest.h>

extern "C" {
#include "qp/credit.h"
}

TEST(QpCredit, InitRejectsZeroSendQueue)
{
	wqp_credit c;
	EXPECT_EQ(wqp_credit_init(&c, 0, 1), -EINVAL);
	EXPECT_EQ(wqp_credit_init(nullptr, 4, 1), -EINVAL);
	EXPECT_EQ(wqp_credit_init(&c, 4, 0), 0);
}

TEST(QpCredit, NeverBeyondSendQueueDepth)
{
	wqp_credit c;
	ASSERT_EQ(wqp_credit_init(&c, 3, 8), 0);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(wqp_credit_take(&c, 0), 0);
	EXPECT_EQ(wqp_credit_check(&c, 0), WQP_CREDIT_SQ_FULL);
	EXPECT_EQ(wqp_credit_take(&c, 0), -EAGAIN);
	EXPECT_EQ(c.sq_used, 3u);
	EXPECT_EQ(wqp_credit_put(&c, 0), 0);
	EXPECT_EQ(wqp_credit_check(&c, 0), WQP_CREDIT_OK);
}

TEST(QpCredit, ReadsLimitedByInitiatorDepth)
{
	wqp_credit c;
	ASSERT_EQ(wqp_credit_init(&c, 16, 2), 0);
	ASSERT_EQ(wqp_credit_take(&c, 1), 0);
	ASSERT_EQ(wqp_credit_take(&c, 1), 0);
	EXPECT_EQ(wqp_credit_check(&c, 1), WQP_CREDIT_RD_FULL);
	EXPECT_EQ(wqp_credit_take(&c, 1), -EAGAIN);
	/* A SEND still fits: READ depth only limits READs. */
	EXPECT_EQ(wqp_credit_take(&c, 0), 0);
	EXPECT_EQ(c.sq_used, 3u);
	EXPECT_EQ(c.rd_used, 2u);
	/* A READ completion frees both credits. */
	EXPECT_EQ(wqp_credit_put(&c, 1), 0);
	EXPECT_EQ(c.sq_used, 2u);
	EXPECT_EQ(c.rd_used, 1u);
	EXPECT_EQ(wqp_credit_check(&c, 1), WQP_CREDIT_OK);
}

TEST(QpCredit, SendQueueFullWinsOverReadDepth)
{
	wqp_credit c;
	ASSERT_EQ(wqp_credit_init(&c, 1, 4), 0);
	ASSERT_EQ(wqp_credit_take(&c, 0), 0);
	EXPECT_EQ(wqp_credit_check(&c, 1), WQP_CREDIT_SQ_FULL);
}

TEST(QpCredit, ZeroDepthForbidsReads)
{
	wqp_credit c;
	ASSERT_EQ(wqp_credit_init(&c, 4, 0), 0);
	EXPECT_EQ(wqp_credit_check(&c, 1), WQP_CREDIT_RD_NONE);
	EXPECT_EQ(wqp_credit_take(&c, 1), -EPERM);
	EXPECT_EQ(c.sq_used, 0u);
}

TEST(QpCredit, DuplicateCompletionDetected)
{
	wqp_credit c;
	ASSERT_EQ(wqp_credit_init(&c, 4, 4), 0);
	EXPECT_EQ(wqp_credit_put(&c, 0), -EOVERFLOW);
	ASSERT_EQ(wqp_credit_take(&c, 0), 0);
	/* A READ completion for a SEND: no READ outstanding. */
	EXPECT_EQ(wqp_credit_put(&c, 1), -EOVERFLOW);
	EXPECT_EQ(c.sq_used, 1u);
	EXPECT_EQ(wqp_credit_put(&c, 0), 0);
	EXPECT_EQ(wqp_credit_put(&c, 0), -EOVERFLOW);
}
