/*
 * initiators/ublk/ublk_map.c - the device's parameters and each request's
 * NVMe command (ublk_map.h).
 */
#include <errno.h>
#include <string.h>

#include "initiators/ublk/ublk_map.h"

#define WZ_MAX_BLOCKS 65536u /* NLB of Write Zeroes is 16 bits */

static int log2_exact(uint64_t v)
{
	int s = 0;

	if (!v || (v & (v - 1)))
		return -1;
	while (v > 1) {
		v >>= 1;
		s++;
	}
	return s;
}

/* The most blocks one deallocate command (one range) takes on @g. */
static uint64_t dsm_max_blocks(const struct ublk_geom *g)
{
	uint64_t n = g->dmrsl ? g->dmrsl : UINT32_MAX;

	if (g->dmsl && g->dmsl < n)
		n = g->dmsl;
	return n;
}

/* The most blocks one Write Zeroes command takes on @g. */
static uint64_t wz_max_blocks(const struct ublk_geom *g)
{
	uint64_t n = WZ_MAX_BLOCKS;

	if (g->wzsl) {
		uint64_t lim = (4096ull << g->wzsl) / g->block;

		if (lim && lim < n)
			n = lim;
	}
	return n;
}

int ublk_params_from_geom(const struct ublk_geom *g, struct ublk_params *p)
{
	int shift = g ? log2_exact(g->block) : -1;
	uint64_t max_sectors;

	if (!p || shift < 9 || (1u << shift) > UBLK_MAP_PAGE ||
	    g->max_io < UBLK_MAP_PAGE || !g->nblocks)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->len = sizeof(*p);
	p->types = UBLK_PARAM_TYPE_BASIC;
	p->basic.attrs = UBLK_ATTR_VOLATILE_CACHE;
	if (g->read_only)
		p->basic.attrs |= UBLK_ATTR_READ_ONLY;
	p->basic.logical_bs_shift = (uint8_t)shift;
	p->basic.physical_bs_shift = (uint8_t)shift;
	p->basic.io_min_shift = (uint8_t)shift;
	p->basic.io_opt_shift = (uint8_t)shift;
	max_sectors = (g->max_io - g->max_io % UBLK_MAP_PAGE) >> 9;
	p->basic.max_sectors = (uint32_t)max_sectors;
	p->basic.dev_sectors = (g->nblocks << shift) >> 9;
	if (g->dsm || g->wzeroes) {
		p->types |= UBLK_PARAM_TYPE_DISCARD;
		p->discard.discard_granularity = g->block;
		if (g->dsm) {
			/* One range per request: the driver hands over one
			 * start and length. */
			uint64_t sect = (dsm_max_blocks(g) << shift) >> 9;

			p->discard.max_discard_sectors =
				sect > UINT32_MAX ? UINT32_MAX : (uint32_t)sect;
			p->discard.max_discard_segments = 1;
		}
		if (g->wzeroes)
			p->discard.max_write_zeroes_sectors =
				(uint32_t)((wz_max_blocks(g) << shift) >> 9);
	}
	return 0;
}

int ublk_cmd_of(const struct ublksrv_io_desc *iod, const struct ublk_geom *g,
		struct ublk_nvme_cmd *out)
{
	uint8_t op = ublksrv_get_op(iod);
	uint64_t off = iod->start_sector << 9;
	uint64_t len = (uint64_t)iod->nr_sectors << 9;
	uint64_t max = 0;

	memset(out, 0, sizeof(*out));
	switch (op) {
	case UBLK_IO_OP_READ:
		out->op = UBLK_NVME_READ;
		max = g->max_io - g->max_io % UBLK_MAP_PAGE;
		break;
	case UBLK_IO_OP_WRITE:
		out->op = UBLK_NVME_WRITE;
		max = g->max_io - g->max_io % UBLK_MAP_PAGE;
		break;
	case UBLK_IO_OP_FLUSH:
		out->op = UBLK_NVME_FLUSH;
		return 0;
	case UBLK_IO_OP_DISCARD:
		if (!g->dsm)
			return -EOPNOTSUPP;
		out->op = UBLK_NVME_DEALLOCATE;
		max = dsm_max_blocks(g) * g->block;
		break;
	case UBLK_IO_OP_WRITE_ZEROES:
		if (!g->wzeroes)
			return -EOPNOTSUPP;
		out->op = UBLK_NVME_WRITE_ZEROES;
		out->deallocate = !(iod->op_flags & UBLK_IO_F_NOUNMAP);
		max = wz_max_blocks(g) * g->block;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (!len || off % g->block || len % g->block || len > max ||
	    off / g->block + len / g->block > g->nblocks)
		return -EINVAL;
	out->slba = off / g->block;
	out->nlb = (uint32_t)(len / g->block);
	if (out->op == UBLK_NVME_READ || out->op == UBLK_NVME_WRITE)
		out->bytes = (uint32_t)len;
	return 0;
}

int32_t ublk_result_of(const struct ublk_nvme_cmd *c, int status)
{
	if (!status)
		return (int32_t)c->bytes;
	switch (status) {
	case -ENODEV:
	case -ENOLINK:
	case -EOPNOTSUPP:
	case -EINVAL:
		return status;
	default:
		return -EIO;
	}
}
