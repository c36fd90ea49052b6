// The NVMe-oF host's submission batches (wharf_nvmf_host_batch_begin/end)
// on the per-thread rings of nvmf_host/subq.c, with a real shard asleep in
// epoll: a batch's calls leave a sleeping owner asleep and the batch's end
// wakes it once; a call outside a batch wakes it at once; a ring found
// full wakes it at once; only the outermost end of nested batches wakes.
// The wake-ups are the shard's own counter of eventfd writes, made inside
// the submitting calls, so the checks need no clock.
#include <errno.h>
#include <sched.h>

#include <gtest/gtest.h>

#include <wharf/core.h>
#include <wharf/nvmf_host.h>

#include "tests/unit/nvmf_host_subq_shim.h"

namespace
{

class SubqBatch : public ::testing::Test
{
      protected:
	void SetUp() override
	{
		wharf_ctx_opts o;

		wharf_ctx_opts_init(&o);
		o.nshards = 1;
		o.poll_mode = WHARF_POLL_EVENT;
		ASSERT_EQ(0, wharf_ctx_create(&o, &ctx_));
		shard_ = wharf_ctx_shard(ctx_, 0);
		q_ = subq_shim_queue_new(shard_, kEntries);
		ASSERT_NE(nullptr, q_);
	}
	void TearDown() override
	{
		if (q_)
			subq_shim_queue_free(q_);
		if (ctx_) {
			EXPECT_EQ(0, wharf_ctx_destroy(ctx_));
		}
	}
	uint64_t Wakeups()
	{
		struct wharf_shard_stats s = {};
		s.size = sizeof(s);
		EXPECT_EQ(0, wharf_shard_stats(shard_, &s));
		return s.wakeups;
	}
	// Until the owner has issued @n commands in all and gone to sleep.
	void Settle(unsigned n)
	{
		while (subq_shim_issued() < n || !subq_shim_armed(q_))
			sched_yield();
	}
	// One command through the thread's ring (which opens it), then the
	// owner asleep: sets base_ (commands issued by then) and returns the
	// shard's wake-ups to count from.
	uint64_t Asleep()
	{
		base_ = subq_shim_issued();
		EXPECT_EQ(0, subq_shim_read(q_));
		base_++;
		Settle(base_);
		return Wakeups();
	}
	unsigned base_ = 0;
	static constexpr unsigned kEntries = 16; // the ring's depth too
	wharf_ctx *ctx_ = nullptr;
	wharf_shard *shard_ = nullptr;
	struct wharf_nvmf_host_queue *q_ = nullptr;
};

TEST_F(SubqBatch, ACallOutsideABatchWakesASleepingOwner)
{
	uint64_t w = Asleep();
	ASSERT_EQ(0, subq_shim_read(q_));
	EXPECT_EQ(w + 1, Wakeups());
	Settle(base_ + 1);
}

TEST_F(SubqBatch, ABatchWakesTheOwnerOnceAtItsEnd)
{
	uint64_t w = Asleep();
	wharf_nvmf_host_batch_begin();
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(0, subq_shim_read(q_));
	EXPECT_EQ(w, Wakeups());
	EXPECT_TRUE(subq_shim_armed(q_)); // no submitter woke it
	EXPECT_EQ(base_, subq_shim_issued());
	EXPECT_EQ(0, wharf_nvmf_host_batch_end());
	EXPECT_EQ(w + 1, Wakeups());
	Settle(base_ + 8); // every command of the batch issued
}

TEST_F(SubqBatch, OnlyTheOutermostEndWakes)
{
	uint64_t w = Asleep();
	wharf_nvmf_host_batch_begin();
	wharf_nvmf_host_batch_begin();
	ASSERT_EQ(0, subq_shim_read(q_));
	EXPECT_EQ(0, wharf_nvmf_host_batch_end());
	EXPECT_EQ(w, Wakeups());
	ASSERT_EQ(0, subq_shim_read(q_));
	EXPECT_EQ(0, wharf_nvmf_host_batch_end());
	EXPECT_EQ(w + 1, Wakeups());
	Settle(base_ + 2);
}

TEST_F(SubqBatch, AFullRingWakesItsOwnerAtOnce)
{
	uint64_t w = Asleep();
	wharf_nvmf_host_batch_begin();
	for (unsigned i = 0; i < kEntries; i++)
		ASSERT_EQ(0, subq_shim_read(q_));
	EXPECT_EQ(w, Wakeups());
	// Every slot written and not taken: refused, and the owner woken to
	// take them, inside the batch.
	EXPECT_EQ(-EAGAIN, subq_shim_read(q_));
	EXPECT_EQ(w + 1, Wakeups());
	Settle(base_ + kEntries);
	// Nothing was published since: the end has no one to wake.
	EXPECT_EQ(0, wharf_nvmf_host_batch_end());
	EXPECT_EQ(w + 1, Wakeups());
}

TEST(SubqBatchEnd, WithoutABatchIsRefused)
{
	EXPECT_EQ(-EINVAL, wharf_nvmf_host_batch_end());
	wharf_nvmf_host_batch_begin();
	EXPECT_EQ(0, wharf_nvmf_host_batch_end());
	EXPECT_EQ(-EINVAL, wharf_nvmf_host_batch_end());
}

} // namespace
