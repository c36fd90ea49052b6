/*
 * nvmf_host/subq.c - per-thread submission rings.
 *
 * A thread's first I/O call to a queue it does not own opens a ring for
 * the pair: a wcore_spsc (core/spsc.h) whose slots are checked commands
 * (struct wnh_io), announced to the owner on the queue's adopt stack (one
 * CAS per ring, ever) and kept in the thread's small cache (thread-local,
 * SUBQ_CACHE queues).  Each call then writes its command into the ring and
 * publishes it: no allocation, no message, no read-modify-write shared
 * with other threads.  The owner shard's poller for the queue adopts new
 * rings and issues what each ring holds, as if called on the shard.
 *
 * Wake-ups: before blocking, the owner's arm hook stores `subq_armed` = 1
 * and then checks every ring (and the adopt stack); a submitter publishes
 * and then loads `subq_armed`.  All seq_cst: one side sees the other.  A
 * submitter that sees it set clears it (one waker per sleep) and sends the
 * owner an empty message, whose only job is to wake it.
 *
 * Batches (wharf_nvmf_host_batch_begin/end): inside one, each call still
 * publishes its command at once (the owner, if awake, issues it and a
 * disconnect drains it), but the check for a sleeping owner waits for the
 * batch's end: one wake-up per ring per batch instead of one per call.
 * On one CPU shared with the owner that is what matters: each wake-up
 * is a context switch to an owner that then issues a single command.
 * A ring found full wakes its owner at once, since the caller can only
 * go on once the owner has drained it.
 *
 * Lifetime: a ring has two holders, the thread's cache and the queue; the
 * last to let go frees it.  The thread lets go at thread exit, when its
 * cache is full (the oldest entry), or when it finds the queue at that
 * address is a newer one (`gen`); it closes the ring first, and the owner
 * lets go of a closed ring once it has issued everything in it.  The
 * queue lets go of all of them at disconnect (wnh_subq_retire).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "core/spsc.h"
#include "nvmf_host/host_int.h"
#include "nvmf_host/subq.h"

#define SUBQ_CACHE     8   /* queues a thread keeps rings to */
#define SUBQ_MIN_DEPTH 16  /* slots, at least queue_size */
#define SUBQ_BUDGET    256 /* commands per ring per poll */

struct wnh_subq {
	struct wcore_spsc ring;
	struct wnh_subq *next; /* the queue's adopt stack, then its list */
	atomic_uint refs;      /* the thread's cache and the queue */
	struct wnh_io ios[];
};

static void subq_put(struct wnh_subq *sq)
{
	if (atomic_fetch_sub_explicit(&sq->refs, 1, memory_order_acq_rel) == 1)
		free(sq);
}

/* ---- the submitting thread ---------------------------------------------- */

struct subq_entry {
	struct wharf_nvmf_host_queue *q; /* NULL: free */
	uint64_t gen;
	struct wnh_subq *sq;
	bool wake_due; /* published in a batch; the owner not checked yet */
};

static _Thread_local struct subq_entry cache[SUBQ_CACHE];
static _Thread_local unsigned cache_next;  /* the entry to evict next */
static _Thread_local unsigned batch_depth; /* open batches */
static _Thread_local bool cache_registered;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t gen_next = 1;

static void wake_owner(struct wharf_nvmf_host_queue *q);

static void entry_drop(struct subq_entry *e)
{
	if (!e->q)
		return;
	/* Only inside a batch, whose queues are valid until it ends. */
	if (e->wake_due)
		wake_owner(e->q);
	wcore_spsc_close(&e->sq->ring);
	subq_put(e->sq);
	*e = (struct subq_entry){0};
}

static void cache_exit(void *unused)
{
	(void)unused;
	for (unsigned i = 0; i < SUBQ_CACHE; i++)
		entry_drop(&cache[i]);
}

static void cache_key_create(void)
{
	pthread_key_create(&cache_key, cache_exit);
}

uint64_t wnh_subq_gen(void)
{
	return atomic_fetch_add(&gen_next, 1);
}

static struct wnh_subq *subq_open(struct wharf_nvmf_host_queue *q)
{
	size_t depth = SUBQ_MIN_DEPTH, size;
	struct wnh_subq *sq, *top;

	while (depth < q->entries)
		depth *= 2;
	size = sizeof(*sq) + depth * sizeof(sq->ios[0]);
	sq = aligned_alloc(64, (size + 63) / 64 * 64);
	if (!sq)
		return NULL;
	memset(sq, 0, size);
	wcore_spsc_init(&sq->ring, depth);
	atomic_init(&sq->refs, 2);
	top = atomic_load_explicit(&q->subq_adopt, memory_order_relaxed);
	do {
		sq->next = top;
		/* seq_cst: part of the wake-up protocol (above). */
	} while (!atomic_compare_exchange_weak_explicit(
		&q->subq_adopt, &top, sq, memory_order_seq_cst,
		memory_order_relaxed));
	return sq;
}

/* The calling thread's entry for its ring to @q, the ring opened if need
 * be; NULL: no memory. */
static struct subq_entry *subq_of(struct wharf_nvmf_host_queue *q)
{
	struct subq_entry *slot = NULL;

