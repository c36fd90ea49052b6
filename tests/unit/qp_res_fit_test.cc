/*
 * A res's options against device limits given as numbers (qp/res_fit.h):
 * what fits, what is clamped with a note naming the limit, what is refused.
 */
#include <errno.h>

#include <string>

#include <gtest/gtest.h>

extern "C" {
#include "qp/res_fit.h"
}

namespace
{

/* rxe in the Debian 6.1 guest. */
wqp_dev_limits rxe()
{
	wqp_dev_limits d = {};
	d.max_cqe = 32767;
	d.max_cq = 16384;
	d.max_qp = 1048560;
	d.max_qp_wr = 1048576;
	d.max_sge = 32;
	d.max_srq = 917503;
	d.max_srq_wr = 1048576;
	d.max_mr = 524287;
	d.max_mr_size = ~0ull;
	return d;
}

wharf_qp_res_opts opts()
{
	wharf_qp_res_opts o = {};
	o.size = sizeof(o);
	return o;
}

const wqp_fit_note *find(const wqp_fit &f, const char *option,
			 const char *limit)
{
	for (unsigned i = 0; i < f.n; i++)
		if (std::string(f.notes[i].option) == option &&
		    std::string(f.notes[i].limit) == limit)
			return &f.notes[i];
	return nullptr;
}

} // namespace

TEST(QpResFit, DefaultsFitWithoutANote)
{
	wharf_qp_res_opts o = opts();
	wqp_fit f;
	wqp_dev_limits d = rxe();
	ASSERT_EQ(wqp_res_fit(&o, &d, &f), 0);
	EXPECT_EQ(f.n, 0u);
	EXPECT_EQ(o.srq_depth, WHARF_QP_DEFAULT_SRQ_DEPTH);
	EXPECT_EQ(o.srq_max, o.srq_depth);
	EXPECT_EQ(o.cq_max, 32767u);
	EXPECT_EQ(o.send_cq_max, WQP_DEFAULT_SEND_CQ_MAX);
	EXPECT_EQ(o.sq_depth, WHARF_QP_DEFAULT_SQ_DEPTH);
	EXPECT_EQ(o.max_send_sge, (uint32_t)WHARF_WR_MAX_SGE);
}

/* The storm's old sizing at 30,000: an SRQ no receive CQ can hold. */
TEST(QpResFit, SrqDepthBeyondOneCqIsRefusedNamingMaxCqe)
{
	wharf_qp_res_opts o = opts();
	wqp_fit f;
	wqp_dev_limits d = rxe();
	o.srq_depth = 30000 + 30000 / 8 + 64;
	ASSERT_EQ(wqp_res_fit(&o, &d, &f), -EINVAL);
	const wqp_fit_note *n = find(f, "srq_depth", "max_cqe");
	ASSERT_NE(n, nullptr);
	EXPECT_EQ(n->action, WQP_FIT_REFUSED);
	EXPECT_EQ(n->asked, 33814u);
	EXPECT_EQ(n->allowed, 32767u);
	char line[160];
	wqp_fit_note_format(n, line, sizeof(line));
	EXPECT_STREQ(line, "srq_depth 33814 does not fit the device "
			   "(max_cqe 32767): refused");
}

TEST(QpResFit, SrqCeilingIsClampedToTheReceiveCq)
{
	wharf_qp_res_opts o = opts();
	wqp_fit f;
	wqp_dev_limits d = rxe();
	o.srq_depth = 4096;
	o.srq_max = 67628;
	ASSERT_EQ(wqp_res_fit(&o, &d, &f), 0);
	EXPECT_EQ(o.srq_max, 32767u);
	const wqp_fit_note *n = find(f, "srq_max", "max_cqe");
	ASSERT_NE(n, nullptr);
	EXPECT_EQ(n->action, WQP_FIT_CLAMPED);
	EXPECT_EQ(n->asked, 67628u);
	/* A lower cq_max of the caller's is named as such. */
	o = opts();
	o.srq_depth = 256;
	o.srq_max = 4096;
	o.cq_max = 1024;
	ASSERT_EQ(wqp_res_fit(&o, &d, &f), 0);
	EXPECT_EQ(o.srq_max, 1024u);
	EXPECT_NE(find(f, "srq_max", "cq_max"), nullptr);
}

TEST(QpResFit, SrqCeilingIsClampedToMaxSrqWrAndToHalfTheMrs)
{
	wharf_qp_res_opts o = opts();
	wqp_fit f;
	wqp_dev_limits d = rxe();
	d.max_srq_wr = 8192;
	d.max_cqe = 1 << 22;
	o.srq_depth = 1024;
	o.srq_max = 100000;
	ASSERT_EQ(wqp_res_fit(&o, &d, &f), 0);
	EXPECT_EQ(o.srq_max, 8192u);
	EXPECT_NE(find(f, "srq_max", "max_srq_wr"), nullptr);
	/* 8 MRs: 4 chunks of 1024 buffers for the SRQ. */
	d = rxe();
	d.max_mr = 8;
	o = opts();
	o.srq_depth = 1024;
	o.srq_max = 16384;
	ASSERT_EQ(wqp_res_fit(&o, &d, &f), 0);
	EXPECT_EQ(o.srq_max, 4096u);
	EXPECT_NE(find(f, "srq_max", "max_mr"), nullptr);
}

