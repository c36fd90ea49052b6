/*
 * qp/internal.h - the structures behind <wharf/qp.h> (internal).
 *
 * Ownership: a wharf_qp_res and its QPs belong to the res's shard thread;
 * nothing here is locked.  The only cross-thread state is the device's
 * reference count, its resource count, and each QP's generation, which the
 * async shard reads while the QP cannot be destroyed (its event is not yet
 * acknowledged; see dev.c).
 *
 * Re-entrancy: no wharf_qp_* call runs a callback.  Callbacks run from the
 * res poller, the channel watch, the res timer and async messages.  Work
 * that follows from a state change (delivering on_closed, cancelled WRs,
 * pooling or destroying a QP) is queued on the res's reap list and done by
 * wqp_reap() at those top-level points, so a QP is never freed while a
 * callback of the completion loop can still reach it.
 */
#ifndef WHARF_QP_INTERNAL_H
#define WHARF_QP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <wharf/core.h>
#include <wharf/numa.h>

#include "core/list.h"
#include "qp/admit.h"
#include "qp/cq_size.h"
#include "qp/credit.h"
#include "qp/ops_tab.h"
#include "qp/qp.h"
#include "qp/qpn_map.h"
#include "qp/quarantine.h"
#include "qp/res_fit.h"
#include "qp/wrq.h"

/* Work completions polled per ibv_poll_cq() call. */
#define WQP_POLL_BATCH 32u
/* Poll calls per poller run (bounded work per loop iteration). */
#define WQP_POLL_ROUNDS 8u
/* CQ events acknowledged in one ibv_ack_cq_events(). */
#define WQP_CQ_ACK_BATCH 64u
/* Default wait for IBV_EVENT_QP_LAST_WQE_REACHED before assuming it. */
#define WQP_DEFAULT_LAST_WQE_MS 200u

struct wharf_qp_dev {
	struct wharf_ctx *ctx;
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	struct wharf_shard *async_shard;
	struct wharf_watch *watch; /* async shard only */
	/* The watch was installed by a message to the async shard (the
	 * opener was another thread while the shards ran): from then on
	 * only that shard reads or writes @watch. */
	bool watch_by_msg;
	atomic_uint refs; /* the owner + messages in flight */
	atomic_uint nres;
	atomic_uint_fast64_t next_res_id;
	atomic_bool last_wqe_warned;
	unsigned nshards;
	/* [nshards]: shard i's res on the device, a list through dev_next
	 * (a shard may have several); slot i is read and written by shard i
	 * only. */
	struct wharf_qp_res **res;
};

/* A doubly linked list of QPs (free, quarantine, closing). */
struct wqp_list {
	struct wcore_list head; /* of wharf_qp.link, oldest first */
	uint32_t len;
};

enum wqp_list_id {
	WQP_IN_NONE = 0,
	WQP_IN_FREE,
	WQP_IN_QUARANTINE,
	WQP_IN_CLOSING,
};

/*
 * One per connection, thousands per shard: kept in jemalloc's 192-byte
 * class (a build-time check in pool.c).  The small enums are 8-bit fields
 * and the flags single bits (only the owning shard writes any of them;
 * @gen, the one field another thread reads, is not a bit-field), and the
 * callbacks are an index into the res's table of distinct sets.
 */
