/*
 * targets/nvmf/mgmt_subsys.c - subsystems created and deleted while the
 * target runs.
 *
 * The subsystem table is read without a lock by Connect on the shards
 * (inside their liburcu QSBR read-side sections) and replaced whole here,
 * with tgt->lock held, by the one management thread: a new table is
 * published, and the old one is freed after a grace period, when no shard
 * can still be reading it.
 *
 * Deleting a subsystem: it leaves the table and is marked deleted (a
 * Connect that found it before checks the mark under tgt->lock and is
 * refused), every controller of it is torn down as a removed host's is,
 * and the subsystem itself (its namespaces, files closed) is freed by
 * this thread once its last controller is gone, never by a shard: closing
 * a file may block. Controllers that take longer than the wait below
 * leave it on tgt->dead, reaped by the next create or delete or with the
 * target.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu/pointer.h>
#include <urcu/urcu-qsbr.h>

#include "targets/nvmf/internal.h"
#include "targets/nvmf/nqn.h"

/* How long a delete waits for the subsystem's controllers to go. */
#define DELETE_WAIT_MS 5000

/* Whether a controller of @s is still in the list. tgt->lock held. */
static bool has_ctrls_locked(const struct nvmf_tgt *tgt,
			     const struct nvmf_subsys *s)
{
	for (const struct nvmf_ctrl *c = tgt->ctrls; c; c = c->next)
		if (c->subsys == s)
			return true;
	return false;
}

/* Free the deleted subsystems whose controllers are all gone. Management
 * thread, tgt->lock not held. */
static void reap_dead(struct nvmf_tgt *tgt)
{
	struct nvmf_subsys *done = NULL, **pp;

	pthread_mutex_lock(&tgt->lock);
	for (pp = &tgt->dead; *pp;) {
		struct nvmf_subsys *s = *pp;

		if (has_ctrls_locked(tgt, s)) {
			pp = &s->dead_next;
			continue;
		}
		*pp = s->dead_next;
		s->dead_next = done;
		done = s;
	}
	pthread_mutex_unlock(&tgt->lock);
	while (done) {
		struct nvmf_subsys *s = done;

		done = s->dead_next;
		nvmf_subsys_destroy(s);
	}
}

/* Publish @t in place of the current table and free the old one after a
 * grace period. tgt->lock held on entry, released on return. */
static void publish_unlock(struct nvmf_tgt *tgt, struct nvmf_subsys_tab *t)
{
	struct nvmf_subsys_tab *old = tgt->subsys;

	rcu_assign_pointer(tgt->subsys, t);
	tgt->disc_genctr++;
	pthread_mutex_unlock(&tgt->lock);
	urcu_qsbr_synchronize_rcu();
	free(old);
}

int nvmf_tgt_subsys_add(struct nvmf_tgt *tgt, const struct nvmf_cfg_subsys *c,
			char *err, size_t errlen)
{
	struct nvmf_subsys_tab *t;
	struct nvmf_subsys *s;
	size_t n;
	int rc;

	if (!tgt || !c || !nvmf_nqn_valid(c->nqn) ||
	    !strcmp(c->nqn, NVME_DISC_NQN))
		return -EINVAL;
	if (c->nexports || c->listen_mask)
		return -EINVAL; /* listeners: nvmf_tgt_subsys_export() */
	reap_dead(tgt);
	if (nvmf_subsys_find(tgt, c->nqn))
		return -EEXIST;
	rc = nvmf_subsys_create(tgt, c, "rpc", &s, err, errlen);
	if (rc)
		return rc;
	pthread_mutex_lock(&tgt->lock);
	n = tgt->subsys->n;
	rc = n > NVMF_CFG_MAX_SUBSYS ? -ENOSPC : 0;
	t = rc ? NULL : malloc(sizeof(*t) + (n + 1) * sizeof(t->s[0]));
	if (!rc && !t)
		rc = -ENOMEM;
	if (rc) {
		pthread_mutex_unlock(&tgt->lock);
		nvmf_subsys_destroy(s);
		return rc;
	}
	memcpy(t->s, tgt->subsys->s, n * sizeof(t->s[0]));
	t->s[n] = s;
	t->n = n + 1;
	publish_unlock(tgt, t);
	return 0;
}

int nvmf_tgt_subsys_delete(struct nvmf_tgt *tgt, const char *subnqn,
			   unsigned *disconnected)
{
	struct nvmf_subsys_tab *t;
	struct nvmf_subsys *s = NULL;
	unsigned n = 0;
	bool busy;

	if (!tgt || !subnqn)
		return -EINVAL;
	pthread_mutex_lock(&tgt->lock);
	for (size_t i = 1; i < tgt->subsys->n; i++)
		if (!strcmp(tgt->subsys->s[i]->nqn, subnqn))
			s = tgt->subsys->s[i];
	if (!s) {
		pthread_mutex_unlock(&tgt->lock);
		return -ENOENT;
	}
	t = malloc(sizeof(*t) + tgt->subsys->n * sizeof(t->s[0]));
	if (!t) {
		pthread_mutex_unlock(&tgt->lock);
		return -ENOMEM;
	}
	t->n = 0;
	for (size_t i = 0; i < tgt->subsys->n; i++)
		if (tgt->subsys->s[i] != s)
			t->s[t->n++] = tgt->subsys->s[i];
	s->deleted = true;
	for (struct nvmf_ctrl *c = tgt->ctrls; c; c = c->next) {
		if (c->subsys != s || c->state != NVMF_CTRL_LIVE)
			continue;
		nvmf_ctrl_revoke_locked(c);
		n++;
	}
	s->dead_next = tgt->dead;
	tgt->dead = s;
	publish_unlock(tgt, t);
	if (disconnected)
		*disconnected = n;
	/* The killed queues end on their shards; each one's destroy frees
	 * its controller with the last queue. This is the management
	 * thread (never a shard): it may sleep while it waits. */
	for (unsigned waited = 0;; waited += 2) {
		pthread_mutex_lock(&tgt->lock);
		busy = has_ctrls_locked(tgt, s);
		pthread_mutex_unlock(&tgt->lock);
		if (!busy || waited >= DELETE_WAIT_MS)
			break;
		usleep(2000);
	}
	reap_dead(tgt);
	return 0;
}
