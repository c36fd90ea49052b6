/*
 * initiators/nbd/nbd_conn.c - one NBD connection in the transmission
 * phase, served on the shard that owns its NVMe-oF I/O queue.
 *
 * Design.  Each NBD connection is bound to one I/O queue and lives
 * entirely on that queue's owner shard: the socket (non-blocking) is a
 * wharf_shard_watch() of the shard, so reading a request, submitting its
 * NVMe commands, their completions and writing the reply all run on one
 * thread, with no lock and no hand-off per request.  The alternative, a
 * reader thread per socket handing each request to the shard with
 * wharf_shard_send() and the replies back to a writer thread, costs two
 * thread wake-ups per request on a 2-core machine and buys nothing: the
 * kernel NBD driver already spreads its requests over the connections
 * (one per blk-mq hardware queue), so N connections on N queues use N
 * shards.  Only the start and the stop cross threads (messages).
 *
 * Requests.  A header (28 bytes), then for WRITE its payload into a
 * buffer of the request's size, are read as the socket has them.  Each
 * request is checked (nbd_req_check(), pure) and either answered with an
 * error at once or mapped to NVMe commands: READ / WRITE in pieces of at
 * most max_io_size bytes, FLUSH to Flush, TRIM to Dataset Management
 * Deallocate (up to 256 ranges per command), WRITE_ZEROES to Write Zeroes
 * of at most 65536 blocks each (with DEAC unless NBD_CMD_FLAG_NO_HOLE).
 * A piece the queue has no slot for (-EAGAIN) waits on the connection's
 * list and is retried after the next completion.  The reply goes out
 * when the last piece completes, in completion order (NBD matches
 * replies by handle).  More than MAX_INFLIGHT requests in flight, or
 * MAX_HELD bytes of their buffers, stop the reading until one finishes.
 *
 * Replies are queued and written with writev(); a short write leaves the
 * rest queued and watches for POLLOUT.  EOF, a socket error, a bad magic
 * or an oversize WRITE close the connection: it stops reading, drops the
 * replies not yet sent, lets its commands complete (their buffers are
 * the library's until then) and closes the socket.  NBD_CMD_DISC and
 * nbd_conn_stop() drain instead: the replies still go out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <fcntl.h>

#include <wharf/core.h>
#include <wharf/nvmf_host.h>

#include "initiators/nbd/nbd.h"

#define MAX_INFLIGHT 256u
#define MAX_HELD     (64ull << 20) /* payload bytes buffered per connection */
#define READ_BUDGET  64u	   /* requests per readiness callback */
#define RANGE_BLOCKS 0xFFFFFFFFull /* blocks per DSM range */
#define RETRY_NS     1000000ull	   /* a full queue is retried after 1 ms */

struct nreq {
	struct nbd_conn *c;
	struct nbd_req r;
	uint8_t *data;	   /* READ / WRITE payload */
	uint64_t next;	   /* bytes of the request submitted so far */
	uint32_t left;	   /* NVMe commands outstanding */
	uint32_t err;	   /* NBD error of the reply */
	bool waiting;	   /* on c->wait */
	struct nreq *link; /* c->wait or c->tx */
	uint8_t hdr[NBDP_REPLY_LEN];
	size_t tx_off; /* bytes of hdr + data written */
};

struct nbd_conn {
	struct nbd_srv *s;
	struct wharf_nvmf_host_queue *q;
	struct wharf_shard *shard;
	struct wharf_watch *watch;
	struct wharf_timer *retry; /* run_waiters() */
	int fd;
	uint32_t events;
	/* Reading: a header, then a WRITE's payload (or one to discard). */
	uint8_t hdr[NBDP_REQ_LEN];
	size_t hdr_got;
	struct nreq *cur;
	uint64_t pay_got;
	bool discard;	   /* cur's payload is read into nothing */
	unsigned inflight; /* requests read and not yet replied or dropped */
	uint64_t held;	   /* bytes of their data buffers */
	struct nreq *wait_head, *wait_tail;
	struct nreq *tx_head, *tx_tail;
	bool draining; /* no more reading; close once all is sent */
	bool dead;     /* no more reading or writing */
	atomic_bool gone;
};

