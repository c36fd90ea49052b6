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
