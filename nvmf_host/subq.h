/*
 * nvmf_host/subq.h - I/O calls from threads other than the queue's owner
 * shard without a message per command: one submission ring per
 * (application thread, I/O queue), drained by the owner (subq.c).
 */
#ifndef WHARF_NVMF_HOST_SUBQ_H
#define WHARF_NVMF_HOST_SUBQ_H

#include "nvmf_host/hop.h"

struct wharf_nvmf_host_queue;
struct wharf_shard;

/*
 * wnh_subq_submit - queue the checked command @io on the calling thread's
 * ring to io->q (opened on the first call), for the owner to issue.
 * Return: 0 (io->cb runs once, on the owner); -EAGAIN when the ring is
 * full (nothing queued); -ENOMEM when the ring cannot be opened.
 * Context: any thread but io->q's owner shard; non-blocking (a message
 * to the owner only when it may be asleep).
 */
int wnh_subq_submit(const struct wnh_io *io);

/*
 * wnh_subq_start - on the owner shard: start draining @q's rings (a
 * poller); idempotent.  0 or -errno of wharf_shard_poller_add().
 */
int wnh_subq_start(struct wharf_nvmf_host_queue *q);

/*
 * wnh_subq_retire - a message to @q's owner shard, at disconnect after
 * the queue is closed: issues what the rings still hold (each command
 * fails to its callback), stops the poller and lets go of the rings.
 * Then wnh_call_done(q->h).
 */
void wnh_subq_retire(struct wharf_shard *shard, void *arg);

#endif /* WHARF_NVMF_HOST_SUBQ_H */
