/*
 * Binary min-heap of intrusive nodes keyed by (deadline, arm sequence)
 * (internal).  Each node remembers its array index, so removing an
 * arbitrary node is O(log n): swap in the last node and sift it up or down.
 * Equal deadlines keep insertion order through the sequence number.
 */
#ifndef WHARF_CORE_TIMER_HEAP_H
#define WHARF_CORE_TIMER_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WHARF_HEAP_NONE SIZE_MAX

struct wcore_heap_node {
	uint64_t deadline;
	uint64_t seq;
	size_t index; /* WHARF_HEAP_NONE when not in a heap */
};

struct wcore_heap {
	struct wcore_heap_node **nodes;
	size_t len;
	size_t cap;
	uint64_t next_seq;
};

void wcore_heap_init(struct wcore_heap *heap);
void wcore_heap_fini(struct wcore_heap *heap);

static inline void wcore_heap_node_init(struct wcore_heap_node *node)
{
	node->index = WHARF_HEAP_NONE;
}

static inline bool wcore_heap_node_queued(const struct wcore_heap_node *node)
{
	return node->index != WHARF_HEAP_NONE;
}

/* Inserts @node (not queued) with @deadline: 0 or -ENOMEM. */
int wcore_heap_insert(struct wcore_heap *heap, struct wcore_heap_node *node,
		      uint64_t deadline);

/* Removes queued @node. */
void wcore_heap_remove(struct wcore_heap *heap, struct wcore_heap_node *node);

/* The earliest node, or NULL when empty. */
static inline struct wcore_heap_node *wcore_heap_min(const struct wcore_heap *h)
{
	return h->len ? h->nodes[0] : NULL;
}

#endif /* WHARF_CORE_TIMER_HEAP_H */
