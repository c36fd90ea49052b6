/*
 * targets/nvmf/nvmf.h - the transport-independent core of wharf's NVMe over
 * Fabrics target: subsystems, controllers, queues and command processing.
 * The RDMA binding (on wharf's cm / qp API) moves bytes; everything the
 * NVMe and NVMe-oF specifications decide lives here.
 *
 * Objects
 *  - nvmf_tgt: built from a struct nvmf_config. Holds the discovery
 *    subsystem (nqn.2014-08.org.nvmexpress.discovery) and the configured
 *    NVM subsystems (namespaces on RAM or files, host allow-list), the
 *    listen addresses (for the discovery log) and every controller.
 *  - nvmf_queue: one per transport connection (one RDMA QP). Created when
 *    the binding accepts the connection (after nvme_rdma_req_parse()), with
 *    the queue ID and size negotiated in the CM private data. Its first
 *    command must be a Fabrics Connect: for qid 0 it creates a controller
 *    (dynamic model, controller IDs 1..FFEFh unique in the target), for
 *    qid > 0 it joins the controller named in the Connect data.
 *  - controllers are internal: they live while any of their queues does.
 *    Destroying the admin queue ends the association: the core asks the
 *    binding to kill the controller's I/O queues (ops->kill).
 *
 * Request flow (one struct nvmf_req per received capsule, owned by the
 * binding, e.g. embedded in its receive context):
 *
 *   act = nvmf_req_recv(q, req, capsule, len);
 *   NVMF_ACT_RESPOND        send req->rsp (16 bytes).
 *   NVMF_ACT_WRITE_RESPOND  RDMA WRITE req->xfer_len bytes of req->data to
 *                           the host (req->rdma_addr / rdma_key), then send
 *                           req->rsp.
 *   NVMF_ACT_READ           point req->data at a registered buffer of at
 *                           least req->xfer_len bytes, RDMA READ that many
 *                           bytes from the host into it, then
 *                           act = nvmf_req_exec(q, req).
 *   NVMF_ACT_BUF            point req->data at a buffer of at least
 *                           req->xfer_len bytes, then nvmf_req_exec().
 *   NVMF_ACT_HOLD           nothing to send now (an Asynchronous Event
 *                           Request). Later ops->held_ready(q, req) fires;
 *                           the binding then calls nvmf_req_resume() on
 *                           the queue's thread and sends the response.
 *   NVMF_ACT_COPY           the command's in-capsule data must outlive the
 *                           capsule (it goes to a file or block device):
 *                           copy req->xfer_len bytes from req->data (the
 *                           capsule, valid until the binding returns to
 *                           its loop) into a buffer of the binding's,
 *                           point req->data at it, then nvmf_req_exec().
 *   NVMF_ACT_ASYNC          the command is with the backend (the queue's
 *                           io_uring, struct nvmf_queue_params.aio): keep
 *                           req and req->data; the engine's done callback
 *                           brings it back through
 *                           nvmf_req_backend_done(), which returns the
 *                           next action (ASYNC again for a command of
 *                           several backend steps).
 *   NVMF_ACT_DROP           no response is possible (capsule shorter than
 *                           an SQE, host overran the queue, queue killed):
 *                           disconnect the queue.
 * Other in-capsule data is consumed directly from the capsule during
 * nvmf_req_recv() (the capsule buffer may be reused once it returns).
 * If a transfer fails, nvmf_req_fail() produces the error response; if the
 * queue goes away first, nvmf_req_abort() forgets the request. When
 * req->close_after is set (Disconnect), close the queue after the
 * response. When req->rdma_invalidate is set, send the response with
 * Send with Invalidate of req->rdma_key.
 *
 * Completions carry the SQ head pointer (advanced per completion, modulo
 * the queue size; FFFFh when the host disabled SQ flow control) and the
 * SQ ID; the phase tag is 0 (it is reserved on fabrics: there is no
 * shared completion queue memory to wrap).
 *
 * Threads: a queue belongs to one thread (the shard that owns the
 * connection), a registered liburcu QSBR reader (wharf's shards are)
 * when subsystems or listeners change at run time (nvmf_tgt_subsys_add()
 * and the others wait for its grace periods); every nvmf_queue_* / nvmf_req_* call for it comes from that
 * thread. Controllers and subsystems are shared: the core locks them
 * internally (a target mutex for the controller table, a mutex per
 * controller for admin state); the I/O path takes no lock. ops->kill and
 * ops->held_ready run on whatever thread caused them, with those locks
 * held: the binding must only queue work for the owning thread there and
 * must not call back into the core. After nvmf_queue_destroy() the binding
 * drops any such work still queued for that queue.
 *
 * Namespaces on files and block devices go through the queue's io_uring
 * (struct nvmf_queue_params.aio): the queue's thread never blocks on
 * them. A queue created without one (tools, unit tests) does their I/O
 * with blocking calls in place. RAM and null namespaces never block.
 */
