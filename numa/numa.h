/*
 * wharf numa: where shards run and where their memory lives.
 *
 * Three parts:
 *  - topology: a snapshot of the machine (or of an hwloc synthetic
 *    description, for tests) taken with hwloc: NUMA nodes, their cores and
 *    CPUs, and which nodes an RDMA device is local to;
 *  - placement: pure functions over that snapshot that decide which CPUs get
 *    shards and which shard a new connection lands on;
 *  - memory: a jemalloc arena per NUMA node whose pages are bound to the node,
 *    and a registered-buffer pool built on it.
 *
 * Nodes are numbered by hwloc logical index (0 .. node_count - 1); CPUs by
 * operating-system index (the numbers sched_setaffinity uses).  Sets of nodes
 * are uint64_t masks (bit n = node n); nodes past 63 cannot be named in a mask
 * and are never "local".
 */
#ifndef WHARF_NUMA_H
#define WHARF_NUMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ibv_mr;
struct ibv_pd;

/* ------------------------------------------------------------------------ */
/* Topology                                                                  */
/* ------------------------------------------------------------------------ */

/** A topology snapshot (opaque); immutable once opened. */
struct wharf_numa;

/** Options for wharf_numa_open(). */
struct wharf_numa_opts {
	/** sizeof(struct wharf_numa_opts) as compiled by the caller. */
	size_t size;
	/**
	 * hwloc synthetic description (e.g. "pack:2 numa:1 core:4 pu:2"), or
	 * NULL for this machine.  A synthetic topology supports every query
	 * and the placement functions, but not binding or device lookup.
	 */
	const char *synthetic;
};

/**
 * wharf_numa_opts_init - zero @opts and set its size.
 * @opts: the options to fill, or NULL (nothing is done).
 *
 * Start every struct wharf_numa_opts with this call, then set the fields
 * to change, so that a caller built against this header passes a valid
 * size to wharf_numa_open().
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_numa_opts_init(struct wharf_numa_opts *opts);

/**
 * wharf_numa_open - take a topology snapshot.
 * @opts: options, or NULL for this machine.  Not retained.
 * @out: receives the snapshot, owned by the caller (wharf_numa_close()).
 *
 * Only the CPUs and nodes this process may use are included: those of
 * its cgroup's cpuset and of its CPU binding (every thread's affinity
 * together: taskset, numactl --physcpubind), so that shards are placed
 * only there and @opts' explicit CPUs must be among them.
 *
 * Return: 0; -EINVAL for a bad @opts (size, synthetic string) or a topology
 * with no NUMA node or CPU; -ENOMEM; -errno from hwloc.
 * Context: any thread; blocks while hwloc reads sysfs (milliseconds).
 * No RCU rule.
 */
int wharf_numa_open(const struct wharf_numa_opts *opts,
		    struct wharf_numa **out);

/**
 * wharf_numa_close - free a snapshot.
 * @numa: snapshot or NULL.  Arenas created on it must be destroyed first.
 * Context: any thread, once nothing else uses @numa.  No RCU rule.
 */
void wharf_numa_close(struct wharf_numa *numa);

/**
 * wharf_numa_is_this_system - whether @numa describes this machine (not a
 * synthetic topology), i.e. whether binding calls can work.
 * Context: any thread; non-blocking.  No RCU rule.
 */
bool wharf_numa_is_this_system(const struct wharf_numa *numa);

/**
 * wharf_numa_node_count - number of NUMA nodes (at least 1).
 * Context: any thread; non-blocking.  No RCU rule.
 */
unsigned wharf_numa_node_count(const struct wharf_numa *numa);

/**
 * wharf_numa_all_nodes - mask of every node that fits in a mask.
 * Context: any thread; non-blocking.  No RCU rule.
 */
uint64_t wharf_numa_all_nodes(const struct wharf_numa *numa);

/**
 * wharf_numa_node_os_index - the kernel's number for node @node (the one
 * get_mempolicy(2) and /proc/self/numa_maps report).
 * Return: the OS index, or -EINVAL when @node does not exist.
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_numa_node_os_index(const struct wharf_numa *numa, unsigned node);

/**
 * wharf_numa_cpu_count - number of CPUs (hardware threads) in @nodes.
 * @nodes: node mask; 0 means every node.
 * Context: any thread; non-blocking.  No RCU rule.
 */
