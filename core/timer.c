/* Per-shard one-shot timers on the heap in timer_heap.c. */
#include <errno.h>

#include "core/shard.h"

int wharf_timer_create(struct wharf_shard *shard, wharf_timer_fn fn, void *arg,
		       struct wharf_timer **out)
{
	struct wharf_timer *timer;
	int err;

	if (!shard || !fn || !out)
		return -EINVAL;
	err = wcore_shard_check_owner(shard);
	if (err)
		return err;
	timer = wharf_numa_alloc(shard->arena, sizeof(*timer), 0, true);
	if (!timer)
		return -ENOMEM;
	wcore_heap_node_init(&timer->node);
	timer->shard = shard;
	timer->fn = fn;
	timer->arg = arg;
	wcore_list_add_head(&shard->timer_list, &timer->link);
	*out = timer;
	return 0;
}

static void disarm(struct wharf_timer *timer)
{
	struct wharf_shard *shard = timer->shard;

	wcore_heap_remove(&shard->timers, &timer->node);
	wcore_count(&shard->stats.timers_armed, (uint64_t)-1);
}

int wharf_timer_arm(struct wharf_timer *timer, uint64_t delay_ns)
{
	struct wharf_shard *shard;
	uint64_t deadline;
	int err;

	if (!timer)
		return -EINVAL;
	shard = timer->shard;
	err = wcore_shard_check_owner(shard);
	if (err)
		return err;
	if (wcore_heap_node_queued(&timer->node))
		disarm(timer);
	deadline = wharf_now_ns();
	deadline = delay_ns > UINT64_MAX - deadline ? UINT64_MAX
						    : deadline + delay_ns;
	err = wcore_heap_insert(&shard->timers, &timer->node, deadline);
	if (err)
		return err;
	wcore_count(&shard->stats.timers_armed, 1);
	return 0;
}

int wharf_timer_cancel(struct wharf_timer *timer)
{
	int err;

	if (!timer)
		return -EINVAL;
	err = wcore_shard_check_owner(timer->shard);
	if (err)
		return err;
	if (!wcore_heap_node_queued(&timer->node))
		return 0;
	disarm(timer);
	return 1;
}

bool wharf_timer_armed(const struct wharf_timer *timer)
{
	return timer && wcore_heap_node_queued(&timer->node);
}

int wharf_timer_destroy(struct wharf_timer *timer)
{
	int err;

	if (!timer)
		return 0;
	err = wcore_shard_check_owner(timer->shard);
	if (err)
		return err;
	if (wcore_heap_node_queued(&timer->node))
		disarm(timer);
	wcore_list_del(&timer->link);
	wharf_numa_free(timer->shard->arena, timer);
	return 0;
}

int wharf_shard_timeout_ms(struct wharf_shard *shard)
{
	struct wcore_heap_node *first = wcore_heap_min(&shard->timers);
	uint64_t now, wait_ns, ms;

	if (!first)
		return -1;
	now = wharf_now_ns();
	if (first->deadline <= now)
		return 0;
	wait_ns = first->deadline - now;
	ms = (wait_ns + 999999) / 1000000;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

unsigned wcore_shard_run_timers(struct wharf_shard *shard, unsigned budget)
{
	struct wcore_heap_node *first;
	unsigned n = 0;

	while (n < budget && (first = wcore_heap_min(&shard->timers)) &&
	       first->deadline <= shard->now_ns) {
		struct wharf_timer *timer = (struct wharf_timer *)first;

		disarm(timer);
		/* Disarmed first: the callback may re-arm or destroy it. */
		timer->fn(timer, timer->arg);
		n++;
	}
	if (n)
		wcore_count(&shard->stats.timers_fired, n);
	return n;
}

void wcore_shard_free_timers(struct wharf_shard *shard)
{
	struct wharf_timer *timer;

	wcore_heap_fini(&shard->timers); /* touches the armed timers */
	while ((timer = wcore_list_first_entry(&shard->timer_list,
					       struct wharf_timer, link))) {
		wcore_list_del(&timer->link);
		wharf_numa_free(shard->arena, timer);
	}
	atomic_store_explicit(&shard->stats.timers_armed, 0,
			      memory_order_relaxed);
}
