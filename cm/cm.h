/*
 * <wharf/cm.h> - sharded RDMA connection management on the kernel RDMA CM.
 *
 * A wharf_cm belongs to a context (<wharf/core.h>) and serves every RDMA
 * device librdmacm knows.  Each connection (struct wharf_conn) is owned
 * by one shard, where every event and callback of it runs; other threads
 * find it by its 64-bit id (wharf_conn_lookup(), RCU) or hand it work
 * (wharf_conn_call()).  What an application sees of its life:
 *
 *   active:  wharf_connect() -> on_established, or on_rejected / on_error
 *   passive: on_request -> wharf_accept() / wharf_reject() (then or later,
 *            on the owner shard) -> on_established / on_error
 *   both:    wharf_disconnect() or the peer's DREQ -> on_disconnected,
 *            exactly once for every connection that was established
 *
 * Every wait has a timer, and every request and every wharf_connect()
 * ends in exactly one counted outcome (wharf_cm_stats).  Connection
 * parameters and private data follow rdma_connect(3) and rdma_accept(3).
 * A listener without room defers a request (WHARF_OVERLOAD_DEFER, the
 * default) or refuses it (WHARF_OVERLOAD_REJECT_BUSY).  Errors are
 * negative errno values (librdmacm's -1/errno and verbs' positive values
 * translated).
 *
 * The semantics in full - the timers, the parameters, the data path, UD,
 * storm control, refusals: docs/design/cm.md, docs/design/overload.md.
 */
#ifndef WHARF_CM_H
#define WHARF_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <wharf/core.h>
#include <wharf/qp.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A context's connection manager (opaque). */
struct wharf_cm;
/** A listening address (opaque). */
struct wharf_listener;
/** A connection, owned by one shard (opaque). */
struct wharf_conn;

/** Port space. */
enum wharf_ps {
	/** Reliable connected (RDMA_PS_TCP). */
	WHARF_PS_RC = 0,
	/** Unreliable datagram with SIDR lookup (RDMA_PS_UDP). */
	WHARF_PS_UD = 1,
};

/** Why a connection failed (on_error). */
enum wharf_conn_error {
	/** Address resolution failed (ADDR_ERROR, or the call failed). */
	WHARF_CONN_ERR_ADDRESS = 1,
	/** Route resolution failed. */
	WHARF_CONN_ERR_ROUTE = 2,
	/** Connecting or accepting failed (CONNECT_ERROR, a failed call, a
	 * QP error during the handshake, parameters the device refuses). */
	WHARF_CONN_ERR_CONNECT = 3,
	/** The peer did not answer (UNREACHABLE). */
	WHARF_CONN_ERR_UNREACHABLE = 4,
	/** A step timer ran out (resolve, connect, decision, RTU wait). */
	WHARF_CONN_ERR_TIMEOUT = 5,
	/** The device went away before the connection was established. */
	WHARF_CONN_ERR_DEVICE = 6,
};

/** WHARF_SHARD_ANY in a shard field: let the library choose. */
#define WHARF_SHARD_ANY (-1)
/** 0xFF in responder_resources / initiator_depth: the device maximum. */
#define WHARF_RD_ATOM_DEV_MAX 0xFF

/** The Q_Key of RDMA_PS_UDP connections (librdmacm's RDMA_UDP_QKEY). */
#define WHARF_UD_QKEY 0x01234567u

/* ------------------------------------------------------------------------ */
/* Connection manager                                                        */
/* ------------------------------------------------------------------------ */

/** Options for wharf_cm_create(); zero means default everywhere. */
struct wharf_cm_opts {
	/** sizeof(struct wharf_cm_opts) as compiled by the caller. */
	size_t size;
	/**
	 * Passive handshakes a shard runs at once (requests presented and
	 * not yet established or ended); beyond, the listener's overload
	 * policy applies (defer or busy REJ).  0 = 1024.
	 */
	unsigned handshake_cap;
	/** retry-after hint of a busy REJ, milliseconds; 0 = 100, at most
	 * 10 minutes. */
	uint32_t busy_retry_after_ms;
	/**
	 * Load added to shards on other NUMA nodes than the device when
	 * picking an owner (wharf_numa_pick_shard()); 0 = 64.
	 */
	uint64_t remote_penalty;
	/** Options of every shard's resources on every device (copied). */
	const struct wharf_qp_res_opts *res_opts;
	/** Shard that reads the devices' async events; default 0. */
	unsigned async_shard;
	/**
	 * Connect window: active handshakes a shard runs at once
	 * (wharf_connect() calls started there and not yet established or
	 * ended).  Calls beyond it wait on their shard, in call order, with
	 * no timer running, and start as earlier handshakes end; their
	 * time-to-established includes the wait (WHARF_STEP_ADMITTED says
	 * when they started).  This keeps a burst of connects from flooding
	 * the kernel's serialised CM queues, where every step would wait
	 * behind every other connection's and resolve timers would run out
	 * with their answers still queued.
	 *
	 * 0 = adaptive (the default): each shard's window starts at 32 and
	 * follows its handshakes: it grows by half while they complete
	 * within 3/2 of the fastest round seen, shrinks to 3/4 when they
	 * take over twice as long, and halves on a busy REJ or a step
	 * timeout; never below 8 nor above connect_window_max.  N = a fixed
	 * window of N; WHARF_CONNECT_WINDOW_NONE = no window.
	 *
	 * The DREQs of active connections (wharf_disconnect()) go through
	 * a disconnect window of each shard's own, so that a mass disconnect
	 * does not overrun the peers either: fixed at N with a fixed window
	 * of N, none with WHARF_CONNECT_WINDOW_NONE, else adaptive as above
	 * on the DREQs' answer times (a forced teardown counts as a step
	 * timeout), from a quarter of connect_window_max.
	 */
	unsigned connect_window;
	/** Upper bound of the adaptive window (connect_window 0), per
	 * shard; 0 = 1024, raised to 8 if lower. */
	unsigned connect_window_max;
	/**
	 * Resource sets (one SRQ, its CQs and a QP pool, as res_opts
	 * describes) a shard may have per device.  A shard starts with one;
	 * when a connection fits in none it has (every SRQ at srq_max, every
	 * send CQ at cq_max and send_cq_max), it makes the next, so that one
	 * shard serves more connections than one SRQ or CQ holds (rxe and
	 * ConnectX HCAs allow 32,767 SRQ entries: with one receive credit a
	 * connection, about that many connections per set).  Only past the
	 * last does a request meet the listener's overload policy (defer or
	 * busy REJ).  0 = 1: res_opts then bounds a shard's receive memory
	 * and CQs, as it always did; at most 64 (-EINVAL above).
	 */
	unsigned res_per_device;
};

