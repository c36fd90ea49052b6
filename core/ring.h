/*
 * Bounded multi-producer / single-consumer message ring (internal).
 *
 * Each slot carries a sequence number.  A producer claims position p with a
 * CAS on `tail` when slot p % depth has sequence p (free for this lap),
 * writes the message, then publishes it by storing sequence p + 1 (release).
 * The consumer takes position `head` once its sequence is head + 1, and frees
 * the slot for the next lap by storing head + depth.  Positions are claimed
 * in order, so one producer's messages are consumed in the order it pushed
 * them.  A slot still holding last lap's message means the ring is full:
 * push fails instead of waiting.  A producer stalled between claim and
 * publish holds back later messages until it publishes (never loses them).
 */
#ifndef WHARF_CORE_RING_H
#define WHARF_CORE_RING_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct wharf_shard;

/* Same type as wharf_msg_fn in <wharf/core.h>. */
typedef void (*wcore_ring_fn)(struct wharf_shard *shard, void *arg);

struct wcore_ring_slot {
	_Atomic size_t seq;
	wcore_ring_fn fn;
	void *arg;
};

/*
 * One cache line per writer: `head` changes with every message taken, so
 * the fields producers read on every push must not share its line.
 */
struct wcore_ring {
	alignas(64) struct wcore_ring_slot *slots; /* read-only after init */
	size_t mask;
	alignas(64) _Atomic size_t tail; /* producers */
	alignas(64) size_t head;	 /* consumer only */
};

/* Bytes of slot memory for @depth (a power of two >= 2). */
size_t wcore_ring_slots_size(size_t depth);

/* Sets up @ring over caller-provided @slots memory for @depth slots. */
void wcore_ring_init(struct wcore_ring *ring, void *slots, size_t depth);

/* Producer, any thread: 0, or -EAGAIN when the ring is full. */
int wcore_ring_push(struct wcore_ring *ring, wcore_ring_fn fn, void *arg);

/* Consumer: takes the oldest published message; false when none is. */
bool wcore_ring_pop(struct wcore_ring *ring, wcore_ring_fn *fn, void **arg);

/* Consumer: whether the oldest position holds a published message. */
bool wcore_ring_ready(const struct wcore_ring *ring);

/*
 * Consumer: whether any position has been claimed and not consumed, even if
 * its message is not published yet.  A seq_cst load of `tail`, which every
 * successful push updates with a seq_cst CAS: see msg.c for the wake-up
 * protocol built on that.
 */
bool wcore_ring_pending(const struct wcore_ring *ring);

#endif /* WHARF_CORE_RING_H */
