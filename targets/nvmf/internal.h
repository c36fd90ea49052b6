/*
 * targets/nvmf/internal.h - the core's objects and the functions its
 * files share. Not for the binding: it uses nvmf.h.
 *
 * Locking (see nvmf.h for the thread model):
 *  - tgt->lock: the controller list, controller reference counts and
 *    states, namespace attach/detach. Taken before any ctrl->lock.
 *  - ctrl->lock: registers (CC/CSTS), features, the queue table, held
 *    AERs, the changed-namespace list, the error log.
 *  - lock-free: namespace pointers (atomic, published once, never freed
 *    before the subsystem), ns->state, ctrl->io_ok, ctrl->ka_last_ms,
 *    queue->killed, the per-queue I/O counters (written by the owner
 *    thread, read by the admin thread), the target counters.
 *  - RCU (liburcu QSBR: the shards are its readers): the subsystem table
 *    and the listen slots. Changed by one management thread at a time
 *    with tgt->lock held (which every reader outside a shard takes);
 *    what a change removes is reused or freed only after a grace period
 *    (docs/design/nvmf_mgmt.md).
 */
#ifndef WHARF_TARGETS_NVMF_INTERNAL_H
#define WHARF_TARGETS_NVMF_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "targets/nvmf/auth.h"
#include "targets/nvmf/bdev.h"
#include "targets/nvmf/bdev_status.h"
#include "targets/nvmf/cidset.h"
#include "targets/nvmf/latency.h"
#include "targets/nvmf/nvmf.h"
#include "targets/nvmf/props.h"
#include "proto/nvme/spec_data.h"
#include "proto/nvme/spec_fabrics.h"

#define NVMF_ADMIN_DEPTH 32   /* admin queue entries (ASQSZ) */
#define NVMF_ADMIN_ICD	 8192 /* admin queue in-capsule bytes */
#define NVMF_AERL	 3    /* 0's based: 4 AERs outstanding */
#define NVMF_ACL	 3    /* 0's based abort limit */
#define NVMF_ELPE	 15   /* 0's based: 16 error log entries */
#define NVMF_ERRLOG_N	 (NVMF_ELPE + 1)

/* Request states. */
enum {
	NVMF_REQ_FREE = 0,
	NVMF_REQ_WAIT_DATA, /* NVMF_ACT_READ / _BUF returned */
	NVMF_REQ_HELD,	    /* parked in the controller's AER list */
	NVMF_REQ_READY,	    /* released by held_ready, awaiting resume */
	NVMF_REQ_DONE,
	NVMF_REQ_BACKEND, /* NVMF_ACT_ASYNC: an operation with the backend */
};

/* Request kinds: which family's exec runs. */
enum {
	NVMF_KIND_FABRICS = 1,
	NVMF_KIND_ADMIN,
	NVMF_KIND_IO,
};

/* Namespace states. */
enum {
	NVMF_NS_ACTIVE = 0,
	NVMF_NS_NOT_READY,
	NVMF_NS_REMOVED,
};

struct nvmf_ns {
	uint32_t nsid;
	uint8_t lbads;
	uint64_t nsze; /* blocks */
	struct nvmf_bdev bdev;
	uint8_t nguid[16];
	uint8_t uuid[16];
	atomic_int state;
	unsigned int line;	 /* config line, for messages */
	struct nvmf_cfg_ns cfg;	 /* as configured (path owned): save_config */
	struct nvmf_ns *retired; /* tgt->retired: removed, NSID reused */
	uint32_t gen;		 /* times the NSID was used again */
};

struct nvmf_subsys {
	struct nvmf_tgt *tgt;
	char nqn[NVME_NQN_FIELD];
	bool discovery;
	char sn[21];
	char mn[41];
	bool allow_any; /* tgt->lock (changed at run time, mgmt.c) */
	char **hosts;	/* tgt->lock */
	/* Parallel to hosts: the host's DH-HMAC-CHAP secrets, NULL for a
	 * host that does not authenticate; tgt->lock. */
	struct nvmf_auth_cfg **host_auth;
	size_t nhosts; /* tgt->lock */
	/* Where it is served (tgt->lock; changed at run time): every
	 * listener, or those of listen_mask (bit i: slot i; 0: none). */
	bool listen_all;
	uint32_t listen_mask;
	bool deleted;		       /* out of the table; tgt->lock */
	struct nvmf_subsys *dead_next; /* tgt->dead; tgt->lock */
	/* Admin queue Connects to it: controllers created, refused (the
	 * host not allowed; anything else), and queues that failed to
	 * authenticate; commands and errors of its queues that are gone
	 * (the live ones count in their queue).  Relaxed counters. */
	atomic_uint_fast64_t n_connects, n_refused_host, n_refused_other;
	atomic_uint_fast64_t n_auth_failed, n_cmds_gone, n_errors_gone;
	_Atomic(struct nvmf_ns *) ns[NVMF_MAX_NSID + 1]; /* by NSID */
};

