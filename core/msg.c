/*
 * Cross-shard messages: a bounded MPSC ring per shard plus an eventfd.
 *
 * Wake-ups cost a syscall, so senders only write the eventfd when the owner
 * may be blocked.  Before blocking, the owner stores `sleeping` = 1 and then
 * loads the ring's `tail`; a sender claims its slot with a CAS on `tail`
 * and, after publishing, loads `sleeping`.  All four are seq_cst, so they
 * fall in one total order and at least one side sees the other (the
 * store-buffering outcome is forbidden): either the owner sees the claim
 * and stays awake until the message is published, or the sender sees
 * `sleeping`, clears it (one waker per sleep) and writes the eventfd.  On
 * x86 this costs the sender no fence beyond the CAS it needs anyway.
 */
#include <errno.h>
#include <unistd.h>

#include "core/shard.h"

void wcore_shard_kick(struct wharf_shard *shard)
{
	uint64_t one = 1;

	/* Only fails with EAGAIN when the counter would overflow: fine. */
	if (write(shard->evfd, &one, sizeof(one)) < 0)
		return;
}

int wharf_shard_send(struct wharf_shard *shard, wharf_msg_fn fn, void *arg)
{
	int err;

	if (!shard || !fn)
		return -EINVAL;
	if (atomic_load_explicit(&shard->ctx->closing, memory_order_acquire))
		return -ESHUTDOWN;
	err = wcore_ring_push(&shard->ring, fn, arg);
	if (err) {
		atomic_fetch_add_explicit(&shard->send_full, 1,
					  memory_order_relaxed);
		return err;
	}
	if (atomic_load_explicit(&shard->sleeping, memory_order_seq_cst) &&
	    atomic_exchange_explicit(&shard->sleeping, 0,
				     memory_order_relaxed)) {
		atomic_fetch_add_explicit(&shard->wakeups, 1,
					  memory_order_relaxed);
		wcore_shard_kick(shard);
	}
	return 0;
}

unsigned wcore_shard_run_msgs(struct wharf_shard *shard, unsigned budget)
{
	unsigned n = 0;
	wcore_ring_fn fn;
	void *arg;

	while (n < budget && wcore_ring_pop(&shard->ring, &fn, &arg)) {
		fn(shard, arg);
		wcore_count(&shard->stats.msgs, 1);
		n++;
	}
	return n;
}
