/*
 * <wharf/qp.h> - queue pairs, shared receive queues and completion queues.
 *
 * Three objects, each owned by one thread:
 *  - wharf_qp_dev: one per RDMA device per context: the protection
 *    domain, the device's limits, its asynchronous events forwarded to
 *    the shard that owns each QP or SRQ;
 *  - wharf_qp_res: one per (shard, device): the completion queues the
 *    shard polls, a shared receive queue of registered buffers on the
 *    shard's NUMA node, and a pool of QPs pre-created in RESET;
 *  - wharf_qp: one RC QP on its res's CQs (and SRQ unless a private
 *    receive queue was asked for); its owner (e.g. the cm) sets its
 *    callbacks.
 *
 * Work requests embed a struct wharf_wr tagged with the caller's type;
 * completions hand it back (wharf_wr_entry() checks the tag).  Posts are
 * flushed once per shard loop iteration; WRs beyond the send queue or
 * the negotiated initiator depth wait in order.  on_recv()'s buffer is
 * the library's unless the callback keeps it (WHARF_QP_RECV_KEEP, then
 * wharf_qp_res_recv_put()).  A closed QP reports on_closed() once every
 * WR has completed; a QP number goes back to the pool only after its
 * connection's timewait and a quarantine.  Sizes no device resource can
 * hold are -EINVAL up front (wharf_qp_res_opts_fit()); what a shard runs
 * out of at run time fails that one take.  Errors are negative errno
 * values (verbs' positive values and librdmacm's -1/errno translated).
 *
 * The rules in full - data path, receive buffers, teardown, quarantine,
 * admission, limits, depths: docs/design/qp.md.
 */
#ifndef WHARF_QP_H
#define WHARF_QP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rdma_cm_id;
struct wharf_ctx;
struct wharf_shard;

/** A device's PD, attributes and async-event reader (opaque). */
struct wharf_qp_dev;
/** A shard's CQ, SRQ, receive buffers and QP pool on one device (opaque). */
struct wharf_qp_res;
/** One RC queue pair (opaque). */
struct wharf_qp;

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */
/* ------------------------------------------------------------------------ */

/** Options for wharf_qp_dev_open(); zero means default everywhere. */
struct wharf_qp_dev_opts {
	/** sizeof(struct wharf_qp_dev_opts) as compiled by the caller. */
	size_t size;
	/** Index of the shard that reads the async events; default 0. */
	unsigned async_shard;
};

/**
 * wharf_qp_dev_opts_init - zero @opts and set its size.
 * @opts: the options to fill, or NULL (nothing is done).
 *
 * Start every struct wharf_qp_dev_opts with this call, then set the fields
 * to change, so that a caller built against this header passes a valid
 * size to wharf_qp_dev_open().
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_qp_dev_opts_init(struct wharf_qp_dev_opts *opts);

/**
 * wharf_qp_dev_open - set up qp's per-device state for @verbs.
 * @ctx: the context whose shards will own resources on the device; must
 * outlive the device.
 * @verbs: the device context, e.g. an rdma_cm_id's ->verbs (librdmacm opens
 * one per device and process); not owned, must stay open until
 * wharf_qp_dev_close() returned.  Open at most one wharf_qp_dev per @verbs:
 * its async_fd must have a single reader.
 * @opts: options or NULL.  Not retained.
 * @out: receives the device, owned by the caller.
 *
 * Allocates a PD, queries the device, makes async_fd non-blocking and
 * starts reading it on the async shard (directly when the caller may watch
 * fds for that shard, else through a message).  From then on wharf is the
 * only reader of the context's async events: events of QPs the process
 * created on @verbs outside wharf are acknowledged and logged, not
 * delivered anywhere.  Do not create QPs or SRQs on wharf_qp_dev_pd().
 *
 * Return: 0; -EINVAL for NULL arguments or bad options (size, shard index);
 * -ENOMEM; -errno from ibv_alloc_pd, ibv_query_device, fcntl or the watch.
 * Context: any thread; blocks in verbs calls.  No RCU rule.
 */
int wharf_qp_dev_open(struct wharf_ctx *ctx, struct ibv_context *verbs,
		      const struct wharf_qp_dev_opts *opts,
		      struct wharf_qp_dev **out);

/**
 * wharf_qp_dev_close - stop reading async events and free the device.
 * @dev: device or NULL.
 *
 * Every wharf_qp_res of @dev must have been destroyed, and every memory
 * region the application registered on wharf_qp_dev_pd() deregistered.
 * Async messages still in flight to shards hold a reference; the memory
 * goes with the last.
 *
 * Return: 0; -EBUSY while resources exist or the PD is still in use
 * (nothing is done); -EPERM when called from a shard thread other than the
 * async shard; other -errno from ibv_dealloc_pd (nothing is done); -errno
 * from wharf_shard_send() when the watch could not be removed (the device
 * is freed anyway).
 * Context: a thread that is not a shard of @dev's context (blocks until the
 * async shard dropped its watch; in app-driven mode someone must keep
 * polling it), or the async shard itself (non-blocking).  No RCU rule.
 */
