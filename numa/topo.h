/*
 * The topology snapshot behind struct wharf_numa (internal to numa/).
 *
 * hwloc is asked once, at open; every query and the placement functions then
 * read these flat arrays, which is what makes placement pure and cheap.
 */
#ifndef WHARF_NUMA_TOPO_H
#define WHARF_NUMA_TOPO_H

#include <hwloc.h>

#include <wharf/numa.h>

/* One hardware thread. */
struct wnuma_cpu {
	int os;	       /* OS index */
	unsigned node; /* logical index of its NUMA node */
	unsigned core; /* logical index of its core */
	unsigned smt;  /* rank among its core's hardware threads */
};

struct wharf_numa {
	hwloc_topology_t topo;
	bool this_system;
	unsigned nnodes;
	int *node_os; /* [nnodes] OS index per node */
	unsigned ncpus;
	struct wnuma_cpu *cpus; /* [ncpus], increasing OS index */
};

/* The snapshot entry of OS CPU @os, or NULL. */
const struct wnuma_cpu *wnuma_find_cpu(const struct wharf_numa *numa, int os);

/* Whether node @node is in @mask (0 = all nodes). */
static inline bool wnuma_mask_has(uint64_t mask, unsigned node)
{
	if (!mask)
		return true;
	return node < 64 && (mask >> node) & 1;
}

#endif /* WHARF_NUMA_TOPO_H */
