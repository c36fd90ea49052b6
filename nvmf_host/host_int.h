/*
 * nvmf_host/host_int.h - internals of <wharf/nvmf_host.h>.
 *
 * Ownership.  A queue (admin or I/O) and its command slots belong to the
 * owner shard of its wharf connection; only that thread touches them,
 * except the counters (single writer, relaxed atomics) and the fields
 * the application thread reads after it waited on the host's lock for
 * the queue to be gone.  The bring-up, keep-alive and shutdown state
 * (enum wnh_step) belongs to the admin queue's shard.  The application
 * thread in wharf_nvmf_host_connect() / _disconnect() sends work to the
 * shards and waits on the host's mutex and condition variable: control
 * path only, nothing on the data path takes a lock.
 *
 * Queue life (enum wnh_qstate, queue_sm.h): changed only on the owner
 * shard, through the table.  Its connection (enum wnh_link) is NONE (no
 * connection: never started, or destroyed and every work request it
 * posted completed, flushes included), OPEN (wharf_connect() issued;
 * q->conn known from the first callback) or DESTROYED
 * (wharf_conn_destroy() called, work requests still in flight).  `gone`
 * is the application thread's copy of link == NONE, written under the
 * host's lock.
 *
 * Command slot life (enum wnh_slot_state, slot_sm.h): taken at
 * submission, free again once both the SEND's completion and the
 * response have arrived and the callback ran.  A user command (I/O
 * queue, not Fabrics) outstanding at a loss keeps its slot, capsule and
 * bounce data: it is HELD and posted again with the new MR's keys when
 * the queue is LIVE again.  A slot posted on a closing connection is
 * never reused before that connection is gone (ORPHAN once its callback
 * ran), so a late RDMA WRITE cannot land in a new command's buffer.
 *
 * The controller's recovery state (enum wharf_nvmf_host_state, ctrl_sm.h)
 * belongs to the admin shard (recover.c); the queues' shards report to it
 * and it sends them work, all by wharf_shard_send().  So do the
 * asynchronous events (struct wnh_aer_state, aer.c) and the publishing
 * of the namespace list (ns.c), which the I/O shards read lock-free.
 */
#ifndef WHARF_INITIATORS_NVMF_HOST_INT_H
#define WHARF_INITIATORS_NVMF_HOST_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/nvmf_host.h>
#include <wharf/qp.h>

#include "nvmf_host/cmd.h"
#include "proto/nvme/auth.h"
#include "nvmf_host/queue_sm.h"
#include "nvmf_host/slot_sm.h"

#define NH_WR_TAG	 0x4e564d48u /* "NVMH" */
#define NH_ADMIN_ENTRIES 32u	     /* as Linux: hrqsize 32, hsqsize 31 */
#define NH_ADMIN_BOUNCE	 4096u	     /* Identify data */

/* The connection under a queue (see the top of this file). */
enum wnh_link {
	NHL_NONE = 0,
	NHL_OPEN,
	NHL_DESTROYED,
};

/* A user command is posted at most this many times (Linux's
 * nvme_max_retries is 5 retries). */
#define NH_MAX_TRIES 6u

/* Data direction of a command. */
enum wnh_dir {
	NH_DIR_NONE = 0,
	NH_DIR_TO_CTRL,	  /* write, Connect data */
	NH_DIR_FROM_CTRL, /* read, Identify */
};

/* What a command is, for the rules of a loss and of timeouts. */
enum wnh_cmd_kind {
	NHK_INTERNAL = 0, /* admin or Fabrics: fails at a loss */
	NHK_USER,	  /* I/O (not Fabrics): held across a loss */
	NHK_EVENT,	  /* an Asynchronous Event Request: internal, and
			   * waits for an event with no deadline */
};

struct wharf_nvmf_host_queue;
struct wnh_auth_run;