int wharf_qp_dev_close(struct wharf_qp_dev *dev);

/**
 * wharf_qp_dev_pd - the device's protection domain, for registering the
 * application's memory (RDMA READ/WRITE targets).  Owned by @dev.  Only
 * wharf creates QPs and SRQs on it (the async reader tells its own QPs
 * from others by their PD).
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct ibv_pd *wharf_qp_dev_pd(const struct wharf_qp_dev *dev);

/**
 * wharf_qp_dev_attr - the device attributes queried at open (max_qp_wr,
 * max_qp_rd_atom, max_qp_init_rd_atom, max_srq_wr, max_cqe, ...).  Owned by
 * @dev.
 * Context: any thread; non-blocking.  No RCU rule.
 */
const struct ibv_device_attr *wharf_qp_dev_attr(const struct wharf_qp_dev *dev);

/**
 * wharf_qp_dev_verbs - the ibv_context @dev was opened on.
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct ibv_context *wharf_qp_dev_verbs(const struct wharf_qp_dev *dev);

/* ------------------------------------------------------------------------ */
/* Per-shard resources                                                       */
/* ------------------------------------------------------------------------ */

/** Default SRQ depth (nvmet: 1024 per completion vector). */
#define WHARF_QP_DEFAULT_SRQ_DEPTH 1024u
/** Default receive buffer size (bytes). */
#define WHARF_QP_DEFAULT_RECV_SIZE 4096u
/** Default receive credits (SRQ buffers) claimed per QP. */
#define WHARF_QP_DEFAULT_RECV_CREDITS 32u
/** Default send queue depth (max_send_wr). */
#define WHARF_QP_DEFAULT_SQ_DEPTH 128u
/** Default quarantine after timewait exit, milliseconds. */
#define WHARF_QP_DEFAULT_QUARANTINE_MS 2000u
/** Scatter/gather entries a wharf_wr carries. */
#define WHARF_WR_MAX_SGE 4

