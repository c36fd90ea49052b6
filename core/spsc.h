/*
 * The positions of a bounded single-producer / single-consumer ring with
 * batched publication (internal, header-only).  The slots are the user's:
 * an array of @mask + 1 entries indexed by position & mask.  Users: the
 * message lanes between senders and shards (lane.h) and the NVMe-oF
 * host's per-thread submission rings (nvmf_host/subq.h).
 *
 * The producer writes slots at its private `ptail` and makes them visible
 * in batches: one store of `tail` publishes every slot written since the
 * last publish.  The consumer reads published slots from its private
 * `chead` and hands them back in batches: one store of `head`.  No
 * read-modify-write is ever done: each shared word has exactly one writer
 * (tail and closed: the producer; head: the consumer), so producers of
 * different rings never contend, and the two sides of one ring touch each
 * other's line once per batch.
 *
 * Full: the producer refuses a slot when every slot is written and not yet
 * handed back (it re-reads `head` only then).  Written-but-unpublished
 * slots count, so a producer that finds its ring full must publish before
 * it waits for the consumer.
 *
 * Closing: the producer publishes, then sets `closed`; the consumer knows
 * the ring is finished once it has seen `closed` and consumed every
 * published slot.
 *
 * Publishing stores and the consumer's pending check are seq_cst: users
 * build a sleep/wake-up protocol on them (publish, then load the
 * consumer's "sleeping" word; store "sleeping", then check pending).
 * Toward a consumer that never sleeps, wcore_spsc_publish_nowake() is a
 * plain release store.
 */
#ifndef WHARF_CORE_SPSC_H
#define WHARF_CORE_SPSC_H

#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct wcore_spsc {
	/* Producer only. */
	alignas(64) size_t ptail; /* next position the producer writes */
	size_t pub;		  /* the last tail it published */
	size_t head_seen;	  /* the last head it read */

	/* Written by the producer, read by the consumer. */
	alignas(64) _Atomic size_t tail;
	_Atomic bool closed;

	/* Written by the consumer, read by the producer. */
	alignas(64) _Atomic size_t head;

	/* Consumer only. */
	alignas(64) size_t chead; /* next position the consumer reads */

	/* Set up once, then read-only. */
	alignas(64) size_t mask;
};

/* Sets up @r for @depth slots (a power of two >= 2). */
static inline void wcore_spsc_init(struct wcore_spsc *r, size_t depth)
{
	r->ptail = r->pub = r->head_seen = 0;
	atomic_init(&r->tail, 0);
	atomic_init(&r->closed, false);
	atomic_init(&r->head, 0);
	r->chead = 0;
	r->mask = depth - 1;
}

/*
 * Producer: the slot index to write the next entry to, unpublished; or
 * -EAGAIN when every slot is in use.
 */
static inline long wcore_spsc_claim(struct wcore_spsc *r)
{
	if (r->ptail - r->head_seen > r->mask) {
		/* Pairs with the consumer's release: its reads are done. */
		r->head_seen =
			atomic_load_explicit(&r->head, memory_order_acquire);
		if (r->ptail - r->head_seen > r->mask)
			return -EAGAIN;
	}
	return (long)(r->ptail++ & r->mask);
}

/* Producer: whether entries are written and not yet published. */
static inline bool wcore_spsc_dirty(const struct wcore_spsc *r)
{
	return r->ptail != r->pub;
}

static inline bool wcore_spsc_publish_as(struct wcore_spsc *r,
					 memory_order order)
{
	if (!wcore_spsc_dirty(r))
		return false;
	atomic_store_explicit(&r->tail, r->ptail, order);
	r->pub = r->ptail;
	return true;
}

/* Producer: publishes every written entry; whether there was any. */
static inline bool wcore_spsc_publish(struct wcore_spsc *r)
{
	return wcore_spsc_publish_as(r, memory_order_seq_cst);
}

/*
 * Producer: publishes with a release store only, for a consumer that
 * never sleeps: with no wake-up to decide there is no store-load order to
 * keep, and the seq_cst store (an xchg on x86) stalls the producer on the
 * line the busy consumer keeps reading.
 */
static inline bool wcore_spsc_publish_nowake(struct wcore_spsc *r)
{
	return wcore_spsc_publish_as(r, memory_order_release);
}

/* Producer: publishes, then marks the ring closed (no more entries). */
static inline void wcore_spsc_close(struct wcore_spsc *r)
{
	wcore_spsc_publish(r);
	atomic_store_explicit(&r->closed, true, memory_order_release);
}

/*
 * Consumer: published entries not yet consumed; the first is at slot
 * wcore_spsc_slot(r, 0), the next at wcore_spsc_slot(r, 1), ...
 */
static inline size_t wcore_spsc_avail(const struct wcore_spsc *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire) - r->chead;
}

/* Consumer: the slot index of the @i-th unconsumed entry. */
static inline size_t wcore_spsc_slot(const struct wcore_spsc *r, size_t i)
{
	return (r->chead + i) & r->mask;
}

/* Consumer: hands the first @n entries' slots back with one store. */
static inline void wcore_spsc_consume(struct wcore_spsc *r, size_t n)
{
	if (!n)
		return;
	r->chead += n;
	atomic_store_explicit(&r->head, r->chead, memory_order_release);
}

/* Consumer: whether a published entry is waiting (seq_cst load). */
static inline bool wcore_spsc_pending(const struct wcore_spsc *r)
{
	return atomic_load_explicit(&r->tail, memory_order_seq_cst) != r->chead;
}

/* Consumer: closed and every published entry consumed. */
static inline bool wcore_spsc_finished(const struct wcore_spsc *r)
{
	/* Acquire: the final tail was published before `closed`. */
	return atomic_load_explicit(&r->closed, memory_order_acquire) &&
	       atomic_load_explicit(&r->tail, memory_order_acquire) == r->chead;
}

#endif /* WHARF_CORE_SPSC_H */
