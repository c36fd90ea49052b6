/*
 * The shard loop.
 *
 * One iteration runs, each within the budget: ready fds (epoll with no
 * wait; a busy threaded shard only looks every 16th iteration), due timers
 * (after the fds, and only on iterations that looked at them while any
 * are watched), queued messages, then every poller; then the shard is in a QSBR quiescent
 * state.  The threaded loop then decides by poll mode
 * whether to spin or block:
 *
 *   BUSY      never blocks;
 *   ADAPTIVE  blocks after adaptive_spin_us without work;
 *   EVENT     blocks as soon as an iteration finds no work.
 *
 * What the iteration sent to other shards is published at its end, one
 * store per lane (msg.c).
 *
 * Blocking (shard_sleep) announces `sleeping` to senders (see msg.c), arms
 * the pollers and waits in epoll_wait until the next timer, offline for
 * RCU.  App-driven shards run the same iteration from wharf_shard_poll().
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <urcu/urcu-qsbr.h>

#include "core/shard.h"

static _Thread_local struct wharf_shard *tls_current;

struct wharf_shard *wharf_shard_current(void)
{
	return tls_current;
}

void wcore_shard_set_current(struct wharf_shard *shard)
{
	tls_current = shard;
}

int wcore_shard_check_owner(const struct wharf_shard *shard)
{
	if (tls_current == shard)
		return 0;
	if (tls_current)
		return -EPERM; /* inside another shard */
	/* App-driven, nobody polling: the application serialises. */
	if (shard->ctx->opts.app_driven &&
	    !atomic_load_explicit(&shard->polling, memory_order_acquire))
		return 0;
	return -EPERM;
}

uint64_t wharf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t wharf_now_ms(void)
{
	return wharf_now_ns() / 1000000u;
}

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

/*
 * One pass over every source of work; returns the items handled.  The
 * non-blocking epoll_wait is a syscall, so the threaded loop skips it when
 * @check_fds is false (see shard_loop).
 */
static unsigned shard_iterate(struct wharf_shard *shard, unsigned budget,
			      bool check_fds)
{
	struct epoll_event ev[WHARF_EPOLL_BATCH];
	unsigned work = 0;
	int n;

	/*
	 * Ready fds before due timers: an event that arrived before a
	 * step's deadline (an rdma_cm completion, say) is handled before the
	 * deadline is judged.  While busy, timers run only on the
	 * iterations that looked at the fds (or when nothing is watched),
	 * for the same reason.
	 */
	shard->now_ns = wharf_now_ns();
	if (check_fds) {
		n = epoll_wait(shard->epfd, ev,
			       (int)min_u(budget, WHARF_EPOLL_BATCH), 0);
		if (n > 0) {
			work += wcore_shard_dispatch_fds(shard, ev, n);
			shard->now_ns = wharf_now_ns();
		}
	}
	if (check_fds || !shard->watch_list)
		work += wcore_shard_run_timers(shard, budget);
	work += wcore_shard_run_msgs(shard, budget);
	work += wcore_shard_run_pollers(shard);
	/* What this pass sent to other shards, one publish per lane. */
	wcore_outbox_flush(&shard->out);
	wcore_shard_sweep(shard);
	wcore_count(&shard->stats.loops, 1);
	return work;
}

/*
 * Announces `sleeping`, then re-checks the ring for any claimed position
 * and the lanes for any published message (the protocol is in msg.c).
 * Returns true when the caller may block.
 */
static bool shard_prepare_sleep(struct wharf_shard *shard)
{
	atomic_store_explicit(&shard->sleeping, 1, memory_order_seq_cst);
	return !wcore_shard_msgs_pending(shard) &&
	       !atomic_load_explicit(&shard->stop, memory_order_acquire);
}

/*
 * Arms the pollers (e.g. a CQ's notification) and publishes what their
 * hooks sent; true when one of them found work.
 */
static bool shard_arm(struct wharf_shard *shard)
{
	bool work = wcore_shard_arm_pollers(shard);

	wcore_outbox_flush(&shard->out);
	return work;
}

static void shard_sleep(struct wharf_shard *shard)
{
	struct epoll_event ev[WHARF_EPOLL_BATCH];
	int n;

	if (!shard_prepare_sleep(shard) || shard_arm(shard)) {
		atomic_store_explicit(&shard->sleeping, 0,
				      memory_order_relaxed);
		/* A sender between claim and publish: give it the CPU. */
		if (wcore_ring_pending(&shard->ring) &&
		    !wcore_ring_ready(&shard->ring))
			sched_yield();
		return;
	}
	wcore_count(&shard->stats.sleeps, 1);
	urcu_qsbr_thread_offline();
	n = epoll_wait(shard->epfd, ev, WHARF_EPOLL_BATCH,
		       wharf_shard_timeout_ms(shard));
	urcu_qsbr_thread_online();
	atomic_store_explicit(&shard->sleeping, 0, memory_order_relaxed);
	if (n > 0) {
		shard->now_ns = wharf_now_ns();
		wcore_shard_dispatch_fds(shard, ev, n);
		wcore_outbox_flush(&shard->out);
		wcore_shard_sweep(shard);
	}
}