/** Options for wharf_qp_res_create(); zero means default everywhere. */
struct wharf_qp_res_opts {
	/** sizeof(struct wharf_qp_res_opts) as compiled by the caller. */
	size_t size;
	/**
	 * SRQ depth = number of receive buffers; 0 = 1024.  -EINVAL above
	 * the device's max_srq_wr or max_cqe (see Limits above).
	 */
	uint32_t srq_depth;
	/** Bytes per receive buffer; 0 = 4096. */
	uint32_t recv_buf_size;
	/** Buffers reposted per ibv_post_srq_recv() call; 0 = 32. */
	uint32_t recv_batch;
	/**
	 * SRQ limit (low-water mark): fewer posted buffers raise
	 * IBV_EVENT_SRQ_LIMIT_REACHED, which triggers a refill; 0 =
	 * srq_depth / 4.
	 */
	uint32_t srq_limit;
	/**
	 * Default receive credits per QP (admission, see above), and the
	 * default private receive queue depth; 0 = 32.
	 */
	uint32_t recv_credits;
	/**
	 * Buffers kept out of admission for connect/control traffic; 0 =
	 * srq_depth / 16 (at least 1).  Must be < srq_depth.
	 */
	uint32_t recv_reserve;
	/** Default send queue depth per QP; 0 = 128 (<= device max_qp_wr). */
	uint32_t sq_depth;
	/** Scatter/gather entries per send WR; 0 = WHARF_WR_MAX_SGE. */
	uint32_t max_send_sge;
	/**
	 * Inline data bytes per send WR; 0 = none.  A SEND or RDMA WRITE of
	 * at most this many bytes is posted with IBV_SEND_INLINE: the device
	 * copies it at post time and its lkey is not used.  A device that
	 * refuses the size (ibv_create_qp -EINVAL) gets QPs without inline
	 * data, and the res then posts every WR from registered memory.
	 */
	uint32_t max_inline_data;
	/**
	 * Initial entries of each of the res's CQs (one for receives: the
	 * SRQ and private receive queues; one or more for sends: every QP's
	 * send queue); 0 = srq_depth for the receive CQ, pool_size send
	 * queues for a send CQ.  Each grows on demand up to @cq_max; when no
	 * send CQ can hold a new QP's send queue, another send CQ is created
	 * (up to @send_cq_max).
	 */
	uint32_t cq_size;
	/**
	 * Growth limit of each CQ; 0 = the device's max_cqe, which is also
	 * the most it may be (see "Limits" above).
	 */
	uint32_t cq_max;
	/** Completion vector of the CQ; default 0. */
	int comp_vector;
	/** QPs kept pre-created in RESET; 0 = 64.  Set no_pool for none. */
	uint32_t pool_size;
	/**
	 * Refill when fewer QPs are free; 0 = pool_size / 2.  The pool is
	 * filled to pool_size at creation, then refilled to pool_size
	 * whenever it falls below this mark.  QPs coming back from
	 * connections are kept while fewer than 2 * pool_size are free
	 * (recycling beats creating), destroyed beyond.
	 */
	uint32_t pool_low_water;
	/** QPs created per refill step (one step per timer tick); 0 = 8. */
	uint32_t pool_batch;
	/** No QP pool: every take creates a QP, every release destroys. */
	bool no_pool;
	/** Quarantine after timewait exit, ms; 0 = 2000.  See above. */
	uint32_t quarantine_ms;
	/** Set quarantine to zero (tests and benchmarks). */
	bool no_quarantine_delay;
	/** No SRQ: every QP gets a private receive queue. */
	bool no_srq;
	/**
	 * How long a closing QP waits for its receive side to drain
	 * (IBV_EVENT_QP_LAST_WQE_REACHED on the SRQ, flushed receives on a
	 * private queue) before assuming it, ms; 0 = 200.  Devices that never
	 * raise LAST_WQE_REACHED (rxe before Linux 6.10) always wait this
	 * long; see last_wqe_timeouts.  Such a QP is still recycled by its
	 * fate: receive completions reach only connected QPs, a TIMEWAIT_EXIT
	 * QP spends seconds in quarantine where a late one is dropped, and an
	 * UNUSED one never received anything.
	 */
	uint32_t last_wqe_timeout_ms;
	/**
	 * Receive buffers the SRQ may grow to (see Admission above), in
	 * chunks of srq_depth; 0 = srq_depth (a fixed SRQ).  -EINVAL below
	 * srq_depth; clamped to the device's max_srq_wr, to cq_max and to
	 * max_mr / 2 chunks (see Limits above).  The SRQ is created for this
	 * many work requests.
	 */
	uint32_t srq_max;
	/**
	 * Send CQs the res may create, 1 to 1024; 0 = 32.  With @cq_max
	 * entries each, a shard holds up to send_cq_max * cq_max send queue
	 * entries: its QPs' sq_depth summed.
	 */
	uint32_t send_cq_max;
};

/**
 * wharf_qp_res_opts_init - zero @opts and set its size.
 * @opts: the options to fill, or NULL (nothing is done).
 *
 * Start every struct wharf_qp_res_opts with this call, then set the fields
 * to change, so that a caller built against this header passes a valid
 * size to wharf_qp_res_create().
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_qp_res_opts_init(struct wharf_qp_res_opts *opts);

/**
 * wharf_qp_res_opts_fit - check res options against a device's limits
 * before any res is created (see Limits above).
 * @dev: the device.
 * @opts: the options, or NULL for the defaults.  Not retained.
 * @out: receives the options a res on @dev would run with (defaults
 * filled, ceilings clamped), or NULL; @out->size must be set.
 *
 * Logs one warning per option clamped and one error per option refused,
 * each naming the option, the value, and the device limit.
 * Return: 0 when wharf_qp_res_create() would accept @opts (possibly
 * clamped); -EINVAL when an option is refused, or on a bad argument
 * (@dev NULL, @opts->size or @out->size too small).
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_qp_res_opts_fit(const struct wharf_qp_dev *dev,
			  const struct wharf_qp_res_opts *opts,
			  struct wharf_qp_res_opts *out);

/**
 * wharf_qp_res_create - create @shard's resources on @dev.
 * @dev: the device; must outlive the resources.
 * @shard: the owning shard.  A shard may have several res on one device
 * (each its own SRQ, CQs and pool: wharf_cm_opts.res_per_device), when
 * one cannot hold all its QPs.
 * @opts: options or NULL.  Not retained.
 * @out: receives the resources, owned by @shard's thread.
 *
 * Creates the CQ (and its channel, poller and watch), the SRQ and its
 * registered buffers (posted), and starts filling the QP pool in the
 * background.
 *
 * Return: 0; -EINVAL for NULL arguments or bad options (size, depths above
 * the device limits, reserve >= srq_depth, low water > pool size); -EPERM
 * (wrong thread, as for wharf_shard_watch()); -ENOMEM; -errno from verbs.
 * Context: @shard's thread (its callbacks), or in app-driven mode any thread
 * not concurrently polling @shard; blocks in verbs calls.  No RCU rule.
 */
