/*
 * core/list.h - intrusive circular doubly-linked list (internal).
 *
 * A list is a sentinel node; an element embeds a struct wcore_list and is
 * recovered from it with wcore_list_entry().  Insertion and removal are
 * O(1) and never allocate.  An unlinked node points at itself, so
 * wcore_list_linked() tells whether an element is on some list and a second
 * wcore_list_del() is harmless.  A node must be initialized (or added to a
 * list) before it is deleted: a zeroed node is not a valid empty node.
 *
 * Context: no locking and no atomics; every list here has one owner
 * thread (a shard, or the context during creation / destruction).
 */
#ifndef WHARF_CORE_LIST_H
#define WHARF_CORE_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct wcore_list {
	struct wcore_list *prev, *next;
};

/* The element of type TYPE whose member MEMBER is NODE. */
#define wcore_list_entry(node, type, member)                                   \
	((type *)(void *)((char *)(node)-offsetof(type, member)))

/* Makes N an empty list (a sentinel) or an unlinked element. */
static inline void wcore_list_init(struct wcore_list *n)
{
	n->prev = n;
	n->next = n;
}

static inline bool wcore_list_empty(const struct wcore_list *head)
{
	return head->next == head;
}

/* True when element N is on a list. */
static inline bool wcore_list_linked(const struct wcore_list *n)
{
	return n->next != n;
}

static inline void wcore_list_insert_between(struct wcore_list *n,
					     struct wcore_list *prev,
					     struct wcore_list *next)
{
	n->prev = prev;
	n->next = next;
	prev->next = n;
	next->prev = n;
}

/* Adds N as the first element of HEAD. */
static inline void wcore_list_add_head(struct wcore_list *head,
				       struct wcore_list *n)
{
	wcore_list_insert_between(n, head, head->next);
}

/* Adds N as the last element of HEAD. */
static inline void wcore_list_add_tail(struct wcore_list *head,
				       struct wcore_list *n)
{
	wcore_list_insert_between(n, head->prev, head);
}

/* Unlinks N from its list (no-op when unlinked) and leaves it unlinked. */
static inline void wcore_list_del(struct wcore_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	wcore_list_init(n);
}

/* The first element of HEAD as a TYPE *, or NULL when empty. */
#define wcore_list_first_entry(head, type, member)                             \
	(wcore_list_empty(head)                                                \
		 ? NULL                                                        \
		 : wcore_list_entry((head)->next, type, member))

#endif /* WHARF_CORE_LIST_H */
