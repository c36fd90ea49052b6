/*
 * targets/nvmf/aio.h - a shard's asynchronous backend I/O (io_uring).
 *
 * One ring per shard thread. Operations are queued on the ring's
 * submission queue as they come and handed to the kernel once per loop
 * pass (a poller, and the poller's arm hook before the shard sleeps);
 * completions are reaped in the same loop: by the poller while the shard
 * runs, through a watch on the ring's fd while it sleeps. There is no
 * thread of the engine's own and no lock: every call is made on the
 * shard's thread, and the done callback runs there.
 *
 * Back-pressure: at most @depth operations are in the kernel at a time,
 * so the completion queue (twice as deep) never overflows. Operations
 * beyond that wait in a FIFO and go in, in order, as completions make
 * room: a slow backend slows the hosts down, it never fails them.
 *
 * Fixed buffers: the region the transport's data buffers live in may be
 * registered with the ring (nvmf_aio_set_region()); reads and writes
 * whose buffer lies inside it become READ_FIXED / WRITE_FIXED, so the
 * kernel need not pin and map the pages for every I/O. Any other buffer
 * (a bounce for in-capsule data) goes the plain way.
 *
 * Requires liburing >= 2.1 (Debian 12: 2.3) and a kernel with
 * IORING_OP_FALLOCATE, IORING_OP_FSYNC and fixed buffers (5.6 or later;
 * Debian 12's 6.1 and its backports' 6.12 have them).
 */
#ifndef WHARF_TARGETS_NVMF_AIO_H
#define WHARF_TARGETS_NVMF_AIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wharf_shard;
struct nvmf_aio;

/* What an operation does. */
enum nvmf_aio_kind {
	NVMF_AIO_READ = 1, /* pread of len bytes at off into buf */
	NVMF_AIO_WRITE,	   /* pwrite; dsync: RWF_DSYNC (FUA) */
	NVMF_AIO_FSYNC,	   /* fdatasync */
	NVMF_AIO_FALLOCATE /* fallocate(mode, off, flen) */
};

/*
 * One backend operation: owned by the caller (embedded in its request)
 * from nvmf_aio_submit() until its done callback; not touched by the
 * caller in between.
 */
struct nvmf_aio_op {
	struct nvmf_aio_op *next; /* the engine's wait FIFO */
	uint8_t kind;		  /* enum nvmf_aio_kind */
	bool dsync;		  /* WRITE: durable before completion */
	int fd;
	int mode; /* FALLOCATE: FALLOC_FL_* */
	void *buf;
	uint32_t len;  /* READ / WRITE: bytes */
	uint64_t off;  /* byte offset */
	uint64_t flen; /* FALLOCATE: bytes */
};

/*
 * Called on the shard thread for every operation, once: @res is the
 * kernel's result (bytes for READ / WRITE, 0 otherwise) or -errno.
 */
typedef void (*nvmf_aio_done_fn)(struct nvmf_aio_op *op, int res, void *arg);

/* Counters: written by the shard thread, read by any. */
struct nvmf_aio_stats {
	uint64_t submitted; /* operations handed to the kernel */
	uint64_t completed;
	uint64_t errors;   /* completed with res < 0 */
	uint64_t waited;   /* operations that had to wait in the FIFO */
	uint64_t fixed;	   /* of submitted: on the registered region */
	uint64_t inflight; /* in the kernel now */
	uint64_t queued;   /* in the FIFO now */
};

/**
 * nvmf_aio_create() - a ring for @shard.
 * @shard: the shard whose loop submits and reaps.
 * @depth: operations in the kernel at most (1..4096; the ring's SQ is
 *	that rounded up to a power of two).
 * @done: the completion callback.
 * @arg: its argument.
 * @out: receives the engine.
 *
 * Return: 0; -EINVAL for bad arguments; -EPERM off @shard's thread (as
 * wharf_shard_poller_add()) or io_uring disabled (kernel.io_uring_disabled);
 * -errno of io_uring_setup(2) (-ENOSYS: no io_uring); -ENOMEM.
 * Context: @shard's thread (app-driven: a thread not polling it);
 * allocates, one syscall.
 */
int nvmf_aio_create(struct wharf_shard *shard, unsigned depth,
		    nvmf_aio_done_fn done, void *arg, struct nvmf_aio **out);

/**
 * nvmf_aio_set_region() - register [@base, @base + @len) as the ring's
 * fixed buffers (in 1 GiB pieces).
 * @a: the engine; no region registered yet.
 * @base: the region's start.
 * @len: its length in bytes (> 0).
 *
 * Optional: without it (or when it fails) every I/O takes the plain path.
 *
 * Return: 0; -EINVAL; -EBUSY if a region is registered already; -errno of
 * io_uring_register(2) (-ENOMEM: RLIMIT_MEMLOCK).
 * Context: the shard's thread; pins the pages (may block).
 */
int nvmf_aio_set_region(struct nvmf_aio *a, void *base, size_t len);

/**
 * nvmf_aio_submit() - queue @op.
 * @a: the engine.
 * @op: the operation; its fields set as enum nvmf_aio_kind says.
 *
 * Never fails: @op completes through the done callback, at the earliest
 * in a later loop pass (never from within this call), with -EINVAL for a
 * malformed operation.
 * Context: the shard's thread; does not block and makes no syscall.
 */
void nvmf_aio_submit(struct nvmf_aio *a, struct nvmf_aio_op *op);

/**
 * nvmf_aio_busy() - operations submitted and not yet completed.
 * Context: the shard's thread.
 */
unsigned nvmf_aio_busy(const struct nvmf_aio *a);

/**
 * nvmf_aio_get_stats() - the counters.
 * Context: any thread (relaxed reads).
 */
void nvmf_aio_get_stats(const struct nvmf_aio *a, struct nvmf_aio_stats *out);

/**
 * nvmf_aio_destroy() - complete what is left, then close the ring.
 * @a: the engine, or NULL.
 * @timeout_ms: how long to wait for operations still in the kernel.
 *
 * Operations still waiting or in flight complete through the done
 * callback (from within this call) before the ring goes; past the
 * deadline, those that never reached the kernel complete with
 * -ECANCELED.
 *
 * Return: 0; -ETIMEDOUT if the kernel still held operations at the
 * deadline (the ring is closed anyway: the kernel cancels them, and
 * their buffers must stay valid until the process exits: leak them).
 * Context: the shard's thread; blocks up to @timeout_ms.
 */
int nvmf_aio_destroy(struct nvmf_aio *a, unsigned timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_AIO_H */