#ifndef WHARF_TARGETS_NVMF_NVMF_H
#define WHARF_TARGETS_NVMF_NVMF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "targets/nvmf/aio.h"
#include "targets/nvmf/config.h"
#include "proto/nvme/rdma_pdata.h"
#include "proto/nvme/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvmf_tgt;
struct nvmf_queue;
struct nvmf_req;
struct sockaddr;

/* What the binding does next with a request. */
enum nvmf_act {
	NVMF_ACT_RESPOND = 1,
	NVMF_ACT_WRITE_RESPOND,
	NVMF_ACT_READ,
	NVMF_ACT_BUF,
	NVMF_ACT_HOLD,
	NVMF_ACT_DROP,
	NVMF_ACT_COPY,
	NVMF_ACT_ASYNC,
};

/* Direction of a command's data. */
enum nvmf_xfer {
	NVMF_XFER_NONE = 0,
	NVMF_XFER_H2C, /* host to controller (RDMA READ / in-capsule) */
	NVMF_XFER_C2H, /* controller to host (RDMA WRITE) */
};

/* One command in flight. Fields are valid per the request flow above. */
struct nvmf_req {
	union nvme_cmd cmd;   /* the SQE, copied from the capsule */
	struct nvme_cqe rsp;  /* the completion to send */
	enum nvmf_xfer xfer;  /* data direction */
	uint32_t xfer_len;    /* bytes to move (0: none) */
	uint64_t rdma_addr;   /* keyed SGL: host address */
	uint32_t rdma_key;    /* keyed SGL: host rkey */
	bool rdma_invalidate; /* respond with Send with Invalidate */
	bool close_after;     /* disconnect the queue after the response */
	void *data;	      /* the data buffer (see the flow above) */

	/* Core-private below. */
	uint8_t kind;	       /* which command family runs exec */
	uint8_t state;	       /* NVMF_REQ_* (internal.h) */
	bool cid_held;	       /* the CID is in the queue's set */
	bool held;	       /* parked (AER) */
	uint16_t held_status;  /* status to complete a held request with */
	void *ns;	       /* the namespace an I/O command targets */
	struct nvmf_req *next; /* the controller's held list */
	/* A command with the backend (NVMF_ACT_ASYNC). */
	struct nvmf_aio_op aio; /* the step in flight */
	uint32_t step;		/* which step (DSM range, flush-all NSID) */
	uint8_t zero_mode;	/* Write Zeroes / deallocate: the fallback */
	uint64_t zero_off;	/* the range still to zero, bytes */
	uint64_t zero_left;
	uint64_t start_ns; /* the capsule's arrival (CLOCK_MONOTONIC) */
};

/* What an admin queue's Connect asked for and how it ended. */
struct nvmf_connect_audit {
	const char *hostnqn; /* printable, possibly truncated or "" */
	const char *hostid;  /* 36-character UUID form of HOSTID */
	const char *subnqn;  /* printable, possibly truncated or "" */
	uint16_t cntlid;     /* the new controller's; 0 when refused */
	uint16_t status;     /* the completion's status field; 0: accepted */
	const char *reason;  /* why it was refused; NULL when accepted */
};

/* Callbacks into the binding. */
struct nvmf_tgt_ops {
	size_t size; /* sizeof(struct nvmf_tgt_ops) */
	/* Monotonic milliseconds (keep-alive). Any thread, must not block. */
	uint64_t (*now_ms)(void *arg);
	/*
	 * A held request on @q is ready: call nvmf_req_resume(q, req) on @q's
	 * thread and send the response. Locks held; queue work only.
	 */
	void (*held_ready)(struct nvmf_queue *q, struct nvmf_req *req,
			   void *arg);
	/*
	 * Disconnect @q (keep-alive expiry, controller reset, admin queue
	 * gone), then nvmf_queue_destroy() it on its thread. Locks held;
	 * queue work only. Called at most once per queue.
	 */
	void (*kill)(struct nvmf_queue *q, void *arg);
	/*
	 * Optional: an admin queue's Connect ended (@a: a controller created
	 * or refused, valid during the call). On @q's thread, inside the
	 * command; must not block.
	 */
	void (*connect_audit)(struct nvmf_queue *q,
			      const struct nvmf_connect_audit *a, void *arg);
};

