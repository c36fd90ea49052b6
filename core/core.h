/*
 * wharf core: the context and its shards.
 *
 * A context owns N shards.  A shard is one event loop, normally a thread
 * pinned to one CPU with its memory bound to that CPU's NUMA node; every
 * object (connection, timer, watched fd) belongs to exactly one shard and is
 * only touched by that shard's thread.  Other threads talk to a shard by
 * sending it messages (wharf_shard_send), so nothing on the data path takes
 * a lock.  A shard sending to another shard, and an application thread that
 * registered a wharf_sender, each have a ring of their own to every shard
 * (a lane): senders never contend with each other, and a shard's messages
 * are published in one batch per loop iteration.
 *
 * Each loop iteration a shard runs, within a budget: queued messages, due
 * timers, its pollers, and the callbacks of ready file descriptors (CM event
 * channels, CQ completion channels, ...).  Then it announces a liburcu QSBR
 * quiescent state.  When idle it arms its pollers and blocks in epoll_wait,
 * offline for RCU, until an fd, a message or the next timer wakes it.
 *
 * RCU: shard threads are registered liburcu QSBR readers (urcu-qsbr flavour).
 * Code running in a shard callback is inside a read-side critical section
 * that ends when the callback returns: RCU-protected pointers must not be
 * kept across callbacks.  Writers use urcu_qsbr_synchronize_rcu() /
 * urcu_qsbr_call_rcu(), never from a shard callback for synchronize.
 *
 * App-driven mode: the context starts no thread; the application calls
 * wharf_shard_poll() for each shard from its own threads (e.g. from an
 * existing reactor that watches wharf_shard_fd()).  Everything else is the
 * same.
 *
 * Errors are returned as negative errno values; 0 means success.
 */
#ifndef WHARF_CORE_H
#define WHARF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wharf_numa;
struct wharf_numa_arena;

/** A context (opaque). */
struct wharf_ctx;
/** A shard: one event loop and everything it owns (opaque). */
struct wharf_shard;
/** A watched file descriptor (opaque). */
struct wharf_watch;
/** A poller run every loop iteration (opaque). */
struct wharf_poller;
/** A one-shot, re-armable timer (opaque). */
struct wharf_timer;

/** How an idle shard thread waits for work. */
enum wharf_poll_mode {
	/** Block in epoll_wait as soon as there is no work (the default). */
	WHARF_POLL_EVENT = 0,
	/** Never block: spin over pollers, messages, timers and fds. */
	WHARF_POLL_BUSY = 1,
	/** Spin for adaptive_spin_us after the last work, then block. */
	WHARF_POLL_ADAPTIVE = 2,
};

/** Log levels; a message is emitted when its level <= the context's. */
enum wharf_log_level {
	/** In options: the default level, WHARF_LOG_WARN. */
	WHARF_LOG_DEFAULT = 0,
	/** In options: log nothing. */
	WHARF_LOG_OFF = 1,
	WHARF_LOG_ERROR = 2,
	WHARF_LOG_WARN = 3,
	WHARF_LOG_INFO = 4,
	WHARF_LOG_DEBUG = 5,
};

/**
 * Log callback.  @msg is one line without newline, valid during the call.
 * Called from any thread of the library, concurrently: it must be
 * thread-safe and must not call back into wharf.
 */
typedef void (*wharf_log_fn)(void *arg, enum wharf_log_level level,
			     const char *msg);