TEST(QpResFit, SizesNoResourceHoldsAreRefused)
{
	wqp_dev_limits d = rxe();
	wqp_fit f;
	wharf_qp_res_opts o = opts();
	o.srq_depth = 2000000;
	EXPECT_EQ(wqp_res_fit(&o, &d, &f), -EINVAL);
	EXPECT_NE(find(f, "srq_depth", "max_srq_wr"), nullptr);

	o = opts();
	d.max_qp_wr = 16384;
	o.sq_depth = 16385;
	EXPECT_EQ(wqp_res_fit(&o, &d, &f), -EINVAL);
	EXPECT_NE(find(f, "sq_depth", "max_qp_wr"), nullptr);

	/* One send queue must fit one CQ. */
	o = opts();
	o.cq_max = 64;
	o.sq_depth = 128;
	o.srq_depth = 32;
	EXPECT_EQ(wqp_res_fit(&o, &d, &f), -EINVAL);
	EXPECT_NE(find(f, "sq_depth", "cq_max"), nullptr);

	o = opts();
	o.max_send_sge = 8;
	d.max_sge = 2;
	EXPECT_EQ(wqp_res_fit(&o, &d, &f), -EINVAL);
	EXPECT_NE(find(f, "max_send_sge", "max_sge"), nullptr);

	/* A private receive queue deeper than the device allows. */
	d = rxe();
	d.max_qp_wr = 64;
	o = opts();
	o.no_srq = true;
	o.sq_depth = 32;
	o.recv_credits = 65;
	EXPECT_EQ(wqp_res_fit(&o, &d, &f), -EINVAL);
	EXPECT_NE(find(f, "recv_credits", "max_qp_wr"), nullptr);

	/* One chunk of receive buffers is one MR. */
	d = rxe();
	d.max_mr_size = 1 << 20;
	o = opts();
	o.srq_depth = 512;
	o.recv_buf_size = 4096;
	EXPECT_EQ(wqp_res_fit(&o, &d, &f), -EINVAL);
	EXPECT_NE(find(f, "srq_depth * recv_buf_size", "max_mr_size"), nullptr);

	/* No SRQ on the device, and none asked to do without. */
	d = rxe();
	d.max_srq = 0;
	o = opts();
	EXPECT_EQ(wqp_res_fit(&o, &d, &f), -EINVAL);
	o = opts();
	o.no_srq = true;
	EXPECT_EQ(wqp_res_fit(&o, &d, &f), 0);
}

TEST(QpResFit, CeilingsAreClampedWithANote)
{
	wqp_dev_limits d = rxe();
	wqp_fit f;
	wharf_qp_res_opts o = opts();
	o.cq_max = 100000;
	o.cq_size = 50000;
	o.send_cq_max = 5000;
	o.pool_size = 400000;
	d.max_cq = 64;
	ASSERT_EQ(wqp_res_fit(&o, &d, &f), 0);
	EXPECT_EQ(o.cq_max, 32767u);
	EXPECT_EQ(o.cq_size, 32767u);
	EXPECT_EQ(o.send_cq_max, 62u);
	EXPECT_EQ(o.pool_size, 1048560u / 4);
	EXPECT_NE(find(f, "cq_max", "max_cqe"), nullptr);
	EXPECT_NE(find(f, "cq_size", "max_cqe"), nullptr);
	EXPECT_NE(find(f, "send_cq_max", "max_cq"), nullptr);
	EXPECT_NE(find(f, "pool_size", "max_qp"), nullptr);
	for (unsigned i = 0; i < f.n; i++)
		EXPECT_EQ(f.notes[i].action, WQP_FIT_CLAMPED);
}

TEST(QpResFit, BadCombinationsStayRefused)
{
	wqp_dev_limits d = rxe();
	wharf_qp_res_opts o = opts();
	o.srq_depth = 64;
	o.srq_limit = 64;
	EXPECT_EQ(wqp_res_fit(&o, &d, nullptr), -EINVAL);
	o = opts();
	o.srq_depth = 64;
	o.recv_reserve = 64;
	EXPECT_EQ(wqp_res_fit(&o, &d, nullptr), -EINVAL);
	o = opts();
	o.srq_depth = 1024;
	o.srq_max = 512;
	EXPECT_EQ(wqp_res_fit(&o, &d, nullptr), -EINVAL);
	o = opts();
	o.pool_size = 8;
	o.pool_low_water = 9;
	EXPECT_EQ(wqp_res_fit(&o, &d, nullptr), -EINVAL);
}