/** wharf_cm_opts.connect_window: start every wharf_connect() at once. */
#define WHARF_CONNECT_WINDOW_NONE (~0u)

/**
 * wharf_cm_opts_init - zero @opts and set its size.
 * @opts: the options to fill, or NULL (nothing is done).
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_cm_opts_init(struct wharf_cm_opts *opts);

/**
 * wharf_cm_create - create the connection manager of @ctx.
 * @ctx: the context; must outlive the cm.  At most one cm per context
 * (every device's async events have a single reader).
 * @opts: options or NULL.  Not retained (res_opts is copied).
 * @out: receives the cm, owned by the caller (wharf_cm_destroy()).
 *
 * Opens every RDMA device librdmacm reports (rdma_get_devices) with
 * wharf_qp_dev_open(), checks res_opts against each device's limits with
 * wharf_qp_res_opts_fit() (a ceiling beyond the device is clamped, with a
 * warning naming the limit; a size no device resource can hold is
 * refused), and on every shard creates an rdma_cm event channel and a
 * watch on it.
 *
 * Signals: the connection tables are liburcu hash tables that resize
 * themselves, which starts liburcu's resize worker thread. Before
 * liburcu 0.14 (Debian 12 has 0.13) that thread blocks every signal but
 * SIGUSR1 (liburcu's signal flavor's SIGRCU), whatever the creating
 * thread's mask. A program that takes SIGUSR1 with sigwait() or
 * signalfd() must also give it a handler (wharf-nvmf-tgt's forwards it
 * to its waiting thread), or a SIGUSR1 that arrives while no thread
 * waits for it runs the default action there and ends the process.
 *
 * Return: 0; -EINVAL for NULL arguments or bad options (size, shard
 * index, res_opts size, a res option a device cannot hold: the log names
 * the option and the limit, res_per_device above 64); -ENODEV when there is no RDMA device (or no
 * /dev/infiniband/rdma_cm); -ENOMEM; -errno from librdmacm, verbs or the
 * shard setup.
 * Context: any thread except a shard thread of @ctx; blocks until every
 * shard is set up (threaded shards run the setup themselves).  In
 * app-driven mode call it while no thread polls the shards.  No RCU rule.
 */
int wharf_cm_create(struct wharf_ctx *ctx, const struct wharf_cm_opts *opts,
		    struct wharf_cm **out);

/**
 * wharf_cm_destroy - destroy every listener and connection, then the cm.
 * @cm: the cm or NULL.
 *
 * Listeners still open are destroyed; connections still alive are
 * destroyed as by wharf_conn_destroy() except that no callback but
 * on_send_done runs.  Waits until every QP has drained and every
 * connection has been freed (an RCU grace period).
 *
 * Return: 0; -EDEADLK when called from a shard thread (nothing is done).
 * Context: an application thread that is not an online reader
 * (wharf_rcu_register_thread()); blocks.  The shards must be running (threaded) or, in
 * app-driven mode, be polled by other threads meanwhile.
 */
int wharf_cm_destroy(struct wharf_cm *cm);

/**
 * wharf_cm_ctx - the context of @cm.
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct wharf_ctx *wharf_cm_ctx(const struct wharf_cm *cm);

/* ------------------------------------------------------------------------ */
/* Parameters and what callbacks receive                                     */
/* ------------------------------------------------------------------------ */

/**
 * Connection parameters (mirrors struct rdma_conn_param).  srq and qp_num
 * are not here: they always come from the library's QP.
 */
struct wharf_conn_param {
	/** sizeof(struct wharf_conn_param) as compiled by the caller. */
	size_t size;
	/** Private data; copied by the call that takes the param. */
	const void *private_data;
	/** Its length; see the limits atop this header. */
	size_t private_data_len;
	/** RC: RDMA reads/atomics the local side serves; 0xFF = maximum. */
	uint8_t responder_resources;
	/** RC: RDMA reads/atomics the local side issues; 0xFF = maximum. */
	uint8_t initiator_depth;
	/** RC: exchanged with the peer and reported; not used for the QP. */
	uint8_t flow_control;
	/** RC connect: transport retries (3-bit; above 7 becomes 7). */
	uint8_t retry_count;
	/** RC: RNR retries the peer makes (3-bit; above 7 becomes 7). */
	uint8_t rnr_retry_count;
	/** UD accept only: the number of the application's UD QP. */
	uint32_t ud_qp_num;
};

/**
 * wharf_conn_param_init - zero @param and set its size.
 * @param: the parameters to fill, or NULL (nothing is done).
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_conn_param_init(struct wharf_conn_param *param);

/** A connection request, delivered to on_request. */
struct wharf_conn_request {
	/** sizeof(struct wharf_conn_request) as compiled by the library. */
	size_t size;
	/** Port space of the listener. */
	enum wharf_ps ps;
	/** The local address the request arrived on (with port). */
	const struct sockaddr *local_addr;
	/** The peer's address. */
	const struct sockaddr *peer_addr;
	/** The device's name (e.g. "rxe0"). */
	const char *device;
	/** RC: the request's parameters, in the local point of view (the
	 * kernel swapped the depths: responder_resources is what the peer
	 * will issue). */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	/** RC: the peer's QP number. */
	uint32_t remote_qp_num;
	/** What the peer sent, with the length the transport reports; valid
	 * until on_established returns (the handshake's state is freed
	 * then), or the connection is destroyed first. */
	const void *private_data;
	size_t private_data_len;
};

