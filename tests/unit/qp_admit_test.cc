/* SRQ receive budget admission with a reserve (qp/admit.h). */
#include <gtest/gtest.h>

extern "C" {
#include "qp/admit.h"
}

TEST(QpAdmit, DefaultReserve)
{
	EXPECT_EQ(wqp_admit_default_reserve(1024), 64u);
	EXPECT_EQ(wqp_admit_default_reserve(16), 1u);
	EXPECT_EQ(wqp_admit_default_reserve(8), 1u);
	EXPECT_EQ(wqp_admit_default_reserve(1), 0u);
}

TEST(QpAdmit, InitValidates)
{
	wqp_admit a;
	EXPECT_EQ(wqp_admit_init(&a, 0, 0), -EINVAL);
	EXPECT_EQ(wqp_admit_init(&a, 16, 16), -EINVAL);
	EXPECT_EQ(wqp_admit_init(nullptr, 16, 1), -EINVAL);
	EXPECT_EQ(wqp_admit_init(&a, 16, 15), 0);
}

TEST(QpAdmit, ReserveIsNeverHandedOut)
{
	wqp_admit a;
	ASSERT_EQ(wqp_admit_init(&a, 1024, 64), 0);
	EXPECT_EQ(wqp_admit_capacity(&a, 32), 30u);
	for (int i = 0; i < 30; i++)
		ASSERT_EQ(wqp_admit_take(&a, 32), 0) << i;
	EXPECT_EQ(a.admitted, 960u);
	/* 64 buffers remain in the SRQ budget but they are the reserve. */
	EXPECT_EQ(wqp_admit_check(&a, 32), -EBUSY);
	EXPECT_EQ(wqp_admit_take(&a, 1), -EBUSY);
	EXPECT_EQ(a.admitted, 960u);
	ASSERT_EQ(wqp_admit_put(&a, 32), 0);
	EXPECT_EQ(wqp_admit_take(&a, 32), 0);
}

TEST(QpAdmit, ExactFit)
{
	wqp_admit a;
	ASSERT_EQ(wqp_admit_init(&a, 100, 10), 0);
	EXPECT_EQ(wqp_admit_take(&a, 90), 0);
	EXPECT_EQ(wqp_admit_check(&a, 1), -EBUSY);
}

TEST(QpAdmit, ZeroCreditsAndUnderflow)
{
	wqp_admit a;
	ASSERT_EQ(wqp_admit_init(&a, 100, 10), 0);
	EXPECT_EQ(wqp_admit_check(&a, 0), -EINVAL);
	EXPECT_EQ(wqp_admit_capacity(&a, 0), 0u);
	EXPECT_EQ(wqp_admit_put(&a, 1), -EOVERFLOW);
	ASSERT_EQ(wqp_admit_take(&a, 5), 0);
	EXPECT_EQ(wqp_admit_put(&a, 6), -EOVERFLOW);
	EXPECT_EQ(a.admitted, 5u);
}

TEST(QpAdmit, HugeCreditsDoNotWrap)
{
	wqp_admit a;
	ASSERT_EQ(wqp_admit_init(&a, 100, 10), 0);
	ASSERT_EQ(wqp_admit_take(&a, 50), 0);
	EXPECT_EQ(wqp_admit_check(&a, UINT32_MAX), -EBUSY);
}

TEST(QpAdmit, ShortfallSaysHowMuchTheSrqMustGrow)
{
	wqp_admit a;
	ASSERT_EQ(0, wqp_admit_init(&a, 64, 4));	    // 60 admissible now
	EXPECT_EQ(UINT32_MAX, wqp_admit_shortfall(&a, 61)); // fixed: never
	ASSERT_EQ(0, wqp_admit_set_max(&a, 256));
	EXPECT_EQ(0u, wqp_admit_shortfall(&a, 60));
	EXPECT_EQ(1u, wqp_admit_shortfall(&a, 61));
	ASSERT_EQ(0, wqp_admit_take(&a, 48));
	EXPECT_EQ(4u, wqp_admit_shortfall(&a, 16)); // 48 + 16 + 4 - 64
	EXPECT_EQ(-EBUSY, wqp_admit_check(&a, 16)); // not yet
	ASSERT_EQ(0, wqp_admit_grow(&a, 64));
	EXPECT_EQ(128u, a.depth);
	EXPECT_EQ(0u, wqp_admit_shortfall(&a, 16));
	EXPECT_EQ(0, wqp_admit_take(&a, 16));
	// The ceiling: 256 - 4 reserved.
	EXPECT_EQ(UINT32_MAX, wqp_admit_shortfall(&a, 256 - 4 - 64 + 1));
	EXPECT_NE(UINT32_MAX, wqp_admit_shortfall(&a, 256 - 4 - 64));
	EXPECT_EQ(UINT32_MAX, wqp_admit_shortfall(&a, 0));
}

TEST(QpAdmit, GrowthStaysWithinMax)
{
	wqp_admit a;
	ASSERT_EQ(0, wqp_admit_init(&a, 64, 4));
	EXPECT_EQ(-EINVAL, wqp_admit_grow(&a, 1)); // max = depth
	EXPECT_EQ(-EINVAL, wqp_admit_set_max(&a, 63));
	ASSERT_EQ(0, wqp_admit_set_max(&a, 100));
	EXPECT_EQ(-EINVAL, wqp_admit_grow(&a, 37));
	EXPECT_EQ(64u, a.depth);
	EXPECT_EQ(0, wqp_admit_grow(&a, 36));
	EXPECT_EQ(100u, a.depth);
	EXPECT_EQ(-EINVAL, wqp_admit_set_max(&a, 99)); // below what it holds
}
