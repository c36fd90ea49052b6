/*
 * nvmf_host/io.c - the NVM commands of <wharf/nvmf_host.h>: Read,
 * Write, Flush, Write Zeroes and Dataset Management (Deallocate) on an
 * I/O queue, from the library's bounce buffers or the caller's registered
 * memory (mem.c).  Each call is checked where it is made (arguments,
 * ONCS, the namespace, the transfer limit, the registration's bounds);
 * on the queue's owner shard it is then handed to the queue's slots
 * (queue.c) at once.  From any other thread it goes on that thread's
 * submission ring to the queue (subq.c), except Dataset Management, whose
 * range list travels as one message (hop.h); whatever fails on the shard
 * reaches the callback.  host->hops counts those messages in flight so
 * that disconnect waits for them (host.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "nvmf_host/hop.h"
#include "nvmf_host/host_int.h"
#include "nvmf_host/limits.h"
#include "nvmf_host/subq.h"

static const struct wharf_nvmf_host_ns *find_ns(const struct wharf_nvmf_host *h,
						uint32_t nsid)
{
	return wnh_ns_find(h, nsid); /* lock-free, ns.c */
}

/* Everything that can be checked on the calling thread; fills io->len. */
static int check(struct wnh_io *io)
{
	struct wharf_nvmf_host_queue *q = io->q;
	const struct wharf_nvmf_host_ns *ns;
	uint16_t oncs = 0;
	uint64_t len;

	if (!q || !io->cb)
		return -EINVAL;
	if (io->op == WNH_IO_WRITE_ZEROES)
		oncs = NVME_ONCS_WRITE_ZEROES;
	else if (io->op == WNH_IO_DSM)
		oncs = NVME_ONCS_DSM;
	if (oncs && !(q->h->info.oncs & oncs))
		return -EOPNOTSUPP;
	ns = find_ns(q->h, io->nsid);
	if (!ns)
		return -EINVAL;
	switch (io->op) {
	case WNH_IO_READ:
	case WNH_IO_WRITE:
		if (!io->buf || io->nlb == 0 || io->nlb > 0x10000 ||
		    !ns->block_size)
			return -EINVAL;
		len = (uint64_t)io->nlb * ns->block_size;
		if (len > q->bounce_size)
			return -EINVAL;
		io->len = (uint32_t)len;
		if (io->mem &&
		    (io->mem->q != q ||
		     !wnh_mem_contains((uintptr_t)io->mem->addr, io->mem->len,
				       (uintptr_t)io->buf, len)))
			return -EINVAL;
		return 0;
	case WNH_IO_WRITE_ZEROES:
		if (io->nlb > wnh_wz_max_blocks(q->h->info.wzsl, q->h->info.cap,
						ns->block_size) ||
		    !wnh_lba_range_ok(io->slba, io->nlb, ns->nblocks))
			return -EINVAL;
		return 0;
	case WNH_IO_DSM:
		/* io->ranges was built from checked ranges by the caller. */
		io->len = io->nr * (uint32_t)sizeof(struct nvme_dsm_range);
		return io->len > q->bounce_size ? -EINVAL : 0;
	default:
		return 0;
	}
}

/* On the owner shard: the command into a slot; 0 or -errno. */
int wnh_io_issue(const struct wnh_io *io)
{
	union nvme_cmd c;

	switch (io->op) {
	case WNH_IO_READ:
	case WNH_IO_WRITE:
		wnh_cmd_rw(&c,
			   io->op == WNH_IO_WRITE ? NVME_IO_WRITE
						  : NVME_IO_READ,
			   io->nsid, io->slba, io->nlb);
		return wnh_submit_mem(io->q, &c,
				      io->op == WNH_IO_WRITE ? NH_DIR_TO_CTRL
							     : NH_DIR_FROM_CTRL,
				      io->mem, io->buf, io->len, io->cb,
				      io->arg);
	case WNH_IO_FLUSH:
		wnh_cmd_flush(&c, io->nsid);
		break;
	case WNH_IO_WRITE_ZEROES:
		wnh_cmd_write_zeroes(&c, io->nsid, io->slba, io->nlb, io->deac);
		break;
	case WNH_IO_DSM:
		wnh_cmd_dsm_deallocate(&c, io->nsid, io->nr);
		/* wnh_submit copies the list (capsule or bounce buffer). */
		return wnh_submit(io->q, &c, NH_DIR_TO_CTRL, io->ranges,
				  io->len, io->cb, io->arg);
	}
	return wnh_submit(io->q, &c, NH_DIR_NONE, NULL, 0, io->cb, io->arg);
}

/* A message in flight is done; the decrement is its last touch of @h.
 * Once disconnect waits (`draining`) it is done under the lock, so that
 * the waiter cannot free @h between the decrement and the wake-up; a
 * message that saw `draining` false an instant too early decrements
 * without waking anyone, which the waiter's periodic check covers. */
