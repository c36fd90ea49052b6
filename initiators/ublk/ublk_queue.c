/*
 * initiators/ublk/ublk_queue.c - one ublk queue, served on the shard that
 * owns its NVMe-oF I/O queue.
 *
 * Design.  The ublk driver hands requests to a server through io_uring
 * commands on /dev/ublkcN: the server posts one FETCH_REQ per tag; the
 * command completes when the block layer queues a request on that tag
 * (its descriptor in a shared, read-only array); the server serves it and
 * posts COMMIT_AND_FETCH_REQ with the result, which completes the request
 * and waits for the tag's next one.  The driver requires every command of
 * a queue to come from one thread, so the queue's ring lives on one
 * shard: the shard of the NVMe I/O queue that serves it.  Reading a
 * request, its NVMe command, the completion and the commit all run on
 * that thread; no lock and no message per request.
 *
 * The ring is driven like the target's backend ring: SQEs are prepared as
 * commits come and handed to the kernel once per loop pass (a poller, and
 * its arm hook before the shard sleeps); completions are reaped by the
 * poller while the shard runs and through a watch on the ring's fd while
 * it sleeps.  At most one command per tag is in the kernel, so the SQ
 * (depth entries) and the CQ (twice that) cannot overflow.
 *
 * Buffers: one of max_io bytes per tag, registered with the NVMe queue
 * (wharf_nvmf_host_mem_reg()): the driver copies a write's data into it
 * before the FETCH completes and a read's out of it at the commit; the
 * controller RDMA-reads and -writes it directly.  A full NVMe queue
 * (-EAGAIN) puts the request on a FIFO retried after each completion and
 * by a 1 ms timer; nothing is failed for being slow.
 *
 * The end: the driver aborts each tag's fetch (UBLK_IO_RES_ABORT) when the
 * device stops; a queue whose tags are all aborted and with no NVMe
 * command left is done.  Tearing it down closes the ring, which also
 * cancels any fetch still posted (the process leaving without a stop:
 * with user recovery the device then waits for a new server).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <wharf/core.h>
#include <wharf/nvmf_host.h>

#include "initiators/ublk/ublk.h"

#define REAP_BATCH   64u
#define RETRY_NS     1000000ull /* a full NVMe queue is retried after 1 ms */
#define WAIT_STEP_US 1000u

enum tag_state {
	TAG_KERNEL = 1, /* a FETCH or COMMIT_AND_FETCH posted */
	TAG_NVME,	/* its NVMe command outstanding */
	TAG_WAITING,	/* on the FIFO: the NVMe queue was full */
	TAG_ABORTED,	/* the driver aborted the fetch: no more requests */
};

struct ublk_tag {
	struct ublk_queue *q;
	uint16_t tag;
	uint8_t state; /* enum tag_state */
	struct ublk_nvme_cmd cmd;
	struct ublk_tag *next; /* the FIFO */
};

struct ublk_queue {
	struct ublk_dev *d;
	uint16_t id;
	struct wharf_nvmf_host_queue *hq;
	struct wharf_shard *shard;
	struct io_uring ring;
	bool ring_ok;
	struct wharf_poller *poller;
	struct wharf_watch *watch;
	struct wharf_timer *retry;
	const struct ublksrv_io_desc *iods;
	size_t iods_len;
	uint8_t *bufs;
	size_t bufs_len;
	struct wharf_nvmf_host_mem *mem;
	struct ublk_tag *tags;
	struct ublk_tag *wait_head, *wait_tail;
	unsigned prepared; /* SQEs not yet handed to the kernel */
	unsigned aborted;  /* tags in TAG_ABORTED */
	unsigned in_nvme;  /* tags in TAG_NVME */
	bool fetched;	   /* every tag's FETCH handed to the kernel */
	bool torn_down;
	/* Set-up and teardown results, written on the shard. */
	atomic_int step_rc;
	atomic_bool step_done;
	bool step_force;
	atomic_bool done;
};

