/*
 * nvmf_host/mem.c - the caller's registered memory
 * (wharf_nvmf_host_mem_reg()): one registration per I/O queue, its MR on
 * the PD of the queue's current connection.  The MR is created and
 * dropped on the queue's owner shard only: at registration when the
 * queue is LIVE, else at its first use; dropped with the queue's own MR
 * once a lost connection is gone (the next one may be on another device)
 * and registered again at the next use.  A call from another thread is
 * run on the owner shard while the caller waits on the host's lock
 * (control path).
 */
#include <errno.h>
#include <stdlib.h>

#include "nvmf_host/host_int.h"

#define MEM_ACCESS                                                             \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |                     \
	 IBV_ACCESS_REMOTE_WRITE)

int wnh_mem_key(struct wharf_nvmf_host_queue *q, struct wharf_nvmf_host_mem *m,
		uint32_t *rkey)
{
	struct ibv_pd *pd = wharf_conn_pd(q->conn);

	if (!pd)
		return -ENOTCONN;
	if (m->mr && m->mr->pd != pd) {
		ibv_dereg_mr(m->mr);
		m->mr = NULL;
	}
	if (!m->mr) {
		m->mr = ibv_reg_mr(pd, m->addr, m->len, MEM_ACCESS);
		if (!m->mr)
			return errno ? -errno : -ENOMEM;
	}
	*rkey = m->mr->rkey;
	return 0;
}

void wnh_mem_drop(struct wharf_nvmf_host_queue *q)
{
	for (struct wharf_nvmf_host_mem *m = q->mems; m; m = m->next) {
		if (m->mr)
			ibv_dereg_mr(m->mr);
		m->mr = NULL;
	}
}

void wnh_mem_free_all(struct wharf_nvmf_host_queue *q)
{
	wnh_mem_drop(q);
	while (q->mems) {
		struct wharf_nvmf_host_mem *m = q->mems;

		q->mems = m->next;
		free(m);
	}
}

/* Owner shard: link @m, register it when the queue is LIVE. */
static int reg_here(struct wharf_nvmf_host_mem *m)
{
	struct wharf_nvmf_host_queue *q = m->q;
	uint32_t key;
	int rc;

	if (q->state == NHQ_CLOSING)
		return -ENOTCONN;
	if (q->state == NHQ_LIVE && q->conn) {
		rc = wnh_mem_key(q, m, &key);
		if (rc)
			return rc;
	}
	m->next = q->mems;
	q->mems = m;
	return 0;
}

/* Owner shard: unlink @m and deregister it; @m is freed on success. */
static int dereg_here(struct wharf_nvmf_host_mem *m)
{
	struct wharf_nvmf_host_mem **p = &m->q->mems;
	int rc;

	if (m->mr) {
		rc = ibv_dereg_mr(m->mr);
		if (rc)
			return rc > 0 ? -rc : -EIO;
		m->mr = NULL;
	}
	while (*p && *p != m)
		p = &(*p)->next;
	if (*p)
		*p = m->next;
	free(m);
	return 0;
}

struct mem_call {
	struct wharf_nvmf_host_mem *m;
	int (*fn)(struct wharf_nvmf_host_mem *m);
	struct wharf_nvmf_host *h;
	int rc;
	bool done;
};

static void call_fn(struct wharf_shard *shard, void *arg)
{
	struct mem_call *c = arg;
	struct wharf_nvmf_host *h = c->h;
	int rc = c->fn(c->m);

	(void)shard;
	pthread_mutex_lock(&h->lock);
	c->rc = rc;
	c->done = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

/* Runs @fn(@m) on the owner shard of @m's queue: at once when called
 * there, else by a message the calling thread waits for; -EDEADLK from
 * another shard. */
static int on_owner(struct wharf_nvmf_host_mem *m,
		    int (*fn)(struct wharf_nvmf_host_mem *m))
{
	struct wharf_nvmf_host_queue *q = m->q;
	struct mem_call c = {.m = m, .fn = fn, .h = q->h};
	struct wharf_shard *cur = wharf_shard_current();
	int rc;

	if (cur == q->shard)
		return fn(m);
	if (cur)
		return -EDEADLK;
	rc = wnh_post(q->h, q->shard, call_fn, &c);
	if (rc)
		return rc;
	pthread_mutex_lock(&q->h->lock);
	while (!c.done)
		pthread_cond_wait(&q->h->cond, &q->h->lock);
	pthread_mutex_unlock(&q->h->lock);
	return c.rc;
}

int wharf_nvmf_host_mem_reg(struct wharf_nvmf_host_queue *q, void *addr,
			    size_t len, struct wharf_nvmf_host_mem **out)
{
	struct wharf_nvmf_host_mem *m;
	int rc;

	if (!q || !addr || !len || !out)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->q = q;
	m->addr = addr;
	m->len = len;
	rc = on_owner(m, reg_here);
	if (rc) {
		free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int wharf_nvmf_host_mem_dereg(struct wharf_nvmf_host_mem *mem)
{
	if (!mem)
		return 0;
	return on_owner(mem, dereg_here);
}
