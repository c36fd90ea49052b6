/*
 * NUMA-node arenas on jemalloc.
 *
 * Each wharf_numa_arena is a jemalloc arena ("arenas.create") with its own
 * extent hooks: every region jemalloc asks for is mmap'ed and, before any
 * page is touched, bound to the node with mbind(MPOL_BIND).  So an object
 * from the arena lives on the node whichever thread allocates it.  The
 * hooks get a pointer to the extent_hooks_t embedded first in our struct,
 * which is how they find the node mask.  Allocations bypass the thread
 * cache (MALLOCX_TCACHE_NONE): a cached object could come from another
 * arena.  The hooks must not allocate: jemalloc may hold its locks.
 *
 * Under AddressSanitizer, memory is poisoned from free to the next
 * allocation (ASan does not see jemalloc's allocations otherwise), and
 * unpoisoned again before it is unmapped.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <jemalloc/jemalloc.h>
#include <linux/mempolicy.h>

#include "numa/topo.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define NODEMASK_LONGS 16 /* nodes 0..1023 */

struct wharf_numa_arena {
	extent_hooks_t hooks; /* first: the hooks' only way back to us */
	unsigned node;
	unsigned index; /* jemalloc arena index */
	bool bind;
	bool bind_optional; /* one node: a refused mbind costs nothing */
	unsigned long nodemask[NODEMASK_LONGS];
	_Atomic size_t live;
};

static struct wharf_numa_arena *of_hooks(extent_hooks_t *hooks)
{
	return (struct wharf_numa_arena *)hooks;
}

static void *extent_alloc(extent_hooks_t *hooks, void *new_addr, size_t size,
			  size_t align, bool *zero, bool *commit, unsigned ind)
{
	struct wharf_numa_arena *arena = of_hooks(hooks);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len, lead, trail;
	uintptr_t start;
	char *map;

	(void)ind;
	if (new_addr) /* in-place growth: let jemalloc find another way */
		return NULL;
	if (align < page)
		align = page;
	len = size + align - page;
	if (len < size)
		return NULL;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	start = ((uintptr_t)map + align - 1) & ~(uintptr_t)(align - 1);
	lead = start - (uintptr_t)map;
	trail = len - lead - size;
	if (lead)
		munmap(map, lead);
	if (trail)
		munmap((char *)start + size, trail);
	if (arena->bind &&
	    syscall(SYS_mbind, (void *)start, size, MPOL_BIND, arena->nodemask,
		    (unsigned long)NODEMASK_LONGS * 64 + 1, 0) &&
	    !arena->bind_optional) {
		munmap((void *)start, size);
		return NULL;
	}
	*zero = true;
	*commit = true;
	return (void *)start;
}

static bool extent_dalloc(extent_hooks_t *hooks, void *addr, size_t size,
			  bool committed, unsigned ind)
{
	(void)hooks, (void)committed, (void)ind;
	UNPOISON(addr, size);
	return munmap(addr, size) != 0;
}

static void extent_destroy(extent_hooks_t *hooks, void *addr, size_t size,
			   bool committed, unsigned ind)
{
	(void)hooks, (void)committed, (void)ind;
	UNPOISON(addr, size);
	munmap(addr, size);
}

static bool extent_purge(extent_hooks_t *hooks, void *addr, size_t size,
			 size_t offset, size_t length, unsigned ind)
{
	(void)hooks, (void)size, (void)ind;
	/* The binding stays with the mapping; refaulted pages obey it. */
	return madvise((char *)addr + offset, length, MADV_DONTNEED) != 0;
}

/* Any of our regions can be split or merged: munmap takes any range. */
static bool extent_split(extent_hooks_t *hooks, void *addr, size_t size,
			 size_t size_a, size_t size_b, bool committed,
			 unsigned ind)
{
	(void)hooks, (void)addr, (void)size, (void)size_a, (void)size_b;
	(void)committed, (void)ind;
	return false;
}

static bool extent_merge(extent_hooks_t *hooks, void *addr_a, size_t size_a,
			 void *addr_b, size_t size_b, bool committed,
			 unsigned ind)
{
	(void)hooks, (void)addr_a, (void)size_a, (void)addr_b, (void)size_b;
	(void)committed, (void)ind;
	return false;
}

static const extent_hooks_t node_hooks = {
	.alloc = extent_alloc,
	.dalloc = extent_dalloc,
	.destroy = extent_destroy,
	.purge_forced = extent_purge,
	.split = extent_split,
	.merge = extent_merge,
};

int wharf_numa_arena_create(struct wharf_numa *numa, unsigned node,
			    struct wharf_numa_arena **out)
{
	struct wharf_numa_arena *arena;
	extent_hooks_t *hooks;
	size_t len;
	int err;

	if (!numa || !out || node >= numa->nnodes)
		return -EINVAL;
	if (numa->node_os[node] >= NODEMASK_LONGS * 64)
		return -EINVAL;
	/* Aligned for the atomic counter; freed with free(). */
	arena = calloc(1, sizeof(*arena));
	if (!arena)
		return -ENOMEM;
	arena->hooks = node_hooks;
	arena->node = node;
	arena->bind = numa->this_system;
	/* E.g. containers that forbid mbind without CAP_SYS_NICE. */
	arena->bind_optional = numa->nnodes == 1;
	arena->nodemask[numa->node_os[node] / 64] =
		1UL << (numa->node_os[node] % 64);
	hooks = &arena->hooks;
	len = sizeof(arena->index);
	err = mallctl("arenas.create", &arena->index, &len, &hooks,
		      sizeof(hooks));
	if (err) {
		free(arena);
		return -err;
	}
	*out = arena;
	return 0;
}

void wharf_numa_arena_destroy(struct wharf_numa_arena *arena)
{
	char name[64];

	if (!arena)
		return;
	snprintf(name, sizeof(name), "arena.%u.destroy", arena->index);
	/* Unmaps every extent through our hooks; the index is recycled. */
	mallctl(name, NULL, NULL, NULL, 0);
	free(arena);
}

unsigned wharf_numa_arena_node(const struct wharf_numa_arena *arena)
{
	return arena->node;
}

size_t wharf_numa_arena_live(const struct wharf_numa_arena *arena)
{
	return atomic_load_explicit(&arena->live, memory_order_relaxed);
}

void *wharf_numa_alloc(struct wharf_numa_arena *arena, size_t size,
		       size_t align, bool zero)
{
	int flags = MALLOCX_ARENA(arena->index) | MALLOCX_TCACHE_NONE;
	void *p;

	if (!size || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	if (align)
		flags |= MALLOCX_ALIGN(align);
	p = mallocx(size, flags);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	UNPOISON(p, size);
#if defined(__SANITIZE_ADDRESS__)
	/* The usable size costs a lookup: only ASan builds want it. */
	POISON((char *)p + size, sallocx(p, 0) - size);
#endif
	/* Not MALLOCX_ZERO: jemalloc's memset would hit the poison. */
	if (zero)
		memset(p, 0, size);
	atomic_fetch_add_explicit(&arena->live, 1, memory_order_relaxed);
	return p;
}

void wharf_numa_free(struct wharf_numa_arena *arena, void *p)
{
	if (!p)
		return;
	atomic_fetch_sub_explicit(&arena->live, 1, memory_order_relaxed);
#if defined(__SANITIZE_ADDRESS__)
	POISON(p, sallocx(p, 0));
#endif
	dallocx(p, MALLOCX_TCACHE_NONE);
}
