// See nvmf_host_subq_shim.h.
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "nvmf_host/host_int.h"
#include "nvmf_host/subq.h"
#include "tests/unit/nvmf_host_subq_shim.h"

static atomic_uint issued;
static atomic_int step; /* a message ran on the owner: its result + 1 */

/* The rest of the host, as far as the rings see it. */
int wnh_io_issue(const struct wnh_io *io)
{
	atomic_fetch_add(&issued, 1);
	io->cb(0, 0, io->arg);
	return 0;
}

void wnh_call_done(struct wharf_nvmf_host *h)
{
	(void)h;
	atomic_store(&step, 1);
}

static void start(struct wharf_shard *shard, void *arg)
{
	(void)shard;
	atomic_store(&step, wnh_subq_start(arg) + 1);
}

static int on_owner(struct wharf_nvmf_host_queue *q, wharf_msg_fn fn)
{
	atomic_store(&step, 0);
	if (wharf_shard_send(q->shard, fn, q))
		return -1;
	while (!atomic_load(&step))
		sched_yield();
	return atomic_load(&step) - 1;
}

struct wharf_nvmf_host_queue *subq_shim_queue_new(struct wharf_shard *shard,
						  unsigned entries)
{
	struct wharf_nvmf_host_queue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->shard = shard;
	q->entries = entries;
	q->gen = wnh_subq_gen();
	if (on_owner(q, start)) {
		free(q);
		return NULL;
	}
	return q;
}

void subq_shim_queue_free(struct wharf_nvmf_host_queue *q)
{
	on_owner(q, wnh_subq_retire);
	free(q);
}

bool subq_shim_armed(struct wharf_nvmf_host_queue *q)
{
	return atomic_load(&q->subq_armed);
}

static void done(int status, uint16_t nvme_status, void *arg)
{
	(void)status;
	(void)nvme_status;
	(void)arg;
}

int subq_shim_read(struct wharf_nvmf_host_queue *q)
{
	static char buf[512];
	struct wnh_io io = {
		.q = q,
		.op = WNH_IO_READ,
		.nsid = 1,
		.nlb = 1,
		.len = sizeof(buf),
		.buf = buf,
		.cb = done,
	};

	return wnh_subq_submit(&io);
}

unsigned subq_shim_issued(void)
{
	return atomic_load(&issued);
}