struct wharf_qp {
	struct ibv_qp *ibqp;
	struct wharf_qp_res *res;
	/* Incarnation, bumped at each take; read by the async shard. */
	atomic_uint gen;
	uint32_t qpn;
	enum wqp_life life;
	enum ibv_qp_state vstate : 8; /* the state wharf moved it to */
	enum wharf_qp_fate fate : 8;
	enum wqp_life_act act : 8; /* pending action for wqp_reap() */
	enum wqp_list_id list : 8;
	/* What the life enum cannot say.  Whether it counts as taken
	 * (wqp_taken()), was released (the life step refuses a second
	 * release) or holds its claims (TAKEN..CLOSING_RELEASED) is derived. */
	bool pooled_shape : 1; /* shape: SRQ and the res's default SQ */
	bool private_rq : 1;   /* shape: a receive queue of its own */
	bool broken : 1;       /* history: a modify failed, never pooled */
	bool last_wqe : 1; /* closing: LAST_WQE_REACHED came (or timed out) */
	bool error_reported : 1; /* LIVE: its error already reported, once */
	bool dirty : 1;		 /* on the res's dirty list (singly linked) */
	bool in_reap : 1;	 /* on the res's reap list (singly linked) */
	uint8_t min_rnr_timer;
	uint16_t scq;	  /* index of its send CQ in res->cqs */
	uint16_t ops_idx; /* its callbacks: res->ops (0: none, when pooled) */
	uint32_t sq_depth;
	uint32_t rq_depth;
	uint32_t recv_credits;
	uint32_t rq_posted;
	uint32_t q_reads;     /* READs waiting in @q */
	uint64_t deadline_ns; /* closing: LAST_WQE wait; quarantine: expiry */
	uint64_t release_ns;
	struct wqp_credit cr;
	struct wqp_wrq q;      /* waiting for credits */
	struct wqp_wrq cancel; /* cancelled by close, to complete */
	struct wharf_qp *dirty_next;
	struct wharf_qp *reap_next;
	struct wcore_list link; /* on the wqp_list named by .list */
	struct wharf_buf_pool *rq_bufs;
	void *arg;
};

/* A res's CQs: cqs[WQP_CQ_RECV] takes every receive, the others sends. */
enum { WQP_CQ_RECV = 0, WQP_CQ_SEND0 = 1 };
struct wqp_cq {
	struct ibv_cq *cq;
	bool armed;
	unsigned unacked;
	struct wqp_cq_budget b;
	/* Send CQs: the send queue entries of the free QPs bound to it
	 * (kept by the free list's push and removal, for the refill's
	 * choice of CQ without a walk of the list). */
	uint32_t pooled_sq;
};

struct wharf_qp_res {
	struct wharf_qp_dev *dev;
	struct wharf_qp_res *dev_next; /* the shard's next res on @dev */
	struct wharf_shard *shard;
	unsigned shard_idx;
	uint64_t id;
	struct wharf_numa_arena *arena;
	struct wharf_qp_res_opts o; /* resolved options */
	/* Completion queues, on one channel: receives (the SRQ's buffers and
	 * private receive queues) on the first, sends on the others, added
	 * as QPs need room (up to 1 + o.send_cq_max), so that a shard's
	 * connections are not bounded by one device-sized CQ. */
	struct ibv_comp_channel *chan;
	struct wqp_cq *cqs; /* [1 + o.send_cq_max], ncqs created */
	unsigned ncqs;
	struct wharf_watch *chan_watch;
	struct wharf_poller *poller;
	/* Shared receive queue. */
	struct ibv_srq *srq;
	/* SRQ buffers in chunks of srq_depth (the last may be smaller):
	 * buffer i is number i % srq_depth of chunk i / srq_depth. */
	struct wharf_buf_pool **chunks; /* [ceil(srq_max / srq_depth)] */
	uint32_t nchunks;
	uint32_t srq_posted;
	uint32_t *pending; /* [srq_max] buffer indexes to repost */
	uint32_t npending;
	uint8_t *held; /* [srq_max] 1 while kept by on_recv */
	bool srq_limit_armed;
	struct wqp_admit admit;
	/* The distinct callback sets its QPs were taken with. */
	struct wqp_ops_tab ops;
	/* QPs. */
	struct wqp_qpn_map map;
	uint32_t gen;
	uint32_t nactive; /* taken and not yet pooled/destroyed */
	struct wqp_list free;
	struct wqp_list quarantine;
	struct wqp_list closing;
	bool refilling;
	struct wharf_timer *timer;
	struct wharf_qp *dirty;
	struct wharf_qp *reap;
	struct ibv_send_wr swr[WQP_POST_BATCH];
	struct wharf_wr *batch[WQP_POST_BATCH];
	struct wharf_qp_res_stats st;
};

/* The callbacks @qp was taken with (none while it is pooled). */
static inline const struct wharf_qp_ops *wqp_qp_ops(const struct wharf_qp *qp)
{
	return wqp_ops_tab_get(&qp->res->ops, qp->ops_idx);
}

/* dev.c */
void wqp_dev_get(struct wharf_qp_dev *dev);
void wqp_dev_put(struct wharf_qp_dev *dev);

