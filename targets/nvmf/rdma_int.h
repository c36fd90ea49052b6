/*
 * targets/nvmf/rdma_int.h - internals of the RDMA binding (rdma.h).
 *
 * Ownership: a struct nr_queue (one NVMe-oF queue = one wharf connection)
 * and its request slots belong to the connection's owner shard; only that
 * thread touches them. Other threads (the core's ops->kill / held_ready,
 * run wherever the core decided) set an atomic flag and send the owner a
 * wharf_conn_call() carrying the queue or slot pointer: the call runs
 * with conn == NULL once the connection is destroyed, and the queue
 * outlives its connection, so the pointer is only used when the
 * connection still exists.
 *
 * Queue life: on_request -> (accept) -> established -> ... -> ended
 * (on_disconnected, on_error, kill before establishment, shutdown):
 * nr_queue_end() aborts the core requests still waiting, destroys the
 * core queue and the connection; the nr_queue itself is freed once every
 * work request it posted has completed (flushes included).
 *
 * Slot (request) life:
 *   FREE -> recv: nvmf_req_recv()
 *     RESPOND        -> SEND rsp                    -> (send done) FREE
 *     WRITE_RESPOND  -> RDMA WRITE + SEND rsp       -> (both done) FREE
 *     READ           -> buffer -> RDMA READ -> exec -> one of these
 *     BUF            -> buffer -> exec              -> one of these
 *     HOLD           -> held_ready -> owner: resume -> SEND rsp
 *     COPY           -> buffer (pool, else heap) <- in-capsule data -> exec
 *     ASYNC          -> the shard's io_uring -> done: backend_done -> one
 *                       of these (the operation counts as a pending WR, so
 *                       the slot and its buffer outlive an ended queue)
 *   No buffer free: the slot waits on its shard's list (FIFO).
 */
#ifndef WHARF_TARGETS_NVMF_RDMA_INT_H
#define WHARF_TARGETS_NVMF_RDMA_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/numa.h>
#include <wharf/qp.h>

#include "targets/nvmf/aio.h"
#include "targets/nvmf/audit.h"
#include "targets/nvmf/nvmf.h"
#include "targets/nvmf/rdma.h"

#define NR_WR_TAG	0x4e564d46u /* "NVMF" */
#define NR_QUEUE_MAGIC	0x4e525155u
#define NR_SWEEP_NS	(100ull * 1000 * 1000)
#define NR_KATO_EVERY	5   /* sweeps between keep-alive scans (shard 0) */
#define NR_AIO_DEPTH	256 /* backend operations in the kernel per shard */
#define NR_AIO_DRAIN_MS 10000

struct nvmf_rdma;
struct nr_queue;
struct nr_slot;

struct nr_wr {
	struct wharf_wr wr;
	struct nr_slot *slot;
};

struct nr_slot {
	struct nvmf_req req; /* req.rsp is sent: the slot array is an MR */
	struct nr_queue *nq;
	struct nr_wr data_wr; /* RDMA READ or WRITE */
	struct nr_wr rsp_wr;  /* SEND of req.rsp */
	void *buf;	      /* data buffer of the shard pool, or NULL */
	struct nr_slot *next; /* free list / shard wait list */
	atomic_bool ready;    /* held_ready fired, resume pending */
	uint8_t pending;      /* work requests in flight */
	bool busy;
	bool waiting;	  /* on the shard's buffer wait list */
	bool reading;	  /* the data WR is a READ: exec on completion */
	bool close_after; /* disconnect once the response is sent */
	bool bounce;	  /* buf is a heap copy of in-capsule data */
};

struct nr_queue {
	uint32_t magic; /* NR_QUEUE_MAGIC: a callback arg that is a queue */
	struct nr_shard *sh;
	struct wharf_conn *conn; /* NULL once destroyed */
	uint64_t conn_id;
	struct nvmf_queue *q; /* NULL once destroyed */
	uint16_t qid;
	uint16_t listener; /* nvmf_queue_params.listener */
	char peer[56];	   /* the host's address, for the audit trail */
	char local[56];	   /* the address it connected to */
	struct nr_slot *slots;
	uint32_t nslots;
	struct nr_slot *free;
	struct ibv_mr *mr; /* covers slots[] */
	uint32_t wr_inflight;
	atomic_bool kill_pending;
	atomic_bool ready_pending;
	bool established, disconnecting, ended, in_request;
	struct nr_queue *prev, *next; /* the shard's list */
};