int wharf_qp_res_create(struct wharf_qp_dev *dev, struct wharf_shard *shard,
			const struct wharf_qp_res_opts *opts,
			struct wharf_qp_res **out);

/**
 * wharf_qp_res_destroy - destroy @res.
 * @res: resources or NULL.
 *
 * Every QP taken from @res must have been released and drained
 * (quarantined and pooled QPs are destroyed here).  Receive buffers held
 * with WHARF_QP_RECV_KEEP become invalid.
 *
 * Return: 0; -EBUSY while QPs are in use or draining (nothing is done);
 * -EPERM (wrong thread).
 * Context: as wharf_qp_res_create(); blocks in verbs calls.  No RCU rule.
 */
int wharf_qp_res_destroy(struct wharf_qp_res *res);

/**
 * wharf_qp_res_shard - the shard that owns @res.
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct wharf_shard *wharf_qp_res_shard(const struct wharf_qp_res *res);

/**
 * wharf_qp_res_admit - whether @res would admit a QP of its default send
 * queue depth claiming @credits receive credits (0 = the res default):
 * now, or once its SRQ has grown as far as srq_max allows and its send
 * CQs as far as cq_max and send_cq_max allow.  wharf_qp_take() makes the
 * same checks, grows what it must, and claims them.
 * Return: 0 when it would; -EBUSY when even srq_max buffers (minus the
 * reserve) would not cover it, or no send CQ could take its send queue;
 * -EINVAL for NULL.
 * Context: @res's shard thread; non-blocking.  No RCU rule.
 */
int wharf_qp_res_admit(const struct wharf_qp_res *res, uint32_t credits);

/**
 * wharf_qp_res_flush - post every queued work request now instead of at
 * the end of the loop iteration.
 * Return: number of ibv_post_send() calls made, or -EINVAL.
 * Context: @res's shard thread; non-blocking.  No RCU rule.
 */
int wharf_qp_res_flush(struct wharf_qp_res *res);

/**
 * wharf_qp_res_recv_put - give back a receive buffer kept by on_recv()
 * (WHARF_QP_RECV_KEEP); it is reposted with the next batch.
 * @buf: the pointer on_recv() received.
 * Return: 0; -EINVAL when @buf is not a buffer of @res that was kept.
 * Context: @res's shard thread; non-blocking.  No RCU rule.
 */
int wharf_qp_res_recv_put(struct wharf_qp_res *res, void *buf);

/** Counters of one res; gauges are marked. */
struct wharf_qp_res_stats {
	/** sizeof(struct wharf_qp_res_stats) as compiled by the caller. */
	size_t size;
	/** Gauge: CQ entries (after resizes), every CQ of the res. */
	uint32_t cq_size;
	/** Gauge: CQ entries reserved by the SRQ and active QPs, every CQ
	 * of the res. */
	uint32_t cq_reserved;
	/** Successful ibv_resize_cq() calls. */
	uint64_t cq_resizes;
	/** wharf_qp_take() refused because the CQ could not grow. */
	uint64_t cq_full;
	/** Work completions polled. */
	uint64_t completions;
	/** CQ channel events (event mode wake-ups). */
	uint64_t cq_events;
	/** Gauge: SRQ buffers (srq_depth, more after growth). */
	uint32_t srq_depth;
	/** Gauge: buffers posted to the SRQ. */
	uint32_t srq_posted;
	/** Gauge: buffers kept by on_recv(). */
	uint32_t recv_held;
	/** ibv_post_srq_recv() calls. */
	uint64_t srq_post_calls;
	/** IBV_EVENT_SRQ_LIMIT_REACHED events handled. */
	uint64_t srq_limit_events;
	/** Gauge: registered receive bytes of the res (SRQ and private RQs). */
	uint64_t recv_bytes;
	/** Gauge: receive credits admitted. */
	uint32_t admitted_credits;
	/** wharf_qp_take() refused for the receive budget. */
	uint64_t admit_refused;
	/** Gauge: QPs taken and not yet released. */
	uint32_t qps_active;
	/** Gauge: QPs free in the pool. */
	uint32_t pool_free;
	/** Gauge: QPs drained and waiting for release or quarantine. */
	uint32_t pool_quarantined;
	/** QPs created in the background. */
	uint64_t pool_created;
	/** Takes that found the pool empty and created a QP inline. */
	uint64_t pool_empty;
	/** QPs returned to the pool. */
	uint64_t pool_recycled;
	/** QPs destroyed (FATE_UNKNOWN, no pool, or pool full). */
	uint64_t qps_destroyed;
	/** ibv_post_send() calls. */
	uint64_t post_calls;
	/** Work requests posted. */
	uint64_t wrs_posted;
	/** Of those, posted inline (max_inline_data). */
	uint64_t wrs_inline;
	/** Work requests that had to wait: send queue full. */
	uint64_t wrs_waited_sq;
	/** Work requests that had to wait: RDMA READ depth reached. */
	uint64_t wrs_waited_rd;
	/** Completions with an error status (flushes included). */
	uint64_t wc_errors;
	/** Closing QPs whose receive-side drain wait ran out. */
	uint64_t last_wqe_timeouts;
	/** Async events delivered to this res (QP and SRQ). */
	uint64_t async_events;
	/**
	 * Gauge: SRQ buffers waiting to be reposted.  srq_posted +
	 * recv_held + recv_pending + the ones in on_recv() = srq_depth.
	 */
	uint32_t recv_pending;
	/** The SRQ's ceiling (srq_max). */
	uint32_t srq_max;
	/** Chunks of buffers added to the SRQ since creation. */
	uint64_t srq_grows;
	/** Gauge: send CQs (at most send_cq_max). */
	uint32_t send_cqs;
};