/* The subsystems, [0] the discovery one; replaced whole (RCU). */
struct nvmf_subsys_tab {
	size_t n;
	struct nvmf_subsys *s[];
};

/* Per-queue I/O counters (SMART log). */
struct nvmf_io_stats {
	atomic_uint_fast64_t read_cmds;
	atomic_uint_fast64_t write_cmds;
	atomic_uint_fast64_t read_bytes;
	atomic_uint_fast64_t write_bytes;
	/* Flush, Write Zeroes and Dataset Management commands taken. */
	atomic_uint_fast64_t flush_cmds;
	atomic_uint_fast64_t write_zeroes_cmds;
	atomic_uint_fast64_t dsm_cmds;
};

enum {
	NVMF_CTRL_LIVE = 0,
	NVMF_CTRL_DYING, /* admin queue gone or keep-alive expired */
};

struct nvmf_ctrl {
	struct nvmf_tgt *tgt;
	struct nvmf_subsys *subsys;
	uint16_t cntlid;
	char hostnqn[NVME_NQN_FIELD];
	uint8_t hostid[NVME_HOSTID_LEN];
	/* The host must authenticate each queue (its secrets at Connect). */
	bool auth;
	struct nvmf_auth_cfg auth_cfg;
	struct nvmf_ctrl *next; /* tgt->ctrls */
	unsigned int refs;	/* queues attached; tgt->lock */
	int state;		/* NVMF_CTRL_*; tgt->lock + lock */

	pthread_mutex_t lock;
	struct nvmf_regs regs;
	atomic_bool io_ok; /* CC.EN and CSTS.RDY: I/O may run */
	/* Features. */
	uint16_t nsqa, ncqa; /* 0's based I/O queues allocated */
	bool io_connected;   /* an I/O queue ever connected */
	uint32_t aec;
	uint32_t kato_ms; /* rounded; 0 = disabled */
	uint32_t kato_connect;
	atomic_uint_fast64_t ka_last_ms;
	/* Queues, indexed by qid (0 = admin). */
	struct nvmf_queue **queues;
	uint16_t max_qid;
	/* Asynchronous events. */
	struct nvmf_req *aer_head; /* held AERs, oldest first */
	unsigned int naer;
	bool ns_notice_pending;
	bool ns_notice_masked;
	uint32_t changed[NVME_CHANGED_NS_MAX];
	unsigned int nchanged;
	bool changed_overflow;
	/* Error log ring, newest at errlog[(err_count - 1) % N]. */
	struct nvme_error_log errlog[NVMF_ERRLOG_N];
	uint64_t err_count;
	/* Counters of queues already destroyed. */
	uint64_t retired[4];
};

struct nvmf_queue {
	struct nvmf_tgt *tgt;
	struct nvmf_ctrl *ctrl; /* set by Connect */
	void *ctx;
	uint16_t qid;
	uint16_t listener;     /* nvmf_queue_params.listener */
	uint32_t listener_gen; /* tgt->listen_gen[listener - 1] then */
	uint16_t sq_entries;   /* from the CM exchange */
	uint32_t icd_size;
	bool live; /* Connect succeeded */
	bool sqflow_off;
	uint32_t sq_size; /* entries, from Connect SQSIZE + 1 */
	uint32_t sqhd;
	atomic_bool killed;
	struct nvmf_cidset cids;
	uint32_t inflight;
	uint32_t held;
	struct nvmf_io_stats io;
	/* Commands answered, those with an error status, and their latency
	 * from the capsule to the response (latency.h; AERs left out: they
	 * wait for an event).  The queue's shard writes, the RPC reads. */
	atomic_uint_fast64_t n_cmds, n_errors;
	atomic_uint_fast64_t lat[NVMF_LAT_BUCKETS];
	struct nvmf_aio *aio;	/* file and block device I/O; may be NULL */
	struct nvmf_auth *auth; /* DH-HMAC-CHAP; NULL: not required */
	/* While the queue has not authenticated: when it is ended (the
	 * keep-alive scan reads it); 0 otherwise. */
	atomic_uint_fast64_t auth_deadline_ms;
};

