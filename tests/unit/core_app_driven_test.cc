// App-driven mode: no threads; the application polls each shard.
#include <gtest/gtest.h>

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>
#include <urcu/urcu-qsbr.h>

#include "tests/unit/core_test_util.h"

using wharf_test::MakeCtx;
using wharf_test::Opts;
using wharf_test::PollUntil;

namespace
{

class AppDriven : public wharf_test::AppDrivenCtx<2>
{
      protected:
	static bool Readable(struct wharf_shard *shard)
	{
		struct pollfd pfd = {wharf_shard_fd(shard), POLLIN, 0};
		return poll(&pfd, 1, 0) == 1;
	}
};

std::atomic<int> counted{0};

void Count(struct wharf_shard *, void *)
{
	counted++;
}

TEST_F(AppDriven, PollRunsQueuedWorkAndReportsIt)
{
	counted = 0;
	EXPECT_EQ(0, wharf_shard_poll(shard_, 16));
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(0, wharf_shard_send(shard_, Count, nullptr));
	EXPECT_EQ(5, wharf_shard_poll(shard_, 16));
	EXPECT_EQ(5, counted.load());
	EXPECT_EQ(0, wharf_shard_poll(shard_, 16));

	struct wharf_shard_stats st = wharf_test::Stats(shard_);
	EXPECT_EQ(3u, st.loops);
	EXPECT_EQ(5u, st.msgs);
	// Nothing was sent to the other shard.
	EXPECT_EQ(0, wharf_shard_poll(wharf_ctx_shard(ctx_, 1), 16));
}

TEST_F(AppDriven, BudgetLimitsWorkAndLeavesFdReadable)
{
	counted = 0;
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, wharf_shard_send(shard_, Count, nullptr));
	EXPECT_EQ(3, wharf_shard_poll(shard_, 3));
	EXPECT_EQ(3, counted.load());
	EXPECT_TRUE(Readable(shard_));
	EXPECT_EQ(3, wharf_shard_poll(shard_, 3));
	EXPECT_EQ(3, wharf_shard_poll(shard_, 3));
	EXPECT_EQ(1, wharf_shard_poll(shard_, 3));
	EXPECT_EQ(10, counted.load());
	EXPECT_EQ(0, wharf_shard_poll(shard_, 3));
	EXPECT_FALSE(Readable(shard_));
}

TEST_F(AppDriven, SendFromAnotherThreadWakesTheReactor)
{
	counted = 0;
	EXPECT_EQ(0, wharf_shard_poll(shard_, 16));
	EXPECT_FALSE(Readable(shard_));
	std::thread sender([&] {
		for (int i = 0; i < 100; i++)
			ASSERT_EQ(0, wharf_shard_send(shard_, Count, nullptr));
	});
	// Blocks in poll(2) on the shard fd, exactly like a reactor would.
	PollUntil(shard_, [] { return counted.load() == 100; });
	sender.join();
	EXPECT_EQ(100, counted.load());
}

TEST_F(AppDriven, OnePollerAtATime)
{
	EXPECT_EQ(-EINVAL, wharf_shard_poll(shard_, 0));
	EXPECT_EQ(-EINVAL, wharf_shard_poll(nullptr, 1));

	struct Probe {
		struct wharf_ctx *ctx;
		int nested = 1, other_thread = 1, foreign_timer = 1;
	} probe{ctx_};
	auto check = [](struct wharf_shard *shard, void *arg) {
		Probe *p = static_cast<Probe *>(arg);
		// Nested poll, of any shard, from a callback.
		p->nested = wharf_shard_poll(wharf_ctx_shard(p->ctx, 1), 1);
		// Another thread while this one is polling.
		std::thread t([&] {
			p->other_thread = wharf_shard_poll(shard, 1);
			struct wharf_timer *timer;
			p->foreign_timer = wharf_timer_create(
				shard, [](struct wharf_timer *, void *) {},
				nullptr, &timer);
		});
		t.join();
	};
	ASSERT_EQ(0, wharf_shard_send(shard_, check, &probe));
	EXPECT_EQ(1, wharf_shard_poll(shard_, 4));
	EXPECT_EQ(-EBUSY, probe.nested);
	EXPECT_EQ(-EBUSY, probe.other_thread);
	EXPECT_EQ(-EPERM, probe.foreign_timer);
}

TEST(AppDrivenMisuse, PollingAThreadedShardIsRefused)
{
	struct wharf_ctx *ctx =
		MakeCtx(Opts([](struct wharf_ctx_opts &o) { o.nshards = 1; }));
	ASSERT_NE(nullptr, ctx);
	EXPECT_EQ(-EINVAL, wharf_shard_poll(wharf_ctx_shard(ctx, 0), 1));
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

// The polling thread is a QSBR reader only while it polls.
TEST_F(AppDriven, ReaderOnlineDuringPollOfflineBetween)
{
	std::atomic<bool> synced{false};
	struct Ctx {
		std::atomic<bool> *synced;
		bool synced_inside = true;
		std::thread writer;
	} c{&synced, true, {}};
	auto inside = [](struct wharf_shard *, void *arg) {
		Ctx *x = static_cast<Ctx *>(arg);
		x->writer = std::thread([x] {
			urcu_qsbr_synchronize_rcu();
			*x->synced = true;
		});
		// The grace period cannot end while we are in a callback;
		// waiting only gives a broken implementation time to show.
		usleep(20000);
		x->synced_inside = x->synced->load();
	};
	ASSERT_EQ(0, wharf_shard_send(shard_, inside, &c));
	EXPECT_EQ(1, wharf_shard_poll(shard_, 4));
	EXPECT_FALSE(c.synced_inside);
	// Between polls we are offline: the writer finishes.
	c.writer.join();
	EXPECT_TRUE(synced.load());
	// And a grace period started now does not wait for us either.
	urcu_qsbr_synchronize_rcu();
}

} // namespace
