// Per-shard timers through the public API.  No assertion depends on how
// long anything takes: orders follow from deadlines set one after another.
#include <gtest/gtest.h>

#include <errno.h>

#include <future>
#include <list>
#include <string>
#include <vector>

#include "tests/unit/core_test_util.h"

using wharf_test::MakeCtx;
using wharf_test::Opts;
using wharf_test::PollUntil;
using wharf_test::RunOn;

namespace
{

constexpr uint64_t kMs = 1000000;

class Timers : public wharf_test::AppDrivenCtx<1>
{
      protected:
	struct wharf_timer *Make(const std::string &name)
	{
		names_.push_back(name);
		struct wharf_timer *t = nullptr;
		EXPECT_EQ(0, wharf_timer_create(shard_, Fired, &names_.back(),
						&t));
		return t;
	}
	static void Fired(struct wharf_timer *, void *arg)
	{
		fired_.push_back(*static_cast<std::string *>(arg));
	}
	struct wharf_stats_view {
		uint64_t armed, fired;
	};
	wharf_stats_view Stats()
	{
		struct wharf_shard_stats st = wharf_test::Stats(shard_);
		return {st.timers_armed, st.timers_fired};
	}

	std::list<std::string> names_;
	static std::vector<std::string> fired_;
};

std::vector<std::string> Timers::fired_;

TEST_F(Timers, FireInDeadlineOrderThenArmOrder)
{
	fired_.clear();
	struct wharf_timer *a = Make("a"), *b = Make("b"), *c = Make("c"),
			   *d = Make("d");
	// Each is armed after the previous one with a delay at least as long:
	// deadlines are non-decreasing in this order.
	ASSERT_EQ(0, wharf_timer_arm(a, 0));
	ASSERT_EQ(0, wharf_timer_arm(b, 1 * kMs));
	ASSERT_EQ(0, wharf_timer_arm(c, 1 * kMs));
	ASSERT_EQ(0, wharf_timer_arm(d, 2 * kMs));
	EXPECT_TRUE(wharf_timer_armed(a));
	EXPECT_EQ(4u, Stats().armed);
	PollUntil(shard_, [] { return fired_.size() == 4; });
	EXPECT_EQ((std::vector<std::string>{"a", "b", "c", "d"}), fired_);
	EXPECT_FALSE(wharf_timer_armed(d));
	EXPECT_EQ(0u, Stats().armed);
	EXPECT_EQ(4u, Stats().fired);
	for (auto *t : {a, b, c, d})
		EXPECT_EQ(0, wharf_timer_destroy(t));
}

TEST_F(Timers, CancelledTimerNeverFires)
{
	fired_.clear();
	struct wharf_timer *early = Make("early"), *late = Make("late");
	ASSERT_EQ(0, wharf_timer_arm(early, 1 * kMs));
	ASSERT_EQ(0, wharf_timer_arm(late, 2 * kMs));
	EXPECT_EQ(1, wharf_timer_cancel(early));
	EXPECT_EQ(0, wharf_timer_cancel(early));
	EXPECT_FALSE(wharf_timer_armed(early));
	// `early` would have fired before `late`.
	PollUntil(shard_, [] { return !fired_.empty(); });
	EXPECT_EQ((std::vector<std::string>{"late"}), fired_);
	EXPECT_EQ(0, wharf_timer_destroy(early));
	EXPECT_EQ(0, wharf_timer_destroy(late));
}

TEST_F(Timers, RearmMovesTheDeadline)
{
	fired_.clear();
	struct wharf_timer *a = Make("a"), *b = Make("b");
	ASSERT_EQ(0, wharf_timer_arm(a, 1 * kMs));
	ASSERT_EQ(0, wharf_timer_arm(b, 2 * kMs));
	ASSERT_EQ(0, wharf_timer_arm(a, 3 * kMs)); // now after b
	EXPECT_EQ(2u, Stats().armed);
	PollUntil(shard_, [] { return fired_.size() == 2; });
	EXPECT_EQ((std::vector<std::string>{"b", "a"}), fired_);
	EXPECT_EQ(0, wharf_timer_destroy(a));
	EXPECT_EQ(0, wharf_timer_destroy(b));
}

struct Periodic {
	struct wharf_timer *timer = nullptr;
	int left = 5;
	bool destroyed = false;
};

void Tick(struct wharf_timer *t, void *arg)
{
	Periodic *p = static_cast<Periodic *>(arg);
	if (--p->left > 0) {
		EXPECT_FALSE(wharf_timer_armed(t));
		EXPECT_EQ(0, wharf_timer_arm(t, 0));
	} else {
		EXPECT_EQ(0, wharf_timer_destroy(t));
		p->destroyed = true;
	}
}

TEST_F(Timers, CallbackMayRearmAndDestroy)
{
	Periodic p;
	ASSERT_EQ(0, wharf_timer_create(shard_, Tick, &p, &p.timer));
	ASSERT_EQ(0, wharf_timer_arm(p.timer, 0));
	PollUntil(shard_, [&] { return p.destroyed; });
	EXPECT_EQ(0, p.left);
	EXPECT_EQ(5u, Stats().fired);
	EXPECT_EQ(0u, Stats().armed);
}

TEST_F(Timers, TimeoutReflectsTheNextDeadline)
{
	EXPECT_EQ(-1, wharf_shard_timeout_ms(shard_));
	struct wharf_timer *t = Make("t");
	ASSERT_EQ(0, wharf_timer_arm(t, 60000 * kMs));
	int ms = wharf_shard_timeout_ms(shard_);
	EXPECT_GT(ms, 0);
	EXPECT_LE(ms, 60000);
	ASSERT_EQ(0, wharf_timer_arm(t, 0));
	EXPECT_EQ(0, wharf_shard_timeout_ms(shard_));
	EXPECT_EQ(1, wharf_timer_cancel(t));
	EXPECT_EQ(-1, wharf_shard_timeout_ms(shard_));
	EXPECT_EQ(0, wharf_timer_destroy(t));
}

TEST_F(Timers, BadArguments)
{
	struct wharf_timer *t = nullptr;
	EXPECT_EQ(-EINVAL, wharf_timer_create(nullptr, Fired, nullptr, &t));
	EXPECT_EQ(-EINVAL, wharf_timer_create(shard_, nullptr, nullptr, &t));
	EXPECT_EQ(-EINVAL, wharf_timer_create(shard_, Fired, nullptr, nullptr));
	EXPECT_EQ(-EINVAL, wharf_timer_arm(nullptr, 0));
	EXPECT_EQ(-EINVAL, wharf_timer_cancel(nullptr));
	EXPECT_FALSE(wharf_timer_armed(nullptr));
	EXPECT_EQ(0, wharf_timer_destroy(nullptr));
}

TEST(ThreadedTimers, OwnedByTheShardThread)
{
	struct wharf_ctx *ctx =
		MakeCtx(Opts([](struct wharf_ctx_opts &o) { o.nshards = 2; }));
	ASSERT_NE(nullptr, ctx);
	struct wharf_shard *s0 = wharf_ctx_shard(ctx, 0),
			   *s1 = wharf_ctx_shard(ctx, 1);
	struct wharf_timer *t = nullptr;
	auto fire = [](struct wharf_timer *, void *arg) {
		static_cast<std::promise<void> *>(arg)->set_value();
	};
	// Not from a foreign thread...
	EXPECT_EQ(-EPERM, wharf_timer_create(s0, fire, nullptr, &t));
	std::promise<void> fired;
	RunOn(s0, [&] {
		ASSERT_EQ(0, wharf_timer_create(s0, fire, &fired, &t));
		ASSERT_EQ(0, wharf_timer_arm(t, 1 * kMs));
	});
	// ...nor from another shard.
	RunOn(s1, [&] { EXPECT_EQ(-EPERM, wharf_timer_cancel(t)); });
	EXPECT_EQ(-EPERM, wharf_timer_destroy(t));
	fired.get_future().wait();
	RunOn(s0, [&] { EXPECT_EQ(0, wharf_timer_destroy(t)); });
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

} // namespace
