/*
 * targets/nvmf/mgmt_ports.c - listen addresses and the subsystems exported
 * on them, changed while the target runs.
 *
 * A listen address is a slot of tgt->listen, live while its bit of
 * tgt->listen_live is set. Adding one reserves a slot, the binding starts
 * listening, and only then is the slot made live (committed), or given
 * back if the binding failed: an address nobody listens on is never
 * listed. Each removal bumps the slot's generation, so a connection that
 * came in through the old address and has not sent Connect yet is not
 * judged by the slot's next address. The binding matches a new connection's local
 * address against the live slots on its shard, without a lock (inside
 * the shard's RCU read-side section); so a slot is written only while
 * its bit is clear, and a slot that was cleared is written again only
 * after a grace period (nvmf_tgt_listener_remove() waits for one before
 * it returns). Everything else, exports included, changes under tgt->lock.
 *
 * A subsystem is served on every listener (listen_all: the configuration
 * gave it no export lines) or on those of its listen_mask, none at all
 * included (a subsystem created at run time, before its first listener).
 * Removing a subsystem from a listener disconnects that subsystem's
 * controllers that came in through it, as nvmet does when a port's link
 * to a subsystem goes; removing a listener disconnects every controller
 * that came in through it (discovery ones included).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <urcu/urcu-qsbr.h>

#include "targets/nvmf/audit.h"
#include "targets/nvmf/internal.h"

static uint32_t live_mask(const struct nvmf_tgt *tgt)
{
	return (uint32_t)atomic_load_explicit(&tgt->listen_live,
					      memory_order_acquire);
}

/* Whether two listen addresses are the same address and port. */
static bool same_listen(const struct nvmf_cfg_listen *a,
			const struct nvmf_cfg_listen *b)
{
	unsigned char x[16] = {0}, y[16] = {0};

	return a->family == b->family && a->port == b->port &&
	       inet_pton(a->family, a->addr, x) == 1 &&
	       inet_pton(b->family, b->addr, y) == 1 && !memcmp(x, y, 16);
}

/* Tear down the live controllers of @s (any subsystem when NULL) whose
 * admin queue came in through @listener. tgt->lock held. */
static unsigned kill_via_locked(struct nvmf_tgt *tgt,
				const struct nvmf_subsys *s, uint16_t listener)
{
	unsigned n = 0;

	for (struct nvmf_ctrl *c = tgt->ctrls; c; c = c->next) {
		if ((s && c->subsys != s) || c->state != NVMF_CTRL_LIVE)
			continue;
		/* queues[0] is cleared only with tgt->lock held (detach),
		 * which this loop holds. */
		if (c->queues[0] && c->queues[0]->listener == listener) {
			nvmf_ctrl_revoke_locked(c);
			n++;
		}
	}
	return n;
}

uint16_t nvmf_tgt_listener_find(struct nvmf_tgt *tgt,
				const struct nvmf_cfg_listen *l)
{
	uint16_t found = 0;

	if (!tgt || !l)
		return 0;
	pthread_mutex_lock(&tgt->lock);
	for (size_t i = 0; i < NVMF_CFG_MAX_LISTEN && !found; i++)
		if (live_mask(tgt) >> i & 1u && same_listen(&tgt->listen[i], l))
			found = (uint16_t)(i + 1);
	pthread_mutex_unlock(&tgt->lock);
	return found;
}

uint16_t nvmf_tgt_listener_of(const struct nvmf_tgt *tgt,
			      const struct sockaddr *local)
{
	return nvmf_listener_match(tgt->listen, live_mask(tgt), local);
}

int nvmf_tgt_listener_add(struct nvmf_tgt *tgt, const struct nvmf_cfg_listen *l,
			  uint16_t *listener)
{
	unsigned char bin[16];
	uint32_t live;
	int rc = -ENOSPC;

	if (!tgt || !l || !listener ||
	    (l->family != AF_INET && l->family != AF_INET6) ||
	    !memchr(l->addr, '\0', sizeof(l->addr)) ||
	    inet_pton(l->family, l->addr, bin) != 1)
		return -EINVAL;
	pthread_mutex_lock(&tgt->lock);
	live = live_mask(tgt);
	for (size_t i = 0; i < NVMF_CFG_MAX_LISTEN; i++) {
		if (live >> i & 1u && same_listen(&tgt->listen[i], l)) {
			*listener = (uint16_t)(i + 1);
			rc = -EEXIST;
			break;
		}
	}
	/* Reserved, not live: no shard matches a connection against it,
	 * and nothing lists it, until nvmf_tgt_listener_commit(). */
	for (size_t i = 0; rc == -ENOSPC && i < NVMF_CFG_MAX_LISTEN; i++) {
		if ((live | tgt->listen_reserved) >> i & 1u)
			continue;
		tgt->listen[i] = *l;
		tgt->listen[i].line = 0;
		tgt->listen_reserved |= 1u << i;
		*listener = (uint16_t)(i + 1);
		rc = 0;
	}
	pthread_mutex_unlock(&tgt->lock);
	return rc;
}