static void add(atomic_uint_fast64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static void pump(struct nreq *q);
static void update_events(struct nbd_conn *c);

static enum nbd_kind kind(uint16_t type)
{
	switch (type) {
	case NBDP_CMD_READ:
		return NBDK_READ;
	case NBDP_CMD_WRITE:
		return NBDK_WRITE;
	case NBDP_CMD_FLUSH:
		return NBDK_FLUSH;
	case NBDP_CMD_TRIM:
		return NBDK_TRIM;
	case NBDP_CMD_WRITE_ZEROES:
		return NBDK_WRITE_ZEROES;
	case NBDP_CMD_DISC:
		return NBDK_DISC;
	default:
		return NBDK_OTHER;
	}
}

/* ------------------------------------------------------------------ */
/* The end of a connection                                             */
/* ------------------------------------------------------------------ */

static void req_free(struct nreq *q)
{
	if (q->data)
		q->c->held -= q->r.len;
	free(q->data);
	free(q);
}

/* Whether to read more requests now: not past MAX_INFLIGHT requests or
 * MAX_HELD bytes of buffers (a client cannot make us allocate more). */
static bool may_read(const struct nbd_conn *c)
{
	return !c->dead && !c->draining && c->inflight < MAX_INFLIGHT &&
	       c->held < MAX_HELD;
}

/* Closes the socket and reports the connection gone once nothing is in
 * flight and (when draining) every reply is out. */
static void maybe_finish(struct nbd_conn *c)
{
	if (atomic_load_explicit(&c->gone, memory_order_relaxed) ||
	    !(c->dead || c->draining) || c->inflight)
		return;
	if (!c->dead && c->tx_head)
		return;
	if (c->watch) {
		wharf_watch_remove(c->watch);
		c->watch = NULL;
	}
	while (c->tx_head) {
		struct nreq *q = c->tx_head;

		c->tx_head = q->link;
		req_free(q);
	}
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
	wharf_timer_destroy(c->retry);
	c->retry = NULL;
	atomic_store_explicit(&c->gone, true, memory_order_release);
	atomic_fetch_sub(&c->s->live, 1);
}

static void kill_conn(struct nbd_conn *c)
{
	if (c->dead)
		return;
	c->dead = true;
	if (c->cur) {
		req_free(c->cur);
		c->cur = NULL;
		c->inflight--;
	}
	if (c->fd >= 0)
		shutdown(c->fd, SHUT_RDWR);
	/* Level-triggered HUP would fire until the close. */
	if (c->watch) {
		wharf_watch_remove(c->watch);
		c->watch = NULL;
	}
	maybe_finish(c);
}

static void drain(struct nbd_conn *c)
{
	/* No more reading: a WRITE whose payload is still coming is
	 * dropped unanswered (the connection is going away). */
	if (c->cur) {
		req_free(c->cur);
		c->cur = NULL;
		c->inflight--;
	}
	c->draining = true;
	update_events(c);
	maybe_finish(c);
}

/* ------------------------------------------------------------------ */
/* Replies                                                             */
/* ------------------------------------------------------------------ */

static size_t reply_len(const struct nreq *q)
{
	return NBDP_REPLY_LEN +
	       (q->r.type == NBDP_CMD_READ && !q->err ? q->r.len : 0);
}

static void flush_tx(struct nbd_conn *c)
{
	while (c->tx_head && !c->dead) {
		struct nreq *q = c->tx_head;
		struct iovec iov[2];
		size_t total = reply_len(q), off = q->tx_off;
		int n = 0;
		ssize_t w;

		if (off < NBDP_REPLY_LEN) {
			iov[n].iov_base = q->hdr + off;
			iov[n++].iov_len = NBDP_REPLY_LEN - off;
			off = NBDP_REPLY_LEN;
		}
		if (total > off) {
			iov[n].iov_base = q->data + (off - NBDP_REPLY_LEN);
			iov[n++].iov_len = total - off;
		}
		w = writev(c->fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				kill_conn(c);
			break;
		}
		q->tx_off += (size_t)w;
		if (q->tx_off < total)
			break;
		c->tx_head = q->link;
		if (!c->tx_head)
			c->tx_tail = NULL;
		req_free(q);
	}
	update_events(c);
	maybe_finish(c);
}

/* @q is answered: queue its reply (or drop it on a dead connection). */
static void finish(struct nreq *q)
{
	struct nbd_conn *c = q->c;

	c->inflight--;
	if (q->err)
		add(&c->s->st.errors, 1);
	if (c->dead) {
		req_free(q);
		maybe_finish(c);
		return;
	}
	nbd_reply(q->hdr, q->err, q->r.handle);
	q->link = NULL;
	if (c->tx_tail)
		c->tx_tail->link = q;
	else
		c->tx_head = q;
	c->tx_tail = q;
	flush_tx(c);
}

/* ------------------------------------------------------------------ */
/* NVMe commands                                                       */
/* ------------------------------------------------------------------ */

/* Retries the requests that found the queue full. */
static void run_waiters(struct nbd_conn *c)
{
	struct nreq *q = c->wait_head;

	c->wait_head = c->wait_tail = NULL;
	while (q) {
		struct nreq *next = q->link;

		q->waiting = false;
		pump(q);
		q = next;
	}
}

static void on_retry(struct wharf_timer *t, void *arg)
{
	(void)t;
	run_waiters(arg);
}

static void piece_done(int status, uint16_t nvme_status, void *arg)
{
	struct nreq *q = arg;
	struct nbd_conn *c = q->c;

	(void)nvme_status;
	q->left--;
	if (status) {
		add(&c->s->st.nvme_errors, 1);
		if (!q->err)
			q->err = NBDP_EIO;
	}
	pump(q);
	run_waiters(c);
}

/* Submits the next piece of @q: 0, -EAGAIN (no slot), -errno. */
static int submit_piece(struct nreq *q)
{
	struct nbd_srv *s = q->c->s;
	uint64_t end = q->r.type == NBDP_CMD_FLUSH ? 1 : q->r.len;
	uint64_t lba = (q->r.offset + q->next) / s->block;
	uint64_t rest = end - q->next, n;
	int rc;

	switch (q->r.type) {
	case NBDP_CMD_READ:
	case NBDP_CMD_WRITE:
		n = rest < s->max_io ? rest : s->max_io;
		if (q->r.type == NBDP_CMD_READ)
			rc = wharf_nvmf_host_read(
				q->c->q, s->nsid, lba, (uint32_t)(n / s->block),
				q->data + q->next, piece_done, q);
		else
			rc = wharf_nvmf_host_write(
				q->c->q, s->nsid, lba, (uint32_t)(n / s->block),
				q->data + q->next, piece_done, q);
		break;
	case NBDP_CMD_FLUSH:
		n = 1;
		rc = wharf_nvmf_host_flush(q->c->q, s->nsid, piece_done, q);
		break;
	case NBDP_CMD_WRITE_ZEROES: {
		uint64_t blocks = rest / s->block;

		if (blocks > WHARF_NVMF_HOST_WZ_MAX_BLOCKS)
			blocks = WHARF_NVMF_HOST_WZ_MAX_BLOCKS;
		n = blocks * s->block;
		rc = wharf_nvmf_host_write_zeroes(
			q->c->q, s->nsid, lba, (uint32_t)blocks,
			!(q->r.flags & NBDP_CMD_FLAG_NO_HOLE), piece_done, q);
		break;
	}
	default: { /* TRIM */
		struct wharf_nvmf_host_range r[WHARF_NVMF_HOST_DSM_MAX_RANGES];
		uint64_t blocks = rest / s->block;
		unsigned nr = 0;

		n = 0;
		while (blocks && nr < WHARF_NVMF_HOST_DSM_MAX_RANGES) {
			uint64_t b =
				blocks < RANGE_BLOCKS ? blocks : RANGE_BLOCKS;

			r[nr].slba = lba;
			r[nr++].nlb = (uint32_t)b;
			lba += b;
			blocks -= b;
			n += b * s->block;
		}
		rc = wharf_nvmf_host_dsm_deallocate(q->c->q, s->nsid, r, nr,
						    piece_done, q);
		break;
	}
	}
	if (rc)
		return rc;
	q->next += n;
	q->left++;
	add(&s->st.nvme_cmds, 1);
	return 0;
}

/* Submits what @q still has to submit, finishes it when all is done. */
static void pump(struct nreq *q)
{
	struct nbd_conn *c = q->c;
	uint64_t end = q->r.type == NBDP_CMD_FLUSH ? 1 : q->r.len;

	if (c->dead && !q->err)
		q->err = NBDP_EIO; /* nobody to answer: stop submitting */
	while (q->next < end && !q->err && !q->waiting) {
		int rc = submit_piece(q);

		if (rc == -EAGAIN) {
			q->waiting = true;
			q->link = NULL;
			if (c->wait_tail)
				c->wait_tail->link = q;
			else
				c->wait_head = q;
			c->wait_tail = q;
			/* The slots may be another connection's: retry on a
			 * timer too, not only after our completions. */
			if (c->retry && !wharf_timer_armed(c->retry))
				wharf_timer_arm(c->retry, RETRY_NS);
		} else if (rc) {
			q->err = nbd_errno(rc);
		}
	}
	if (q->left == 0 && !q->waiting && (q->next >= end || q->err))
		finish(q);
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

/* A request whose header (and payload) has been read. */
static void serve(struct nbd_conn *c, struct nreq *q)
{
	struct nbd_srv *s = c->s;

	switch (q->r.type) {
	case NBDP_CMD_READ:
		add(&s->st.bytes_read, q->r.len);
		break;
	case NBDP_CMD_WRITE:
		add(&s->st.bytes_written, q->r.len);
		break;
	case NBDP_CMD_TRIM:
		add(&s->st.bytes_trimmed, q->r.len);
		break;
	case NBDP_CMD_WRITE_ZEROES:
		add(&s->st.bytes_zeroed, q->r.len);
		break;
	}
	if (q->err || s->null_io) {
		finish(q);
		return;
	}
	pump(q);
}

/* A complete header in c->hdr: start the request. */
static void got_header(struct nbd_conn *c)
{
	struct nbd_srv *s = c->s;
	struct nreq *q;
	bool fatal;

	q = calloc(1, sizeof(*q));
	if (!q || nbd_req_parse(c->hdr, &q->r)) {
		free(q); /* wrong magic: the stream is lost */
		kill_conn(c);
		return;
	}
	q->c = c;
	add(&s->st.reqs[kind(q->r.type)], 1);
	if (q->r.type == NBDP_CMD_DISC) {
		free(q);
		drain(c);
		return;
	}
	c->inflight++;
	q->err = nbd_req_check(&s->exp, &q->r, &fatal);
	if (fatal) {
		/* The payload cannot be skipped: answer, then close. */
		finish(q);
		drain(c);
		return;
	}
	if (!q->err && q->r.type == NBDP_CMD_READ) {
		q->data = s->null_io ? calloc(1, q->r.len) : malloc(q->r.len);
		if (!q->data)
			q->err = NBDP_ENOMEM;
	} else if (!q->err && q->r.type == NBDP_CMD_WRITE && !s->null_io) {
		q->data = malloc(q->r.len);
		if (!q->data)
			q->err = NBDP_ENOMEM;
	}
	if (q->data)
		c->held += q->r.len;
	if (q->r.type == NBDP_CMD_WRITE && q->r.len) {
		/* Its payload next, into the buffer or (refused, or
		 * --null-io) into nothing. */
		c->cur = q;
		c->pay_got = 0;
		c->discard = !q->data;
		return;
	}
	serve(c, q);
}

/* Reads what the socket has; false when the connection ended. */
static bool read_some(struct nbd_conn *c)
{
	static _Thread_local uint8_t sink[65536];
	ssize_t n;

	if (!c->cur) {
		n = read(c->fd, c->hdr + c->hdr_got, NBDP_REQ_LEN - c->hdr_got);
	} else {
		uint64_t rest = c->cur->r.len - c->pay_got;

		if (c->discard)
			n = read(c->fd, sink,
				 rest < sizeof(sink) ? rest : sizeof(sink));
		else
			n = read(c->fd, c->cur->data + c->pay_got, rest);
	}
	if (n == 0) {
		kill_conn(c);
		return false;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			kill_conn(c);
		return false;
	}
	if (!c->cur) {
		c->hdr_got += (size_t)n;
		if (c->hdr_got == NBDP_REQ_LEN) {
			c->hdr_got = 0;
			got_header(c);
		}
	} else {
		c->pay_got += (uint64_t)n;
		if (c->pay_got == c->cur->r.len) {
			struct nreq *q = c->cur;

			c->cur = NULL;
			serve(c, q);
		}
	}
	return true;
}

static void update_events(struct nbd_conn *c)
{
	uint32_t ev = 0;

	if (!c->watch)
		return;
	if (may_read(c))
		ev |= WHARF_WATCH_IN;
	if (!c->dead && c->tx_head)
		ev |= WHARF_WATCH_OUT;
	if (ev != c->events && !wharf_watch_modify(c->watch, ev))
		c->events = ev;
}

static void on_ready(struct wharf_watch *w, int fd, uint32_t events, void *arg)
{
	struct nbd_conn *c = arg;

	(void)w;
	(void)fd;
	if (events & WHARF_WATCH_OUT)
		flush_tx(c);
	if ((events & WHARF_WATCH_IN) ||
	    (events & (WHARF_WATCH_ERR | WHARF_WATCH_HUP))) {
		unsigned budget = READ_BUDGET * 2;

		while (may_read(c) && budget--)
			if (!read_some(c))
				break;
		if ((events & (WHARF_WATCH_ERR | WHARF_WATCH_HUP)) &&
		    !(events & WHARF_WATCH_IN))
			kill_conn(c);
	}
	update_events(c);
}

/* ------------------------------------------------------------------ */
/* Start and stop (messages)                                           */
/* ------------------------------------------------------------------ */

static void start_msg(struct wharf_shard *shard, void *arg)
{
	struct nbd_conn *c = arg;
	int fl = fcntl(c->fd, F_GETFL);

	(void)shard;
	c->events = WHARF_WATCH_IN;
	if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) ||
	    wharf_timer_create(c->shard, on_retry, c, &c->retry) ||
	    wharf_shard_watch(c->shard, c->fd, c->events, on_ready, c,
			      &c->watch)) {
		c->watch = NULL;
		kill_conn(c);
	}
}