/* Per-shard counters, read by any thread. */
struct nr_counters {
	atomic_uint_fast64_t queues, bufs_in_use, accepted, rejected;
	/* Written by the owner shard only (nr_count). */
	atomic_uint_fast64_t capsules, rdma_reads, rdma_writes, responses;
	atomic_uint_fast64_t buf_waits, wc_errors, responses_inv;
	atomic_uint_fast64_t kills, handoff_retries, bounces;
	atomic_uint_fast64_t audit_held; /* Connect log lines not printed */
};

/* Counts on the data path: single writer (the owner shard), so a relaxed
 * load and store, no locked add per I/O (as wcm_count_shard in cm). */
static inline void nr_count(atomic_uint_fast64_t *c)
{
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

struct nr_shard {
	struct nvmf_rdma *r;
	struct wharf_shard *shard;
	unsigned index;
	struct nr_queue *queues;
	struct ibv_pd *pd;	     /* the device's PD (first connection) */
	struct ibv_device_attr attr; /* that device's attributes */
	struct wharf_buf_pool *bufs; /* data buffers on @pd */
	struct nvmf_aio *aio;	     /* file / device I/O; NULL: failed */
	int aio_err;		     /* why aio is NULL */
	struct nr_slot *wait_head, *wait_tail;
	struct wharf_timer *sweep;
	unsigned sweeps;
	struct nvmf_audit_limit audit; /* Connect log lines (audit.h) */
	struct nr_counters n;
};

struct nvmf_rdma {
	struct nvmf_rdma_opts opts;
	struct nvmf_tgt *tgt;
	struct wharf_ctx *ctx;
	struct wharf_cm *cm;
	/* By listen slot (nvmf_tgt_listener_*): the configuration's, then
	 * those added at run time; the management thread's. */
	struct wharf_listener *listeners[NVMF_CFG_MAX_LISTEN];
	struct nr_shard *shards;
	unsigned nshards;
	uint32_t max_xfer;
	atomic_uint_fast64_t nq_alive; /* nr_queue structs not yet freed */
	/* nr_on_shards() completion. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned left;
};

/* A connection callback's arg as a queue (NULL: the binding's). */
static inline struct nr_queue *nr_queue_of(void *arg)
{
	struct nr_queue *nq = arg;

	return nq && nq->magic == NR_QUEUE_MAGIC ? nq : NULL;
}

/* rdma.c */
void nr_on_shards(struct nvmf_rdma *r, void (*fn)(struct nr_shard *sh));
void nr_log(const struct nvmf_rdma *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* rdma_conn.c: the CM side */
extern const struct wharf_conn_ops nr_conn_ops;
void nr_queue_end(struct nr_queue *nq);
void nr_queue_kill(struct nr_queue *nq);
void nr_queue_maybe_free(struct nr_queue *nq);
void nr_ops_connect_audit(struct nvmf_queue *q,
			  const struct nvmf_connect_audit *a, void *arg);

/* rdma_io.c: the data path */
int nr_on_recv(struct wharf_conn *conn, void *buf,
	       const struct wharf_qp_recv *rx, void *arg);
void nr_on_send_done(struct wharf_conn *conn, struct wharf_wr *wr, void *arg);
void nr_slot_resume(struct nr_slot *slot);
void nr_queue_drop_requests(struct nr_queue *nq);
void nr_ops_held_ready(struct nvmf_queue *q, struct nvmf_req *req, void *arg);
void nr_ops_kill(struct nvmf_queue *q, void *arg);
void nr_shard_sweep(struct nr_shard *sh);
void nr_aio_done(struct nvmf_aio_op *op, int res, void *arg);

#endif /* WHARF_TARGETS_NVMF_RDMA_INT_H */
