/*
 * targets/nvmf/mgmt.c - who may connect, changed while the target runs:
 * hosts added to and removed from a subsystem's allow-list, allow-any-host
 * switched. Every change is made under tgt->lock, where Connect's final
 * check (nvmf_ctrl_create()) also looks, so a host removed here gets no
 * new controller; its existing controllers are torn down as a keep-alive
 * expiry does (the binding disconnects every queue), and the discovery
 * log's generation counter moves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "targets/nvmf/internal.h"
#include "targets/nvmf/nqn.h"

/* The subsystem @subnqn, not the discovery one; NULL if none. */
static struct nvmf_subsys *nvm_subsys(struct nvmf_tgt *tgt, const char *subnqn)
{
	struct nvmf_subsys *s = subnqn ? nvmf_subsys_find(tgt, subnqn) : NULL;

	return s && !s->discovery ? s : NULL;
}

/* Tear down @s's live controllers the allow-list no longer admits (all of
 * @hostnqn's when given). tgt->lock held. Return: how many. */
static unsigned revoke_locked(struct nvmf_tgt *tgt, struct nvmf_subsys *s,
			      const char *hostnqn)
{
	unsigned n = 0;

	for (struct nvmf_ctrl *c = tgt->ctrls; c; c = c->next) {
		if (c->subsys != s || c->state != NVMF_CTRL_LIVE)
			continue;
		if (hostnqn ? strcmp(c->hostnqn, hostnqn)
			    : nvmf_subsys_host_allowed_locked(s, c->hostnqn))
			continue;
		nvmf_ctrl_revoke_locked(c);
		n++;
	}
	return n;
}

int nvmf_tgt_host_add(struct nvmf_tgt *tgt, const char *subnqn,
		      const char *hostnqn, const struct nvmf_auth_cfg *auth)
{
	struct nvmf_subsys *s = nvm_subsys(tgt, subnqn);
	struct nvmf_auth_cfg *adup = NULL;
	char *dup;
	int rc = 0;

	if (!s)
		return -ENOENT;
	if (!hostnqn || !nvmf_nqn_valid(hostnqn))
		return -EINVAL;
	dup = strdup(hostnqn);
	if (auth && auth->key.len)
		adup = nvmf_auth_cfg_dup(auth);
	if (!dup || (auth && auth->key.len && !adup)) {
		free(dup);
		nvmf_auth_cfg_free(adup);
		return -ENOMEM;
	}
	pthread_mutex_lock(&tgt->lock);
	if (s->allow_any)
		rc = -EPERM;
	else if (s->nhosts >= NVMF_CFG_MAX_HOSTS)
		rc = -ENOSPC;
	for (size_t i = 0; !rc && i < s->nhosts; i++)
		if (!strcmp(s->hosts[i], hostnqn))
			rc = -EEXIST;
	if (!rc) {
		if (nvmf_hosts_grow(&s->hosts, &s->host_auth, s->nhosts)) {
			rc = -ENOMEM;
		} else {
			s->host_auth[s->nhosts] = adup;
			s->hosts[s->nhosts++] = dup;
			dup = NULL;
			adup = NULL;
			tgt->disc_genctr++;
		}
	}
	pthread_mutex_unlock(&tgt->lock);
	free(dup);
	nvmf_auth_cfg_free(adup);
	return rc;
}

int nvmf_tgt_host_remove(struct nvmf_tgt *tgt, const char *subnqn,
			 const char *hostnqn, unsigned *revoked)
{
	struct nvmf_subsys *s = nvm_subsys(tgt, subnqn);
	struct nvmf_auth_cfg *gone_auth = NULL;
	char *gone = NULL;
	unsigned n = 0;

	if (!s)
		return -ENOENT;
	if (!hostnqn)
		return -EINVAL;
	pthread_mutex_lock(&tgt->lock);
	for (size_t i = 0; i < s->nhosts; i++) {
		if (strcmp(s->hosts[i], hostnqn))
			continue;
		gone = s->hosts[i];
		gone_auth = s->host_auth[i];
		s->nhosts--;
		s->hosts[i] = s->hosts[s->nhosts];
		s->host_auth[i] = s->host_auth[s->nhosts];
		break;
	}
	if (gone) {
		tgt->disc_genctr++;
		n = revoke_locked(tgt, s, hostnqn);
	}
	pthread_mutex_unlock(&tgt->lock);
	if (revoked)
		*revoked = n;
	if (!gone)
		return -ENOENT;
	free(gone);
	nvmf_auth_cfg_free(gone_auth);
	return 0;
}

int nvmf_tgt_allow_any(struct nvmf_tgt *tgt, const char *subnqn, bool allow,
		       unsigned *revoked)
{
	struct nvmf_subsys *s = nvm_subsys(tgt, subnqn);
	unsigned n = 0;
	int rc = 0;

	if (!s)
		return -ENOENT;
	pthread_mutex_lock(&tgt->lock);
	if (allow && s->nhosts) {
		rc = -EPERM;
	} else if (s->allow_any != allow) {
		s->allow_any = allow;
		tgt->disc_genctr++;
		if (!allow)
			n = revoke_locked(tgt, s, NULL);
	}
	pthread_mutex_unlock(&tgt->lock);
	if (revoked)
		*revoked = n;
	return rc;
}
