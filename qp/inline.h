/*
 * qp/inline.h - which work requests travel inline (IBV_SEND_INLINE).
 *
 * A SEND or RDMA WRITE whose gather list totals at most the res's
 * max_inline_data bytes is copied into the send queue entry when it is
 * posted: the device reads no registered memory for it (no lkey check, no
 * DMA of a 16-byte NVMe completion on a real HCA, no memory-region lookup
 * in soft-RoCE).  Pure: unit-tested on the host.
 */
#ifndef WHARF_QP_INLINE_H
#define WHARF_QP_INLINE_H

#include <stdbool.h>

#include "qp/qp.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * wqp_inline_fits - whether a WR of @op with @nsge entries of @sgl goes
 * inline under a limit of @max_inline bytes.
 * Return: true for SEND / SEND_IMM / SEND_INV / RDMA_WRITE / WRITE_IMM
 * with 1..n entries totalling 1..@max_inline bytes; false for READs, for
 * empty WRs (nothing to copy), for a NULL @sgl and when @max_inline is 0.
 * Context: any thread; pure.
 */
bool wqp_inline_fits(enum wharf_wr_op op, const struct ibv_sge *sgl,
		     unsigned nsge, uint32_t max_inline);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_QP_INLINE_H */