static void stop_msg(struct wharf_shard *shard, void *arg)
{
	(void)shard;
	drain(arg);
}

static int send_msg(struct wharf_shard *shard, wharf_msg_fn fn, void *arg)
{
	int rc;

	/* The ring is full only for an instant: its shard is running. */
	for (int i = 0; i < 10000; i++) {
		rc = wharf_shard_send(shard, fn, arg);
		if (rc != -EAGAIN)
			return rc;
		usleep(100);
	}
	return -EAGAIN;
}

int nbd_conn_start(struct nbd_srv *s, struct wharf_nvmf_host_queue *q, int fd,
		   struct nbd_conn **out)
{
	struct nbd_conn *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	c->s = s;
	c->q = q;
	c->shard = wharf_nvmf_host_queue_shard(q);
	c->fd = fd;
	atomic_fetch_add(&s->live, 1);
	add(&s->st.conns, 1);
	rc = send_msg(c->shard, start_msg, c);
	if (rc) {
		atomic_fetch_sub(&s->live, 1);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void nbd_conn_stop(struct nbd_conn *c)
{
	if (!nbd_conn_gone(c))
		send_msg(c->shard, stop_msg, c);
}

/* Only after the shards stopped or the connection is gone: nothing on
 * the shard refers to it then. */
bool nbd_conn_gone(const struct nbd_conn *c)
{
	return atomic_load_explicit(&c->gone, memory_order_acquire);
}

void nbd_conn_free(struct nbd_conn *c)
{
	free(c);
}

void nbd_stats_line(struct nbd_stats *st, char *buf, size_t len)
{
#define G(x) ((unsigned long long)atomic_load(&st->x))
	snprintf(buf, len,
		 "reads=%llu writes=%llu flushes=%llu trims=%llu "
		 "write_zeroes=%llu disconnects=%llu unknown=%llu errors=%llu "
		 "bytes_read=%llu bytes_written=%llu bytes_trimmed=%llu "
		 "bytes_zeroed=%llu nvme_cmds=%llu nvme_errors=%llu conns=%llu",
		 G(reqs[NBDK_READ]), G(reqs[NBDK_WRITE]), G(reqs[NBDK_FLUSH]),
		 G(reqs[NBDK_TRIM]), G(reqs[NBDK_WRITE_ZEROES]),
		 G(reqs[NBDK_DISC]), G(reqs[NBDK_OTHER]), G(errors),
		 G(bytes_read), G(bytes_written), G(bytes_trimmed),
		 G(bytes_zeroed), G(nvme_cmds), G(nvme_errors), G(conns));
#undef G
}