/* How a queue was negotiated (nvme_rdma_req_parse()). */
struct nvmf_queue_params {
	size_t size;	     /* sizeof(struct nvmf_queue_params) */
	uint16_t qid;	     /* from the CM private data */
	uint16_t sq_entries; /* hsqsize + 1 */
	void *ctx;	     /* the binding's, see nvmf_queue_ctx() */
	/* 1 + the index of the configuration's listen line the queue came in
	 * on; 0: none (only subsystems without export lines are reachable). */
	uint16_t listener;
	/* The io_uring of the queue's thread, for file and block device
	 * namespaces; NULL: their I/O blocks in place. Outlives the queue. */
	struct nvmf_aio *aio;
};

/* Target-wide counters: all return to zero once every queue is gone. */
struct nvmf_tgt_stats {
	uint64_t ctrls;	 /* live controllers */
	uint64_t queues; /* live queues */
	uint64_t reqs;	 /* requests in flight (received, not completed) */
	uint64_t held;	 /* of which held (AER) */
	/* Totals since creation. */
	uint64_t ctrls_created;
	uint64_t connects_failed;
	uint64_t kato_expired;
	uint64_t dropped; /* capsules answered with NVMF_ACT_DROP */
	/* DH-HMAC-CHAP transactions that succeeded, and that failed (a
	 * wrong response, a protocol error, the host's Failure2). */
	uint64_t auth_ok;
	uint64_t auth_failed;
	/* Backend I/O that failed, by the status the host got. */
	uint64_t media_errors;	       /* Unrecovered Read / Write Fault */
	uint64_t capacity_errors;      /* Capacity Exceeded */
	uint64_t write_protect_errors; /* Namespace Is Write Protected */
	uint64_t internal_errors;      /* Internal Error */
};

/**
 * nvmf_tgt_create() - build a target from a configuration.
 * @cfg: a configuration that passed nvmf_config_finish(); copied.
 * @ops: callbacks (size, now_ms and kill required; held_ready required).
 * @arg: passed to every callback.
 * @out: the target.
 * @err: receives "source:LINE: message" when a namespace backing fails.
 * @errlen: size of @err.
 *
 * Opens every namespace backing (RAM mapped, files opened read-write).
 *
 * Return: 0; -EINVAL for bad arguments or configuration values; -errno of
 * a backing (with its config line in @err); -ENOMEM.
 * Context: any thread; blocks on the filesystem; allocates.
 */
int nvmf_tgt_create(const struct nvmf_config *cfg,
		    const struct nvmf_tgt_ops *ops, void *arg,
		    struct nvmf_tgt **out, char *err, size_t errlen);

/**
 * nvmf_tgt_destroy() - free a target.
 * @tgt: the target; NULL is a no-op. Every queue must be destroyed first.
 *
 * Return: 0; -EBUSY (nothing freed) while queues remain.
 * Context: any thread; closes backings.
 */
int nvmf_tgt_destroy(struct nvmf_tgt *tgt);

/**
 * nvmf_tgt_rdma_limits() - the limits nvme_rdma_req_parse() needs.
 * @tgt: the target.
 * @dev_max_init_rd_atom: the device's max_qp_init_rd_atom.
 * @dev_max_rd_atom: the device's max_qp_rd_atom.
 * @lim: filled: max_qid = io-queues, admin_depth = 32, io_depth =
 *       queue-depth, and the two device values (saturated at 255).
 *
 * Context: any thread; non-blocking.
 */
void nvmf_tgt_rdma_limits(const struct nvmf_tgt *tgt,
			  uint32_t dev_max_init_rd_atom,
			  uint32_t dev_max_rd_atom,
			  struct nvme_rdma_limits *lim);

/**
 * nvmf_tgt_icd_size() - in-capsule data bytes a queue's receive buffers
 * must hold after the 64-byte SQE.
 * @tgt: the target.
 * @qid: the queue ID.
 *
 * Return: the configured in-capsule size for I/O queues; 8192 for the
 * admin queue (Connect data fits in-capsule; Linux hosts send it keyed).
 * Context: any thread; non-blocking.
 */
