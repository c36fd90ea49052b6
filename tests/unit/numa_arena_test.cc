// NUMA arenas: allocation, binding of their pages, leak accounting.
#include <gtest/gtest.h>

#include <errno.h>
#include <linux/mempolicy.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>
#include <vector>

extern "C" {
#include <wharf/numa.h>
}

namespace
{

class ThisMachine : public ::testing::Test
{
      protected:
	void SetUp() override
	{
		ASSERT_EQ(0, wharf_numa_open(nullptr, &numa_));
		ASSERT_EQ(0, wharf_numa_arena_create(numa_, 0, &arena_));
	}
	void TearDown() override
	{
		wharf_numa_arena_destroy(arena_);
		wharf_numa_close(numa_);
	}
	struct wharf_numa *numa_ = nullptr;
	struct wharf_numa_arena *arena_ = nullptr;
};

// Memory policy of the page holding @addr: mode and first node in the mask.
void PolicyOf(void *addr, int *mode, int *node)
{
	unsigned long mask[16] = {};
	ASSERT_EQ(0, syscall(SYS_get_mempolicy, mode, mask, 16 * 64 + 1, addr,
			     MPOL_F_ADDR));
	*node = -1;
	for (int i = 0; i < 16 * 64; i++)
		if (mask[i / 64] >> (i % 64) & 1) {
			*node = i;
			break;
		}
}

TEST_F(ThisMachine, PagesAreBoundToTheNode)
{
	size_t sizes[] = {24, 4096, 1 << 20};
	for (size_t size : sizes) {
		char *p = static_cast<char *>(
			wharf_numa_alloc(arena_, size, 0, false));
		ASSERT_NE(nullptr, p);
		memset(p, 0xab, size);
		int mode, node;
		PolicyOf(p, &mode, &node);
		EXPECT_EQ(MPOL_BIND, mode) << size;
		EXPECT_EQ(wharf_numa_node_os_index(numa_, 0), node) << size;
		wharf_numa_free(arena_, p);
	}
	EXPECT_EQ(0u, wharf_numa_arena_node(arena_));
}

TEST_F(ThisMachine, AlignmentZeroingAndLiveCount)
{
	std::vector<void *> objs;
	for (size_t i = 1; i <= 100; i++) {
		size_t align = (size_t)1 << (i % 13);
		char *p = static_cast<char *>(
			wharf_numa_alloc(arena_, i * 7, align, true));
		ASSERT_NE(nullptr, p);
		EXPECT_EQ(0u, (uintptr_t)p % align);
		for (size_t b = 0; b < i * 7; b++)
			ASSERT_EQ(0, p[b]);
		memset(p, 0xff, i * 7); // dirty it for the next zero test
		objs.push_back(p);
	}
	EXPECT_EQ(100u, wharf_numa_arena_live(arena_));
	for (void *p : objs)
		wharf_numa_free(arena_, p);
	EXPECT_EQ(0u, wharf_numa_arena_live(arena_));
	wharf_numa_free(arena_, nullptr);
	EXPECT_EQ(0u, wharf_numa_arena_live(arena_));

	// Reused memory is zeroed again on request.
	for (int i = 0; i < 50; i++) {
		char *p = static_cast<char *>(
			wharf_numa_alloc(arena_, 64, 0, true));
		ASSERT_NE(nullptr, p);
		for (int b = 0; b < 64; b++)
			ASSERT_EQ(0, p[b]);
		memset(p, 0xff, 64);
		wharf_numa_free(arena_, p);
	}
}

TEST_F(ThisMachine, BadArguments)
{
	errno = 0;
	EXPECT_EQ(nullptr, wharf_numa_alloc(arena_, 0, 0, false));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(nullptr, wharf_numa_alloc(arena_, 8, 3, false));
	struct wharf_numa_arena *a = nullptr;
	EXPECT_EQ(-EINVAL, wharf_numa_arena_create(
				   numa_, wharf_numa_node_count(numa_), &a));
	EXPECT_EQ(nullptr, a);
}

TEST_F(ThisMachine, AllocateHereFreeThere)
{
	constexpr int kObjs = 2000;
	std::vector<void *> objs(kObjs);
	std::thread producer([&] {
		for (int i = 0; i < kObjs; i++) {
			objs[i] = wharf_numa_alloc(arena_, 16 + i % 300, 0,
						   false);
			ASSERT_NE(nullptr, objs[i]);
			memset(objs[i], i & 0xff, 16);
		}
	});
	producer.join();
	std::thread consumer([&] {
		for (int i = 0; i < kObjs; i++) {
			ASSERT_EQ(i & 0xff,
				  static_cast<unsigned char *>(objs[i])[15]);
			wharf_numa_free(arena_, objs[i]);
		}
	});
	consumer.join();
	EXPECT_EQ(0u, wharf_numa_arena_live(arena_));
}

TEST(NumaArena, SyntheticTopologyArenaBindsNothing)
{
	struct wharf_numa_opts opts = {};
	opts.size = sizeof(opts);
	opts.synthetic = "pack:2 numa:1 core:2 pu:1";
	struct wharf_numa *numa;
	ASSERT_EQ(0, wharf_numa_open(&opts, &numa));
	struct wharf_numa_arena *arena;
	ASSERT_EQ(0, wharf_numa_arena_create(numa, 1, &arena));
	EXPECT_EQ(1u, wharf_numa_arena_node(arena));
	void *p = wharf_numa_alloc(arena, 1 << 16, 0, true);
	ASSERT_NE(nullptr, p);
	int mode, node;
	PolicyOf(p, &mode, &node);
	EXPECT_NE(MPOL_BIND, mode);
	wharf_numa_free(arena, p);
	wharf_numa_arena_destroy(arena);
	wharf_numa_close(numa);
}

#if defined(__SANITIZE_ADDRESS__)
TEST_F(ThisMachine, AsanSeesUseAfterFree)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_DEATH(
		{
			char *p = static_cast<char *>(
				wharf_numa_alloc(arena_, 32, 0, false));
			wharf_numa_free(arena_, p);
			p[3] = 1;
		},
		"use-after-poison");
	EXPECT_DEATH(
		{
			char *p = static_cast<char *>(
				wharf_numa_alloc(arena_, 20, 0, false));
			p[24] = 1;
		},
		"use-after-poison");
}
#endif

} // namespace
