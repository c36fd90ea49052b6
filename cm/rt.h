/*
 * cm/rt.h - the structures behind <wharf/cm.h> (internal).
 *
 * Ownership.  A wharf_conn belongs to its owner shard: its state machine,
 * QP, timer, rdma_cm_id and held receives are touched by that thread only.
 * Other threads reach it through the RCU table (id, QP), read only its id
 * and shard, and send it work through the shard's inbox or wharf_shard_send.
 * The exceptions, all atomics: the shard gauges (handshakes, connections)
 * that placement reads from the listener's shard, the counters that
 * snapshots read, a listener's counters (written by every owner shard of
 * its connections) and its reference count.
 *
 * Lifetime of a connection: references are held by the application (until
 * wharf_conn_destroy, or by the library for a connection never shown to
 * it), by the rdma_cm_id (until rdma_destroy_id, which waits for the
 * current event's ack), by each of its QPs (until released and on_closed
 * has run: a connection that retries takes a new QP while the old one
 * still drains), by the listener's hand-over (until the owner adopted it) and by
 * every call frame that runs a step on it.  When the last one goes, the
 * connection leaves the tables and is freed after a grace period.
 *
 * Steps.  Every input (CM event, API call, QP event, timer, the result of
 * a call) goes through cm/conn_state.h and the resulting step is executed
 * by wcm_run() (drive.c).  A callback may run a nested step on the same
 * connection; the outer step then carries on only with what cannot have
 * been superseded (see drive.c).
 */
#ifndef WHARF_CM_RT_H
#define WHARF_CM_RT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <netinet/in.h>
#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>

#include "cm/cm.h"
#include <wharf/core.h>
#include <wharf/numa.h>
#include <wharf/qp.h>

#include "cm/conn_param.h"
#include "cm/conn_state.h"
#include "cm/conn_table.h"
#include "cm/overload.h"
#include "cm/rej_busy.h"
#include "cm/window_ctl.h"
#include "core/list.h"

/*
 * Defaults (see cm.h).  DISCONNECT: the CM resends an unanswered DREQ
 * every ~4 s (the CM response timeout rdma_cm puts in its REQ, 2^20 x
 * 4.096 us; the fault suite's cut_dreq saw the second resend answered
 * 8.6 s after the DREQ).  A forced teardown destroys the cm_id and with
 * it those resends, leaving a peer that never heard the DREQ half open
 * (ucmatose waits for it forever): 20 s lets the CM send it five times.
 */
#define WCM_DEF_HANDSHAKE_CAP  1024u
#define WCM_DEF_RES_PER_DEV    1u
#define WCM_RES_PER_DEV_MAX    64u
#define WCM_DEF_BUSY_RETRY_MS  100u
#define WCM_DEF_REMOTE_PENALTY 64u
#define WCM_DEF_BATCH	       32u
#define WCM_DEF_BACKLOG	       1024
#define WCM_DEF_ADDR_MS	       2000u
#define WCM_DEF_ROUTE_MS       2000u
#define WCM_DEF_CONNECT_MS     30000u
#define WCM_DEF_DECISION_MS    10000u
#define WCM_DEF_ACCEPT_MS      20000u
#define WCM_DEF_DISCONNECT_MS  20000u
#define WCM_DEF_TIMEWAIT_MS    10000u
#define WCM_DEF_DEFER_MS       20000u
#define WCM_DEF_DEFER_MAX      4096u
/*
 * Address and route resolution carry their timeout to the kernel
 * (rdma_resolve_addr / rdma_resolve_route), which answers by that
 * deadline itself (resolved, or ADDR_ERROR / ROUTE_ERROR).  The
 * library's guard timer, for a kernel that never answers, fires this
 * much later, so that it does not race the kernel's own answer: with the
 * same deadline it once ended an attempt the kernel had not failed (one
 * of 50 connects timed out on a clean wire, the REQ never sent).
 */