/** Options for wharf_ctx_create(); zero means default everywhere. */
struct wharf_ctx_opts {
	/** sizeof(struct wharf_ctx_opts) as compiled by the caller. */
	size_t size;
	/**
	 * Number of shards.  0: one per physical core local to @device
	 * (every core when @device is NULL or its locality is unknown), or
	 * @ncpus when @cpus is set.  Only the CPUs this process may use
	 * count: its cgroup's and its binding's (taskset;
	 * wharf_numa_open()).  With more shards than CPUs, CPUs are shared
	 * (see wharf_numa_place_shards()).
	 */
	unsigned nshards;
	/**
	 * Explicit CPUs (OS indexes), one shard each, in this order; NULL =
	 * chosen by the placement policy.  Each must be one this process may
	 * use (else wharf_ctx_create() fails with -EINVAL).  Not retained.
	 * When set, @nshards must be 0 or @ncpus.  Repeats are allowed
	 * (shared CPU).
	 */
	const int *cpus;
	/** Entries in @cpus. */
	unsigned ncpus;
	/**
	 * RDMA device name (e.g. "mlx5_0") whose NUMA locality drives
	 * placement; NULL = no preference.  Not retained.
	 */
	const char *device;
	/** How idle shard threads wait (ignored when @app_driven). */
	enum wharf_poll_mode poll_mode;
	/** WHARF_POLL_ADAPTIVE spin time in microseconds; 0 = 50. */
	unsigned adaptive_spin_us;
	/** Start no threads; the application calls wharf_shard_poll(). */
	bool app_driven;
	/**
	 * Message queue slots per shard, a power of two in 2 .. 2^24;
	 * 0 = 4096.  A full queue makes wharf_shard_send() fail with
	 * -EAGAIN.
	 */
	unsigned queue_depth;
	/** Maximum level logged; WHARF_LOG_DEFAULT = WHARF_LOG_WARN. */
	enum wharf_log_level log_level;
	/** Log callback; NULL = one line per message on stderr. */
	wharf_log_fn log_fn;
	/** Passed to @log_fn. */
	void *log_arg;
	/**
	 * Message slots of each lane (one per sending shard or wharf_sender
	 * and receiving shard, allocated on the first message), a power of
	 * two in 2 .. 2^24; 0 = 1024.  A full lane makes the send fail with
	 * -EAGAIN.
	 */
	unsigned lane_depth;
};

/**
 * wharf_ctx_opts_init - zero @opts (every default) and set its size.
 * @opts: the options to fill, or NULL (nothing is done).
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_ctx_opts_init(struct wharf_ctx_opts *opts);

/**
 * wharf_ctx_create - create a context and start its shards.
 * @opts: options (NULL = all defaults).  Not retained.  A @size smaller than
 * this header's struct is accepted (missing fields are defaults); a larger
 * one only when the extra bytes are zero.
 * @out: receives the context, owned by the caller (wharf_ctx_destroy()).
 *
 * Discovers the topology (hwloc), creates one NUMA arena per node in use,
 * and unless @opts->app_driven starts one thread per shard, pinned to its
 * CPU with memory bound to its node, registered as a QSBR reader.  Returns
 * once every shard is running.
 *
 * Return: 0; -EINVAL for bad options (size, queue depth, CPU not usable,
 * nshards/ncpus mismatch, poll mode, log level); -ENODEV when @opts->device
 * does not exist; -ENOMEM; -errno from hwloc, epoll, eventfd, pthread or
 * thread binding.
 * Context: any thread except a shard thread; blocks (thread start-up,
 * topology discovery).  No RCU rule.
 */
int wharf_ctx_create(const struct wharf_ctx_opts *opts, struct wharf_ctx **out);

/**
 * wharf_ctx_destroy - stop the shards and free the context.
 * @ctx: context or NULL.
 *
 * From the call on, wharf_shard_send() fails with -ESHUTDOWN.  Every
 * message that was accepted is run exactly once: by its shard before the
 * thread exits, or, when it arrived after that, by the calling thread
 * (wharf_shard_current() then returns its shard).  Then threads are joined
 * and watches, pollers and timers still registered are freed without their
 * callbacks (their handles become invalid; watched fds are not closed).
 * Objects that other modules left in the shard arenas are reported at
 * WHARF_LOG_ERROR.
 *
 * Return: 0; -EDEADLK when called from one of @ctx's shard callbacks, or
 * -EBUSY while a wharf_sender of @ctx is not destroyed (nothing is done).
 * Context: any thread that is not inside a callback of @ctx; application
 * threads must have stopped sending to @ctx and polling it.  Blocks until
 * the shard threads exit.  The caller must not be an online QSBR reader
 * that other threads wait for.
 */
int wharf_ctx_destroy(struct wharf_ctx *ctx);

/**
 * wharf_ctx_shard_count - number of shards.
 * Context: any thread; non-blocking.  No RCU rule.
 */
unsigned wharf_ctx_shard_count(const struct wharf_ctx *ctx);