	for (unsigned i = 0; i < SUBQ_CACHE; i++) {
		struct subq_entry *e = &cache[i];

		if (e->q == q && e->gen == q->gen)
			return e;
		if (e->q == q || (!e->q && !slot))
			slot = e; /* an older queue at this address, or free */
	}
	if (!cache_registered) {
		pthread_once(&cache_once, cache_key_create);
		pthread_setspecific(cache_key, cache);
		cache_registered = true;
	}
	if (!slot) {
		slot = &cache[cache_next];
		cache_next = (cache_next + 1) % SUBQ_CACHE;
	}
	entry_drop(slot);
	slot->sq = subq_open(q);
	if (!slot->sq)
		return NULL;
	slot->q = q;
	slot->gen = q->gen;
	return slot;
}

static void kick(struct wharf_shard *shard, void *arg)
{
	(void)shard; /* the wake-up was the point */
	(void)arg;
}

/* After a publish: wake @q's owner if it may be asleep. */
static void wake_owner(struct wharf_nvmf_host_queue *q)
{
	if (atomic_load_explicit(&q->subq_armed, memory_order_seq_cst) &&
	    atomic_exchange_explicit(&q->subq_armed, 0, memory_order_relaxed)) {
		int rc;

		/* The owner may sleep until this arrives: insist (a full
		 * queue, a lane not allocated yet); -ESHUTDOWN: the context
		 * is going, nothing to wake. */
		while ((rc = wharf_shard_send(q->shard, kick, NULL)) ==
			       -EAGAIN ||
		       rc == -ENOMEM)
			sched_yield();
		/* From another shard's callback: publish it now. */
		wharf_shard_flush();
	}
}

int wnh_subq_submit(const struct wnh_io *io)
{
	struct wharf_nvmf_host_queue *q = io->q;
	struct subq_entry *e = subq_of(q);
	long i;

	if (!e)
		return -ENOMEM;
	i = wcore_spsc_claim(&e->sq->ring);
	if (i < 0) {
		/* Full: the owner must drain before the caller can go on. */
		if (e->wake_due) {
			e->wake_due = false;
			wake_owner(q);
		}
		return (int)i;
	}
	e->sq->ios[i] = *io;
	wcore_spsc_publish(&e->sq->ring);
	if (batch_depth)
		e->wake_due = true;
	else
		wake_owner(q);
	return 0;
}

void wharf_nvmf_host_batch_begin(void)
{
	batch_depth++;
}

int wharf_nvmf_host_batch_end(void)
{
	if (!batch_depth)
		return -EINVAL;
	if (--batch_depth)
		return 0;
	for (unsigned i = 0; i < SUBQ_CACHE; i++) {
		struct subq_entry *e = &cache[i];

		if (e->wake_due) {
			e->wake_due = false;
			wake_owner(e->q);
		}
	}
	return 0;
}

/* ---- the owner shard ------------------------------------------------------ */

static void adopt(struct wharf_nvmf_host_queue *q)
{
	struct wnh_subq *sq, *next;

	if (!atomic_load_explicit(&q->subq_adopt, memory_order_relaxed))
		return;
	sq = atomic_exchange_explicit(&q->subq_adopt, NULL,
				      memory_order_acquire);
	for (; sq; sq = next) {
		next = sq->next;
		sq->next = q->subqs;
		q->subqs = sq;
	}
}

/* Issues up to @budget commands from each ring; lets go of finished ones. */
static unsigned drain(struct wharf_nvmf_host_queue *q, size_t budget)
{
	struct wnh_subq **pp = &q->subqs, *sq;
	unsigned n = 0;

	while ((sq = *pp)) {
		size_t avail = wcore_spsc_avail(&sq->ring);

		if (avail > budget)
			avail = budget;
		for (size_t k = 0; k < avail; k++) {
			const struct wnh_io *io =
				&sq->ios[wcore_spsc_slot(&sq->ring, k)];
			int rc = wnh_io_issue(io);

			if (rc)
				io->cb(rc, 0, io->arg);
		}
		wcore_spsc_consume(&sq->ring, avail);
		n += (unsigned)avail;
		if (wcore_spsc_finished(&sq->ring)) {
			*pp = sq->next;
			subq_put(sq);
			continue;
		}
		pp = &sq->next;
	}
	return n;
}

static int subq_poll(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	unsigned n;

	(void)shard;
	adopt(q);
	n = drain(q, SUBQ_BUDGET);
	/* Awake: submitters need not wake it (written only after a sleep). */
	if (atomic_load_explicit(&q->subq_armed, memory_order_relaxed))
		atomic_store_explicit(&q->subq_armed, 0, memory_order_relaxed);
	return (int)n;
}

static int subq_arm(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;

	(void)shard;
	atomic_store_explicit(&q->subq_armed, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&q->subq_adopt, memory_order_seq_cst))
		return 1;
	for (struct wnh_subq *sq = q->subqs; sq; sq = sq->next)
		if (wcore_spsc_pending(&sq->ring))
			return 1;
	return 0;
}

int wnh_subq_start(struct wharf_nvmf_host_queue *q)
{
	if (q->subq_poller)
		return 0;
	return wharf_shard_poller_add(q->shard, subq_poll, subq_arm, q,
				      &q->subq_poller);
}

void wnh_subq_retire(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;
	struct wnh_subq *sq;

	(void)shard;
	adopt(q);
	while (drain(q, SIZE_MAX))
		;
	while ((sq = q->subqs)) {
		q->subqs = sq->next;
		subq_put(sq);
	}
	if (q->subq_poller)
		wharf_poller_remove(q->subq_poller);
	q->subq_poller = NULL;
	wnh_call_done(q->h);
}