/**
 * wharf_qp_res_stats - snapshot @res's counters.
 * @out: @out->size must be set; up to that many bytes are written.
 * Return: 0, or -EINVAL for NULL arguments or a too small @out->size.
 * Context: @res's shard thread; non-blocking.  No RCU rule.
 */
int wharf_qp_res_stats(const struct wharf_qp_res *res,
		       struct wharf_qp_res_stats *out);

/* ------------------------------------------------------------------------ */
/* Work requests                                                             */
/* ------------------------------------------------------------------------ */

/** Operation of a work request. */
enum wharf_wr_op {
	WHARF_WR_NONE = 0,
	WHARF_WR_SEND = 1,
	WHARF_WR_SEND_IMM = 2,
	WHARF_WR_RDMA_WRITE = 3,
	WHARF_WR_RDMA_WRITE_IMM = 4,
	WHARF_WR_RDMA_READ = 5,
	/** SEND with Invalidate: the peer's @rkey is invalidated on arrival. */
	WHARF_WR_SEND_INV = 6,
};

/**
 * A work request context, embedded in the caller's struct.  Initialise it
 * with wharf_wr_init(); the fields are the library's while the WR is posted
 * (from a post call until its on_send_done()), read-only otherwise.
 */
struct wharf_wr {
	/** The caller's type tag (non-zero), checked by wharf_wr_entry(). */
	uint32_t tag;
	/** Library: WHARF_WR_MAGIC_* state marker. */
	uint32_t magic;
	/** Library: enum wharf_wr_op. */
	uint8_t op;
	/** Library: scatter/gather entries used. */
	uint8_t nsge;
	/** Library: ibv_send_flags bits added to IBV_SEND_SIGNALED. */
	uint16_t send_flags;
	/** Library: immediate data, network byte order. */
	uint32_t imm_be;
	/** Library: remote key (RDMA READ/WRITE; the key a SEND with
	 * Invalidate invalidates). */
	uint32_t rkey;
	/** Library: completion status (enum ibv_wc_status) once done. */
	uint32_t status;
	/** Library: remote address (RDMA READ/WRITE). */
	uint64_t remote_addr;
	/** Library: queue link. */
	struct wharf_wr *next;
	/** Library: the QP it is posted on. */
	struct wharf_qp *qp;
	/** Library: copy of the scatter/gather list. */
	struct ibv_sge sge[WHARF_WR_MAX_SGE];
};

/** magic of a wharf_wr that is initialised and not posted. */
#define WHARF_WR_MAGIC_IDLE 0x77726931u
/** magic of a wharf_wr between its post and its completion. */
#define WHARF_WR_MAGIC_BUSY 0x77726932u

/**
 * wharf_wr_init - prepare @wr for posting.
 * @tag: the caller's non-zero type tag for the struct that embeds @wr.
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_wr_init(struct wharf_wr *wr, uint32_t tag);

/* Internal helper of wharf_wr_entry(). */
static inline void *wharf_wr_cast_(struct wharf_wr *wr, uint32_t tag,
				   size_t offset)
{
	if (!wr || !tag || wr->tag != tag)
		return NULL;
	return (char *)wr - offset;
}

/**
 * wharf_wr_entry - the caller's struct @type that embeds @wr as @member,
 * or NULL when @wr is NULL or its tag is not @tag.
 * Context: any thread; non-blocking.  No RCU rule.
 */
#define wharf_wr_entry(wr, type, member, tag)                                  \
	((type *)wharf_wr_cast_((wr), (tag), offsetof(type, member)))

/* ------------------------------------------------------------------------ */
/* Queue pairs                                                               */
/* ------------------------------------------------------------------------ */

