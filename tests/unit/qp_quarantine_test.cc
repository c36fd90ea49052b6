/* Pooled QP life, the quarantine rule and pool refill (qp/quarantine.h). */
#include <gtest/gtest.h>

extern "C" {
#include "qp/quarantine.h"
}

namespace
{

struct Life {
	wqp_life s = WQP_LIFE_FREE;
	wqp_life_act act = WQP_ACT_NONE;

	int step(wqp_life_ev ev, wharf_qp_fate fate = WHARF_QP_FATE_UNUSED,
		 bool poolable = true)
	{
		return wqp_life_step(&s, ev, fate, poolable, &act);
	}
};

/* A connected QP closed and drained, then released with @fate. */
wqp_life_act drained_then_released(wharf_qp_fate fate, bool poolable = true)
{
	Life l;
	EXPECT_EQ(l.step(WQP_EV_TAKE), 0);
	EXPECT_EQ(l.step(WQP_EV_LEAVE_RESET), 0);
	EXPECT_EQ(l.step(WQP_EV_CLOSE), 0);
	EXPECT_EQ(l.step(WQP_EV_DRAINED), 0);
	EXPECT_EQ(l.s, WQP_LIFE_CLOSED);
	EXPECT_EQ(l.step(WQP_EV_RELEASE, fate, poolable), 0);
	return l.act;
}

} // namespace

TEST(QpQuarantine, TimewaitExitGoesThroughQuarantine)
{
	EXPECT_EQ(drained_then_released(WHARF_QP_FATE_TIMEWAIT_EXIT),
		  WQP_ACT_QUARANTINE);
	Life l;
	l.s = WQP_LIFE_QUARANTINE;
	EXPECT_EQ(l.step(WQP_EV_EXPIRE), 0);
	EXPECT_EQ(l.s, WQP_LIFE_FREE);
	EXPECT_EQ(l.act, WQP_ACT_POOL);
}

TEST(QpQuarantine, UnknownFateDestroys)
{
	EXPECT_EQ(drained_then_released(WHARF_QP_FATE_UNKNOWN),
		  WQP_ACT_DESTROY);
}

TEST(QpQuarantine, UnusedNumberIsPooledAtOnce)
{
	EXPECT_EQ(drained_then_released(WHARF_QP_FATE_UNUSED), WQP_ACT_POOL);
	/* Taken and released without leaving RESET. */
	Life l;
	ASSERT_EQ(l.step(WQP_EV_TAKE), 0);
	ASSERT_EQ(l.step(WQP_EV_RELEASE, WHARF_QP_FATE_UNUSED), 0);
	EXPECT_EQ(l.s, WQP_LIFE_FREE);
	EXPECT_EQ(l.act, WQP_ACT_POOL);
}

TEST(QpQuarantine, NotPoolableAlwaysDestroys)
{
	EXPECT_EQ(drained_then_released(WHARF_QP_FATE_UNUSED, false),
		  WQP_ACT_DESTROY);
	EXPECT_EQ(drained_then_released(WHARF_QP_FATE_TIMEWAIT_EXIT, false),
		  WQP_ACT_DESTROY);
}

TEST(QpQuarantine, ReleaseBeforeDrainWaitsForDrain)
{
	Life l;
	ASSERT_EQ(l.step(WQP_EV_TAKE), 0);
	ASSERT_EQ(l.step(WQP_EV_LEAVE_RESET), 0);
	ASSERT_EQ(l.step(WQP_EV_CLOSE), 0);
	ASSERT_EQ(l.step(WQP_EV_RELEASE, WHARF_QP_FATE_TIMEWAIT_EXIT), 0);
	EXPECT_EQ(l.s, WQP_LIFE_CLOSING_RELEASED);
	EXPECT_EQ(l.act, WQP_ACT_NONE);
	/* No second release. */
	EXPECT_EQ(l.step(WQP_EV_RELEASE, WHARF_QP_FATE_UNUSED), -EINVAL);
	ASSERT_EQ(l.step(WQP_EV_DRAINED, WHARF_QP_FATE_TIMEWAIT_EXIT), 0);
	EXPECT_EQ(l.s, WQP_LIFE_QUARANTINE);
	EXPECT_EQ(l.act, WQP_ACT_QUARANTINE);
}

