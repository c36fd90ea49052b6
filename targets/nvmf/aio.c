/*
 * targets/nvmf/aio.c - the shard's io_uring (see aio.h).
 *
 * Flow of an operation: nvmf_aio_submit() puts it on the FIFO; start()
 * moves FIFO heads onto the submission queue while fewer than depth are
 * in the kernel; the poller (every loop pass) and the arm hook (before
 * the shard sleeps) call io_uring_submit() once for all of them; reap()
 * takes completions, calls back, and starts waiting operations in the
 * room they left. A malformed operation never reaches the ring: it waits
 * on the reject list and completes with -EINVAL in the next pass.
 */
#include "targets/nvmf/aio.h"

#include <errno.h>
#include <liburing.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <wharf/core.h>

#define REGION_PIECE  (1ull << 30) /* the kernel's limit per fixed buffer */
#define REGION_PIECES 64
#define REAP_BATCH    64

struct nvmf_aio {
	struct io_uring ring;
	struct wharf_shard *shard;
	struct wharf_poller *poller;
	struct wharf_watch *watch;
	nvmf_aio_done_fn done;
	void *arg;
	unsigned depth;
	unsigned inflight; /* in the kernel (or prepared on the SQ) */
	unsigned prepared; /* on the SQ, not yet handed over */
	struct nvmf_aio_op *head, *tail; /* waiting: FIFO */
	unsigned queued;
	struct nvmf_aio_op *rejected; /* malformed: fail next pass */
	uint8_t *region;
	size_t region_len;
	/* Counters (struct nvmf_aio_stats); single writer. */
	atomic_uint_fast64_t n_submitted, n_completed, n_errors, n_waited,
		n_fixed;
	atomic_uint n_inflight, n_queued;
};

static void bump(atomic_uint_fast64_t *c, uint64_t n)
{
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static void publish_levels(struct nvmf_aio *a)
{
	atomic_store_explicit(&a->n_inflight, a->inflight,
			      memory_order_relaxed);
	atomic_store_explicit(&a->n_queued, a->queued, memory_order_relaxed);
}

static bool op_ok(const struct nvmf_aio_op *op)
{
	if (op->fd < 0)
		return false;
	switch (op->kind) {
	case NVMF_AIO_READ:
	case NVMF_AIO_WRITE:
		return op->buf && op->len && op->off <= INT64_MAX;
	case NVMF_AIO_FSYNC:
		return true;
	case NVMF_AIO_FALLOCATE:
		return op->flen && op->off <= INT64_MAX &&
		       op->flen <= INT64_MAX - op->off;
	default:
		return false;
	}
}

/* The fixed buffer holding [buf, buf + len), or -1. */
static int fixed_index(const struct nvmf_aio *a, const void *buf, uint32_t len)
{
	const uint8_t *p = buf;
	size_t at, piece;

	if (!a->region || p < a->region || p >= a->region + a->region_len ||
	    len > a->region_len - (size_t)(p - a->region))
		return -1;
	at = (size_t)(p - a->region);
	piece = at / REGION_PIECE;
	if ((at + len - 1) / REGION_PIECE != piece) /* straddles two */
		return -1;
	return (int)piece;
}

/* Put @op on the SQ (room is known to exist). */
static void prep(struct nvmf_aio *a, struct nvmf_aio_op *op)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&a->ring);
	int fi;

	switch (op->kind) {
	case NVMF_AIO_READ:
		fi = fixed_index(a, op->buf, op->len);
		if (fi >= 0)
			io_uring_prep_read_fixed(sqe, op->fd, op->buf, op->len,
						 op->off, fi);
		else
			io_uring_prep_read(sqe, op->fd, op->buf, op->len,
					   op->off);
		break;
	case NVMF_AIO_WRITE:
		fi = fixed_index(a, op->buf, op->len);
		if (fi >= 0)
			io_uring_prep_write_fixed(sqe, op->fd, op->buf, op->len,
						  op->off, fi);
		else
			io_uring_prep_write(sqe, op->fd, op->buf, op->len,
					    op->off);
		if (op->dsync)
			sqe->rw_flags = RWF_DSYNC;
		break;
	case NVMF_AIO_FSYNC:
		fi = -1;
		io_uring_prep_fsync(sqe, op->fd, IORING_FSYNC_DATASYNC);
		break;
	default: /* NVMF_AIO_FALLOCATE */
		fi = -1;
		io_uring_prep_fallocate(sqe, op->fd, op->mode, (off_t)op->off,
					(off_t)op->flen);
		break;
	}
	if (fi >= 0)
		bump(&a->n_fixed, 1);
	io_uring_sqe_set_data(sqe, op);
	a->inflight++;
	a->prepared++;
}

