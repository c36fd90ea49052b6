// Cross-shard messages: torture (N producers x M shards), shard-to-shard
// traffic, and the full-queue contract.
#include <gtest/gtest.h>

#include <errno.h>
#include <sched.h>
#include <stdint.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "tests/unit/core_test_util.h"

using wharf_test::MakeCtx;
using wharf_test::Opts;
using wharf_test::RunOn;

namespace
{

constexpr int kProducers = 4;
constexpr unsigned kShards = 3;

// Per-shard receiver state; only the shard's thread writes it.
struct Receiver {
	uint64_t next[kProducers] = {};
	uint64_t got = 0;
	uint64_t out_of_order = 0;
	struct wharf_shard *seen_shard = nullptr;
	bool wrong_shard = false;
};

Receiver receivers[kShards];

void OnMessage(struct wharf_shard *shard, void *arg)
{
	Receiver &r = receivers[wharf_shard_index(shard)];
	uintptr_t p = (uintptr_t)arg >> 32, seq = (uintptr_t)arg & 0xffffffff;

	if (wharf_shard_current() != shard)
		r.wrong_shard = true;
	if (r.next[p] != seq)
		r.out_of_order++;
	r.next[p] = seq + 1;
	r.got++;
}

class Torture : public ::testing::TestWithParam<enum wharf_poll_mode>
{
};

TEST_P(Torture, NothingLostOrReorderedPerProducer)
{
	const uint64_t each = GetParam() == WHARF_POLL_BUSY ? 1000 : 4000;
	for (auto &r : receivers)
		r = Receiver();
	struct wharf_ctx *ctx = MakeCtx(Opts([&](struct wharf_ctx_opts &o) {
		o.nshards = kShards;
		o.poll_mode = GetParam();
		o.queue_depth = 64; // small: producers do hit a full queue
	}));
	ASSERT_NE(nullptr, ctx);
	ASSERT_EQ(kShards, wharf_ctx_shard_count(ctx));

	std::atomic<uint64_t> refused[kShards] = {};
	std::vector<std::thread> producers;
	for (int p = 0; p < kProducers; p++)
		producers.emplace_back([&, p] {
			for (uint64_t i = 0; i < each; i++)
				for (unsigned s = 0; s < kShards; s++) {
					void *arg =
						(void *)((uintptr_t)p << 32 |
							 i);
					int err;
					while ((err = wharf_shard_send(
							wharf_ctx_shard(ctx, s),
							OnMessage, arg))) {
						ASSERT_EQ(-EAGAIN, err);
						refused[s]++;
						sched_yield();
					}
				}
		});
	for (auto &t : producers)
		t.join();

	// Every refusal was counted, and only those.
	for (unsigned s = 0; s < kShards; s++) {
		EXPECT_EQ(refused[s].load(),
			  wharf_test::Stats(wharf_ctx_shard(ctx, s)).send_full);
	}
	// Destroy runs whatever is still queued, then joins.
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
	for (unsigned s = 0; s < kShards; s++) {
		const Receiver &r = receivers[s];
		EXPECT_EQ(kProducers * each, r.got) << "shard " << s;
		EXPECT_EQ(0u, r.out_of_order) << "shard " << s;
		EXPECT_FALSE(r.wrong_shard);
		for (int p = 0; p < kProducers; p++)
			EXPECT_EQ(each, r.next[p]);
	}
}

INSTANTIATE_TEST_SUITE_P(Modes, Torture,
			 ::testing::Values(WHARF_POLL_EVENT,
					   WHARF_POLL_ADAPTIVE,
					   WHARF_POLL_BUSY));

// A token hops from shard to shard; each hop is a send from a callback.
struct Token {
	struct wharf_ctx *ctx;
	int hops_left;
	std::atomic<int> *tokens_left;
	std::promise<void> *all_done;
};

void Hop(struct wharf_shard *shard, void *arg)
{
	Token *t = static_cast<Token *>(arg);
	if (--t->hops_left == 0) {
		if (t->tokens_left->fetch_sub(1) == 1)
			t->all_done->set_value();
		return;
	}
	unsigned next =
		(wharf_shard_index(shard) + 1) % wharf_ctx_shard_count(t->ctx);
	while (wharf_shard_send(wharf_ctx_shard(t->ctx, next), Hop, t))
		sched_yield();
}

TEST(Messages, ShardToShardHops)
{
	// Fewer tokens than 2 full queues: no cycle of full queues can form.
	constexpr int kTokens = 24, kHops = 500;
	struct wharf_ctx *ctx = MakeCtx(Opts([](struct wharf_ctx_opts &o) {
		o.nshards = kShards;
		o.queue_depth = 16;
	}));
	ASSERT_NE(nullptr, ctx);
	std::atomic<int> tokens_left{kTokens};
	std::promise<void> all_done;
	std::vector<Token> tokens(kTokens);
	for (int i = 0; i < kTokens; i++) {
		tokens[i] = {ctx, kHops, &tokens_left, &all_done};
		// Earlier tokens are already hopping: queues may be full.
		int err;
		while ((err = wharf_shard_send(
				wharf_ctx_shard(ctx, i % kShards), Hop,
				&tokens[i])) == -EAGAIN)
			sched_yield();
		ASSERT_EQ(0, err);
	}
	all_done.get_future().wait();
	uint64_t msgs = 0;
	for (unsigned s = 0; s < kShards; s++) {
		struct wharf_shard *shard = wharf_ctx_shard(ctx, s);
		// Read on the shard: every earlier message has been counted.
		RunOn(shard, [&] { msgs += wharf_test::Stats(shard).msgs; });
	}
	EXPECT_EQ((uint64_t)kTokens * kHops, msgs);
	for (auto &t : tokens)
		EXPECT_EQ(0, t.hops_left);
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

TEST(Messages, RunOnThePinnedShardThread)
{
	struct wharf_ctx *ctx = MakeCtx(Opts());
	ASSERT_NE(nullptr, ctx);
	for (unsigned s = 0; s < wharf_ctx_shard_count(ctx); s++) {
		struct wharf_shard *shard = wharf_ctx_shard(ctx, s);
		int cpu = -1;
		struct wharf_shard *current = nullptr;
		RunOn(shard, [&] {
			cpu = sched_getcpu();
			current = wharf_shard_current();
		});
		EXPECT_EQ(wharf_shard_cpu(shard), cpu);
		EXPECT_EQ(shard, current);
	}
	EXPECT_EQ(nullptr, wharf_shard_current());
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

std::vector<uintptr_t> ran;

void Record(struct wharf_shard *, void *arg)
{
	ran.push_back((uintptr_t)arg);
}

TEST(Messages, FullQueueRefusesWithEagainAndRecovers)
{
	struct wharf_ctx *ctx = MakeCtx(Opts([](struct wharf_ctx_opts &o) {
		o.nshards = 1;
		o.app_driven = true;
		o.queue_depth = 8;
	}));
	ASSERT_NE(nullptr, ctx);
	struct wharf_shard *shard = wharf_ctx_shard(ctx, 0);
	ran.clear();
	for (uintptr_t i = 0; i < 8; i++)
		ASSERT_EQ(0, wharf_shard_send(shard, Record, (void *)i));
	EXPECT_EQ(-EAGAIN, wharf_shard_send(shard, Record, (void *)100));
	EXPECT_EQ(-EAGAIN, wharf_shard_send(shard, Record, (void *)101));

	EXPECT_EQ(2u, wharf_test::Stats(shard).send_full);

	EXPECT_EQ(8, wharf_shard_poll(shard, 64));
	EXPECT_EQ((std::vector<uintptr_t>{0, 1, 2, 3, 4, 5, 6, 7}), ran);
	ASSERT_EQ(0, wharf_shard_send(shard, Record, (void *)8));
	EXPECT_EQ(1, wharf_shard_poll(shard, 64));
	EXPECT_EQ(8u, ran.back());
	EXPECT_EQ(9u, ran.size()); // refused messages never ran
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

TEST(Messages, BadArguments)
{
	struct wharf_ctx *ctx = MakeCtx(Opts([](struct wharf_ctx_opts &o) {
		o.nshards = 1;
		o.app_driven = true;
	}));
	ASSERT_NE(nullptr, ctx);
	EXPECT_EQ(-EINVAL, wharf_shard_send(nullptr, Record, nullptr));
	EXPECT_EQ(-EINVAL,
		  wharf_shard_send(wharf_ctx_shard(ctx, 0), nullptr, nullptr));
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

} // namespace