struct nvmf_tgt {
	struct nvmf_tgt_ops ops;
	void *arg;
	pthread_mutex_t lock;
	struct nvmf_subsys_tab *subsys; /* RCU */
	/* Deleted subsystems whose controllers are still going; freed once
	 * they are gone (by the management thread) or with the target. */
	struct nvmf_subsys *dead;
	/* Listen slots: slot i is live while bit i of listen_live is set,
	 * and is not rewritten before a grace period after it was cleared. */
	struct nvmf_cfg_listen listen[NVMF_CFG_MAX_LISTEN];
	atomic_uint_fast32_t listen_live;
	/* Reserved by nvmf_tgt_listener_add(), not live yet; tgt->lock. */
	uint32_t listen_reserved;
	/* Bumped when a slot is removed: a queue that came in through the
	 * slot's old address is not taken for its new one. */
	atomic_uint_fast32_t listen_gen[NVMF_CFG_MAX_LISTEN];
	uint32_t io_depth;
	uint16_t max_qid;
	uint32_t icd_size;
	uint32_t max_xfer;
	uint8_t mdts;
	struct nvmf_ctrl *ctrls;
	/* Removed namespaces whose NSID was used again: freed with the
	 * target (I/O in flight may still use them); tgt->lock. */
	struct nvmf_ns *retired;
	unsigned int nretired;
	uint16_t next_cntlid;
	uint64_t cntlid_used[65536 / 64]; /* bitmap; tgt->lock */
	uint64_t disc_genctr;
	/* Counters (struct nvmf_tgt_stats). */
	atomic_uint_fast64_t n_ctrls, n_queues, n_reqs, n_held;
	atomic_uint_fast64_t n_ctrls_created, n_connects_failed;
	atomic_uint_fast64_t n_kato_expired, n_dropped;
	atomic_uint_fast64_t n_auth_ok, n_auth_failed;
	atomic_uint_fast32_t auth_seq; /* the Challenges' S1 */
	atomic_uint_fast64_t n_bdev_err[NVMF_BDEV_ERR_CLASSES];
};

/*
 * Conventions of the functions below. "Status" is the 15-bit status field
 * of a completion (NVME_STATUS(), DNR set for final errors by nvmf_sts());
 * 0 is success. Unless stated otherwise a function runs on the thread that
 * owns @q, does not block (file namespaces aside) and takes no lock; the
 * request and the queue are borrowed.
 */

/**
 * nvmf_sts() - a final error status (DNR set).
 * @sct: status code type.
 * @sc: status code.
 *
 * Return: the status field.
 * Context: any thread; pure.
 */
static inline uint16_t nvmf_sts(uint8_t sct, uint8_t sc)
{
	return NVME_STATUS(sct, sc) | NVME_DNR;
}

/**
 * nvmf_sts_gen() - a final generic error status.
 * @sc: generic status code.
 *
 * Return: the status field (SCT 0, DNR set).
 * Context: any thread; pure.
 */
static inline uint16_t nvmf_sts_gen(uint8_t sc)
{
	return nvmf_sts(NVME_SCT_GENERIC, sc);
}

/**
 * nvmf_now() - the binding's monotonic clock.
 * @tgt: the target.
 *
 * Return: milliseconds (ops->now_ms).
 * Context: any thread; non-blocking.
 */
static inline uint64_t nvmf_now(const struct nvmf_tgt *tgt)
{
	return tgt->ops.now_ms(tgt->arg);
}

/**
 * nvmf_stat_add() - adjust a relaxed target counter.
 * @c: the counter.
 * @d: the signed change.
 *
 * Context: any thread; lock-free.
 */
static inline void nvmf_stat_add(atomic_uint_fast64_t *c, int64_t d)
{
	atomic_fetch_add_explicit(c, (uint_fast64_t)d, memory_order_relaxed);
}

