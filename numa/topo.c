/*
 * Topology discovery: one hwloc load, flattened into wnuma_cpu entries
 * (node, core, SMT rank per hardware thread), plus the queries on them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"
#include "numa/topo.h"

static int neg_errno(void)
{
	return errno ? -errno : -EINVAL;
}

static int cmp_cpu_os(const void *a, const void *b)
{
	const struct wnuma_cpu *x = a, *y = b;

	return (x->os > y->os) - (x->os < y->os);
}

/* Lowest-index node whose CPU set holds @pu, or -1 for none. */
static int pu_node(hwloc_topology_t topo, hwloc_obj_t pu)
{
	hwloc_obj_t node = NULL;

	while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
						  node)))
		if (hwloc_bitmap_isset(node->cpuset, pu->os_index))
			return (int)node->logical_index;
	return -1;
}

static int flatten(struct wharf_numa *numa)
{
	hwloc_topology_t topo = numa->topo;
	int nnodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	int npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);

	if (nnodes <= 0 || npus <= 0)
		return -EINVAL;
	numa->nnodes = (unsigned)nnodes;
	numa->node_os = calloc((size_t)nnodes, sizeof(*numa->node_os));
	numa->cpus = calloc((size_t)npus, sizeof(*numa->cpus));
	if (!numa->node_os || !numa->cpus)
		return -ENOMEM;
	for (int i = 0; i < nnodes; i++)
		numa->node_os[i] =
			(int)hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
						   (unsigned)i)
				->os_index;

	/* PUs in logical order: a core's threads are consecutive. */
	int last_core = -1;
	unsigned smt = 0, orphan_core = UINT32_MAX / 2;
	for (int i = 0; i < npus; i++) {
		hwloc_obj_t pu =
			hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
		hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(
			topo, HWLOC_OBJ_CORE, pu);
		int node = pu_node(topo, pu);
		struct wnuma_cpu *c = &numa->cpus[numa->ncpus];

		if (node < 0)
			continue; /* a CPU without memory: unusable */
		c->os = (int)pu->os_index;
		c->node = (unsigned)node;
		/* A PU without a core object is a core of its own. */
		c->core = core ? core->logical_index : orphan_core++;
		smt = core && (int)core->logical_index == last_core ? smt + 1
								    : 0;
		last_core = core ? (int)core->logical_index : -1;
		c->smt = smt;
		numa->ncpus++;
	}
	if (!numa->ncpus)
		return -EINVAL;
	qsort(numa->cpus, numa->ncpus, sizeof(*numa->cpus), cmp_cpu_os);
	return 0;
}

void wharf_numa_opts_init(struct wharf_numa_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
}

int wharf_numa_open(const struct wharf_numa_opts *opts_in,
		    struct wharf_numa **out)
{
	struct wharf_numa_opts opts;
	struct wharf_numa *numa;
	int err;

	if (!out)
		return -EINVAL;
	err = wbase_opts_copy(&opts, sizeof(opts), opts_in);
	if (err)
		return err;
	numa = calloc(1, sizeof(*numa));
	if (!numa)
		return -ENOMEM;
	if (hwloc_topology_init(&numa->topo)) {
		err = neg_errno();
		free(numa);
		return err;
	}
	if (opts.synthetic &&
	    hwloc_topology_set_synthetic(numa->topo, opts.synthetic)) {
		err = -EINVAL;
		goto fail;
	}
	/* "The CPUs this process may use" includes its binding (taskset,
	 * numactl --physcpubind, systemd's CPUAffinity=), not only its
	 * cgroup's cpuset, which is all hwloc removes by default.  hwloc
	 * reads a binding only of a topology said to be this system's. */
	if (!opts.synthetic &&
	    hwloc_topology_set_flags(
		    numa->topo,
		    HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
			    HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING)) {
		err = neg_errno();
		goto fail;
	}
	if (hwloc_topology_load(numa->topo)) {
		err = neg_errno();
		goto fail;
	}
	numa->this_system = hwloc_topology_is_thissystem(numa->topo);
	err = flatten(numa);
	if (err)
		goto fail;
	*out = numa;
	return 0;
fail:
	wharf_numa_close(numa);
	return err;
}

void wharf_numa_close(struct wharf_numa *numa)
{
	if (!numa)
		return;
	hwloc_topology_destroy(numa->topo);
	free(numa->node_os);
	free(numa->cpus);
	free(numa);
}

bool wharf_numa_is_this_system(const struct wharf_numa *numa)
{
	return numa->this_system;
}

unsigned wharf_numa_node_count(const struct wharf_numa *numa)
{
	return numa->nnodes;
}

uint64_t wharf_numa_all_nodes(const struct wharf_numa *numa)
{
	return numa->nnodes >= 64 ? UINT64_MAX
				  : (UINT64_C(1) << numa->nnodes) - 1;
}

int wharf_numa_node_os_index(const struct wharf_numa *numa, unsigned node)
{
	return node < numa->nnodes ? numa->node_os[node] : -EINVAL;
}

unsigned wharf_numa_cpu_count(const struct wharf_numa *numa, uint64_t nodes)
{
	unsigned n = 0;

	for (unsigned i = 0; i < numa->ncpus; i++)
		n += wnuma_mask_has(nodes, numa->cpus[i].node);
	return n;
}

unsigned wharf_numa_core_count(const struct wharf_numa *numa, uint64_t nodes)
{
	unsigned n = 0;

	for (unsigned i = 0; i < numa->ncpus; i++)
		n += numa->cpus[i].smt == 0 &&
		     wnuma_mask_has(nodes, numa->cpus[i].node);
	return n;
}

int wharf_numa_node_cpus(const struct wharf_numa *numa, unsigned node,
			 int *cpus, size_t cap)
{
	size_t n = 0;

	if (node >= numa->nnodes)
		return -EINVAL;
	for (unsigned i = 0; i < numa->ncpus; i++) {
		if (numa->cpus[i].node != node)
			continue;
		if (cpus && n < cap)
			cpus[n] = numa->cpus[i].os;
		n++;
	}
	return (int)n;
}

const struct wnuma_cpu *wnuma_find_cpu(const struct wharf_numa *numa, int os)
{
	struct wnuma_cpu key = {.os = os};

	return bsearch(&key, numa->cpus, numa->ncpus, sizeof(key), cmp_cpu_os);
}

int wharf_numa_cpu_node(const struct wharf_numa *numa, int cpu)
{
	const struct wnuma_cpu *c = wnuma_find_cpu(numa, cpu);

	return c ? (int)c->node : -EINVAL;
}

int wharf_numa_cpus_nodes(const struct wharf_numa *numa, const int *cpus,
			  size_t ncpus, uint64_t *nodes)
{
	uint64_t mask = 0;

	if ((!cpus && ncpus) || !nodes)
		return -EINVAL;
	for (size_t i = 0; i < ncpus; i++) {
		int node = wharf_numa_cpu_node(numa, cpus[i]);

		if (node < 0)
			return node;
		if (node < 64)
			mask |= UINT64_C(1) << node;
	}
	*nodes = mask;
	return 0;
}
