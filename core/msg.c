/*
 * Cross-shard messages.
 *
 * Paths.  A shard callback sending to a shard of its own (threaded)
 * context, and an application thread sending through a wharf_sender,
 * write to a lane of
 * their own (lane.h, spsc.h): one single-producer ring per (sender,
 * receiver) pair, opened on the first message and announced to the
 * receiver through its adopt stack (one CAS per lane, ever).  Everything
 * else (application threads without a sender, shards of another context,
 * app-driven shards: their thread may also send as itself) shares the
 * receiver's bounded MPSC ring (ring.h), one CAS on its tail per message.
 *
 * Batches.  A shard's lane messages are published when its loop iteration
 * ends (wcore_outbox_flush: one store per lane written, however many
 * messages), before the shard blocks, and when a lane is full; a
 * wharf_sender's at every send without WHARF_SEND_MORE.  The receiver runs
 * every source in turn and hands each lane's slots back with one store.
 * So the per-message path of a lane has no read-modify-write shared with
 * another sender: the sender's only shared writes are its own lane's tail
 * (once per batch) and, when the receiver sleeps, the wake-up below.
 *
 * Wake-ups cost a syscall, so senders only write the eventfd when the owner
 * may be blocked.  Before blocking, the owner stores `sleeping` = 1 and then
 * loads the MPSC ring's `tail`, its adopt stack and every lane's `tail`; a
 * sender makes its message visible with a seq_cst write (the ring's CAS,
 * the adopt CAS, the lane's publishing store) and then loads `sleeping`.
 * All are seq_cst, so they fall in one total order and at least one side
 * sees the other (the store-buffering outcome is forbidden): either the
 * owner sees the message and stays awake, or the sender sees `sleeping`,
 * clears it (one waker per sleep) and writes the eventfd.  At most one
 * wake-up per batch; none while the receiver is awake.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/shard.h"

void wcore_shard_kick(struct wharf_shard *shard)
{
	uint64_t one = 1;

	/* Only fails with EAGAIN when the counter would overflow: fine. */
	if (write(shard->evfd, &one, sizeof(one)) < 0)
		return;
}

/* After a seq_cst publish: wakes @shard if it may be blocked. */
static void shard_wake(struct wharf_shard *shard)
{
	if (atomic_load_explicit(&shard->sleeping, memory_order_seq_cst) &&
	    atomic_exchange_explicit(&shard->sleeping, 0,
				     memory_order_relaxed)) {
		atomic_fetch_add_explicit(&shard->wakeups, 1,
					  memory_order_relaxed);
		wcore_shard_kick(shard);
	}
}

/* Makes @lane's written entries visible to its receiver, and wakes the
 * receiver if it may be asleep. */
static void lane_publish(struct wcore_lane *lane)
{
	struct wharf_shard *to = lane->to;

	if (to->never_sleeps)
		wcore_spsc_publish_nowake(&lane->ring);
	else if (wcore_spsc_publish(&lane->ring))
		shard_wake(to);
}

static void count_full(struct wharf_shard *shard)
{
	atomic_fetch_add_explicit(&shard->send_full, 1, memory_order_relaxed);
}

/* ---- senders: outboxes -------------------------------------------------- */

