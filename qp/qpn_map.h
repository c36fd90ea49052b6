/*
 * qp/qpn_map.h - shard-local map from QP number to wharf_qp (internal).
 *
 * Every QP on a shard's CQ belongs to that shard, so the completion path
 * finds the owner of wc.qp_num here: open addressing with linear probing
 * over a power-of-two table, at most half full, deletion by backward shift
 * (no tombstones).  No lock, no atomics, no RCU read-side section: only the
 * owning shard touches it.  The global RCU table of the cm layer
 * (cm/conn_table.h) stays the way to find a connection from another thread.
 *
 * Measured with bench/qp_demux (random lookups, host, -c opt): 12 / 16 /
 * 15 ns per lookup for 64 / 1024 / 16384 QPs here, against 28 / 36 / 81 ns
 * in cm's lock-free RCU table under urcu_qsbr_read_lock().
 */
#ifndef WHARF_QP_QPN_MAP_H
#define WHARF_QP_QPN_MAP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wharf_numa_arena;

struct wqp_qpn_slot {
	uint32_t qpn;
	void *val; /* NULL: empty */
};

struct wqp_qpn_map {
	struct wqp_qpn_slot *slots;
	uint32_t mask; /* capacity - 1 */
	uint32_t count;
	struct wharf_numa_arena *arena; /* NULL: libc allocator */
};

/**
 * wqp_qpn_map_init() - an empty map with room for @hint entries.
 * @arena: where the table lives, or NULL.
 * Return: 0; -ENOMEM.
 * Context: the owning thread.
 */
int wqp_qpn_map_init(struct wqp_qpn_map *m, uint32_t hint,
		     struct wharf_numa_arena *arena);

/** wqp_qpn_map_fini() - free the table (not the values). */
void wqp_qpn_map_fini(struct wqp_qpn_map *m);

/**
 * wqp_qpn_map_insert() - map @qpn to @val (non-NULL).
 * Return: 0; -EEXIST when @qpn is mapped; -EINVAL for NULL @val; -ENOMEM
 * when the table had to grow and could not.
 */
int wqp_qpn_map_insert(struct wqp_qpn_map *m, uint32_t qpn, void *val);

/** wqp_qpn_map_find() - the value of @qpn, or NULL. */
void *wqp_qpn_map_find(const struct wqp_qpn_map *m, uint32_t qpn);

/**
 * wqp_qpn_map_remove() - unmap @qpn.
 * Return: the value it had, or NULL when it was not mapped.
 */
void *wqp_qpn_map_remove(struct wqp_qpn_map *m, uint32_t qpn);

#ifdef __cplusplus
}
#endif

#endif
