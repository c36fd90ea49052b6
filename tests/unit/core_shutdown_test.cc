// Shutdown with work still pending: every accepted message runs exactly once,
// leftovers are freed (ASan/LSan check the heap, the arena live count the
// shard arenas), and misuse is refused.
#include <gtest/gtest.h>

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "tests/unit/core_test_util.h"

extern "C" {
#include <wharf/numa.h>
}

using wharf_test::MakeCtx;
using wharf_test::Opts;
using wharf_test::RunOn;

namespace
{

struct LogSink {
	std::mutex lock;
	std::vector<std::string> errors;
};

void Capture(void *arg, enum wharf_log_level level, const char *msg)
{
	LogSink *sink = static_cast<LogSink *>(arg);
	if (level == WHARF_LOG_ERROR) {
		std::lock_guard<std::mutex> g(sink->lock);
		sink->errors.push_back(msg);
	}
}

// A context of @nshards shards whose error log lines go to @sink.
struct wharf_ctx *LoggedCtx(LogSink &sink, unsigned nshards,
			    bool app_driven = false)
{
	return MakeCtx(Opts([&](struct wharf_ctx_opts &o) {
		o.nshards = nshards;
		o.app_driven = app_driven;
		o.log_fn = Capture;
		o.log_arg = &sink;
	}));
}

std::atomic<int> payloads_run{0};
std::atomic<int> self_sends_run{0};

// Owns a heap payload: if a message were dropped, LSan reports the leak.
void Payload(struct wharf_shard *, void *arg)
{
	free(arg);
	payloads_run++;
}

void SelfSend(struct wharf_shard *, void *)
{
	self_sends_run++;
}

// Keeps its shard busy until wharf_ctx_destroy() has started (sends, here
// to shard 2, start failing with -ESHUTDOWN), so that everything queued
// behind it is pending when the shard is told to stop.
int self_sends_accepted;

void Blocker(struct wharf_shard *shard, void *)
{
	struct wharf_shard *probe = wharf_ctx_shard(wharf_shard_ctx(shard), 2);
	int err;
	while ((err = wharf_shard_send(probe, SelfSend, nullptr)) !=
	       -ESHUTDOWN) {
		if (err == 0)
			self_sends_accepted++;
		sched_yield();
	}
}

TEST(Shutdown, PendingMessagesRunExactlyOnce)
{
	constexpr int kPayloads = 1000;
	LogSink sink;
	payloads_run = 0;
	self_sends_run = 0;
	self_sends_accepted = 0;
	struct wharf_ctx *ctx = LoggedCtx(sink, 3);
	ASSERT_NE(nullptr, ctx);
	struct wharf_shard *s0 = wharf_ctx_shard(ctx, 0);
	ASSERT_EQ(0, wharf_shard_send(s0, Blocker, nullptr));
	for (int i = 0; i < kPayloads; i++)
		ASSERT_EQ(0, wharf_shard_send(wharf_ctx_shard(ctx, i % 2),
					      Payload, malloc(64)));
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
	EXPECT_EQ(kPayloads, payloads_run.load());
	EXPECT_EQ(self_sends_accepted, self_sends_run.load());
	EXPECT_TRUE(sink.errors.empty()) << sink.errors.front();
}

TEST(Shutdown, LeftoverWatchesTimersPollersAreFreed)
{
	LogSink sink;
	struct wharf_ctx *ctx = LoggedCtx(sink, 1);
	ASSERT_NE(nullptr, ctx);
	struct wharf_shard *shard = wharf_ctx_shard(ctx, 0);
	int efd = eventfd(0, EFD_NONBLOCK);
	ASSERT_GE(efd, 0);
	RunOn(shard, [&] {
		struct wharf_timer *t;
		auto never = [](struct wharf_timer *, void *) {
			ADD_FAILURE() << "timer fired after destroy";
		};
		ASSERT_EQ(0, wharf_timer_create(shard, never, nullptr, &t));
		ASSERT_EQ(0, wharf_timer_arm(t, 3600ull * 1000000000));
		ASSERT_EQ(0, wharf_timer_create(shard, never, nullptr, &t));
		auto on_fd = [](struct wharf_watch *, int, uint32_t, void *) {};
		ASSERT_EQ(0, wharf_shard_watch(shard, efd, WHARF_WATCH_IN,
					       on_fd, nullptr, nullptr));
		auto idle = [](struct wharf_shard *, void *) { return 0; };
		ASSERT_EQ(0, wharf_shard_poller_add(shard, idle, nullptr,
						    nullptr, nullptr));
	});
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
	EXPECT_TRUE(sink.errors.empty()) << sink.errors.front();
	// The watched fd stays the caller's.
	EXPECT_EQ(0, close(efd));
}

TEST(Shutdown, ObjectsLeftInAShardArenaAreReported)
{
	LogSink sink;
	struct wharf_ctx *ctx = LoggedCtx(sink, 1, true);
	ASSERT_NE(nullptr, ctx);
	void *p = wharf_numa_alloc(wharf_shard_arena(wharf_ctx_shard(ctx, 0)),
				   100, 0, false);
	ASSERT_NE(nullptr, p);
	ASSERT_EQ(0, wharf_ctx_destroy(ctx)); // the arena goes, p with it
	ASSERT_EQ(1u, sink.errors.size());
	EXPECT_NE(std::string::npos, sink.errors[0].find("1 objects leaked"));
}

TEST(Shutdown, AppDrivenDestroyRunsQueuedMessages)
{
	payloads_run = 0;
	struct wharf_ctx *ctx = MakeCtx(Opts([](struct wharf_ctx_opts &o) {
		o.nshards = 3;
		o.app_driven = true;
	}));
	ASSERT_NE(nullptr, ctx);
	for (int i = 0; i < 30; i++)
		ASSERT_EQ(0, wharf_shard_send(wharf_ctx_shard(ctx, i % 3),
					      Payload, malloc(8)));
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
	EXPECT_EQ(30, payloads_run.load());
}

TEST(Shutdown, DestroyFromOwnShardIsRefused)
{
	struct wharf_ctx *ctx =
		MakeCtx(Opts([](struct wharf_ctx_opts &o) { o.nshards = 1; }));
	ASSERT_NE(nullptr, ctx);
	int err = 0;
	struct wharf_ctx *inner = nullptr;
	RunOn(wharf_ctx_shard(ctx, 0), [&] {
		err = wharf_ctx_destroy(ctx);
		EXPECT_EQ(-EDEADLK, wharf_ctx_create(nullptr, &inner));
	});
	EXPECT_EQ(-EDEADLK, err);
	EXPECT_EQ(nullptr, inner);
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
	EXPECT_EQ(0, wharf_ctx_destroy(nullptr));
}

} // namespace
