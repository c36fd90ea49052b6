/* Message lanes: a wcore_spsc whose slots are (function, argument). */
#include <string.h>

#include "core/lane.h"

size_t wcore_lane_size(size_t depth)
{
	return sizeof(struct wcore_lane) +
	       depth * sizeof(struct wcore_lane_slot);
}

void wcore_lane_init(struct wcore_lane *lane, size_t depth,
		     struct wharf_shard *to)
{
	memset(lane, 0, wcore_lane_size(depth));
	wcore_spsc_init(&lane->ring, depth);
	lane->to = to;
}

int wcore_lane_put(struct wcore_lane *lane, wcore_lane_fn fn, void *arg)
{
	long i = wcore_spsc_claim(&lane->ring);

	if (i < 0)
		return (int)i;
	lane->slots[i] = (struct wcore_lane_slot){fn, arg};
	return 0;
}

unsigned wcore_lane_run(struct wcore_lane *lane, struct wharf_shard *shard,
			unsigned budget, _Atomic uint64_t *ran)
{
	size_t avail = wcore_spsc_avail(&lane->ring);
	unsigned n = avail < budget ? (unsigned)avail : budget;

	for (unsigned i = 0; i < n; i++) {
		const struct wcore_lane_slot *slot =
			&lane->slots[wcore_spsc_slot(&lane->ring, i)];

		slot->fn(shard, slot->arg);
		/* Counted as it ends, one by one, as the ring's are. */
		atomic_store_explicit(
			ran,
			atomic_load_explicit(ran, memory_order_relaxed) + 1,
			memory_order_relaxed);
	}
	wcore_spsc_consume(&lane->ring, n);
	return n;
}
