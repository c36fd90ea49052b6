/*
 * nvmf_host/ns.c - the controller's namespace list, which a
 * namespace attribute notice (aer.c) or a reconnect may change while I/O
 * runs.
 *
 * Two copies: info.nr_ns and ns[] under the host's lock for
 * wharf_nvmf_host_info() / _ns() (any thread), and an immutable table
 * for the submission path on the I/O shards, replaced whole by the admin
 * shard (release store; the readers acquire-load it).  The submission
 * path takes no lock.
 *
 * A replaced table is kept, on a list, until the disconnect frees them
 * all, once every queue is gone: its last reader's submission then
 * happens before the free through the queue's gone flag (host lock), an
 * ordering ThreadSanitizer can check.  Freeing it after an urcu-qsbr
 * grace period would be cheaper in memory, but liburcu is not
 * instrumented and TSan reports that free as a race.  A rescan is rare
 * (a namespace notice, or a reconnect that finds the list changed: an
 * unchanged list keeps its table) and a table is at most 64 entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvmf_host/host_int.h"

struct wnh_ns_table {
	struct wnh_ns_table *retired; /* older tables, kept until the end */
	unsigned nr;
	struct wharf_nvmf_host_ns ns[];
};

int wnh_ns_publish(struct wharf_nvmf_host *h,
		   const struct wharf_nvmf_host_ns *ns, unsigned nr)
{
	struct wnh_ns_table *t;

	if (nr > WHARF_NVMF_HOST_MAX_NS)
		nr = WHARF_NVMF_HOST_MAX_NS;
	/* Only the admin shard publishes: h->nst is its own to read.  An
	 * unchanged list (every reconnect rescans) keeps its table, so the
	 * retired list grows only with real changes. */
	t = h->nst;
	if (t && t->nr == nr && !memcmp(t->ns, ns, nr * sizeof(t->ns[0])))
		return 0;
	t = calloc(1, sizeof(*t) + nr * sizeof(t->ns[0]));
	if (!t)
		return -ENOMEM;
	t->nr = nr;
	memcpy(t->ns, ns, nr * sizeof(t->ns[0]));
	pthread_mutex_lock(&h->lock);
	memset(h->ns, 0, sizeof(h->ns));
	memcpy(h->ns, ns, nr * sizeof(h->ns[0]));
	h->info.nr_ns = nr;
	t->retired = h->nst;
	__atomic_store_n(&h->nst, t, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&h->lock);
	return 0;
}

const struct wharf_nvmf_host_ns *wnh_ns_find(const struct wharf_nvmf_host *h,
					     uint32_t nsid)
{
	const struct wnh_ns_table *t =
		__atomic_load_n(&h->nst, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; t && i < t->nr; i++)
		if (t->ns[i].nsid == nsid)
			return &t->ns[i];
	return NULL;
}

void wnh_ns_free(struct wharf_nvmf_host *h)
{
	struct wnh_ns_table *t = h->nst, *next;

	for (; t; t = next) {
		next = t->retired;
		free(t);
	}
	h->nst = NULL;
}

unsigned wnh_ns_list_parse(const void *buf, struct wharf_nvmf_host_ns *ns)
{
	const uint32_t *l = buf;
	unsigned nr = 0;

	memset(ns, 0, WHARF_NVMF_HOST_MAX_NS * sizeof(ns[0]));
	for (unsigned i = 0;
	     i < NVME_NSID_LIST_MAX && l[i] && nr < WHARF_NVMF_HOST_MAX_NS; i++)
		ns[nr++].nsid = l[i];
	return nr;
}

void wnh_ns_parse(const void *buf, struct wharf_nvmf_host_ns *ns)
{
	const struct nvme_id_ns *id = buf;
	uint8_t lbads = id->lbaf[id->flbas & 0xF].lbads;

	ns->size = sizeof(*ns);
	ns->nblocks = id->nsze;
	ns->block_size = lbads >= 9 && lbads <= 16 ? 1u << lbads : 0;
	ns->dlfeat = id->dlfeat;
	ns->dealloc_reads_zero = wnh_dlfeat_reads_zero(id->dlfeat);
}