/** What a connection negotiated, delivered to on_established. */
struct wharf_conn_info {
	/** sizeof(struct wharf_conn_info) as compiled by the library. */
	size_t size;
	enum wharf_ps ps;
	/** RC: the negotiated depths, local point of view. */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	/** RC: the flow control bit the peer sent (REQ or REP). */
	uint8_t flow_control;
	/** RC: the RNR retry count our sends use (set by the peer). */
	uint8_t rnr_retry_count;
	/** RC: whether our QP receives from the SRQ. */
	uint8_t srq;
	/** RC: our QP number. */
	uint32_t qp_num;
	/** RC: the peer's QP number; UD: the remote QPN of the lookup. */
	uint32_t remote_qp_num;
	/** UD (active side): the remote Q_Key. */
	uint32_t qkey;
	/** UD (active side): an address handle to the peer, owned by the
	 * connection (valid until it is destroyed). */
	struct ibv_ah *ah;
	/** UD (active side): the attributes @ah was created from. */
	const struct ibv_ah_attr *ah_attr;
	/** Private data of the REP / SIDR REP (active side), with the
	 * transport's length; valid during the call. */
	const void *private_data;
	size_t private_data_len;
};

/** A rejection, delivered to on_rejected. */
struct wharf_conn_reject {
	/** sizeof(struct wharf_conn_reject) as compiled by the library. */
	size_t size;
	/** The REJ reason (event status): 28 = consumer defined (what
	 * rdma_reject() sends), 10 = stale connection, ... For UD, the SIDR
	 * status. */
	int reason;
	/** The REJ private data, transport length; valid during the call. */
	const void *private_data;
	size_t private_data_len;
	/** The private data is a wharf busy payload (fields below). */
	bool busy;
	/** Busy reason: 1 handshakes, 2 receive budget, 3 draining. */
	uint8_t busy_reason;
	/** Busy: the peer's retry-after hint, milliseconds. */
	uint32_t retry_after_ms;
	/** Busy: the peer shard's load in per mille of its cap. */
	uint16_t load_permille;
};

/**
 * Callbacks of a connection, all run on its owner shard.  Callbacks may
 * call any function of this header on the same or another connection
 * (e.g. wharf_conn_destroy() from on_disconnected).  NULL entries are
 * skipped.
 */
struct wharf_conn_ops {
	/** sizeof(struct wharf_conn_ops) as compiled by the caller. */
	size_t size;
	/**
	 * Passive: a request arrived.  Call wharf_accept() or wharf_reject()
	 * now or later (on the owner shard) before decision_timeout_ms, else
	 * the library rejects it and reports WHARF_CONN_ERR_TIMEOUT.  NULL:
	 * the listener accepts with its accept_param.  @req is valid during
	 * the call (wharf_conn_get_request() returns it later, until the
	 * handshake is over).
	 */
	void (*on_request)(struct wharf_conn *conn,
			   const struct wharf_conn_request *req, void *arg);
	/** The connection is established; @info is valid during the call. */
	void (*on_established)(struct wharf_conn *conn,
			       const struct wharf_conn_info *info, void *arg);
	/** Active: the peer rejected (after any retries); final. */
	void (*on_rejected)(struct wharf_conn *conn,
			    const struct wharf_conn_reject *rej, void *arg);
	/**
	 * The connection failed before being established; final.  @err is
	 * the errno behind it (negative), e.g. -ETIMEDOUT.
	 */
	void (*on_error)(struct wharf_conn *conn, enum wharf_conn_error error,
			 int err, void *arg);
	/** The established connection ended; exactly once, final. */
	void (*on_disconnected)(struct wharf_conn *conn, void *arg);
	/**
	 * RC: a message arrived (see <wharf/qp.h> on_recv for @buf and
	 * @rx).  Return 0 to have the buffer reposted, or WHARF_QP_RECV_KEEP
	 * to keep it (give it back with wharf_qp_res_recv_put() on
	 * wharf_qp_res_of(wharf_conn_qp(conn))).  NULL: buffers are
	 * reposted.  On a private receive queue KEEP is not supported, and
	 * a receive held until on_established is a copy, valid during the
	 * call.
	 */
	int (*on_recv)(struct wharf_conn *conn, void *buf,
		       const struct wharf_qp_recv *rx, void *arg);
	/**
	 * RC: a work request posted on the connection's QP completed (see
	 * <wharf/qp.h>).  Delivered for every post, also after
	 * wharf_conn_destroy() (the connection is then in teardown and only
	 * wharf_conn_id() may be called).
	 */
	void (*on_send_done)(struct wharf_conn *conn, struct wharf_wr *wr,
			     void *arg);
};

/**
 * Per-connection QP shape (RC), embedded in wharf_listen_opts and
 * wharf_connect_opts; zero means the shard resource defaults.
 */
struct wharf_conn_qp_opts {
	/**
	 * sizeof(struct wharf_conn_qp_opts) as compiled by the caller
	 * (wharf_listen_opts_init() and wharf_connect_opts_init() set it),
	 * or 0 when every other field is 0.
	 */
	size_t size;
	/** Receive credits claimed on the SRQ (admission). */
	uint32_t recv_credits;
	/** A private receive queue instead of the SRQ. */
	bool private_rq;
	/** Private receive queue depth. */
	uint32_t rq_depth;
	/** Send queue depth. */
	uint32_t sq_depth;
	/** RNR NAK timer this QP advertises (IB encoding 1..31). */
	uint8_t min_rnr_timer;
};

/* ------------------------------------------------------------------------ */
/* Listening                                                                 */
/* ------------------------------------------------------------------------ */

/** Placement input: one shard as the pick callback sees it. */
struct wharf_cm_shard_load {
	/** Passive and active handshakes in flight. */
	uint32_t handshakes;
	/** Established connections. */
	uint32_t connections;
	/** The shard's NUMA node. */
	unsigned node;
	/** Whether the node is local to the request's device. */
	bool local;
};

/**
 * Owner-shard policy: return the index of the shard that should own the
 * connection (0 .. nshards-1), or a negative value for the default policy.
 * Runs on the listener's shard; must not block or call back into wharf.
 */
typedef int (*wharf_pick_shard_fn)(const struct wharf_conn_request *req,
				   const struct wharf_cm_shard_load *shards,
				   unsigned nshards, void *arg);

/** What a listener does with a request its owner shard has no room for
 * (handshake_cap, receive budget); see "Storm control" above. */
enum wharf_overload {
	/** Hold it unanswered in the owner's FIFO until there is room. */
	WHARF_OVERLOAD_DEFER = 0,
	/** Refuse it at once with the busy REJ (wharf clients retry). */
	WHARF_OVERLOAD_REJECT_BUSY = 1,
};

/** The longest deferral a listener may ask for (defer_max_ms), ms. */
#define WHARF_DEFER_MAX_MS_LIMIT 60000u