#define WCM_RESOLVE_GRACE_MS 1000u
/* Shard events taken per drain of a shard channel. */
#define WCM_SHARD_BATCH 32u
/*
 * Late rdma_destroy_id() (events.c): the queue of ids starts at
 * WCM_DEAD_IDS_MIN entries and doubles up to WCM_DEAD_IDS_MAX (512 KiB
 * of pointers); a loop pass reads at most WCM_DEAD_READ events before it
 * looks whether the channel is dry.
 */
#define WCM_DEAD_IDS_MIN 256u
#define WCM_DEAD_IDS_MAX 65536u
#define WCM_DEAD_READ	 4096u
/*
 * Inbox items (hand-overs, wharf_connect() starts) a shard runs per loop
 * iteration: a burst of thousands of connects must not keep the shard from
 * its event channel, whose completions would otherwise wait behind it
 * while their step timers run out.
 */
#define WCM_INBOX_BATCH 8u
/* Teardown polls for drained QPs this often. */
#define WCM_TEARDOWN_POLL_NS (5u * 1000000u)

/* Counters, in the order of struct wharf_cm_stats after its size. */
enum wcm_ctr {
	WCM_C_REQUESTS = 0,
	WCM_C_CONNECTS,
	WCM_C_ACCEPTED,
	WCM_C_CONNECTED,
	WCM_C_REJ_APP,
	WCM_C_REJ_BUSY,
	WCM_C_REJ_PEER,
	WCM_C_TIMED_OUT,
	WCM_C_UNREACHABLE,
	WCM_C_FAILED,
	WCM_C_DISCONNECTED,
	WCM_C_ABORTED,
	WCM_C_STALE_RETRIED,
	WCM_C_BUSY_RETRIED,
	WCM_C_FORCED,
	WCM_C_NOTIFIES,
	WCM_C_HELD,
	WCM_C_TW_EXITS,
	WCM_C_PROTO,
	WCM_C_DEFERRED,
	WCM_C_DEFER_ACCEPTED,
	WCM_C_DEFER_EXPIRED,
	WCM_C_DEFER_LOST,
	WCM_C_COUNT
};

struct wcm_counters {
	_Atomic uint64_t v[WCM_C_COUNT];
};

/* One RDMA device. */
struct wcm_dev {
	unsigned index;
	struct ibv_context *verbs;
	struct wharf_qp_dev *qdev;
	/* UD: the application's QPs and the address handles; never
	 * wharf_qp_dev_pd(), which must carry only wharf's QPs. */
	struct ibv_pd *ud_pd;
	struct wcm_dev_limits lim;
	uint64_t local_nodes; /* 0: unknown (every shard is local) */
	char name[64];
};

/* Something handed to a shard through its inbox (lock-free stack). */
struct wcm_inbox_item {
	struct wcm_inbox_item *next;
	void (*fn)(struct wcm_inbox_item *item);
};

struct wharf_conn;

