// Context creation: options, placement on this machine, accessors, logging,
// counters snapshot, and QSBR behaviour of shard threads.
#include <gtest/gtest.h>

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>
#include <urcu/urcu-qsbr.h>

#include "tests/unit/core_test_util.h"

extern "C" {
#include <wharf/numa.h>
}

using wharf_test::MakeCtx;
using wharf_test::Opts;
using wharf_test::RunOn;

namespace
{

int Create(const struct wharf_ctx_opts &opts)
{
	struct wharf_ctx *ctx = nullptr;
	int err = wharf_ctx_create(&opts, &ctx);
	if (!err) {
		EXPECT_EQ(0, wharf_ctx_destroy(ctx));
	} else {
		EXPECT_EQ(nullptr, ctx);
	}
	return err;
}

TEST(Ctx, DefaultIsOneShardPerCoreEachPinned)
{
	struct wharf_ctx *ctx = MakeCtx(Opts());
	ASSERT_NE(nullptr, ctx);
	struct wharf_numa *numa = wharf_ctx_numa(ctx);
	ASSERT_NE(nullptr, numa);
	unsigned n = wharf_ctx_shard_count(ctx);
	EXPECT_EQ(wharf_numa_core_count(numa, 0), n);
	EXPECT_EQ(nullptr, wharf_ctx_shard(ctx, n));
	std::set<int> cpus;
	for (unsigned i = 0; i < n; i++) {
		struct wharf_shard *s = wharf_ctx_shard(ctx, i);
		EXPECT_EQ(ctx, wharf_shard_ctx(s));
		EXPECT_EQ(i, wharf_shard_index(s));
		EXPECT_EQ(wharf_numa_cpu_node(numa, wharf_shard_cpu(s)),
			  (int)wharf_shard_node(s));
		ASSERT_NE(nullptr, wharf_shard_arena(s));
		EXPECT_EQ(wharf_shard_node(s),
			  wharf_numa_arena_node(wharf_shard_arena(s)));
		cpus.insert(wharf_shard_cpu(s));
	}
	EXPECT_EQ(n, cpus.size()); // distinct cores
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

TEST(Ctx, ExplicitCpuList)
{
	int all = (int)sysconf(_SC_NPROCESSORS_ONLN);
	std::vector<int> list = {all - 1, 0, all - 1};
	struct wharf_ctx *ctx = MakeCtx(Opts([&](struct wharf_ctx_opts &o) {
		o.cpus = list.data();
		o.ncpus = 3;
	}));
	ASSERT_NE(nullptr, ctx);
	ASSERT_EQ(3u, wharf_ctx_shard_count(ctx));
	for (unsigned i = 0; i < 3; i++) {
		struct wharf_shard *s = wharf_ctx_shard(ctx, i);
		EXPECT_EQ(list[i], wharf_shard_cpu(s));
		int cpu = -1;
		RunOn(s, [&] { cpu = sched_getcpu(); });
		EXPECT_EQ(list[i], cpu);
	}
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

TEST(Ctx, RejectsBadOptions)
{
	int bad_cpu = 4096, ok_cpu = 0;
	EXPECT_EQ(-EINVAL, Create(Opts([&](struct wharf_ctx_opts &o) {
		o.cpus = &bad_cpu;
		o.ncpus = 1;
	})));
	EXPECT_EQ(-EINVAL, Create(Opts([&](struct wharf_ctx_opts &o) {
		o.cpus = &ok_cpu;
		o.ncpus = 1;
		o.nshards = 2;
	})));
	EXPECT_EQ(-EINVAL,
		  Create(Opts([&](struct wharf_ctx_opts &o) { o.ncpus = 1; })));
	EXPECT_EQ(-EINVAL, Create(Opts([](struct wharf_ctx_opts &o) {
		o.queue_depth = 12;
	})));
	EXPECT_EQ(-EINVAL, Create(Opts([](struct wharf_ctx_opts &o) {
		o.queue_depth = 1;
	})));
	EXPECT_EQ(-EINVAL, Create(Opts([](struct wharf_ctx_opts &o) {
		o.poll_mode = (enum wharf_poll_mode)7;
	})));
	EXPECT_EQ(-EINVAL, Create(Opts([](struct wharf_ctx_opts &o) {
		o.log_level = (enum wharf_log_level)9;
	})));
	EXPECT_EQ(-ENODEV, Create(Opts([](struct wharf_ctx_opts &o) {
		o.device = "no_such_rdma_dev0";
	})));
	struct wharf_ctx *ctx = nullptr;
	EXPECT_EQ(-EINVAL, wharf_ctx_create(nullptr, nullptr));
	(void)ctx;
}

TEST(Ctx, OptionsSizeRules)
{
	// A newer caller's extra, unknown field must be zero.
	struct {
		struct wharf_ctx_opts opts;
		uint64_t future;
	} newer = {};
	newer.opts.size = sizeof(newer);
	newer.opts.nshards = 1;
	newer.opts.app_driven = true;
	EXPECT_EQ(0, Create(newer.opts));
	newer.future = 1;
	EXPECT_EQ(-EINVAL, Create(newer.opts));

	// An older caller that only knew size and nshards.
	struct wharf_ctx_opts older = {};
	older.size = offsetof(struct wharf_ctx_opts, nshards) +
		     sizeof(older.nshards);
	older.nshards = 1;
	older.app_driven = true; // not part of its size: ignored
	struct wharf_ctx *ctx = nullptr;
	ASSERT_EQ(0, wharf_ctx_create(&older, &ctx));
	EXPECT_EQ(1u, wharf_ctx_shard_count(ctx));
	// Threaded (app_driven was ignored): polling is refused.
	EXPECT_EQ(-EINVAL, wharf_shard_poll(wharf_ctx_shard(ctx, 0), 1));
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));

	older.size = 2;
	EXPECT_EQ(-EINVAL, Create(older));
	// NULL options: all defaults.
	ASSERT_EQ(0, wharf_ctx_create(nullptr, &ctx));
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

struct Lines {
	std::mutex lock;
	std::vector<std::pair<enum wharf_log_level, std::string>> v;
};

void Collect(void *arg, enum wharf_log_level level, const char *msg)
{
	Lines *l = static_cast<Lines *>(arg);
	std::lock_guard<std::mutex> g(l->lock);
	l->v.emplace_back(level, msg);
}

TEST(Ctx, LogLevelsAndCallback)
{
	Lines lines;
	struct wharf_ctx *ctx = MakeCtx(Opts([&](struct wharf_ctx_opts &o) {
		o.nshards = 1;
		o.app_driven = true;
		o.log_level = WHARF_LOG_INFO;
		o.log_fn = Collect;
		o.log_arg = &lines;
	}));
	ASSERT_NE(nullptr, ctx);
	ASSERT_EQ(1u, lines.v.size());
	EXPECT_EQ(WHARF_LOG_INFO, lines.v[0].first);
	EXPECT_EQ("1 shards, app-driven", lines.v[0].second);
	wharf_ctx_log(ctx, WHARF_LOG_DEBUG, "hidden %d", 1);
	wharf_ctx_log(ctx, WHARF_LOG_WARN, "shown %d", 2);
	ASSERT_EQ(2u, lines.v.size());
	EXPECT_EQ("shown 2", lines.v[1].second);
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));

