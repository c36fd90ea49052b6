/*
 * A lane: the message ring between one sender (a shard, or a registered
 * application thread) and one receiving shard (internal).  Its positions
 * are a wcore_spsc (spsc.h: batched publication, no read-modify-write);
 * its slots hold a function and its argument.
 */
#ifndef WHARF_CORE_LANE_H
#define WHARF_CORE_LANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/spsc.h"

struct wharf_shard;

/* Same type as wharf_msg_fn in <wharf/core.h>. */
typedef void (*wcore_lane_fn)(struct wharf_shard *shard, void *arg);

struct wcore_lane_slot {
	wcore_lane_fn fn;
	void *arg;
};

struct wcore_lane {
	struct wcore_spsc ring;
	/* Set up before the lane is shared; `listed`: producer only. */
	struct wharf_shard *to;	 /* the receiving shard */
	struct wcore_lane *next; /* the receiver's adopt stack, then its list */
	bool listed;		 /* on its outbox's dirty list (msg.c) */
	struct wcore_lane_slot slots[];
};

/* Bytes for a lane of @depth slots (a power of two >= 2). */
size_t wcore_lane_size(size_t depth);

/* Sets up @lane (wcore_lane_size(@depth) bytes) for @depth slots to @to. */
void wcore_lane_init(struct wcore_lane *lane, size_t depth,
		     struct wharf_shard *to);

/* Producer: writes a message, unpublished; 0, or -EAGAIN when full. */
int wcore_lane_put(struct wcore_lane *lane, wcore_lane_fn fn, void *arg);

/*
 * Consumer: runs up to @budget published messages on @shard, in order,
 * adding one to @ran (a single-writer counter) as each ends, then
 * hands their slots back with one store.  Returns the number run.
 */
unsigned wcore_lane_run(struct wcore_lane *lane, struct wharf_shard *shard,
			unsigned budget, _Atomic uint64_t *ran);

#endif /* WHARF_CORE_LANE_H */
