/* qp/wr_id.c - work request id encoding; see wr_id.h. */
#include "qp/wr_id.h"

uint64_t wqp_wrid_send(const struct wharf_wr *wr)
{
	uintptr_t p = (uintptr_t)wr;

	if (!p || (p & WQP_WRID_KIND_MASK))
		return 0;
	return (uint64_t)p | WQP_WRID_SEND;
}

uint64_t wqp_wrid_recv(enum wqp_wrid_kind kind, uint32_t index)
{
	if (kind != WQP_WRID_SRQ && kind != WQP_WRID_RQ)
		return 0;
	return ((uint64_t)index << WQP_WRID_KIND_BITS) | (uint64_t)kind;
}

enum wqp_wrid_kind wqp_wrid_kind(uint64_t wr_id)
{
	switch (wr_id & WQP_WRID_KIND_MASK) {
	case WQP_WRID_SEND:
		return WQP_WRID_SEND;
	case WQP_WRID_SRQ:
		return WQP_WRID_SRQ;
	case WQP_WRID_RQ:
		return WQP_WRID_RQ;
	default:
		return WQP_WRID_BAD;
	}
}

uint32_t wqp_wrid_index(uint64_t wr_id)
{
	return (uint32_t)(wr_id >> WQP_WRID_KIND_BITS);
}

struct wharf_wr *wqp_wrid_to_wr(uint64_t wr_id)
{
	struct wharf_wr *wr;
	uint64_t p = wr_id & ~WQP_WRID_KIND_MASK;

	if (wqp_wrid_kind(wr_id) != WQP_WRID_SEND || !p ||
	    p > (uint64_t)UINTPTR_MAX)
		return NULL;
	wr = (struct wharf_wr *)(uintptr_t)p;
	if (wr->magic != WHARF_WR_MAGIC_BUSY)
		return NULL;
	return wr;
}