/** Why the library refuses a request on its own (wharf_refusal_fn). */
enum wharf_refusal {
	/** The owner shard runs handshake_cap handshakes (REJECT_BUSY). */
	WHARF_REFUSAL_HANDSHAKES = 1,
	/** The owner's receive budget does not admit another QP, at
	 * admission (REJECT_BUSY) or when the accept takes the QP. */
	WHARF_REFUSAL_RECV_BUDGET = 2,
	/** The cm is shutting down. */
	WHARF_REFUSAL_DRAINING = 3,
	/** The request waited defer_max_ms without room (DEFER). */
	WHARF_REFUSAL_DEFER_TIMEOUT = 4,
	/** defer_max requests of the listener already wait (DEFER). */
	WHARF_REFUSAL_DEFER_FULL = 5,
	/** The request cannot be taken (no memory, a shard resource that
	 * cannot be created, a device the cm does not know). */
	WHARF_REFUSAL_RESOURCES = 6,
};

/**
 * A listener's refusal private data: write at most @max bytes (148 RC /
 * 136 UD) into @buf and return how many; 0 sends none.  @req is the
 * request as on_request would see it, or NULL when the refusal comes
 * before the request could be read.  A return above @max is logged and
 * sent as 0 bytes.
 * Context: a shard thread of the cm (the listener's or the owner's);
 * must not block or call into wharf.
 */
typedef size_t (*wharf_refusal_fn)(const struct wharf_conn_request *req,
				   enum wharf_refusal why, void *buf,
				   size_t max, void *arg);

/** Options for wharf_listen(); start from wharf_listen_opts_init(). */
struct wharf_listen_opts {
	/** sizeof(struct wharf_listen_opts) as compiled by the caller. */
	size_t size;
	/** Address to bind, with the port (0 = any free port, see
	 * wharf_listener_port()).  Copied. */
	const struct sockaddr *addr;
	/** Port space. */
	enum wharf_ps ps;
	/** rdma_listen() backlog; 0 = the system maximum
	 * (/proc/sys/net/rdma_ucm/max_backlog, 1024 when unreadable). */
	int backlog;
	/** Shard whose thread drains the listener; default 0. */
	unsigned shard;
	/** CM events taken per drain batch; 0 = 32. */
	unsigned batch;
	/** Callbacks of the accepted connections (required; copied). */
	const struct wharf_conn_ops *ops;
	/** Their argument (wharf_conn_set_arg() changes it per connection). */
	void *arg;
	/** Owner-shard policy, NULL = default; and its argument. */
	wharf_pick_shard_fn pick_shard;
	void *pick_arg;
	/** Parameters used when ops->on_request is NULL; NULL = accept(NULL).
	 * Copied, private data included. */
	const struct wharf_conn_param *accept_param;
	/** QP shape of the accepted connections (RC). */
	struct wharf_conn_qp_opts qp;
	/** Time for the application's decision, ms; 0 = 10000. */
	uint32_t decision_timeout_ms;
	/** Time from the REP to ESTABLISHED (the peer's RTU), ms;
	 * 0 = 20000, room for the CM to resend its REP four times (every
	 * ~4 s) when RTUs are lost: a peer whose RTU never arrived is
	 * established on its side and waits for data, so ending the
	 * handshake here first leaves it half open. */
	uint32_t accept_timeout_ms;
	/** Time from the DREQ to DISCONNECTED (lost DREQ/DREP: forced
	 * teardown), ms; 0 = 20000, room for the CM to resend a lost DREQ
	 * four times (every ~4 s).  A forced teardown ends the resends: a
	 * peer that lost every DREQ sent stays half open until its own
	 * timer (NVMe-oF: keep-alive) or its next send notices. */
	uint32_t disconnect_timeout_ms;
	/** Time in timewait before giving up on TIMEWAIT_EXIT, ms;
	 * 0 = 10000. */
	uint32_t timewait_timeout_ms;
	/** What to do with a request the owner has no room for; default
	 * WHARF_OVERLOAD_DEFER. */
	enum wharf_overload overload;
	/** DEFER: longest wait of a request, ms; 0 = 20000, at most
	 * WHARF_DEFER_MAX_MS_LIMIT.  Its decision and accept timers start
	 * when it is presented. */
	uint32_t defer_max_ms;
	/** DEFER: requests of this listener waiting at once (each holds a
	 * connection's memory and an rdma_cm_id); beyond, refused;
	 * 0 = 4096. */
	uint32_t defer_max;
	/** Private data of the library's own refusals, NULL = the default
	 * (see "Storm control"); and its argument.  Both must stay valid
	 * until wharf_cm_destroy() returns: requests handed over before
	 * wharf_listener_destroy() live on and may still be refused. */
	wharf_refusal_fn refusal;
	void *refusal_arg;
};

/**
 * wharf_listen_opts_init - fill @opts with defaults and its size (and the
 * size of @opts->qp).
 * @opts: the options to fill, or NULL (nothing is done).
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_listen_opts_init(struct wharf_listen_opts *opts);

/**
 * wharf_listen - start listening on an address.
 * @cm: the cm.
 * @opts: options; addr and ops are required.  Not retained.
 * @out: receives the listener, owned by the caller
 * (wharf_listener_destroy()).
 *
 * Return: 0; -EINVAL for NULL arguments or bad options (size, port space,
 * shard index, accept_param private data over the accept limit, QP
 * options, an unknown overload policy, defer_max_ms above
 * WHARF_DEFER_MAX_MS_LIMIT); -EADDRINUSE / -EADDRNOTAVAIL / -errno from rdma_bind_addr or
 * rdma_listen; -ENOMEM.
 * Context: any thread; blocks until the listener's shard has set it up
 * (directly when called on that shard).  No RCU rule.
 */
int wharf_listen(struct wharf_cm *cm, const struct wharf_listen_opts *opts,
		 struct wharf_listener **out);

/**
 * wharf_listener_destroy - stop listening and free @l.
 * @l: listener or NULL.
 *
 * Requests still queued in the kernel are refused by the CM when the
 * listening id goes; requests already handed over to an owner shard live
 * on, as do established connections; their counters keep counting into
 * the listener's memory until the last of them is freed.
 *
 * Return: 0.
 * Context: any thread except another shard's thread while the listener's
 * shard runs; blocks until the listener's shard has stopped it (directly
 * when called on that shard).  No RCU rule.
 */