unsigned wharf_numa_cpu_count(const struct wharf_numa *numa, uint64_t nodes);

/**
 * wharf_numa_core_count - number of physical cores in @nodes (a core with
 * several hardware threads counts once).
 * @nodes: node mask; 0 means every node.
 * Context: any thread; non-blocking.  No RCU rule.
 */
unsigned wharf_numa_core_count(const struct wharf_numa *numa, uint64_t nodes);

/**
 * wharf_numa_node_cpus - CPUs of node @node, in increasing OS index.
 * @cpus: array of @cap entries, filled with the first min(count, @cap) CPUs.
 * Return: the node's CPU count (may exceed @cap), or -EINVAL when @node does
 * not exist.
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_numa_node_cpus(const struct wharf_numa *numa, unsigned node,
			 int *cpus, size_t cap);

/**
 * wharf_numa_cpu_node - the node that CPU @cpu (OS index) belongs to.
 * Return: node index, or -EINVAL when @cpu is not in the snapshot.
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_numa_cpu_node(const struct wharf_numa *numa, int cpu);

/**
 * wharf_numa_cpus_nodes - the nodes that a set of CPUs touches, e.g. a
 * device's local CPUs.
 * @cpus: @ncpus OS indexes.
 * @nodes: receives the node mask.
 * Return: 0, or -EINVAL when a CPU is not in the snapshot.
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_numa_cpus_nodes(const struct wharf_numa *numa, const int *cpus,
			  size_t ncpus, uint64_t *nodes);

/**
 * wharf_numa_device_nodes - the nodes RDMA device @ibdev (e.g. "mlx5_0") is
 * local to, from hwloc_ibv_get_device_cpuset().
 * @nodes: receives the node mask; every node when the kernel does not know
 * the device's locality (virtual devices such as rxe).
 * Return: 0; -ENODEV when no verbs device has that name; -EOPNOTSUPP on a
 * synthetic topology; -EINVAL for NULL arguments; -errno from verbs/hwloc.
 * Context: any thread; blocks briefly (sysfs reads).  No RCU rule.
 */
int wharf_numa_device_nodes(const struct wharf_numa *numa, const char *ibdev,
			    uint64_t *nodes);

/* ------------------------------------------------------------------------ */
/* Placement (pure: same inputs, same answer; nothing touched)              */
/* ------------------------------------------------------------------------ */

/**
 * wharf_numa_default_shards - default shard count: the number of physical
 * cores on the nodes in @local_nodes, or on every node when @local_nodes is 0
 * (locality unknown).
 * Context: any thread; non-blocking.  No RCU rule.
 */
unsigned wharf_numa_default_shards(const struct wharf_numa *numa,
				   uint64_t local_nodes);

/**
 * wharf_numa_place_shards - choose a CPU for each of @nshards shards.
 * @local_nodes: nodes local to the RDMA device; 0 when unknown (then every
 * node counts as local).
 * @cpus: array of @nshards entries, receives OS CPU indexes.
 *
 * Order: one CPU (the first hardware thread) per core of the local nodes,
 * nodes by index, cores in order; then one per core of the other nodes; then
 * the remaining hardware threads of local cores, then of remote cores.  With
 * more shards than CPUs the order wraps around (CPUs are shared).
 *
 * Return: 0, or -EINVAL when @nshards is 0 or @cpus is NULL.
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_numa_place_shards(const struct wharf_numa *numa, uint64_t local_nodes,
			    unsigned nshards, int *cpus);

/** A shard as seen by wharf_numa_pick_shard(). */
struct wharf_numa_shard_load {
	/** Node the shard runs on. */
	unsigned node;
	/** Current load in any unit the caller likes (e.g. connections). */
	uint64_t load;
};

/**
 * wharf_numa_pick_shard - the shard a new connection should land on.
 * @shards: @nshards entries.
 * @local_nodes: nodes local to the connection's device; 0 when unknown (then
 * every shard is local).
 * @remote_penalty: load added to shards on other nodes, i.e. how much busier
 * a local shard may be before a remote one wins.
 *
 * Picks the minimum of load + (local ? 0 : @remote_penalty), the lowest index
 * among equals.  Saturates instead of overflowing.
 *
 * Return: the chosen index, or -EINVAL when @nshards is 0 or @shards NULL.
 * Context: any thread; non-blocking.  No RCU rule.
 */
