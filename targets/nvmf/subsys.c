/*
 * targets/nvmf/subsys.c - subsystems and their namespaces: creation from
 * the configuration, the host allow-list, namespace lookup for commands,
 * and stable namespace identifiers.
 *
 * Namespaces are published in an array of atomic pointers indexed by NSID
 * and never freed before the subsystem, so the I/O path looks them up
 * without a lock; a removed namespace stays in place with state REMOVED.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/pointer.h>

#include "targets/nvmf/internal.h"

struct nvmf_subsys_tab *nvmf_subsys_table(const struct nvmf_tgt *tgt)
{
	return rcu_dereference(tgt->subsys);
}

struct nvmf_subsys *nvmf_subsys_find(struct nvmf_tgt *tgt, const char *nqn)
{
	struct nvmf_subsys_tab *t = nvmf_subsys_table(tgt);

	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->s[i]->nqn, nqn))
			return t->s[i];
	return NULL;
}

bool nvmf_tgt_listener_live(const struct nvmf_tgt *tgt, uint16_t listener)
{
	return !listener || (listener <= NVMF_CFG_MAX_LISTEN &&
			     (atomic_load_explicit(&tgt->listen_live,
						   memory_order_acquire) >>
				      (listener - 1) &
			      1u));
}

bool nvmf_subsys_host_allowed_locked(const struct nvmf_subsys *s,
				     const char *hostnqn)
{
	if (s->discovery || s->allow_any)
		return true;
	for (size_t i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i], hostnqn))
			return true;
	return false;
}

bool nvmf_subsys_host_allowed(const struct nvmf_subsys *s, const char *hostnqn)
{
	bool ok;

	if (s->discovery)
		return true;
	pthread_mutex_lock(&s->tgt->lock);
	ok = nvmf_subsys_host_allowed_locked(s, hostnqn);
	pthread_mutex_unlock(&s->tgt->lock);
	return ok;
}

bool nvmf_subsys_on_listener(const struct nvmf_subsys *s, uint16_t listener)
{
	if (!nvmf_tgt_listener_live(s->tgt, listener))
		return false;
	/* Written under tgt->lock by the management thread; read here
	 * without it (Connect checks again under the lock). */
	if (s->discovery || __atomic_load_n(&s->listen_all, __ATOMIC_RELAXED))
		return true;
	return listener >= 1 && listener <= 32 &&
	       (__atomic_load_n(&s->listen_mask, __ATOMIC_RELAXED) >>
			(listener - 1) &
		1u);
}

bool nvmf_queue_listener_current(const struct nvmf_queue *q)
{
	if (!q->listener)
		return true;
	return nvmf_tgt_listener_live(q->tgt, q->listener) &&
	       atomic_load_explicit(&q->tgt->listen_gen[q->listener - 1],
				    memory_order_acquire) == q->listener_gen;
}

struct nvmf_ns *nvmf_subsys_ns(struct nvmf_subsys *s, uint32_t nsid)
{
	if (nsid < 1 || nsid > NVMF_MAX_NSID)
		return NULL;
	return atomic_load_explicit(&s->ns[nsid], memory_order_acquire);
}

uint16_t nvmf_ns_lookup(struct nvmf_subsys *s, uint32_t nsid,
			struct nvmf_ns **out)
{
	struct nvmf_ns *ns = nvmf_subsys_ns(s, nsid);
	int state;

	*out = NULL;
	if (!ns)
		return nvmf_sts_gen(NVME_SC_INVALID_NS);
	state = atomic_load_explicit(&ns->state, memory_order_acquire);
	if (state == NVMF_NS_REMOVED)
		return nvmf_sts_gen(NVME_SC_INVALID_NS);
	if (state == NVMF_NS_NOT_READY) /* retryable: no DNR */
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_NS_NOT_READY);
	*out = ns;
	return 0;
}

/* FNV-1a, 64 bits, over the NQN, the NSID, the generation (when not 0:
 * generation 0 keeps the identifiers of before generations existed) and a
 * salt. */