int wharf_listener_destroy(struct wharf_listener *l);

/**
 * wharf_listener_port - the bound port (host byte order), useful after
 * binding port 0.
 * Context: any thread; non-blocking.  No RCU rule.
 */
uint16_t wharf_listener_port(const struct wharf_listener *l);

/**
 * wharf_listener_backlog - the backlog @l passed to rdma_listen(): the
 * options' value, else the system maximum read at wharf_listen() time.
 * Return: the backlog; 0 for a NULL @l.
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_listener_backlog(const struct wharf_listener *l);

/* ------------------------------------------------------------------------ */
/* Connecting                                                                */
/* ------------------------------------------------------------------------ */

/** Options for wharf_connect(); start from wharf_connect_opts_init(). */
struct wharf_connect_opts {
	/** sizeof(struct wharf_connect_opts) as compiled by the caller. */
	size_t size;
	/** Destination address with port (required; copied). */
	const struct sockaddr *dst;
	/** Source address, or NULL (copied). */
	const struct sockaddr *src;
	/** Port space. */
	enum wharf_ps ps;
	/** Parameters, or NULL for librdmacm's defaults (device maxima,
	 * retry_count = rnr_retry_count = 7, no private data).  Copied. */
	const struct wharf_conn_param *param;
	/** Callbacks (required; copied) and their argument. */
	const struct wharf_conn_ops *ops;
	void *arg;
	/** Owner shard, or WHARF_SHARD_ANY: the calling shard when called
	 * on one, else the least loaded shard. */
	int shard;
	/** QP shape (RC). */
	struct wharf_conn_qp_opts qp;
	/** Step timeouts, ms: address resolution (0 = 2000), route
	 * resolution (0 = 2000), REQ to ESTABLISHED (0 = 30000).  The two
	 * resolution timeouts are the kernel's (rdma_resolve_addr(),
	 * rdma_resolve_route()); the library's own guard, for a kernel
	 * that never reports, is 1 s longer. */
	uint32_t resolve_addr_timeout_ms;
	uint32_t resolve_route_timeout_ms;
	uint32_t connect_timeout_ms;
	/** As in wharf_listen_opts. */
	uint32_t disconnect_timeout_ms;
	uint32_t timewait_timeout_ms;
	/** Do not retry stale-connection REJs (reason 10). */
	bool no_stale_retry;
	/** Stale retries: attempts (0 = 5), first delay (0 = 10 ms), cap
	 * (0 = 1000 ms). */
	uint32_t stale_retry_max;
	uint32_t stale_retry_base_ms;
	uint32_t stale_retry_cap_ms;
	/** Retry busy REJs after the peer's retry-after hint. */
	bool busy_retry;
	/** Busy retries: attempts (0 = 8), floor (0 = 50 ms), cap (0 =
	 * 30000 ms). */
	uint32_t busy_retry_max;
	uint32_t busy_retry_base_ms;
	uint32_t busy_retry_cap_ms;
};

/**
 * wharf_connect_opts_init - fill @opts with defaults (shard =
 * WHARF_SHARD_ANY) and its size (and the size of @opts->qp).
 * @opts: the options to fill, or NULL (nothing is done).
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_connect_opts_init(struct wharf_connect_opts *opts);

/**
 * wharf_connect - start connecting; asynchronous.
 * @cm: the cm.
 * @opts: options; dst and ops are required.  Not retained (addresses,
 * parameters and private data are copied).
 * @id: receives the connection's id (may be NULL).
 *
 * Checks the arguments now; then, on the owner shard: creates an
 * rdma_cm_id on the shard's channel, resolves the address and the route,
 * takes a QP (RC), checks the parameters against the device found and
 * sends the REQ (or SIDR REQ).  Every step has its timeout.  The outcome
 * arrives through @opts->ops on the owner shard: on_established, or
 * on_rejected / on_error.  The owner picks the connection up from its
 * inbox before it runs messages sent to it later, so a wharf_conn_call()
 * made after this call finds the connection (lookups from other threads
 * may miss it until then).
 *
 * Return: 0; -EINVAL for NULL arguments or bad options (size, port space,
 * address family, shard index, QP options), private data over the connect
 * limit (56 RC / 180 UD), or an explicit responder_resources /
 * initiator_depth above the maximum of every device (a value valid on some
 * device but not on the one the route leads to fails later with on_error
 * WHARF_CONN_ERR_CONNECT, -EINVAL, before anything is sent); -EOVERFLOW
 * when the shard ran out of ids; -ENOMEM; -ESHUTDOWN once
 * wharf_cm_destroy() has started.  On error nothing is created and
 * nothing is sent.
 * Context: any thread; non-blocking: the connection goes to its owner
 * shard through a lock-free inbox (never refused), where every librdmacm
 * call and every callback happens; no callback runs inside this call.
 * No RCU rule.
 */
int wharf_connect(struct wharf_cm *cm, const struct wharf_connect_opts *opts,
		  uint64_t *id);

/* ------------------------------------------------------------------------ */
/* Connection calls (owner shard)                                            */
/* ------------------------------------------------------------------------ */

/**
 * wharf_accept - accept a request, now (in on_request) or later.
 * @conn: a passive connection whose request is pending.
 * @param: parameters, or NULL: the request's values adjusted down to the
 * local device, flow control echoed, rnr_retry_count 7, no private data.
 * 0xFF depths mean min(request, device maximum).  Copied.
 *
 * Takes a QP from the shard's pool (RC), moves it to RTS with the
 * negotiated depths and sends the REP (UD: the SIDR REP with
 * @param->ud_qp_num; the connection is established at once).
 *
 * Return: 0; -EINVAL for NULL @conn, a bad @param size, private data over
 * 196 (RC) / 136 (UD), an explicit depth above the local maximum, an
 * initiator_depth above the request's, a UD accept without ud_qp_num, or
 * a call on an active connection (in these cases nothing is sent and the
 * request is still pending); -EALREADY when already accepting or
 * rejected; -EISCONN when established; -ENOTCONN when the request is gone
 * (timed out, peer gave up); otherwise the connection is closed and a
 * REJ sent: -EBUSY when the shard's receive budget does not admit the QP
 * (busy REJ), -errno from verbs or librdmacm; on_error
 * (WHARF_CONN_ERR_CONNECT) reports the same failure.
 * Context: @conn's owner shard; blocks in a few kernel calls.
 */
