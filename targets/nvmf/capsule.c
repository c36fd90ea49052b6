/*
 * targets/nvmf/capsule.c - checks of a received command capsule and the
 * binding of its SGL to the data the command needs.
 *
 * nvmf_capsule_check() runs before the command is decoded:
 *  - in-capsule data beyond the queue's in-capsule size (IOCCSZ for I/O
 *    queues): Data SGL Length Invalid;
 *  - FUSE set (no fused operations): Invalid Field;
 *  - PSDT other than 01b (NVMe over Fabrics carries SGLs only): Invalid
 *    Field. Byte 1 of a Fabrics command is reserved, so neither check
 *    applies to opcode 7Fh.
 * nvmf_capsule_bind() runs once the command says how many bytes move in
 * which direction (SGL1 is only interpreted then: commands without data
 * may leave it reserved):
 *  - keyed data block (RDMA), subtype address or invalidate: the 24-bit
 *    length must cover the transfer (longer is allowed: SGLS bit 18);
 *  - data block, subtype offset (in-capsule data): host to controller
 *    only (Invalid Field otherwise); offset beyond the in-capsule size:
 *    SGL Offset Invalid; offset + length beyond the data received, or a
 *    length shorter than the transfer: Data SGL Length Invalid;
 *  - anything else (segments, bit bucket, transport data block, other
 *    subtypes; MSDBD is 1): SGL Descriptor Type Invalid.
 */
#include <string.h>

#include "targets/nvmf/internal.h"

uint16_t nvmf_capsule_check(const union nvme_cmd *cmd, size_t len,
			    uint32_t icd_max)
{
	if (len - NVME_SQE_SIZE > icd_max)
		return nvmf_sts_gen(NVME_SC_SGL_INVALID_DLEN);
	if (cmd->common.opc == NVME_OPC_FABRICS)
		return 0;
	if (cmd->common.flags & NVME_FLAGS_FUSE_MASK)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	if ((cmd->common.flags & NVME_FLAGS_PSDT_MASK) != NVME_FLAGS_PSDT_SGL)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	return 0;
}

/* The 24-bit length of a keyed SGL data block. */
static uint32_t keyed_len(const struct nvme_sgl *sgl)
{
	return (uint32_t)sgl->keyed.len[0] | (uint32_t)sgl->keyed.len[1] << 8 |
	       (uint32_t)sgl->keyed.len[2] << 16;
}

uint16_t nvmf_capsule_bind(struct nvmf_req *req, const void *capsule,
			   size_t len, uint32_t icd_max)
{
	const struct nvme_sgl *sgl = &req->cmd.common.sgl;
	uint8_t type = sgl->keyed.type >> 4, sub = sgl->keyed.type & 0xF;
	size_t icd_len = len - NVME_SQE_SIZE;

	if (type == NVME_SGL_TYPE_KEYED_DATA &&
	    (sub == NVME_SGL_SUB_ADDRESS || sub == NVME_SGL_SUB_INVALIDATE)) {
		if (keyed_len(sgl) < req->xfer_len)
			return nvmf_sts_gen(NVME_SC_SGL_INVALID_DLEN);
		req->rdma_addr = sgl->addr;
		req->rdma_key = sgl->keyed.key;
		req->rdma_invalidate = sub == NVME_SGL_SUB_INVALIDATE;
		req->data = NULL;
		return 0;
	}
	if (type == NVME_SGL_TYPE_DATA_BLOCK && sub == NVME_SGL_SUB_OFFSET) {
		uint64_t off = sgl->addr;
		uint32_t dlen = sgl->unkeyed.len;

		if (req->xfer != NVMF_XFER_H2C)
			return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
		if (off > icd_max)
			return nvmf_sts_gen(NVME_SC_SGL_INVALID_OFS);
		if (dlen < req->xfer_len || off + dlen > icd_len)
			return nvmf_sts_gen(NVME_SC_SGL_INVALID_DLEN);
		req->data = (uint8_t *)capsule + NVME_SQE_SIZE + off;
		return 0;
	}
	return nvmf_sts_gen(NVME_SC_SGL_INVALID_TYPE);
}