/* One shard's cm state. */
struct wcm_shard {
	struct wharf_cm *cm;
	struct wharf_shard *shard;
	unsigned index;
	unsigned node;
	struct rdma_event_channel *chan;
	struct wharf_watch *watch;
	struct wharf_poller *poller;
	struct wharf_timer *teardown_timer;
	/* [cm->ndev * cm->res_per_dev]: device d's k-th at d * res_per_dev
	 * + k, created on demand, the next only once those before it can
	 * admit no more (dev.c). */
	struct wharf_qp_res **res;
	struct wcore_list conns; /* every connection owned here */
	_Atomic(struct wcm_inbox_item *) inbox;
	/* Taken from the inbox, not run yet (FIFO; see wcm_inbox_drain_max). */
	struct wcm_inbox_item *pend_head, *pend_tail;
	/* The connect window (window.c): handshakes holding a slot, and the
	 * FIFO of those waiting for one. */
	unsigned win_running;
	struct wcore_list win_queue;  /* of wharf_conn.win_link */
	_Atomic uint32_t win_waiting; /* gauge */
	/* The disconnect window (disconnect_window.c): the same for DREQs,
	 * with a width of its own. */
	unsigned disc_running;
	struct wcore_list disc_queue; /* of wcm_active.win_link */
	struct wcm_wctl dctl;
	_Atomic uint32_t disc_waiting, disc_limit; /* gauges */
	struct wcm_wctl wctl;			   /* the window's width */
	/* Gauges of wctl for wharf_cm_stats(). */
	_Atomic uint32_t win_limit;
	_Atomic uint64_t win_grows, win_shrinks;
	/* Passive admission (defer.c): handshakes presented and running,
	 * and the FIFO of deferred requests. */
	unsigned adm_running;
	struct wcore_list defer_queue; /* of wharf_conn.defer_link */
	/* Ids on this shard's channel waiting for rdma_destroy_id() until
	 * the channel's unread events are drained (events.c). */
	struct rdma_cm_id **dead_ids;
	unsigned ndead, dead_cap;
	_Atomic uint32_t defer_n; /* gauge */
	_Atomic uint64_t next_seq;
	/* Gauges read by placement on other threads. */
	_Atomic uint32_t hs_passive;
	_Atomic uint32_t hs_active;
	_Atomic uint32_t nconns;
	struct wcm_counters ctr; /* written by this shard only */
	uint64_t rnd;		 /* backoff jitter state */
	/* Requests it could not take, by errno: logged at 1, 2, 4, ... */
	struct {
		int err;
		uint64_t n;
	} take_fails[4];
	bool rcu_attached;
	bool closing;
	struct wcm_sync *teardown_sync;
};

struct wharf_cm {
	struct wharf_ctx *ctx;
	struct wharf_numa *numa;
	struct wcm_conn_table *table;
	unsigned handshake_cap;
	/* Every shard's window: wcm_wctl_init(start, lo, hi); lo == hi is a
	 * fixed one, ~0u both is none (window_ctl.h). */
	unsigned win_start, win_lo, win_hi;
	uint32_t busy_retry_after_ms;
	uint64_t remote_penalty;
	struct wharf_qp_res_opts res_opts;
	unsigned res_per_dev; /* wharf_cm_opts.res_per_device */
	unsigned nshards;
	struct wcm_shard **shards;
	unsigned ndev;
	struct wcm_dev *devs;
	struct rdma_cm_id **dev_ids; /* librdmacm's device list holder */
	struct ibv_context **dev_list;
	_Atomic bool closing;
	uint32_t max_rd_atom;	   /* max over devices */
	uint32_t max_init_rd_atom; /* max over devices */
};

/* Per-connection configuration (copied from the listen/connect options). */
struct wcm_cfg {
	uint32_t addr_ms, route_ms, connect_ms, decision_ms, accept_ms;
	uint32_t disconnect_ms, timewait_ms, defer_ms;
	bool stale_retry, busy_retry;
	struct wcm_retry_policy stale, busy;
	struct wharf_conn_qp_opts qp;
};

struct wharf_listener {
	struct wharf_cm *cm;
	struct wcm_shard *sh;
	struct rdma_event_channel *chan;
	struct rdma_cm_id *id;
	struct wharf_watch *watch;
	enum wcm_ps ps;
	unsigned batch;
	int backlog;
	uint16_t port;
	struct sockaddr_storage addr;
	struct wharf_conn_ops ops;
	void *arg;
	wharf_pick_shard_fn pick;
	void *pick_arg;
	bool has_accept_param;
	struct wharf_conn_param accept_param;
	uint8_t accept_pdata[WCM_PDATA_ACCEPT_RC];
	struct wcm_cfg cfg;
	enum wcm_overload overload;
	uint32_t defer_max;
	wharf_refusal_fn refusal;
	void *refusal_arg;
	_Atomic uint32_t deferred; /* gauge, written by the owner shards */
	struct wcm_counters ctr;   /* written by several shards: fetch_add */
	_Atomic unsigned refs;	   /* the owner + connections */
};