/* ---- capsule.c: SGL checks and data binding (pure) ------------------ */

/**
 * nvmf_capsule_check() - checks before a command is decoded.
 * @cmd: the SQE (copied from the capsule).
 * @len: the capsule length (>= 64).
 * @icd_max: the queue's in-capsule data size.
 *
 * Return: 0, or the status: in-capsule data above @icd_max, FUSE, PSDT.
 */
uint16_t nvmf_capsule_check(const union nvme_cmd *cmd, size_t len,
			    uint32_t icd_max);

/**
 * nvmf_capsule_bind() - match SGL1 to the transfer prep decided.
 * @req: the request; xfer / xfer_len set; on success either data points
 *       into @capsule (in-capsule) or rdma_addr / rdma_key /
 *       rdma_invalidate are set and data is NULL.
 * @capsule: the received capsule (borrowed: in-capsule data is consumed
 *           before nvmf_req_recv() returns).
 * @len: its length.
 * @icd_max: the queue's in-capsule data size.
 *
 * Return: 0, or the SGL status (see capsule.c).
 */
uint16_t nvmf_capsule_bind(struct nvmf_req *req, const void *capsule,
			   size_t len, uint32_t icd_max);

/* ---- subsys.c ------------------------------------------------------- */

/**
 * nvmf_subsys_find() - a subsystem by NQN.
 * @tgt: the target.
 * @nqn: a NUL-terminated NQN.
 *
 * Return: the subsystem (the discovery one included), or NULL. Valid while
 * the caller stays in its RCU read-side section (a shard callback) or
 * holds tgt->lock, or on the management thread (the only one that deletes
 * subsystems).
 * Context: any thread; lock-free.
 */
struct nvmf_subsys *nvmf_subsys_find(struct nvmf_tgt *tgt, const char *nqn);

/**
 * nvmf_subsys_table() - the current subsystem table.
 * @tgt: the target.
 *
 * Return: the table ([0] the discovery subsystem); valid under the rules
 * of nvmf_subsys_find().
 * Context: any thread; lock-free.
 */
struct nvmf_subsys_tab *nvmf_subsys_table(const struct nvmf_tgt *tgt);

/**
 * nvmf_tgt_listener_live() - whether listen slot @listener (1-based) is
 * live; 0 (no listen line known) counts as live.
 * Context: any thread; lock-free.
 */
bool nvmf_tgt_listener_live(const struct nvmf_tgt *tgt, uint16_t listener);

/**
 * nvmf_queue_listener_current() - whether the address @q came in through
 * is still a live listener (not removed, nor its slot reused since).
 * Context: any thread; lock-free.
 */
bool nvmf_queue_listener_current(const struct nvmf_queue *q);

/**
 * nvmf_subsys_host_allowed() - the allow-list check.
 * @s: the subsystem.
 * @hostnqn: the host's NQN.
 *
 * Return: true for the discovery subsystem, allow-any-host, or a listed
 * host.
 * Context: any thread; takes tgt->lock (the list changes at run time).
 */
bool nvmf_subsys_host_allowed(const struct nvmf_subsys *s, const char *hostnqn);

/* A listed host's DH-HMAC-CHAP secrets (NULL: none, or not listed).
 * tgt->lock held. */
const struct nvmf_auth_cfg *
nvmf_subsys_host_auth_locked(const struct nvmf_subsys *s, const char *hostnqn);

/* As nvmf_subsys_host_allowed(), tgt->lock held. */
bool nvmf_subsys_host_allowed_locked(const struct nvmf_subsys *s,
				     const char *hostnqn);

/**
 * nvmf_subsys_on_listener() - whether @s is served on a listen address.
 * @s: the subsystem.
 * @listener: 1 + the index of the listen line; 0 for none known.
 *
 * Return: true for the discovery subsystem, a subsystem without export
 * lines, or one exported on that listen line.
 * Context: any thread; lock-free.
 */
bool nvmf_subsys_on_listener(const struct nvmf_subsys *s, uint16_t listener);

/**
 * nvmf_subsys_ns() - the namespace object of an NSID, in any state.
 * @s: the subsystem.
 * @nsid: the NSID.
 *
 * Return: the namespace (never freed before the target), or NULL for an
 * NSID out of 1..NVMF_MAX_NSID or never attached.
 * Context: any thread; lock-free (acquire load).
 */
