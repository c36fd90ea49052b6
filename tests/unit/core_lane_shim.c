// Thin C wrappers over core/lane.h for core_lane_test.cc.
#include <stdlib.h>

#include "core/lane.h"
#include "tests/unit/core_lane_shim.h"

/* A shim_lane is a wcore_lane; the type only hides _Atomic from C++. */
#define L(l)  ((struct wcore_lane *)(l))
#define CL(l) ((const struct wcore_lane *)(l))

struct shim_lane *shim_lane_new(size_t depth)
{
	size_t size = (wcore_lane_size(depth) + 63) / 64 * 64;
	struct wcore_lane *lane = aligned_alloc(64, size);

	if (lane)
		wcore_lane_init(lane, depth, NULL);
	return (struct shim_lane *)lane;
}

void shim_lane_free(struct shim_lane *lane)
{
	free(lane);
}

int shim_lane_put(struct shim_lane *lane, shim_lane_fn fn, void *arg)
{
	return wcore_lane_put(L(lane), fn, arg);
}

bool shim_lane_publish(struct shim_lane *lane)
{
	return wcore_spsc_publish(&L(lane)->ring);
}

bool shim_lane_dirty(const struct shim_lane *lane)
{
	return wcore_spsc_dirty(&CL(lane)->ring);
}

void shim_lane_close(struct shim_lane *lane)
{
	wcore_spsc_close(&L(lane)->ring);
}

unsigned shim_lane_run(struct shim_lane *lane, unsigned budget)
{
	static _Thread_local _Atomic uint64_t ran;

	return wcore_lane_run(L(lane), NULL, budget, &ran);
}

bool shim_lane_pending(const struct shim_lane *lane)
{
	return wcore_spsc_pending(&CL(lane)->ring);
}

bool shim_lane_finished(const struct shim_lane *lane)
{
	return wcore_spsc_finished(&CL(lane)->ring);
}
