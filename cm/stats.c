/*
 * cm/stats.c - outcome counters per shard and per listener, and their
 * snapshots.  Each step's outcome (cm/conn_state.h) maps to exactly one
 * counter, so an outcome is never lost or counted twice.
 */
#include <errno.h>
#include <string.h>

#include "base/opts.h"
#include "cm/rt.h"

void wcm_count_shard(struct wcm_shard *sh, enum wcm_ctr ctr)
{
	/* Single writer: the shard itself. */
	uint64_t v =
		atomic_load_explicit(&sh->ctr.v[ctr], memory_order_relaxed);

	atomic_store_explicit(&sh->ctr.v[ctr], v + 1, memory_order_relaxed);
}

void wcm_count_listener(struct wharf_listener *l, enum wcm_ctr ctr)
{
	atomic_fetch_add_explicit(&l->ctr.v[ctr], 1, memory_order_relaxed);
}

void wcm_count(struct wharf_conn *c, enum wcm_ctr ctr)
{
	wcm_count_shard(c->sh, ctr);
	if (c->listener)
		wcm_count_listener(c->listener, ctr);
}

static void handshake_over(struct wharf_conn *c)
{
	if (!c->in_handshake)
		return;
	c->in_handshake = false;
	if (c->sm.side == WCM_SIDE_PASSIVE) {
		atomic_fetch_sub_explicit(&c->sh->hs_passive, 1,
					  memory_order_relaxed);
		wcm_adm_leave(c);
	} else {
		atomic_fetch_sub_explicit(&c->sh->hs_active, 1,
					  memory_order_relaxed);
		wcm_window_leave(c);
	}
}

static enum wcm_ctr failure_ctr(const struct wharf_conn *c, unsigned error)
{
	if (c->busy_rejected)
		return WCM_C_REJ_BUSY;
	switch (error) {
	case WCM_ERR_TIMEOUT:
		return WCM_C_TIMED_OUT;
	case WCM_ERR_UNREACHABLE:
		return WCM_C_UNREACHABLE;
	default:
		return WCM_C_FAILED;
	}
}

void wcm_count_outcome(struct wharf_conn *c, const struct wcm_step *st)
{
	switch (st->outcome) {
	case WCM_OUT_ESTABLISHED:
		wcm_window_feedback(c, WCM_WCTL_ESTABLISHED);
		handshake_over(c);
		wcm_count(c, c->sm.side == WCM_SIDE_PASSIVE ? WCM_C_ACCEPTED
							    : WCM_C_CONNECTED);
		if (c->was_deferred)
			wcm_count(c, WCM_C_DEFER_ACCEPTED);
		c->counted_conn = true;
		atomic_fetch_add_explicit(&c->sh->nconns, 1,
					  memory_order_relaxed);
		break;
	case WCM_OUT_RETRIED:
		if (st->rej_status != WCM_REJ_REASON_STALE_CONN)
			wcm_window_feedback(c, WCM_WCTL_BUSY);
		wcm_count(c, st->rej_status == WCM_REJ_REASON_STALE_CONN
				     ? WCM_C_STALE_RETRIED
				     : WCM_C_BUSY_RETRIED);
		break;
	case WCM_OUT_REJECTED_BY_APP:
		handshake_over(c);
		wcm_count(c, WCM_C_REJ_APP);
		break;
	case WCM_OUT_REJECTED_BY_PEER:
		handshake_over(c);
		wcm_count(c, WCM_C_REJ_PEER);
		break;
	case WCM_OUT_FAILED:
		if (c->busy_rejected)
			wcm_window_feedback(c, WCM_WCTL_BUSY);
		else if (st->error == WCM_ERR_TIMEOUT)
			wcm_window_feedback(c, WCM_WCTL_TIMEOUT);
		handshake_over(c);
		wcm_count(c, failure_ctr(c, st->error));
		break;
	case WCM_OUT_DISCONNECTED:
		wcm_count(c, WCM_C_DISCONNECTED);
		if (c->counted_conn) {
			c->counted_conn = false;
			atomic_fetch_sub_explicit(&c->sh->nconns, 1,
						  memory_order_relaxed);
		}
		break;
	case WCM_OUT_ABORTED:
		handshake_over(c);
		wcm_defer_leave(c);
		wcm_count(c, WCM_C_ABORTED);
		break;
	case WCM_OUT_DEFERRED:
		wcm_count(c, WCM_C_DEFERRED);
		break;
	case WCM_OUT_DEFER_EXPIRED:
		wcm_defer_leave(c);
		wcm_count(c, WCM_C_DEFER_EXPIRED);
		break;
	case WCM_OUT_DEFER_LOST:
		wcm_defer_leave(c);
		wcm_count(c, WCM_C_DEFER_LOST);
		break;
	default:
		break;
	}
}

