/*
 * Registered-buffer pool: one region of count * stride bytes, one MR over
 * it, and a stack of free buffer indexes.  get pops, put pushes (LIFO keeps
 * recently used buffers warm in cache); a per-buffer flag catches double
 * puts.  The owning shard is the only user, so there is no lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "base/opts.h"
#include "numa/topo.h"

#define STRIDE_ALIGN 64

struct wharf_buf_pool {
	char *base;
	size_t stride;
	size_t region_size;
	uint32_t count;
	uint32_t nfree;
	uint32_t *free_stack; /* [count], free indexes, top at nfree - 1 */
	bool *is_free;	      /* [count] */
	struct ibv_mr *mr;
	struct wharf_numa_arena *arena;
};

static void *pool_alloc(struct wharf_numa_arena *arena, size_t size,
			size_t align)
{
	if (arena)
		return wharf_numa_alloc(arena, size, align, false);
	size = (size + align - 1) / align * align;
	return aligned_alloc(align, size);
}

static void pool_free(struct wharf_numa_arena *arena, void *p)
{
	if (arena)
		wharf_numa_free(arena, p);
	else
		free(p);
}

void wharf_buf_pool_opts_init(struct wharf_buf_pool_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
}

int wharf_buf_pool_create(const struct wharf_buf_pool_opts *opts_in,
			  struct wharf_buf_pool **out)
{
	struct wharf_buf_pool_opts opts;
	struct wharf_buf_pool *pool;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int err;

	if (!opts_in || !out)
		return -EINVAL;
	err = wbase_opts_copy(&opts, sizeof(opts), opts_in);
	if (err)
		return err;
	if (!opts.buf_size || !opts.count || opts.count > (UINT32_C(1) << 31) ||
	    opts.buf_size > SIZE_MAX / 2)
		return -EINVAL;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->arena = opts.arena;
	pool->count = opts.count;
	pool->stride = (opts.buf_size + STRIDE_ALIGN - 1) / STRIDE_ALIGN *
		       STRIDE_ALIGN;
	if (pool->stride > SIZE_MAX / opts.count) {
		free(pool);
		return -EINVAL;
	}
	pool->region_size = pool->stride * opts.count;
	pool->base = pool_alloc(opts.arena, pool->region_size, page);
	pool->free_stack =
		pool_alloc(opts.arena, sizeof(uint32_t) * opts.count, 64);
	pool->is_free = pool_alloc(opts.arena, opts.count, 64);
	if (!pool->base || !pool->free_stack || !pool->is_free) {
		err = -ENOMEM;
		goto fail;
	}
	if (opts.pd) {
		int access = opts.access ? opts.access : IBV_ACCESS_LOCAL_WRITE;

		pool->mr = ibv_reg_mr(opts.pd, pool->base, pool->region_size,
				      access);
		if (!pool->mr) {
			err = errno ? -errno : -EINVAL;
			goto fail;
		}
	}
	/* Buffer 0 on top: the first get returns the lowest address. */
	for (uint32_t i = 0; i < opts.count; i++) {
		pool->free_stack[i] = opts.count - 1 - i;
		pool->is_free[i] = true;
	}
	pool->nfree = opts.count;
	*out = pool;
	return 0;
fail:
	wharf_buf_pool_destroy(pool);
	return err;
}

void wharf_buf_pool_destroy(struct wharf_buf_pool *pool)
{
	if (!pool)
		return;
	if (pool->mr)
		ibv_dereg_mr(pool->mr);
	pool_free(pool->arena, pool->base);
	pool_free(pool->arena, pool->free_stack);
	pool_free(pool->arena, pool->is_free);
	free(pool);
}

void *wharf_buf_pool_get(struct wharf_buf_pool *pool)
{
	uint32_t index;

	if (!pool->nfree)
		return NULL;
	index = pool->free_stack[--pool->nfree];
	pool->is_free[index] = false;
	return pool->base + (size_t)index * pool->stride;
}

int64_t wharf_buf_pool_index(const struct wharf_buf_pool *pool, const void *buf)
{
	uintptr_t offset = (uintptr_t)buf - (uintptr_t)pool->base;

	if ((uintptr_t)buf < (uintptr_t)pool->base ||
	    offset >= pool->region_size || offset % pool->stride)
		return -EINVAL;
	return (int64_t)(offset / pool->stride);
}

int wharf_buf_pool_put(struct wharf_buf_pool *pool, void *buf)
{
	int64_t index = wharf_buf_pool_index(pool, buf);

	if (index < 0)
		return (int)index;
	if (pool->is_free[index])
		return -EALREADY;
	pool->is_free[index] = true;
	pool->free_stack[pool->nfree++] = (uint32_t)index;
	return 0;
}

void *wharf_buf_pool_buf(const struct wharf_buf_pool *pool, uint32_t index)
{
	return index < pool->count ? pool->base + (size_t)index * pool->stride
				   : NULL;
}

size_t wharf_buf_pool_stride(const struct wharf_buf_pool *pool)
{
	return pool->stride;
}

uint32_t wharf_buf_pool_count(const struct wharf_buf_pool *pool)
{
	return pool->count;
}

uint32_t wharf_buf_pool_free_count(const struct wharf_buf_pool *pool)
{
	return pool->nfree;
}

struct ibv_mr *wharf_buf_pool_mr(const struct wharf_buf_pool *pool)
{
	return pool->mr;
}

uint32_t wharf_buf_pool_lkey(const struct wharf_buf_pool *pool)
{
	return pool->mr ? pool->mr->lkey : 0;
}
