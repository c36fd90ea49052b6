/*
 * targets/nvmf/rdma.h - the NVMe over Fabrics RDMA transport binding of
 * wharf-nvmf-tgt, built on wharf's public cm / qp / core API only.
 *
 * One nvmf_rdma owns a wharf context (shards), its connection manager,
 * the nvmf core target (nvmf.h) and one listener per configured address.
 * Each NVMe-oF queue is one wharf connection:
 *  - placement: the listener's pick_shard policy reads the qid (and the
 *    optional cntlid) from the REQ private data: admin queues take the
 *    library's least-loaded shard, I/O queue qid of controller cntlid goes
 *    to shard (cntlid + qid) % nshards, so one controller's I/O queues
 *    spread over the shards before the controller is known;
 *  - a storm of connects beyond what a shard takes at once waits in the
 *    cm (the DEFER overload policy: the Linux host does not retry a
 *    refused connect); a refusal the cm must send after all (a wait past
 *    defer_max_ms, shutdown) carries the transport's own status, NO_RSC;
 *  - on_request validates the private data with nvme_rdma_req_parse() and
 *    nvmf_tgt_check_cntlid(), rejects with the transport status (REJ
 *    private data from nvme_rdma_rej_build()), else creates the core
 *    queue and accepts with the ACCEPT private data (recfmt, crqsize) and
 *    the target depth preset (responder resources 0);
 *  - capsules arrive on the owner shard's SRQ (receive buffers of 64 B +
 *    the largest in-capsule size), keyed data moves with RDMA READ before
 *    the command runs and RDMA WRITE before the 16-byte completion (the
 *    data buffers come from a registered pool per shard);
 *  - held requests (AER) and kills are handed to the owner shard with
 *    wharf_conn_call(); a periodic sweep per shard catches any hand-over
 *    the message ring refused; shard 0 scans keep-alive timeouts.
 * See rdma_int.h for the per-queue / per-request state machine.
 */
#ifndef WHARF_TARGETS_NVMF_RDMA_H
#define WHARF_TARGETS_NVMF_RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <wharf/core.h>

#include "targets/nvmf/nvmf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvmf_rdma;

/*
 * Adaptive shards spin this long after their last work before they sleep:
 * longer than most gaps between a loaded queue's capsules, so that a shard
 * under load seldom pays a wake-up.  Soft-RoCE guest, 4k randwrite vs
 * nvmet (bench/nvmf): 50 us 0.64-1.02x, 200 us 0.93-1.21x, 1000 us
 * 0.99-1.24x; busy polling 1.07-1.47x.
 */
#define NVMF_RDMA_SPIN_US_DEFAULT 1000

/*
 * A shard's receive buffers at most: 16384 of 64 B + 4 KiB in-capsule data
 * (68 MiB) admit 1020 queues of 16 credits.  The SRQ starts at srq_depth
 * and grows by that much as queues need it, so an idle target keeps its
 * small footprint and a connect storm of hundreds of controllers is not
 * refused for lack of buffers.
 */
#define NVMF_RDMA_SRQ_MAX_DEFAULT 16384u

/* Options of nvmf_rdma_create(); zero means default everywhere. */
struct nvmf_rdma_opts {
	size_t size;			/* sizeof(struct nvmf_rdma_opts) */
	enum wharf_poll_mode poll_mode; /* shard idle mode (default event) */
	unsigned adaptive_spin_us;	/* WHARF_POLL_ADAPTIVE spin; 0 = 1000 */
	uint32_t srq_depth; /* receive buffers per shard; 0 = 1024 */
	/* Receive buffers a shard's SRQ may grow to as queues are admitted
	 * (16 credits each); 0 = NVMF_RDMA_SRQ_MAX_DEFAULT, or srq_depth
	 * when that is larger. */
	uint32_t srq_max;
	uint32_t data_buffers; /* data buffers per shard; 0 = 256 */
	bool verbose;	       /* log connections on stderr */
	/* Connection storms (wharf_cm_opts / wharf_listen_opts; 0 = the
	 * library's default): handshakes a shard runs at once, and how long
	 * and how many connects wait beyond it (the DEFER policy; a connect
	 * that waits too long is refused with NO_RSC). */
	uint32_t handshake_cap;
	uint32_t defer_max_ms;
	uint32_t defer_max;
};

