/* qp/qpn_map.c - shard-local QPN map; see qpn_map.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <wharf/numa.h>

#include "qp/qpn_map.h"

#define MAP_MIN 16u

static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

static struct wqp_qpn_slot *table_alloc(struct wharf_numa_arena *arena,
					uint32_t cap)
{
	size_t bytes = (size_t)cap * sizeof(struct wqp_qpn_slot);

	if (arena)
		return wharf_numa_alloc(arena, bytes, 0, true);
	return calloc(cap, sizeof(struct wqp_qpn_slot));
}

static void table_free(struct wharf_numa_arena *arena, void *p)
{
	if (arena)
		wharf_numa_free(arena, p);
	else
		free(p);
}

int wqp_qpn_map_init(struct wqp_qpn_map *m, uint32_t hint,
		     struct wharf_numa_arena *arena)
{
	uint32_t cap = MAP_MIN;

	while (cap < 2 * (uint64_t)hint && cap < (1u << 30))
		cap <<= 1;
	m->slots = table_alloc(arena, cap);
	if (!m->slots)
		return -ENOMEM;
	m->mask = cap - 1;
	m->count = 0;
	m->arena = arena;
	return 0;
}

void wqp_qpn_map_fini(struct wqp_qpn_map *m)
{
	if (m->slots)
		table_free(m->arena, m->slots);
	m->slots = NULL;
	m->count = 0;
}

static void put(struct wqp_qpn_slot *slots, uint32_t mask, uint32_t qpn,
		void *val)
{
	uint32_t i = hash32(qpn) & mask;

	while (slots[i].val)
		i = (i + 1) & mask;
	slots[i].qpn = qpn;
	slots[i].val = val;
}

static int grow(struct wqp_qpn_map *m)
{
	uint32_t cap = (m->mask + 1) * 2;
	struct wqp_qpn_slot *slots;

	if (cap == 0 || cap > (1u << 30))
		return -ENOMEM;
	slots = table_alloc(m->arena, cap);
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i <= m->mask; i++)
		if (m->slots[i].val)
			put(slots, cap - 1, m->slots[i].qpn, m->slots[i].val);
	table_free(m->arena, m->slots);
	m->slots = slots;
	m->mask = cap - 1;
	return 0;
}

int wqp_qpn_map_insert(struct wqp_qpn_map *m, uint32_t qpn, void *val)
{
	if (!val)
		return -EINVAL;
	if (wqp_qpn_map_find(m, qpn))
		return -EEXIST;
	if ((uint64_t)(m->count + 1) * 2 > (uint64_t)m->mask + 1) {
		int err = grow(m);

		if (err)
			return err;
	}
	put(m->slots, m->mask, qpn, val);
	m->count++;
	return 0;
}

void *wqp_qpn_map_find(const struct wqp_qpn_map *m, uint32_t qpn)
{
	uint32_t i = hash32(qpn) & m->mask;

	while (m->slots[i].val) {
		if (m->slots[i].qpn == qpn)
			return m->slots[i].val;
		i = (i + 1) & m->mask;
	}
	return NULL;
}

/* Whether home slot @h lies cyclically in (@i, @j]. */
static bool between(uint32_t i, uint32_t h, uint32_t j)
{
	return i <= j ? (i < h && h <= j) : (i < h || h <= j);
}

void *wqp_qpn_map_remove(struct wqp_qpn_map *m, uint32_t qpn)
{
	uint32_t i = hash32(qpn) & m->mask;
	void *val;

	while (m->slots[i].val && m->slots[i].qpn != qpn)
		i = (i + 1) & m->mask;
	if (!m->slots[i].val)
		return NULL;
	val = m->slots[i].val;
	m->slots[i].val = NULL;
	m->count--;
	/* Backward shift: move later entries of the cluster into the hole. */
	for (uint32_t j = (i + 1) & m->mask; m->slots[j].val;
	     j = (j + 1) & m->mask) {
		uint32_t h = hash32(m->slots[j].qpn) & m->mask;

		if (between(i, h, j))
			continue;
		m->slots[i] = m->slots[j];
		m->slots[j].val = NULL;
		i = j;
	}
	return val;
}
