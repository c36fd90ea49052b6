/*
 * nvmf_host/hop.c - the message of an off-shard I/O call and the
 * registration bounds check (hop.h).
 */
#include <stdlib.h>
#include <string.h>

#include "nvmf_host/hop.h"

struct wnh_hop *wnh_hop_new(const struct wnh_io *io)
{
	unsigned nr = io && io->op == WNH_IO_DSM ? io->nr : 0;
	struct wnh_hop *m;

	if (!io || nr > WHARF_NVMF_HOST_DSM_MAX_RANGES || (nr && !io->ranges))
		return NULL;
	m = malloc(sizeof(*m) + nr * sizeof(m->ranges[0]));
	if (!m)
		return NULL;
	m->io = *io;
	if (nr)
		memcpy(m->ranges, io->ranges, nr * sizeof(m->ranges[0]));
	m->io.ranges = nr ? m->ranges : NULL;
	return m;
}

bool wnh_mem_contains(uintptr_t base, size_t len, uintptr_t addr, uint64_t n)
{
	if (n == 0 || addr < base)
		return false;
	if (addr - base > len)
		return false;
	return n <= len - (addr - base);
}
