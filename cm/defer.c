/*
 * cm/defer.c - passive admission on the owner shard: a request is
 * presented to the application when the shard has room for its handshake,
 * waits in the shard's FIFO when it has not (the DEFER policy), or is
 * refused (cm/overload.h decides which).
 *
 * Why the FIFO is per owner shard, not per listener: what a request waits
 * for - a handshake slot under handshake_cap, the SRQ receive budget - is
 * the owner's, and so are the events that free it (a handshake ending, a
 * QP released), which run on the owner's thread: admitting there needs no
 * cross-thread signal, and the events of a waiting request (its peer
 * giving up) arrive on the owner's channel where the connection already
 * is.  The listener picks the owner counting deferred requests as load,
 * so a request does not queue on a busy shard while another has room.
 *
 * How: wcm_admit() runs when the owner adopts a hand-over.  A request
 * that waits enters state DEFERRED (cm/conn_state.h) with its timer armed
 * for defer_max_ms; it does not count as a handshake (hs_passive) but in
 * the deferred gauges of the shard and of its listener.  The shard's
 * poller presents the head of the FIFO whenever there is room, at the top
 * of its loop, never from inside another connection's step (as the
 * connect window, window.c).  A request leaves the FIFO when presented,
 * when its timer runs out (REJ: the listener's refusal private data),
 * when its peer gives up (an event on its rdma_cm_id), or at shutdown.
 * Everything here runs on the owner shard; the gauges are atomics for
 * wharf_cm_stats() and placement.
 */
#include <string.h>

#include "cm/rt.h"

static bool needs_budget(const struct wharf_conn *c)
{
	return c->ps == WCM_PS_RC && !wcm_conn_qp_opts(c)->private_rq;
}

/* What @c's owner has room for now; -errno when its resources fail. */
static int room_of(struct wharf_conn *c, struct wcm_room *r)
{
	struct wcm_shard *sh = c->sh;
	const struct wharf_listener *l = c->listener;
	int err = 0;

	*r = (struct wcm_room){
		.closing = sh->closing ||
			   atomic_load_explicit(&c->cm->closing,
						memory_order_relaxed),
		.running = sh->adm_running,
		.cap = c->cm->handshake_cap,
		.budget_ok = true,
		.queued = atomic_load_explicit(&sh->defer_n,
					       memory_order_relaxed),
		.listener_deferred = atomic_load_explicit(&l->deferred,
							  memory_order_relaxed),
		.defer_max = l->defer_max,
		.policy = l->overload,
	};
	if (!r->closing && needs_budget(c)) {
		/* Any of the shard's res sets, or one it may still make. */
		struct wharf_qp_res *res = wcm_res_admitting(
			sh, c->dev, wcm_conn_qp_opts(c), &err);

		if (!res && err != -EBUSY)
			return err;
		r->budget_ok = res != NULL;
	}
	return 0;
}

/* Take a slot and show @c to the application. */
static void present(struct wharf_conn *c)
{
	struct wcm_cm_input in = {.event = WCM_CM_CONNECT_REQUEST};

	c->adm_slot = true;
	c->sh->adm_running++;
	c->app_ref = true;
	wcm_feed_cm(c, &in);
}

static void enter(struct wharf_conn *c)
{
	struct wcm_shard *sh = c->sh;
	struct wcm_cm_input in = {.event = WCM_CM_CONNECT_REQUEST, .defer = 1};

	/* Waiting is not a handshake: hs_passive counts running ones. */
	c->in_handshake = false;
	atomic_fetch_sub_explicit(&sh->hs_passive, 1, memory_order_relaxed);
	c->was_deferred = true;
	wcore_list_add_tail(&sh->defer_queue, &c->pas->defer_link);
	atomic_fetch_add_explicit(&sh->defer_n, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->listener->deferred, 1,
				  memory_order_relaxed);
	wcm_feed_cm(c, &in); /* DEFERRED, timer armed */
}

void wcm_defer_leave(struct wharf_conn *c)
{
	if (!c->pas || !wcore_list_linked(&c->pas->defer_link))
		return;
	wcore_list_del(&c->pas->defer_link);
	atomic_fetch_sub_explicit(&c->sh->defer_n, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&c->listener->deferred, 1,
				  memory_order_relaxed);
}