static void shard_loop(struct wharf_shard *shard)
{
	const struct wharf_ctx_opts *opts = &shard->ctx->opts;
	uint64_t spin_ns = (uint64_t)opts->adaptive_spin_us * 1000;
	uint64_t last_work = wharf_now_ns();
	unsigned busy_iterations = 0;

	while (!atomic_load_explicit(&shard->stop, memory_order_acquire)) {
		/*
		 * Watched fds are checked when the last iteration was idle,
		 * else every WHARF_FD_CHECK_EVERY iterations; with none
		 * watched, never (the message eventfd is only for sleeping).
		 */
		bool check_fds = shard->watch_list &&
				 (!busy_iterations ||
				  busy_iterations % WHARF_FD_CHECK_EVERY == 0);
		unsigned work =
			shard_iterate(shard, WHARF_LOOP_BUDGET, check_fds);

		urcu_qsbr_quiescent_state();
		if (work) {
			busy_iterations++;
			last_work = shard->now_ns;
			continue;
		}
		busy_iterations = 0;
		switch (opts->poll_mode) {
		case WHARF_POLL_BUSY:
			break;
		case WHARF_POLL_ADAPTIVE:
			if (shard->now_ns - last_work < spin_ns)
				break;
			shard_sleep(shard);
			last_work = wharf_now_ns();
			break;
		case WHARF_POLL_EVENT:
			shard_sleep(shard);
			break;
		}
	}
	/* Stopping: senders now get -ESHUTDOWN; run what they queued. */
	wcore_outbox_flush(&shard->out);
	while (wcore_shard_run_msgs(shard, WHARF_LOOP_BUDGET))
		urcu_qsbr_quiescent_state();
	wcore_outbox_flush(&shard->out);
	wcore_shard_sweep(shard);
}

static void shard_started(struct wharf_shard *shard, int err)
{
	struct wharf_ctx *ctx = shard->ctx;

	pthread_mutex_lock(&ctx->start_lock);
	shard->start_err = err;
	shard->state = err ? WHARF_SHARD_FAILED : WHARF_SHARD_RUNNING;
	ctx->start_pending--;
	pthread_cond_broadcast(&ctx->start_cond);
	pthread_mutex_unlock(&ctx->start_lock);
}

void *wcore_shard_thread(void *arg)
{
	struct wharf_shard *shard = arg;
	char name[16];
	int err;

	snprintf(name, sizeof(name), "wharf-shard%u", shard->index);
	pthread_setname_np(pthread_self(), name);
	err = wharf_numa_bind_thread(shard->ctx->numa, shard->cpu);
	if (err) {
		wharf_ctx_log(shard->ctx, WHARF_LOG_ERROR,
			      "shard %u: cannot bind to cpu %d: %d",
			      shard->index, shard->cpu, err);
		shard_started(shard, err);
		return NULL;
	}
	urcu_qsbr_register_thread();
	tls_current = shard;
	shard_started(shard, 0);
	shard_loop(shard);
	tls_current = NULL;
	urcu_qsbr_unregister_thread();
	return NULL;
}

/*
 * App threads become QSBR readers on their first poll and stay registered
 * (offline between polls) until they exit, when the key destructor
 * unregisters them.
 */
static pthread_key_t qsbr_key;
static pthread_once_t qsbr_once = PTHREAD_ONCE_INIT;
static _Thread_local bool qsbr_registered;

static void qsbr_thread_exit(void *unused)
{
	(void)unused;
	urcu_qsbr_unregister_thread();
}

static void qsbr_key_create(void)
{
	pthread_key_create(&qsbr_key, qsbr_thread_exit);
}

static void qsbr_online(void)
{
	if (qsbr_registered) {
		urcu_qsbr_thread_online();
		return;
	}
	pthread_once(&qsbr_once, qsbr_key_create);
	urcu_qsbr_register_thread(); /* registers online */
	pthread_setspecific(qsbr_key, &qsbr_registered);
	qsbr_registered = true;
}

int wharf_shard_poll(struct wharf_shard *shard, unsigned budget)
{
	unsigned work;

	if (!shard || !budget || !shard->ctx->opts.app_driven)
		return -EINVAL;
	if (tls_current)
		return -EBUSY;
	if (atomic_exchange_explicit(&shard->polling, 1, memory_order_acquire))
		return -EBUSY;
	qsbr_online();
	tls_current = shard;
	atomic_store_explicit(&shard->sleeping, 0, memory_order_relaxed);

	work = shard_iterate(shard, budget, true);
	urcu_qsbr_quiescent_state();

	/*
	 * Leave the fd readable if work remains, else arm the wake-ups: the
	 * messages', and the pollers' (their arm hooks, as before blocking).
	 */
	if (work >= budget || !shard_prepare_sleep(shard) || shard_arm(shard))
		wcore_shard_kick(shard);
	tls_current = NULL;
	urcu_qsbr_thread_offline();
	atomic_store_explicit(&shard->polling, 0, memory_order_release);
	return (int)work;
}

int wharf_shard_fd(const struct wharf_shard *shard)
{
	return shard->epfd;
}