/* A receive held until ESTABLISHED. */
struct wcm_held {
	struct wcm_held *next;
	void *buf;
	struct wharf_qp_recv rx;
	bool copy; /* private receive queue: a copy (qp reposts the buffer) */
};

/* An address rdma_cm can give: IPv4, IPv6 or AF_IB (not a 128-byte
 * sockaddr_storage per connection). */
union wcm_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
	struct sockaddr_ib ib;
};

/* What only an active connection keeps (wharf_connect()'s side), in the
 * connection's own allocation, behind the shared part. */
struct wcm_active {
	struct wharf_conn *conn;    /* the connection this part ends */
	struct wcore_list win_link; /* waiting for a connect (window.c) or, once
				     * established, a disconnect slot */
	uint64_t dreq_ns;	    /* when the DREQ took its slot */
	struct wcm_cfg cfg;	    /* from wharf_connect()'s options */
	struct wharf_conn_ops ops;  /* wharf_connect()'s; c->ops points here */
	/* What the application asked for. */
	bool want_null;
	struct wcm_conn_param want;
	uint8_t want_pdata[WCM_PDATA_CONNECT_UD];
	uint32_t retry_delay_ms;
	/* The peer's REP (or REJ) parameters and private data. */
	struct wcm_conn_param peer_param;
	struct wcm_pdata peer_pdata;
	bool rej_is_busy;
	struct wcm_rej_busy rej_busy;
	/* UD: the SIDR reply. */
	uint32_t ud_qpn, ud_qkey;
	struct ibv_ah *ud_ah;
	struct ibv_ah_attr ud_ah_attr;
};

/* What only a passive connection keeps, and only for its handshake (the
 * request it was born of, the admission queue, the accept's options): an
 * allocation of its own, freed once on_established has returned
 * (wcm_conn_trim), so that an established connection is the shared part
 * alone.  The request's private data ends it, and the allocation is sized
 * to what arrived (56 bytes on IB and RoCE), not to the largest any
 * transport reports (WCM_PDATA_RX_MAX). */
struct wcm_passive {
	struct wharf_conn *conn;	/* whose part this is */
	struct wharf_numa_arena *arena; /* where it was allocated */
	struct wcore_list defer_link;	/* waiting for admission (defer.c) */
	/* The QP's options: the listener's, as wharf_conn_set_qp() changed
	 * them (an active connection uses its cfg's). */
	struct wharf_conn_qp_opts qp_opts;
	const struct wharf_conn_param *acc; /* during wharf_accept */
	struct wcm_conn_param req;	    /* .private_data: req_pdata */
	struct wharf_conn_request req_view; /* until the handshake is over */
	/* wharf_reject()'s private data (allocated only when it has
	 * some), until the REJ is sent. */
	uint8_t *rej_pdata;
	size_t rej_len;
	uint8_t req_pdata_len;
	uint8_t req_pdata[]; /* req_pdata_len bytes */
};

/*
 * A connection: what both sides share, followed in the same allocation by
 * the side's own part (act or pas points to it; the other is NULL), so
 * that a server's thousands of passive connections do not carry the
 * active side's buffers (docs/bench/storm.md, "Heap per connection").
 */
