/* C entry points to core/ring.h for C++ tests. */
#include <stdlib.h>

#include "core/ring.h"
#include "tests/unit/core_ring_shim.h"

struct shim_ring {
	struct wcore_ring ring;
};

struct shim_ring *shim_ring_new(size_t depth)
{
	struct shim_ring *r = aligned_alloc(64, sizeof(*r));
	void *slots = malloc(wcore_ring_slots_size(depth));

	if (!r || !slots) {
		free(r);
		free(slots);
		return NULL;
	}
	wcore_ring_init(&r->ring, slots, depth);
	return r;
}

void shim_ring_free(struct shim_ring *r)
{
	free(r->ring.slots);
	free(r);
}

int shim_ring_push(struct shim_ring *r, shim_ring_fn fn, void *arg)
{
	return wcore_ring_push(&r->ring, fn, arg);
}

bool shim_ring_pop(struct shim_ring *r, shim_ring_fn *fn, void **arg)
{
	return wcore_ring_pop(&r->ring, fn, arg);
}

bool shim_ring_ready(const struct shim_ring *r)
{
	return wcore_ring_ready(&r->ring);
}