/* Move waiting operations onto the SQ while there is room. */
static void start(struct nvmf_aio *a)
{
	while (a->head && a->inflight < a->depth) {
		struct nvmf_aio_op *op = a->head;

		a->head = op->next;
		if (!a->head)
			a->tail = NULL;
		op->next = NULL;
		a->queued--;
		prep(a, op);
	}
}

/* Hand the prepared SQEs to the kernel: 0, or -errno to retry later. */
static int flush(struct nvmf_aio *a)
{
	int rc;

	if (!a->prepared)
		return 0;
	rc = io_uring_submit(&a->ring);
	if (rc < 0)
		return rc; /* -EBUSY / -EAGAIN / -EINTR: the SQEs stay */
	bump(&a->n_submitted, (uint64_t)rc);
	a->prepared -= (unsigned)rc < a->prepared ? (unsigned)rc : a->prepared;
	return 0;
}

/* Fail the malformed operations queued since the last pass. */
static int reject_all(struct nvmf_aio *a)
{
	int n = 0;

	while (a->rejected) {
		struct nvmf_aio_op *op = a->rejected;

		a->rejected = op->next;
		op->next = NULL;
		bump(&a->n_completed, 1);
		bump(&a->n_errors, 1);
		a->done(op, -EINVAL, a->arg);
		n++;
	}
	return n;
}

/* Take completions and call back; returns how many. */
static int reap(struct nvmf_aio *a)
{
	struct io_uring_cqe *cqes[REAP_BATCH];
	int total = 0;
	unsigned n;

	while ((n = io_uring_peek_batch_cqe(&a->ring, cqes, REAP_BATCH))) {
		struct nvmf_aio_op *ops[REAP_BATCH];
		int res[REAP_BATCH];

		/* Copy out, then release the CQ before calling back: a
		 * callback submits more, and the room must be visible. */
		unsigned k = 0;

		for (unsigned i = 0; i < n; i++) {
			/* liburing's own timeout of io_uring_wait_cqe_timeout()
			 * on kernels without IORING_FEAT_EXT_ARG: not ours */
			if (cqes[i]->user_data == LIBURING_UDATA_TIMEOUT)
				continue;
			ops[k] = io_uring_cqe_get_data(cqes[i]);
			res[k++] = cqes[i]->res;
		}
		io_uring_cq_advance(&a->ring, n);
		a->inflight -= k;
		bump(&a->n_completed, k);
		for (unsigned i = 0; i < k; i++) {
			if (res[i] < 0)
				bump(&a->n_errors, 1);
			a->done(ops[i], res[i], a->arg);
		}
		total += (int)k;
		start(a);
	}
	return total;
}

static int poll_fn(struct wharf_shard *shard, void *arg)
{
	struct nvmf_aio *a = arg;
	int n;

	(void)shard;
	n = reject_all(a);
	n += reap(a);
	start(a);
	flush(a);
	publish_levels(a);
	return n;
}

/* Before the shard sleeps: hand everything over; stay awake if work is
 * already back. */
static int arm_fn(struct wharf_shard *shard, void *arg)
{
	struct nvmf_aio *a = arg;

	(void)shard;
	start(a);
	/* Refused for now, or only partly taken (an SQE the kernel could not
	 * start stops the batch): stay awake and try again. */
	if (flush(a) || a->prepared)
		return 1;
	publish_levels(a);
	return a->rejected || io_uring_cq_ready(&a->ring) ? 1 : 0;
}

static void watch_fn(struct wharf_watch *w, int fd, uint32_t events, void *arg)
{
	(void)w;
	(void)fd;
	(void)events;
	poll_fn(NULL, arg);
}