uint32_t nvmf_tgt_icd_size(const struct nvmf_tgt *tgt, uint16_t qid);

/**
 * nvmf_tgt_max_xfer() - the largest data buffer a request may need.
 * @tgt: the target.
 *
 * Return: max-io-size in bytes (MDTS), at least 4096.
 * Context: any thread; non-blocking.
 */
uint32_t nvmf_tgt_max_xfer(const struct nvmf_tgt *tgt);

/**
 * nvmf_tgt_check_cntlid() - whether an I/O queue's REQ names a live
 * controller (the REQ's optional cntlid, NVMe RDMA transport TP 8012).
 * @tgt: the target.
 * @qid: the REQ's qid.
 * @cntlid: the REQ's cntlid.
 *
 * Return: 0 if @qid is 0, @cntlid is 0 (not sent) or names a live
 * controller; -ENOENT otherwise (reject with NVME_RDMA_CM_INVALID_CNTLID).
 * Context: any thread; takes the target lock.
 */
int nvmf_tgt_check_cntlid(struct nvmf_tgt *tgt, uint16_t qid, uint16_t cntlid);

/**
 * nvmf_tgt_kato_scan() - tear down controllers whose keep-alive expired.
 * @tgt: the target.
 * @now_ms: the current time (the same clock as ops->now_ms).
 *
 * An expired controller gets CSTS.CFS, refuses new queues, and each of
 * its queues is killed (ops->kill, once). A queue that has not finished
 * its DH-HMAC-CHAP transaction 30 s after its Connect is killed too
 * (counted in auth_failed). Pure function of time: nothing
 * else reads the clock here.
 *
 * Return: the number of controllers torn down by this call.
 * Context: any thread (a timer); takes the target and controller locks;
 * calls ops->kill.
 */
int nvmf_tgt_kato_scan(struct nvmf_tgt *tgt, uint64_t now_ms);

/**
 * nvmf_tgt_get_stats() - a snapshot of the target's counters.
 * @tgt: the target.
 * @out: the counters.
 *
 * Context: any thread; non-blocking.
 */
void nvmf_tgt_get_stats(const struct nvmf_tgt *tgt, struct nvmf_tgt_stats *out);

/**
 * nvmf_tgt_needs_aio() - whether a namespace of @tgt sits on a file or
 * block device (its queues then need an io_uring: nvmf_queue_params.aio).
 * Context: the thread that created @tgt, before subsystems change at run
 * time, or the management thread; lock-free.
 */
bool nvmf_tgt_needs_aio(const struct nvmf_tgt *tgt);

/**
 * nvmf_tgt_ns_set_ready() - mark a namespace (not) ready.
 * @tgt: the target.
 * @subnqn: the subsystem.
 * @nsid: the namespace.
 * @ready: false: I/O to it completes with Namespace Not Ready (retryable).
 *
 * Return: 0; -ENOENT for an unknown subsystem or namespace.
 * Context: any thread; non-blocking.
 */
int nvmf_tgt_ns_set_ready(struct nvmf_tgt *tgt, const char *subnqn,
			  uint32_t nsid, bool ready);

/**
 * nvmf_tgt_ns_remove() - detach a namespace at run time.
 * @tgt: the target.
 * @subnqn: the subsystem.
 * @nsid: the namespace.
 *
 * Further commands naming @nsid fail with Invalid Namespace; every
 * controller of the subsystem records @nsid in its Changed Namespace List
 * and gets a Namespace Attribute Changed notice (if it enabled them). The
 * backing stays open until nvmf_tgt_destroy() (I/O in flight may still
 * use it).
 *
 * Return: 0; -ENOENT for an unknown subsystem or namespace.
 * Context: any thread; takes the target and controller locks; may call
 * ops->held_ready.
 */
int nvmf_tgt_ns_remove(struct nvmf_tgt *tgt, const char *subnqn, uint32_t nsid);

