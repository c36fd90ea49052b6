// The timer heap against a reference model (std::set), with removals.
#include <gtest/gtest.h>

#include <stdint.h>

#include <set>
#include <utility>
#include <vector>

extern "C" {
#include "core/timer_heap.h"
}

namespace
{

TEST(TimerHeap, MatchesReferenceUnderRandomOperations)
{
	constexpr int kNodes = 500;
	std::vector<struct wharf_heap_node> nodes(kNodes);
	for (auto &n : nodes)
		wharf_heap_node_init(&n);
	struct wharf_heap heap;
	wharf_heap_init(&heap);
	// (deadline, seq) -> node index
	std::set<std::pair<std::pair<uint64_t, uint64_t>, int>> model;

	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (int step = 0; step < 50000; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		int k = (int)(rng % kNodes);
		struct wharf_heap_node *n = &nodes[k];
		switch (rng >> 40 & 3) {
		case 0:
		case 1: // (re)insert with a small key range: many ties
			if (wharf_heap_node_queued(n)) {
				model.erase({{n->deadline, n->seq}, k});
				wharf_heap_remove(&heap, n);
			}
			ASSERT_EQ(0,
				  wharf_heap_insert(&heap, n, rng >> 20 & 63));
			model.insert({{n->deadline, n->seq}, k});
			break;
		case 2: // cancel
			if (wharf_heap_node_queued(n)) {
				model.erase({{n->deadline, n->seq}, k});
				wharf_heap_remove(&heap, n);
			}
			break;
		case 3: // pop the minimum
			if (model.empty()) {
				ASSERT_EQ(nullptr, wharf_heap_min(&heap));
				break;
			}
			struct wharf_heap_node *min = wharf_heap_min(&heap);
			ASSERT_EQ(&nodes[model.begin()->second], min);
			wharf_heap_remove(&heap, min);
			EXPECT_FALSE(wharf_heap_node_queued(min));
			model.erase(model.begin());
			break;
		}
		ASSERT_EQ(model.size(), heap.len);
	}
	// Drain: strictly by (deadline, insertion order).
	while (!model.empty()) {
		ASSERT_EQ(&nodes[model.begin()->second], wharf_heap_min(&heap));
		wharf_heap_remove(&heap, wharf_heap_min(&heap));
		model.erase(model.begin());
	}
	EXPECT_EQ(nullptr, wharf_heap_min(&heap));
	wharf_heap_fini(&heap);
}

TEST(TimerHeap, EqualDeadlinesKeepInsertionOrder)
{
	struct wharf_heap_node n[8];
	struct wharf_heap heap;
	wharf_heap_init(&heap);
	for (auto &x : n) {
		wharf_heap_node_init(&x);
		ASSERT_EQ(0, wharf_heap_insert(&heap, &x, 7));
	}
	for (auto &x : n) {
		ASSERT_EQ(&x, wharf_heap_min(&heap));
		wharf_heap_remove(&heap, &x);
	}
	wharf_heap_fini(&heap);
}

TEST(TimerHeap, FiniDetachesQueuedNodes)
{
	struct wharf_heap_node a, b;
	struct wharf_heap heap;
	wharf_heap_init(&heap);
	wharf_heap_node_init(&a);
	wharf_heap_node_init(&b);
	ASSERT_EQ(0, wharf_heap_insert(&heap, &a, 2));
	ASSERT_EQ(0, wharf_heap_insert(&heap, &b, 1));
	wharf_heap_fini(&heap);
	EXPECT_FALSE(wharf_heap_node_queued(&a));
	EXPECT_FALSE(wharf_heap_node_queued(&b));
}

} // namespace
