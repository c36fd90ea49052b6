/*
 * targets/nvmf/io.c - the NVM command set on I/O queues: Read, Write,
 * Flush, Write Zeroes and Dataset Management (deallocate).
 *
 * Checks before any data moves (prep): the controller is enabled (else
 * Command Sequence Error); the namespace is attached (else Invalid
 * Namespace; not ready: Namespace Not Ready, retryable); SLBA + NLB within
 * the namespace (else LBA Out of Range); Read / Write within MDTS (else
 * Invalid Field). Flush with NSID FFFFFFFFh flushes every namespace.
 * Other opcodes are Invalid Opcode. Backing errors become the status
 * nvmf_bdev_status() gives (media, capacity, write protect, internal),
 * each counted; writes to a read-only namespace are Namespace Is Write
 * Protected without touching the backing.
 *
 * Dataset Management moves (NR + 1) 16-byte ranges to the controller;
 * only the deallocate attribute acts (the others are hints). Every range
 * is checked before any is deallocated; a range of 0 blocks is skipped.
 *
 * Files and block devices with an io_uring (q->aio) run as a chain of
 * backend steps, one in flight per command, each resumed by
 * nvmf_io_step(): Read / Write (resubmitting the rest of a short
 * transfer; FUA as RWF_DSYNC), Flush (fdatasync; NSID FFFFFFFFh one
 * namespace after another), Write Zeroes and each Dataset Management
 * range (fallocate ZERO_RANGE or PUNCH_HOLE, which a block device turns
 * into write-zeroes / discard; where the file system refuses both, writes
 * of a zero block; a deallocate on a device without a zeroing discard is
 * the hint it is, and does nothing). fallocate runs in the kernel's
 * workers, so none of these blocks the queue's thread.
 */
#include <errno.h>
#include <linux/falloc.h>
#include <string.h>

#include "targets/nvmf/internal.h"

/* The status for a failed backend call; counted by class. */
static uint16_t be_fail(struct nvmf_queue *q, int err, bool read)
{
	enum nvmf_bdev_err cls;
	uint16_t sts = nvmf_bdev_status(err, read, &cls);

	nvmf_stat_add(&q->tgt->n_bdev_err[cls], 1);
	return sts;
}

/* Whether @ns's I/O goes through @q's io_uring. */
static bool async_ns(const struct nvmf_queue *q, const struct nvmf_ns *ns)
{
	return q->aio && nvmf_bdev_async(&ns->bdev);
}

/* Namespace Is Write Protected: not counted (no backend call failed). */
static uint16_t write_protected(void)
{
	return nvmf_sts_gen(NVME_SC_NS_WRITE_PROT);
}

/* SLBA (CDW10/11) and the 0's based NLB (CDW12 15:0) within @ns. */
static uint16_t range_check(const struct nvmf_ns *ns,
			    const struct nvme_sqe *cmd, uint64_t *slba,
			    uint64_t *nlb)
{
	*slba = (uint64_t)cmd->cdw11 << 32 | cmd->cdw10;
	*nlb = (uint64_t)(cmd->cdw12 & NVME_RW_NLB_MASK) + 1;
	if (*slba >= ns->nsze || *nlb > ns->nsze - *slba)
		return nvmf_sts_gen(NVME_SC_LBA_RANGE);
	return 0;
}