struct wnh_slot {
	struct wharf_wr wr; /* the SEND of the capsule */
	struct wharf_nvmf_host_queue *q;
	wharf_nvmf_host_cb cb; /* NULL once called */
	void *arg;
	void *user_buf; /* FROM_CTRL: copied into at completion */
	struct wharf_nvmf_host_mem *mem; /* keyed SGL at `data`, no bounce */
	void *data;
	uint32_t len;
	uint8_t *capsule; /* in the registered slab */
	uint8_t *bounce;
	uint64_t deadline_ms;
	struct wnh_rsp rsp;
	struct wnh_slot *next_free;
	enum wnh_slot_state state;
	enum wnh_cmd_kind kind;
	enum wnh_dir dir;
	unsigned tries; /* times posted */
	bool in_cap;	/* TO_CTRL data in the capsule */
};

/* Single-writer counters (the owner shard), read anywhere. */
struct wnh_counters {
	atomic_uint_fast64_t submitted, completed, in_capsule, keyed;
	atomic_uint_fast64_t nvme_errors, timeouts, bad_responses;
	atomic_uint_fast64_t retried, failed_held;
	atomic_uint_fast32_t outstanding;
	atomic_int error;
};

struct wharf_nvmf_host_queue {
	struct wharf_nvmf_host *h;
	uint16_t qid;
	unsigned shard_index;
	struct wharf_shard *shard;
	uint64_t conn_id;
	struct wharf_conn *conn; /* NULL until the first callback / once
				  * destroyed */
	enum wnh_qstate state;
	enum wnh_link link;
	int fail_new;	   /* not LIVE: fail held and new user commands with
			   * this (-ENODEV, -ENOLINK) instead of holding */
	bool reply;	   /* a duty: tell the admin shard once DOWN
			   * (wnh_q_reset) */
	bool call_pending; /* a duty: a wharf_conn_call() closing it is
			   * queued, the queue is not gone before it ran */
	bool gone;	   /* the application thread's copy of link == NONE
			   * (under h->lock) */
	uint32_t entries;  /* slots = queue entries */
	uint32_t timeout_ms;
	uint32_t in_capsule; /* largest in-capsule write, 0 = none */
	uint32_t capsule_stride, bounce_size;
	uint8_t *slab;
	size_t slab_len;
	struct ibv_mr *mr;
	struct wharf_nvmf_host_mem *mems; /* the caller's registrations */
	struct wnh_slot *slots;
	struct wnh_slot *free;
	uint32_t wr_inflight;
	uint64_t last_result; /* DW0/DW1 of the last internal completion */
	/* The DH-HMAC-CHAP transaction under way (auth_run.c), NULL
	 * otherwise: a loss meanwhile is told as what it likely is.  Its
	 * transaction IDs count per queue. */
	struct wnh_auth_run *auth;
	uint16_t auth_tid;
	struct wharf_timer *sweep;
	struct wnh_counters n;

	/* Per-thread submission rings (subq.c). */
	uint64_t gen; /* unique: a newer queue at the same address differs */
	_Atomic(struct wnh_subq *) subq_adopt; /* opened, not yet adopted */
	atomic_int subq_armed;		  /* the owner may block: wake it */
	struct wnh_subq *subqs;		  /* owner only: adopted rings */
	struct wharf_poller *subq_poller; /* owner only */
};

/* Admin-shard state machine: bring-up, then keep-alive, then shutdown. */
enum wnh_step {
	NHS_CONNECT = 0, /* admin Fabrics Connect in flight */
	NHS_CAP,
	NHS_VS,
	NHS_CC,
	NHS_ENABLE,
	NHS_CSTS, /* polling CSTS.RDY until CAP.TO */
	NHS_ID_CTRL,
	NHS_ID_CS_CTRL, /* Identify CNS 06h, NVM: the size limits */
	NHS_NQUEUES,
	NHS_NS_LIST,
	NHS_ID_NS,	/* one Identify Namespace per active NSID */
	NHS_IO_QUEUES,	/* I/O queues connecting */
	NHS_DISC_HDR,	/* discovery: the log's header */
	NHS_DISC_LOG,	/* discovery: the whole log, 4 KiB at a time */
	NHS_DISC_CHECK, /* discovery: the header again (genctr) */
	NHS_LIVE,	/* keep-alive running */
	NHS_SHN,	/* CC.SHN set, polling CSTS.SHST */
	NHS_STOPPED,	/* failed, torn down or shut down: events ignored */
};

