/*
 * qp/ops_tab.c - the distinct callback sets of a res's QPs (see ops_tab.h).
 *
 * The lookup is linear: it runs once per take, over as many entries as the
 * program has kinds of QP (a handful), and the data path only indexes.
 */
#include "qp/ops_tab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <wharf/numa.h>

static void *tab_alloc(struct wharf_numa_arena *arena, size_t bytes)
{
	if (arena)
		return wharf_numa_alloc(arena, bytes, 0, true);
	return calloc(1, bytes);
}

static void tab_free(struct wharf_numa_arena *arena, void *p)
{
	if (arena)
		wharf_numa_free(arena, p);
	else
		free(p);
}

static bool same_callbacks(const struct wharf_qp_ops *a,
			   const struct wharf_qp_ops *b)
{
	return a->on_recv == b->on_recv && a->on_send_done == b->on_send_done &&
	       a->on_error == b->on_error && a->on_async == b->on_async &&
	       a->on_closed == b->on_closed;
}

int wqp_ops_tab_init(struct wqp_ops_tab *t, struct wharf_numa_arena *arena,
		     uint32_t max)
{
	memset(t, 0, sizeof(*t));
	if (max < 2 || max > WQP_OPS_TAB_MAX)
		return -EINVAL;
	t->v = tab_alloc(arena, 4 * sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	t->arena = arena;
	t->cap = 4;
	t->max = max;
	t->n = 1;
	t->v[0].size = sizeof(t->v[0]);
	return 0;
}

void wqp_ops_tab_fini(struct wqp_ops_tab *t)
{
	tab_free(t->arena, t->v);
	memset(t, 0, sizeof(*t));
}

static int grow(struct wqp_ops_tab *t)
{
	uint32_t cap = t->cap * 2 < t->max ? t->cap * 2 : t->max;
	struct wharf_qp_ops *v = tab_alloc(t->arena, cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	memcpy(v, t->v, t->n * sizeof(*v));
	tab_free(t->arena, t->v);
	t->v = v;
	t->cap = cap;
	return 0;
}

int wqp_ops_tab_intern(struct wqp_ops_tab *t, const struct wharf_qp_ops *ops,
		       uint16_t *idx)
{
	uint32_t i;
	int err;

	for (i = 0; i < t->n; i++) {
		if (same_callbacks(&t->v[i], ops)) {
			*idx = (uint16_t)i;
			return 0;
		}
	}
	if (t->n == t->max)
		return -ENOSPC;
	if (t->n == t->cap) {
		err = grow(t);
		if (err)
			return err;
	}
	t->v[t->n] = *ops;
	t->v[t->n].size = sizeof(t->v[0]);
	*idx = (uint16_t)t->n;
	t->n++;
	return 0;
}
