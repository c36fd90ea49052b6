/* The shard-local QPN map (qp/qpn_map.h), against std::unordered_map. */
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

extern "C" {
#include "qp/qpn_map.h"
}

namespace
{

void *val(uint32_t k)
{
	return (void *)(uintptr_t)(((uint64_t)k << 4) | 8);
}

} // namespace

TEST(QpQpnMap, InsertFindRemove)
{
	wqp_qpn_map m;
	ASSERT_EQ(wqp_qpn_map_init(&m, 4, nullptr), 0);
	EXPECT_EQ(wqp_qpn_map_find(&m, 17), nullptr);
	EXPECT_EQ(wqp_qpn_map_insert(&m, 17, val(17)), 0);
	EXPECT_EQ(wqp_qpn_map_insert(&m, 17, val(18)), -EEXIST);
	EXPECT_EQ(wqp_qpn_map_insert(&m, 18, nullptr), -EINVAL);
	EXPECT_EQ(wqp_qpn_map_find(&m, 17), val(17));
	EXPECT_EQ(wqp_qpn_map_remove(&m, 17), val(17));
	EXPECT_EQ(wqp_qpn_map_remove(&m, 17), nullptr);
	EXPECT_EQ(m.count, 0u);
	wqp_qpn_map_fini(&m);
}

TEST(QpQpnMap, RandomOpsMatchReference)
{
	wqp_qpn_map m;
	std::unordered_map<uint32_t, void *> ref;
	std::mt19937 rng(12345);
	ASSERT_EQ(wqp_qpn_map_init(&m, 0, nullptr), 0);
	for (int i = 0; i < 200000; i++) {
		/* Small key space: many collisions, clusters, removals. */
		uint32_t k = rng() % 3000;
		int op = rng() % 3;
		if (op == 0) {
			int want = ref.count(k) ? -EEXIST : 0;
			ASSERT_EQ(wqp_qpn_map_insert(&m, k, val(k)), want);
			ref.emplace(k, val(k));
		} else if (op == 1) {
			void *want = ref.count(k) ? ref[k] : nullptr;
			ASSERT_EQ(wqp_qpn_map_remove(&m, k), want) << i;
			ref.erase(k);
		} else {
			void *want = ref.count(k) ? ref[k] : nullptr;
			ASSERT_EQ(wqp_qpn_map_find(&m, k), want) << i;
		}
		ASSERT_EQ(m.count, ref.size());
	}
	for (auto &kv : ref)
		EXPECT_EQ(wqp_qpn_map_find(&m, kv.first), kv.second);
	/* At most half full. */
	EXPECT_LE(2 * (uint64_t)m.count, (uint64_t)m.mask + 1);
	wqp_qpn_map_fini(&m);
}

TEST(QpQpnMap, Grows)
{
	wqp_qpn_map m;
	ASSERT_EQ(wqp_qpn_map_init(&m, 1, nullptr), 0);
	for (uint32_t k = 1; k <= 5000; k++)
		ASSERT_EQ(wqp_qpn_map_insert(&m, k * 7919u & 0xffffff, val(k)),
			  0);
	for (uint32_t k = 1; k <= 5000; k++)
		ASSERT_EQ(wqp_qpn_map_find(&m, k * 7919u & 0xffffff), val(k));
	wqp_qpn_map_fini(&m);
}