/* The namespaces as the I/O shards see them (ns.c). */
struct wnh_ns_table;

/* Asynchronous events (aer.c, admin shard only). */
enum wnh_aen_step {
	NHA_IDLE = 0, /* no event being handled */
	NHA_LOG,      /* Get Log Page of the event in flight */
	NHA_NS_LIST,  /* Identify active namespace list in flight */
	NHA_ID_NS,    /* Identify Namespace of ns[next] in flight */
};

#define NH_AEN_QUEUE 8u /* events waiting while one is handled */

struct wnh_aer_state {
	unsigned outstanding; /* AERs submitted, not completed */
	enum wnh_aen_step step;
	uint32_t queue[NH_AEN_QUEUE]; /* DW0s waiting */
	unsigned head, n;
	struct wharf_nvmf_host_event ev; /* the one being handled */
	unsigned next, nr;		 /* rescan: Identify Namespace */
	struct wharf_nvmf_host_ns ns[WHARF_NVMF_HOST_MAX_NS];
	uint8_t log[NVME_CHANGED_NS_LOG_SIZE];
	uint8_t id[NVME_IDENTIFY_SIZE];
};

struct wharf_nvmf_host {
	struct wharf_cm *cm;
	struct wharf_ctx *ctx;
	unsigned nshards;
	struct sockaddr_storage dst;
	char subnqn[NVME_NQN_MAX + 1];
	char hostnqn[NVME_NQN_MAX + 1];
	uint8_t hostid[NVME_HOSTID_LEN];
	/* DH-HMAC-CHAP secrets (read-only after the connect call; cleansed
	 * at teardown). */
	struct nvme_auth_key auth_key, auth_ctrl_key;
	bool has_auth_key, has_auth_ctrl_key;
	uint32_t want_queues, want_entries, want_io;
	uint32_t kato_ms, io_timeout_ms, admin_timeout_ms, connect_timeout_ms;
	uint32_t reconnect_delay_ms, ctrl_loss_tmo_ms, fast_io_fail_tmo_ms;
	wharf_nvmf_host_state_cb on_state;
	void *state_arg;
	wharf_nvmf_host_event_cb on_event;
	void *event_arg;
	bool no_in_capsule;
	/* wharf_nvmf_host_discover(): after CSTS.RDY read the Discovery
	 * Log Page into disc_log (admin shard until `done`, then the
	 * application thread; freed with @h). */
	bool disc;
	uint8_t *disc_log;
	size_t disc_len, disc_off;
	unsigned disc_reads;

	struct wharf_nvmf_host_queue admin;
	struct wharf_nvmf_host_queue *io; /* want_queues allocated */
	unsigned nio;			  /* granted and connecting */

	/* Admin shard only. */
	enum wnh_step step;
	struct wharf_timer *step_timer; /* CSTS polling */
	struct wharf_timer *ka_timer;	/* keep-alive every KATO/2 */
	bool ka_busy;			/* a Keep Alive is outstanding */
	uint64_t step_deadline_ms;
	uint32_t cc;
	unsigned ns_next;
	uint8_t id_buf[NVME_IDENTIFY_SIZE];
	/* What this bring-up found; copied to info / ns by the first one,
	 * compared with them by a reconnect. */
	struct wharf_nvmf_host_info scan;
	struct wharf_nvmf_host_ns scan_ns[WHARF_NVMF_HOST_MAX_NS];
	uint16_t cntlid; /* of the current association */
	uint8_t aerl;	 /* Identify Controller of this bring-up */
	uint32_t oaes;

