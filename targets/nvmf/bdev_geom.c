/*
 * targets/nvmf/bdev_geom.c - a namespace's geometry from a device's or
 * file's properties (see bdev_geom.h).
 */
#include "targets/nvmf/bdev_geom.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *msg, uint32_t a,
		uint32_t b)
{
	if (err && errlen)
		snprintf(err, errlen, msg, a, b);
	return -EINVAL;
}

/* @unit / @lbs - 1, clamped to the 16-bit field; 0 when it is smaller. */
static uint16_t blocks_0based(uint32_t unit, uint32_t lbs)
{
	uint32_t n;

	if (unit <= lbs || unit % lbs)
		return 0;
	n = unit / lbs - 1;
	return n > UINT16_MAX ? UINT16_MAX : (uint16_t)n;
}

int nvmf_bdev_geom_derive(const struct nvmf_blk_probe *p, uint32_t want_block,
			  struct nvmf_bdev_geom *g, char *err, size_t errlen)
{
	uint32_t bs = want_block;
	uint32_t gran;

	memset(g, 0, sizeof(*g));
	if (p->is_block && (p->lbs < 512 || (p->lbs & (p->lbs - 1))))
		return fail(err, errlen,
			    "the device reports a logical block size of %u",
			    p->lbs, 0);
	if (!bs && !p->is_block && p->direct && !p->lbs)
		bs = 4096; /* alignment unknown: what every device can do */
	if (!bs) /* the device's block; a direct file's alignment, or 512 */
		bs = p->lbs > 512 ? p->lbs : 512;
	if (bs != 512 && bs != 4096)
		return fail(err, errlen,
			    "LBA size %u: only 512 and 4096 are exported", bs,
			    0);
	if (p->direct && bs < p->lbs)
		return fail(err, errlen,
			    "block=%u is below the device's logical block size "
			    "%u (direct I/O needs whole device blocks)",
			    bs, p->lbs);
	g->block_size = bs;
	g->size = p->bytes / bs * bs;
	if (!g->size)
		return fail(err, errlen, "smaller than one %u-byte block", bs,
			    0);
	gran = p->pbs > bs ? p->pbs : bs;
	g->npwg = blocks_0based(gran, bs);
	g->nows = p->io_opt && p->io_opt % bs == 0 && p->io_opt >= gran
			  ? blocks_0based(p->io_opt, bs)
			  : g->npwg;
	g->read_only = p->read_only;
	if (p->is_block && p->direct)
		g->vwc = p->write_cache != 0;
	else /* the page cache (or a file's disk's own cache under it) */
		g->vwc = true;
	g->dealloc_zeroes = !p->is_block || p->write_zeroes;
	return 0;
}

int nvmf_write_cache_parse(const char *text)
{
	if (!text)
		return -1;
	if (!strncmp(text, "write back", 10) &&
	    (text[10] == '\0' || text[10] == '\n'))
		return 1;
	if (!strncmp(text, "write through", 13) &&
	    (text[13] == '\0' || text[13] == '\n'))
		return 0;
	return -1;
}
