// Unit tests for targets/nvmf/cidset: outstanding command IDs of a queue.
// Backward-shift deletion is checked against std::set over long random
// sequences with clustered CIDs (where probe runs collide).
#include <errno.h>

#include <random>
#include <set>

#include <gtest/gtest.h>

extern "C" {
#include "targets/nvmf/cidset.h"
}

namespace
{

TEST(NvmfCidset, AddDelHas)
{
	nvmf_cidset s;
	ASSERT_EQ(0, nvmf_cidset_init(&s, 4));
	EXPECT_FALSE(nvmf_cidset_has(&s, 7));
	EXPECT_EQ(0, nvmf_cidset_add(&s, 7));
	EXPECT_TRUE(nvmf_cidset_has(&s, 7));
	EXPECT_EQ(-EEXIST, nvmf_cidset_add(&s, 7));
	EXPECT_EQ(0, nvmf_cidset_add(&s, 0));
	EXPECT_EQ(0, nvmf_cidset_add(&s, 0xFFFF));
	EXPECT_EQ(0, nvmf_cidset_add(&s, 1));
	EXPECT_EQ(-ENOSPC, nvmf_cidset_add(&s, 2)); // limit 4
	EXPECT_EQ(-EEXIST, nvmf_cidset_add(&s, 1)); // conflict reported first
	EXPECT_EQ(0, nvmf_cidset_del(&s, 7));
	EXPECT_EQ(-ENOENT, nvmf_cidset_del(&s, 7));
	EXPECT_EQ(0, nvmf_cidset_add(&s, 2));
	EXPECT_TRUE(nvmf_cidset_has(&s, 0xFFFF));
	EXPECT_TRUE(nvmf_cidset_has(&s, 0));
	nvmf_cidset_fini(&s);
	nvmf_cidset_fini(&s); // idempotent
}

TEST(NvmfCidset, InitChecksLimit)
{
	nvmf_cidset s;
	EXPECT_EQ(-EINVAL, nvmf_cidset_init(&s, 0));
	EXPECT_EQ(-EINVAL, nvmf_cidset_init(&s, 65537));
	EXPECT_EQ(-EINVAL, nvmf_cidset_init(nullptr, 4));
	ASSERT_EQ(0, nvmf_cidset_init(&s, 65536));
	for (uint32_t i = 0; i < 65536; i++)
		ASSERT_EQ(0, nvmf_cidset_add(&s, (uint16_t)i));
	for (uint32_t i = 0; i < 65536; i += 2)
		ASSERT_EQ(0, nvmf_cidset_del(&s, (uint16_t)i));
	for (uint32_t i = 0; i < 65536; i++)
		ASSERT_EQ(i % 2 == 1, nvmf_cidset_has(&s, (uint16_t)i)) << i;
	nvmf_cidset_fini(&s);
}

TEST(NvmfCidset, MatchesStdSetUnderRandomOps)
{
	for (uint32_t limit : {1u, 2u, 31u, 128u, 1000u}) {
		nvmf_cidset s;
		std::set<uint16_t> ref;
		std::mt19937 rng(limit);
		ASSERT_EQ(0, nvmf_cidset_init(&s, limit));
		for (int i = 0; i < 200000; i++) {
			// Small CID range: many collisions and long runs.
			uint16_t cid = (uint16_t)(rng() % (2 * limit + 3));
			if (rng() % 2) {
				int want = ref.count(cid)	 ? -EEXIST
					   : ref.size() >= limit ? -ENOSPC
								 : 0;
				ASSERT_EQ(want, nvmf_cidset_add(&s, cid));
				if (!want)
					ref.insert(cid);
			} else {
				int want = ref.erase(cid) ? 0 : -ENOENT;
				ASSERT_EQ(want, nvmf_cidset_del(&s, cid));
			}
			ASSERT_EQ(ref.size(), s.count);
		}
		for (uint32_t c = 0; c < 2 * limit + 3; c++)
			ASSERT_EQ(ref.count((uint16_t)c) > 0,
				  nvmf_cidset_has(&s, (uint16_t)c));
		nvmf_cidset_fini(&s);
	}
}

} // namespace
