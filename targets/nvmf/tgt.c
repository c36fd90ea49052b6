/*
 * targets/nvmf/tgt.c - the target object: creation from a configuration,
 * the limits the binding negotiates with, counters, the keep-alive scan
 * and run-time namespace changes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/nvmf/internal.h"
#include "targets/nvmf/kato.h"

/* Whether the binding gave every callback. */
static bool ops_ok(const struct nvmf_tgt_ops *ops)
{
	return ops && ops->size >= sizeof(*ops) && ops->now_ms && ops->kill &&
	       ops->held_ready;
}

/* Whether the configuration values are in range. */
static bool cfg_ok(const struct nvmf_config *cfg)
{
	return cfg->queue_depth >= 2 && cfg->queue_depth <= 1024 &&
	       cfg->io_queues >= 1 && cfg->io_queues <= 1024 &&
	       cfg->in_capsule <= 65536 && cfg->in_capsule % 16 == 0 &&
	       cfg->max_io_size >= 4096 && cfg->max_io_size <= (2u << 20) &&
	       !(cfg->max_io_size & (cfg->max_io_size - 1)) &&
	       cfg->nlisten <= NVMF_CFG_MAX_LISTEN;
}

int nvmf_tgt_create(const struct nvmf_config *cfg,
		    const struct nvmf_tgt_ops *ops, void *arg,
		    struct nvmf_tgt **out, char *err, size_t errlen)
{
	struct nvmf_tgt *tgt;
	int rc = 0;

	if (!cfg || !out || !ops_ok(ops) || !cfg_ok(cfg))
		return -EINVAL;
	tgt = calloc(1, sizeof(*tgt));
	if (!tgt)
		return -ENOMEM;
	tgt->ops = *ops;
	tgt->arg = arg;
	pthread_mutex_init(&tgt->lock, NULL);
	memcpy(tgt->listen, cfg->listen, sizeof(tgt->listen));
	for (size_t i = 0; i < NVMF_CFG_MAX_LISTEN; i++)
		atomic_init(&tgt->listen_gen[i], 0);
	atomic_init(&tgt->listen_live,
		    cfg->nlisten >= 32 ? UINT32_MAX : (1u << cfg->nlisten) - 1);
	tgt->io_depth = cfg->queue_depth;
	tgt->max_qid = (uint16_t)cfg->io_queues;
	tgt->icd_size = cfg->in_capsule;
	tgt->max_xfer = cfg->max_io_size;
	for (uint32_t v = cfg->max_io_size / 4096; v > 1; v >>= 1)
		tgt->mdts++;
	tgt->next_cntlid = NVME_CNTLID_MIN;
	{ /* S1 of the Challenges starts anywhere (as nvmet's) */
		uint32_t seq = 0;

		nvme_auth_random(&seq, sizeof(seq));
		atomic_init(&tgt->auth_seq, seq);
	}
	tgt->disc_genctr = 1;
	tgt->subsys = calloc(1, sizeof(*tgt->subsys) +
					(cfg->nsubsys + 1) *
						sizeof(tgt->subsys->s[0]));
	if (!tgt->subsys)
		rc = -ENOMEM;
	if (!rc) {
		tgt->subsys->s[0] = nvmf_subsys_create_discovery(tgt);
		if (!tgt->subsys->s[0])
			rc = -ENOMEM;
		else
			tgt->subsys->n = 1;
	}
	for (size_t i = 0; !rc && i < cfg->nsubsys; i++) {
		rc = nvmf_subsys_create(tgt, &cfg->subsys[i], cfg->source,
					&tgt->subsys->s[i + 1], err, errlen);
		if (!rc)
			tgt->subsys->n++;
	}
	if (rc) {
		nvmf_tgt_destroy(tgt);
		return rc;
	}
	*out = tgt;
	return 0;
}

int nvmf_tgt_destroy(struct nvmf_tgt *tgt)
{
	if (!tgt)
		return 0;
	if (atomic_load(&tgt->n_queues))
		return -EBUSY;
	for (size_t i = 0; tgt->subsys && i < tgt->subsys->n; i++)
		nvmf_subsys_destroy(tgt->subsys->s[i]);
	while (tgt->dead) {
		struct nvmf_subsys *s = tgt->dead;

		tgt->dead = s->dead_next;
		nvmf_subsys_destroy(s);
	}
	while (tgt->retired) {
		struct nvmf_ns *ns = tgt->retired;

		tgt->retired = ns->retired;
		nvmf_ns_free(ns);
	}
	free(tgt->subsys);
	pthread_mutex_destroy(&tgt->lock);
	free(tgt);
	return 0;
}

