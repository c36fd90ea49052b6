/*
 * nvmf_host/hop.h - an I/O command called from a thread other than
 * its queue's owner shard, packed into one message for that shard (the
 * hop), and the bounds check of a buffer inside a caller's registration.
 * Pure: no state, no I/O; unit-tested on their own.
 */
#ifndef WHARF_INITIATORS_NVMF_HOP_H
#define WHARF_INITIATORS_NVMF_HOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/nvme/spec.h"
#include <wharf/nvmf_host.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One checked I/O command: built by the submission call, issued on the
 * owner shard (io.c).  `ranges` is only used by WNH_IO_DSM. */
enum wnh_io_op {
	WNH_IO_READ = 0,
	WNH_IO_WRITE,
	WNH_IO_FLUSH,
	WNH_IO_WRITE_ZEROES,
	WNH_IO_DSM,
};

struct wnh_io {
	struct wharf_nvmf_host_queue *q;
	struct wharf_nvmf_host_mem *mem; /* READ / WRITE: caller's memory */
	enum wnh_io_op op;
	uint32_t nsid;
	uint64_t slba;
	uint32_t nlb;
	uint32_t len; /* READ / WRITE: bytes; DSM: bytes of the ranges */
	bool deac;
	void *buf;
	wharf_nvmf_host_cb cb;
	void *arg;
	unsigned nr; /* DSM: ranges */
	struct nvme_dsm_range *ranges;
};

/* The message: the command, and for DSM its ranges right behind it. */
struct wnh_hop {
	struct wnh_io io;
	struct nvme_dsm_range ranges[];
};

/*
 * wnh_hop_new - a message (malloc'ed; free() it) holding a copy of @io
 * and of its @io->nr ranges (DSM), io.ranges pointing at the copy.
 * Return: the message, or NULL (out of memory, @io NULL, or more than
 * WHARF_NVMF_HOST_DSM_MAX_RANGES ranges).
 */
struct wnh_hop *wnh_hop_new(const struct wnh_io *io);

/*
 * wnh_mem_contains - whether @n >= 1 bytes at @addr lie inside the
 * registration of @len bytes at @base (no overflow).
 */
bool wnh_mem_contains(uintptr_t base, size_t len, uintptr_t addr, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NVMF_HOP_H */
