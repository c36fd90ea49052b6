/*
 * initiators/ublk/ublk.h - wharf-ublk (C only): the control device
 * (ublk_ctrl.c), the queues served on the shards (ublk_queue.c) and the
 * program (ublk_main.c).
 */
#ifndef WHARF_INITIATORS_UBLK_H
#define WHARF_INITIATORS_UBLK_H

#include <liburing.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "initiators/ublk/ublk_map.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* The control device, /dev/ublk-control (main thread, blocking)       */
/* ------------------------------------------------------------------ */

struct ublk_ctrl {
	int fd;
	struct io_uring ring; /* 128-byte SQEs: the command rides in one */
	bool pending;	      /* a command's CQE not yet taken */
};

/* Opens /dev/ublk-control.  0, or -errno with the reason (the module
 * not loaded, a kernel without ublk) in @err. */
int ublk_ctrl_open(struct ublk_ctrl *c, char *err, size_t errlen);
void ublk_ctrl_close(struct ublk_ctrl *c);

/* Each: 0 or the driver's -errno, or -ETIMEDOUT after 30 s (STOP_DEV:
 * @timeout_ms) with the command left pending: ublk_ctrl_wait() takes
 * its result later, and the next command waits for it first.  ADD_DEV
 * fills @info (dev_id...). */
int ublk_ctrl_add(struct ublk_ctrl *c, struct ublksrv_ctrl_dev_info *info);
int ublk_ctrl_get_info(struct ublk_ctrl *c, uint32_t id,
		       struct ublksrv_ctrl_dev_info *info);
int ublk_ctrl_set_params(struct ublk_ctrl *c, uint32_t id,
			 struct ublk_params *p);
int ublk_ctrl_get_params(struct ublk_ctrl *c, uint32_t id,
			 struct ublk_params *p);
/* START_DEV and END_USER_RECOVERY block until every queue fetched. */
int ublk_ctrl_start(struct ublk_ctrl *c, uint32_t id, int pid);
int ublk_ctrl_stop(struct ublk_ctrl *c, uint32_t id, unsigned timeout_ms);
int ublk_ctrl_del(struct ublk_ctrl *c, uint32_t id);
int ublk_ctrl_start_recovery(struct ublk_ctrl *c, uint32_t id);
int ublk_ctrl_end_recovery(struct ublk_ctrl *c, uint32_t id, int pid);
/* The pending command's result within @timeout_ms, else -ETIMEDOUT;
 * -EINVAL when none is pending. */
int ublk_ctrl_wait(struct ublk_ctrl *c, unsigned timeout_ms);

/* ------------------------------------------------------------------ */
/* The queues (ublk_queue.c)                                           */
/* ------------------------------------------------------------------ */

struct wharf_nvmf_host;
struct wharf_nvmf_host_queue;

/* Counted with relaxed atomic adds by every shard. */
struct ublk_stats {
	atomic_uint_fast64_t reads, writes, flushes, discards, wzeroes;
	atomic_uint_fast64_t bytes_read, bytes_written;
	atomic_uint_fast64_t errors;  /* requests committed with an error */
	atomic_uint_fast64_t refused; /* requests no NVMe command serves */
	atomic_uint_fast64_t retried; /* submissions the queue was full for */
};

struct ublk_dev {
	uint32_t id; /* N of /dev/ublkbN, /dev/ublkcN */
	int cdev;    /* /dev/ublkcN */
	uint16_t nr_queues;
	uint16_t depth;
	uint32_t max_io; /* bytes per request buffer */
	uint32_t nsid;
	struct ublk_geom geom;
	struct wharf_nvmf_host *host;
	struct ublk_stats st;
	atomic_uint fetching; /* queues that have not fetched every tag */
	atomic_uint live;     /* queues not yet finished */
	int done_efd;	      /* written when a queue finishes */
};

struct ublk_queue;

/*
 * ublk_queue_start - serve ublk queue @qid of @d on the shard of NVMe I/O
 * queue @hq: map its descriptors, register its buffers with @hq, open a
 * ring there and fetch every tag.  Return: 0 and *@out (freed by
 * ublk_queue_free() once the shards stopped); -errno of the set-up, with
 * nothing left behind.
 * Context: the main thread; waits for the shard to do the set-up.
 */
int ublk_queue_start(struct ublk_dev *d, uint16_t qid,
		     struct wharf_nvmf_host_queue *hq, struct ublk_queue **out);
/* Whether the queue has finished: every tag aborted by the driver (the
 * device stopped) and no NVMe command left. */
bool ublk_queue_done(const struct ublk_queue *q);
/* Tears the queue down on its shard (ring, watch, registration) once it
 * is done, or at once when @force (the process is leaving: the driver
 * then aborts what is left when the char device closes).  Context: the
 * main thread; waits for the shard, at most @timeout_ms. */
int ublk_queue_stop(struct ublk_queue *q, bool force, unsigned timeout_ms);
/* Frees @q (its registration too, unless @host_gone: the host was
 * disconnected, which freed it).  Return: false when @q cannot be freed
 * (its ring is still live or a step still pending on the shard): it is
 * left allocated. */
bool ublk_queue_free(struct ublk_queue *q, bool host_gone);

/* The stats as one line ("reads=... writes=..."), into @buf. */
void ublk_stats_line(struct ublk_stats *st, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_UBLK_H */
