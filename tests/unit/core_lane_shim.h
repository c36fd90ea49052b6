// C entry points to core/lane.h for C++ tests (the lane uses C11 _Atomic).
#ifndef WHARF_TESTS_UNIT_CORE_LANE_SHIM_H
#define WHARF_TESTS_UNIT_CORE_LANE_SHIM_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wharf_shard;
typedef void (*shim_lane_fn)(struct wharf_shard *shard, void *arg);
struct shim_lane;

struct shim_lane *shim_lane_new(size_t depth);
void shim_lane_free(struct shim_lane *lane);
int shim_lane_put(struct shim_lane *lane, shim_lane_fn fn, void *arg);
bool shim_lane_publish(struct shim_lane *lane);
bool shim_lane_dirty(const struct shim_lane *lane);
void shim_lane_close(struct shim_lane *lane);
unsigned shim_lane_run(struct shim_lane *lane, unsigned budget);
bool shim_lane_pending(const struct shim_lane *lane);
bool shim_lane_finished(const struct shim_lane *lane);

#ifdef __cplusplus
}
#endif

#endif