uint16_t nvmf_io_prep(struct nvmf_queue *q, struct nvmf_req *req)
{
	const struct nvme_sqe *cmd = &req->cmd.common;
	struct nvmf_ns *ns;
	uint64_t slba, nlb;
	uint16_t sts;

	if (!atomic_load_explicit(&q->ctrl->io_ok, memory_order_acquire))
		return nvmf_sts_gen(NVME_SC_CMD_SEQ_ERROR);
	switch (cmd->opc) {
	case NVME_IO_READ:
	case NVME_IO_WRITE:
	case NVME_IO_WRITE_ZEROES:
	case NVME_IO_DSM:
		break;
	case NVME_IO_FLUSH:
		if (cmd->nsid == NVME_NSID_ALL)
			return 0;
		break;
	default:
		return nvmf_sts_gen(NVME_SC_INVALID_OPCODE);
	}
	sts = nvmf_ns_lookup(q->ctrl->subsys, cmd->nsid, &ns);
	if (sts)
		return sts;
	req->ns = ns;
	switch (cmd->opc) {
	case NVME_IO_READ:
	case NVME_IO_WRITE:
		sts = range_check(ns, cmd, &slba, &nlb);
		if (sts)
			return sts;
		if ((nlb << ns->lbads) > q->tgt->max_xfer)
			return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
		req->xfer = cmd->opc == NVME_IO_READ ? NVMF_XFER_C2H
						     : NVMF_XFER_H2C;
		req->xfer_len = (uint32_t)(nlb << ns->lbads);
		return 0;
	case NVME_IO_WRITE_ZEROES:
		return range_check(ns, cmd, &slba, &nlb);
	case NVME_IO_DSM:
		req->xfer = NVMF_XFER_H2C;
		req->xfer_len = ((cmd->cdw10 & NVME_DSM_NR_MASK) + 1) *
				(uint32_t)sizeof(struct nvme_dsm_range);
		return 0;
	default: /* flush of one namespace */
		return 0;
	}
}

