/*
 * Context and shard internals shared by the core/ sources.
 *
 * Field groups are laid out by who writes them: the ring's tail and the
 * wake-up words are written by senders on any thread; the rest of a shard
 * is written only by the thread that owns it (its own thread, or the
 * application thread polling it), and read by others only through atomics
 * (counters) or after set-up (identity fields).
 */
#ifndef WHARF_CORE_SHARD_H
#define WHARF_CORE_SHARD_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>

#include <wharf/core.h>
#include <wharf/numa.h>

#include "core/lane.h"
#include "core/list.h"
#include "core/ring.h"
#include "core/timer_heap.h"

/* Items one threaded loop iteration handles per kind of work. */
#define WHARF_LOOP_BUDGET 256
/* epoll events fetched per epoll_wait. */
#define WHARF_EPOLL_BATCH 64
/* While busy, a threaded shard checks its fds every this many iterations. */
#define WHARF_FD_CHECK_EVERY 16

struct wharf_watch {
	struct wharf_shard *shard;
	int fd;
	uint32_t events;
	bool dead; /* removed; freed at the end of the iteration */
	wharf_watch_fn fn;
	void *arg;
	struct wharf_watch *prev, *next; /* shard's live or dead list */
};

struct wharf_poller {
	struct wharf_shard *shard;
	wharf_poll_fn poll;
	wharf_arm_fn arm;
	void *arg;
	bool dead; /* removed; unlinked at the end of the iteration */
	struct wharf_poller *next;
};

struct wharf_timer {
	struct wcore_heap_node node; /* deadline + heap position */
	struct wharf_shard *shard;
	wharf_timer_fn fn;
	void *arg;
	struct wcore_list link; /* on shard->timer_list */
};

/* Written by the owner only; atomics so that snapshots are race-free. */
struct wcore_shard_counters {
	_Atomic uint64_t loops;
	_Atomic uint64_t msgs;
	_Atomic uint64_t sleeps;
	_Atomic uint64_t fd_events;
	_Atomic uint64_t timers_fired;
	_Atomic uint64_t poller_work;
	_Atomic uint64_t timers_armed;
	_Atomic uint64_t watches;
	_Atomic uint64_t lanes;
};

/*
 * A sender's lanes, one per receiving shard of its context, opened on the
 * first message (msg.c).  Owner only: the sending shard, or the thread
 * using a wharf_sender.
 */
struct wcore_outbox {
	struct wcore_lane **lanes; /* [nshards] by receiver index, or NULL */
	struct wcore_lane **dirty; /* [nshards]: written since the last flush */
	unsigned ndirty;
};

struct wharf_sender {
	struct wharf_ctx *ctx;
	struct wcore_outbox out;
};

enum wcore_shard_state {
	WHARF_SHARD_NEW,     /* created, thread not started */
	WHARF_SHARD_RUNNING, /* thread in its loop (or app-driven) */
	WHARF_SHARD_FAILED,  /* thread could not bind or register */
	WHARF_SHARD_EXITED,  /* thread left its loop */
};

struct wharf_shard {
	/* Senders. */
	struct wcore_ring ring;		  /* from threads without a lane */
	alignas(64) _Atomic int sleeping; /* owner may block: wake it */
	/* A threaded busy-polling shard: it never blocks, so its lanes are
	 * published without the wake-up protocol (set at creation). */
	bool never_sleeps;
	/* Lanes opened to this shard, not yet adopted (a Treiber stack). */
	_Atomic(struct wcore_lane *) adopt;
	_Atomic uint64_t send_full;
	_Atomic uint64_t wakeups;

	/* Set up once, then read-only. */
	alignas(64) struct wharf_ctx *ctx;
	unsigned index;
	int cpu;
	unsigned node;
	struct wharf_numa_arena *arena;
	int epfd;
	int evfd;
	pthread_t thread;

	/* Control. */
	_Atomic bool stop;
	_Atomic int polling; /* app-driven: a thread is in wharf_shard_poll */
	enum wcore_shard_state state; /* under ctx->start_lock */
	int start_err;

	/* Owner only. */
	alignas(64) struct wcore_heap timers;
	struct wcore_list timer_list; /* every timer, armed or not */
	struct wharf_watch *watch_list;
	struct wharf_watch *dead_watches;
	struct wharf_poller *pollers;
	bool dead_pollers;
	uint64_t now_ns;
	struct wcore_outbox out;    /* lanes this shard sends on */
	struct wcore_lane *in;	    /* adopted lanes this shard receives on */
	struct wcore_lane *in_next; /* where the next pass starts (NULL: in) */
	unsigned nin;
	struct wcore_shard_counters stats;
};

struct wharf_ctx {
	struct wharf_ctx_opts opts; /* cpus and device not retained */
	struct wharf_numa *numa;
	struct wharf_numa_arena **arenas; /* [node count], NULL if unused */
	unsigned nshards;
	struct wharf_shard **shards;
	_Atomic bool closing;
	_Atomic unsigned senders; /* live wharf_sender handles */

	pthread_mutex_t start_lock;
	pthread_cond_t start_cond;
	unsigned start_pending;
};

/* The shard the calling thread is running, or NULL (thread-local). */
void wcore_shard_set_current(struct wharf_shard *shard);

/* 0 when the caller may touch @shard's owner-only state, else -EPERM. */
int wcore_shard_check_owner(const struct wharf_shard *shard);

/* Owner-only counter increment (single writer, atomic for readers). */
static inline void wcore_count(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_store_explicit(
		counter,
		atomic_load_explicit(counter, memory_order_relaxed) + n,
		memory_order_relaxed);
}

/* msg.c */
unsigned wcore_shard_run_msgs(struct wharf_shard *shard, unsigned budget);
bool wcore_shard_msgs_pending(struct wharf_shard *shard);
void wcore_shard_kick(struct wharf_shard *shard);
int wcore_outbox_init(struct wcore_outbox *ob, unsigned nshards);
int wcore_outbox_put(struct wcore_outbox *ob, struct wharf_shard *to,
		     wharf_msg_fn fn, void *arg);
void wcore_outbox_flush(struct wcore_outbox *ob);
void wcore_outbox_close(struct wcore_outbox *ob, unsigned nshards);
void wcore_shard_free_lanes(struct wharf_shard *shard);

/* timer.c */
unsigned wcore_shard_run_timers(struct wharf_shard *shard, unsigned budget);
void wcore_shard_free_timers(struct wharf_shard *shard);

/* watch.c */
unsigned wcore_shard_dispatch_fds(struct wharf_shard *shard, const void *events,
				  int n);
unsigned wcore_shard_run_pollers(struct wharf_shard *shard);
int wcore_shard_arm_pollers(struct wharf_shard *shard);
void wcore_shard_sweep(struct wharf_shard *shard);
void wcore_shard_free_watches(struct wharf_shard *shard);

/* loop.c */
void *wcore_shard_thread(void *shard);

/* log.c */
enum wharf_log_level wcore_log_effective(enum wharf_log_level level);

#endif /* WHARF_CORE_SHARD_H */