int wcore_outbox_init(struct wcore_outbox *ob, unsigned nshards)
{
	ob->lanes = calloc(nshards, sizeof(*ob->lanes));
	ob->dirty = calloc(nshards, sizeof(*ob->dirty));
	ob->ndirty = 0;
	if (!ob->lanes || !ob->dirty) {
		free(ob->lanes);
		free(ob->dirty);
		ob->lanes = ob->dirty = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Opens the lane from @ob to @to and announces it to @to. */
static struct wcore_lane *lane_open(struct wcore_outbox *ob,
				    struct wharf_shard *to)
{
	size_t depth = to->ctx->opts.lane_depth;
	struct wcore_lane *lane, *top;

	lane = wharf_numa_alloc(to->arena, wcore_lane_size(depth), 64, false);
	if (!lane)
		return NULL;
	wcore_lane_init(lane, depth, to);
	top = atomic_load_explicit(&to->adopt, memory_order_relaxed);
	do {
		lane->next = top;
		/* seq_cst: part of the wake-up protocol (above). */
	} while (!atomic_compare_exchange_weak_explicit(&to->adopt, &top, lane,
							memory_order_seq_cst,
							memory_order_relaxed));
	ob->lanes[to->index] = lane;
	return lane;
}

int wcore_outbox_put(struct wcore_outbox *ob, struct wharf_shard *to,
		     wharf_msg_fn fn, void *arg)
{
	struct wcore_lane *lane = ob->lanes[to->index];
	int err;

	if (!lane) {
		lane = lane_open(ob, to);
		if (!lane)
			return -ENOMEM;
	}
	err = wcore_lane_put(lane, fn, arg);
	if (err) {
		/*
		 * Unpublished messages hold slots too: make them visible
		 * before the sender retries, or it would wait for itself.
		 */
		lane_publish(lane);
		count_full(to);
		return err;
	}
	if (!lane->listed) {
		lane->listed = true;
		ob->dirty[ob->ndirty++] = lane;
	}
	return 0;
}

void wcore_outbox_flush(struct wcore_outbox *ob)
{
	for (unsigned i = 0; i < ob->ndirty; i++) {
		struct wcore_lane *lane = ob->dirty[i];

		lane->listed = false;
		lane_publish(lane);
	}
	ob->ndirty = 0;
}

void wcore_outbox_close(struct wcore_outbox *ob, unsigned nshards)
{
	if (!ob->lanes)
		return;
	wcore_outbox_flush(ob);
	for (unsigned i = 0; i < nshards; i++) {
		struct wcore_lane *lane = ob->lanes[i];
		struct wharf_shard *to;

		if (!lane)
			continue;
		/* The receiver may free the lane once it is closed. */
		to = lane->to;
		wcore_spsc_close(&lane->ring);
		shard_wake(to);
	}
	free(ob->lanes);
	free(ob->dirty);
	ob->lanes = ob->dirty = NULL;
}

int wharf_shard_send(struct wharf_shard *shard, wharf_msg_fn fn, void *arg)
{
	struct wharf_shard *cur;
	int err;

	if (!shard || !fn)
		return -EINVAL;
	if (atomic_load_explicit(&shard->ctx->closing, memory_order_acquire))
		return -ESHUTDOWN;
	/*
	 * A shard thread is one sender: its lane.  An app-driven shard is
	 * run by whichever thread polls it, which may send as itself too,
	 * so its messages share the ring with that thread's, in order.
	 */
	cur = wharf_shard_current();
	if (cur && cur->ctx == shard->ctx && !shard->ctx->opts.app_driven)
		return wcore_outbox_put(&cur->out, shard, fn, arg);
	err = wcore_ring_push(&shard->ring, fn, arg);
	if (err) {
		count_full(shard);
		return err;
	}
	shard_wake(shard);
	return 0;
}

void wharf_shard_flush(void)
{
	struct wharf_shard *cur = wharf_shard_current();

	if (cur)
		wcore_outbox_flush(&cur->out);
}

/* ---- the receiver ------------------------------------------------------- */

/* Moves lanes announced since the last call onto the owner's list. */
static void adopt_lanes(struct wharf_shard *shard)
{
	struct wcore_lane *lane, *next;

	if (!atomic_load_explicit(&shard->adopt, memory_order_relaxed))
		return;
	lane = atomic_exchange_explicit(&shard->adopt, NULL,
					memory_order_acquire);
	for (; lane; lane = next) {
		next = lane->next;
		lane->next = shard->in;
		shard->in = lane;
		shard->nin++;
	}
	atomic_store_explicit(&shard->stats.lanes, shard->nin,
			      memory_order_relaxed);
}

static unsigned run_ring(struct wharf_shard *shard, unsigned budget)
{
	unsigned n = 0;
	wcore_ring_fn fn;
	void *arg;

	while (n < budget && wcore_ring_pop(&shard->ring, &fn, &arg)) {
		fn(shard, arg);
		/* One by one: a message sees every earlier one counted. */
		wcore_count(&shard->stats.msgs, 1);
		n++;
	}
	return n;
}

/* Frees every adopted lane that is closed and drained. */
static void reap_lanes(struct wharf_shard *shard)
{
	struct wcore_lane **pp = &shard->in, *lane;

	while ((lane = *pp)) {
		if (!wcore_spsc_finished(&lane->ring)) {
			pp = &lane->next;
			continue;
		}
		*pp = lane->next;
		if (shard->in_next == lane)
			shard->in_next = NULL;
		wharf_numa_free(shard->arena, lane);
		shard->nin--;
	}
	atomic_store_explicit(&shard->stats.lanes, shard->nin,
			      memory_order_relaxed);
}

/*
 * One pass over the lanes, starting where the last pass left off: each
 * runs up to @share messages while @budget lasts.  Closed lanes are freed
 * after the pass, so that the pass visits each lane once.
 */
static unsigned run_lanes(struct wharf_shard *shard, unsigned share,
			  unsigned budget)
{
	struct wcore_lane *start = shard->in_next ? shard->in_next : shard->in;
	struct wcore_lane *lane = start;
	unsigned n = 0;
	bool finished = false;

	while (lane && n < budget) {
		unsigned left = budget - n;

		n += wcore_lane_run(lane, shard, share < left ? share : left,
				    &shard->stats.msgs);
		finished |= wcore_spsc_finished(&lane->ring);
		lane = lane->next ? lane->next : shard->in;
		if (lane == start)
			break;
	}
	shard->in_next = lane;
	if (finished)
		reap_lanes(shard);
	return n;
}

unsigned wcore_shard_run_msgs(struct wharf_shard *shard, unsigned budget)
{
	unsigned share, n;

	adopt_lanes(shard);
	/* A fair share each for the ring and every lane, then the rest. */
	share = budget / (shard->nin + 1);
	if (!share)
		share = 1;
	n = run_ring(shard, share);
	n += run_lanes(shard, share, budget - n);
	if (n < budget)
		n += run_ring(shard, budget - n);
	if (n < budget)
		n += run_lanes(shard, budget - n, budget - n);
	return n;
}

bool wcore_shard_msgs_pending(struct wharf_shard *shard)
{
	if (wcore_ring_pending(&shard->ring) ||
	    atomic_load_explicit(&shard->adopt, memory_order_seq_cst))
		return true;
	for (struct wcore_lane *lane = shard->in; lane; lane = lane->next)
		if (wcore_spsc_pending(&lane->ring))
			return true;
	return false;
}

void wcore_shard_free_lanes(struct wharf_shard *shard)
{
	struct wcore_lane *lists[2], *lane, *next;

	lists[0] = atomic_exchange_explicit(&shard->adopt, NULL,
					    memory_order_acquire);
	lists[1] = shard->in;
	for (unsigned i = 0; i < 2; i++)
		for (lane = lists[i]; lane; lane = next) {
			next = lane->next;
			wharf_numa_free(shard->arena, lane);
		}
	shard->in = shard->in_next = NULL;
	shard->nin = 0;
	free(shard->out.lanes);
	free(shard->out.dirty);
	shard->out.lanes = shard->out.dirty = NULL;
}