int nvmf_aio_create(struct wharf_shard *shard, unsigned depth,
		    nvmf_aio_done_fn done, void *arg, struct nvmf_aio **out)
{
	struct io_uring_params p;
	struct nvmf_aio *a;
	int rc;

	if (!shard || !done || !out || !depth || depth > 4096)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	memset(&p, 0, sizeof(p));
	/* The CQ twice the SQ (the default), and at most depth in flight:
	 * no completion can overflow. */
	rc = io_uring_queue_init_params(depth, &a->ring, &p);
	if (rc) {
		free(a);
		return rc;
	}
	a->depth = p.sq_entries < depth ? p.sq_entries : depth;
	a->shard = shard;
	a->done = done;
	a->arg = arg;
	rc = wharf_shard_poller_add(shard, poll_fn, arm_fn, a, &a->poller);
	if (!rc)
		rc = wharf_shard_watch(shard, a->ring.ring_fd, WHARF_WATCH_IN,
				       watch_fn, a, &a->watch);
	if (rc) {
		if (a->poller)
			wharf_poller_remove(a->poller);
		io_uring_queue_exit(&a->ring);
		free(a);
		return rc;
	}
	*out = a;
	return 0;
}

int nvmf_aio_set_region(struct nvmf_aio *a, void *base, size_t len)
{
	struct iovec iov[REGION_PIECES];
	unsigned n = 0;
	int rc;

	if (!a || !base || !len || len > REGION_PIECES * REGION_PIECE)
		return -EINVAL;
	if (a->region)
		return -EBUSY;
	for (size_t at = 0; at < len; at += REGION_PIECE, n++) {
		iov[n].iov_base = (uint8_t *)base + at;
		iov[n].iov_len =
			len - at < REGION_PIECE ? len - at : REGION_PIECE;
	}
	rc = io_uring_register_buffers(&a->ring, iov, n);
	if (rc)
		return rc;
	a->region = base;
	a->region_len = len;
	return 0;
}

void nvmf_aio_submit(struct nvmf_aio *a, struct nvmf_aio_op *op)
{
	op->next = NULL;
	if (!op_ok(op)) {
		op->next = a->rejected;
		a->rejected = op;
		return;
	}
	if (a->tail)
		a->tail->next = op;
	else
		a->head = op;
	a->tail = op;
	a->queued++;
	if (a->inflight >= a->depth)
		bump(&a->n_waited, 1);
	start(a);
}

unsigned nvmf_aio_busy(const struct nvmf_aio *a)
{
	const struct nvmf_aio_op *op;
	unsigned n = a->inflight + a->queued;

	for (op = a->rejected; op; op = op->next)
		n++;
	return n;
}

void nvmf_aio_get_stats(const struct nvmf_aio *a, struct nvmf_aio_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!a)
		return;
	out->submitted =
		atomic_load_explicit(&a->n_submitted, memory_order_relaxed);
	out->completed =
		atomic_load_explicit(&a->n_completed, memory_order_relaxed);
	out->errors = atomic_load_explicit(&a->n_errors, memory_order_relaxed);
	out->waited = atomic_load_explicit(&a->n_waited, memory_order_relaxed);
	out->fixed = atomic_load_explicit(&a->n_fixed, memory_order_relaxed);
	out->inflight =
		atomic_load_explicit(&a->n_inflight, memory_order_relaxed);
	out->queued = atomic_load_explicit(&a->n_queued, memory_order_relaxed);
}

int nvmf_aio_destroy(struct nvmf_aio *a, unsigned timeout_ms)
{
	uint64_t deadline;
	int rc = 0;

	if (!a)
		return 0;
	deadline = wharf_now_ms() + timeout_ms;
	reject_all(a);
	while (a->inflight || a->queued || a->rejected) {
		struct __kernel_timespec ts = {.tv_nsec = 10 * 1000 * 1000};
		struct io_uring_cqe *cqe;

		start(a);
		flush(a);
		if (wharf_now_ms() >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		io_uring_wait_cqe_timeout(&a->ring, &cqe, &ts);
		reap(a);
		reject_all(a);
	}
	/* Past the deadline: what never reached the kernel is cancelled. */
	while (a->head) {
		struct nvmf_aio_op *op = a->head;

		a->head = op->next;
		op->next = NULL;
		a->queued--;
		bump(&a->n_completed, 1);
		bump(&a->n_errors, 1);
		a->done(op, -ECANCELED, a->arg);
	}
	a->tail = NULL;
	reject_all(a);
	wharf_watch_remove(a->watch);
	wharf_poller_remove(a->poller);
	io_uring_queue_exit(&a->ring);
	free(a);
	return rc;
}