static void bump(atomic_uint_fast64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static uint8_t *buf_of(struct ublk_queue *q, uint16_t tag)
{
	return q->bufs + (size_t)tag * q->d->max_io;
}

/* Post @tag's next command: a FETCH, or a COMMIT_AND_FETCH with @res. */
static void post(struct ublk_queue *q, struct ublk_tag *t, bool commit,
		 int32_t res)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	struct ublksrv_io_cmd *cmd;

	/* One command per tag at most, and the SQ holds depth: always a
	 * free SQE. */
	if (!sqe) {
		fprintf(stderr, "wharf-ublk: queue %u: no SQE for tag %u\n",
			q->id, t->tag);
		abort();
	}
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = q->d->cdev;
	sqe->cmd_op =
		commit ? UBLK_U_IO_COMMIT_AND_FETCH_REQ : UBLK_U_IO_FETCH_REQ;
	cmd = (struct ublksrv_io_cmd *)sqe->cmd;
	cmd->q_id = q->id;
	cmd->tag = t->tag;
	cmd->result = res;
	cmd->addr = (uint64_t)(uintptr_t)buf_of(q, t->tag);
	io_uring_sqe_set_data64(sqe, t->tag);
	t->state = TAG_KERNEL;
	q->prepared++;
}

/* Hand the prepared SQEs to the kernel: 0, or -errno to retry later. */
static int flush(struct ublk_queue *q)
{
	int rc;

	if (!q->prepared)
		return 0;
	rc = io_uring_submit(&q->ring);
	if (rc < 0)
		return rc;
	q->prepared -= (unsigned)rc < q->prepared ? (unsigned)rc : q->prepared;
	if (!q->prepared)
		q->fetched = true;
	return 0;
}

static void commit(struct ublk_queue *q, struct ublk_tag *t, int32_t res)
{
	if (res < 0)
		bump(&q->d->st.errors, 1);
	post(q, t, true, res);
}

static void nvme_done(int status, uint16_t nvme_status, void *arg);

/* Submit @t's NVMe command: 0, -EAGAIN (queue full: wait), or -errno. */
static int submit(struct ublk_queue *q, struct ublk_tag *t)
{
	struct ublk_dev *d = q->d;
	struct ublk_nvme_cmd *c = &t->cmd;
	uint8_t *buf = buf_of(q, t->tag);
	struct wharf_nvmf_host_range r;

	switch (c->op) {
	case UBLK_NVME_READ:
		return wharf_nvmf_host_read_mem(q->hq, q->mem, d->nsid, c->slba,
						c->nlb, buf, nvme_done, t);
	case UBLK_NVME_WRITE:
		return wharf_nvmf_host_write_mem(q->hq, q->mem, d->nsid,
						 c->slba, c->nlb, buf,
						 nvme_done, t);
	case UBLK_NVME_FLUSH:
		return wharf_nvmf_host_flush(q->hq, d->nsid, nvme_done, t);
	case UBLK_NVME_DEALLOCATE:
		r.slba = c->slba;
		r.nlb = c->nlb;
		return wharf_nvmf_host_dsm_deallocate(q->hq, d->nsid, &r, 1,
						      nvme_done, t);
	case UBLK_NVME_WRITE_ZEROES:
		return wharf_nvmf_host_write_zeroes(q->hq, d->nsid, c->slba,
						    c->nlb, c->deallocate,
						    nvme_done, t);
	}
	return -EINVAL;
}

static void count(struct ublk_stats *st, const struct ublk_nvme_cmd *c)
{
	switch (c->op) {
	case UBLK_NVME_READ:
		bump(&st->reads, 1);
		bump(&st->bytes_read, c->bytes);
		break;
	case UBLK_NVME_WRITE:
		bump(&st->writes, 1);
		bump(&st->bytes_written, c->bytes);
		break;
	case UBLK_NVME_FLUSH:
		bump(&st->flushes, 1);
		break;
	case UBLK_NVME_DEALLOCATE:
		bump(&st->discards, 1);
		break;
	case UBLK_NVME_WRITE_ZEROES:
		bump(&st->wzeroes, 1);
		break;
	}
}

/* @t behind the requests waiting for room in the NVMe queue. */
static void enqueue(struct ublk_queue *q, struct ublk_tag *t)
{
	t->state = TAG_WAITING;
	t->next = NULL;
	if (q->wait_tail)
		q->wait_tail->next = t;
	else
		q->wait_head = t;
	q->wait_tail = t;
	wharf_timer_arm(q->retry, RETRY_NS);
}