static uint64_t fnv(const char *nqn, uint32_t nsid, uint32_t gen, uint8_t salt)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const char *p = nqn; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	for (int i = 0; i < 4; i++)
		h = (h ^ ((nsid >> (8 * i)) & 0xFF)) * 0x100000001b3ull;
	for (int i = 0; gen && i < 4; i++)
		h = (h ^ ((gen >> (8 * i)) & 0xFF)) * 0x100000001b3ull;
	return (h ^ salt) * 0x100000001b3ull;
}

void nvmf_ns_ids(const char *subnqn, uint32_t nsid, uint32_t gen,
		 uint8_t nguid[16], uint8_t uuid[16])
{
	uint64_t h[4];

	for (int i = 0; i < 4; i++)
		h[i] = fnv(subnqn, nsid, gen, (uint8_t)(i + 1));
	memcpy(nguid, &h[0], 8);
	memcpy(nguid + 8, &h[1], 8);
	memcpy(uuid, &h[2], 8);
	memcpy(uuid + 8, &h[3], 8);
	uuid[6] = (uint8_t)((uuid[6] & 0x0F) | 0x40); /* version 4 layout */
	uuid[8] = (uint8_t)((uuid[8] & 0x3F) | 0x80); /* RFC 4122 variant */
}

/* log2 of a power of two. */
static uint8_t log2_u32(uint32_t v)
{
	uint8_t r = 0;

	while (v > 1) {
		v >>= 1;
		r++;
	}
	return r;
}

/* How an error names a namespace's backing: its path, "ram" or "null". */
static const char *backing_name(const struct nvmf_cfg_ns *cn)
{
	if (cn->path)
		return cn->path;
	return cn->kind == NVMF_BDEV_NULL ? "null" : "ram";
}

int nvmf_ns_create(struct nvmf_subsys *s, const struct nvmf_cfg_ns *c,
		   struct nvmf_ns **out, char *why, size_t whylen)
{
	struct nvmf_ns *ns = calloc(1, sizeof(*ns));
	int rc;

	if (!ns)
		return -ENOMEM;
	if (c->kind == NVMF_BDEV_RAM)
		rc = nvmf_bdev_open_ram(&ns->bdev, c->size, c->block_size);
	else if (c->kind == NVMF_BDEV_NULL)
		rc = nvmf_bdev_open_null(&ns->bdev, c->size, c->block_size);
	else if (c->kind == NVMF_BDEV_FILE)
		rc = nvmf_bdev_open_path(&ns->bdev, c->path, c->block_size,
					 c->io, why, whylen);
	else
		rc = -EINVAL;
	if (rc) {
		free(ns);
		return rc;
	}
	ns->cfg = *c;
	ns->cfg.path = c->path ? strdup(c->path) : NULL;
	if (c->path && !ns->cfg.path) {
		nvmf_bdev_close(&ns->bdev);
		free(ns);
		return -ENOMEM;
	}
	ns->nsid = c->nsid;
	ns->lbads = log2_u32(ns->bdev.block_size);
	ns->nsze = ns->bdev.size >> ns->lbads;
	ns->line = c->line;
	atomic_init(&ns->state, NVMF_NS_ACTIVE);
	nvmf_ns_ids(s->nqn, c->nsid, 0, ns->nguid, ns->uuid);
	*out = ns;
	return 0;
}

/* Close and free a namespace. */
void nvmf_ns_free(struct nvmf_ns *ns)
{
	nvmf_bdev_close(&ns->bdev);
	free(ns->cfg.path);
	free(ns);
}

/* A subsystem with no namespace. */
static struct nvmf_subsys *subsys_alloc(struct nvmf_tgt *tgt, const char *nqn)
{
	struct nvmf_subsys *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->tgt = tgt;
	snprintf(s->nqn, sizeof(s->nqn), "%s", nqn);
	for (size_t i = 0; i <= NVMF_MAX_NSID; i++)
		atomic_init(&s->ns[i], NULL);
	return s;
}