TEST(QpQuarantine, LiveQpCannotBeReleased)
{
	Life l;
	ASSERT_EQ(l.step(WQP_EV_TAKE), 0);
	ASSERT_EQ(l.step(WQP_EV_LEAVE_RESET), 0);
	EXPECT_EQ(l.step(WQP_EV_RELEASE, WHARF_QP_FATE_UNUSED), -EBUSY);
	EXPECT_EQ(l.s, WQP_LIFE_LIVE);
}

TEST(QpQuarantine, IllegalEventsChangeNothing)
{
	Life l;
	EXPECT_EQ(l.step(WQP_EV_DRAINED), -EINVAL);
	EXPECT_EQ(l.step(WQP_EV_EXPIRE), -EINVAL);
	EXPECT_EQ(l.step(WQP_EV_LEAVE_RESET), -EINVAL);
	EXPECT_EQ(l.step(WQP_EV_CLOSE), -EINVAL);
	EXPECT_EQ(l.s, WQP_LIFE_FREE);
	ASSERT_EQ(l.step(WQP_EV_TAKE), 0);
	EXPECT_EQ(l.step(WQP_EV_TAKE), -EINVAL);
	EXPECT_EQ(l.step(WQP_EV_RELEASE, (wharf_qp_fate)7), -EINVAL);
	EXPECT_EQ(l.s, WQP_LIFE_TAKEN);
	l.s = WQP_LIFE_DEAD;
	EXPECT_EQ(l.step(WQP_EV_CLOSE), -EINVAL);
}

TEST(QpQuarantine, CloseIsIdempotent)
{
	Life l;
	ASSERT_EQ(l.step(WQP_EV_TAKE), 0);
	ASSERT_EQ(l.step(WQP_EV_CLOSE), 0);
	EXPECT_EQ(l.step(WQP_EV_CLOSE), 0);
	EXPECT_EQ(l.s, WQP_LIFE_CLOSING);
	ASSERT_EQ(l.step(WQP_EV_DRAINED), 0);
	EXPECT_EQ(l.step(WQP_EV_CLOSE), 0);
	EXPECT_EQ(l.s, WQP_LIFE_CLOSED);
}

TEST(QpQuarantine, Deadline)
{
	EXPECT_EQ(wqp_quarantine_deadline(1000, 2000), 1000 + 2000000000ull);
	EXPECT_EQ(wqp_quarantine_deadline(5, 0), 5u);
	EXPECT_EQ(wqp_quarantine_deadline(UINT64_MAX - 10, 1), UINT64_MAX);
}

TEST(QpQuarantine, RefillHysteresis)
{
	bool r = false;
	/* Above the low-water mark: nothing. */
	EXPECT_EQ(wqp_pool_refill(40, 64, 32, 8, &r), 0u);
	EXPECT_FALSE(r);
	/* Below it: batches until full. */
	EXPECT_EQ(wqp_pool_refill(31, 64, 32, 8, &r), 8u);
	EXPECT_TRUE(r);
	EXPECT_EQ(wqp_pool_refill(39, 64, 32, 8, &r), 8u);
	EXPECT_EQ(wqp_pool_refill(60, 64, 32, 8, &r), 4u);
	EXPECT_FALSE(r) << "this step fills it";
	EXPECT_EQ(wqp_pool_refill(64, 64, 32, 8, &r), 0u);
	EXPECT_FALSE(r);
	/* Takes from a full pool: nothing until below the mark again. */
	EXPECT_EQ(wqp_pool_refill(63, 64, 32, 8, &r), 0u);
	EXPECT_EQ(wqp_pool_refill(32, 64, 32, 8, &r), 0u);
	/* Initial fill (flag set by the caller), one step short of full. */
	r = true;
	EXPECT_EQ(wqp_pool_refill(0, 1, 0, 8, &r), 1u);
	EXPECT_FALSE(r);
	EXPECT_EQ(wqp_pool_refill(0, 1, 0, 8, &r), 0u)
		<< "low water 0: never refilled after the initial fill";
	/* No pool. */
	EXPECT_EQ(wqp_pool_refill(0, 0, 0, 8, &r), 0u);
}
