/*
 * core/list.h - intrusive circular doubly-linked list (internal).
 *
 * A list is a sentinel node; an element embeds a struct wharf_list and is
 * recovered from it with wharf_list_entry().  Insertion and removal are
 * O(1) and never allocate.  An unlinked node points at itself, so
 * wharf_list_linked() tells whether an element is on some list and a second
 * wharf_list_del() is harmless.  A node must be initialized (or added to a
 * list) before it is deleted: a zeroed node is not a valid empty node.
 *
 * Context: no locking and no atomics; every list here has one owner
 * thread (a shard, or the context during creation / destruction).
 */
#ifndef WHARF_CORE_LIST_H
#define WHARF_CORE_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct wharf_list {
	struct wharf_list *prev, *next;
};

/* The element of type TYPE whose member MEMBER is NODE. */
#define wharf_list_entry(node, type, member)                                   \
	((type *)(void *)((char *)(node)-offsetof(type, member)))

/* Makes N an empty list (a sentinel) or an unlinked element. */
static inline void wharf_list_init(struct wharf_list *n)
{
	n->prev = n;
	n->next = n;
}

static inline bool wharf_list_empty(const struct wharf_list *head)
{
	return head->next == head;
}

/* True when element N is on a list. */
static inline bool wharf_list_linked(const struct wharf_list *n)
{
	return n->next != n;
}

static inline void wharf_list_insert_between(struct wharf_list *n,
					     struct wharf_list *prev,
					     struct wharf_list *next)
{
	n->prev = prev;
	n->next = next;
	prev->next = n;
	next->prev = n;
}

/* Adds N as the first element of HEAD. */
static inline void wharf_list_add_head(struct wharf_list *head,
				       struct wharf_list *n)
{
	wharf_list_insert_between(n, head, head->next);
}

/* Adds N as the last element of HEAD. */
static inline void wharf_list_add_tail(struct wharf_list *head,
				       struct wharf_list *n)
{
	wharf_list_insert_between(n, head->prev, head);
}

/* Unlinks N from its list (no-op when unlinked) and leaves it unlinked. */
static inline void wharf_list_del(struct wharf_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	wharf_list_init(n);
}

/* The first element of HEAD as a TYPE *, or NULL when empty. */
#define wharf_list_first_entry(head, type, member)                             \
	(wharf_list_empty(head)                                                \
		 ? NULL                                                        \
		 : wharf_list_entry((head)->next, type, member))

#endif /* WHARF_CORE_LIST_H */