	/* Recovery (recover.c, admin shard; cstate also read anywhere). */
	atomic_int cstate; /* enum wharf_nvmf_host_state */
	struct wharf_timer *retry_timer, *loss_timer, *ff_timer;
	unsigned failed_attempts; /* since the loss: the backoff */
	unsigned down_pending;	  /* queues asked to close, not DOWN yet */
	unsigned io_up;		  /* I/O queues LIVE in this bring-up */
	bool may_shutdown;	  /* DELETE came while LIVE */
	atomic_uint_fast64_t losses, attempts, reconnects;
	atomic_int last_error;

	struct wnh_aer_state aer;
	atomic_uint_fast64_t events, ns_rescans;

	/* Written on the admin shard before `done` (info.cntlid, info.nr_ns
	 * and ns also later, under lock), read after it.  The I/O shards
	 * read the namespaces from nst (ns.c), never from ns. */
	struct wharf_nvmf_host_info info;
	struct wharf_nvmf_host_ns ns[WHARF_NVMF_HOST_MAX_NS];
	struct wnh_ns_table *nst;

	/* The application thread's waits. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;	     /* bring-up finished (result says how) */
	int result;	     /* first failure, 0 */
	unsigned calls_left; /* on_admin() */
	bool shut_down;	     /* NHS_SHN finished */

	/* Off-shard I/O calls in flight to the owner shards (io.c);
	 * disconnect sets `draining` and waits for 0. */
	atomic_uint hops;
	atomic_bool draining;
	/* Messages wnh_post() sent about this host that have not run to
	 * their end; disconnect frees the host only at 0 (host.c). */
	atomic_uint msgs;
};

/* A caller's registration (mem.c): valid on one I/O queue.  `mr` is on
 * the PD of the queue's connection, or NULL (registered again at the
 * next use: the queue reconnected, maybe on another device); owner
 * shard only, as the `next` link of q->mems. */
struct wharf_nvmf_host_mem {
	struct wharf_nvmf_host_queue *q;
	uint8_t *addr;
	size_t len;
	struct ibv_mr *mr;
	struct wharf_nvmf_host_mem *next;
};

/* host.c */
/* Ends the bring-up with @err (the connect call returns it); once it has
 * ended, logs the reason instead. */