/** on_recv() flag: the message carried immediate data (@imm is valid). */
#define WHARF_QP_RECV_IMM 0x1u
/** on_recv() flag: an RDMA WRITE with immediate; the buffer holds nothing. */
#define WHARF_QP_RECV_WRITE 0x2u
/** on_recv() return value: the caller keeps the buffer. */
#define WHARF_QP_RECV_KEEP 1

/** What a receive completion carried. */
struct wharf_qp_recv {
	/** Bytes received into the buffer. */
	uint32_t len;
	/** WHARF_QP_RECV_* flags. */
	uint32_t flags;
	/** Immediate data in host byte order (WHARF_QP_RECV_IMM). */
	uint32_t imm;
};

/**
 * Callbacks of a QP, all run on its res's shard thread from the shard loop
 * (the res poller, CQ channel watch, timer or an async-event message),
 * never from within a wharf_qp_* call.  Callbacks may call any wharf_qp_*
 * function.  NULL entries are skipped (received buffers are then
 * reposted).
 */
struct wharf_qp_ops {
	/** sizeof(struct wharf_qp_ops) as compiled by the caller. */
	size_t size;
	/**
	 * A message arrived.  @buf is valid during the call; return 0 to
	 * have it reposted, or WHARF_QP_RECV_KEEP to keep it (give it back
	 * with wharf_qp_res_recv_put()).  On a private receive queue the
	 * buffer is always reposted (KEEP is not supported there).
	 * Receives that complete with an error are not delivered here (see
	 * @on_error), nor receives on a QP that is not connected.
	 */
	int (*on_recv)(struct wharf_qp *qp, void *buf,
		       const struct wharf_qp_recv *rx, void *arg);
	/**
	 * A work request completed: @wr->status is IBV_WC_SUCCESS or an
	 * error; IBV_WC_WR_FLUSH_ERR also for WRs cancelled before being
	 * posted.  The library no longer touches @wr or its buffers.  Every
	 * accepted post gets exactly one call.
	 */
	void (*on_send_done)(struct wharf_qp *qp, struct wharf_wr *wr,
			     void *arg);
	/**
	 * The first completion error of the QP (flush errors after close do
	 * not count): the QP is in ERR; the owner should close it.
	 */
	void (*on_error)(struct wharf_qp *qp, enum ibv_wc_status status,
			 void *arg);
	/**
	 * An affiliated async event: IBV_EVENT_COMM_EST (call rdma_notify()),
	 * IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_ACCESS_ERR,
	 * IBV_EVENT_PATH_MIG*, ... (LAST_WQE_REACHED is consumed by the
	 * teardown and not reported).
	 */
	void (*on_async)(struct wharf_qp *qp, enum ibv_event_type event,
			 void *arg);
	/**
	 * wharf_qp_close() finished: every WR has completed.  Runs from the
	 * shard loop, never from within wharf_qp_close().
	 */
	void (*on_closed)(struct wharf_qp *qp, void *arg);
};

/** Options for wharf_qp_take(); zero means default everywhere. */
struct wharf_qp_opts {
	/** sizeof(struct wharf_qp_opts) as compiled by the caller. */
	size_t size;
	/** Callbacks (copied) and their argument. */
	const struct wharf_qp_ops *ops;
	void *arg;
	/**
	 * A private receive queue instead of the SRQ (conn_param srq = 0);
	 * forced on a res created with no_srq.  Such QPs are not pooled.
	 */
	bool private_rq;
	/** Private receive queue depth; 0 = the res recv_credits. */
	uint32_t rq_depth;
	/** Receive credits claimed on the SRQ; 0 = the res default. */
	uint32_t recv_credits;
	/**
	 * Send queue depth; 0 = the res default.  Other values bypass the
	 * pool (the QP is created inline).
	 */
	uint32_t sq_depth;
	/**
	 * RNR NAK timer this QP advertises (IB encoding 1..31); 0 = what
	 * the CM sets (0 = 655 ms).
	 */
	uint8_t min_rnr_timer;
};