/* Add to a per-queue counter. */
static void count(atomic_uint_fast64_t *c, uint64_t n)
{
	/* Only the owner thread writes: no read-modify-write needed. */
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* Read / Write between req->data and the backing. */
static uint16_t rw(struct nvmf_queue *q, struct nvmf_req *req,
		   struct nvmf_ns *ns)
{
	const struct nvme_sqe *cmd = &req->cmd.common;
	uint64_t off = ((uint64_t)cmd->cdw11 << 32 | cmd->cdw10) << ns->lbads;

	int rc;

	if (cmd->opc != NVME_IO_READ && ns->bdev.read_only)
		return write_protected();
	if (async_ns(q, ns)) {
		req->aio = (struct nvmf_aio_op){
			.kind = cmd->opc == NVME_IO_READ ? NVMF_AIO_READ
							 : NVMF_AIO_WRITE,
			.dsync = cmd->opc != NVME_IO_READ &&
				 (cmd->cdw12 & NVME_RW_FUA),
			.fd = ns->bdev.fd,
			.buf = req->data,
			.len = req->xfer_len,
			.off = off,
		};
		nvmf_aio_submit(q->aio, &req->aio);
		return NVMF_STS_PENDING;
	}
	if (cmd->opc == NVME_IO_READ) {
		rc = nvmf_bdev_read(&ns->bdev, req->data, off, req->xfer_len);
		if (rc)
			return be_fail(q, rc, true);
		count(&q->io.read_cmds, 1);
		count(&q->io.read_bytes, req->xfer_len);
		return 0;
	}
	rc = nvmf_bdev_write(&ns->bdev, req->data, off, req->xfer_len,
			     cmd->cdw12 & NVME_RW_FUA);
	if (rc)
		return be_fail(q, rc, false);
	count(&q->io.write_cmds, 1);
	count(&q->io.write_bytes, req->xfer_len);
	return 0;
}

/* A backend Read / Write completed with @res bytes (or -errno). */
static uint16_t rw_done(struct nvmf_queue *q, struct nvmf_req *req, int res)
{
	struct nvmf_aio_op *op = &req->aio;
	bool read = op->kind == NVMF_AIO_READ;

	if (res < 0)
		return be_fail(q, res, read);
	if ((uint32_t)res < op->len) { /* short: the rest, from where it
					* stopped */
		struct nvmf_ns *ns = req->ns;
		bool unaligned =
			ns->bdev.direct && (uint32_t)res % ns->bdev.block_size;

		if (read && (!res || unaligned)) {
			/* past a shrunk file's end (direct I/O cannot go on
			 * from an unaligned point, and there is no more) */
			memset((uint8_t *)op->buf + res, 0, op->len - res);
		} else if (!res || unaligned) {
			return be_fail(q, -EIO, false);
		} else {
			op->buf = (uint8_t *)op->buf + res;
			op->off += (uint64_t)res;
			op->len -= (uint32_t)res;
			nvmf_aio_submit(q->aio, op);
			return NVMF_STS_PENDING;
		}
	}
	if (read) {
		count(&q->io.read_cmds, 1);
		count(&q->io.read_bytes, req->xfer_len);
	} else {
		count(&q->io.write_cmds, 1);
		count(&q->io.write_bytes, req->xfer_len);
	}
	return 0;
}

/*
 * Zeroing on the backend. The ways to try, in order: for a deallocate,
 * punch a hole, then zero the range, then write zeroes; for Write Zeroes
 * without DEAC, zero the range first. A way the file system or device
 * does not have (EOPNOTSUPP, EINVAL, ENOSYS) moves to the next.
 */
enum { ZERO_BY_PUNCH, ZERO_BY_RANGE, ZERO_BY_WRITE };

static uint8_t zero_way(const struct nvmf_req *req)
{
	static const uint8_t dealloc[] = {ZERO_BY_PUNCH, ZERO_BY_RANGE,
					  ZERO_BY_WRITE};
	static const uint8_t plain[] = {ZERO_BY_RANGE, ZERO_BY_PUNCH,
					ZERO_BY_WRITE};
	bool deac = req->zero_mode & 0x80;

	return (deac ? dealloc : plain)[req->zero_mode & 0x7F];
}

/* Submit the next operation for the range in req->zero_off/left. */
static void zero_submit(struct nvmf_queue *q, struct nvmf_req *req)
{
	struct nvmf_ns *ns = req->ns;
	uint8_t way = zero_way(req);

	req->aio =
		(struct nvmf_aio_op){.fd = ns->bdev.fd, .off = req->zero_off};
	if (way == ZERO_BY_WRITE) {
		req->aio.kind = NVMF_AIO_WRITE;
		req->aio.buf = (void *)nvmf_bdev_zeroes;
		req->aio.len = req->zero_left < NVMF_BDEV_ZERO_CHUNK
				       ? (uint32_t)req->zero_left
				       : NVMF_BDEV_ZERO_CHUNK;
	} else {
		req->aio.kind = NVMF_AIO_FALLOCATE;
		req->aio.mode = FALLOC_FL_KEEP_SIZE |
				(way == ZERO_BY_PUNCH ? FALLOC_FL_PUNCH_HOLE
						      : FALLOC_FL_ZERO_RANGE);
		req->aio.flen = req->zero_left;
	}
	nvmf_aio_submit(q->aio, &req->aio);
}

/* Start zeroing [@off, @off + @len) of req->ns. */
static uint16_t zero_start(struct nvmf_queue *q, struct nvmf_req *req,
			   uint64_t off, uint64_t len, bool deallocate)
{
	req->zero_mode = deallocate ? 0x80 : 0;
	req->zero_off = off;
	req->zero_left = len;
	zero_submit(q, req);
	return NVMF_STS_PENDING;
}

/* A zeroing step completed: 0 when the range is done, PENDING, or the
 * status. */
static uint16_t zero_done(struct nvmf_queue *q, struct nvmf_req *req, int res)
{
	if (req->aio.kind == NVMF_AIO_FALLOCATE) {
		if (!res) {
			req->zero_left = 0;
			return 0;
		}
		bool unsupported =
			res == -EOPNOTSUPP || res == -EINVAL || res == -ENOSYS;
		struct nvmf_ns *ns = req->ns;

		/* Deallocate is a hint where it promises no zeroes: a device
		 * without a zeroing discard keeps its data (no zero-writing
		 * a range of terabytes for a hint). */
		if (unsupported && req->cmd.common.opc == NVME_IO_DSM &&
		    !ns->bdev.dealloc_zeroes) {
			req->zero_left = 0;
			return 0;
		}
		if (unsupported && zero_way(req) != ZERO_BY_WRITE) {
			req->zero_mode++;
			zero_submit(q, req);
			return NVMF_STS_PENDING;
		}
		return be_fail(q, res, false);
	}
	if (res <= 0)
		return be_fail(q, res, false);
	req->zero_off += (uint64_t)res;
	req->zero_left -= (uint64_t)res;
	if (!req->zero_left)
		return 0;
	zero_submit(q, req);
	return NVMF_STS_PENDING;
}

/*
 * Flush one namespace: submitted (PENDING), or in place. In place blocks
 * (fdatasync) for a file or device, and is reached only by a queue
 * without a ring: tools and unit tests. The RDMA binding gives every
 * queue its shard's ring, and refuses to start when a file or device
 * namespace exists and a ring could not be made (rdma.c), so a shard
 * never gets here for one; the same holds for rw(), write_zeroes() and
 * dsm_from().
 */
static uint16_t flush_ns(struct nvmf_queue *q, struct nvmf_req *req,
			 struct nvmf_ns *ns)
{
	int rc;

	if (async_ns(q, ns)) {
		req->aio = (struct nvmf_aio_op){.kind = NVMF_AIO_FSYNC,
						.fd = ns->bdev.fd};
		nvmf_aio_submit(q->aio, &req->aio);
		return NVMF_STS_PENDING;
	}
	rc = nvmf_bdev_flush(&ns->bdev);
	return rc ? be_fail(q, rc, false) : 0;
}

/*
 * Flush every active namespace of the subsystem (NSID FFFFFFFFh), from
 * NSID req->step on: one backend flush at a time. The first error is
 * kept (in req->held_status) and the rest are still flushed.
 */
static uint16_t flush_all(struct nvmf_queue *q, struct nvmf_req *req)
{
	struct nvmf_subsys *s = q->ctrl->subsys;

	for (uint32_t i = req->step; i <= NVMF_MAX_NSID; i++) {
		struct nvmf_ns *ns = nvmf_subsys_ns(s, i);
		uint16_t sts;

		if (!ns || atomic_load(&ns->state) != NVMF_NS_ACTIVE)
			continue;
		req->ns = ns;
		sts = flush_ns(q, req, ns);
		if (sts == NVMF_STS_PENDING) {
			req->step = i + 1;
			return sts;
		}
		if (sts && !req->held_status)
			req->held_status = sts;
	}
	return req->held_status;
}

/* Dataset Management: deallocate the ranges in req->data from range
 * req->step on (in place, or one range at a time on the backend). */
static uint16_t dsm_from(struct nvmf_queue *q, struct nvmf_req *req)
{
	struct nvmf_ns *ns = req->ns;
	uint32_t n = req->xfer_len / sizeof(struct nvme_dsm_range);
	struct nvme_dsm_range r;
	int rc;

	for (uint32_t i = req->step; i < n; i++) {
		memcpy(&r, (uint8_t *)req->data + i * sizeof(r), sizeof(r));
		if (!r.nlb)
			continue;
		if (async_ns(q, ns)) {
			req->step = i + 1;
			return zero_start(q, req, r.slba << ns->lbads,
					  (uint64_t)r.nlb << ns->lbads, true);
		}
		rc = nvmf_bdev_zero(&ns->bdev, r.slba << ns->lbads,
				    (uint64_t)r.nlb << ns->lbads, true);
		if (rc)
			return be_fail(q, rc, false);
	}
	return 0;
}

/* Dataset Management: check every range, then deallocate. */
static uint16_t dsm(struct nvmf_queue *q, struct nvmf_req *req,
		    struct nvmf_ns *ns)
{
	uint32_t n = req->xfer_len / sizeof(struct nvme_dsm_range);
	struct nvme_dsm_range r;

	if (!(req->cmd.common.cdw11 & NVME_DSM_AD))
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&r, (uint8_t *)req->data + i * sizeof(r), sizeof(r));
		if (r.nlb && (r.slba >= ns->nsze || r.nlb > ns->nsze - r.slba))
			return nvmf_sts_gen(NVME_SC_LBA_RANGE);
	}
	if (ns->bdev.read_only)
		return write_protected();
	req->step = 0;
	return dsm_from(q, req);
}