/* Start @t's command, or queue it when the NVMe queue is full. */
static void start(struct ublk_queue *q, struct ublk_tag *t)
{
	int rc = submit(q, t);

	if (!rc) {
		t->state = TAG_NVME;
		q->in_nvme++;
		return;
	}
	if (rc == -EAGAIN) {
		bump(&q->d->st.retried, 1);
		enqueue(q, t);
		return;
	}
	commit(q, t, ublk_result_of(&t->cmd, rc));
}

/* The FIFO, in order, until the NVMe queue is full again. */
static void run_waiters(struct ublk_queue *q)
{
	while (q->wait_head) {
		struct ublk_tag *t = q->wait_head;
		int rc = submit(q, t);

		if (rc == -EAGAIN) {
			wharf_timer_arm(q->retry, RETRY_NS);
			return;
		}
		q->wait_head = t->next;
		if (!q->wait_head)
			q->wait_tail = NULL;
		if (!rc) {
			t->state = TAG_NVME;
			q->in_nvme++;
		} else {
			commit(q, t, ublk_result_of(&t->cmd, rc));
		}
	}
}

static void retry_fn(struct wharf_timer *timer, void *arg)
{
	(void)timer;
	run_waiters(arg);
}

static void nvme_done(int status, uint16_t nvme_status, void *arg)
{
	struct ublk_tag *t = arg;
	struct ublk_queue *q = t->q;

	(void)nvme_status;
	q->in_nvme--;
	if (!status)
		count(&q->d->st, &t->cmd);
	commit(q, t, ublk_result_of(&t->cmd, status));
	run_waiters(q);
}

/* A request arrived on @t. */
static void serve(struct ublk_queue *q, struct ublk_tag *t)
{
	const struct ublksrv_io_desc *iod = &q->iods[t->tag];
	int rc = ublk_cmd_of(iod, &q->d->geom, &t->cmd);

	if (rc) {
		bump(&q->d->st.refused, 1);
		commit(q, t, rc);
		return;
	}
	if (q->wait_head) /* keep the order: behind those waiting */
		enqueue(q, t);
	else
		start(q, t);
}

static void check_done(struct ublk_queue *q)
{
	if (q->aborted == q->d->depth && !q->in_nvme &&
	    !atomic_load(&q->done)) {
		uint64_t one = 1;

		atomic_store(&q->done, true);
		if (write(q->d->done_efd, &one, sizeof(one)) < 0) {
			/* the counter is only a wake-up */
		}
	}
}

static int reap(struct ublk_queue *q)
{
	struct io_uring_cqe *cqes[REAP_BATCH];
	int total = 0;
	unsigned n;

	while ((n = io_uring_peek_batch_cqe(&q->ring, cqes, REAP_BATCH))) {
		uint16_t tags[REAP_BATCH];
		int res[REAP_BATCH];

		for (unsigned i = 0; i < n; i++) {
			tags[i] = (uint16_t)io_uring_cqe_get_data64(cqes[i]);
			res[i] = cqes[i]->res;
		}
		io_uring_cq_advance(&q->ring, n);
		for (unsigned i = 0; i < n; i++) {
			struct ublk_tag *t;

			if (tags[i] >= q->d->depth)
				continue;
			t = &q->tags[tags[i]];
			if (res[i] == UBLK_IO_RES_OK) {
				serve(q, t);
				continue;
			}
			/* UBLK_IO_RES_ABORT: the device stops (or a fetch
			 * the driver refused): the tag is finished. */
			if (res[i] != UBLK_IO_RES_ABORT)
				fprintf(stderr,
					"wharf-ublk: queue %u tag %u: %s\n",
					q->id, t->tag, strerror(-res[i]));
			t->state = TAG_ABORTED;
			q->aborted++;
		}
		total += (int)n;
	}
	check_done(q);
	return total;
}

static int poll_fn(struct wharf_shard *shard, void *arg)
{
	struct ublk_queue *q = arg;
	int n;

	(void)shard;
	n = reap(q);
	flush(q);
	return n;
}