int wharf_accept(struct wharf_conn *conn, const struct wharf_conn_param *param);

/**
 * wharf_conn_set_qp - the QP shape the accept of @conn takes.
 * @conn: a passive RC connection whose request is pending.
 * @qp: the shape; its non-zero fields replace the listener's (copied).
 *
 * For sizing each connection by what its request asks (NVMe-oF's queue
 * size): a shard's CQ holds every QP's send queue, so QPs sized for the
 * largest queue a peer could ask for cap the connections a shard serves.
 * Admission (the receive budget) was checked with the listener's
 * recv_credits; the accept checks the new shape again.  A shape other than
 * the res defaults is created at accept rather than taken from the pool.
 *
 * Return: 0; -EINVAL for NULL arguments, an active or UD connection, a
 * shape whose size is not this header's (or 0 with nothing set), or
 * min_rnr_timer above 31; -EALREADY when accepting or established;
 * -ENOTCONN when no request is pending (rejected, gone, or still
 * deferred).
 * Context: @conn's owner shard (on_request, or later before the accept);
 * non-blocking.
 */
int wharf_conn_set_qp(struct wharf_conn *conn,
		      const struct wharf_conn_qp_opts *qp);

/**
 * wharf_reject - reject a request, now or later.
 * @conn: a passive connection whose request is pending.
 * @private_data: sent in the REJ (copied); NULL when @len is 0.
 * @len: <= 148 (RC) / 136 (UD).
 *
 * The peer sees REJ reason 28 (consumer defined) with the private data.
 * The connection ends (no further callback) and must still be destroyed.
 *
 * Return: 0; -EINVAL for NULL @conn, private data over the limit or NULL
 * with a length, or an active connection (nothing sent); -EALREADY when
 * already rejected; -EBUSY while accepting; -EISCONN when established;
 * -ENOTCONN when the request is gone; -errno from rdma_reject (the
 * connection is closed anyway).
 * Context: @conn's owner shard; blocks in one kernel call.
 */
int wharf_reject(struct wharf_conn *conn, const void *private_data, size_t len);

/**
 * wharf_notify - report a QP event to the CM (rdma_notify(3)).
 * @event: IBV_EVENT_COMM_EST, the only event the CM takes.
 *
 * For applications that establish the connection out of band: forces the
 * CM to ESTABLISHED when data arrived before the RTU.  The library already
 * does this on the QP's IBV_EVENT_COMM_EST.
 *
 * Return: 0 (also when the CM was already established: EISCONN counts as
 * success); -EINVAL for NULL @conn or another @event; -ENOTCONN when the
 * connection is not connecting, accepting or established; -errno from
 * rdma_notify.
 * Context: @conn's owner shard; one kernel call.
 */
int wharf_notify(struct wharf_conn *conn, int event);

/**
 * wharf_disconnect - start disconnecting an established connection.
 *
 * Sends the DREQ (RC) and moves the QP to ERR.  on_disconnected follows
 * when the peer's DREP arrives, or after disconnect_timeout_ms (forced
 * teardown).  UD: ends the connection locally; on_disconnected runs
 * before the call returns.
 *
 * An active connection's DREQ takes a slot of its shard's disconnect
 * window (wharf_cm_opts.connect_window) and holds it until the answer
 * (or the forced teardown).  With the window full the call
 * returns 0 and the DREQ waits, in call order, with the connection still
 * established (receives still arrive; no timer runs until the DREQ is
 * sent; wharf_cm_stats.disconnects_waiting); the peer's own DREQ or
 * wharf_conn_destroy() ends the wait.  Why: thousands of DREQs at once
 * overrun the peers' CM queues, and a DREP later than
 * disconnect_timeout_ms ends in a forced teardown that stops the DREQ's
 * retransmission, so a peer that lost it never learns
 * (docs/design/modules.md).
 * Passive connections and WHARF_CONNECT_WINDOW_NONE send at once.
 *
 * Return: 0; -EINVAL for NULL; -EALREADY when already disconnecting
 * (or its DREQ already waits);
 * -ENOTCONN when not established (or already disconnected).
 * Context: @conn's owner shard; blocks in one kernel call.
 */
int wharf_disconnect(struct wharf_conn *conn);

/**
 * wharf_conn_destroy - end @conn and give it back.
 *
 * Whatever the state: a pending request is rejected, an established
 * connection disconnected (on_disconnected runs, inside this call, if it
 * has not yet), the QP closed and released, the rdma_cm_id destroyed.
 * No callback but on_send_done runs afterwards.  The memory is freed after
 * an RCU grace period (and after the QP drained); @conn must not be used
 * after the call, though readers that found it by lookup may finish.
 * Every connection the application saw (wharf_connect()'s id, or an
 * on_request) must be destroyed exactly once.
 *
 * Return: 0; -EINVAL for NULL or an already destroyed connection.
 * Context: @conn's owner shard; non-blocking except for the kernel calls.
 */
int wharf_conn_destroy(struct wharf_conn *conn);

/** A function run on a connection's owner shard (wharf_conn_call()). */
typedef void (*wharf_conn_fn)(struct wharf_conn *conn, void *arg);

/**
 * wharf_conn_call - run @fn(conn, @arg) on the owner shard of connection
 * @id: the way to call the functions above from another thread.
 * @fn: runs with the connection, or with NULL when @id is unknown or was
 * destroyed by the time the message runs.
 *
 * Return: 0 (@fn will run exactly once); -EINVAL for NULL @cm / @fn, an
 * id of no shard; -EAGAIN / -ESHUTDOWN from wharf_shard_send().
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_conn_call(struct wharf_cm *cm, uint64_t id, wharf_conn_fn fn,
		    void *arg);

/* ------------------------------------------------------------------------ */
/* Lookups and accessors                                                     */
/* ------------------------------------------------------------------------ */

/**
 * wharf_rcu_register_thread - make the calling application thread a reader
 * of the connection tables, for wharf_conn_lookup() outside shard
 * callbacks.
 *
 * Shard threads (and threads inside wharf_shard_poll()) are readers
 * already.  A registered thread starts online: it must call
 * wharf_rcu_quiescent_state() regularly, when it holds no pointer a lookup
 * returned, and wharf_rcu_thread_offline() before it blocks; otherwise no
 * destroyed connection is freed until it does (wharf_cm_destroy() waits
 * for that).  Unregister before the thread exits.
 *
 * Return: 0; -EALREADY when the thread is registered already; -ENOMEM.
 * Context: an application thread that is not a shard thread and does not
 * call wharf_shard_poll(); may allocate; non-blocking.
 */
