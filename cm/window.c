/*
 * cm/window.c - the connect window: at most sh->wctl.limit active
 * handshakes and DREQs run on a shard at once (its width: window_ctl.h).
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
 *
 * Disconnects take slots too.  wharf_disconnect() of thousands of
 * connections at once sends thousands of DREQs to peers that answer each
 * on their own serialised CM queue; an answer later than the DREQ's
 * retransmission timer brings retransmissions, which the peer must read
 * as well, and a DREP later than disconnect_timeout_ms ends in a forced
 * teardown whose destroyed id stops retransmitting a DREQ the peer may
 * never have received: that peer keeps its side for good (measured: 60,000
 * at once on two nodes, half the clients' disconnects forced, 260 to
 * 5,001 server connections never told).  So an established active RC
 * connection's wharf_disconnect() takes a slot as a connect does, or
 * waits in the same FIFO still ESTABLISHED (its DREQ not sent, no timer:
 * every slot holder has one); it holds the slot while DISCONNECTING.
 * wcm_window_settle(), after each transition, gives back what the new
 * state no longer holds: a peer's DREQ, a fatal QP or a destroy while it
 * waits takes it out of the queue; the DREP, the forced teardown or a
 * destroy frees the slot.  A forced teardown narrows the window as a
 * step timeout does; DREP times are not fed to it (a different round
 * from a handshake's).
 */
#include <errno.h>

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

/* Takes a slot for @c. */
static void take_slot(struct wharf_conn *c)
{
	c->win_slot = true;
	c->sh->win_running++;
}

/* Starts @c's handshake now (it holds a slot). */
static void start(struct wharf_conn *c)
{
	struct wcm_step st;

	take_slot(c);
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
	c->act->win_disc = false;
	wcore_list_add_tail(&sh->win_queue, &c->act->win_link);
	atomic_fetch_add_explicit(&sh->win_waiting, 1, memory_order_relaxed);
}

static void unlink_waiter(struct wharf_conn *c)
{
	struct wcm_shard *sh = c->sh;

	wcore_list_del(&c->act->win_link);
	atomic_fetch_sub_explicit(c->act->win_disc ? &sh->disc_waiting
						   : &sh->win_waiting,
				  1, memory_order_relaxed);
}

/* Whether @c's DREQ goes through the window: an established active RC
 * connection (UD has no DREQ) on a cm with a window. */
static bool disconnect_windowed(const struct wharf_conn *c)
{
	return c->act && c->sm.state == WCM_ST_ESTABLISHED &&
	       c->ps != WCM_PS_UD &&
	       c->sh->cm->win_hi != WHARF_CONNECT_WINDOW_NONE;
}

int wcm_window_disconnect(struct wharf_conn *c)
{
	struct wcm_shard *sh = c->sh;

	if (!disconnect_windowed(c))
		return 0;
	if (wcore_list_linked(&c->act->win_link))
		return -EALREADY;
	if (!window_full(sh) && wcore_list_empty(&sh->win_queue)) {
		take_slot(c);
		return 0;
	}
	c->act->win_disc = true;
	wcore_list_add_tail(&sh->win_queue, &c->act->win_link);
	atomic_fetch_add_explicit(&sh->disc_waiting, 1, memory_order_relaxed);
	return 1;
}

/* Sends @c's DREQ now (it holds a slot). */
static void start_disconnect(struct wharf_conn *c)
{
	struct wcm_step st;

	take_slot(c);
	c->refs++;
	if (!wcm_conn_on_api(&c->sm, WCM_API_DISCONNECT, &st))
		wcm_run(c, &st);
	else
		wcm_window_settle(c); /* refused: the slot goes back */
	wcm_conn_unref(c);
}

void wcm_window_settle(struct wharf_conn *c)
{
	if (!c->act || c->in_handshake)
		return; /* a handshake's slot: handshake_over (stats.c) */
	if (c->win_slot ? c->sm.state != WCM_ST_DISCONNECTING
			: c->act->win_disc &&
				  wcore_list_linked(&c->act->win_link) &&
				  c->sm.state != WCM_ST_ESTABLISHED)
		wcm_window_leave(c);
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
		if (c->act->win_disc)
			start_disconnect(c);
		else
			start(c);
		n++;
	}
	return n;
}
