/* The per-QP FIFO of WRs and its credit-bounded batches (qp/wrq.h). */
#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "qp/wrq.h"
}

namespace
{

std::vector<wharf_wr> make(const std::vector<wharf_wr_op> &ops)
{
	std::vector<wharf_wr> v(ops.size());
	for (size_t i = 0; i < ops.size(); i++) {
		v[i] = wharf_wr{};
		v[i].tag = (uint32_t)(i + 1);
		v[i].op = (uint8_t)ops[i];
	}
	return v;
}

} // namespace

TEST(QpWrq, FifoOrder)
{
	auto w = make({WHARF_WR_SEND, WHARF_WR_SEND, WHARF_WR_SEND});
	wqp_wrq q;
	wqp_wrq_init(&q);
	EXPECT_EQ(wqp_wrq_pop(&q), nullptr);
	for (auto &x : w)
		wqp_wrq_push(&q, &x);
	EXPECT_EQ(q.len, 3u);
	EXPECT_EQ(wqp_wrq_pop(&q), &w[0]);
	EXPECT_EQ(wqp_wrq_pop(&q), &w[1]);
	EXPECT_EQ(wqp_wrq_pop(&q), &w[2]);
	EXPECT_EQ(wqp_wrq_pop(&q), nullptr);
	EXPECT_EQ(q.tail, nullptr);
}

TEST(QpWrq, BatchStopsAtSendQueueCredits)
{
	std::vector<wharf_wr_op> ops(10, WHARF_WR_SEND);
	auto w = make(ops);
	wqp_wrq q;
	wqp_credit c;
	wharf_wr *out[16];
	wqp_credit_verdict why;
	wqp_wrq_init(&q);
	ASSERT_EQ(wqp_credit_init(&c, 4, 1), 0);
	for (auto &x : w)
		wqp_wrq_push(&q, &x);
	EXPECT_EQ(wqp_wrq_take(&q, &c, 16, out, &why), 4u);
	EXPECT_EQ(why, WQP_CREDIT_SQ_FULL);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(out[i], &w[i]);
	EXPECT_EQ(q.len, 6u);
	EXPECT_EQ(c.sq_used, 4u);
	/* Completions return credits; the next batch continues in order. */
	wqp_credit_put(&c, 0);
	wqp_credit_put(&c, 0);
	EXPECT_EQ(wqp_wrq_take(&q, &c, 16, out, &why), 2u);
	EXPECT_EQ(out[0], &w[4]);
	EXPECT_EQ(out[1], &w[5]);
}

TEST(QpWrq, ReadBeyondDepthHoldsBackLaterWrs)
{
	auto w = make({WHARF_WR_RDMA_READ, WHARF_WR_RDMA_READ, WHARF_WR_SEND,
		       WHARF_WR_RDMA_READ, WHARF_WR_SEND});
	wqp_wrq q;
	wqp_credit c;
	wharf_wr *out[8];
	wqp_credit_verdict why;
	wqp_wrq_init(&q);
	ASSERT_EQ(wqp_credit_init(&c, 64, 2), 0);
	for (auto &x : w)
		wqp_wrq_push(&q, &x);
	/* READ, READ, SEND fit; the third READ waits, and so does the SEND
	 * behind it (no overtaking). */
	EXPECT_EQ(wqp_wrq_take(&q, &c, 8, out, &why), 3u);
	EXPECT_EQ(why, WQP_CREDIT_RD_FULL);
	EXPECT_EQ(q.head, &w[3]);
	EXPECT_EQ(c.rd_used, 2u);
	wqp_credit_put(&c, 1);
	EXPECT_EQ(wqp_wrq_take(&q, &c, 8, out, &why), 2u);
	EXPECT_EQ(why, WQP_CREDIT_OK);
	EXPECT_EQ(out[0], &w[3]);
	EXPECT_EQ(out[1], &w[4]);
}

TEST(QpWrq, BatchBoundedByMax)
{
	std::vector<wharf_wr_op> ops(5, WHARF_WR_RDMA_WRITE);
	auto w = make(ops);
	wqp_wrq q;
	wqp_credit c;
	wharf_wr *out[8];
	wqp_credit_verdict why;
	wqp_wrq_init(&q);
	ASSERT_EQ(wqp_credit_init(&c, 64, 0), 0);
	for (auto &x : w)
		wqp_wrq_push(&q, &x);
	EXPECT_EQ(wqp_wrq_take(&q, &c, 2, out, &why), 2u);
	EXPECT_EQ(why, WQP_CREDIT_OK);
	EXPECT_EQ(q.len, 3u);
}

TEST(QpWrq, UnpopRestoresOrderAndCredits)
{
	auto w = make({WHARF_WR_SEND, WHARF_WR_RDMA_READ, WHARF_WR_SEND,
		       WHARF_WR_SEND});
	wqp_wrq q;
	wqp_credit c;
	wharf_wr *out[8];
	wqp_credit_verdict why;
	wqp_wrq_init(&q);
	ASSERT_EQ(wqp_credit_init(&c, 8, 2), 0);
	for (auto &x : w)
		wqp_wrq_push(&q, &x);
	ASSERT_EQ(wqp_wrq_take(&q, &c, 3, out, &why), 3u);
	/* ibv_post_send refused the last two of the three. */
	wqp_wrq_unpop(&q, &c, out + 1, 2);
	EXPECT_EQ(c.sq_used, 1u);
	EXPECT_EQ(c.rd_used, 0u);
	EXPECT_EQ(q.len, 3u);
	EXPECT_EQ(wqp_wrq_pop(&q), &w[1]);
	EXPECT_EQ(wqp_wrq_pop(&q), &w[2]);
	EXPECT_EQ(wqp_wrq_pop(&q), &w[3]);
}
