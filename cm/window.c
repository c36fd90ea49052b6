/*
 * cm/window.c - the connect window: at most sh->wctl.limit active
 * handshakes run on a shard at once (its width: window_ctl.h).
 *
 * Why: every active handshake puts work on the kernel's serialised CM
 * queues (address resolution, the IB CM, the MAD layer; a user QP's move
 * to RTR waits on the address queue too).  A burst of thousands of
 * wharf_connect() calls queues them all there at once: each step then
 * waits behind every other connection's, resolve timers run out with the
 * answers still queued, and the work done for those connections is lost.
 * With a window the queues stay short, steps complete within their timers,
 * and connections start in call order.
 *
 * How: a connection adopted by its shard (start_item in active.c) takes a
 * slot or joins the shard's FIFO of waiters in state IDLE (no timer: it
 * starts when a running handshake ends, and every running one has a timer
 * armed).  handshake_over() (stats.c) gives the slot back or unlinks a
 * waiter destroyed while waiting.  The shard's poller admits waiters while
 * slots are free, at the top of its loop, never from inside another
 * connection's step.  Everything here runs on the owner shard; the waiting
 * gauge is an atomic for wharf_cm_stats().
 */
#include "cm/rt.h"

/* WHARF_CONNECT_WINDOW_NONE is ~0u, which win_running never reaches. */
static bool window_full(const struct wcm_shard *sh)
{
	return sh->win_running >= sh->wctl.limit;
}

void wcm_window_init(struct wcm_shard *sh)
{
	const struct wharf_cm *cm = sh->cm;

	wcore_list_init(&sh->win_queue);
	wcm_wctl_init(&sh->wctl, cm->win_start, cm->win_lo, cm->win_hi);
	atomic_init(&sh->win_limit, sh->wctl.limit);
	atomic_init(&sh->win_grows, 0);
	atomic_init(&sh->win_shrinks, 0);
}

void wcm_window_feedback(struct wharf_conn *c, enum wcm_wctl_signal sig)
{
	struct wcm_shard *sh = c->sh;
	uint64_t ns = 0;

	if (c->sm.side != WCM_SIDE_ACTIVE || !c->win_slot)
		return;
	if (sig == WCM_WCTL_ESTABLISHED)
		ns = wharf_now_ns() - c->step_ns[WHARF_STEP_ADMITTED];
	wcm_wctl_signal(&sh->wctl, sig, ns);
	/* Single writer: the shard itself. */
	atomic_store_explicit(&sh->win_limit, sh->wctl.limit,
			      memory_order_relaxed);
	atomic_store_explicit(&sh->win_grows, sh->wctl.grows,
			      memory_order_relaxed);
	atomic_store_explicit(&sh->win_shrinks, sh->wctl.shrinks,
			      memory_order_relaxed);
}

/* Starts @c's handshake now (it holds a slot). */
static void start(struct wharf_conn *c)
{
	struct wcm_step st;

	c->win_slot = true;
	c->sh->win_running++;
	wcm_stamp(c, WHARF_STEP_ADMITTED);
	c->refs++;
	if (!wcm_conn_on_api(&c->sm, WCM_API_CONNECT, &st))
		wcm_run(c, &st);
	wcm_conn_unref(c);
}

void wcm_window_enter(struct wharf_conn *c)
{
	struct wcm_shard *sh = c->sh;

	if (!window_full(sh) && wcore_list_empty(&sh->win_queue)) {
		start(c);
		return;
	}
	wcore_list_add_tail(&sh->win_queue, &c->act->win_link);
	atomic_fetch_add_explicit(&sh->win_waiting, 1, memory_order_relaxed);
}

static void unlink_waiter(struct wharf_conn *c)
{
	struct wcm_shard *sh = c->sh;

	wcore_list_del(&c->act->win_link);
	atomic_fetch_sub_explicit(&sh->win_waiting, 1, memory_order_relaxed);
}

void wcm_window_leave(struct wharf_conn *c)
{
	if (c->act && wcore_list_linked(&c->act->win_link))
		unlink_waiter(c);
	if (c->win_slot) {
		c->win_slot = false;
		c->sh->win_running--;
	}
}

bool wcm_window_ready(const struct wcm_shard *sh)
{
	return !wcore_list_empty(&sh->win_queue) && !window_full(sh);
}

unsigned wcm_window_admit(struct wcm_shard *sh, unsigned max)
{
	unsigned n = 0;

	while (n < max && wcm_window_ready(sh)) {
		struct wharf_conn *c =
			wcore_list_first_entry(&sh->win_queue,
					       struct wcm_active, win_link)
				->conn;

		unlink_waiter(c);
		start(c);
		n++;
	}
	return n;
}
