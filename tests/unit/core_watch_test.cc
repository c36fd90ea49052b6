// Watched fds and pollers.
#include <gtest/gtest.h>

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <future>

#include "tests/unit/core_test_util.h"

using wharf_test::MakeCtx;
using wharf_test::Opts;
using wharf_test::PollUntil;
using wharf_test::RunOn;

namespace
{

class Watches : public wharf_test::AppDrivenCtx<1>
{
      protected:
	void SetUp() override
	{
		AppDrivenCtx::SetUp();
		efd_ = eventfd(0, EFD_NONBLOCK);
		ASSERT_GE(efd_, 0);
	}
	void TearDown() override
	{
		AppDrivenCtx::TearDown();
		close(efd_);
	}
	void Signal()
	{
		uint64_t one = 1;
		ASSERT_EQ(8, write(efd_, &one, 8));
	}
	int efd_ = -1;
};

struct Seen {
	int calls = 0;
	uint32_t events = 0;
	bool remove_self = false;
};

void OnReadable(struct wharf_watch *w, int fd, uint32_t events, void *arg)
{
	Seen *s = static_cast<Seen *>(arg);
	uint64_t v;
	s->calls++;
	s->events = events;
	if (events & WHARF_WATCH_IN) {
		EXPECT_EQ(8, read(fd, &v, 8));
	}
	if (s->remove_self) {
		EXPECT_EQ(0, wharf_watch_remove(w));
	}
}

TEST_F(Watches, CallbackRunsWhileReadyAndStopsAfterRemove)
{
	Seen seen;
	seen.remove_self = true;
	struct wharf_watch *w;
	ASSERT_EQ(0, wharf_shard_watch(shard_, efd_, WHARF_WATCH_IN, OnReadable,
				       &seen, &w));
	EXPECT_EQ(0, wharf_shard_poll(shard_, 8)); // not ready yet
	EXPECT_EQ(0, seen.calls);
	Signal();
	EXPECT_EQ(1, wharf_shard_poll(shard_, 8));
	EXPECT_EQ(1, seen.calls);
	EXPECT_EQ((uint32_t)WHARF_WATCH_IN, seen.events);
	// Removed itself: further readiness is not reported.
	Signal();
	EXPECT_EQ(0, wharf_shard_poll(shard_, 8));
	EXPECT_EQ(1, seen.calls);

	struct wharf_shard_stats st = wharf_test::Stats(shard_);
	EXPECT_EQ(1u, st.fd_events);
	EXPECT_EQ(0u, st.watches);
}

TEST_F(Watches, ModifyAndErrors)
{
	Seen seen;
	struct wharf_watch *w;
	ASSERT_EQ(0, wharf_shard_watch(shard_, efd_, WHARF_WATCH_IN, OnReadable,
				       &seen, &w));
	EXPECT_EQ(-EEXIST, wharf_shard_watch(shard_, efd_, WHARF_WATCH_IN,
					     OnReadable, &seen, nullptr));
	EXPECT_EQ(-EINVAL, wharf_shard_watch(shard_, -1, WHARF_WATCH_IN,
					     OnReadable, &seen, nullptr));
	EXPECT_EQ(-EINVAL, wharf_shard_watch(shard_, efd_, 0x800, OnReadable,
					     &seen, nullptr));
	EXPECT_EQ(-EINVAL, wharf_watch_modify(w, 0x800));
	// An eventfd is always writable.
	ASSERT_EQ(0, wharf_watch_modify(w, WHARF_WATCH_OUT));
	EXPECT_EQ(1, wharf_shard_poll(shard_, 8));
	EXPECT_EQ((uint32_t)WHARF_WATCH_OUT, seen.events);
	EXPECT_EQ(0, wharf_watch_remove(w));
	EXPECT_EQ(-EINVAL, wharf_watch_remove(nullptr));
}

struct Counter {
	int polls = 0, limit = 3;
	struct wharf_poller *self = nullptr;
};

int PollAndQuit(struct wharf_shard *, void *arg)
{
	Counter *c = static_cast<Counter *>(arg);
	if (++c->polls == c->limit) {
		EXPECT_EQ(0, wharf_poller_remove(c->self));
	}
	return 2;
}

TEST_F(Watches, PollerRunsEachIterationUntilRemoved)
{
	Counter c;
	ASSERT_EQ(0, wharf_shard_poller_add(shard_, PollAndQuit, nullptr, &c,
					    &c.self));
	for (int i = 0; i < 6; i++)
		wharf_shard_poll(shard_, 8);
	EXPECT_EQ(3, c.polls);
	struct wharf_shard_stats st = wharf_test::Stats(shard_);
	EXPECT_EQ(6u, st.poller_work);
	EXPECT_EQ(-EINVAL, wharf_shard_poller_add(shard_, nullptr, nullptr,
						  nullptr, nullptr));
}

// Threaded: an fd event wakes a sleeping shard; pollers are armed before
// it sleeps.
TEST(ThreadedWatch, FdWakesTheShardAndPollersAreArmed)
{
	struct wharf_ctx *ctx =
		MakeCtx(Opts([](struct wharf_ctx_opts &o) { o.nshards = 1; }));
	ASSERT_NE(nullptr, ctx);
	struct wharf_shard *shard = wharf_ctx_shard(ctx, 0);
	int efd = eventfd(0, EFD_NONBLOCK);
	ASSERT_GE(efd, 0);

	struct State {
		std::promise<void> woke;
		int arms = 0; // shard thread only
		struct wharf_watch *w = nullptr;
	} st;
	auto on_fd = [](struct wharf_watch *w, int fd, uint32_t, void *arg) {
		uint64_t v;
		EXPECT_EQ(8, read(fd, &v, 8));
		EXPECT_EQ(0, wharf_watch_remove(w));
		static_cast<State *>(arg)->woke.set_value();
	};
	auto idle = [](struct wharf_shard *, void *) { return 0; };
	auto arm = [](struct wharf_shard *, void *arg) {
		static_cast<State *>(arg)->arms++;
		return 0;
	};
	EXPECT_EQ(-EPERM, wharf_shard_watch(shard, efd, WHARF_WATCH_IN, on_fd,
					    &st, nullptr));
	struct wharf_shard_stats before = {}, now = {};
	before.size = now.size = sizeof(now);
	RunOn(shard, [&] {
		ASSERT_EQ(0, wharf_shard_watch(shard, efd, WHARF_WATCH_IN,
					       on_fd, &st, &st.w));
		ASSERT_EQ(0, wharf_shard_poller_add(shard, idle, arm, &st,
						    nullptr));
		ASSERT_EQ(0, wharf_shard_stats(shard, &before));
	});
	// Once idle again the shard sleeps: wait for that.
	do {
		sched_yield();
		ASSERT_EQ(0, wharf_shard_stats(shard, &now));
	} while (now.sleeps == before.sleeps);
	uint64_t one = 1;
	ASSERT_EQ(8, write(efd, &one, 8));
	st.woke.get_future().wait();
	int arms = 0;
	RunOn(shard, [&] { arms = st.arms; });
	EXPECT_GE(arms, 1);
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
	close(efd);
}

} // namespace