int wharf_rcu_register_thread(void);

/**
 * wharf_rcu_unregister_thread - stop being a reader (before the thread
 * exits).  Does nothing for a thread that is not registered.
 * Context: a registered thread, outside wharf_rcu_read_lock(); takes a
 * mutex briefly.
 */
void wharf_rcu_unregister_thread(void);

/**
 * wharf_rcu_read_lock - start a read-side critical section: a connection
 * found by wharf_conn_lookup() until wharf_rcu_read_unlock() may be used
 * as wharf_conn_lookup() allows.  Sections may nest.
 * Context: a registered, online thread (or a shard callback); non-blocking.
 */
void wharf_rcu_read_lock(void);

/**
 * wharf_rcu_read_unlock - end the section of wharf_rcu_read_lock().
 * Context: as wharf_rcu_read_lock().
 */
void wharf_rcu_read_unlock(void);

/**
 * wharf_rcu_quiescent_state - the calling thread holds no pointer from a
 * lookup any more: connections destroyed before this call may be freed.
 * Context: a registered, online thread outside wharf_rcu_read_lock();
 * non-blocking.
 */
void wharf_rcu_quiescent_state(void);

/**
 * wharf_rcu_thread_offline - quiescent until wharf_rcu_thread_online();
 * call it before blocking (waiting for events, joining threads).
 * Context: a registered, online thread outside wharf_rcu_read_lock();
 * non-blocking.
 */
void wharf_rcu_thread_offline(void);

/**
 * wharf_rcu_thread_online - end an offline period.
 * Context: a registered, offline thread; non-blocking.
 */
void wharf_rcu_thread_online(void);

/**
 * wharf_conn_lookup - find a live connection by id.
 * Return: the connection, or NULL.  Valid until the calling thread's next
 * quiescent state; from a thread other than the owner, only
 * wharf_conn_id() and wharf_conn_shard() may be called on it.
 * Context: a shard callback, or an application thread registered with
 * wharf_rcu_register_thread(), online, inside wharf_rcu_read_lock();
 * non-blocking, lock-free.
 */
struct wharf_conn *wharf_conn_lookup(struct wharf_cm *cm, uint64_t id);

/**
 * wharf_conn_lookup_qp - find a live connection by its QP.
 * @verbs: the device; @qp_num: the QP number (e.g. a work completion's).
 * Return and Context: as wharf_conn_lookup().  A connection that retried
 * after a stale REJ is found only by its first QP.
 */
struct wharf_conn *wharf_conn_lookup_qp(struct wharf_cm *cm,
					const struct ibv_context *verbs,
					uint32_t qp_num);

/**
 * wharf_conn_id - the connection's id.
 * Context: any thread that holds @conn (owner, or a lookup under RCU).
 */
uint64_t wharf_conn_id(const struct wharf_conn *conn);

/**
 * wharf_conn_shard - the owner shard.
 * Context: as wharf_conn_id().
 */
struct wharf_shard *wharf_conn_shard(const struct wharf_conn *conn);

/**
 * wharf_conn_qp - the connection's QP (RC), from the accept / connect
 * until the connection ends; NULL otherwise.
 * Context: owner shard.
 */
struct wharf_qp *wharf_conn_qp(const struct wharf_conn *conn);

/**
 * wharf_conn_pd - the protection domain to use with the connection, once
 * its device is known (passive: always; active: from address resolution
 * on); NULL before.  RC: the PD of wharf's QPs on the device
 * (wharf_qp_dev_pd()), for registering memory only.  UD: a PD of the cm
 * for the application's UD QPs on the device; the address handle of the
 * lookup is on it.  Owned by the cm: destroy what you created on it before
 * wharf_cm_destroy().
 * Context: owner shard.
 */
struct ibv_pd *wharf_conn_pd(const struct wharf_conn *conn);

/**
 * wharf_conn_port_num - the device port of the connection (for
 * ibv_create_ah_from_wc() on UD), or 0 when not yet known.
 * Context: owner shard.
 */
uint8_t wharf_conn_port_num(const struct wharf_conn *conn);

/**
 * wharf_conn_get_request - the request a passive connection was born of,
 * or NULL: for an active connection, and once the passive one's
 * handshake is over (after on_established returned, the request and its
 * private data are freed, so that an established connection keeps only
 * what it needs).  A pointer from it is valid until then, or until the
 * connection is destroyed if that comes first.
 * Context: owner shard.
 */
const struct wharf_conn_request *
wharf_conn_get_request(const struct wharf_conn *conn);

/**
 * wharf_conn_set_arg - change the argument passed to @conn's callbacks.
 * Context: owner shard.
 */
void wharf_conn_set_arg(struct wharf_conn *conn, void *arg);

/**
 * wharf_conn_state_name - the connection's state name ("ESTABLISHED",
 * ...), for logs and tests.
 * Context: owner shard.
 */
const char *wharf_conn_state_name(const struct wharf_conn *conn);

/**
 * wharf_conn_ud_qp_ready - move an application UD QP from RESET to RTS with
 * the connection's port, P_Key index and Q_Key (what rdma_create_qp() does
 * for a UD QP on an rdma_cm_id).  Create it on wharf_conn_pd().
 * Return: 0; -EINVAL for NULL arguments, a non-UD connection or QP;
 * -ENOTCONN before the device is known; -errno from rdma_init_qp_attr /
 * ibv_modify_qp.
 * Context: owner shard; blocks in kernel calls.
 */
int wharf_conn_ud_qp_ready(struct wharf_conn *conn, struct ibv_qp *qp);

