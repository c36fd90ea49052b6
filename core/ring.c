/* Bounded MPSC ring; the algorithm is described in ring.h. */
#include <errno.h>
#include <stdint.h>

#include "core/ring.h"

size_t wcore_ring_slots_size(size_t depth)
{
	return depth * sizeof(struct wcore_ring_slot);
}

void wcore_ring_init(struct wcore_ring *ring, void *slots, size_t depth)
{
	ring->slots = slots;
	ring->mask = depth - 1;
	ring->head = 0;
	for (size_t i = 0; i < depth; i++) {
		atomic_init(&ring->slots[i].seq, i);
		ring->slots[i].fn = NULL;
		ring->slots[i].arg = NULL;
	}
	atomic_init(&ring->tail, 0);
}

int wcore_ring_push(struct wcore_ring *ring, wcore_ring_fn fn, void *arg)
{
	size_t pos = atomic_load_explicit(&ring->tail, memory_order_relaxed);
	struct wcore_ring_slot *slot;

	for (;;) {
		slot = &ring->slots[pos & ring->mask];
		size_t seq =
			atomic_load_explicit(&slot->seq, memory_order_acquire);
		intptr_t lag = (intptr_t)(seq - pos);

		if (lag == 0) {
			/* Free for this lap: claim it. */
			/* seq_cst: part of the wake-up protocol (msg.c). */
			if (atomic_compare_exchange_weak_explicit(
				    &ring->tail, &pos, pos + 1,
				    memory_order_seq_cst, memory_order_relaxed))
				break;
		} else if (lag < 0) {
			/* Still holds last lap's message. */
			return -EAGAIN;
		} else {
			/* Another producer took it; catch up. */
			pos = atomic_load_explicit(&ring->tail,
						   memory_order_relaxed);
		}
	}
	slot->fn = fn;
	slot->arg = arg;
	atomic_store_explicit(&slot->seq, pos + 1, memory_order_release);
	return 0;
}

bool wcore_ring_ready(const struct wcore_ring *ring)
{
	const struct wcore_ring_slot *slot =
		&ring->slots[ring->head & ring->mask];

	return atomic_load_explicit(&slot->seq, memory_order_acquire) ==
	       ring->head + 1;
}

bool wcore_ring_pending(const struct wcore_ring *ring)
{
	return atomic_load_explicit(&ring->tail, memory_order_seq_cst) !=
	       ring->head;
}

bool wcore_ring_pop(struct wcore_ring *ring, wcore_ring_fn *fn, void **arg)
{
	struct wcore_ring_slot *slot = &ring->slots[ring->head & ring->mask];

	if (atomic_load_explicit(&slot->seq, memory_order_acquire) !=
	    ring->head + 1)
		return false;
	*fn = slot->fn;
	*arg = slot->arg;
	atomic_store_explicit(&slot->seq, ring->head + ring->mask + 1,
			      memory_order_release);
	ring->head++;
	return true;
}
