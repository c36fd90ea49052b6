// The single-producer lane on its own: batches, laps, full, close, and one
// producer thread against one consumer thread.
#include <gtest/gtest.h>

#include <errno.h>
#include <stdint.h>

#include <thread>
#include <vector>

#include "tests/unit/core_lane_shim.h"

namespace
{

std::vector<uintptr_t> got;

void Record(struct wharf_shard *, void *arg)
{
	got.push_back((uintptr_t)arg);
}

struct Lane {
	explicit Lane(size_t depth) : lane(shim_lane_new(depth))
	{
		got.clear();
	}
	~Lane()
	{
		shim_lane_free(lane);
	}
	struct shim_lane *lane;
};

TEST(Lane, NothingRunsUntilPublished)
{
	Lane l(8);
	EXPECT_FALSE(shim_lane_dirty(l.lane));
	EXPECT_FALSE(shim_lane_publish(l.lane)); // nothing to publish
	ASSERT_EQ(0, shim_lane_put(l.lane, Record, (void *)1));
	ASSERT_EQ(0, shim_lane_put(l.lane, Record, (void *)2));
	EXPECT_TRUE(shim_lane_dirty(l.lane));
	EXPECT_FALSE(shim_lane_pending(l.lane));
	EXPECT_EQ(0u, shim_lane_run(l.lane, 64));

	EXPECT_TRUE(shim_lane_publish(l.lane));
	EXPECT_FALSE(shim_lane_dirty(l.lane));
	EXPECT_TRUE(shim_lane_pending(l.lane));
	EXPECT_EQ(2u, shim_lane_run(l.lane, 64));
	EXPECT_EQ((std::vector<uintptr_t>{1, 2}), got);
	EXPECT_FALSE(shim_lane_pending(l.lane));
}

TEST(Lane, RunStopsAtTheBudgetAndResumesInOrder)
{
	Lane l(16);
	for (uintptr_t i = 0; i < 10; i++)
		ASSERT_EQ(0, shim_lane_put(l.lane, Record, (void *)i));
	shim_lane_publish(l.lane);
	EXPECT_EQ(3u, shim_lane_run(l.lane, 3));
	EXPECT_EQ(3u, shim_lane_run(l.lane, 3));
	EXPECT_TRUE(shim_lane_pending(l.lane));
	EXPECT_EQ(4u, shim_lane_run(l.lane, 64));
	ASSERT_EQ(10u, got.size());
	for (uintptr_t i = 0; i < 10; i++)
		EXPECT_EQ(i, got[i]);
}

// Unpublished messages hold slots: a full lane is full whether or not its
// producer has published.
TEST(Lane, FullCountsUnpublishedSlotsAndFreesOnlyWhatRan)
{
	Lane l(4);
	for (uintptr_t i = 0; i < 4; i++)
		ASSERT_EQ(0, shim_lane_put(l.lane, Record, (void *)i));
	EXPECT_EQ(-EAGAIN, shim_lane_put(l.lane, Record, (void *)99));
	EXPECT_EQ(0u, shim_lane_run(l.lane, 64)); // not published yet
	EXPECT_EQ(-EAGAIN, shim_lane_put(l.lane, Record, (void *)99));

	shim_lane_publish(l.lane);
	EXPECT_EQ(-EAGAIN, shim_lane_put(l.lane, Record, (void *)99));
	EXPECT_EQ(1u, shim_lane_run(l.lane, 1)); // one slot back
	EXPECT_EQ(0, shim_lane_put(l.lane, Record, (void *)4));
	EXPECT_EQ(-EAGAIN, shim_lane_put(l.lane, Record, (void *)99));
	shim_lane_publish(l.lane);
	EXPECT_EQ(4u, shim_lane_run(l.lane, 64));
	EXPECT_EQ((std::vector<uintptr_t>{0, 1, 2, 3, 4}), got);
}

// Batches of every size from 1 to depth, across many laps of the slots.
TEST(Lane, BatchesOfEverySizeAcrossLaps)
{
	constexpr size_t kDepth = 8;
	Lane l(kDepth);
	uintptr_t next = 0;
	for (int lap = 0; lap < 200; lap++) {
		size_t batch = 1 + lap % kDepth;
		for (size_t i = 0; i < batch; i++)
			ASSERT_EQ(0, shim_lane_put(l.lane, Record,
						   (void *)next++));
		EXPECT_TRUE(shim_lane_publish(l.lane));
		// Take it back in two uneven pieces.
		unsigned first = (unsigned)(batch / 3);
		EXPECT_EQ(first, shim_lane_run(l.lane, first));
		EXPECT_EQ(batch - first, shim_lane_run(l.lane, 64));
	}
	ASSERT_EQ(next, got.size());
	for (uintptr_t i = 0; i < next; i++)
		ASSERT_EQ(i, got[i]);
}

TEST(Lane, ClosedLaneFinishesOnlyOnceDrained)
{
	Lane l(8);
	ASSERT_EQ(0, shim_lane_put(l.lane, Record, (void *)7));
	EXPECT_FALSE(shim_lane_finished(l.lane));
	shim_lane_close(l.lane); // publishes what it holds
	EXPECT_FALSE(shim_lane_finished(l.lane));
	EXPECT_EQ(1u, shim_lane_run(l.lane, 64));
	EXPECT_TRUE(shim_lane_finished(l.lane));
	EXPECT_EQ((std::vector<uintptr_t>{7}), got);
}

// One producer thread in batches, one consumer thread: every message once,
// in order, through thousands of laps and full lanes (run under TSan too).
uintptr_t expect_next;
bool disorder;

void Check(struct wharf_shard *, void *arg)
{
	if ((uintptr_t)arg != expect_next)
		disorder = true;
	expect_next++;
}

TEST(Lane, ProducerAndConsumerThreads)
{
	constexpr uintptr_t kMessages = 200000;
	Lane l(64);
	expect_next = 0;
	disorder = false;
	std::thread consumer([&] {
		uintptr_t ran = 0;
		while (ran < kMessages)
			ran += shim_lane_run(l.lane, 1 + ran % 50);
	});
	uintptr_t fulls = 0;
	for (uintptr_t i = 0; i < kMessages;) {
		int err = shim_lane_put(l.lane, Check, (void *)i);
		if (err) {
			ASSERT_EQ(-EAGAIN, err);
			fulls++;
			shim_lane_publish(l.lane);
			std::this_thread::yield();
			continue;
		}
		i++;
		if (i % 7 == 0)
			shim_lane_publish(l.lane);
	}
	shim_lane_publish(l.lane);
	consumer.join();
	EXPECT_EQ(kMessages, expect_next);
	EXPECT_FALSE(disorder);
	EXPECT_FALSE(shim_lane_pending(l.lane));
	(void)fulls; // how often it was full depends on scheduling
}

} // namespace
