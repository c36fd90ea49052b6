// Lanes through the public API: registered senders (batches, full lanes,
// order, shutdown, lifetime) and shard-to-shard lanes (order, publication
// at the end of an iteration, wharf_shard_flush).
#include <gtest/gtest.h>

#include <errno.h>
#include <sched.h>
#include <stdint.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "tests/unit/core_test_util.h"

using wharf_test::MakeAppDriven;
using wharf_test::MakeCtx;
using wharf_test::Opts;
using wharf_test::RunOn;

namespace
{

std::vector<uintptr_t> ran;

void Record(struct wharf_shard *, void *arg)
{
	ran.push_back((uintptr_t)arg);
}

struct wharf_sender *MakeSender(struct wharf_ctx *ctx)
{
	struct wharf_sender *s = nullptr;
	EXPECT_EQ(0, wharf_sender_create(ctx, &s));
	return s;
}

class AppDriven : public wharf_test::AppDrivenCtx<2>
{
      protected:
	void SetUp() override
	{
		wharf_test::AppDrivenCtx<2>::SetUp();
		ran.clear();
	}
};

TEST_F(AppDriven, HeldMessagesRunOnlyAfterTheBatchIsPublished)
{
	struct wharf_sender *s = MakeSender(ctx_);
	ASSERT_NE(nullptr, s);
	ASSERT_EQ(0, wharf_sender_send(s, shard_, Record, (void *)1,
				       WHARF_SEND_MORE));
	ASSERT_EQ(0, wharf_sender_send(s, shard_, Record, (void *)2,
				       WHARF_SEND_MORE));
	EXPECT_EQ(0, wharf_shard_poll(shard_, 64)); // held, not visible
	ASSERT_EQ(0, wharf_sender_flush(s));
	EXPECT_EQ(2, wharf_shard_poll(shard_, 64));
	// A send without the flag publishes everything held before it.
	ASSERT_EQ(0, wharf_sender_send(s, shard_, Record, (void *)3,
				       WHARF_SEND_MORE));
	ASSERT_EQ(0, wharf_sender_send(s, shard_, Record, (void *)4, 0));
	EXPECT_EQ(2, wharf_shard_poll(shard_, 64));
	EXPECT_EQ((std::vector<uintptr_t>{1, 2, 3, 4}), ran);
	EXPECT_EQ(1u, wharf_test::Stats(shard_).lanes);
	ASSERT_EQ(0, wharf_sender_destroy(s));
	// The shard frees a closed lane once it has run all of it.
	EXPECT_EQ(0, wharf_shard_poll(shard_, 64));
	EXPECT_EQ(0u, wharf_test::Stats(shard_).lanes);
}

TEST_F(AppDriven, OneLanePerShardEachInOrder)
{
	struct wharf_sender *s = MakeSender(ctx_);
	struct wharf_shard *other = wharf_ctx_shard(ctx_, 1);
	ASSERT_NE(nullptr, s);
	for (uintptr_t i = 0; i < 6; i++)
		ASSERT_EQ(0,
			  wharf_sender_send(s, i % 2 ? other : shard_, Record,
					    (void *)i, WHARF_SEND_MORE));
	ASSERT_EQ(0, wharf_sender_flush(s)); // both lanes
	EXPECT_EQ(3, wharf_shard_poll(other, 64));
	EXPECT_EQ(3, wharf_shard_poll(shard_, 64));
	EXPECT_EQ((std::vector<uintptr_t>{1, 3, 5, 0, 2, 4}), ran);
	ASSERT_EQ(0, wharf_sender_destroy(s));
}

TEST(Sender, FullLanePublishesWhatItHoldsAndRefuses)
{
	struct wharf_ctx *ctx = MakeAppDriven(
		1, [](struct wharf_ctx_opts &o) { o.lane_depth = 4; });
	ASSERT_NE(nullptr, ctx);
	struct wharf_shard *shard = wharf_ctx_shard(ctx, 0);
	struct wharf_sender *s = MakeSender(ctx);
	ran.clear();
	for (uintptr_t i = 0; i < 4; i++)
		ASSERT_EQ(0, wharf_sender_send(s, shard, Record, (void *)i,
					       WHARF_SEND_MORE));
	EXPECT_EQ(-EAGAIN, wharf_sender_send(s, shard, Record, (void *)99,
					     WHARF_SEND_MORE));
	EXPECT_EQ(1u, wharf_test::Stats(shard).send_full);
	// Published by the refusal, without a flush.
	EXPECT_EQ(4, wharf_shard_poll(shard, 64));
	ASSERT_EQ(0, wharf_sender_send(s, shard, Record, (void *)4, 0));
	EXPECT_EQ(1, wharf_shard_poll(shard, 64));
	EXPECT_EQ((std::vector<uintptr_t>{0, 1, 2, 3, 4}), ran);
	ASSERT_EQ(0, wharf_sender_destroy(s));
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

TEST(Sender, ContextDestroyWaitsForItsSenders)
{
	struct wharf_ctx *ctx = MakeAppDriven(1);
	ASSERT_NE(nullptr, ctx);
	struct wharf_sender *s = MakeSender(ctx);
	ran.clear();
	ASSERT_EQ(0, wharf_sender_send(s, wharf_ctx_shard(ctx, 0), Record,
				       (void *)5, WHARF_SEND_MORE));
	EXPECT_EQ(-EBUSY, wharf_ctx_destroy(ctx));
	// Destroying the sender publishes what it held; the context's
	// destroy runs it (the lane was never adopted: nobody polled).
	ASSERT_EQ(0, wharf_sender_destroy(s));
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
	EXPECT_EQ((std::vector<uintptr_t>{5}), ran);
}

TEST(Sender, BadArguments)
{
	struct wharf_ctx *a = MakeAppDriven(1);
	struct wharf_ctx *b = MakeAppDriven(1);
	ASSERT_NE(nullptr, a);
	ASSERT_NE(nullptr, b);
	struct wharf_sender *s = nullptr;
	EXPECT_EQ(-EINVAL, wharf_sender_create(nullptr, &s));
	EXPECT_EQ(-EINVAL, wharf_sender_create(a, nullptr));
	s = MakeSender(a);
	struct wharf_shard *sa = wharf_ctx_shard(a, 0);
	EXPECT_EQ(-EINVAL, wharf_sender_send(nullptr, sa, Record, nullptr, 0));
	EXPECT_EQ(-EINVAL, wharf_sender_send(s, nullptr, Record, nullptr, 0));
	EXPECT_EQ(-EINVAL, wharf_sender_send(s, sa, nullptr, nullptr, 0));
	EXPECT_EQ(-EINVAL, wharf_sender_send(s, wharf_ctx_shard(b, 0), Record,
					     nullptr, 0));
	EXPECT_EQ(-EINVAL, wharf_sender_send(s, sa, Record, nullptr, 0x10));
	EXPECT_EQ(-EINVAL, wharf_sender_flush(nullptr));
	EXPECT_EQ(0, wharf_sender_destroy(nullptr));
	EXPECT_EQ(0, wharf_shard_poll(sa, 64)); // nothing was queued
	ASSERT_EQ(0, wharf_sender_destroy(s));
	struct wharf_ctx_opts o = Opts([](struct wharf_ctx_opts &o) {
		o.nshards = 1;
		o.lane_depth = 3; // not a power of two
	});
	struct wharf_ctx *c = nullptr;
	EXPECT_EQ(-EINVAL, wharf_ctx_create(&o, &c));
	ASSERT_EQ(0, wharf_ctx_destroy(a));
	ASSERT_EQ(0, wharf_ctx_destroy(b));
}

// ---- threaded: many senders, many shards --------------------------------

constexpr unsigned kShards = 3;
constexpr unsigned kSenders = 4 + kShards; // app threads, then shards

struct Receiver {
	uint64_t next[kSenders] = {};
	uint64_t got = 0;
	uint64_t out_of_order = 0;
};

Receiver receivers[kShards];

void OnMessage(struct wharf_shard *shard, void *arg)
{
	Receiver &r = receivers[wharf_shard_index(shard)];
	uintptr_t p = (uintptr_t)arg >> 32, seq = (uintptr_t)arg & 0xffffffff;

	if (r.next[p] != seq)
		r.out_of_order++;
	r.next[p] = seq + 1;
	r.got++;
}

void *Tag(unsigned sender, uint64_t seq)
{
	return (void *)((uintptr_t)sender << 32 | seq);
}

struct Pump {
	struct wharf_ctx *ctx;
	unsigned self, tag;
	uint64_t each;
	uint64_t next[kShards] = {};
	std::promise<void> done;
};

void PumpStep(struct wharf_shard *shard, void *arg)
{
	Pump *p = static_cast<Pump *>(arg);
	bool left = false;

	for (unsigned t = 0; t < kShards; t++) {
		if (t == p->self)
			continue;
		while (p->next[t] < p->each &&
		       !wharf_shard_send(wharf_ctx_shard(p->ctx, t), OnMessage,
					 Tag(p->tag, p->next[t])))
			p->next[t]++;
		left |= p->next[t] < p->each;
	}
	if (!left) {
		p->done.set_value();
		return;
	}
	// Its own lane holds nothing else: this cannot be refused.
	if (wharf_shard_send(shard, PumpStep, p))
		ADD_FAILURE() << "pump could not send itself";
}

class Many : public ::testing::TestWithParam<enum wharf_poll_mode>
{
};

// Application threads through senders (in batches of up to 8) and every
// shard from its own callbacks send to every other shard; small lanes, so
// they fill.  Nothing is lost or reordered per sender, and destroy runs what is
// still queued.
TEST_P(Many, PerSenderOrderWithFullLanes)
{
	const uint64_t each = GetParam() == WHARF_POLL_BUSY ? 1000 : 3000;
	constexpr unsigned kApp = kSenders - kShards;
	for (auto &r : receivers)
		r = Receiver();
	struct wharf_ctx *ctx = MakeCtx(Opts([&](struct wharf_ctx_opts &o) {
		o.nshards = kShards;
		o.poll_mode = GetParam();
		o.lane_depth = 16;
		o.queue_depth = 16;
	}));
	ASSERT_NE(nullptr, ctx);

	std::vector<std::thread> threads;
	for (unsigned p = 0; p < kApp; p++)
		threads.emplace_back([&, p] {
			struct wharf_sender *s = MakeSender(ctx);
			ASSERT_NE(nullptr, s);
			for (uint64_t i = 0; i < each; i++)
				for (unsigned k = 0; k < kShards; k++) {
					unsigned flags =
						(i + k) % 8 ? WHARF_SEND_MORE
							    : 0;
					int err;
					while ((err = wharf_sender_send(
							s,
							wharf_ctx_shard(ctx, k),
							OnMessage, Tag(p, i),
							flags))) {
						ASSERT_EQ(-EAGAIN, err);
						sched_yield();
					}
				}
			ASSERT_EQ(0, wharf_sender_destroy(s));
		});
	// Each shard pumps its share in steps: a step sends until a lane is
	// full (which publishes it), then sends itself again, so that no
	// callback waits for another shard that waits for it.
	std::vector<Pump> pumps(kShards);
	std::vector<std::future<void>> pumped;
	for (unsigned k = 0; k < kShards; k++) {
		pumps[k].ctx = ctx;
		pumps[k].self = k;
		pumps[k].each = each;
		pumps[k].tag = kApp + k;
		pumped.push_back(pumps[k].done.get_future());
		ASSERT_EQ(0, wharf_shard_send(wharf_ctx_shard(ctx, k), PumpStep,
					      &pumps[k]));
	}
	// The deadline only keeps a lost wake-up from hanging the suite.
	for (auto &f : pumped)
		ASSERT_EQ(std::future_status::ready,
			  f.wait_for(std::chrono::seconds(120)));
	for (auto &t : threads)
		t.join();
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
	for (unsigned k = 0; k < kShards; k++) {
		const Receiver &r = receivers[k];
		EXPECT_EQ((kApp + kShards - 1) * each, r.got) << "shard " << k;
		EXPECT_EQ(0u, r.out_of_order) << "shard " << k;
		for (unsigned p = 0; p < kSenders; p++)
			EXPECT_EQ(p == kApp + k ? 0 : each, r.next[p])
				<< "shard " << k << " sender " << p;
	}
}

INSTANTIATE_TEST_SUITE_P(Modes, Many,
			 ::testing::Values(WHARF_POLL_EVENT,
					   WHARF_POLL_ADAPTIVE,
					   WHARF_POLL_BUSY));

// A callback that waits for another shard's answer publishes first; the
// deadline only keeps a broken build from hanging the suite.
TEST(ShardLanes, FlushLetsACallbackWaitForAnAnswer)
{
	struct wharf_ctx *ctx =
		MakeCtx(Opts([](struct wharf_ctx_opts &o) { o.nshards = 2; }));
	ASSERT_NE(nullptr, ctx);
	std::promise<void> answered;
	std::future_status status = std::future_status::timeout;
	RunOn(wharf_ctx_shard(ctx, 0), [&] {
		ASSERT_EQ(0,
			  wharf_shard_send(
				  wharf_ctx_shard(ctx, 1),
				  [](struct wharf_shard *, void *arg) {
					  static_cast<std::promise<void> *>(arg)
						  ->set_value();
				  },
				  &answered));
		wharf_shard_flush();
		status = answered.get_future().wait_for(
			std::chrono::seconds(30));
	});
	EXPECT_EQ(std::future_status::ready, status);
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

// A shard's message to another becomes visible when the sending
// callback's iteration ends, not before: while the callback still runs
// (here it waits a little on purpose), the receiver has run nothing; once
// it returns, everything it sent runs, in order.
TEST(ShardLanes, PublishedWhenTheSendingIterationEnds)
{
	struct wharf_ctx *ctx =
		MakeCtx(Opts([](struct wharf_ctx_opts &o) { o.nshards = 2; }));
	ASSERT_NE(nullptr, ctx);
	struct wharf_shard *s0 = wharf_ctx_shard(ctx, 0);
	struct wharf_shard *s1 = wharf_ctx_shard(ctx, 1);
	uint64_t before = 0, inside = 0, after = 0;
	int sent = 0;
	std::promise<void> last;
	ran.clear();
	RunOn(s1, [&] { before = wharf_test::Stats(s1).msgs; });
	RunOn(s0, [&] {
		for (uintptr_t i = 0; i < 3; i++)
			sent += !wharf_shard_send(s1, Record, (void *)i);
		sent += !wharf_shard_send(
			s1,
			[](struct wharf_shard *, void *arg) {
				static_cast<std::promise<void> *>(arg)
					->set_value();
			},
			&last);
		// Had it been published, shard 1 would have run it by now.
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
		inside = wharf_test::Stats(s1).msgs;
	});
	ASSERT_EQ(std::future_status::ready,
		  last.get_future().wait_for(std::chrono::seconds(30)));
	RunOn(s1, [&] { after = wharf_test::Stats(s1).msgs; });
	EXPECT_EQ(4, sent);
	// Counted as each ends: the RunOn that read `before`, then the four.
	EXPECT_EQ(before + 1, inside);
	EXPECT_EQ(before + 1 + 4, after);
	EXPECT_EQ((std::vector<uintptr_t>{0, 1, 2}), ran);
	EXPECT_EQ(1u, wharf_test::Stats(s1).lanes);
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

// App-driven shards are run by whatever thread polls them, which may also
// send as itself: their messages share the receiver's queue with that
// thread's, so one thread's messages keep their order either way.
TEST(ShardLanes, AppDrivenShardsKeepTheirThreadsOrder)
{
	struct wharf_ctx *ctx = MakeAppDriven(2);
	ASSERT_NE(nullptr, ctx);
	struct wharf_shard *s0 = wharf_ctx_shard(ctx, 0);
	struct wharf_shard *s1 = wharf_ctx_shard(ctx, 1);
	ran.clear();
	ASSERT_EQ(0, wharf_shard_send(
			     s0,
			     [](struct wharf_shard *shard, void *) {
				     wharf_shard_send(
					     wharf_ctx_shard(
						     wharf_shard_ctx(shard), 1),
					     Record, (void *)1);
			     },
			     nullptr));
	EXPECT_EQ(1, wharf_shard_poll(s0, 64)); // sends 1 as shard 0
	ASSERT_EQ(0, wharf_shard_send(s1, Record, (void *)2)); // as itself
	EXPECT_EQ(2, wharf_shard_poll(s1, 64));
	EXPECT_EQ((std::vector<uintptr_t>{1, 2}), ran);
	EXPECT_EQ(0u, wharf_test::Stats(s1).lanes);
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

} // namespace