struct wharf_conn {
	struct wcm_conn_entry entry; /* tables */
	struct wcm_inbox_item inbox; /* hand-over / start */
	uint64_t id;
	struct wharf_cm *cm;
	struct wcm_shard *sh;
	struct wharf_numa_arena *arena;
	struct wharf_listener *listener; /* passive; holds a reference */
	struct wcore_list shard_link;	 /* on sh->conns once published */
	struct wcm_conn_sm sm;
	enum wcm_ps ps;
	struct rdma_cm_id *cm_id;
	struct wcm_dev *dev;
	struct wharf_timer *timer;
	/* The listener's callbacks (the connection holds a reference on
	 * it), or the active side's own copy. */
	const struct wharf_conn_ops *ops;
	void *arg;
	/* Timers and retry policy: the active side's own, or the
	 * listener's (which the connection holds a reference on). */
	const struct wcm_cfg *cfg;
	struct wcm_active *act; /* active side, else NULL */
	/* Passive side until its handshake is over, else NULL (the side
	 * is sm.side). */
	struct wcm_passive *pas;
	/* Lifetime. */
	unsigned refs;
	unsigned gen;	  /* bumped by every committed step */
	_Atomic int dead; /* destroyed: lookups skip it */
	bool adopted, inserted, app_ref, handover_ref, id_ref;
	unsigned qps_draining; /* released QPs whose on_closed is pending */
	bool in_event, destroy_id_pending, freeing;
	bool in_handshake, counted_conn, quiet;
	/* A timer could not be had: the wait it bounds ends at once, at the
	 * end of the step (drive.c). */
	bool timer_lost;
	/* (The small fields together: no padding between them.)
	 * Active: holds a connect window slot (else it may wait for one,
	 * linked on sh->win_queue; window.c).  Passive: holds an admission
	 * slot (adm_running), or waits for one linked on sh->defer_queue;
	 * was_deferred: it did wait. */
	bool win_slot, adm_slot, was_deferred;
	bool qp_bound, qpn_sent, qp_closed_cb;
	uint8_t refusal; /* enum wcm_refusal: the REJ is the library's own */
	bool busy_rejected;
	uint8_t port_num;
	int rej_reason;
	int last_err;
	/* QP. */
	struct wharf_qp *qp;
	struct wcm_held *held, *held_tail;
	/* Addresses. */
	union wcm_sockaddr local, peer;
	/* Negotiated (sent) parameters. */
	struct wcm_conn_param neg;
	/* When each handshake step last completed (wharf_conn_step_ns). */
	uint64_t step_ns[WHARF_STEP_COUNT];
};

/* A cross-thread wait (setup and teardown of shards and listeners). */
struct wcm_sync;
struct wcm_sync *wcm_sync_new(unsigned pending);
void wcm_sync_done(struct wcm_sync *s, int err);
int wcm_sync_wait(struct wcm_sync *s); /* frees; returns the first error */

/* Counters (stats.c). */
void wcm_count(struct wharf_conn *c, enum wcm_ctr ctr);
void wcm_count_shard(struct wcm_shard *sh, enum wcm_ctr ctr);
void wcm_count_listener(struct wharf_listener *l, enum wcm_ctr ctr);
void wcm_count_outcome(struct wharf_conn *c, const struct wcm_step *st);

/* Devices and shard resources (dev.c). */
int wcm_devs_open(struct wharf_cm *cm, unsigned async_shard);
void wcm_devs_close(struct wharf_cm *cm);
struct wcm_dev *wcm_dev_find(struct wharf_cm *cm, struct ibv_context *verbs);
/* The shard's first res on @dev that admits a QP as @q describes
 * (wharf_qp_res_admit()), created if need be and allowed
 * (res_per_dev); NULL with *err: -EBUSY when none may, or the error of
 * creating one. */
struct wharf_qp_res *wcm_res_admitting(struct wcm_shard *sh,
				       struct wcm_dev *dev,
				       const struct wharf_conn_qp_opts *q,
				       int *err);
/* Gives back a receive buffer kept from one of the shard's res on @dev. */
void wcm_res_recv_put(struct wcm_shard *sh, struct wcm_dev *dev, void *buf);