/* Write Zeroes. */
static uint16_t write_zeroes(struct nvmf_queue *q, struct nvmf_req *req,
			     struct nvmf_ns *ns)
{
	const struct nvme_sqe *cmd = &req->cmd.common;
	bool deac = cmd->cdw12 & NVME_RW_DEAC;
	uint64_t slba, nlb;
	int rc;

	range_check(ns, cmd, &slba, &nlb);
	if (ns->bdev.read_only)
		return write_protected();
	if (async_ns(q, ns))
		return zero_start(q, req, slba << ns->lbads, nlb << ns->lbads,
				  deac);
	rc = nvmf_bdev_zero(&ns->bdev, slba << ns->lbads, nlb << ns->lbads,
			    deac);
	return rc ? be_fail(q, rc, false) : 0;
}

bool nvmf_io_needs_copy(const struct nvmf_queue *q, const struct nvmf_req *req)
{
	const struct nvmf_ns *ns = req->ns;
	uint8_t opc = req->cmd.common.opc;

	return req->kind == NVMF_KIND_IO && ns &&
	       (opc == NVME_IO_WRITE || opc == NVME_IO_DSM) && async_ns(q, ns);
}

uint16_t nvmf_io_step(struct nvmf_queue *q, struct nvmf_req *req, int res)
{
	uint16_t sts;

	switch (req->cmd.common.opc) {
	case NVME_IO_READ:
	case NVME_IO_WRITE:
		return rw_done(q, req, res);
	case NVME_IO_FLUSH:
		sts = res < 0 ? be_fail(q, res, false) : 0;
		if (req->cmd.common.nsid != NVME_NSID_ALL)
			return sts;
		if (sts && !req->held_status)
			req->held_status = sts;
		return flush_all(q, req);
	case NVME_IO_WRITE_ZEROES:
		return zero_done(q, req, res);
	case NVME_IO_DSM:
		sts = zero_done(q, req, res);
		return sts ? sts : dsm_from(q, req);
	default:
		return nvmf_sts_gen(NVME_SC_INTERNAL);
	}
}

