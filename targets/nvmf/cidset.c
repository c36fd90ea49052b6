/*
 * targets/nvmf/cidset.c - outstanding command IDs of a queue (see
 * cidset.h).
 */
#include "targets/nvmf/cidset.h"

#include <errno.h>
#include <stdlib.h>

/* Fibonacci hashing spreads sequential CIDs (hosts use tags 0..n-1). */
static uint32_t home(const struct nvmf_cidset *s, uint16_t cid)
{
	return (uint32_t)((cid * 2654435769u) >> 8) & s->mask;
}

int nvmf_cidset_init(struct nvmf_cidset *s, uint32_t limit)
{
	uint32_t cap = 4;

	if (!s || limit < 1 || limit > 65536)
		return -EINVAL;
	while (cap < 2 * limit)
		cap <<= 1;
	s->slot = calloc(cap, sizeof(*s->slot));
	if (!s->slot)
		return -ENOMEM;
	s->mask = cap - 1;
	s->count = 0;
	s->limit = limit;
	return 0;
}

void nvmf_cidset_fini(struct nvmf_cidset *s)
{
	if (!s)
		return;
	free(s->slot);
	s->slot = NULL;
	s->count = 0;
}

/* The slot holding @cid, or the empty slot where it would go. */
static uint32_t probe(const struct nvmf_cidset *s, uint16_t cid)
{
	uint32_t i = home(s, cid);

	while (s->slot[i] && s->slot[i] != (uint32_t)cid + 1)
		i = (i + 1) & s->mask;
	return i;
}

bool nvmf_cidset_has(const struct nvmf_cidset *s, uint16_t cid)
{
	return s->slot[probe(s, cid)] != 0;
}

int nvmf_cidset_add(struct nvmf_cidset *s, uint16_t cid)
{
	uint32_t i = probe(s, cid);

	if (s->slot[i])
		return -EEXIST;
	if (s->count >= s->limit)
		return -ENOSPC;
	s->slot[i] = (uint32_t)cid + 1;
	s->count++;
	return 0;
}

int nvmf_cidset_del(struct nvmf_cidset *s, uint16_t cid)
{
	uint32_t i = probe(s, cid), j = i;

	if (!s->slot[i])
		return -ENOENT;
	s->slot[i] = 0;
	s->count--;
	/*
	 * Backward shift: move later members of the probe run into the hole
	 * when their home does not lie cyclically in (hole, their slot].
	 */
	for (;;) {
		uint32_t h;

		j = (j + 1) & s->mask;
		if (!s->slot[j])
			break;
		h = home(s, (uint16_t)(s->slot[j] - 1));
		if (((j - h) & s->mask) >= ((j - i) & s->mask)) {
			s->slot[i] = s->slot[j];
			s->slot[j] = 0;
			i = j;
		}
	}
	return 0;
}
