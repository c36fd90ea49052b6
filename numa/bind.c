/*
 * The parts of numa/ that talk to this machine: RDMA device locality
 * (verbs + hwloc) and binding the calling thread to a CPU and its node.
 */
#include <errno.h>
#include <string.h>

#include <hwloc/openfabrics-verbs.h>
#include <infiniband/verbs.h>

#include "numa/topo.h"

static int neg_errno(void)
{
	return errno ? -errno : -EINVAL;
}

static uint64_t cpuset_nodes(const struct wharf_numa *numa,
			     hwloc_const_cpuset_t set)
{
	uint64_t mask = 0;

	for (unsigned i = 0; i < numa->ncpus; i++)
		if (hwloc_bitmap_isset(set, (unsigned)numa->cpus[i].os) &&
		    numa->cpus[i].node < 64)
			mask |= UINT64_C(1) << numa->cpus[i].node;
	return mask;
}

int wharf_numa_device_nodes(const struct wharf_numa *numa, const char *ibdev,
			    uint64_t *nodes)
{
	struct ibv_device **list, *dev = NULL;
	hwloc_cpuset_t set;
	int n = 0, err = 0;

	if (!numa || !ibdev || !nodes)
		return -EINVAL;
	if (!numa->this_system)
		return -EOPNOTSUPP;
	list = ibv_get_device_list(&n);
	if (!list)
		return errno == ENOSYS ? -ENODEV : neg_errno();
	for (int i = 0; i < n && !dev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), ibdev))
			dev = list[i];
	set = hwloc_bitmap_alloc();
	if (!dev)
		err = -ENODEV;
	else if (!set)
		err = -ENOMEM;
	else if (hwloc_ibv_get_device_cpuset(numa->topo, dev, set))
		err = neg_errno();
	if (!err) {
		*nodes = cpuset_nodes(numa, set);
		/* Locality outside the CPUs we may use tells us nothing. */
		if (!*nodes)
			*nodes = wharf_numa_all_nodes(numa);
	}
	hwloc_bitmap_free(set);
	ibv_free_device_list(list);
	return err;
}

int wharf_numa_bind_thread(const struct wharf_numa *numa, int cpu)
{
	const struct wnuma_cpu *c = wnuma_find_cpu(numa, cpu);
	hwloc_bitmap_t cpus, nodes;
	int err = 0;

	if (!c)
		return -EINVAL;
	if (!numa->this_system)
		return -EOPNOTSUPP;
	cpus = hwloc_bitmap_alloc();
	nodes = hwloc_bitmap_alloc();
	if (!cpus || !nodes) {
		err = -ENOMEM;
		goto out;
	}
	hwloc_bitmap_only(cpus, (unsigned)c->os);
	hwloc_bitmap_only(nodes, (unsigned)numa->node_os[c->node]);
	if (hwloc_set_cpubind(numa->topo, cpus, HWLOC_CPUBIND_THREAD)) {
		err = neg_errno();
		goto out;
	}
	/* STRICT: MPOL_BIND, not the MPOL_PREFERRED_MANY hwloc may pick. */
	if (hwloc_set_membind(numa->topo, nodes, HWLOC_MEMBIND_BIND,
			      HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET |
				      HWLOC_MEMBIND_STRICT) &&
	    numa->nnodes > 1) /* one node: a refusal (container) is harmless */
		err = neg_errno();
out:
	hwloc_bitmap_free(cpus);
	hwloc_bitmap_free(nodes);
	return err;
}