/**
 * nvmf_tgt_ns_add() - attach a namespace at run time.
 * @tgt: the target.
 * @subnqn: the subsystem.
 * @c: the namespace as a configuration line gives it (copied): a free
 *     NSID, or one whose namespace was removed (that one stays allocated
 *     until nvmf_tgt_destroy(): I/O in flight may still use it).
 * @why: receives what failed to open, if anything (may be NULL).
 * @whylen: size of @why.
 *
 * A file or block device namespace needs its queues to have an io_uring
 * (nvmf_queue_params.aio): the caller checks. Notifies controllers as
 * nvmf_tgt_ns_remove() does.
 *
 * A namespace that takes a removed one's NSID gets identifiers (NGUID,
 * UUID) of its own. At most NVMF_MAX_RETIRED removed namespaces are kept
 * that way per target.
 *
 * Return: 0; -ENOENT for an unknown subsystem; -EEXIST if @nsid is in use;
 * -EBUSY if @nsid was removed and NVMF_MAX_RETIRED removed namespaces are
 * kept already (another NSID still works; a restart frees them); -EINVAL
 * for bad sizes or NSID; -ENOMEM; the backing's -errno.
 * Context: any thread; opens the backing (may block), then takes the
 * target and controller locks; may call ops->held_ready.
 */
/* Removed namespaces whose NSID was used again, kept per target. */
#define NVMF_MAX_RETIRED 256

int nvmf_tgt_ns_add(struct nvmf_tgt *tgt, const char *subnqn,
		    const struct nvmf_cfg_ns *c, char *why, size_t whylen);

/**
 * nvmf_tgt_ns_add_ram() - attach a RAM namespace at run time.
 * @tgt: the target.
 * @subnqn: the subsystem.
 * @nsid: a free NSID (1..NVMF_MAX_NSID), or a removed one.
 * @size: bytes, a multiple of @block_size.
 * @block_size: 512 or 4096.
 *
 * Notifies controllers as nvmf_tgt_ns_remove() does.
 *
 * Return: 0; -ENOENT for an unknown subsystem; -EEXIST if @nsid is taken;
 * -EINVAL for bad sizes or NSID; -ENOMEM.
 * Context: any thread; takes the target and controller locks; may call
 * ops->held_ready.
 */
int nvmf_tgt_ns_add_ram(struct nvmf_tgt *tgt, const char *subnqn, uint32_t nsid,
			uint64_t size, uint32_t block_size);

/**
 * nvmf_tgt_host_add() - let a host connect to a subsystem, at run time.
 * @tgt: the target.
 * @subnqn: the subsystem (not the discovery one).
 * @hostnqn: the host's NQN (copied).
 * @auth: its DH-HMAC-CHAP secrets (copied), or NULL (or no key): the host
 *        does not authenticate.
 *
 * Return: 0; -ENOENT for an unknown subsystem; -EINVAL for an invalid
 * NQN; -EEXIST if listed already; -EPERM while the subsystem allows any
 * host (the two never mix, as in the configuration); -ENOSPC beyond
 * NVMF_CFG_MAX_HOSTS; -ENOMEM.
 * Context: any thread; takes the target lock.
 */
int nvmf_tgt_host_add(struct nvmf_tgt *tgt, const char *subnqn,
		      const char *hostnqn, const struct nvmf_auth_cfg *auth);

/**
 * nvmf_tgt_host_remove() - take a host off a subsystem's allow-list and
 * disconnect it.
 * @tgt: the target.
 * @subnqn: the subsystem.
 * @hostnqn: the host's NQN.
 * @revoked: receives the number of that host's controllers torn down
 *           (each queue goes through ops->kill); may be NULL.
 *
 * A Connect of that host racing with the call gets Connect Invalid Host.
 *
 * Return: 0; -ENOENT for an unknown subsystem or a host not listed;
 * -EINVAL for a NULL @hostnqn.
 * Context: any thread; takes the target and controller locks; calls
 * ops->kill.
 */
int nvmf_tgt_host_remove(struct nvmf_tgt *tgt, const char *subnqn,
			 const char *hostnqn, unsigned *revoked);

/**
 * nvmf_tgt_allow_any() - switch allow-any-host at run time.
 * @tgt: the target.
 * @subnqn: the subsystem.
 * @allow: true: any host may connect; false: only listed hosts (none
 *         when the list is empty), and the controllers of every other
 *         host are torn down.
 * @revoked: receives the number of controllers torn down; may be NULL.
 *
 * Return: 0 (also when nothing changes); -ENOENT for an unknown
 * subsystem; -EPERM to allow any host while hosts are listed.
 * Context: any thread; takes the target and controller locks; calls
 * ops->kill.
 */
int nvmf_tgt_allow_any(struct nvmf_tgt *tgt, const char *subnqn, bool allow,
		       unsigned *revoked);

