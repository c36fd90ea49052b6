// Registered-buffer pool bookkeeping (no RDMA device: pd = NULL).
#include <gtest/gtest.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <set>
#include <vector>

extern "C" {
#include <wharf/numa.h>
}

namespace
{

struct wharf_buf_pool *MakePool(size_t buf_size, uint32_t count,
				struct wharf_numa_arena *arena = nullptr)
{
	struct wharf_buf_pool_opts opts = {};
	opts.size = sizeof(opts);
	opts.buf_size = buf_size;
	opts.count = count;
	opts.arena = arena;
	struct wharf_buf_pool *pool = nullptr;
	EXPECT_EQ(0, wharf_buf_pool_create(&opts, &pool));
	return pool;
}

TEST(BufPool, GetsEveryBufferOnceThenRunsDry)
{
	struct wharf_buf_pool *pool = MakePool(100, 16);
	ASSERT_NE(nullptr, pool);
	EXPECT_EQ(128u, wharf_buf_pool_stride(pool));
	EXPECT_EQ(16u, wharf_buf_pool_count(pool));
	EXPECT_EQ(nullptr, wharf_buf_pool_mr(pool));
	EXPECT_EQ(0u, wharf_buf_pool_lkey(pool));

	std::set<void *> seen;
	for (uint32_t i = 0; i < 16; i++) {
		void *b = wharf_buf_pool_get(pool);
		ASSERT_NE(nullptr, b);
		// First gets come in address order.
		EXPECT_EQ(wharf_buf_pool_buf(pool, i), b);
		EXPECT_EQ((int64_t)i, wharf_buf_pool_index(pool, b));
		EXPECT_EQ(0u, (uintptr_t)b % 64);
		memset(b, (int)i, 100); // whole buffer is usable
		seen.insert(b);
	}
	EXPECT_EQ(16u, seen.size());
	EXPECT_EQ(0u, wharf_buf_pool_free_count(pool));
	EXPECT_EQ(nullptr, wharf_buf_pool_get(pool));

	for (void *b : seen)
		EXPECT_EQ(0, wharf_buf_pool_put(pool, b));
	EXPECT_EQ(16u, wharf_buf_pool_free_count(pool));
	wharf_buf_pool_destroy(pool);
}

TEST(BufPool, LastPutFirstOut)
{
	struct wharf_buf_pool *pool = MakePool(64, 4);
	ASSERT_NE(nullptr, pool);
	void *a = wharf_buf_pool_get(pool);
	void *b = wharf_buf_pool_get(pool);
	EXPECT_EQ(0, wharf_buf_pool_put(pool, a));
	EXPECT_EQ(0, wharf_buf_pool_put(pool, b));
	EXPECT_EQ(b, wharf_buf_pool_get(pool));
	EXPECT_EQ(a, wharf_buf_pool_get(pool));
	wharf_buf_pool_destroy(pool);
}

TEST(BufPool, RejectsForeignMisalignedAndDoublePuts)
{
	struct wharf_buf_pool *pool = MakePool(64, 4);
	ASSERT_NE(nullptr, pool);
	char *b = static_cast<char *>(wharf_buf_pool_get(pool));
	ASSERT_NE(nullptr, b);
	int local;
	EXPECT_EQ(-EINVAL, wharf_buf_pool_put(pool, &local));
	EXPECT_EQ(-EINVAL, wharf_buf_pool_put(pool, b + 1));
	EXPECT_EQ(-EINVAL, wharf_buf_pool_put(pool, b + 4 * 64));
	EXPECT_EQ(-EINVAL, wharf_buf_pool_index(pool, b - 64));
	EXPECT_EQ(nullptr, wharf_buf_pool_buf(pool, 4));
	EXPECT_EQ(3u, wharf_buf_pool_free_count(pool));

	EXPECT_EQ(0, wharf_buf_pool_put(pool, b));
	EXPECT_EQ(-EALREADY, wharf_buf_pool_put(pool, b));
	// A buffer never handed out is free already.
	EXPECT_EQ(-EALREADY,
		  wharf_buf_pool_put(pool, wharf_buf_pool_buf(pool, 3)));
	EXPECT_EQ(4u, wharf_buf_pool_free_count(pool));
	wharf_buf_pool_destroy(pool);
}

TEST(BufPool, RandomChurnKeepsBookkeepingConsistent)
{
	constexpr uint32_t kCount = 257;
	struct wharf_buf_pool *pool = MakePool(1, kCount);
	ASSERT_NE(nullptr, pool);
	std::vector<void *> out;
	uint64_t rng = 88172645463325252ull;
	for (int step = 0; step < 20000; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		if (rng % 3 && out.size() < kCount) {
			void *b = wharf_buf_pool_get(pool);
			ASSERT_NE(nullptr, b);
			// Owned buffers never come back twice.
			for (void *o : out)
				ASSERT_NE(o, b);
			out.push_back(b);
		} else if (!out.empty()) {
			size_t k = rng % out.size();
			ASSERT_EQ(0, wharf_buf_pool_put(pool, out[k]));
			out[k] = out.back();
			out.pop_back();
		}
		ASSERT_EQ(kCount - out.size(), wharf_buf_pool_free_count(pool));
	}
	wharf_buf_pool_destroy(pool);
}

TEST(BufPool, LivesInAnArena)
{
	struct wharf_numa *numa;
	struct wharf_numa_arena *arena;
	ASSERT_EQ(0, wharf_numa_open(nullptr, &numa));
	ASSERT_EQ(0, wharf_numa_arena_create(numa, 0, &arena));
	struct wharf_buf_pool *pool = MakePool(2048, 32, arena);
	ASSERT_NE(nullptr, pool);
	EXPECT_GT(wharf_numa_arena_live(arena), 0u);
	void *b = wharf_buf_pool_get(pool);
	ASSERT_NE(nullptr, b);
	EXPECT_EQ(0u, (uintptr_t)wharf_buf_pool_buf(pool, 0) % 4096);
	memset(b, 1, 2048);
	wharf_buf_pool_destroy(pool);
	EXPECT_EQ(0u, wharf_numa_arena_live(arena));
	wharf_numa_arena_destroy(arena);
	wharf_numa_close(numa);
}

TEST(BufPool, BadOptions)
{
	struct wharf_buf_pool *pool = nullptr;
	struct wharf_buf_pool_opts opts = {};
	opts.size = sizeof(opts);
	opts.buf_size = 64;
	EXPECT_EQ(-EINVAL, wharf_buf_pool_create(&opts, &pool)); // count 0
	opts.count = 1;
	opts.buf_size = 0;
	EXPECT_EQ(-EINVAL, wharf_buf_pool_create(&opts, &pool));
	opts.buf_size = SIZE_MAX / 4;
	opts.count = 8;
	EXPECT_EQ(-EINVAL, wharf_buf_pool_create(&opts, &pool)); // overflow
	EXPECT_EQ(-EINVAL, wharf_buf_pool_create(nullptr, &pool));
	EXPECT_EQ(nullptr, pool);
	wharf_buf_pool_destroy(nullptr);
}

} // namespace