/**
 * wharf_ctx_shard - shard number @index, or NULL when out of range.
 * The pointer is valid until wharf_ctx_destroy().
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct wharf_shard *wharf_ctx_shard(const struct wharf_ctx *ctx,
				    unsigned index);

/**
 * wharf_ctx_numa - the context's topology snapshot (for placement
 * decisions); owned by the context, valid until wharf_ctx_destroy().
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct wharf_numa *wharf_ctx_numa(const struct wharf_ctx *ctx);

/**
 * wharf_ctx_log - log through the context's callback if @level is enabled.
 * @fmt: printf format; the message is cut at 512 bytes.
 * Context: any thread; does not block unless the callback does.
 * No RCU rule.
 */
void wharf_ctx_log(const struct wharf_ctx *ctx, enum wharf_log_level level,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------------ */
/* Shards                                                                    */
/* ------------------------------------------------------------------------ */

/**
 * wharf_shard_current - the shard whose callback or poll is running on the
 * calling thread, or NULL.
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct wharf_shard *wharf_shard_current(void);

/**
 * wharf_shard_ctx - the context @shard belongs to.
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct wharf_ctx *wharf_shard_ctx(const struct wharf_shard *shard);

/**
 * wharf_shard_index - @shard's index in its context.
 * Context: any thread; non-blocking.  No RCU rule.
 */
unsigned wharf_shard_index(const struct wharf_shard *shard);

/**
 * wharf_shard_cpu - the CPU (OS index) @shard's thread is pinned to, or the
 * CPU placement chose for an app-driven shard (which is not pinned).
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_shard_cpu(const struct wharf_shard *shard);

/**
 * wharf_shard_node - the NUMA node (logical index) @shard's memory is on.
 * Context: any thread; non-blocking.  No RCU rule.
 */
unsigned wharf_shard_node(const struct wharf_shard *shard);

/**
 * wharf_shard_arena - the arena of @shard's node, for objects and buffers
 * the shard owns (see <wharf/numa.h>).  Owned by the context.
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct wharf_numa_arena *wharf_shard_arena(const struct wharf_shard *shard);

/** A message: runs on the target shard's thread with the sender's arg. */
typedef void (*wharf_msg_fn)(struct wharf_shard *shard, void *arg);

/**
 * wharf_shard_send - queue a message for @shard; lock-free.
 * @fn: function to run on @shard's thread (or polling thread).
 * @arg: passed to @fn; ownership passes with the message.
 *
 * Messages from one sending thread to one shard run in the order sent.
 * From a callback of a shard of the same threaded context, the message
 * goes on the sending shard's own lane to @shard (wharf_ctx_opts.lane_depth slots) and
 * is published when the callback's loop iteration ends, with everything
 * else the iteration sent (or at wharf_shard_flush()).  From any other
 * thread it goes on @shard's shared queue (wharf_ctx_opts.queue_depth
 * slots) at once; wharf_sender_send() is the per-thread lane.  A full lane
 * or queue makes the call fail with -EAGAIN: nothing is queued, what the
 * caller's lane held is published, and the shard's send_full counter is
 * incremented; the sender should retry later (or drop).  Sending to the
 * current shard is allowed; the message runs on a later iteration.
 *
 * Return: 0; -EAGAIN when the lane or queue is full; -ESHUTDOWN once
 * wharf_ctx_destroy() has started; -EINVAL for NULL @shard or @fn; -ENOMEM
 * when the first message from a shard to @shard cannot get its lane.
 * Context: any thread, including shard callbacks; non-blocking (one eventfd
 * write when the shard is asleep; the first message on a lane allocates
 * it).  No RCU rule; the RCU read-side section of a sending callback does
 * not extend to @fn.
 */
int wharf_shard_send(struct wharf_shard *shard, wharf_msg_fn fn, void *arg);

/**
 * wharf_shard_flush - publish now what the calling shard callback has sent
 * to other shards of its context (wharf_shard_send() otherwise publishes
 * it when the loop iteration ends).  For the rare callback that must wait
 * for an answer before it returns.
 * Context: a shard callback; elsewhere it does nothing.  Non-blocking (an
 * eventfd write per receiver that is asleep).  No RCU rule.
 */
void wharf_shard_flush(void);

/* ------------------------------------------------------------------------ */
/* Registered senders                                                        */
/* ------------------------------------------------------------------------ */

/** An application thread's lanes to every shard of a context. */
struct wharf_sender;

/** wharf_sender_send() flag: more follow; publish with a later send. */
#define WHARF_SEND_MORE 0x1u

/**
 * wharf_sender_create - register a sender: lanes of its own to the shards
 * of @ctx, so that its messages never contend with other senders' (no
 * read-modify-write shared with them per message).
 * @out: receives the sender, owned by the caller (wharf_sender_destroy()),
 * to be used by one thread at a time.
 *
 * Lanes are allocated on the first message to each shard.  Messages sent
 * through a sender and through wharf_shard_send() from the same thread
 * are not ordered with each other.
 *
 * Return: 0; -EINVAL for NULL arguments; -ESHUTDOWN once
 * wharf_ctx_destroy() has started; -ENOMEM.
 * Context: any thread that is not a shard callback of @ctx (shards have
 * lanes of their own); non-blocking.  No RCU rule.
 */
int wharf_sender_create(struct wharf_ctx *ctx, struct wharf_sender **out);

/**
 * wharf_sender_send - queue a message for @shard on @s's lane to it.
 * @s: the sender.
 * @shard: a shard of the sender's context.
 * @fn: function to run on @shard's thread, as for wharf_shard_send().
 * @arg: passed to @fn; ownership passes with the message.
 * @flags: 0 publishes this message and every one held before it (on every
 * lane of @s); WHARF_SEND_MORE holds it for a later send without the flag
 * or wharf_sender_flush(): one publishing store per lane per batch.
 *
 * Messages sent through @s to one shard run in the order sent.  When the
 * lane is full the call fails with -EAGAIN: nothing is queued, the lane's
 * held messages are published, and @shard's send_full counter counts it.
 *
 * Return: 0; -EAGAIN when the lane is full; -ESHUTDOWN once
 * wharf_ctx_destroy() has started; -EINVAL for NULL arguments, a shard of
 * another context or an unknown flag; -ENOMEM when the first message to
 * @shard cannot get its lane.
 * Context: the thread using @s; non-blocking (one eventfd write per batch
 * when @shard is asleep).  No RCU rule.
 */
int wharf_sender_send(struct wharf_sender *s, struct wharf_shard *shard,
		      wharf_msg_fn fn, void *arg, unsigned flags);

/**
 * wharf_sender_flush - publish every message @s holds (WHARF_SEND_MORE).
 * Return: 0, or -EINVAL for NULL @s.
 * Context: the thread using @s; non-blocking.  No RCU rule.
 */
int wharf_sender_flush(struct wharf_sender *s);

/**
 * wharf_sender_destroy - publish what @s holds and unregister it.
 * @s: sender or NULL.
 *
 * Every message sent through @s still runs; each shard frees its lane from
 * @s once it has run the last of them.  Must come before
 * wharf_ctx_destroy() of the sender's context.
 *
 * Return: 0.
 * Context: the thread using @s; non-blocking.  No RCU rule.
 */
int wharf_sender_destroy(struct wharf_sender *s);

/**
 * wharf_shard_poll - app-driven mode: run one round of @shard's work.
 * @budget: maximum number of items (messages, timers, fd events, poller
 * work) to handle, > 0.
 *
 * Runs queued messages, due timers, pollers and ready fds without blocking.
 * The first call on a thread registers it as a liburcu QSBR reader
 * (unregistered automatically at thread exit); the thread is online during
 * the call and offline between calls, so RCU pointers must not be kept
 * across calls, and the thread must not be registered with urcu-qsbr by the
 * application.  When the call returns with work still pending (budget
 * exhausted), wharf_shard_fd() is readable; otherwise it becomes readable
 * when a message or fd event arrives.  Timers do not make it readable: wait
 * at most wharf_shard_timeout_ms().  Before an idle return the pollers'
 * arm hooks run, as before a threaded shard blocks, so that what they arm
 * (a CQ's notification, say) makes the fd readable too.
 *
 * Return: number of items handled (0 when idle); -EINVAL for a context with
 * threads or budget 0; -EBUSY when another thread is polling @shard or the
 * caller is already inside a poll or callback.
 * Context: any application thread, one at a time per shard; non-blocking.
 */
int wharf_shard_poll(struct wharf_shard *shard, unsigned budget);

/**
 * wharf_shard_fd - an fd (epoll) that is readable when @shard has messages
 * or ready watched fds, for an application reactor in app-driven mode.
 * Owned by the shard: do not close it or read from it.
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_shard_fd(const struct wharf_shard *shard);

/**
 * wharf_shard_timeout_ms - milliseconds until @shard's next timer is due
 * (rounded up, 0 when one is due now), or -1 when no timer is armed.
 * Context: the thread that owns or polls @shard; non-blocking.  No RCU rule.
 */
int wharf_shard_timeout_ms(struct wharf_shard *shard);

/* ------------------------------------------------------------------------ */
/* Watched fds and pollers (called on the owning shard)                      */
/* ------------------------------------------------------------------------ */

/** Event bits for watches; equal to the EPOLL* values. */
enum wharf_watch_events {
	WHARF_WATCH_IN = 0x001,
	WHARF_WATCH_OUT = 0x004,
	WHARF_WATCH_ERR = 0x008,
	WHARF_WATCH_HUP = 0x010,
};

/** Called on the shard thread when the watched fd is ready. */
typedef void (*wharf_watch_fn)(struct wharf_watch *watch, int fd,
			       uint32_t events, void *arg);

/**
 * wharf_shard_watch - call @fn whenever @fd is ready (level-triggered), e.g.
 * a CM event channel or CQ completion channel fd.
 * @events: WHARF_WATCH_IN and/or WHARF_WATCH_OUT (ERR/HUP always reported).
 * @fd: stays owned by the caller, who must unwatch before closing it.
 * @out: receives the watch (may be NULL if never unwatched explicitly).
 *
 * Return: 0; -EINVAL for bad arguments; -EPERM when called from another
 * shard's thread (or from a non-shard thread while @shard's thread runs);
 * -EEXIST when @fd is already watched by @shard; -ENOMEM; -errno from
 * epoll_ctl.
 * Context: @shard's thread (its callbacks), or in app-driven mode any thread
 * not concurrently polling @shard; non-blocking.  No RCU rule.
 */
int wharf_shard_watch(struct wharf_shard *shard, int fd, uint32_t events,
		      wharf_watch_fn fn, void *arg, struct wharf_watch **out);

/**
 * wharf_watch_modify - change the events @watch waits for.
 * Return: 0; -EINVAL; -EPERM (wrong thread, as for wharf_shard_watch());
 * -errno from epoll_ctl.
 * Context: as wharf_shard_watch().  No RCU rule.
 */
int wharf_watch_modify(struct wharf_watch *watch, uint32_t events);

/**
 * wharf_watch_remove - stop watching and free @watch.  Safe from the
 * watch's own callback; no callback runs for it afterwards.
 * Return: 0; -EINVAL for NULL; -EPERM (wrong thread).
 * Context: as wharf_shard_watch().  No RCU rule.
 */
int wharf_watch_remove(struct wharf_watch *watch);

/**
 * Poller: called every loop iteration; returns how much work it did (0 when
 * idle), e.g. completions reaped from a CQ.
 */
typedef int (*wharf_poll_fn)(struct wharf_shard *shard, void *arg);
/**
 * Arm: called before the shard blocks, e.g. ibv_req_notify_cq() then one
 * more poll; returns > 0 when work arrived meanwhile (the shard then does
 * not block), 0 to allow blocking.
 */
typedef int (*wharf_arm_fn)(struct wharf_shard *shard, void *arg);

/**
 * wharf_shard_poller_add - run @poll every iteration and @arm (may be NULL)
 * before blocking.
 * @out: receives the poller (may be NULL).
 * Return: 0; -EINVAL; -EPERM (wrong thread, as for wharf_shard_watch());
 * -ENOMEM.
 * Context: as wharf_shard_watch().  No RCU rule.
 */
int wharf_shard_poller_add(struct wharf_shard *shard, wharf_poll_fn poll,
			   wharf_arm_fn arm, void *arg,
			   struct wharf_poller **out);

/**
 * wharf_poller_remove - stop and free @poller; safe from its own callback.
 * Return: 0; -EINVAL; -EPERM (wrong thread).
 * Context: as wharf_shard_watch().  No RCU rule.
 */
int wharf_poller_remove(struct wharf_poller *poller);

/* ------------------------------------------------------------------------ */
/* Timers (per shard, binary heap: arm and cancel are O(log n))             */
/* ------------------------------------------------------------------------ */

/**
 * wharf_now_ns - the library's clock: CLOCK_MONOTONIC, in nanoseconds.
 *
 * Every wharf timer, deadline and stamp (wharf_timer_arm(),
 * wharf_conn_step_ns(), the NVMe-oF host's timeouts) reads this clock;
 * programs that compare their own times with those use it too.
 * Return: nanoseconds since an unspecified start (the boot), never
 * decreasing.
 * Context: any thread; does not block (vDSO).  No RCU rule.
 */
uint64_t wharf_now_ns(void);

/**
 * wharf_now_ms - wharf_now_ns() in whole milliseconds (rounded down).
 * Context: as wharf_now_ns().
 */
uint64_t wharf_now_ms(void);

/** Called on the shard thread when @timer expires (it is then disarmed). */
typedef void (*wharf_timer_fn)(struct wharf_timer *timer, void *arg);

/**
 * wharf_timer_create - create a disarmed timer owned by @shard.
 * @out: receives the timer; free with wharf_timer_destroy().
 * Return: 0; -EINVAL; -EPERM (wrong thread, as for wharf_shard_watch());
 * -ENOMEM.
 * Context: as wharf_shard_watch().  No RCU rule.
 */
int wharf_timer_create(struct wharf_shard *shard, wharf_timer_fn fn, void *arg,
		       struct wharf_timer **out);

/**
 * wharf_timer_arm - (re)arm @timer to fire once, @delay_ns from now
 * (CLOCK_MONOTONIC).  Re-arming an armed timer moves its deadline.  Timers
 * fire in deadline order, equal deadlines in arming order, with up to a
 * millisecond of lateness when the shard sleeps.
 * Return: 0; -EINVAL; -EPERM (wrong thread); -ENOMEM (heap growth).
 * Context: as wharf_shard_watch(); safe from the timer's own callback.
 * No RCU rule.
 */
int wharf_timer_arm(struct wharf_timer *timer, uint64_t delay_ns);

/**
 * wharf_timer_cancel - disarm @timer, O(log n).
 * Return: 1 when it was armed, 0 when not; -EINVAL; -EPERM (wrong thread).
 * Context: as wharf_shard_watch().  No RCU rule.
 */
int wharf_timer_cancel(struct wharf_timer *timer);

/**
 * wharf_timer_armed - whether @timer is armed.
 * Context: as wharf_shard_watch().  No RCU rule.
 */
bool wharf_timer_armed(const struct wharf_timer *timer);

/**
 * wharf_timer_destroy - cancel and free @timer (NULL is ignored); safe from
 * its own callback.
 * Return: 0; -EPERM (wrong thread; nothing is freed).
 * Context: as wharf_shard_watch().  No RCU rule.
 */
int wharf_timer_destroy(struct wharf_timer *timer);

/* ------------------------------------------------------------------------ */
/* Counters                                                                  */
/* ------------------------------------------------------------------------ */

/**
 * Per-shard counters, monotonic unless noted.  Each value is read
 * atomically; the snapshot as a whole is not one instant.
 */
struct wharf_shard_stats {
	/** sizeof(struct wharf_shard_stats) as compiled by the caller. */
	size_t size;
	/** Loop iterations (threaded) or wharf_shard_poll() calls. */
	uint64_t loops;
	/** Messages run. */
	uint64_t msgs;
	/** Sends refused with -EAGAIN because the queue was full. */
	uint64_t send_full;
	/** Eventfd wake-ups written by senders. */
	uint64_t wakeups;
	/** Times the shard thread blocked in epoll_wait. */
	uint64_t sleeps;
	/** Watch callbacks run. */
	uint64_t fd_events;
	/** Timer callbacks run. */
	uint64_t timers_fired;
	/** Work reported by pollers. */
	uint64_t poller_work;
	/** Gauge: timers armed now. */
	uint64_t timers_armed;
	/** Gauge: fds watched now. */
	uint64_t watches;
	/** Gauge: lanes this shard receives on now. */
	uint64_t lanes;
};

/**
 * wharf_shard_stats - snapshot @shard's counters into @out.
 * @out: @out->size must be set; up to that many bytes are written.
 * Return: 0, or -EINVAL for NULL arguments or a too small @out->size.
 * Context: any thread, concurrently with the shard; non-blocking, no lock.
 * No RCU rule.
 */
int wharf_shard_stats(const struct wharf_shard *shard,
		      struct wharf_shard_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CORE_H */