	lines.v.clear();
	ctx = MakeCtx(Opts([&](struct wharf_ctx_opts &o) {
		o.nshards = 1;
		o.app_driven = true;
		o.log_level = WHARF_LOG_OFF;
		o.log_fn = Collect;
		o.log_arg = &lines;
	}));
	ASSERT_NE(nullptr, ctx);
	wharf_ctx_log(ctx, WHARF_LOG_ERROR, "nope");
	EXPECT_TRUE(lines.v.empty());
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

TEST(Ctx, StatsSnapshotHonoursCallerSize)
{
	struct wharf_ctx *ctx = MakeCtx(Opts([](struct wharf_ctx_opts &o) {
		o.nshards = 1;
		o.app_driven = true;
	}));
	ASSERT_NE(nullptr, ctx);
	struct wharf_shard *shard = wharf_ctx_shard(ctx, 0);
	auto nop = [](struct wharf_shard *, void *) {};
	ASSERT_EQ(0, wharf_shard_send(shard, nop, nullptr));
	ASSERT_EQ(1, wharf_shard_poll(shard, 8));

	// An older caller knowing only `loops` and `msgs`.
	struct wharf_shard_stats st;
	memset(&st, 0xee, sizeof(st));
	st.size = offsetof(struct wharf_shard_stats, send_full);
	ASSERT_EQ(0, wharf_shard_stats(shard, &st));
	EXPECT_EQ(1u, st.loops);
	EXPECT_EQ(1u, st.msgs);
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeull, st.send_full); // untouched

	// A newer caller: its unknown tail is zeroed.
	struct {
		struct wharf_shard_stats st;
		uint64_t future;
	} newer;
	memset(&newer, 0xee, sizeof(newer));
	newer.st.size = sizeof(newer);
	ASSERT_EQ(0, wharf_shard_stats(shard, &newer.st));
	EXPECT_EQ(1u, newer.st.msgs);
	EXPECT_EQ(0u, newer.st.send_full);
	EXPECT_EQ(0u, newer.future);

	st.size = 1;
	EXPECT_EQ(-EINVAL, wharf_shard_stats(shard, &st));
	EXPECT_EQ(-EINVAL, wharf_shard_stats(shard, nullptr));
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

class Qsbr : public ::testing::TestWithParam<enum wharf_poll_mode>
{
};

// Shard threads are QSBR readers that never hold up a grace period for
// long: busy ones pass quiescent states, sleeping ones are offline.
TEST_P(Qsbr, GracePeriodsCompleteWhileShardsRun)
{
	struct wharf_ctx *ctx = MakeCtx(Opts(
		[](struct wharf_ctx_opts &o) { o.poll_mode = GetParam(); }));
	ASSERT_NE(nullptr, ctx);
	for (int i = 0; i < 20; i++) {
		urcu_qsbr_synchronize_rcu();
		if (i % 5 == 0)
			RunOn(wharf_ctx_shard(ctx, 0), [] {});
	}
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

INSTANTIATE_TEST_SUITE_P(Modes, Qsbr,
			 ::testing::Values(WHARF_POLL_EVENT, WHARF_POLL_BUSY,
					   WHARF_POLL_ADAPTIVE));

} // namespace
