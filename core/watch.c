/*
 * Watched fds and pollers of a shard.
 *
 * epoll hands back the watch pointer, so a watch removed while events for
 * it are still in the current batch must stay allocated: removal marks it
 * dead, moves it to the dead list and the sweep at the end of the iteration
 * frees it.  Pollers are marked dead the same way and unlinked by the sweep,
 * so a poller may remove itself (or another) from its callback.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "core/shard.h"

_Static_assert((int)WHARF_WATCH_IN == (int)EPOLLIN &&
		       (int)WHARF_WATCH_OUT == (int)EPOLLOUT &&
		       (int)WHARF_WATCH_ERR == (int)EPOLLERR &&
		       (int)WHARF_WATCH_HUP == (int)EPOLLHUP,
	       "watch bits are epoll bits");

#define WATCH_EVENT_MASK (WHARF_WATCH_IN | WHARF_WATCH_OUT)

static void list_del(struct wharf_watch **head, struct wharf_watch *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		*head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	w->prev = w->next = NULL;
}

static void list_add(struct wharf_watch **head, struct wharf_watch *w)
{
	w->prev = NULL;
	w->next = *head;
	if (*head)
		(*head)->prev = w;
	*head = w;
}

int wharf_shard_watch(struct wharf_shard *shard, int fd, uint32_t events,
		      wharf_watch_fn fn, void *arg, struct wharf_watch **out)
{
	struct epoll_event ev = {.events = events};
	struct wharf_watch *w;
	int err;

	if (!shard || fd < 0 || !fn || (events & ~WATCH_EVENT_MASK))
		return -EINVAL;
	err = wcore_shard_check_owner(shard);
	if (err)
		return err;
	w = wharf_numa_alloc(shard->arena, sizeof(*w), 0, true);
	if (!w)
		return -ENOMEM;
	w->shard = shard;
	w->fd = fd;
	w->events = events;
	w->fn = fn;
	w->arg = arg;
	ev.data.ptr = w;
	if (epoll_ctl(shard->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		err = -errno;
		wharf_numa_free(shard->arena, w);
		return err;
	}
	list_add(&shard->watch_list, w);
	wcore_count(&shard->stats.watches, 1);
	if (out)
		*out = w;
	return 0;
}

int wharf_watch_modify(struct wharf_watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};
	int err;

	if (!w || w->dead || (events & ~WATCH_EVENT_MASK))
		return -EINVAL;
	err = wcore_shard_check_owner(w->shard);
	if (err)
		return err;
	if (epoll_ctl(w->shard->epfd, EPOLL_CTL_MOD, w->fd, &ev))
		return -errno;
	w->events = events;
	return 0;
}

int wharf_watch_remove(struct wharf_watch *w)
{
	struct wharf_shard *shard;
	int err;

	if (!w || w->dead)
		return -EINVAL;
	shard = w->shard;
	err = wcore_shard_check_owner(shard);
	if (err)
		return err;
	/* Fails only if the caller already closed the fd: nothing to undo. */
	epoll_ctl(shard->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->dead = true;
	list_del(&shard->watch_list, w);
	list_add(&shard->dead_watches, w);
	wcore_count(&shard->stats.watches, (uint64_t)-1);
	return 0;
}

unsigned wcore_shard_dispatch_fds(struct wharf_shard *shard, const void *events,
				  int n)
{
	const struct epoll_event *ev = events;
	unsigned handled = 0;
	uint64_t drained;

	for (int i = 0; i < n; i++) {
		struct wharf_watch *w = ev[i].data.ptr;

		if (!w) {
			/* The message eventfd: the ring is drained anyway. */
			if (read(shard->evfd, &drained, sizeof(drained)) < 0)
				continue;
			continue;
		}
		if (w->dead)
			continue;
		w->fn(w, w->fd, ev[i].events, w->arg);
		handled++;
	}
	if (handled)
		wcore_count(&shard->stats.fd_events, handled);
	return handled;
}

int wharf_shard_poller_add(struct wharf_shard *shard, wharf_poll_fn poll,
			   wharf_arm_fn arm, void *arg,
			   struct wharf_poller **out)
{
	struct wharf_poller *p;
	int err;

	if (!shard || !poll)
		return -EINVAL;
	err = wcore_shard_check_owner(shard);
	if (err)
		return err;
	p = wharf_numa_alloc(shard->arena, sizeof(*p), 0, true);
	if (!p)
		return -ENOMEM;
	p->shard = shard;
	p->poll = poll;
	p->arm = arm;
	p->arg = arg;
	p->next = shard->pollers;
	shard->pollers = p;
	if (out)
		*out = p;
	return 0;
}

int wharf_poller_remove(struct wharf_poller *p)
{
	int err;

	if (!p || p->dead)
		return -EINVAL;
	err = wcore_shard_check_owner(p->shard);
	if (err)
		return err;
	p->dead = true;
	p->shard->dead_pollers = true;
	return 0;
}

unsigned wcore_shard_run_pollers(struct wharf_shard *shard)
{
	unsigned work = 0;

	for (struct wharf_poller *p = shard->pollers; p; p = p->next) {
		if (p->dead)
			continue;
		int n = p->poll(shard, p->arg);

		if (n > 0)
			work += (unsigned)n;
	}
	if (work)
		wcore_count(&shard->stats.poller_work, work);
	return work;
}

int wcore_shard_arm_pollers(struct wharf_shard *shard)
{
	int pending = 0;

	for (struct wharf_poller *p = shard->pollers; p; p = p->next)
		if (!p->dead && p->arm && p->arm(shard, p->arg) > 0)
			pending = 1;
	return pending;
}

void wcore_shard_sweep(struct wharf_shard *shard)
{
	while (shard->dead_watches) {
		struct wharf_watch *w = shard->dead_watches;

		list_del(&shard->dead_watches, w);
		wharf_numa_free(shard->arena, w);
	}
	if (!shard->dead_pollers)
		return;
	for (struct wharf_poller **pp = &shard->pollers; *pp;) {
		struct wharf_poller *p = *pp;

		if (p->dead) {
			*pp = p->next;
			wharf_numa_free(shard->arena, p);
		} else {
			pp = &p->next;
		}
	}
	shard->dead_pollers = false;
}

void wcore_shard_free_watches(struct wharf_shard *shard)
{
	while (shard->watch_list) {
		struct wharf_watch *w = shard->watch_list;

		list_del(&shard->watch_list, w);
		wharf_numa_free(shard->arena, w);
	}
	for (struct wharf_poller *p = shard->pollers; p; p = p->next)
		p->dead = true;
	shard->dead_pollers = true;
	wcore_shard_sweep(shard);
	atomic_store_explicit(&shard->stats.watches, 0, memory_order_relaxed);
}