/* Shards (shard.c). */
int wcm_shards_start(struct wharf_cm *cm);
int wcm_shard_alloc(struct wharf_cm *cm, unsigned index); /* cm->shards[i] */
int wcm_shard_poller_start(struct wcm_shard *sh);	  /* on the shard */
void wcm_shards_stop(struct wharf_cm *cm);
struct wcm_shard *wcm_shard_cur(struct wharf_cm *cm);
void wcm_inbox_push(struct wcm_shard *sh, struct wcm_inbox_item *item);
/* On the shard: run every queued hand-over / connect, in order. */
unsigned wcm_inbox_drain(struct wcm_shard *sh);
/* On the shard: run at most @max of them (the loop's share; see below). */
unsigned wcm_inbox_drain_max(struct wcm_shard *sh, unsigned max);
uint32_t wcm_rand(struct wcm_shard *sh);
int wcm_set_nonblock(int fd);

/* Connections: life and tables (conn.c). */
/* @pdata_len: a passive connection's room for the request's private
 * data (0 for an active one). */
struct wharf_conn *wcm_conn_alloc(struct wcm_shard *sh, enum wcm_ps ps,
				  enum wcm_side side, size_t pdata_len);
/* A passive connection built on another shard's arena, moved to @sh's;
 * returns the new one (and frees @c), or NULL (then @c is unchanged). */
struct wharf_conn *wcm_conn_move(struct wharf_conn *c, struct wcm_shard *sh);
int wcm_conn_publish(struct wharf_conn *c);
void wcm_conn_put(struct wharf_conn *c);
void wcm_conn_unref(struct wharf_conn *c); /* drop one frame reference */
/* With no frame on it and its handshake over (ESTABLISHED or later, not
 * ended): free what only the handshake needed (the passive part, an idle
 * timer).  Called by wcm_conn_unref(). */
void wcm_conn_trim(struct wharf_conn *c);
/* The QP options a connection takes its QP with. */
const struct wharf_conn_qp_opts *wcm_conn_qp_opts(const struct wharf_conn *c);
/* The connection's timer fired (or could not be armed). */
void wcm_conn_timeout(struct wharf_conn *c);
/* c->timer, on the owner shard; 0 or -errno. */
int wcm_conn_timer_create(struct wharf_conn *c);
void wcm_conn_bind_qp(struct wharf_conn *c);
void wcm_conn_free_unpublished(struct wharf_conn *c);
int wcm_conn_setup(struct wharf_conn *c); /* id, timer, publish */

/* The step executor (drive.c). */
void wcm_run(struct wharf_conn *c, const struct wcm_step *st);
void wcm_feed_call(struct wharf_conn *c, enum wcm_call call, int rc);
void wcm_feed_cm(struct wharf_conn *c, const struct wcm_cm_input *in);
void wcm_destroy_id(struct wharf_conn *c);
/* On the shard: queue @id for rdma_destroy_id() once its channel has no
 * unread events (false: the queue is full, destroy it now). */
bool wcm_dead_id_push(struct wcm_shard *sh, struct rdma_cm_id *id);
/* On the shard: read what the channel holds, then destroy the queued
 * ids if it is dry (or @force: the shard is stopping); returns how many. */
unsigned wcm_dead_ids_flush(struct wcm_shard *sh, bool force);
/* Reads the shard's channel (at most WCM_DEAD_READ events) before a
 * timer judges a wait (events.c). */
void wcm_shard_catch_up(struct wcm_shard *sh);
void wcm_arm_timer(struct wharf_conn *c, unsigned kind);

/* Actions (active.c, passive.c, data.c). */
int wcm_act_resolve_addr(struct wharf_conn *c);
int wcm_act_resolve_route(struct wharf_conn *c);
int wcm_act_connect(struct wharf_conn *c);
int wcm_act_establish(struct wharf_conn *c);
void wcm_act_restart(struct wharf_conn *c);
int wcm_act_accept(struct wharf_conn *c);
int wcm_act_reject(struct wharf_conn *c);
int wcm_act_disconnect(struct wharf_conn *c);
int wcm_act_notify(struct wharf_conn *c);
void wcm_qp_close(struct wharf_conn *c);
void wcm_qp_release(struct wharf_conn *c, bool timewait_exit);
void wcm_held_flush(struct wharf_conn *c);
void wcm_held_drop(struct wharf_conn *c);
int wcm_take_qp(struct wharf_conn *c, struct wharf_qp_res *res);

