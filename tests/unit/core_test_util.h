// Shared helpers for the core_* unit tests.
#ifndef WHARF_TESTS_UNIT_CORE_TEST_UTIL_H
#define WHARF_TESTS_UNIT_CORE_TEST_UTIL_H

#include <gtest/gtest.h>

#include <poll.h>

#include <functional>
#include <future>

extern "C" {
#include <wharf/core.h>
}

namespace wharf_test
{

// Options with defaults, tweaked by @edit.
inline struct wharf_ctx_opts
Opts(const std::function<void(struct wharf_ctx_opts &)> &edit = nullptr)
{
	struct wharf_ctx_opts opts;
	wharf_ctx_opts_init(&opts);
	if (edit)
		edit(opts);
	return opts;
}

// Creates a context or fails the test.
inline struct wharf_ctx *MakeCtx(const struct wharf_ctx_opts &opts)
{
	struct wharf_ctx *ctx = nullptr;
	EXPECT_EQ(0, wharf_ctx_create(&opts, &ctx));
	return ctx;
}

// An app-driven context of @nshards shards (other options from @edit), or
// a test failure and NULL.
inline struct wharf_ctx *MakeAppDriven(
	unsigned nshards,
	const std::function<void(struct wharf_ctx_opts &)> &edit = nullptr)
{
	return MakeCtx(Opts([&](struct wharf_ctx_opts &o) {
		o.nshards = nshards;
		o.app_driven = true;
		if (edit)
			edit(o);
	}));
}

// Runs @fn on @shard's thread and waits for it to finish.
inline void RunOn(struct wharf_shard *shard, std::function<void()> fn)
{
	struct Call {
		std::function<void()> fn;
		std::promise<void> done;
	} call{std::move(fn), {}};
	std::future<void> done = call.done.get_future();
	ASSERT_EQ(0, wharf_shard_send(
			     shard,
			     [](struct wharf_shard *, void *arg) {
				     Call *c = static_cast<Call *>(arg);
				     c->fn();
				     c->done.set_value();
			     },
			     &call));
	done.wait();
}

// A snapshot of @shard's counters (all zero, and a test failure, on error).
inline struct wharf_shard_stats Stats(const struct wharf_shard *shard)
{
	struct wharf_shard_stats st = {};
	st.size = sizeof(st);
	EXPECT_EQ(0, wharf_shard_stats(shard, &st));
	return st;
}

// Fixture: an app-driven context of @kShards shards; shard_ is shard 0.
template <unsigned kShards> class AppDrivenCtx : public ::testing::Test
{
      protected:
	void SetUp() override
	{
		ctx_ = MakeCtx(Opts([](struct wharf_ctx_opts &o) {
			o.nshards = kShards;
			o.app_driven = true;
		}));
		ASSERT_NE(nullptr, ctx_);
		shard_ = wharf_ctx_shard(ctx_, 0);
	}
	void TearDown() override
	{
		EXPECT_EQ(0, wharf_ctx_destroy(ctx_));
	}
	struct wharf_ctx *ctx_ = nullptr;
	struct wharf_shard *shard_ = nullptr;
};

// App-driven: waits like a reactor would (shard fd + timer timeout) and
// polls until @done holds.
inline void PollUntil(struct wharf_shard *shard,
		      const std::function<bool()> &done)
{
	while (!done()) {
		struct pollfd pfd = {wharf_shard_fd(shard), POLLIN, 0};
		ASSERT_GE(poll(&pfd, 1, wharf_shard_timeout_ms(shard)), 0);
		ASSERT_GE(wharf_shard_poll(shard, 64), 0);
	}
}

} // namespace wharf_test

#endif