struct nvmf_ns *nvmf_subsys_ns(struct nvmf_subsys *s, uint32_t nsid);

/**
 * nvmf_ns_lookup() - the namespace an I/O command may use.
 * @s: the subsystem.
 * @nsid: the command's NSID.
 * @out: the namespace on success, else NULL.
 *
 * Return: 0; Invalid Namespace (absent, removed, out of range); Namespace
 * Not Ready (retryable, no DNR).
 * Context: any thread; lock-free.
 */
uint16_t nvmf_ns_lookup(struct nvmf_subsys *s, uint32_t nsid,
			struct nvmf_ns **out);

/**
 * nvmf_subsys_create() - an NVM subsystem from its configuration.
 * @tgt: the target.
 * @c: the configuration block.
 * @source: the configuration's name, for messages.
 * @out: the subsystem (owned by the target).
 * @err: receives "source:LINE: ..." when a namespace fails.
 * @errlen: size of @err.
 *
 * Return: 0; -ENOMEM; -EINVAL or a backing's -errno.
 * Context: creation; blocks on files; allocates.
 */
int nvmf_subsys_create(struct nvmf_tgt *tgt, const struct nvmf_cfg_subsys *c,
		       const char *source, struct nvmf_subsys **out, char *err,
		       size_t errlen);

/**
 * nvmf_subsys_create_discovery() - the discovery subsystem.
 * @tgt: the target.
 *
 * Return: the subsystem, or NULL without memory.
 * Context: creation; allocates.
 */
struct nvmf_subsys *nvmf_subsys_create_discovery(struct nvmf_tgt *tgt);

/**
 * nvmf_subsys_destroy() - free a subsystem and close its namespaces.
 * @s: the subsystem, or NULL.
 *
 * Context: target destruction, no queue left; or a deleted subsystem with
 * no controller left, after a grace period.
 */
void nvmf_subsys_destroy(struct nvmf_subsys *s);

/* Close and free a namespace nothing uses any more. */
void nvmf_ns_free(struct nvmf_ns *ns);

/**
 * nvmf_ns_create() - open a namespace's backing and identifiers.
 * @s: its subsystem (for the identifiers).
 * @c: the namespace configuration.
 * @out: the namespace, not yet published.
 * @why: receives what failed, for a file or device (may be NULL).
 * @whylen: its size.
 *
 * Return: 0; -ENOMEM; -EINVAL or a backing's -errno.
 * Context: any thread; blocks on files; allocates.
 */
int nvmf_ns_create(struct nvmf_subsys *s, const struct nvmf_cfg_ns *c,
		   struct nvmf_ns **out, char *why, size_t whylen);

/**
 * nvmf_ns_ids() - NGUID and UUID of a namespace, stable across restarts.
 * @subnqn: the subsystem NQN.
 * @nsid: the NSID.
 * @gen: 0 for a namespace of the configuration; n for the n-th time the
 *       NSID was used again at run time (new identifiers: a host must not
 *       take the new namespace for the old one and keep its cache).
 * @nguid: receives 16 bytes.
 * @uuid: receives 16 bytes (RFC 4122 variant, version 4 layout).
 *
 * Context: any thread; pure.
 */
void nvmf_ns_ids(const char *subnqn, uint32_t nsid, uint32_t gen,
		 uint8_t nguid[16], uint8_t uuid[16]);

/* ---- ctrl.c --------------------------------------------------------- */

/**
 * nvmf_ctrl_create() - a controller for an admin Connect.
 * @admin: the admin queue; its ctrl is set on success.
 * @s: the subsystem.
 * @d: the Connect data (host NQN and ID are copied).
 * @kato_ms: the Connect KATO (rounded to the KAS granularity).
 * @out: the controller.
 *
 * Return: 0; Connect Controller Busy (no memory or no free controller ID).
 * Context: @admin's thread; takes the target lock.
 */
uint16_t nvmf_ctrl_create(struct nvmf_queue *admin, struct nvmf_subsys *s,
			  const struct nvme_connect_data *d, uint32_t kato_ms,
			  struct nvmf_ctrl **out);