static void hop_put(struct wharf_nvmf_host *h)
{
	if (!atomic_load(&h->draining)) {
		atomic_fetch_sub(&h->hops, 1);
		return;
	}
	pthread_mutex_lock(&h->lock);
	if (atomic_fetch_sub(&h->hops, 1) == 1)
		pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static void hop_run(struct wharf_shard *shard, void *arg)
{
	struct wnh_hop *m = arg;
	struct wharf_nvmf_host *h = m->io.q->h;
	int rc = wnh_io_issue(&m->io);

	(void)shard;
	if (rc)
		m->io.cb(rc, 0, m->io.arg);
	free(m);
	hop_put(h); /* the last touch of @h */
}

static int submit(struct wnh_io *io)
{
	struct wharf_nvmf_host *h;
	struct wnh_hop *m;
	int rc = check(io);

	if (rc)
		return rc;
	if (wharf_shard_current() == io->q->shard)
		return wnh_io_issue(io);
	/* DSM's range list lives on the caller's stack: a message. */
	if (io->op != WNH_IO_DSM)
		return wnh_subq_submit(io);
	m = wnh_hop_new(io);
	if (!m)
		return -ENOMEM;
	h = io->q->h;
	atomic_fetch_add(&h->hops, 1);
	rc = wharf_shard_send(io->q->shard, hop_run, m);
	if (rc) {
		free(m);
		hop_put(h);
	}
	return rc;
}

/* A command without a range list: Read, Write, Flush, Write Zeroes. */
static int one(struct wharf_nvmf_host_queue *q, enum wnh_io_op op,
	       struct wharf_nvmf_host_mem *mem, uint32_t nsid, uint64_t slba,
	       uint32_t nlb, void *buf, bool deac, wharf_nvmf_host_cb cb,
	       void *arg)
{
	struct wnh_io io = {
		.q = q,
		.mem = mem,
		.op = op,
		.nsid = nsid,
		.slba = slba,
		.nlb = nlb,
		.deac = deac,
		.buf = buf,
		.cb = cb,
		.arg = arg,
	};

	return submit(&io);
}

static int rw(struct wharf_nvmf_host_queue *q, enum wnh_io_op op,
	      struct wharf_nvmf_host_mem *mem, uint32_t nsid, uint64_t slba,
	      uint32_t nlb, void *buf, wharf_nvmf_host_cb cb, void *arg)
{
	return one(q, op, mem, nsid, slba, nlb, buf, false, cb, arg);
}

int wharf_nvmf_host_read(struct wharf_nvmf_host_queue *q, uint32_t nsid,
			 uint64_t slba, uint32_t nlb, void *buf,
			 wharf_nvmf_host_cb cb, void *arg)
{
	return rw(q, WNH_IO_READ, NULL, nsid, slba, nlb, buf, cb, arg);
}

int wharf_nvmf_host_write(struct wharf_nvmf_host_queue *q, uint32_t nsid,
			  uint64_t slba, uint32_t nlb, const void *buf,
			  wharf_nvmf_host_cb cb, void *arg)
{
	/* wnh_submit only reads a TO_CTRL buffer. */
	return rw(q, WNH_IO_WRITE, NULL, nsid, slba, nlb,
		  (void *)(uintptr_t)buf, cb, arg);
}

int wharf_nvmf_host_read_mem(struct wharf_nvmf_host_queue *q,
			     struct wharf_nvmf_host_mem *mem, uint32_t nsid,
			     uint64_t slba, uint32_t nlb, void *buf,
			     wharf_nvmf_host_cb cb, void *arg)
{
	if (!mem)
		return -EINVAL;
	return rw(q, WNH_IO_READ, mem, nsid, slba, nlb, buf, cb, arg);
}

int wharf_nvmf_host_write_mem(struct wharf_nvmf_host_queue *q,
			      struct wharf_nvmf_host_mem *mem, uint32_t nsid,
			      uint64_t slba, uint32_t nlb, const void *buf,
			      wharf_nvmf_host_cb cb, void *arg)
{
	if (!mem)
		return -EINVAL;
	/* The controller only RDMA READs it; in the capsule it is copied. */
	return rw(q, WNH_IO_WRITE, mem, nsid, slba, nlb, (void *)(uintptr_t)buf,
		  cb, arg);
}

int wharf_nvmf_host_flush(struct wharf_nvmf_host_queue *q, uint32_t nsid,
			  wharf_nvmf_host_cb cb, void *arg)
{
	return one(q, WNH_IO_FLUSH, NULL, nsid, 0, 0, NULL, false, cb, arg);
}

int wharf_nvmf_host_write_zeroes(struct wharf_nvmf_host_queue *q, uint32_t nsid,
				 uint64_t slba, uint32_t nlb, bool deallocate,
				 wharf_nvmf_host_cb cb, void *arg)
{
	return one(q, WNH_IO_WRITE_ZEROES, NULL, nsid, slba, nlb, NULL,
		   deallocate, cb, arg);
}

int wharf_nvmf_host_dsm_deallocate(struct wharf_nvmf_host_queue *q,
				   uint32_t nsid,
				   const struct wharf_nvmf_host_range *ranges,
				   unsigned nr, wharf_nvmf_host_cb cb,
				   void *arg)
{
	struct nvme_dsm_range r[WHARF_NVMF_HOST_DSM_MAX_RANGES];
	const struct wharf_nvmf_host_ns *ns;
	struct wnh_io io = {
		.q = q,
		.op = WNH_IO_DSM,
		.nsid = nsid,
		.cb = cb,
		.arg = arg,
		.nr = nr,
		.ranges = r,
	};

	if (!q || !cb)
		return -EINVAL;
	if (!(q->h->info.oncs & NVME_ONCS_DSM))
		return -EOPNOTSUPP;
	ns = find_ns(q->h, nsid);
	if (!ns || !ranges || nr == 0 || nr > WHARF_NVMF_HOST_DSM_MAX_RANGES ||
	    wnh_dsm_check_limits(&q->h->info, ranges, nr))
		return -EINVAL;
	for (unsigned i = 0; i < nr; i++) {
		if (!wnh_lba_range_ok(ranges[i].slba, ranges[i].nlb,
				      ns->nblocks))
			return -EINVAL;
		wnh_dsm_range(&r[i], ranges[i].slba, ranges[i].nlb);
	}
	return submit(&io);
}