/**
 * wharf_qp_opts_init - zero @opts and set its size.
 * @opts: the options to fill, or NULL (nothing is done).
 *
 * Start every struct wharf_qp_opts with this call, then set the fields
 * to change, so that a caller built against this header passes a valid
 * size to wharf_qp_take().
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_qp_opts_init(struct wharf_qp_opts *opts);

/**
 * wharf_qp_take - get a QP in RESET for a new connection.
 * @res: the shard's resources on the connection's device.
 * @opts: options; @opts->ops is required.  Not retained (ops copied).
 * @out: receives the QP, owned by the caller until wharf_qp_release().
 *
 * Takes the oldest free QP of the pool, or creates one when the pool is
 * empty (counted in pool_empty) or the options need a different shape.
 * Claims the receive credits (SRQ) and CQ room for the QP's queues, growing
 * the CQ when needed.
 *
 * Return: 0; -EINVAL for bad arguments; -EBUSY when the receive budget does
 * not admit it; -ENOSPC when the CQ cannot grow to cover it, or when @res
 * already keeps 65,535 distinct callback sets (it keeps each distinct set
 * of @opts->ops once, for as long as it exists); -ENOMEM;
 * -errno from ibv_create_qp.
 * Context: @res's shard thread; non-blocking unless a QP must be created.
 * No RCU rule.
 */
int wharf_qp_take(struct wharf_qp_res *res, const struct wharf_qp_opts *opts,
		  struct wharf_qp **out);

/**
 * wharf_qp_num - the QP number (for conn_param.qp_num).
 * Context: any thread holding the QP; non-blocking.  No RCU rule.
 */
uint32_t wharf_qp_num(const struct wharf_qp *qp);

/**
 * wharf_qp_uses_srq - whether the QP receives from the SRQ (for
 * conn_param.srq).
 * Context: any thread holding the QP; non-blocking.  No RCU rule.
 */
bool wharf_qp_uses_srq(const struct wharf_qp *qp);

/**
 * wharf_qp_ibv - the verbs QP, for ibv_query_qp() and diagnostics.  Do not
 * post to it or modify it directly.
 * Context: any thread holding the QP; non-blocking.  No RCU rule.
 */
struct ibv_qp *wharf_qp_ibv(const struct wharf_qp *qp);

/**
 * wharf_qp_res_of - the resources @qp belongs to.
 * Context: any thread holding the QP; non-blocking.  No RCU rule.
 */
struct wharf_qp_res *wharf_qp_res_of(const struct wharf_qp *qp);

/* ------------------------------------------------------------------------ */
/* RDMA CM integration                                                       */
/* ------------------------------------------------------------------------ */

/**
 * wharf_qp_cm_init - move @qp from RESET to INIT with rdma_init_qp_attr()
 * values of @id (port, pkey, access flags).  Active side: before
 * rdma_connect().  @id carries no QP.
 * Return: 0; -EINVAL for NULL; -EALREADY when @qp is not in RESET; -errno
 * from rdma_init_qp_attr / ibv_modify_qp (the QP stays in RESET).
 * Context: @qp's shard thread; blocks in the kernel (one or two syscalls).
 * No RCU rule.
 */
int wharf_qp_cm_init(struct wharf_qp *qp, struct rdma_cm_id *id);

/**
 * wharf_qp_cm_rtr_rts - move @qp from INIT to RTR then RTS with @id's
 * attributes, overriding max_dest_rd_atomic with @responder_resources and
 * max_rd_atomic with @initiator_depth (the negotiated values).  Active side:
 * on RDMA_CM_EVENT_CONNECT_RESPONSE, then rdma_establish().  INIT is
 * re-applied first, as librdmacm does: before the connection existed the
 * CM's INIT attributes granted no remote access.  The QP accepts posts once
 * in RTS; up to @initiator_depth RDMA READs are outstanding.
 * Return: 0; -EINVAL for NULL; -EALREADY when @qp is not in INIT; -errno
 * from rdma_init_qp_attr / ibv_modify_qp (the QP is then in ERR or INIT:
 * close it).
 * Context: @qp's shard thread; blocks in the kernel.  No RCU rule.
 */
int wharf_qp_cm_rtr_rts(struct wharf_qp *qp, struct rdma_cm_id *id,
			uint8_t responder_resources, uint8_t initiator_depth);

/**
 * wharf_qp_cm_accept_ready - passive side before rdma_accept(): INIT, RTR
 * and RTS as above, so that data can flow as soon as the peer gets the REP.
 * Return and Context: as wharf_qp_cm_init() and wharf_qp_cm_rtr_rts().
 */
int wharf_qp_cm_accept_ready(struct wharf_qp *qp, struct rdma_cm_id *id,
			     uint8_t responder_resources,
			     uint8_t initiator_depth);

/* ------------------------------------------------------------------------ */
/* Data path                                                                 */
/* ------------------------------------------------------------------------ */

/**
 * wharf_qp_post_send - queue a SEND of @sgl (or a SEND with immediate
 * data @imm, host byte order, when @with_imm).
 * @wr: initialised, not posted; the library's until on_send_done().
 * @sgl: @nsge entries (1..WHARF_WR_MAX_SGE and <= max_send_sge), copied;
 * the memory they describe must stay untouched until on_send_done().  A
 * WR of at most the res's max_inline_data bytes goes inline: its lkey is
 * not used (unregistered memory is fine), its bytes are read when posted.
 * Posted at the end of the loop iteration or by wharf_qp_res_flush(),
 * within the send queue credits; the rest waits.
 * Return: 0; -EINVAL for bad arguments or a @wr that is not idle; -ENOTCONN
 * when @qp is not in RTS or is closing.
 * Context: @qp's shard thread; non-blocking.  No RCU rule.
 */
