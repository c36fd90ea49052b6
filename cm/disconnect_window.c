/*
 * cm/disconnect_window.c - the disconnect window: at most sh->dctl.limit
 * DREQs of a shard's active connections wait for their answer at once.
 *
 * Why: wharf_disconnect() of thousands of connections at once sends
 * thousands of DREQs to peers whose kernel CM answers each in turn.  An
 * answer later than the DREQ's retransmission timer brings resends, which
 * the peer must handle as well, and a DREP later than
 * disconnect_timeout_ms ends in a forced teardown, whose destroyed id
 * stops resending a DREQ that the peer may never have received: that
 * peer keeps its side for good.  Measured with 60,000 at once on two
 * nodes: 305,521 CM resends, half the clients' disconnects forced, 260
 * and 5,001 server connections never told (docs/bench/storm.md).
 *
 * How: an established active RC connection's wharf_disconnect() takes a
 * slot, or waits in the shard's FIFO still ESTABLISHED (its DREQ not
 * sent, no timer: every slot holder has one; sh->disc_waiting counts
 * them).  The slot is held while DISCONNECTING.  wcm_dwin_settle() runs
 * after every transition (wcm_run) and gives back what the new state no
 * longer holds: a peer's DREQ, a fatal QP or a destroy takes a waiter
 * out of the queue; the answer, the forced teardown or a destroy frees a
 * slot.  The shard's poller admits waiters as slots free, at the top of
 * its loop (as the connect window's).
 *
 * Width: its own controller (window_ctl.h), not the connect window's: a
 * DREQ's round is not a handshake's, and the connect window's width
 * (tens per shard) halved the teardown rate of 30,000 on two nodes.  The
 * samples are the DREQ-to-answer times; a forced teardown counts as a
 * step timeout.  An adaptive connect window makes it adaptive from a
 * quarter of connect_window_max; a fixed one fixes it at the same width;
 * WHARF_CONNECT_WINDOW_NONE means no window here either.  Passive
 * connections (a target answers DREQs more than it sends them) and UD
 * (no DREQ) send at once.
 */
#include <errno.h>

#include "cm/rt.h"

void wcm_dwin_init(struct wcm_shard *sh)
{
	const struct wharf_cm *cm = sh->cm;
	unsigned start = cm->win_lo == cm->win_hi ? cm->win_hi : cm->win_hi / 4;

	wcore_list_init(&sh->disc_queue);
	wcm_wctl_init(&sh->dctl, start, cm->win_lo, cm->win_hi);
	atomic_init(&sh->disc_limit, sh->dctl.limit);
}

static bool full(const struct wcm_shard *sh)
{
	return sh->disc_running >= sh->dctl.limit;
}

/* Whether @c's DREQ goes through the window. */
static bool windowed(const struct wharf_conn *c)
{
	return c->act && c->sm.state == WCM_ST_ESTABLISHED &&
	       c->ps != WCM_PS_UD &&
	       c->sh->cm->win_hi != WHARF_CONNECT_WINDOW_NONE;
}

static void take_slot(struct wharf_conn *c)
{
	c->win_slot = true;
	c->sh->disc_running++;
	c->act->dreq_ns = wharf_now_ns();
}

static void dwin_signal(struct wharf_conn *c, enum wcm_wctl_signal sig,
			uint64_t ns)
{
	struct wcm_shard *sh = c->sh;

	wcm_wctl_signal(&sh->dctl, sig, ns);
	atomic_store_explicit(&sh->disc_limit, sh->dctl.limit,
			      memory_order_relaxed);
}

int wcm_dwin_disconnect(struct wharf_conn *c)
{
	struct wcm_shard *sh = c->sh;

	if (!windowed(c))
		return 0;
	if (wcore_list_linked(&c->act->win_link))
		return -EALREADY;
	if (!full(sh) && wcore_list_empty(&sh->disc_queue)) {
		take_slot(c);
		return 0;
	}
	wcore_list_add_tail(&sh->disc_queue, &c->act->win_link);
	atomic_fetch_add_explicit(&sh->disc_waiting, 1, memory_order_relaxed);
	return 1;
}

static void unlink_waiter(struct wharf_conn *c)
{
	wcore_list_del(&c->act->win_link);
	atomic_fetch_sub_explicit(&c->sh->disc_waiting, 1,
				  memory_order_relaxed);
}

void wcm_dwin_settle(struct wharf_conn *c)
{
	/* A handshake's slot and place are the connect window's. */
	if (!c->act || c->in_handshake)
		return;
	if (c->win_slot && c->sm.state != WCM_ST_DISCONNECTING) {
		c->win_slot = false;
		c->sh->disc_running--;
		/* The peer answered (TIMEWAIT): a sample.  A forced end
		 * signalled already; a destroy says nothing of the peer. */
		if (c->sm.state == WCM_ST_TIMEWAIT)
			dwin_signal(c, WCM_WCTL_ESTABLISHED,
				    wharf_now_ns() - c->act->dreq_ns);
	} else if (wcore_list_linked(&c->act->win_link) &&
		   c->sm.state != WCM_ST_ESTABLISHED) {
		/* Linked outside a handshake: a disconnect waiter. */
		unlink_waiter(c);
	}
}

void wcm_dwin_timeout(struct wharf_conn *c)
{
	if (c->act && c->win_slot && !c->in_handshake)
		dwin_signal(c, WCM_WCTL_TIMEOUT, 0);
}

bool wcm_dwin_ready(const struct wcm_shard *sh)
{
	return !wcore_list_empty(&sh->disc_queue) && !full(sh);
}

unsigned wcm_dwin_admit(struct wcm_shard *sh, unsigned max)
{
	unsigned n = 0;

	while (n < max && wcm_dwin_ready(sh)) {
		struct wharf_conn *c =
			wcore_list_first_entry(&sh->disc_queue,
					       struct wcm_active, win_link)
				->conn;
		struct wcm_step st;

		unlink_waiter(c);
		take_slot(c);
		c->refs++;
		/* A waiter is ESTABLISHED (settle unlinks it otherwise),
		 * where the call is always valid. */
		if (!wcm_conn_on_api(&c->sm, WCM_API_DISCONNECT, &st))
			wcm_run(c, &st);
		wcm_conn_unref(c);
		n++;
	}
	return n;
}
