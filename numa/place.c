/*
 * Placement policy: pure functions over the topology snapshot.
 *
 * Shards: sort every hardware thread by (SMT rank, remote?, node, core) so
 * that the first picks are one thread per core next to the device, then one
 * per core elsewhere, then the hyper-thread siblings in the same order.
 * Connections: least (load + remote penalty), lowest index wins ties.
 */
#include <errno.h>
#include <stdlib.h>

#include "numa/topo.h"

struct ranked_cpu {
	uint64_t key;
	int os;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked_cpu *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

static uint64_t rank_key(const struct wnuma_cpu *c, uint64_t local)
{
	uint64_t remote = !wnuma_mask_has(local, c->node);

	return (uint64_t)c->smt << 48 | remote << 47 | (uint64_t)c->node << 24 |
	       (c->core & 0xffffff);
}

unsigned wharf_numa_default_shards(const struct wharf_numa *numa,
				   uint64_t local_nodes)
{
	unsigned n = wharf_numa_core_count(numa, local_nodes);

	/* A mask naming only CPU-less nodes is no better than unknown. */
	return n ? n : wharf_numa_core_count(numa, 0);
}

int wharf_numa_place_shards(const struct wharf_numa *numa, uint64_t local_nodes,
			    unsigned nshards, int *cpus)
{
	struct ranked_cpu *ranked;

	if (!numa || !nshards || !cpus)
		return -EINVAL;
	ranked = calloc(numa->ncpus, sizeof(*ranked));
	if (!ranked)
		return -ENOMEM;
	for (unsigned i = 0; i < numa->ncpus; i++) {
		ranked[i].key = rank_key(&numa->cpus[i], local_nodes);
		ranked[i].os = numa->cpus[i].os;
	}
	qsort(ranked, numa->ncpus, sizeof(*ranked), cmp_ranked);
	for (unsigned i = 0; i < nshards; i++)
		cpus[i] = ranked[i % numa->ncpus].os;
	free(ranked);
	return 0;
}

int wharf_numa_pick_shard(const struct wharf_numa_shard_load *shards,
			  size_t nshards, uint64_t local_nodes,
			  uint64_t remote_penalty)
{
	uint64_t best_cost = UINT64_MAX;
	int best = -EINVAL;

	if (!shards || !nshards || nshards > INT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < nshards; i++) {
		uint64_t cost = shards[i].load;

		if (!wnuma_mask_has(local_nodes, shards[i].node))
			cost = cost > UINT64_MAX - remote_penalty
				       ? UINT64_MAX
				       : cost + remote_penalty;
		if (best < 0 || cost < best_cost) {
			best_cost = cost;
			best = (int)i;
		}
	}
	return best;
}