int wharf_qp_post_send(struct wharf_qp *qp, struct wharf_wr *wr,
		       const struct ibv_sge *sgl, unsigned nsge, bool with_imm,
		       uint32_t imm);

/**
 * wharf_qp_post_send_inv - queue a SEND of @sgl that invalidates the
 * peer's memory key @rkey on arrival (IBV_WR_SEND_WITH_INV): the peer's
 * completion carries IBV_WC_WITH_INV and @rkey, and it need not post a
 * LOCAL_INV of its own (NVMe-oF hosts ask for this with keyed SGL subtype
 * Fh).  Ordered after every WR posted before it on @qp, like any SEND.
 * Return: as wharf_qp_post_send(), and -EOPNOTSUPP when the device has no
 * memory management extensions (IBV_DEVICE_MEM_MGT_EXTENSIONS): send
 * without invalidation then.
 * Context: as wharf_qp_post_send().
 */
int wharf_qp_post_send_inv(struct wharf_qp *qp, struct wharf_wr *wr,
			   const struct ibv_sge *sgl, unsigned nsge,
			   uint32_t rkey);

/**
 * wharf_qp_post_write - queue an RDMA WRITE of @sgl to @remote_addr/@rkey
 * (with immediate data @imm when @with_imm: the peer gets an on_recv()
 * with WHARF_QP_RECV_WRITE and consumes a receive buffer).
 * Return and Context: as wharf_qp_post_send().
 */
int wharf_qp_post_write(struct wharf_qp *qp, struct wharf_wr *wr,
			const struct ibv_sge *sgl, unsigned nsge,
			uint64_t remote_addr, uint32_t rkey, bool with_imm,
			uint32_t imm);

/**
 * wharf_qp_post_read - queue an RDMA READ from @remote_addr/@rkey into
 * @sgl.  At most the negotiated initiator depth are outstanding; later ones
 * (and the WRs behind them) wait in the queue.
 * Return: as wharf_qp_post_send(), and -EOPNOTSUPP when the negotiated
 * initiator depth is 0.
 * Context: as wharf_qp_post_send().
 */
int wharf_qp_post_read(struct wharf_qp *qp, struct wharf_wr *wr,
		       const struct ibv_sge *sgl, unsigned nsge,
		       uint64_t remote_addr, uint32_t rkey);

/** What happens to a closed QP's number; see the quarantine rule above. */
enum wharf_qp_fate {
	/** The QP number never reached a peer: recycle after draining. */
	WHARF_QP_FATE_UNUSED = 0,
	/**
	 * The connection's id got RDMA_CM_EVENT_TIMEWAIT_EXIT: recycle
	 * after draining and quarantine_ms.
	 */
	WHARF_QP_FATE_TIMEWAIT_EXIT = 1,
	/** Anything else: destroy once drained. */
	WHARF_QP_FATE_UNKNOWN = 2,
};

/**
 * wharf_qp_close - start tearing @qp down: move it to ERR, complete the
 * WRs still queued with IBV_WC_WR_FLUSH_ERR, and call on_closed() once the
 * posted ones have completed and (SRQ) IBV_EVENT_QP_LAST_WQE_REACHED has
 * arrived.  Further posts fail with -ENOTCONN.  Idempotent.
 * Return: 0; -EINVAL for NULL; -errno from ibv_modify_qp (the QP is then
 * destroyed at release, not recycled).
 * Context: @qp's shard thread; blocks in one kernel call; runs no callback
 * (the cancelled WRs complete from the shard loop).  No RCU rule.
 */
int wharf_qp_close(struct wharf_qp *qp);

/**
 * wharf_qp_release - give @qp back to its res with the fate of its number.
 * Releases its receive credits and CQ room once drained.  A QP never moved
 * out of RESET may be released without wharf_qp_close().  After this call
 * no callback but the pending on_send_done()/on_closed() runs, and @qp is
 * invalid once on_closed() has returned (or now, when it already has).
 * Return: 0; -EINVAL for NULL, a bad @fate, or a QP already released;
 * -EBUSY when @qp was moved out of RESET and not closed.
 * Context: @qp's shard thread; non-blocking (may destroy a QP).
 * No RCU rule.
 */
int wharf_qp_release(struct wharf_qp *qp, enum wharf_qp_fate fate);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_QP_H */