int nvmf_tgt_listener_commit(struct nvmf_tgt *tgt, uint16_t listener, bool ok)
{
	uint32_t bit;
	int rc = 0;

	if (!tgt || !listener || listener > NVMF_CFG_MAX_LISTEN)
		return -EINVAL;
	bit = 1u << (listener - 1);
	pthread_mutex_lock(&tgt->lock);
	if (!(tgt->listen_reserved & bit)) {
		rc = -ENOENT;
	} else {
		tgt->listen_reserved &= ~bit;
		if (ok) {
			atomic_store_explicit(&tgt->listen_live,
					      live_mask(tgt) | bit,
					      memory_order_release);
			tgt->disc_genctr++;
		}
	}
	pthread_mutex_unlock(&tgt->lock);
	return rc;
}

bool nvmf_tgt_listener_used(struct nvmf_tgt *tgt, uint16_t listener)
{
	struct nvmf_subsys_tab *t;
	bool used = false;

	if (!listener || listener > NVMF_CFG_MAX_LISTEN)
		return false;
	pthread_mutex_lock(&tgt->lock);
	t = nvmf_subsys_table(tgt);
	for (size_t i = 1; !used && i < t->n; i++)
		used = t->s[i]->listen_all ||
		       t->s[i]->listen_mask >> (listener - 1) & 1u;
	pthread_mutex_unlock(&tgt->lock);
	return used;
}

int nvmf_tgt_listener_remove(struct nvmf_tgt *tgt, uint16_t listener,
			     unsigned *disconnected)
{
	struct nvmf_subsys_tab *t;
	uint32_t bit;
	unsigned n = 0;
	int rc = 0;

	if (!tgt || !listener || listener > NVMF_CFG_MAX_LISTEN)
		return -EINVAL;
	bit = 1u << (listener - 1);
	pthread_mutex_lock(&tgt->lock);
	t = nvmf_subsys_table(tgt);
	if (!(live_mask(tgt) & bit))
		rc = -ENOENT;
	for (size_t i = 1; !rc && i < t->n; i++)
		if (t->s[i]->listen_all || t->s[i]->listen_mask & bit)
			rc = -EBUSY;
	if (!rc) {
		atomic_store_explicit(&tgt->listen_live, live_mask(tgt) & ~bit,
				      memory_order_release);
		atomic_fetch_add_explicit(&tgt->listen_gen[listener - 1], 1,
					  memory_order_release);
		tgt->disc_genctr++;
		n = kill_via_locked(tgt, NULL, listener);
	}
	pthread_mutex_unlock(&tgt->lock);
	if (rc)
		return rc;
	/* No shard still matches a connection against the old slot once
	 * this returns: the slot may be written again. */
	urcu_qsbr_synchronize_rcu();
	if (disconnected)
		*disconnected = n;
	return 0;
}

int nvmf_tgt_subsys_export(struct nvmf_tgt *tgt, const char *subnqn,
			   uint16_t listener, bool on, unsigned *disconnected)
{
	struct nvmf_subsys *s;
	uint32_t bit, mask;
	unsigned n = 0;
	int rc = 0;

	if (!tgt || !subnqn || !listener || listener > NVMF_CFG_MAX_LISTEN)
		return -EINVAL;
	bit = 1u << (listener - 1);
	pthread_mutex_lock(&tgt->lock);
	s = nvmf_subsys_find(tgt, subnqn);
	if (!s || s->discovery)
		rc = -ENOENT;
	else if (!(live_mask(tgt) & bit))
		rc = -ENODEV;
	if (rc)
		goto out;
	/* A subsystem without export lines is on every listener. */
	mask = s->listen_all ? live_mask(tgt) : s->listen_mask;
	if (on) {
		if (s->listen_all)
			goto out; /* there already: nothing changes */
		if (s->listen_mask & bit) {
			rc = -EEXIST;
			goto out;
		}
		__atomic_store_n(&s->listen_mask, s->listen_mask | bit,
				 __ATOMIC_RELAXED);
	} else if (!(mask & bit)) {
		rc = -ENOENT;
		goto out;
	} else {
		/* Its last listener may go: it is then served nowhere until
		 * one is added (saved as export-none). */
		__atomic_store_n(&s->listen_mask, mask & ~bit,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&s->listen_all, false, __ATOMIC_RELAXED);
		n = kill_via_locked(tgt, s, listener);
	}
	tgt->disc_genctr++;
out:
	pthread_mutex_unlock(&tgt->lock);
	if (disconnected)
		*disconnected = n;
	return rc;
}