/* Binding counters, summed over the shards. */
struct nvmf_rdma_stats {
	size_t size;		  /* sizeof(struct nvmf_rdma_stats) */
	uint64_t queues;	  /* gauge: queues (connections) alive */
	uint64_t bufs_in_use;	  /* gauge: data buffers taken */
	uint64_t accepted;	  /* queues accepted */
	uint64_t rejected;	  /* REQs rejected with an NVMe-oF status */
	uint64_t capsules;	  /* command capsules received */
	uint64_t rdma_reads;	  /* RDMA READs completed */
	uint64_t rdma_writes;	  /* RDMA WRITEs completed */
	uint64_t responses;	  /* completions sent */
	uint64_t buf_waits;	  /* requests that waited for a data buffer */
	uint64_t wc_errors;	  /* work requests that completed in error */
	uint64_t kills;		  /* queues killed by the core (kato, reset) */
	uint64_t handoff_retries; /* hand-overs left to the sweep */
	uint64_t responses_inv;	  /* of responses: SEND with Invalidate */
	/* File and block device namespaces: the shards' io_urings. */
	uint64_t backend_ops;	   /* operations completed */
	uint64_t backend_errors;   /* of which failed */
	uint64_t backend_waits;	   /* waited for room in the ring */
	uint64_t backend_fixed;	   /* used the registered buffers */
	uint64_t backend_inflight; /* gauge: in the kernel */
	uint64_t bounces;	   /* in-capsule data copied to the heap (pool
				   * empty) */
	uint64_t audit_held; /* Connect log lines held back (rate limit) */
	/* The cm's view of the listeners' requests (wharf_cm_stats). */
	uint64_t cm_requests;	     /* CONNECT_REQUESTs received */
	uint64_t deferred;	     /* gauge: waiting for a handshake slot */
	uint64_t deferred_total;     /* ever deferred */
	uint64_t deferred_accepted;  /* deferred, then established */
	uint64_t deferred_timed_out; /* deferred too long: NO_RSC */
	uint64_t rejected_busy;	     /* refused for overload (NO_RSC) */
	uint64_t cm_failed;	     /* requests the cm could not take */
};

/**
 * nvmf_rdma_create() - build the target and start listening.
 * @cfg: a finished configuration (nvmf_config_finish()); copied.
 * @opts: options or NULL.
 * @out: the binding.
 * @err: receives a message on failure (config line for backings).
 * @errlen: size of @err.
 *
 * Return: 0; -EINVAL for bad options; -ENODEV without an RDMA device;
 * -errno of the core target, the context, the cm or a listener
 * (message in @err).
 * Context: an application thread; blocks (threads, devices, backings).
 */
int nvmf_rdma_create(const struct nvmf_config *cfg,
		     const struct nvmf_rdma_opts *opts, struct nvmf_rdma **out,
		     char *err, size_t errlen);

/**
 * nvmf_rdma_destroy() - stop listening, disconnect every queue, wait for
 * their work requests, free everything.
 * @r: the binding or NULL.
 *
 * Return: 0; -ETIMEDOUT when queues did not drain within 30 s (the
 * context and target are then leaked rather than freed under use).
 * Context: the application thread that created it; blocks.
 */
int nvmf_rdma_destroy(struct nvmf_rdma *r);

/**
 * nvmf_rdma_get_stats() - the binding's and the core target's counters.
 * @r: the binding.
 * @out: binding counters (@out->size set by the caller).
 * @tgt: core counters, or NULL.
 *
 * Context: any thread; non-blocking.
 */
void nvmf_rdma_get_stats(const struct nvmf_rdma *r, struct nvmf_rdma_stats *out,
			 struct nvmf_tgt_stats *tgt);

/**
 * nvmf_rdma_listen() - listen on another address while the target runs.
 * @r: the binding.
 * @l: family, numeric address and port.
 * @listener: receives its slot (1-based), also with -EEXIST.
 *
 * Return: 0; -EEXIST if the target listens there already; -ENOSPC beyond
 * NVMF_CFG_MAX_LISTEN addresses; -EINVAL; wharf_listen()'s -errno
 * (-EADDRNOTAVAIL for an address no RDMA device has, -EADDRINUSE).
 * Context: the management thread; blocks until the listener is set up.
 */
int nvmf_rdma_listen(struct nvmf_rdma *r, const struct nvmf_cfg_listen *l,
		     uint16_t *listener);

/**
 * nvmf_rdma_unlisten() - stop listening on a slot no subsystem uses.
 * @r: the binding.
 * @listener: the slot.
 * @disconnected: receives the number of controllers torn down that came
 *                in through it; may be NULL.
 *
 * Return: 0; -ENOENT if not listening there; -EBUSY while a subsystem is
 * served on it (nvmf_tgt_subsys_export()).
 * Context: the management thread, not a shard; blocks until the listener
 * stopped and an RCU grace period passed.
 */
int nvmf_rdma_unlisten(struct nvmf_rdma *r, uint16_t listener,
		       unsigned *disconnected);

/**
 * nvmf_rdma_listen_port() - the port listener @i is bound to.
 * Return: the port (host order), 0 for a bad index.
 * Context: any thread; non-blocking.
 */
uint16_t nvmf_rdma_listen_port(const struct nvmf_rdma *r, size_t i);

/**
 * nvmf_rdma_target() - the core target the binding serves (for run-time
 * changes: nvmf_tgt_ns_add(), nvmf_tgt_host_remove()...).
 * Return: the target, owned by @r.
 * Context: any thread; non-blocking.
 */
struct nvmf_tgt *nvmf_rdma_target(const struct nvmf_rdma *r);

/**
 * nvmf_rdma_file_ns() - whether every shard has its io_uring, so that a
 * file or block device namespace may be added at run time.
 * Context: any thread; non-blocking.
 */
bool nvmf_rdma_file_ns(const struct nvmf_rdma *r);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_RDMA_H */
