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
	std::vector<struct wcore_heap_node> nodes(kNodes);
	for (auto &n : nodes)
		wcore_heap_node_init(&n);
	struct wcore_heap heap;
	wcore_heap_init(&heap);
	// (deadline, seq) -> node index
	std::set<std::pair<std::pair<uint64_t, uint64_t>, int>> model;

	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (int step = 0; step < 50000; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		int k = (int)(rng % kNodes);
		struct wcore_heap_node *n = &nodes[k];
		switch (rng >> 40 & 3) {
		case 0:
		case 1: // (re)insert with a small key range: many ties
			if (wcore_heap_node_queued(n)) {
				model.erase({{n->deadline, n->seq}, k});
				wcore_heap_remove(&heap, n);
			}
			ASSERT_EQ(0,
				  wcore_heap_insert(&heap, n, rng >> 20 & 63));
			model.insert({{n->deadline, n->seq}, k});
			break;
		case 2: // cancel
			if (wcore_heap_node_queued(n)) {
				model.erase({{n->deadline, n->seq}, k});
				wcore_heap_remove(&heap, n);
			}
			break;
		case 3: // pop the minimum
			if (model.empty()) {
				ASSERT_EQ(nullptr, wcore_heap_min(&heap));
				break;
			}
			struct wcore_heap_node *min = wcore_heap_min(&heap);
			ASSERT_EQ(&nodes[model.begin()->second], min);
			wcore_heap_remove(&heap, min);
			EXPECT_FALSE(wcore_heap_node_queued(min));
			model.erase(model.begin());
			break;
		}
		ASSERT_EQ(model.size(), heap.len);
	}
	// Drain: strictly by (deadline, insertion order).
	while (!model.empty()) {
		ASSERT_EQ(&nodes[model.begin()->second], wcore_heap_min(&heap));
		wcore_heap_remove(&heap, wcore_heap_min(&heap));
		model.erase(model.begin());
	}
	EXPECT_EQ(nullptr, wcore_heap_min(&heap));
	wcore_heap_fini(&heap);
}

TEST(TimerHeap, EqualDeadlinesKeepInsertionOrder)
{
	struct wcore_heap_node n[8];
	struct wcore_heap heap;
	wcore_heap_init(&heap);
	for (auto &x : n) {
		wcore_heap_node_init(&x);
		ASSERT_EQ(0, wcore_heap_insert(&heap, &x, 7));
	}
	for (auto &x : n) {
		ASSERT_EQ(&x, wcore_heap_min(&heap));
		wcore_heap_remove(&heap, &x);
	}
	wcore_heap_fini(&heap);
}

TEST(TimerHeap, FiniDetachesQueuedNodes)
{
	struct wcore_heap_node a, b;
	struct wcore_heap heap;
	wcore_heap_init(&heap);
	wcore_heap_node_init(&a);
	wcore_heap_node_init(&b);
	ASSERT_EQ(0, wcore_heap_insert(&heap, &a, 2));
	ASSERT_EQ(0, wcore_heap_insert(&heap, &b, 1));
	wcore_heap_fini(&heap);
	EXPECT_FALSE(wcore_heap_node_queued(&a));
	EXPECT_FALSE(wcore_heap_node_queued(&b));
}

} // namespace
