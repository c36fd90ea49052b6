/*
 * targets/nvmf/cidset.h - the command IDs outstanding on one submission
 * queue, to refuse a capsule that reuses a CID still in flight (Command ID
 * Conflict).
 *
 * An open-addressing hash set of 16-bit CIDs with linear probing and
 * backward-shift deletion (no tombstones), sized to at least twice the
 * queue's entries so a probe stays short. Insert, lookup and delete are
 * O(1) expected; nothing allocates after nvmf_cidset_init().
 */
#ifndef WHARF_TARGETS_NVMF_CIDSET_H
#define WHARF_TARGETS_NVMF_CIDSET_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nvmf_cidset {
	uint32_t *slot; /* CID + 1; 0 = empty */
	uint32_t mask;	/* capacity - 1 (a power of two) */
	uint32_t count; /* CIDs in the set */
	uint32_t limit; /* most CIDs the set accepts */
};

/**
 * nvmf_cidset_init() - allocate a set for a queue.
 * @s: the set to initialise.
 * @limit: the most CIDs outstanding at once (the queue's entries), 1..65536.
 *
 * Return: 0; -EINVAL if @s is NULL or @limit is out of range; -ENOMEM.
 * Context: any thread; allocates.
 */
int nvmf_cidset_init(struct nvmf_cidset *s, uint32_t limit);

/**
 * nvmf_cidset_fini() - free a set (its CIDs are forgotten).
 * @s: the set; NULL or an already finalised set is a no-op.
 *
 * Context: the owner's thread; frees memory.
 */
void nvmf_cidset_fini(struct nvmf_cidset *s);

/**
 * nvmf_cidset_add() - record a CID as outstanding.
 * @s: the set.
 * @cid: the command ID.
 *
 * Return: 0; -EEXIST if @cid is already outstanding; -ENOSPC if @limit
 * CIDs are outstanding.
 * Context: the owner's thread; non-blocking.
 */
int nvmf_cidset_add(struct nvmf_cidset *s, uint16_t cid);

/**
 * nvmf_cidset_del() - forget an outstanding CID.
 * @s: the set.
 * @cid: the command ID.
 *
 * Return: 0; -ENOENT if @cid was not outstanding.
 * Context: the owner's thread; non-blocking.
 */
int nvmf_cidset_del(struct nvmf_cidset *s, uint16_t cid);

/**
 * nvmf_cidset_has() - whether a CID is outstanding.
 * @s: the set.
 * @cid: the command ID.
 *
 * Return: true if @cid is in the set.
 * Context: the owner's thread; non-blocking.
 */
bool nvmf_cidset_has(const struct nvmf_cidset *s, uint16_t cid);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_CIDSET_H */
