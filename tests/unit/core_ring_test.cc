// The bounded MPSC ring on its own: order, full behaviour, concurrency.
#include <gtest/gtest.h>

#include <errno.h>
#include <stdint.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/unit/core_ring_shim.h"

namespace
{

void Nop(struct wharf_shard *, void *)
{
}

void Other(struct wharf_shard *, void *)
{
}

struct Ring {
	explicit Ring(size_t depth) : ring(shim_ring_new(depth))
	{
	}
	~Ring()
	{
		shim_ring_free(ring);
	}
	struct shim_ring *ring;
};

TEST(Ring, FifoAcrossManyLaps)
{
	Ring r(4);
	uintptr_t next_in = 0, next_out = 0;
	for (int lap = 0; lap < 100; lap++) {
		int burst = 1 + lap % 4;
		for (int i = 0; i < burst; i++)
			ASSERT_EQ(0, shim_ring_push(r.ring, Nop,
						    (void *)next_in++));
		for (int i = 0; i < burst; i++) {
			shim_ring_fn fn;
			void *arg;
			ASSERT_TRUE(shim_ring_ready(r.ring));
			ASSERT_TRUE(shim_ring_pop(r.ring, &fn, &arg));
			EXPECT_EQ((void *)Nop, (void *)fn);
			EXPECT_EQ(next_out++, (uintptr_t)arg);
		}
		EXPECT_FALSE(shim_ring_ready(r.ring));
	}
}

TEST(Ring, FullRingRefusesUntilConsumed)
{
	Ring r(8);
	for (uintptr_t i = 0; i < 8; i++)
		ASSERT_EQ(0, shim_ring_push(r.ring, Nop, (void *)i));
	EXPECT_EQ(-EAGAIN, shim_ring_push(r.ring, Other, (void *)99));
	EXPECT_EQ(-EAGAIN, shim_ring_push(r.ring, Other, (void *)99));

	shim_ring_fn fn;
	void *arg;
	ASSERT_TRUE(shim_ring_pop(r.ring, &fn, &arg));
	EXPECT_EQ((void *)0, arg);
	ASSERT_EQ(0, shim_ring_push(r.ring, Other, (void *)8));
	EXPECT_EQ(-EAGAIN, shim_ring_push(r.ring, Other, (void *)99));
	// The refused messages left no trace: 1..8 come out, then nothing.
	for (uintptr_t i = 1; i <= 8; i++) {
		ASSERT_TRUE(shim_ring_pop(r.ring, &fn, &arg));
		EXPECT_EQ(i, (uintptr_t)arg);
		EXPECT_EQ((void *)(i == 8 ? Other : Nop), (void *)fn);
	}
	EXPECT_FALSE(shim_ring_pop(r.ring, &fn, &arg));
}

TEST(Ring, ProducersKeepTheirOrder)
{
	constexpr int kProducers = 4;
	constexpr uintptr_t kEach = 50000;
	Ring r(64);
	std::atomic<int> full{0};
	std::vector<std::thread> producers;
	for (int p = 0; p < kProducers; p++)
		producers.emplace_back([&, p] {
			for (uintptr_t i = 0; i < kEach; i++) {
				void *arg = (void *)((uintptr_t)p << 32 | i);
				while (shim_ring_push(r.ring, Nop, arg)) {
					full.fetch_add(
						1, std::memory_order_relaxed);
					std::this_thread::yield();
				}
			}
		});
	uintptr_t next[kProducers] = {};
	for (uintptr_t got = 0; got < kProducers * kEach;) {
		shim_ring_fn fn;
		void *arg;
		if (!shim_ring_pop(r.ring, &fn, &arg)) {
			std::this_thread::yield();
			continue;
		}
		uintptr_t p = (uintptr_t)arg >> 32,
			  seq = (uintptr_t)arg & 0xffffffff;
		ASSERT_LT(p, (uintptr_t)kProducers);
		ASSERT_EQ(next[p], seq) << "producer " << p;
		next[p]++;
		got++;
	}
	for (auto &t : producers)
		t.join();
	for (int p = 0; p < kProducers; p++)
		EXPECT_EQ(kEach, next[p]);
}

} // namespace