/** Handshake steps a connection timestamps (wharf_conn_step_ns()). */
enum wharf_conn_step {
	/** The owner shard took the connection up (active: the start of
	 * wharf_connect()'s work there; passive: the hand-over). */
	WHARF_STEP_ADOPTED = 0,
	/** Active: rdma_create_id() returned. */
	WHARF_STEP_ID_CREATED = 1,
	/** Active: ADDR_RESOLVED arrived. */
	WHARF_STEP_ADDR_RESOLVED = 2,
	/** Active: ROUTE_RESOLVED arrived. */
	WHARF_STEP_ROUTE_RESOLVED = 3,
	/** RC: the QP was taken and prepared (active: INIT; passive:
	 * RTR/RTS). */
	WHARF_STEP_QP_READY = 4,
	/** The REQ (active) or the REP (passive) was sent. */
	WHARF_STEP_SENT = 5,
	/** Active: the REP arrived (RTR/RTS and the RTU follow). */
	WHARF_STEP_REPLY = 6,
	/** The connection became ESTABLISHED (before on_established). */
	WHARF_STEP_ESTABLISHED = 7,
	/** Active: the connect window let the handshake start (equal to
	 * ADOPTED unless it waited; wharf_cm_opts.connect_window). */
	WHARF_STEP_ADMITTED = 8,
	WHARF_STEP_COUNT = 9
};

/**
 * wharf_conn_step_ns - when @conn last completed @step (a retry after a
 * stale or busy REJ stamps its steps again), CLOCK_MONOTONIC nanoseconds;
 * 0 when it has not (yet), or for NULL / an unknown step.  For benchmarks:
 * one clock read per step, no other cost.
 * Context: owner shard; non-blocking.
 */
uint64_t wharf_conn_step_ns(const struct wharf_conn *conn,
			    enum wharf_conn_step step);

/* ------------------------------------------------------------------------ */
/* Counters                                                                  */
/* ------------------------------------------------------------------------ */

/**
 * Outcome counters of a shard, a listener or the whole cm.  Each request
 * and each wharf_connect() ends in exactly one final outcome: rejected_app,
 * rejected_busy, rejected_by_peer, timed_out, unreachable, failed,
 * disconnected, aborted, deferred_timed_out or deferred_lost.  So once
 * everything has ended, requests + connects = the sum of the final
 * outcomes; meanwhile the gauges (handshakes, connections, deferred) hold
 * the rest.  Each value is read atomically; the snapshot as a whole is
 * not one instant.
 */
struct wharf_cm_stats {
	/** sizeof(struct wharf_cm_stats) as compiled by the caller. */
	size_t size;
	/** Passive: CONNECT_REQUESTs received (listener) / handed over. */
	uint64_t requests;
	/** Active: wharf_connect() calls started. */
	uint64_t connects;
	/** Passive connections established. */
	uint64_t accepted;
	/** Active connections established. */
	uint64_t connected;
	/** Final: rejected by the application (wharf_reject()). */
	uint64_t rejected_app;
	/** Final: refused by the library for overload or shutdown
	 * (handshake cap or receive budget with REJECT_BUSY, receive budget
	 * at accept time, defer_max reached, draining). */
	uint64_t rejected_busy;
	/** Final (active): on_rejected delivered. */
	uint64_t rejected_by_peer;
	/** Final: a step timer ran out (WHARF_CONN_ERR_TIMEOUT). */
	uint64_t timed_out;
	/** Final (active): UNREACHABLE. */
	uint64_t unreachable;
	/** Final: address, route, connect or device errors. */
	uint64_t failed;
	/** Final: on_disconnected delivered. */
	uint64_t disconnected;
	/** Final: destroyed before any outcome. */
	uint64_t aborted;
	/** Active: retries after a stale-connection REJ. */
	uint64_t stale_retried;
	/** Active: retries after a busy REJ. */
	uint64_t busy_retried;
	/** Disconnects ended by the timer (lost DREQ/DREP) and timewaits
	 * that never saw TIMEWAIT_EXIT. */
	uint64_t forced_teardowns;
	/** rdma_notify() calls (COMM_EST and wharf_notify()). */
	uint64_t notifies;
	/** Receives held until on_established. */
	uint64_t held_recvs;
	/** QPs recycled after TIMEWAIT_EXIT. */
	uint64_t timewait_exits;
	/** CM events that made no sense in their state (ignored). */
	uint64_t proto_errors;
	/** Gauge: handshakes in flight (passive and active). */
	uint64_t handshakes;
	/** Gauge: established connections not yet ended. */
	uint64_t connections;
	/** Gauge: wharf_connect() calls waiting for the connect window
	 * (counted in handshakes too). */
	uint64_t connects_waiting;
	/** Gauge: requests deferred, waiting for room on their owner shard
	 * (not counted in handshakes). */
	uint64_t deferred;
	/** Requests deferred (each once, whatever became of it). */
	uint64_t deferred_total;
	/** Of those, established after their wait. */
	uint64_t deferred_accepted;
	/** Final: deferred for defer_max_ms without room, then refused. */
	uint64_t deferred_timed_out;
	/** Final: an event said the peer gave up (or the device went away)
	 * while the request was deferred; destroyed without an answer.  (The
	 * kernel reports no event for most such requests: those end as
	 * deferred_timed_out, or fail when accepted.) */
	uint64_t deferred_lost;
	/** Gauge: the connect window's width now (summed over shards; 0
	 * with WHARF_CONNECT_WINDOW_NONE). */
	uint64_t connect_window;
	/** The adaptive window's widenings and narrowings so far. */
	uint64_t window_grows;
	uint64_t window_shrinks;
	/** Gauge: wharf_disconnect() calls whose DREQ waits for the
	 * disconnect window (still established; counted in connections). */
	uint64_t disconnects_waiting;
	/** Gauge: the disconnect window's width now (summed over shards; 0
	 * with WHARF_CONNECT_WINDOW_NONE). */
	uint64_t disconnect_window;
};

/**
 * wharf_cm_shard_stats - snapshot the counters of shard @index.
 * @out: @out->size must be set.
 * Return: 0; -EINVAL for NULL arguments, a bad index or size.
 * Context: any thread; non-blocking, no lock.  No RCU rule.
 */
int wharf_cm_shard_stats(const struct wharf_cm *cm, unsigned index,
			 struct wharf_cm_stats *out);

/**
 * wharf_cm_stats - the sum over every shard.
 * Return and Context: as wharf_cm_shard_stats().
 */
int wharf_cm_stats(const struct wharf_cm *cm, struct wharf_cm_stats *out);

/**
 * wharf_listener_stats - the counters of the connections of @l (gauges
 * are 0, but for deferred).
 * Return and Context: as wharf_cm_shard_stats().
 */
int wharf_listener_stats(const struct wharf_listener *l,
			 struct wharf_cm_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CM_H */