static int arm_fn(struct wharf_shard *shard, void *arg)
{
	struct ublk_queue *q = arg;

	(void)shard;
	if (flush(q) || q->prepared)
		return 1;
	return io_uring_cq_ready(&q->ring) ? 1 : 0;
}

static void watch_fn(struct wharf_watch *w, int fd, uint32_t events, void *arg)
{
	(void)w;
	(void)fd;
	(void)events;
	poll_fn(NULL, arg);
}

static void teardown(struct ublk_queue *q)
{
	if (q->torn_down)
		return;
	q->torn_down = true;
	if (q->retry)
		wharf_timer_destroy(q->retry);
	if (q->watch)
		wharf_watch_remove(q->watch);
	if (q->poller)
		wharf_poller_remove(q->poller);
	q->retry = NULL;
	q->watch = NULL;
	q->poller = NULL;
	if (q->ring_ok)
		io_uring_queue_exit(&q->ring);
	q->ring_ok = false;
}

static void step_end(struct ublk_queue *q, int rc)
{
	atomic_store(&q->step_rc, rc);
	atomic_store(&q->step_done, true);
}

/* On the shard: the ring, its hooks, a FETCH for every tag. */
static void setup_msg(struct wharf_shard *shard, void *arg)
{
	struct ublk_queue *q = arg;
	struct io_uring_params p;
	int rc;

	(void)shard;
	memset(&p, 0, sizeof(p));
	rc = io_uring_queue_init_params(q->d->depth, &q->ring, &p);
	if (rc) {
		step_end(q, rc);
		return;
	}
	q->ring_ok = true;
	rc = wharf_timer_create(q->shard, retry_fn, q, &q->retry);
	if (!rc)
		rc = wharf_shard_poller_add(q->shard, poll_fn, arm_fn, q,
					    &q->poller);
	if (!rc)
		rc = wharf_shard_watch(q->shard, q->ring.ring_fd,
				       WHARF_WATCH_IN, watch_fn, q, &q->watch);
	if (rc) {
		teardown(q);
		step_end(q, rc);
		return;
	}
	for (uint16_t i = 0; i < q->d->depth; i++)
		post(q, &q->tags[i], false, -1);
	rc = flush(q);
	/* No request can come before START_DEV (or END_USER_RECOVERY): a
	 * completion now is a FETCH the driver refused, and START_DEV
	 * would wait for the queue for ever. */
	if (!rc && io_uring_cq_ready(&q->ring)) {
		struct io_uring_cqe *cqe;

		rc = io_uring_peek_cqe(&q->ring, &cqe) ? -EPROTO
		     : cqe->res < 0		       ? cqe->res
						       : -EPROTO;
	}
	if (rc) {
		teardown(q);
		step_end(q, rc);
		return;
	}
	step_end(q, 0);
}

/* On the shard: tear down when done (or forced with no NVMe command). */
static void stop_msg(struct wharf_shard *shard, void *arg)
{
	struct ublk_queue *q = arg;

	(void)shard;
	if (q->in_nvme || q->wait_head ||
	    (!q->step_force && !atomic_load(&q->done))) {
		step_end(q, -EBUSY);
		return;
	}
	teardown(q);
	step_end(q, 0);
}

/* Runs @fn on the queue's shard and waits (at most @timeout_ms). */
static int on_shard(struct ublk_queue *q, wharf_msg_fn fn, unsigned timeout_ms)
{
	uint64_t end = wharf_now_ms() + timeout_ms;
	int rc;

	atomic_store(&q->step_done, false);
	while ((rc = wharf_shard_send(q->shard, fn, q)) == -EAGAIN &&
	       wharf_now_ms() < end)
		usleep(WAIT_STEP_US); /* the shard's message queue is full */
	if (rc) {
		atomic_store(&q->step_done, true); /* nothing was sent */
		return rc;
	}
	while (!atomic_load(&q->step_done)) {
		if (wharf_now_ms() > end)
			return -ETIMEDOUT;
		usleep(WAIT_STEP_US);
	}
	return atomic_load(&q->step_rc);
}

