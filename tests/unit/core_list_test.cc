// The intrusive list (core/list.h) against a reference model (std::deque):
// random head / tail insertions and removals from anywhere, checked in both
// directions after every step.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <vector>

extern "C" {
#include "core/list.h"
}

namespace
{

struct item {
	int id;
	struct wcore_list link;
};

std::vector<int> forward(const struct wcore_list *head)
{
	std::vector<int> ids;
	for (const struct wcore_list *n = head->next; n != head; n = n->next)
		ids.push_back(wcore_list_entry(n, struct item, link)->id);
	return ids;
}

std::vector<int> backward(const struct wcore_list *head)
{
	std::vector<int> ids;
	for (const struct wcore_list *n = head->prev; n != head; n = n->prev)
		ids.push_back(wcore_list_entry(n, struct item, link)->id);
	std::reverse(ids.begin(), ids.end());
	return ids;
}

TEST(List, EmptyListAndUnlinkedNode)
{
	struct wcore_list head;
	wcore_list_init(&head);
	EXPECT_TRUE(wcore_list_empty(&head));
	EXPECT_EQ(wcore_list_first_entry(&head, struct item, link), nullptr);

	struct item a = {7, {}};
	wcore_list_init(&a.link);
	EXPECT_FALSE(wcore_list_linked(&a.link));
	wcore_list_del(&a.link); // unlinked: harmless
	EXPECT_FALSE(wcore_list_linked(&a.link));

	wcore_list_add_tail(&head, &a.link);
	EXPECT_TRUE(wcore_list_linked(&a.link));
	EXPECT_FALSE(wcore_list_empty(&head));
	EXPECT_EQ(wcore_list_first_entry(&head, struct item, link), &a);
	wcore_list_del(&a.link);
	EXPECT_FALSE(wcore_list_linked(&a.link));
	EXPECT_TRUE(wcore_list_empty(&head));
	wcore_list_del(&a.link); // twice: still harmless, list untouched
	EXPECT_TRUE(wcore_list_empty(&head));
}

TEST(List, HeadAndTailOrder)
{
	struct wcore_list head;
	wcore_list_init(&head);
	struct item it[4] = {{0, {}}, {1, {}}, {2, {}}, {3, {}}};
	wcore_list_add_tail(&head, &it[1].link);
	wcore_list_add_tail(&head, &it[2].link);
	wcore_list_add_head(&head, &it[0].link);
	wcore_list_add_tail(&head, &it[3].link);
	EXPECT_EQ(forward(&head), (std::vector<int>{0, 1, 2, 3}));
	EXPECT_EQ(backward(&head), (std::vector<int>{0, 1, 2, 3}));
	wcore_list_del(&it[2].link); // middle
	wcore_list_del(&it[0].link); // first
	wcore_list_del(&it[3].link); // last
	EXPECT_EQ(forward(&head), (std::vector<int>{1}));
	EXPECT_EQ(wcore_list_first_entry(&head, struct item, link), &it[1]);
}

TEST(List, MatchesReferenceUnderRandomOperations)
{
	constexpr int kItems = 64;
	std::vector<struct item> items(kItems);
	for (int i = 0; i < kItems; i++) {
		items[i].id = i;
		wcore_list_init(&items[i].link);
	}
	struct wcore_list head;
	wcore_list_init(&head);
	std::deque<int> model;
	std::mt19937 rng(12345);

	for (int step = 0; step < 20000; step++) {
		int i = (int)(rng() % kItems);
		bool on =
			std::find(model.begin(), model.end(), i) != model.end();
		ASSERT_EQ(wcore_list_linked(&items[i].link), on)
			<< "step " << step;
		if (on) {
			wcore_list_del(&items[i].link);
			model.erase(std::find(model.begin(), model.end(), i));
		} else if (rng() & 1) {
			wcore_list_add_head(&head, &items[i].link);
			model.push_front(i);
		} else {
			wcore_list_add_tail(&head, &items[i].link);
			model.push_back(i);
		}
		std::vector<int> want(model.begin(), model.end());
		ASSERT_EQ(forward(&head), want) << "step " << step;
		ASSERT_EQ(backward(&head), want) << "step " << step;
		ASSERT_EQ(wcore_list_empty(&head), model.empty());
		struct item *first =
			wcore_list_first_entry(&head, struct item, link);
		ASSERT_EQ(first,
			  model.empty() ? nullptr : &items[model.front()]);
	}
}

} // namespace