void wcm_adm_leave(struct wharf_conn *c)
{
	if (!c->adm_slot)
		return;
	c->adm_slot = false;
	c->sh->adm_running--;
}

/*
 * A storm that hits a resource limit fails every request the same way:
 * one line per reason, repeated at 1, 2, 4, 8, ... failures with the
 * count, not one per request.
 */
void wcm_log_take_fail(struct wcm_shard *sh, int err)
{
	unsigned i, n = sizeof(sh->take_fails) / sizeof(sh->take_fails[0]);

	for (i = 0; i < n; i++)
		if (!sh->take_fails[i].n || sh->take_fails[i].err == err)
			break;
	if (i == n)
		i = n - 1; /* many reasons: the last slot takes the rest */
	if (sh->take_fails[i].err != err)
		sh->take_fails[i].n = 0;
	sh->take_fails[i].err = err;
	sh->take_fails[i].n++;
	if (sh->take_fails[i].n & (sh->take_fails[i].n - 1))
		return; /* not a power of two */
	wharf_ctx_log(sh->cm->ctx, WHARF_LOG_WARN,
		      "cm: shard %u cannot take requests: %s (%d), %llu so far",
		      sh->index, strerror(-err), err,
		      (unsigned long long)sh->take_fails[i].n);
}

void wcm_admit(struct wharf_conn *c)
{
	struct wcm_decision d;
	struct wcm_room r;
	int err = room_of(c, &r);

	if (!err)
		err = wcm_overload_decide(&r, &d);
	if (!err && d.verdict == WCM_REFUSE) {
		wcm_refuse(c, d.why);
		return;
	}
	if (!err)
		err = wcm_conn_setup(c);
	if (err) {
		wcm_log_take_fail(c->sh, err);
		wcm_refuse(c, WCM_REFUSE_RESOURCES);
		return;
	}
	wcm_conn_sm_init(&c->sm, WCM_SIDE_PASSIVE);
	if (d.verdict == WCM_DEFER)
		enter(c);
	else
		present(c);
}

static struct wharf_conn *head(const struct wcm_shard *sh)
{
	if (wcore_list_empty(&sh->defer_queue))
		return NULL;
	return wcore_list_first_entry(&sh->defer_queue, struct wcm_passive,
				      defer_link)
		->conn;
}

/* Whether the head of the FIFO can be presented now.  When it cannot,
 * the shard may sleep: what frees room (a handshake or a QP ending) runs
 * on this shard and is followed by a loop iteration that admits. */
bool wcm_defer_ready(struct wcm_shard *sh)
{
	struct wharf_conn *c = head(sh);
	struct wcm_room r;

	if (!c || sh->closing || sh->adm_running >= sh->cm->handshake_cap)
		return false;
	return !room_of(c, &r) && wcm_overload_room(&r);
}

unsigned wcm_defer_admit(struct wcm_shard *sh, unsigned max)
{
	unsigned n = 0;

	while (n < max && wcm_defer_ready(sh)) {
		struct wharf_conn *c = head(sh);

		wcm_defer_leave(c);
		c->in_handshake = true;
		atomic_fetch_add_explicit(&sh->hs_passive, 1,
					  memory_order_relaxed);
		c->refs++;
		present(c); /* DEFERRED -> REQ_RECEIVED: presented */
		wcm_conn_unref(c);
		n++;
	}
	return n;
}

void wcm_defer_drain(struct wcm_shard *sh)
{
	struct wharf_conn *c;

	while ((c = head(sh))) {
		struct wcm_step st;

		c->quiet = true;
		c->refusal = WCM_REFUSE_DRAINING;
		c->refs++;
		if (!wcm_conn_on_api(&c->sm, WCM_API_DESTROY, &st))
			wcm_run(c, &st); /* REJ; wcm_defer_leave() unlinks */
		wcm_defer_leave(c);	 /* in any case: no endless loop */
		wcm_conn_unref(c);
	}
}