/**
 * nvmf_tgt_subsys_add() - create an NVM subsystem while the target runs.
 * @tgt: the target.
 * @c: the subsystem as a configuration block gives it (copied): NQN,
 *     serial, model, allow-any / allow-no-host / hosts, namespaces (RAM
 *     and null only, unless the queues have io_urings: the caller
 *     checks); no export lines: with export_none it is served on no
 *     listener until nvmf_tgt_subsys_export() adds one, without on
 *     every listener.
 * @err: receives what failed to open, if anything.
 * @errlen: size of @err.
 *
 * Hosts see it in the discovery log (its generation counter moves) and
 * may connect once this returns.
 *
 * Return: 0; -EINVAL for an invalid NQN, the discovery NQN or export
 * lines; -EEXIST if the NQN is taken; -ENOSPC beyond NVMF_CFG_MAX_SUBSYS;
 * -ENOMEM; a namespace backing's -errno.
 * Context: the management thread (one at a time), not a shard: waits for
 * an RCU grace period; takes the target lock.
 */
int nvmf_tgt_subsys_add(struct nvmf_tgt *tgt, const struct nvmf_cfg_subsys *c,
			char *err, size_t errlen);

/**
 * nvmf_tgt_subsys_delete() - delete an NVM subsystem while the target runs.
 * @tgt: the target.
 * @subnqn: the subsystem (not the discovery one).
 * @disconnected: receives the number of its controllers torn down (each
 *                queue goes through ops->kill); may be NULL.
 *
 * New Connects to it are refused (Connect Invalid Parameters on SUBNQN,
 * as for an unknown subsystem). Waits up to 5 s for the controllers'
 * queues to be destroyed, then closes the namespaces; a subsystem whose
 * controllers are not gone by then is freed by a later create or delete,
 * or with the target.
 *
 * Return: 0; -ENOENT for an unknown subsystem or the discovery one;
 * -EINVAL; -ENOMEM.
 * Context: the management thread (one at a time), not a shard: waits for
 * an RCU grace period and for the queues; takes the target and
 * controller locks; calls ops->kill; closes files.
 */
int nvmf_tgt_subsys_delete(struct nvmf_tgt *tgt, const char *subnqn,
			   unsigned *disconnected);

/**
 * nvmf_tgt_listener_add() - reserve a listen slot for a new address.
 * @tgt: the target.
 * @l: the address (family, numeric address, port; copied).
 * @listener: receives its slot (1-based), also with -EEXIST (the live
 *            slot of that address).
 *
 * The slot is not live (not matched, not listed) until
 * nvmf_tgt_listener_commit(): the binding starts listening in between.
 *
 * Return: 0; -EEXIST if that address and port are live already; -ENOSPC
 * beyond NVMF_CFG_MAX_LISTEN; -EINVAL for a bad address.
 * Context: the management thread; takes the target lock.
 */
int nvmf_tgt_listener_add(struct nvmf_tgt *tgt, const struct nvmf_cfg_listen *l,
			  uint16_t *listener);

/**
 * nvmf_tgt_listener_commit() - make a reserved slot live, or give it back.
 * @tgt: the target.
 * @listener: the slot nvmf_tgt_listener_add() reserved.
 * @ok: true: the binding listens there (the discovery log lists it from
 *      now on); false: it could not.
 *
 * Return: 0; -ENOENT if @listener is not reserved; -EINVAL.
 * Context: the management thread; takes the target lock.
 */
int nvmf_tgt_listener_commit(struct nvmf_tgt *tgt, uint16_t listener, bool ok);

/**
 * nvmf_tgt_listener_remove() - remove a listen address no subsystem uses.
 * @tgt: the target.
 * @listener: its slot.
 * @disconnected: receives the number of controllers torn down that came
 *                in through it (discovery ones); may be NULL.
 *
 * The binding stops listening there first. A connection that came in
 * through it before and has not connected a controller yet is refused at
 * Connect.
 *
 * Return: 0; -ENOENT if @listener is not live; -EBUSY while a subsystem
 * is served on it (exported there, or without export lines); -EINVAL.
 * Context: the management thread, not a shard: waits for an RCU grace
 * period; takes the target and controller locks; calls ops->kill.
 */
int nvmf_tgt_listener_remove(struct nvmf_tgt *tgt, uint16_t listener,
			     unsigned *disconnected);

/**
 * nvmf_tgt_listener_used() - whether a subsystem is served on @listener.
 * Context: any thread; takes the target lock.
 */
