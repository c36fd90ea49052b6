/*
 * qp/wr_id.h - what a work request id carries (internal).
 *
 * The low three bits of every wr_id wharf posts are a kind tag:
 *
 *   SEND  the rest is the address of a struct wharf_wr (8-byte aligned);
 *   SRQ   the rest is the index of a buffer of the res's SRQ pool;
 *   RQ    the rest is the index of a buffer of the QP's private pool.
 *
 * A wr_id becomes a pointer again only through wqp_wrid_to_wr(), which
 * checks the kind tag and then the wharf_wr's magic: a corrupted or foreign
 * wr_id yields NULL, never a wild pointer.
 */
#ifndef WHARF_QP_WR_ID_H
#define WHARF_QP_WR_ID_H

#include <stdint.h>

#include "qp/qp.h"

#ifdef __cplusplus
extern "C" {
#endif

enum wqp_wrid_kind {
	WQP_WRID_BAD = 0,
	WQP_WRID_SEND = 1,
	WQP_WRID_SRQ = 2,
	WQP_WRID_RQ = 3,
};

#define WQP_WRID_KIND_BITS 3u
#define WQP_WRID_KIND_MASK ((UINT64_C(1) << WQP_WRID_KIND_BITS) - 1)

/**
 * wqp_wrid_send() - the wr_id for posting @wr.
 * Return: the id, or 0 when @wr is NULL or not 8-byte aligned.
 * Context: any thread; pure.
 */
uint64_t wqp_wrid_send(const struct wharf_wr *wr);

/**
 * wqp_wrid_recv() - the wr_id of receive buffer @index.
 * @kind: WQP_WRID_SRQ or WQP_WRID_RQ.
 * Return: the id, or 0 for another kind.
 * Context: any thread; pure.
 */
uint64_t wqp_wrid_recv(enum wqp_wrid_kind kind, uint32_t index);

/**
 * wqp_wrid_kind() - the kind tag of @wr_id (WQP_WRID_BAD when unknown).
 * Context: any thread; pure.
 */
enum wqp_wrid_kind wqp_wrid_kind(uint64_t wr_id);

/**
 * wqp_wrid_index() - the buffer index of a receive wr_id.
 * Context: any thread; pure.
 */
uint32_t wqp_wrid_index(uint64_t wr_id);

/**
 * wqp_wrid_to_wr() - the posted wharf_wr a SEND wr_id names.
 * Return: the wharf_wr, or NULL when @wr_id is not of kind SEND, is 0, or
 * the wharf_wr it points at is not marked WHARF_WR_MAGIC_BUSY.
 * Context: the thread that posted it; pure apart from reading the magic.
 */
struct wharf_wr *wqp_wrid_to_wr(uint64_t wr_id);

#ifdef __cplusplus
}
#endif

#endif
