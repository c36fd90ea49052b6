/* Binary min-heap with O(log n) removal; see timer_heap.h. */
#include <errno.h>
#include <stdlib.h>

#include "core/timer_heap.h"

static bool before(const struct wcore_heap_node *a,
		   const struct wcore_heap_node *b)
{
	return a->deadline < b->deadline ||
	       (a->deadline == b->deadline && a->seq < b->seq);
}

static void place(struct wcore_heap *heap, size_t i,
		  struct wcore_heap_node *node)
{
	heap->nodes[i] = node;
	node->index = i;
}

static void sift_up(struct wcore_heap *heap, size_t i)
{
	struct wcore_heap_node *node = heap->nodes[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!before(node, heap->nodes[parent]))
			break;
		place(heap, i, heap->nodes[parent]);
		i = parent;
	}
	place(heap, i, node);
}

static void sift_down(struct wcore_heap *heap, size_t i)
{
	struct wcore_heap_node *node = heap->nodes[i];

	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= heap->len)
			break;
		if (child + 1 < heap->len &&
		    before(heap->nodes[child + 1], heap->nodes[child]))
			child++;
		if (!before(heap->nodes[child], node))
			break;
		place(heap, i, heap->nodes[child]);
		i = child;
	}
	place(heap, i, node);
}

void wcore_heap_init(struct wcore_heap *heap)
{
	heap->nodes = NULL;
	heap->len = 0;
	heap->cap = 0;
	heap->next_seq = 0;
}

void wcore_heap_fini(struct wcore_heap *heap)
{
	for (size_t i = 0; i < heap->len; i++)
		heap->nodes[i]->index = WHARF_HEAP_NONE;
	free(heap->nodes);
	wcore_heap_init(heap);
}

int wcore_heap_insert(struct wcore_heap *heap, struct wcore_heap_node *node,
		      uint64_t deadline)
{
	if (heap->len == heap->cap) {
		size_t cap = heap->cap ? heap->cap * 2 : 16;
		struct wcore_heap_node **nodes =
			realloc(heap->nodes, cap * sizeof(*nodes));

		if (!nodes)
			return -ENOMEM;
		heap->nodes = nodes;
		heap->cap = cap;
	}
	node->deadline = deadline;
	node->seq = heap->next_seq++;
	heap->nodes[heap->len] = node;
	node->index = heap->len++;
	sift_up(heap, node->index);
	return 0;
}

void wcore_heap_remove(struct wcore_heap *heap, struct wcore_heap_node *node)
{
	size_t i = node->index;
	struct wcore_heap_node *last = heap->nodes[--heap->len];

	node->index = WHARF_HEAP_NONE;
	if (last == node)
		return;
	place(heap, i, last);
	if (i > 0 && before(last, heap->nodes[(i - 1) / 2]))
		sift_up(heap, i);
	else
		sift_down(heap, i);
}