bool nvmf_tgt_listener_used(struct nvmf_tgt *tgt, uint16_t listener);

/**
 * nvmf_tgt_listener_find() - the live slot of an address and port.
 * @tgt: the target.
 * @l: family, address and port (the same address in any spelling).
 *
 * Return: the slot (1-based), or 0.
 * Context: any thread; takes the target lock.
 */
uint16_t nvmf_tgt_listener_find(struct nvmf_tgt *tgt,
				const struct nvmf_cfg_listen *l);

/**
 * nvmf_tgt_listener_of() - the slot a new connection came in through.
 * @tgt: the target.
 * @local: the connection's local address.
 *
 * Return: the slot (nvmf_queue_params.listener), or 0 when none matches.
 * Context: a shard callback (an RCU read-side section) or the management
 * thread; lock-free.
 */
uint16_t nvmf_tgt_listener_of(const struct nvmf_tgt *tgt,
			      const struct sockaddr *local);

/**
 * nvmf_tgt_subsys_export() - serve a subsystem on a listener, or stop.
 * @tgt: the target.
 * @subnqn: the subsystem.
 * @listener: a live slot.
 * @on: true: export it there (a subsystem without export lines is on
 *      every listener already: nothing changes); false: no longer, and
 *      its controllers that came in through @listener are torn down.
 * @disconnected: receives how many were; may be NULL.
 *
 * Stopping a subsystem without export lines gives it export lines for
 * every other live listener; stopping its last one leaves it served
 * nowhere (save_config writes export-none).
 *
 * Return: 0; -ENOENT for an unknown subsystem, or one not served on
 * @listener when @on is false; -ENODEV if @listener is not live; -EEXIST
 * if exported there already; -EINVAL.
 * Context: any thread; takes the target and controller locks; calls
 * ops->kill.
 */
int nvmf_tgt_subsys_export(struct nvmf_tgt *tgt, const char *subnqn,
			   uint16_t listener, bool on, unsigned *disconnected);

/**
 * nvmf_tgt_save_config() - the running target as configuration text.
 * @tgt: the target.
 * @cfg: the configuration it was created from (its global lines: listen
 *       addresses, shards, CPUs, queue limits).
 * @text: receives the text (config.h's format; free() it).
 * @len: receives its length; may be NULL.
 *
 * Subsystems are written as they are now: namespaces added at run time
 * included, removed ones left out, hosts and allow-any as last changed
 * (allow-no-host for a subsystem nobody may connect to), export lines.
 * nvmf_config_parse() of the text gives a target the same as @tgt.
 *
 * Return: 0; -EINVAL; -ENOMEM.
 * Context: any thread; takes the target lock.
 */
int nvmf_tgt_save_config(struct nvmf_tgt *tgt, const struct nvmf_config *cfg,
			 char **text, size_t *len);

/**
 * nvmf_queue_create() - a queue for an accepted connection.
 * @tgt: the target.
 * @p: the negotiated parameters (qid <= io-queues; sq_entries 2..the
 *     queue-depth limit for the queue type).
 * @out: the queue, awaiting its Connect command.
 *
 * Return: 0; -EINVAL for bad parameters; -ENOMEM.
 * Context: the queue's thread; allocates.
 */
int nvmf_queue_create(struct nvmf_tgt *tgt, const struct nvmf_queue_params *p,
		      struct nvmf_queue **out);

/**
 * nvmf_queue_destroy() - free a queue (its connection is gone).
 * @q: the queue; NULL is a no-op.
 *
 * Requests still in flight on @q are forgotten (the binding owns their
 * memory, including held AERs). Destroying a controller's admin queue
 * kills its I/O queues (ops->kill); the controller is freed with its last
 * queue.
 *
 * Context: the queue's thread; takes the target and controller locks.
 */
void nvmf_queue_destroy(struct nvmf_queue *q);

/**
 * nvmf_queue_ctx() - the binding's context given at creation.
 * @q: the queue.
 *
 * Return: params->ctx.
 * Context: any thread.
 */
void *nvmf_queue_ctx(const struct nvmf_queue *q);

/**
 * nvmf_queue_cntlid() - the controller a queue belongs to.
 * @q: the queue.
 *
 * Return: the controller ID, or 0 before a successful Connect.
 * Context: the queue's thread.
 */
uint16_t nvmf_queue_cntlid(const struct nvmf_queue *q);

