// C entry points to core/ring.h for C++ tests (the ring uses C11 _Atomic).
#ifndef WHARF_TESTS_UNIT_CORE_RING_SHIM_H
#define WHARF_TESTS_UNIT_CORE_RING_SHIM_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wharf_shard;
typedef void (*shim_ring_fn)(struct wharf_shard *shard, void *arg);
struct shim_ring;

struct shim_ring *shim_ring_new(size_t depth);
void shim_ring_free(struct shim_ring *ring);
int shim_ring_push(struct shim_ring *ring, shim_ring_fn fn, void *arg);
bool shim_ring_pop(struct shim_ring *ring, shim_ring_fn *fn, void **arg);
bool shim_ring_ready(const struct shim_ring *ring);

#ifdef __cplusplus
}
#endif

#endif