void nvmf_tgt_rdma_limits(const struct nvmf_tgt *tgt,
			  uint32_t dev_max_init_rd_atom,
			  uint32_t dev_max_rd_atom,
			  struct nvme_rdma_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->max_qid = tgt->max_qid;
	lim->admin_depth = NVMF_ADMIN_DEPTH;
	lim->io_depth = (uint16_t)tgt->io_depth;
	lim->dev_max_init_rd_atom = dev_max_init_rd_atom > 255
					    ? 255
					    : (uint8_t)dev_max_init_rd_atom;
	lim->dev_max_rd_atom =
		dev_max_rd_atom > 255 ? 255 : (uint8_t)dev_max_rd_atom;
}

uint32_t nvmf_tgt_icd_size(const struct nvmf_tgt *tgt, uint16_t qid)
{
	return qid ? tgt->icd_size : NVMF_ADMIN_ICD;
}

uint32_t nvmf_tgt_max_xfer(const struct nvmf_tgt *tgt)
{
	return tgt->max_xfer;
}

int nvmf_tgt_check_cntlid(struct nvmf_tgt *tgt, uint16_t qid, uint16_t cntlid)
{
	int rc = -ENOENT;

	if (!qid || !cntlid)
		return 0;
	pthread_mutex_lock(&tgt->lock);
	for (struct nvmf_ctrl *c = tgt->ctrls; c; c = c->next)
		if (c->cntlid == cntlid && c->state == NVMF_CTRL_LIVE)
			rc = 0;
	pthread_mutex_unlock(&tgt->lock);
	return rc;
}

int nvmf_tgt_kato_scan(struct nvmf_tgt *tgt, uint64_t now_ms)
{
	int n = 0;

	pthread_mutex_lock(&tgt->lock);
	for (struct nvmf_ctrl *c = tgt->ctrls; c; c = c->next) {
		uint64_t last;

		if (c->state != NVMF_CTRL_LIVE)
			continue;
		pthread_mutex_lock(&c->lock);
		last = atomic_load(&c->ka_last_ms);
		if (nvmf_kato_expired(last, c->kato_ms, now_ms)) {
			c->state = NVMF_CTRL_DYING;
			c->regs.csts |= NVME_CSTS_CFS;
			atomic_store(&c->io_ok, false);
			nvmf_ctrl_kill_locked(c, false);
			nvmf_stat_add(&tgt->n_kato_expired, 1);
			n++;
		}
		/* A queue that never finished authenticating is ended (its
		 * controller too, if it is the admin queue). */
		for (uint32_t qid = 0;
		     c->state == NVMF_CTRL_LIVE && qid <= c->max_qid; qid++) {
			struct nvmf_queue *q = c->queues[qid];
			uint_fast64_t dl =
				q ? atomic_load(&q->auth_deadline_ms) : 0;

			/* Taken only if the queue did not finish meanwhile
			 * (it clears the deadline on its thread). */
			if (!dl || now_ms < dl ||
			    !atomic_compare_exchange_strong(
				    &q->auth_deadline_ms, &dl, 0))
				continue;
			nvmf_stat_add(&tgt->n_auth_failed, 1);
			nvmf_stat_add(&c->subsys->n_auth_failed, 1);
			nvmf_queue_kill_locked(q);
		}
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&tgt->lock);
	return n;
}

bool nvmf_tgt_needs_aio(const struct nvmf_tgt *tgt)
{
	struct nvmf_subsys_tab *t = nvmf_subsys_table(tgt);

	for (size_t i = 0; i < t->n; i++)
		for (uint32_t n = 1; n <= NVMF_MAX_NSID; n++) {
			struct nvmf_ns *ns = nvmf_subsys_ns(t->s[i], n);

			if (ns && nvmf_bdev_async(&ns->bdev))
				return true;
		}
	return false;
}

void nvmf_tgt_get_stats(const struct nvmf_tgt *tgt, struct nvmf_tgt_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->ctrls = atomic_load(&tgt->n_ctrls);
	out->queues = atomic_load(&tgt->n_queues);
	out->reqs = atomic_load(&tgt->n_reqs);
	out->held = atomic_load(&tgt->n_held);
	out->ctrls_created = atomic_load(&tgt->n_ctrls_created);
	out->connects_failed = atomic_load(&tgt->n_connects_failed);
	out->kato_expired = atomic_load(&tgt->n_kato_expired);
	out->dropped = atomic_load(&tgt->n_dropped);
	out->auth_ok = atomic_load(&tgt->n_auth_ok);
	out->auth_failed = atomic_load(&tgt->n_auth_failed);
	out->media_errors = atomic_load(&tgt->n_bdev_err[NVMF_BDEV_ERR_MEDIA]);
	out->capacity_errors =
		atomic_load(&tgt->n_bdev_err[NVMF_BDEV_ERR_CAPACITY]);
	out->write_protect_errors =
		atomic_load(&tgt->n_bdev_err[NVMF_BDEV_ERR_WRITE_PROTECT]);
	out->internal_errors =
		atomic_load(&tgt->n_bdev_err[NVMF_BDEV_ERR_INTERNAL]);
}