int ublk_queue_start(struct ublk_dev *d, uint16_t qid,
		     struct wharf_nvmf_host_queue *hq, struct ublk_queue **out)
{
	size_t desc_room =
		(size_t)UBLK_MAX_QUEUE_DEPTH * sizeof(struct ublksrv_io_desc);
	long page = sysconf(_SC_PAGESIZE);
	struct ublk_queue *q;
	void *m;
	int rc;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	atomic_store(&q->step_done, true); /* no step sent yet */
	q->d = d;
	q->id = qid;
	q->hq = hq;
	q->shard = wharf_nvmf_host_queue_shard(hq);
	desc_room =
		(desc_room + (size_t)page - 1) / (size_t)page * (size_t)page;
	q->iods_len = ((size_t)d->depth * sizeof(struct ublksrv_io_desc) +
		       (size_t)page - 1) /
		      (size_t)page * (size_t)page;
	m = mmap(NULL, q->iods_len, PROT_READ, MAP_SHARED | MAP_POPULATE,
		 d->cdev, (off_t)(UBLKSRV_CMD_BUF_OFFSET + qid * desc_room));
	if (m == MAP_FAILED) {
		rc = -errno;
		free(q);
		return rc;
	}
	q->iods = m;
	q->bufs_len = (size_t)d->depth * d->max_io;
	rc = posix_memalign((void **)&q->bufs, (size_t)page, q->bufs_len);
	if (rc) {
		q->bufs = NULL;
		rc = -rc;
		goto fail;
	}
	q->tags = calloc(d->depth, sizeof(*q->tags));
	if (!q->tags) {
		rc = -ENOMEM;
		goto fail;
	}
	for (uint16_t i = 0; i < d->depth; i++) {
		q->tags[i].q = q;
		q->tags[i].tag = i;
	}
	rc = wharf_nvmf_host_mem_reg(hq, q->bufs, q->bufs_len, &q->mem);
	if (rc)
		goto fail;
	rc = on_shard(q, setup_msg, 10000);
	if (rc)
		goto fail;
	*out = q;
	return 0;
fail:
	ublk_queue_free(q, false);
	return rc;
}

bool ublk_queue_done(const struct ublk_queue *q)
{
	return atomic_load(&q->done);
}

int ublk_queue_stop(struct ublk_queue *q, bool force, unsigned timeout_ms)
{
	if (!atomic_load(&q->step_done))
		return -ETIMEDOUT; /* an earlier step never ran */
	if (!q->ring_ok)
		return 0;
	q->step_force = force;
	return on_shard(q, stop_msg, timeout_ms);
}

bool ublk_queue_free(struct ublk_queue *q, bool host_gone)
{
	if (!q)
		return true;
	/* A step the shard has not run yet (it timed out) still holds the
	 * queue, as does a live ring (the driver's commands point into
	 * the buffers, the poller at the queue): left, not freed. */
	if (!atomic_load(&q->step_done) || q->ring_ok) {
		fprintf(stderr,
			"wharf-ublk: queue %u still in use: left allocated\n",
			q->id);
		return false;
	}
	/* No NVMe command refers to the buffers any more (teardown needs
	 * none outstanding); after the disconnect the library freed the
	 * registration itself. */
	if (q->mem && !host_gone)
		wharf_nvmf_host_mem_dereg(q->mem);
	if (q->iods)
		munmap((void *)q->iods, q->iods_len);
	free(q->bufs);
	free(q->tags);
	free(q);
	return true;
}

void ublk_stats_line(struct ublk_stats *st, char *buf, size_t len)
{
	snprintf(buf, len,
		 "reads=%llu writes=%llu flushes=%llu discards=%llu "
		 "write_zeroes=%llu bytes_read=%llu bytes_written=%llu "
		 "errors=%llu refused=%llu retried=%llu",
		 (unsigned long long)atomic_load(&st->reads),
		 (unsigned long long)atomic_load(&st->writes),
		 (unsigned long long)atomic_load(&st->flushes),
		 (unsigned long long)atomic_load(&st->discards),
		 (unsigned long long)atomic_load(&st->wzeroes),
		 (unsigned long long)atomic_load(&st->bytes_read),
		 (unsigned long long)atomic_load(&st->bytes_written),
		 (unsigned long long)atomic_load(&st->errors),
		 (unsigned long long)atomic_load(&st->refused),
		 (unsigned long long)atomic_load(&st->retried));
}