/**
 * nvmf_queue_inflight() - requests received on a queue and not completed.
 * @q: the queue.
 *
 * Return: the count (held AERs included).
 * Context: the queue's thread.
 */
uint32_t nvmf_queue_inflight(const struct nvmf_queue *q);

/**
 * nvmf_req_recv() - take a received command capsule.
 * @q: the queue it arrived on.
 * @req: a free request (the binding's; overwritten).
 * @capsule: the capsule bytes (SQE + in-capsule data); peer data. Only
 *           borrowed for the duration of the call.
 * @len: the received length.
 *
 * Validates the capsule (length against the in-capsule size, FUSE / PSDT,
 * SGL type and subtype, in-capsule offset and length, keyed length, CID
 * not already outstanding), decodes the command and runs it when it needs
 * no host data or its data came in the capsule.
 *
 * Return: the next action (see the request flow above). Never fails: a bad
 * command gets an error status in req->rsp.
 * Context: the queue's thread; blocks on a file or device namespace only
 * when the queue has no io_uring.
 */
enum nvmf_act nvmf_req_recv(struct nvmf_queue *q, struct nvmf_req *req,
			    const void *capsule, size_t len);

/**
 * nvmf_req_exec() - run a command once its data buffer is in place.
 * @q: the queue.
 * @req: a request for which nvmf_req_recv() returned NVMF_ACT_READ (data
 *       read into req->data) or NVMF_ACT_BUF (req->data attached).
 *
 * Return: NVMF_ACT_RESPOND, NVMF_ACT_WRITE_RESPOND, NVMF_ACT_HOLD or
 * NVMF_ACT_ASYNC; with req->data NULL the command fails with Internal
 * Error (NVMF_ACT_RESPOND); a request in the wrong state is
 * NVMF_ACT_DROP.
 * Context: the queue's thread; blocks on a file or device namespace only
 * when the queue has no io_uring.
 */
enum nvmf_act nvmf_req_exec(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_req_backend_done() - a backend step of @req has completed.
 * @q: the queue.
 * @req: a request for which NVMF_ACT_ASYNC was returned; @req->aio is
 *	the operation the engine called back with.
 * @res: the engine's result (bytes, or -errno).
 *
 * Errors become the NVMe status a host expects (bdev_status.h), counted in
 * struct nvmf_tgt_stats. A short transfer goes on from where it stopped;
 * a read that reaches a (shrunk) file's end reads zeroes for the rest, a
 * write that makes no progress is a Write Fault.
 *
 * Return: NVMF_ACT_ASYNC (the next step is with the backend),
 * NVMF_ACT_RESPOND or NVMF_ACT_WRITE_RESPOND; NVMF_ACT_DROP for a request
 * in another state.
 * Context: the queue's thread.
 */
enum nvmf_act nvmf_req_backend_done(struct nvmf_queue *q, struct nvmf_req *req,
				    int res);

/**
 * nvmf_req_resume() - complete a held request after ops->held_ready.
 * @q: the queue.
 * @req: the request passed to ops->held_ready.
 *
 * Return: NVMF_ACT_RESPOND (req->rsp is ready); NVMF_ACT_DROP if @req is
 * not a request released by ops->held_ready.
 * Context: the queue's thread.
 */
enum nvmf_act nvmf_req_resume(struct nvmf_queue *q, struct nvmf_req *req);

/**
 * nvmf_req_fail() - complete a request whose data transfer failed.
 * @q: the queue.
 * @req: a request waiting for its buffer or data (NVMF_ACT_READ / _BUF).
 * @status: the status field (e.g. NVME_SC_DATA_XFER_ERROR, or
 *          NVME_SC_TRANSIENT_XPORT when no buffer was available).
 *
 * Return: NVMF_ACT_RESPOND; NVMF_ACT_DROP for a request in another state.
 * Context: the queue's thread.
 */
enum nvmf_act nvmf_req_fail(struct nvmf_queue *q, struct nvmf_req *req,
			    uint16_t status);

/**
 * nvmf_req_abort() - forget a request that will never be answered.
 * @q: the queue (going away).
 * @req: a request in flight (waiting for data, held, or with the
 *	backend).
 *
 * A request with the backend stays the binding's until the engine's
 * callback for it: its buffer must live until then, and the binding must
 * not call back into the core for it (the queue is gone).
 * Context: the queue's thread; takes the controller lock for a held one.
 */
void nvmf_req_abort(struct nvmf_queue *q, struct nvmf_req *req);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_NVMF_H */
