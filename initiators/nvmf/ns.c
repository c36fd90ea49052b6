/*
 * initiators/nvmf/ns.c - the controller's namespace list, which a
 * namespace attribute notice (aer.c) or a reconnect may change while I/O
 * runs.
 *
 * Two copies: info.nr_ns and ns[] under the host's lock for
 * wharf_nvmf_host_info() / _ns() (any thread), and an immutable table
 * for the submission path on the I/O shards, replaced whole by the admin
 * shard with RCU (urcu-qsbr: a shard callback is a read-side section, so
 * the old table is freed after every shard has passed a quiescent
 * state).  The submission path takes no lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include "initiators/nvmf/host_int.h"

struct wnh_ns_table {
	struct rcu_head rcu;
	unsigned nr;
	struct wharf_nvmf_host_ns ns[];
};

static void table_free_rcu(struct rcu_head *head)
{
	free(caa_container_of(head, struct wnh_ns_table, rcu));
}

int wnh_ns_publish(struct wharf_nvmf_host *h,
		   const struct wharf_nvmf_host_ns *ns, unsigned nr)
{
	struct wnh_ns_table *t, *old;

	if (nr > WHARF_NVMF_HOST_MAX_NS)
		nr = WHARF_NVMF_HOST_MAX_NS;
	t = calloc(1, sizeof(*t) + nr * sizeof(t->ns[0]));
	if (!t)
		return -ENOMEM;
	t->nr = nr;
	memcpy(t->ns, ns, nr * sizeof(t->ns[0]));
	pthread_mutex_lock(&h->lock);
	memset(h->ns, 0, sizeof(h->ns));
	memcpy(h->ns, ns, nr * sizeof(h->ns[0]));
	h->info.nr_ns = nr;
	old = h->nst;
	__atomic_store_n(&h->nst, t, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&h->lock);
	if (old)
		urcu_qsbr_call_rcu(&old->rcu, table_free_rcu);
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
	free(h->nst);
	h->nst = NULL;
}

unsigned wnh_ns_list_parse(const void *buf, struct wharf_nvmf_host_ns *ns)
{
	const uint32_t *l = buf;
	unsigned nr = 0;

	memset(ns, 0, WHARF_NVMF_HOST_MAX_NS * sizeof(ns[0]));
	for (unsigned i = 0;
	     i < NVMF_NSID_LIST_MAX && l[i] && nr < WHARF_NVMF_HOST_MAX_NS; i++)
		ns[nr++].nsid = l[i];
	return nr;
}

void wnh_ns_parse(const void *buf, struct wharf_nvmf_host_ns *ns)
{
	const struct nvmf_id_ns *id = buf;
	uint8_t lbads = id->lbaf[id->flbas & 0xF].lbads;

	ns->size = sizeof(*ns);
	ns->nblocks = id->nsze;
	ns->block_size = lbads >= 9 && lbads <= 16 ? 1u << lbads : 0;
	ns->dlfeat = id->dlfeat;
	ns->dealloc_reads_zero = wnh_dlfeat_reads_zero(id->dlfeat);
}
