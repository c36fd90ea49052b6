/* Counter snapshots, safe from any thread: every counter is an atomic. */
#include <errno.h>

#include "base/opts.h"
#include "core/shard.h"

static uint64_t get(const _Atomic uint64_t *counter)
{
	return atomic_load_explicit(counter, memory_order_relaxed);
}

int wharf_shard_stats(const struct wharf_shard *shard,
		      struct wharf_shard_stats *out)
{
	const struct wcore_shard_counters *c;
	struct wharf_shard_stats s;

	if (!shard || !out)
		return -EINVAL;
	c = &shard->stats;
	s = (struct wharf_shard_stats){
		.size = sizeof(s),
		.loops = get(&c->loops),
		.msgs = get(&c->msgs),
		.send_full = get(&shard->send_full),
		.wakeups = get(&shard->wakeups),
		.sleeps = get(&c->sleeps),
		.fd_events = get(&c->fd_events),
		.timers_fired = get(&c->timers_fired),
		.poller_work = get(&c->poller_work),
		.timers_armed = get(&c->timers_armed),
		.watches = get(&c->watches),
		.lanes = get(&c->lanes),
	};
	return wbase_out_copy(out, &s, sizeof(s));
}