/* Deliveries (deliver.c). */
void wcm_deliver_request(struct wharf_conn *c);
void wcm_deliver_established(struct wharf_conn *c);
void wcm_deliver_rejected(struct wharf_conn *c);
void wcm_deliver_error(struct wharf_conn *c, unsigned error);
void wcm_deliver_disconnected(struct wharf_conn *c);

/* Events (events.c). */
void wcm_shard_chan_ready(struct wharf_watch *w, int fd, uint32_t ev,
			  void *arg);
void wcm_adopt(struct wharf_conn *c);

/* The library's own refusals (refusal.c): the private data of @why for a
 * request of @l (@req NULL before it was read), into @buf (at least
 * WCM_PDATA_REJECT_RC bytes); returns its length. */
size_t wcm_refusal_pdata(const struct wharf_listener *l,
			 struct wcm_shard *owner,
			 const struct wharf_conn_request *req,
			 enum wcm_refusal why, uint8_t *buf);
/* The counter of a refusal's final outcome. */
enum wcm_ctr wcm_refusal_ctr(enum wcm_refusal why);
/* Refuse an adopted request before it entered the state machine. */
void wcm_refuse(struct wharf_conn *c, enum wcm_refusal why);

/* Passive admission (defer.c); owner shard only. */
void wcm_admit(struct wharf_conn *c); /* adopted: present, defer or refuse */
void wcm_adm_leave(struct wharf_conn *c);   /* the handshake ended */
void wcm_defer_leave(struct wharf_conn *c); /* left DEFERRED otherwise */
bool wcm_defer_ready(struct wcm_shard *sh);
unsigned wcm_defer_admit(struct wcm_shard *sh, unsigned max);
void wcm_defer_drain(struct wcm_shard *sh); /* shutdown: refuse all */
/* A request the shard could not take (@err): logged once per doubling. */
void wcm_log_take_fail(struct wcm_shard *sh, int err);

/* Timestamps a handshake step (wharf_conn_step_ns, api.c). */
void wcm_stamp(struct wharf_conn *c, enum wharf_conn_step step);

/* Connect window (window.c); owner shard only. */
void wcm_window_enter(struct wharf_conn *c); /* start now or wait */
void wcm_window_leave(struct wharf_conn *c); /* the handshake ended */
/* Disconnect window (disconnect_window.c); owner shard only. */
void wcm_dwin_init(struct wcm_shard *sh);
/* wharf_disconnect() of @c: 0 = send the DREQ now, 1 = it waits for a
 * slot, -EALREADY = it already waits. */
int wcm_dwin_disconnect(struct wharf_conn *c);
/* After each transition (wcm_run): gives back what the new state no
 * longer holds (a DREQ's slot, a disconnect's place in the queue). */
void wcm_dwin_settle(struct wharf_conn *c);
/* @c's disconnect timer ran out: its DREQ went unanswered. */
void wcm_dwin_timeout(struct wharf_conn *c);
bool wcm_dwin_ready(const struct wcm_shard *sh);
unsigned wcm_dwin_admit(struct wcm_shard *sh, unsigned max);
/* What a handshake holding a slot tells the window's width (before
 * wcm_window_leave for its end). */
void wcm_window_feedback(struct wharf_conn *c, enum wcm_wctl_signal sig);
void wcm_window_init(struct wcm_shard *sh);
bool wcm_window_ready(const struct wcm_shard *sh);
unsigned wcm_window_admit(struct wcm_shard *sh, unsigned max);

/* Helpers. */
size_t wcm_sockaddr_len(const struct sockaddr *sa);
int wcm_errno(void); /* -errno of a failed librdmacm call, never 0 */

#endif /* WHARF_CM_RT_H */