static void fill(struct wharf_cm_stats *s, const struct wcm_counters *ctr,
		 bool add)
{
	uint64_t *f[WCM_C_COUNT] = {
		&s->requests,	       &s->connects,
		&s->accepted,	       &s->connected,
		&s->rejected_app,      &s->rejected_busy,
		&s->rejected_by_peer,  &s->timed_out,
		&s->unreachable,       &s->failed,
		&s->disconnected,      &s->aborted,
		&s->stale_retried,     &s->busy_retried,
		&s->forced_teardowns,  &s->notifies,
		&s->held_recvs,	       &s->timewait_exits,
		&s->proto_errors,      &s->deferred_total,
		&s->deferred_accepted, &s->deferred_timed_out,
		&s->deferred_lost,
	};

	for (unsigned i = 0; i < WCM_C_COUNT; i++) {
		uint64_t v =
			atomic_load_explicit(&ctr->v[i], memory_order_relaxed);
		*f[i] = add ? *f[i] + v : v;
	}
}

static void fill_shard(struct wharf_cm_stats *s, const struct wcm_shard *sh,
		       bool add)
{
	fill(s, &sh->ctr, add);
	s->handshakes +=
		atomic_load_explicit(&sh->hs_passive, memory_order_relaxed) +
		atomic_load_explicit(&sh->hs_active, memory_order_relaxed);
	s->connections +=
		atomic_load_explicit(&sh->nconns, memory_order_relaxed);
	s->connects_waiting +=
		atomic_load_explicit(&sh->win_waiting, memory_order_relaxed);
	s->disconnects_waiting +=
		atomic_load_explicit(&sh->disc_waiting, memory_order_relaxed);
	if (sh->cm->win_hi != WHARF_CONNECT_WINDOW_NONE)
		s->disconnect_window += atomic_load_explicit(
			&sh->disc_limit, memory_order_relaxed);
	s->deferred += atomic_load_explicit(&sh->defer_n, memory_order_relaxed);
	if (sh->cm->win_hi != WHARF_CONNECT_WINDOW_NONE)
		s->connect_window += atomic_load_explicit(&sh->win_limit,
							  memory_order_relaxed);
	s->window_grows +=
		atomic_load_explicit(&sh->win_grows, memory_order_relaxed);
	s->window_shrinks +=
		atomic_load_explicit(&sh->win_shrinks, memory_order_relaxed);
}

static int check_out(const struct wharf_cm_stats *out)
{
	if (!out || out->size < sizeof(size_t))
		return -EINVAL;
	return 0;
}

int wharf_cm_shard_stats(const struct wharf_cm *cm, unsigned index,
			 struct wharf_cm_stats *out)
{
	struct wharf_cm_stats s;

	if (!cm || check_out(out) || index >= cm->nshards)
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	fill_shard(&s, cm->shards[index], false);
	return wbase_out_copy(out, &s, sizeof(s));
}

int wharf_cm_stats(const struct wharf_cm *cm, struct wharf_cm_stats *out)
{
	struct wharf_cm_stats s;

	if (!cm || check_out(out))
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	for (unsigned i = 0; i < cm->nshards; i++)
		fill_shard(&s, cm->shards[i], true);
	return wbase_out_copy(out, &s, sizeof(s));
}

int wharf_listener_stats(const struct wharf_listener *l,
			 struct wharf_cm_stats *out)
{
	struct wharf_cm_stats s;

	if (!l || check_out(out))
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	fill(&s, &l->ctr, false);
	s.deferred = atomic_load_explicit(&l->deferred, memory_order_relaxed);
	return wbase_out_copy(out, &s, sizeof(s));
}
