/*
 * targets/nvmf/io.c - the NVM command set on I/O queues: Read, Write,
 * Flush, Write Zeroes and Dataset Management (deallocate).
 *
 * Checks before any data moves (prep): the controller is enabled (else
 * Command Sequence Error); the namespace is attached (else Invalid
 * Namespace; not ready: Namespace Not Ready, retryable); SLBA + NLB within
 * the namespace (else LBA Out of Range); Read / Write within MDTS (else
 * Invalid Field). Flush with NSID FFFFFFFFh flushes every namespace.
 * Other opcodes are Invalid Opcode. Backing errors surface as media
 * errors: Unrecovered Read Error for reads, Write Fault otherwise.
 *
 * Dataset Management moves (NR + 1) 16-byte ranges to the controller;
 * only the deallocate attribute acts (the others are hints). Every range
 * is checked before any is deallocated; a range of 0 blocks is skipped.
 */
#include <string.h>

#include "targets/nvmf/internal.h"

/* A media error status (retryable: no DNR). */
static uint16_t media(uint8_t sc)
{
	return NVME_STATUS(NVME_SCT_MEDIA, sc);
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

	if (cmd->opc == NVME_IO_READ) {
		if (nvmf_bdev_read(&ns->bdev, req->data, off, req->xfer_len))
			return media(NVME_SC_UNRECOVERED_READ);
		count(&q->io.read_cmds, 1);
		count(&q->io.read_bytes, req->xfer_len);
		return 0;
	}
	if (nvmf_bdev_write(&ns->bdev, req->data, off, req->xfer_len,
			    cmd->cdw12 & NVME_RW_FUA))
		return media(NVME_SC_WRITE_FAULT);
	count(&q->io.write_cmds, 1);
	count(&q->io.write_bytes, req->xfer_len);
	return 0;
}

/* Flush every active namespace of @s (NSID FFFFFFFFh). */
static uint16_t flush_all(struct nvmf_subsys *s)
{
	uint16_t sts = 0;

	for (uint32_t i = 1; i <= NVMF_MAX_NSID; i++) {
		struct nvmf_ns *ns = nvmf_subsys_ns(s, i);

		if (ns && atomic_load(&ns->state) == NVMF_NS_ACTIVE &&
		    nvmf_bdev_flush(&ns->bdev))
			sts = media(NVME_SC_WRITE_FAULT);
	}
	return sts;
}

/* Dataset Management: deallocate the ranges in req->data. */
static uint16_t dsm(struct nvmf_req *req, struct nvmf_ns *ns)
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
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&r, (uint8_t *)req->data + i * sizeof(r), sizeof(r));
		if (r.nlb && nvmf_bdev_zero(&ns->bdev, r.slba << ns->lbads,
					    (uint64_t)r.nlb << ns->lbads, true))
			return media(NVME_SC_WRITE_FAULT);
	}
	return 0;
}

uint16_t nvmf_io_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	const struct nvme_sqe *cmd = &req->cmd.common;
	struct nvmf_ns *ns = req->ns;
	uint64_t slba, nlb;

	if (cmd->opc == NVME_IO_FLUSH && cmd->nsid == NVME_NSID_ALL)
		return flush_all(q->ctrl->subsys);
	/* Detached while the data moved? */
	if (!ns || atomic_load(&ns->state) == NVMF_NS_REMOVED)
		return nvmf_sts_gen(NVME_SC_INVALID_NS);
	switch (cmd->opc) {
	case NVME_IO_READ:
	case NVME_IO_WRITE:
		return rw(q, req, ns);
	case NVME_IO_FLUSH:
		return nvmf_bdev_flush(&ns->bdev) ? media(NVME_SC_WRITE_FAULT)
						  : 0;
	case NVME_IO_WRITE_ZEROES:
		range_check(ns, cmd, &slba, &nlb);
		return nvmf_bdev_zero(&ns->bdev, slba << ns->lbads,
				      nlb << ns->lbads,
				      cmd->cdw12 & NVME_RW_DEAC)
			       ? media(NVME_SC_WRITE_FAULT)
			       : 0;
	case NVME_IO_DSM:
		return dsm(req, ns);
	default:
		return nvmf_sts_gen(NVME_SC_INVALID_OPCODE);
	}
}