struct nvmf_subsys *nvmf_subsys_create_discovery(struct nvmf_tgt *tgt)
{
	struct nvmf_subsys *s = subsys_alloc(tgt, NVME_DISC_NQN);

	if (!s)
		return NULL;
	s->discovery = true;
	snprintf(s->sn, sizeof(s->sn), "WHARFDISC");
	snprintf(s->mn, sizeof(s->mn), "wharf discovery controller");
	return s;
}

int nvmf_subsys_create(struct nvmf_tgt *tgt, const struct nvmf_cfg_subsys *c,
		       const char *source, struct nvmf_subsys **out, char *err,
		       size_t errlen)
{
	struct nvmf_subsys *s = subsys_alloc(tgt, c->nqn);
	int rc = 0;

	if (!s)
		return -ENOMEM;
	snprintf(s->sn, sizeof(s->sn), "%s", c->serial);
	snprintf(s->mn, sizeof(s->mn), "%s", c->model);
	s->allow_any = c->allow_any; /* allow_none: an empty list */
	s->listen_mask = c->listen_mask;
	s->listen_all = !c->listen_mask && !c->export_none;
	if (c->nhosts) {
		s->hosts = calloc(c->nhosts, sizeof(*s->hosts));
		s->host_auth = calloc(c->nhosts, sizeof(*s->host_auth));
		if (!s->hosts || !s->host_auth)
			rc = -ENOMEM;
	}
	for (size_t i = 0; !rc && i < c->nhosts; i++) {
		const struct nvmf_auth_cfg *a =
			c->host_auth ? c->host_auth[i] : NULL;

		s->hosts[i] = strdup(c->hosts[i]);
		s->host_auth[i] = a ? nvmf_auth_cfg_dup(a) : NULL;
		if (!s->hosts[i] || (a && !s->host_auth[i])) {
			free(s->hosts[i]);
			nvmf_auth_cfg_free(s->host_auth[i]);
			rc = -ENOMEM;
		} else {
			s->nhosts++;
		}
	}
	for (size_t i = 0; !rc && i < c->nns; i++) {
		const struct nvmf_cfg_ns *cn = &c->ns[i];
		char why[160];
		struct nvmf_ns *ns;

		if (cn->nsid < 1 || cn->nsid > NVMF_MAX_NSID ||
		    nvmf_subsys_ns(s, cn->nsid)) {
			rc = -EINVAL;
			if (err && errlen)
				snprintf(err, errlen, "%s:%u: bad NSID %u",
					 source, cn->line, cn->nsid);
			break;
		}
		why[0] = '\0';
		rc = nvmf_ns_create(s, cn, &ns, why, sizeof(why));
		if (rc) {
			if (err && errlen)
				snprintf(err, errlen,
					 "%s:%u: namespace %u (%s): %s", source,
					 cn->line, cn->nsid, backing_name(cn),
					 why[0] ? why : strerror(-rc));
			break;
		}
		atomic_store_explicit(&s->ns[cn->nsid], ns,
				      memory_order_release);
	}
	if (rc) {
		nvmf_subsys_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

void nvmf_subsys_destroy(struct nvmf_subsys *s)
{
	if (!s)
		return;
	for (size_t i = 1; i <= NVMF_MAX_NSID; i++) {
		struct nvmf_ns *ns = atomic_load(&s->ns[i]);

		if (ns)
			nvmf_ns_free(ns);
	}
	for (size_t i = 0; i < s->nhosts; i++) {
		free(s->hosts[i]);
		nvmf_auth_cfg_free(s->host_auth[i]);
	}
	free(s->hosts);
	free(s->host_auth);
	free(s);
}

const struct nvmf_auth_cfg *
nvmf_subsys_host_auth_locked(const struct nvmf_subsys *s, const char *hostnqn)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i], hostnqn))
			return s->host_auth[i];
	return NULL;
}