int wharf_numa_pick_shard(const struct wharf_numa_shard_load *shards,
			  size_t nshards, uint64_t local_nodes,
			  uint64_t remote_penalty);

/* ------------------------------------------------------------------------ */
/* Binding                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * wharf_numa_bind_thread - pin the calling thread to CPU @cpu and bind its
 * memory allocations (MPOL_BIND) to @cpu's node.  On a single-node machine
 * a refused memory binding (e.g. a container without CAP_SYS_NICE) is
 * ignored: there is nowhere else for memory to go.
 * Return: 0; -EINVAL when @cpu is not in the snapshot; -EOPNOTSUPP on a
 * synthetic topology; -errno from sched_setaffinity/set_mempolicy.
 * Context: the thread to bind; non-blocking.  No RCU rule.
 */
int wharf_numa_bind_thread(const struct wharf_numa *numa, int cpu);

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

/**
 * A jemalloc arena whose pages are bound to one NUMA node (opaque).
 * Allocation takes jemalloc's arena lock (no thread cache, so an object
 * always comes from its node); keep it off the per-message path and use
 * a wharf_buf_pool there.
 */
struct wharf_numa_arena;

/**
 * wharf_numa_arena_create - create an arena for node @node.
 * @numa: must outlive the arena.
 * @out: receives the arena, owned by the caller.
 *
 * On this machine every page the arena maps is bound to @node with
 * MPOL_BIND before first touch, whichever thread allocates (on a
 * single-node machine, as far as the kernel allows).  On a synthetic
 * topology the arena works but binds nothing.
 *
 * Return: 0; -EINVAL for a node that does not exist; -ENOMEM; -errno from
 * jemalloc's mallctl.
 * Context: any thread; may block (mmap).  No RCU rule.
 */
int wharf_numa_arena_create(struct wharf_numa *numa, unsigned node,
			    struct wharf_numa_arena **out);

/**
 * wharf_numa_arena_destroy - release an arena and every page it mapped.
 * @arena: arena or NULL.  Objects still allocated from it become invalid;
 * see wharf_numa_arena_live().
 * Context: any thread, once no thread uses @arena.  No RCU rule.
 */
void wharf_numa_arena_destroy(struct wharf_numa_arena *arena);

/**
 * wharf_numa_arena_node - node index the arena serves.
 * Context: any thread; non-blocking.  No RCU rule.
 */
unsigned wharf_numa_arena_node(const struct wharf_numa_arena *arena);

/**
 * wharf_numa_arena_live - number of objects allocated and not yet freed
 * (leak check for code whose objects live in arenas).
 * Context: any thread; non-blocking; the value may be stale.  No RCU rule.
 */
size_t wharf_numa_arena_live(const struct wharf_numa_arena *arena);

/**
 * wharf_numa_alloc - allocate @size bytes (> 0) on the arena's node.
 * @align: 0 for the natural alignment (16), else a power of two.
 * @zero: whether to zero the memory.
 * Return: the memory (free with wharf_numa_free()), or NULL with errno set to
 * EINVAL (size 0, bad alignment) or ENOMEM.
 * Context: any thread; takes the arena lock, may mmap.  No RCU rule.
 */
void *wharf_numa_alloc(struct wharf_numa_arena *arena, size_t size,
		       size_t align, bool zero);

/**
 * wharf_numa_free - free memory from wharf_numa_alloc() on the same arena.
 * @p: memory or NULL.
 * Context: any thread; takes the arena lock.  No RCU rule: memory that RCU
 * readers may still see must only be freed after a grace period.
 */
void wharf_numa_free(struct wharf_numa_arena *arena, void *p);

/* ------------------------------------------------------------------------ */
/* Registered-buffer pool                                                    */
/* ------------------------------------------------------------------------ */

/**
 * A fixed set of equal-size buffers in one memory region, registered as one
 * MR (opaque).  Owned by one shard: get/put are O(1) and take no lock, so
 * only the owning thread may call them.
 */
struct wharf_buf_pool;