void wnh_fail(struct wharf_nvmf_host *h, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* wharf_shard_send() of a control message about @h (a handful per loss,
 * never per command), retried while the shard's queue is full, and
 * counted in h->msgs until @fn has returned; -ESHUTDOWN, -ENOMEM. */
int wnh_post(struct wharf_nvmf_host *h, struct wharf_shard *shard,
	     wharf_msg_fn fn, void *arg);
/* A message teardown waits for has run (h->calls_left, under the lock). */
void wnh_call_done(struct wharf_nvmf_host *h);

/* io.c: on the owner shard, a checked command into a slot; 0 or -errno. */
struct wnh_io;
int wnh_io_issue(const struct wnh_io *io);

/* subq.c: a number no queue had before. */
uint64_t wnh_subq_gen(void);

/* queue.c */
extern const struct wharf_conn_ops wnh_conn_ops;
int wnh_queue_start(struct wharf_nvmf_host_queue *q);
int wnh_submit(struct wharf_nvmf_host_queue *q, const union nvme_cmd *cmd,
	       enum wnh_dir dir, void *buf, uint32_t len, wharf_nvmf_host_cb cb,
	       void *arg);
/* wnh_submit() with @mem (or NULL): data moves by a keyed SGL straight
 * at @buf in @mem, except a write that fits the capsule (copied). */
int wnh_submit_mem(struct wharf_nvmf_host_queue *q, const union nvme_cmd *cmd,
		   enum wnh_dir dir, struct wharf_nvmf_host_mem *mem, void *buf,
		   uint32_t len, wharf_nvmf_host_cb cb, void *arg);
void wnh_queue_fail(struct wharf_nvmf_host_queue *q, int err);
void wnh_queue_free(struct wharf_nvmf_host_queue *q);
/* Messages to a queue's owner shard (arg: the queue). */
void wnh_q_start(struct wharf_shard *shard, void *arg);	    /* (re)connect */
void wnh_q_reset(struct wharf_shard *shard, void *arg);	    /* close, hold */
void wnh_q_kill(struct wharf_shard *shard, void *arg);	    /* -ENODEV */
void wnh_q_fast_fail(struct wharf_shard *shard, void *arg); /* -ENOLINK */
void wnh_q_close(struct wharf_shard *shard, void *arg);	    /* disconnect */

/* mem.c (owner shard, q->conn set): @m's rkey on the connection's PD,
 * registering it (again) when needed; 0 or -errno. */
int wnh_mem_key(struct wharf_nvmf_host_queue *q, struct wharf_nvmf_host_mem *m,
		uint32_t *rkey);
/* Owner shard, the queue gone: every registration's MR deregistered. */
void wnh_mem_drop(struct wharf_nvmf_host_queue *q);
/* Application thread, the queue freed: the registrations left freed. */
void wnh_mem_free_all(struct wharf_nvmf_host_queue *q);

/* bringup.c (admin shard) */
void wnh_admin_connected(struct wharf_nvmf_host *h);
void wnh_admin_shutdown(struct wharf_nvmf_host *h);
void wnh_admin_free(struct wharf_nvmf_host *h);
/* Discovery: the whole log read; ends the bring-up with success. */
void wnh_disc_done(struct wharf_nvmf_host *h);
/* Starts a bring-up (again): the admin queue's connection. */
int wnh_admin_start(struct wharf_nvmf_host *h);
/* Stops keep-alive and the step machine (a teardown). */
void wnh_admin_halt(struct wharf_nvmf_host *h);

/* aer.c (admin shard): Set Features Asynchronous Event Configuration and
 * the AERs, once the controller is LIVE (again). */
void wnh_aer_start(struct wharf_nvmf_host *h);

/* ns.c: the namespace list.  Admin shard: publish @nr namespaces (info,
 * ns under the lock; nst for the shards); -ENOMEM (nothing changed). */
int wnh_ns_publish(struct wharf_nvmf_host *h,
		   const struct wharf_nvmf_host_ns *ns, unsigned nr);
/* A shard thread: namespace @nsid, or NULL; valid until the callback
 * returns. */
const struct wharf_nvmf_host_ns *wnh_ns_find(const struct wharf_nvmf_host *h,
					     uint32_t nsid);
/* Teardown, no reader left. */
void wnh_ns_free(struct wharf_nvmf_host *h);
/* An Identify active namespace list (@buf, 4 KiB) into @ns (zeroed, the
 * nsid set; at most WHARF_NVMF_HOST_MAX_NS): how many. */
unsigned wnh_ns_list_parse(const void *buf, struct wharf_nvmf_host_ns *ns);
/* An Identify Namespace (@buf, 4 KiB) into @ns (nsid kept). */
void wnh_ns_parse(const void *buf, struct wharf_nvmf_host_ns *ns);

/* recover.c: the controller's state machine at run time */
/* On the admin shard: feed @ev (with @err for a loss). */
void wnh_ctrl_event(struct wharf_nvmf_host *h, int ev, int err);
/* From a queue's owner shard: @q was lost (reason in q->n.error), is
 * DOWN after a wnh_q_reset, is LIVE. */
void wnh_ctrl_lost(struct wharf_nvmf_host_queue *q);
void wnh_ctrl_down(struct wharf_nvmf_host_queue *q);
void wnh_ctrl_up(struct wharf_nvmf_host_queue *q);
/* Admin shard: the recovery timers (created once), their end. */
int wnh_ctrl_timers(struct wharf_nvmf_host *h);
void wnh_ctrl_free(struct wharf_nvmf_host *h);
/* Admin shard, from disconnect: DELETE, then close every I/O queue. */
void wnh_ctrl_delete(struct wharf_nvmf_host *h);

#endif /* WHARF_INITIATORS_NVMF_HOST_INT_H */