/**
 * nvmf_ctrl_attach_io() - join an I/O queue to the controller in @d.
 * @q: the I/O queue; its ctrl is set on success.
 * @d: the Connect data.
 * @dw0: receives the completion DW0 (the controller ID, or IPO / IATTR).
 *
 * Return: 0; Connect Invalid Parameters, Command Sequence Error or
 * Connect Controller Busy (see ctrl.c).
 * Context: @q's thread; takes the target and controller locks.
 */
uint16_t nvmf_ctrl_attach_io(struct nvmf_queue *q,
			     const struct nvme_connect_data *d, uint32_t *dw0);

/**
 * nvmf_ctrl_detach() - a queue of a controller is being destroyed.
 * @q: the queue (admin: the association ends, I/O queues are killed and
 *     held AERs forgotten). Frees the controller with its last queue.
 *
 * Context: @q's thread; takes the target and controller locks; may call
 * ops->kill.
 */
void nvmf_ctrl_detach(struct nvmf_queue *q);

/**
 * nvmf_ctrl_kill_locked() - ask the binding to disconnect queues.
 * @c: the controller (its lock held).
 * @io_only: spare the admin queue.
 *
 * Context: any thread; calls ops->kill (once per queue).
 */
void nvmf_ctrl_kill_locked(struct nvmf_ctrl *c, bool io_only);

/**
 * nvmf_ctrl_revoke_locked() - end a live controller from outside its
 * queues (a host, subsystem or listener removed at run time): DYING, no
 * more I/O, every queue killed.
 * @c: the controller.
 *
 * Context: tgt->lock held (not c->lock: taken here); calls ops->kill.
 */
void nvmf_ctrl_revoke_locked(struct nvmf_ctrl *c);

/**
 * nvmf_ctrl_log_error() - record a failed command in the error log.
 * @c: the controller.
 * @req: the command.
 * @qid: the queue it came on.
 * @status: its status field.
 *
 * Context: any queue thread of @c; takes the controller lock.
 */
void nvmf_ctrl_log_error(struct nvmf_ctrl *c, const struct nvmf_req *req,
			 uint16_t qid, uint16_t status);

/**
 * nvmf_ctrl_ns_changed_locked() - a namespace of @c's subsystem changed.
 * @c: the controller (its lock held).
 * @nsid: the namespace.
 *
 * Adds @nsid to the Changed Namespace List and raises the notice when
 * enabled and not masked: completes the oldest held AER through
 * ops->held_ready, or leaves the notice pending.
 *
 * Context: any thread; may call ops->held_ready.
 */
void nvmf_ctrl_ns_changed_locked(struct nvmf_ctrl *c, uint32_t nsid);

/**
 * nvmf_ctrl_io_totals() - I/O counters of all of @c's queues, past ones
 * included.
 * @c: the controller.
 * @out: read commands, write commands, bytes read, bytes written.
 *
 * Context: the admin queue's thread; takes the controller lock.
 */
void nvmf_ctrl_io_totals(struct nvmf_ctrl *c, uint64_t out[4]);

/* ---- queue.c -------------------------------------------------------- */

/**
 * nvmf_queue_kill_locked() - ask the binding to disconnect @q, once.
 * @q: the queue; further capsules on it are dropped.
 *
 * Context: any thread, with @q's controller lock held (so @q cannot be
 * destroyed meanwhile); calls ops->kill.
 */
void nvmf_queue_kill_locked(struct nvmf_queue *q);

/*
 * ---- Command families ------------------------------------------------
 * Each family has a prep step, run before any data moves: it validates
 * the command's fields, sets req->xfer / xfer_len and returns a status;
 * and an exec step, run with req->data in place (H2C data read, C2H
 * buffer attached), that executes it, fills req->rsp.result and the C2H
 * buffer (all xfer_len bytes), and returns a status. An exec step that
 * parks the request sets req->held (AER).
 */

/**
 * nvmf_fabrics_prep() - Fabrics commands: see fabrics.c.
 * @q: the queue.
 * @req: the request.
 *
 * Return: 0 or the status.
 */