/** Options for wharf_buf_pool_create(). */
struct wharf_buf_pool_opts {
	/** sizeof(struct wharf_buf_pool_opts) as compiled by the caller. */
	size_t size;
	/** Arena the region comes from; NULL = the default allocator. */
	struct wharf_numa_arena *arena;
	/** PD to register the region on; NULL = not registered (lkey 0). */
	struct ibv_pd *pd;
	/** Bytes per buffer (> 0); the stride is this rounded up to 64. */
	size_t buf_size;
	/** Number of buffers (1 .. 2^31). */
	uint32_t count;
	/** ibv_access_flags for the MR; 0 = IBV_ACCESS_LOCAL_WRITE. */
	int access;
};

/**
 * wharf_buf_pool_opts_init - zero @opts and set its size.
 * @opts: the options to fill, or NULL (nothing is done).
 *
 * Start every struct wharf_buf_pool_opts with this call, then set the fields
 * to change, so that a caller built against this header passes a valid
 * size to wharf_buf_pool_create().
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_buf_pool_opts_init(struct wharf_buf_pool_opts *opts);

/**
 * wharf_buf_pool_create - allocate (and register) a pool; all buffers free.
 * @opts: options (required); @opts->arena and @opts->pd must outlive the pool.
 * @out: receives the pool, owned by the caller.
 * Return: 0; -EINVAL for bad options; -ENOMEM; -errno from ibv_reg_mr.
 * Context: any thread; may block (allocation, registration pins pages).
 * No RCU rule.
 */
int wharf_buf_pool_create(const struct wharf_buf_pool_opts *opts,
			  struct wharf_buf_pool **out);

/**
 * wharf_buf_pool_destroy - deregister and free the pool and all buffers.
 * @pool: pool or NULL.  Buffers still out become invalid: destroy the QPs
 * that may still write into them first.
 * Context: the owning thread (or any once the owner is gone); may block
 * (deregistration).  No RCU rule.
 */
void wharf_buf_pool_destroy(struct wharf_buf_pool *pool);

/**
 * wharf_buf_pool_get - take a free buffer, O(1).
 * Return: the buffer (last put, first out), or NULL when none is free.
 * Context: the owning thread only; non-blocking, no lock.  No RCU rule.
 */
void *wharf_buf_pool_get(struct wharf_buf_pool *pool);

/**
 * wharf_buf_pool_put - return a buffer taken with wharf_buf_pool_get(), O(1).
 * @buf: the exact pointer that get returned.
 * Return: 0; -EINVAL when @buf is not a buffer of @pool; -EALREADY when it is
 * already free (double put).  Nothing changes on error.
 * Context: the owning thread only; non-blocking, no lock.  No RCU rule.
 */
int wharf_buf_pool_put(struct wharf_buf_pool *pool, void *buf);

/**
 * wharf_buf_pool_index - index (0 .. count-1) of buffer @buf, e.g. to carry
 * in a work request id.
 * Return: the index, or -EINVAL when @buf is not a buffer of @pool.
 * Context: any thread; non-blocking.  No RCU rule.
 */
int64_t wharf_buf_pool_index(const struct wharf_buf_pool *pool,
			     const void *buf);

/**
 * wharf_buf_pool_buf - buffer number @index, or NULL when out of range.
 * Context: any thread; non-blocking.  No RCU rule.
 */
void *wharf_buf_pool_buf(const struct wharf_buf_pool *pool, uint32_t index);

/**
 * wharf_buf_pool_stride - distance in bytes between consecutive buffers (the
 * usable size of each).
 * Context: any thread; non-blocking.  No RCU rule.
 */
size_t wharf_buf_pool_stride(const struct wharf_buf_pool *pool);

/**
 * wharf_buf_pool_count - number of buffers.
 * Context: any thread; non-blocking.  No RCU rule.
 */
uint32_t wharf_buf_pool_count(const struct wharf_buf_pool *pool);

/**
 * wharf_buf_pool_free_count - number of buffers currently free.
 * Context: the owning thread; non-blocking.  No RCU rule.
 */
uint32_t wharf_buf_pool_free_count(const struct wharf_buf_pool *pool);

/**
 * wharf_buf_pool_mr - the MR covering every buffer, or NULL when the pool is
 * not registered.
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct ibv_mr *wharf_buf_pool_mr(const struct wharf_buf_pool *pool);

/**
 * wharf_buf_pool_lkey - the MR's lkey for scatter/gather entries, 0 when the
 * pool is not registered.
 * Context: any thread; non-blocking.  No RCU rule.
 */
uint32_t wharf_buf_pool_lkey(const struct wharf_buf_pool *pool);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_NUMA_H */
