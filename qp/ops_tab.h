/*
 * qp/ops_tab.h - the distinct callback sets of a res's QPs (internal).
 *
 * A res holds thousands of QPs, and a program gives them a few callback
 * sets (one per kind of connection).  The res keeps each distinct set
 * once and a QP names its set by a 16-bit index, instead of carrying a
 * 48-byte copy: entry 0 is the empty set, a pooled QP's.  Entries are
 * never removed; there are as many as the program has kinds of QP.  Only
 * the owning shard touches the table: no lock, no RCU.
 */
#ifndef WHARF_QP_OPS_TAB_H
#define WHARF_QP_OPS_TAB_H

#include <stdint.h>

#include "qp/qp.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wharf_numa_arena;

/* Entries a table can hold: every index fits in a uint16_t. */
#define WQP_OPS_TAB_MAX 65536u

struct wqp_ops_tab {
	struct wharf_qp_ops *v; /* [cap]; v[0] the empty set */
	uint32_t n;
	uint32_t cap;
	uint32_t max;			/* at most WQP_OPS_TAB_MAX */
	struct wharf_numa_arena *arena; /* NULL: libc allocator */
};

/**
 * wqp_ops_tab_init() - a table holding the empty set at index 0.
 * @arena: where the table lives, or NULL.
 * @max: the most sets it will hold, 2..WQP_OPS_TAB_MAX (a res: the most).
 * Return: 0; -EINVAL for @max out of range; -ENOMEM.
 * Context: the owning thread.
 */
int wqp_ops_tab_init(struct wqp_ops_tab *t, struct wharf_numa_arena *arena,
		     uint32_t max);

/** wqp_ops_tab_fini() - free the table.  Context: the owning thread. */
void wqp_ops_tab_fini(struct wqp_ops_tab *t);

/**
 * wqp_ops_tab_intern() - the index of the set with @ops's callbacks,
 * added if the table does not hold it yet.
 * @ops: a full-size set (its size field is not compared).
 * @idx: receives the index; a set without any callback is index 0.
 * Return: 0; -ENOMEM when the table had to grow and could not; -ENOSPC
 * when it holds its @max sets already.
 * Context: the owning thread.  Pointers from wqp_ops_tab_get() are valid
 * until the next intern.
 */
int wqp_ops_tab_intern(struct wqp_ops_tab *t, const struct wharf_qp_ops *ops,
		       uint16_t *idx);

/** wqp_ops_tab_get() - the set at @idx (an index intern returned). */
static inline const struct wharf_qp_ops *
wqp_ops_tab_get(const struct wqp_ops_tab *t, uint16_t idx)
{
	return &t->v[idx];
}

#ifdef __cplusplus
}
#endif

#endif
