/*
 * nvmf_host/recover.c - the controller's recovery at run time, on
 * the admin queue's shard: the transitions of ctrl_sm.h fed with what the
 * queues, the bring-up and three timers report, and their actions carried
 * out.
 *
 * Why the admin shard: it already runs the bring-up, so an attempt is the
 * same code as the first connect, started by a timer instead of the
 * application.  Each queue stays with its owner shard: the admin shard
 * only sends it messages (wnh_q_reset, _start, _kill, _fast_fail, _close)
 * and the queue answers with messages (lost, down, up).  Messages from
 * one shard to another run in order, so a queue's "up" always arrives
 * before its "down", and a close sent after a start closes what it
 * started.  A held command never leaves its queue: it is sent again by
 * the same shard, on the same queue index, and its callback runs there.
 *
 * A teardown asks every queue (admin and I/O) to close and counts the
 * answers (down_pending); only when all have answered (DOWN) does the
 * reconnect delay start, so no attempt ever overlaps an old connection.
 */
#include <errno.h>
#include <string.h>

#include "nvmf_host/ctrl_sm.h"
#include "nvmf_host/host_int.h"

static void cnt_inc(atomic_uint_fast64_t *c)
{
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static void arm_ms(struct wharf_timer *t, uint64_t ms)
{
	if (t)
		wharf_timer_arm(t, ms * 1000000ull);
}

static void cancel(struct wharf_timer *t)
{
	if (t)
		wharf_timer_cancel(t);
}

/* Sends @fn to every I/O queue the controller uses. */
static unsigned to_io_queues(struct wharf_nvmf_host *h, wharf_msg_fn fn)
{
	unsigned sent = 0;

	for (unsigned i = 0; i < h->nio; i++)
		if (!wnh_post(h, h->io[i].shard, fn, &h->io[i]))
			sent++;
	return sent;
}

static void teardown(struct wharf_nvmf_host *h)
{
	wnh_admin_halt(h);
	h->down_pending = 1 + h->nio;
	if (wnh_post(h, h->admin.shard, wnh_q_reset, &h->admin))
		h->down_pending--;
	h->down_pending -= h->nio - to_io_queues(h, wnh_q_reset);
	if (!h->down_pending) /* the context is shutting down */
		wnh_ctrl_event(h, WNH_EV_DOWN, 0);
}

static void attempt(struct wharf_nvmf_host *h)
{
	int rc;

	cnt_inc(&h->attempts);
	h->failed_attempts++; /* until it succeeds */
	wharf_ctx_log(h->ctx, WHARF_LOG_INFO,
		      "nvmf host: %s: reconnect attempt %u", h->subnqn,
		      h->failed_attempts);
	rc = wnh_admin_start(h);
	if (rc) {
		wnh_fail(h, rc, "admin queue: connect: %s", strerror(-rc));
		wnh_ctrl_event(h, WNH_EV_LOSS, rc);
	}
}

static void act(struct wharf_nvmf_host *h, unsigned a)
{
	if (a & WNH_ACT_STOP) {
		cancel(h->retry_timer);
		cancel(h->loss_timer);
		cancel(h->ff_timer);
		cancel(h->ka_timer);
	}
	if (a & WNH_ACT_TEARDOWN)
		teardown(h);
	if (a & WNH_ACT_ARM_LOSS) {
		cnt_inc(&h->losses);
		h->failed_attempts = 0;
		if (h->ctrl_loss_tmo_ms != WHARF_NVMF_HOST_TMO_INFINITE)
			arm_ms(h->loss_timer, h->ctrl_loss_tmo_ms);
		if (h->fast_io_fail_tmo_ms != WHARF_NVMF_HOST_TMO_INFINITE)
			arm_ms(h->ff_timer, h->fast_io_fail_tmo_ms);
	}
	if (a & WNH_ACT_ARM_RETRY)
		arm_ms(h->retry_timer, wnh_backoff_ms(h->reconnect_delay_ms,
						      h->failed_attempts));
	if (a & WNH_ACT_ATTEMPT)
		attempt(h);
	if (a & (WNH_ACT_RESUME | WNH_ACT_CONNECTED)) {
		h->step = NHS_LIVE;
		wnh_aer_start(h);
	}
	if (a & WNH_ACT_RESUME) {
		cancel(h->loss_timer);
		cancel(h->ff_timer);
		cnt_inc(&h->reconnects);
		h->failed_attempts = 0;
	}
	if (a & WNH_ACT_CONNECTED) {
		pthread_mutex_lock(&h->lock);
		h->done = true;
		pthread_cond_broadcast(&h->cond);
		pthread_mutex_unlock(&h->lock);
	}
	if (a & WNH_ACT_FAIL_HELD)
		to_io_queues(h, wnh_q_kill);
	if (a & WNH_ACT_FAST_FAIL)
		to_io_queues(h, wnh_q_fast_fail);
}

void wnh_ctrl_event(struct wharf_nvmf_host *h, int ev, int err)
{
	enum wharf_nvmf_host_state s = atomic_load(&h->cstate);
	struct wnh_trans t = wnh_ctrl_next(s, (enum wnh_ev)ev);

	if (ev == WNH_EV_LOSS && err && s != WHARF_NVMF_HOST_NEW &&
	    t.next != WHARF_NVMF_HOST_DELETING && s != WHARF_NVMF_HOST_DEAD)
		atomic_store(&h->last_error, err);
	if (t.next != s) {
		atomic_store(&h->cstate, t.next);
		wharf_ctx_log(h->ctx,
			      t.next == WHARF_NVMF_HOST_LIVE ||
					      t.next == WHARF_NVMF_HOST_DELETING
				      ? WHARF_LOG_INFO
				      : WHARF_LOG_WARN,
			      "nvmf host: %s: %s -> %s on %s%s%s", h->subnqn,
			      wharf_nvmf_host_state_name(s),
			      wharf_nvmf_host_state_name(t.next),
			      wnh_ev_name((enum wnh_ev)ev), err ? ": " : "",
			      err ? strerror(-err) : "");
		if (h->on_state)
			h->on_state(t.next,
				    t.next == WHARF_NVMF_HOST_RESETTING ? err
									: 0,
				    h->state_arg);
	}
	act(h, t.act);
}

/* ------------------------------------------------------------------ */
/* What the queues report (messages to the admin shard)                */
/* ------------------------------------------------------------------ */

static void lost_fn(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host_queue *q = arg;

	(void)shard;
	wnh_ctrl_event(q->h, WNH_EV_LOSS, atomic_load(&q->n.error));
}

static void down_fn(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host *h = ((struct wharf_nvmf_host_queue *)arg)->h;

	(void)shard;
	if (h->down_pending && --h->down_pending == 0)
		wnh_ctrl_event(h, WNH_EV_DOWN, 0);
}

static void up_fn(struct wharf_shard *shard, void *arg)
{
	struct wharf_nvmf_host *h = ((struct wharf_nvmf_host_queue *)arg)->h;
	enum wharf_nvmf_host_state s = atomic_load(&h->cstate);

	(void)shard;
	if ((s == WHARF_NVMF_HOST_NEW || s == WHARF_NVMF_HOST_CONNECTING) &&
	    h->step == NHS_IO_QUEUES && ++h->io_up == h->nio)
		wnh_ctrl_event(h, WNH_EV_UP, 0);
}

void wnh_ctrl_lost(struct wharf_nvmf_host_queue *q)
{
	wnh_post(q->h, q->h->admin.shard, lost_fn, q);
}

void wnh_ctrl_down(struct wharf_nvmf_host_queue *q)
{
	wnh_post(q->h, q->h->admin.shard, down_fn, q);
}

void wnh_ctrl_up(struct wharf_nvmf_host_queue *q)
{
	wnh_post(q->h, q->h->admin.shard, up_fn, q);
}

/* ------------------------------------------------------------------ */
/* Timers, delete                                                      */
/* ------------------------------------------------------------------ */

static void retry_fn(struct wharf_timer *t, void *arg)
{
	(void)t;
	wnh_ctrl_event(arg, WNH_EV_RETRY, 0);
}

static void loss_fn(struct wharf_timer *t, void *arg)
{
	(void)t;
	wnh_ctrl_event(arg, WNH_EV_LOSS_TMO, 0);
}

static void ff_fn(struct wharf_timer *t, void *arg)
{
	(void)t;
	wnh_ctrl_event(arg, WNH_EV_FAST_FAIL, 0);
}

int wnh_ctrl_timers(struct wharf_nvmf_host *h)
{
	int rc = 0;

	if (!h->retry_timer)
		rc = wharf_timer_create(h->admin.shard, retry_fn, h,
					&h->retry_timer);
	if (!rc && !h->loss_timer)
		rc = wharf_timer_create(h->admin.shard, loss_fn, h,
					&h->loss_timer);
	if (!rc && !h->ff_timer)
		rc = wharf_timer_create(h->admin.shard, ff_fn, h, &h->ff_timer);
	return rc;
}

void wnh_ctrl_free(struct wharf_nvmf_host *h)
{
	wharf_timer_destroy(h->retry_timer);
	wharf_timer_destroy(h->loss_timer);
	wharf_timer_destroy(h->ff_timer);
	h->retry_timer = h->loss_timer = h->ff_timer = NULL;
}

void wnh_ctrl_delete(struct wharf_nvmf_host *h)
{
	h->may_shutdown = atomic_load(&h->cstate) == WHARF_NVMF_HOST_LIVE &&
			  h->step == NHS_LIVE && h->admin.state == NHQ_LIVE;
	wnh_ctrl_event(h, WNH_EV_DELETE, 0);
	if (!h->may_shutdown)
		wnh_admin_halt(h);
	for (unsigned i = 0; i < h->want_queues; i++)
		wnh_post(h, h->io[i].shard, wnh_q_close, &h->io[i]);
}