/* Tell every controller of @s that @nsid changed. tgt->lock held. */
static void notify_locked(struct nvmf_tgt *tgt, struct nvmf_subsys *s,
			  uint32_t nsid)
{
	for (struct nvmf_ctrl *c = tgt->ctrls; c; c = c->next) {
		if (c->subsys != s || c->state != NVMF_CTRL_LIVE)
			continue;
		pthread_mutex_lock(&c->lock);
		nvmf_ctrl_ns_changed_locked(c, nsid);
		pthread_mutex_unlock(&c->lock);
	}
}

int nvmf_tgt_ns_set_ready(struct nvmf_tgt *tgt, const char *subnqn,
			  uint32_t nsid, bool ready)
{
	struct nvmf_subsys *s = subnqn ? nvmf_subsys_find(tgt, subnqn) : NULL;
	struct nvmf_ns *ns = s ? nvmf_subsys_ns(s, nsid) : NULL;
	int expect = ready ? NVMF_NS_NOT_READY : NVMF_NS_ACTIVE;

	if (!ns || atomic_load(&ns->state) == NVMF_NS_REMOVED)
		return -ENOENT;
	atomic_compare_exchange_strong(&ns->state, &expect,
				       ready ? NVMF_NS_ACTIVE
					     : NVMF_NS_NOT_READY);
	return 0;
}

int nvmf_tgt_ns_remove(struct nvmf_tgt *tgt, const char *subnqn, uint32_t nsid)
{
	struct nvmf_subsys *s = subnqn ? nvmf_subsys_find(tgt, subnqn) : NULL;
	struct nvmf_ns *ns;
	int rc = -ENOENT;

	if (!s || s->discovery)
		return -ENOENT;
	pthread_mutex_lock(&tgt->lock);
	ns = nvmf_subsys_ns(s, nsid);
	if (ns && atomic_load(&ns->state) != NVMF_NS_REMOVED) {
		atomic_store(&ns->state, NVMF_NS_REMOVED);
		notify_locked(tgt, s, nsid);
		rc = 0;
	}
	pthread_mutex_unlock(&tgt->lock);
	return rc;
}

int nvmf_tgt_ns_add(struct nvmf_tgt *tgt, const char *subnqn,
		    const struct nvmf_cfg_ns *c, char *why, size_t whylen)
{
	struct nvmf_subsys *s = subnqn ? nvmf_subsys_find(tgt, subnqn) : NULL;
	struct nvmf_ns *ns, *old;
	int rc;

	if (!s || s->discovery)
		return -ENOENT;
	if (!c || c->nsid < 1 || c->nsid > NVMF_MAX_NSID)
		return -EINVAL;
	/* Opened outside the lock: a file or device open may block. */
	rc = nvmf_ns_create(s, c, &ns, why, whylen);
	if (rc)
		return rc;
	pthread_mutex_lock(&tgt->lock);
	old = nvmf_subsys_ns(s, c->nsid);
	if (old && atomic_load(&old->state) != NVMF_NS_REMOVED) {
		pthread_mutex_unlock(&tgt->lock);
		nvmf_ns_free(ns);
		return -EEXIST;
	}
	if (old && tgt->nretired >= NVMF_MAX_RETIRED) {
		pthread_mutex_unlock(&tgt->lock);
		nvmf_ns_free(ns);
		return -EBUSY;
	}
	if (old) { /* removed: kept until the target goes */
		old->retired = tgt->retired;
		tgt->retired = old;
		tgt->nretired++;
		ns->gen = old->gen + 1;
		nvmf_ns_ids(s->nqn, c->nsid, ns->gen, ns->nguid, ns->uuid);
	}
	atomic_store_explicit(&s->ns[c->nsid], ns, memory_order_release);
	notify_locked(tgt, s, c->nsid);
	pthread_mutex_unlock(&tgt->lock);
	return 0;
}

int nvmf_tgt_ns_add_ram(struct nvmf_tgt *tgt, const char *subnqn, uint32_t nsid,
			uint64_t size, uint32_t block_size)
{
	struct nvmf_cfg_ns c = {.nsid = nsid,
				.kind = NVMF_BDEV_RAM,
				.size = size,
				.block_size = block_size};

	return nvmf_tgt_ns_add(tgt, subnqn, &c, NULL, 0);
}