uint16_t nvmf_fabrics_prep(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_fabrics_exec() - run a Fabrics command.
 * @q: the queue.
 * @req: the request.
 *
 * Return: 0 or the status.
 * Context: @q's thread; Connect takes the target and controller locks.
 */
uint16_t nvmf_fabrics_exec(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_admin_prep() - admin commands of a connected admin queue.
 * @q: the queue.
 * @req: the request.
 *
 * Return: 0 or the status (Command Sequence Error while disabled, Invalid
 * Opcode).
 */
uint16_t nvmf_admin_prep(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_admin_exec() - run an admin command.
 * @q: the queue.
 * @req: the request.
 *
 * Return: 0 or the status.
 * Context: @q's thread; takes the controller lock.
 */
uint16_t nvmf_admin_exec(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_io_prep() - NVM commands of a connected I/O queue: see io.c.
 * @q: the queue.
 * @req: the request; req->ns set for commands naming a namespace.
 *
 * Return: 0 or the status.
 * Context: @q's thread; lock-free.
 */
uint16_t nvmf_io_prep(struct nvmf_queue *q, struct nvmf_req *req);

/* An exec step's "status" when the command went to the backend. */
#define NVMF_STS_PENDING 0xFFFFu

/**
 * nvmf_io_exec() - run an NVM command.
 * @q: the queue.
 * @req: the request.
 *
 * Return: 0, the status (backend errors mapped by nvmf_bdev_status()), or
 * NVMF_STS_PENDING when a backend operation was submitted to q->aio.
 * Context: @q's thread; lock-free; blocks on file and device namespaces
 * only when q->aio is NULL.
 */
uint16_t nvmf_io_exec(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_io_step() - a backend operation of @req completed with @res.
 *
 * Return: as nvmf_io_exec() (PENDING: the next step was submitted).
 * Context: @q's thread.
 */
uint16_t nvmf_io_step(struct nvmf_queue *q, struct nvmf_req *req, int res);

/**
 * nvmf_io_needs_copy() - whether @req's in-capsule data must be copied out
 * of the capsule before it runs (it goes to the backend, which reads it
 * after the capsule buffer is reused).
 * Context: @q's thread; pure.
 */
bool nvmf_io_needs_copy(const struct nvmf_queue *q, const struct nvmf_req *req);

/**
 * nvmf_identify_prep() - Identify: check CNS, 4096 bytes C2H.
 * @q: the admin queue.
 * @req: the request.
 *
 * Return: 0 or Invalid Field.
 */
uint16_t nvmf_identify_prep(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_identify_exec() - build the Identify data.
 * @q: the admin queue.
 * @req: the request (req->data: 4096 bytes).
 *
 * Return: 0 or Invalid Namespace / Invalid Field.
 */
uint16_t nvmf_identify_exec(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_log_prep() - Get Log Page: LID, offset and length checks.
 * @q: the admin queue.
 * @req: the request.
 *
 * Return: 0 or Invalid Log Page / Invalid Field.
 */
uint16_t nvmf_log_prep(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_log_exec() - produce the requested window of a log page.
 * @q: the admin queue.
 * @req: the request.
 *
 * Return: 0.
 * Context: @q's thread; takes the controller lock.
 */
uint16_t nvmf_log_exec(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_features_exec() - Set / Get Features: see features.c.
 * @q: the admin queue.
 * @req: the request.
 *
 * Return: 0 or the status.
 * Context: @q's thread; takes the controller lock.
 */
uint16_t nvmf_features_exec(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_aer_exec() - Asynchronous Event Request: complete at once on a
 * pending notice, else park it (req->held) up to the AER limit.
 * @q: the admin queue.
 * @req: the request.
 *
 * Return: 0 or Asynchronous Event Request Limit Exceeded.
 * Context: @q's thread; takes the controller lock.
 */
uint16_t nvmf_aer_exec(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_abort_exec() - Abort: only a parked AER can be caught.
 * @q: the admin queue.
 * @req: the request; DW0 bit 0 = 1 when nothing was aborted.
 *
 * Return: 0.
 * Context: @q's thread; takes the controller lock; may call
 * ops->held_ready for the aborted AER.
 */
uint16_t nvmf_abort_exec(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_aer_unlink_locked() - take a parked AER off the controller.
 * @c: the controller (its lock held).
 * @req: the request; nothing happens if it is not parked.
 *
 * Context: any thread.
 */
void nvmf_aer_unlink_locked(struct nvmf_ctrl *c, struct nvmf_req *req);

#endif /* WHARF_TARGETS_NVMF_INTERNAL_H */
