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

struct wharf_heap_node {
	uint64_t deadline;
	uint64_t seq;
	size_t index; /* WHARF_HEAP_NONE when not in a heap */
};

struct wharf_heap {
	struct wharf_heap_node **nodes;
	size_t len;
	size_t cap;
	uint64_t next_seq;
};

void wharf_heap_init(struct wharf_heap *heap);
void wharf_heap_fini(struct wharf_heap *heap);

static inline void wharf_heap_node_init(struct wharf_heap_node *node)
{
	node->index = WHARF_HEAP_NONE;
}

static inline bool wharf_heap_node_queued(const struct wharf_heap_node *node)
{
	return node->index != WHARF_HEAP_NONE;
}

/* Inserts @node (not queued) with @deadline: 0 or -ENOMEM. */
int wharf_heap_insert(struct wharf_heap *heap, struct wharf_heap_node *node,
		      uint64_t deadline);

/* Removes queued @node. */
void wharf_heap_remove(struct wharf_heap *heap, struct wharf_heap_node *node);

/* The earliest node, or NULL when empty. */
static inline struct wharf_heap_node *wharf_heap_min(const struct wharf_heap *h)
{
	return h->len ? h->nodes[0] : NULL;
}

#endif /* WHARF_CORE_TIMER_HEAP_H */