uint16_t nvmf_io_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	const struct nvme_sqe *cmd = &req->cmd.common;
	struct nvmf_ns *ns = req->ns;

	if (cmd->opc == NVME_IO_FLUSH)
		count(&q->io.flush_cmds, 1);
	else if (cmd->opc == NVME_IO_WRITE_ZEROES)
		count(&q->io.write_zeroes_cmds, 1);
	else if (cmd->opc == NVME_IO_DSM)
		count(&q->io.dsm_cmds, 1);
	if (cmd->opc == NVME_IO_FLUSH && cmd->nsid == NVME_NSID_ALL) {
		req->step = 1;
		req->held_status = 0;
		return flush_all(q, req);
	}
	/* Detached while the data moved? */
	if (!ns || atomic_load(&ns->state) == NVMF_NS_REMOVED)
		return nvmf_sts_gen(NVME_SC_INVALID_NS);
	switch (cmd->opc) {
	case NVME_IO_READ:
	case NVME_IO_WRITE:
		return rw(q, req, ns);
	case NVME_IO_FLUSH:
		return flush_ns(q, req, ns);
	case NVME_IO_WRITE_ZEROES:
		return write_zeroes(q, req, ns);
	case NVME_IO_DSM:
		return dsm(q, req, ns);
	default:
		return nvmf_sts_gen(NVME_SC_INVALID_OPCODE);
	}
}