/* list helpers (pool.c) */
void wqp_list_init(struct wqp_list *l);
struct wharf_qp *wqp_list_first(const struct wqp_list *l);
void wqp_list_push(struct wqp_list *l, enum wqp_list_id id,
		   struct wharf_qp *qp);
void wqp_list_del(struct wqp_list *l, struct wharf_qp *qp);
struct wharf_qp *wqp_list_pop(struct wqp_list *l);

/* pool.c */
int wqp_qp_create(struct wharf_qp_res *res, unsigned scq, uint32_t sq_depth,
		  bool private_rq, uint32_t rq_depth, struct wharf_qp **out);
/* A free QP whose send CQ is @scq, off the free list; NULL if none. */
struct wharf_qp *wqp_pool_take_free(struct wharf_qp_res *res, unsigned scq);
void wqp_qp_destroy(struct wharf_qp *qp);
void wqp_reap_add(struct wharf_qp *qp);
void wqp_reap(struct wharf_qp_res *res);
void wqp_res_kick(struct wharf_qp_res *res);
void wqp_res_timer_fn(struct wharf_timer *timer, void *arg);
void wqp_drain_check(struct wharf_qp *qp);
void wqp_pool_fini(struct wharf_qp_res *res);
/* Taken and not yet back in the pool, in quarantine or destroyed: counted
 * in nactive.  A QP waits in the free or the quarantine list exactly when
 * it is not taken. */
bool wqp_taken(const struct wharf_qp *qp);
/* Gives back the admission credits and CQ room @qp claimed at take:
 * once, when it leaves TAKEN..CLOSING_RELEASED (drained, or released
 * without ever leaving RESET). */
void wqp_unclaim(struct wharf_qp *qp);

/* cq.c */
/* Creates the receive CQ and the first send CQ, sized from res->o. */
int wqp_cq_setup(struct wharf_qp_res *res);
void wqp_cq_teardown(struct wharf_qp_res *res);
unsigned wqp_cq_poll(struct wharf_qp_res *res, unsigned rounds);
int wqp_res_cq_claim(struct wharf_qp_res *res, unsigned which, uint32_t need);
/* The send CQ a QP of @sq entries goes on (wqp_cq_pick()), created if
 * needed: its index, or -ENOSPC / -errno.  @pooled: for a free QP of the
 * pool, counting the free QPs already bound to each CQ as its claims. */
int wqp_res_send_cq(struct wharf_qp_res *res, uint32_t sq, bool pooled);
/* Whether a QP of @sq entries would find a send CQ (now, grown or new). */
bool wqp_res_send_room(const struct wharf_qp_res *res, uint32_t sq);
/* A QP's room: @sq entries on a send CQ (its index in *@scq), @rq (a
 * private receive queue) on the receive CQ; both or neither.  And giving
 * it back. */
int wqp_res_cq_claim_qp(struct wharf_qp_res *res, uint32_t sq, uint32_t rq,
			unsigned *scq);
void wqp_res_cq_unclaim_qp(struct wharf_qp_res *res, unsigned scq, uint32_t sq,
			   uint32_t rq);
void wqp_report_error(struct wharf_qp *qp, enum ibv_wc_status status);

/* srq.c */
int wqp_srq_setup(struct wharf_qp_res *res);
void wqp_srq_teardown(struct wharf_qp_res *res);
void wqp_srq_recycle(struct wharf_qp_res *res, uint32_t index);
/* Adds a chunk of buffers to the SRQ (admission ran short). */
int wqp_srq_grow(struct wharf_qp_res *res);
unsigned wqp_srq_repost(struct wharf_qp_res *res, bool all);
void wqp_srq_limit_event(struct wharf_qp_res *res);
int wqp_rq_fill(struct wharf_qp *qp);
void wqp_rq_repost(struct wharf_qp *qp, void *buf);
void wqp_recv_complete(struct wharf_qp_res *res, const struct ibv_wc *wc);

/* post.c */
int wqp_flush(struct wharf_qp_res *res);
void wqp_dirty_unlink(struct wharf_qp *qp);
void wqp_send_complete(struct wharf_qp_res *res, const struct ibv_wc *wc);
void wqp_cancel_queued(struct wharf_qp *qp);
void wqp_deliver_cancelled(struct wharf_qp *qp);

#endif
