/* qp/inline.c - the inline decision; see inline.h. */
#include "qp/inline.h"

bool wqp_inline_fits(enum wharf_wr_op op, const struct ibv_sge *sgl,
		     unsigned nsge, uint32_t max_inline)
{
	uint64_t total = 0;

	if (!max_inline || !sgl || !nsge)
		return false;
	switch (op) {
	case WHARF_WR_SEND:
	case WHARF_WR_SEND_IMM:
	case WHARF_WR_SEND_INV:
	case WHARF_WR_RDMA_WRITE:
	case WHARF_WR_RDMA_WRITE_IMM:
		break;
	case WHARF_WR_NONE:
	case WHARF_WR_RDMA_READ:
	default:
		return false;
	}
	for (unsigned i = 0; i < nsge; i++)
		total += sgl[i].length;
	return total && total <= max_inline;
}
