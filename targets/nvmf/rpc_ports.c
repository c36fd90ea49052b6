/*
 * targets/nvmf/rpc_ports.c - the JSON-RPC methods that change the target's
 * shape while it runs: subsystems created and deleted, listeners added
 * to and removed from a subsystem (SPDK's names and params). A subsystem
 * created here is served nowhere until a listener is added to it, as in
 * SPDK. A listen address starts when a subsystem is first exported there
 * and stops when none is served there any more (but the last one: a saved
 * configuration needs a listen line, as it needs a subsystem, so the last
 * subsystem cannot be deleted either).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "targets/nvmf/internal.h"
#include "targets/nvmf/nqn.h"
#include "targets/nvmf/rpc_int.h"

/* Printable ASCII, no leading, trailing or doubled space, 1..@max bytes;
 * no space at all when !@spaces. The config file's words, so that
 * save_config writes what it parses back. */
static bool field_ok(const char *v, size_t max, bool spaces)
{
	size_t n = strlen(v);

	if (n == 0 || n > max || v[0] == ' ' || v[n - 1] == ' ')
		return false;
	if (v[0] == '#') /* a comment to the config parser */
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < 0x20 || v[i] > 0x7e ||
		    (v[i] == '#' && v[i - 1] == ' '))
			return false;
		if (v[i] == ' ' && (!spaces || v[i + 1] == ' '))
			return false;
	}
	return true;
}

/* An optional string member; 0 with *out NULL when absent. */
static int opt_str(struct rpc_call *c, const char *key, const char **out)
{
	*out = NULL;
	if (!json_object_get(c->params, key))
		return 0;
	*out = rpc_str(c, key);
	return *out ? 0 : -1;
}

/* A serial number derived from the NQN (FNV-1a), stable across restarts
 * of the same configuration. */
static void default_serial(const char *nqn, char *out, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const char *p = nqn; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	snprintf(out, len, "WH%012llx", (unsigned long long)(h >> 16));
}

int rpc_create_subsystem(struct rpc_call *c)
{
	static const char *const keys[] = {
		"nqn", "serial_number", "model_number", "allow_any_host", NULL};
	struct nvmf_cfg_subsys cs;
	const char *nqn, *sn, *mn;
	char err[256] = "";
	json_t *any;
	int rc;

	if (rpc_only(c, keys) || !(nqn = rpc_str(c, "nqn")) ||
	    opt_str(c, "serial_number", &sn) || opt_str(c, "model_number", &mn))
		return -1;
	memset(&cs, 0, sizeof(cs));
	if (strlen(nqn) >= sizeof(cs.nqn) || !nvmf_nqn_valid(nqn))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"nqn\": \"%.240s\" is not a valid NQN", nqn);
	if (!strcmp(nqn, NVME_DISC_NQN))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"nqn\": %s is the discovery subsystem's",
				nqn);
	if (sn && !field_ok(sn, sizeof(cs.serial) - 1, false))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"serial_number\": 1 to 20 printable "
				"characters, no space, not starting with #");
	if (mn && !field_ok(mn, sizeof(cs.model) - 1, true))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"model_number\": 1 to 40 printable "
				"characters, single spaces between words, "
				"no word starting with #");
	any = json_object_get(c->params, "allow_any_host");
	if (any && !json_is_boolean(any))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"allow_any_host\": must be true or false");
	snprintf(cs.nqn, sizeof(cs.nqn), "%s", nqn);
	if (sn)
		snprintf(cs.serial, sizeof(cs.serial), "%s", sn);
	else
		default_serial(nqn, cs.serial, sizeof(cs.serial));
	snprintf(cs.model, sizeof(cs.model), "%s",
		 mn ? mn : "wharf NVMe-oF target");
	cs.allow_any = any && json_is_true(any);
	cs.allow_none = !cs.allow_any;
	cs.export_none = true; /* served once a listener is added */
	rc = nvmf_tgt_subsys_add(c->env->tgt, &cs, err, sizeof(err));
	switch (rc) {
	case 0:
		c->result = json_true();
		return 0;
	case -EEXIST:
		return rpc_fail(c, rc, "subsystem %s exists already", nqn);
	case -ENOSPC:
		return rpc_fail(c, rc,
				"at most %d subsystems: delete one first "
				"(nvmf_delete_subsystem)",
				NVMF_CFG_MAX_SUBSYS);
	default:
		return rpc_fail_errno(c, rc, "create_subsystem");
	}
}

int rpc_delete_subsystem(struct rpc_call *c)
{
	static const char *const keys[] = {"nqn", NULL};
	struct nvmf_subsys *s;
	unsigned n = 0;
	int rc;

	if (rpc_only(c, keys) || !(s = rpc_subsys(c)))
		return -1;
	if (nvmf_subsys_table(c->env->tgt)->n <= 2)
		return rpc_fail(c, -EBUSY,
				"%s is the last subsystem: a configuration "
				"needs one (create another first)",
				s->nqn);
	rc = nvmf_tgt_subsys_delete(c->env->tgt, s->nqn, &n);
	if (rc)
		return rpc_fail_errno(c, rc, "delete_subsystem");
	c->result = json_object();
	json_object_set_new(c->result, "disconnected", json_integer(n));
	return 0;
}

/* "listen_address": {trtype, adrfam, traddr, trsvcid} into @l. */
static int listen_address(struct rpc_call *c, struct nvmf_cfg_listen *l)
{
	static const char *const keys[] = {"trtype", "adrfam", "traddr",
					   "trsvcid", NULL};
	json_t *a = json_object_get(c->params, "listen_address");
	json_t *params = c->params, *v;
	const char *addr, *fam = NULL, *tr = NULL;
	unsigned char bin[16];
	long port = 4420;
	int rc = -1;

	if (!json_is_object(a))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"listen_address\": %s",
				a ? "must be an object" : "missing");
	c->params = a; /* the helpers below read its members */
	if (rpc_only(c, keys) || !(addr = rpc_str(c, "traddr")) ||
	    opt_str(c, "adrfam", &fam) || opt_str(c, "trtype", &tr))
		goto out;
	if (tr && strcasecmp(tr, "RDMA")) {
		rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
			 "\"trtype\": only RDMA is served");
		goto out;
	}
	v = json_object_get(a, "trsvcid");
	if (json_is_integer(v)) {
		port = (long)json_integer_value(v);
	} else if (json_is_string(v)) {
		char *end;

		port = strtol(json_string_value(v), &end, 10);
		if (!*json_string_value(v) || *end)
			port = -1;
	} else if (v) {
		port = -1;
	}
	if (port < 1 || port > 65535) {
		rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
			 "\"trsvcid\": a port, 1..65535");
		goto out;
	}
	memset(l, 0, sizeof(*l));
	if (fam && strcasecmp(fam, "IPv4") && strcasecmp(fam, "IPv6")) {
		rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
			 "\"adrfam\": IPv4 or IPv6");
		goto out;
	}
	l->family = fam ? (strcasecmp(fam, "IPv6") ? AF_INET : AF_INET6)
			: (strchr(addr, ':') ? AF_INET6 : AF_INET);
	if (strlen(addr) >= sizeof(l->addr) ||
	    inet_pton(l->family, addr, bin) != 1) {
		rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
			 "\"traddr\": \"%.64s\" is not a numeric %s address",
			 addr, l->family == AF_INET6 ? "IPv6" : "IPv4");
		goto out;
	}
	snprintf(l->addr, sizeof(l->addr), "%s", addr);
	l->port = (uint16_t)port;
	rc = 0;
out:
	c->params = params;
	return rc;
}

int rpc_add_listener(struct rpc_call *c)
{
	static const char *const keys[] = {"nqn", "listen_address", NULL};
	const struct nvmf_rpc_env *env = c->env;
	struct nvmf_cfg_listen l;
	struct nvmf_subsys *s;
	uint16_t slot = 0;
	bool started;
	int rc;

	if (rpc_only(c, keys) || !(s = rpc_subsys(c)) || listen_address(c, &l))
		return -1;
	if (env->listen) {
		rc = env->listen(env->arg, &l, &slot);
	} else { /* no binding: the core's slots alone */
		rc = nvmf_tgt_listener_add(env->tgt, &l, &slot);
		if (!rc)
			nvmf_tgt_listener_commit(env->tgt, slot, true);
	}
	started = rc == 0;
	if (rc && rc != -EEXIST) {
		if (rc == -ENOSPC)
			return rpc_fail(c, rc,
					"at most %d listen addresses: remove "
					"one first",
					NVMF_CFG_MAX_LISTEN);
		return rpc_fail(c, rc, "listen %s %u: %s", l.addr, l.port,
				strerror(-rc));
	}
	rc = nvmf_tgt_subsys_export(env->tgt, s->nqn, slot, true, NULL);
	if (rc == -EEXIST)
		return rpc_fail(c, rc, "%s is exported on %s %u already",
				s->nqn, l.addr, l.port);
	if (rc) {
		if (started && !nvmf_tgt_listener_used(env->tgt, slot))
			env->unlisten ? env->unlisten(env->arg, slot, NULL)
				      : nvmf_tgt_listener_remove(env->tgt, slot,
								 NULL);
		return rpc_fail_errno(c, rc, "add_listener");
	}
	c->result = json_true();
	return 0;
}

int rpc_remove_listener(struct rpc_call *c)
{
	static const char *const keys[] = {"nqn", "listen_address", NULL};
	const struct nvmf_rpc_env *env = c->env;
	struct nvmf_cfg_listen l;
	struct nvmf_subsys *s;
	unsigned n = 0, m = 0;
	uint16_t slot;
	int rc;

	if (rpc_only(c, keys) || !(s = rpc_subsys(c)) || listen_address(c, &l))
		return -1;
	slot = nvmf_tgt_listener_find(env->tgt, &l);
	if (!slot)
		return rpc_fail(c, -ENOENT,
				"the target does not listen on %s %u", l.addr,
				l.port);
	rc = nvmf_tgt_subsys_export(env->tgt, s->nqn, slot, false, &n);
	if (rc == -ENOENT)
		return rpc_fail(c, rc, "%s is not exported on %s %u", s->nqn,
				l.addr, l.port);
	if (rc)
		return rpc_fail_errno(c, rc, "remove_listener");
	/* Nothing served there any more: stop listening, unless it is the
	 * last address (a configuration needs one listen line). */
	unsigned live = 0;
	for (uint16_t i = 1; i <= NVMF_CFG_MAX_LISTEN; i++)
		live += i != slot && nvmf_tgt_listener_live(env->tgt, i);
	if (live && !nvmf_tgt_listener_used(env->tgt, slot)) {
		rc = env->unlisten
			     ? env->unlisten(env->arg, slot, &m)
			     : nvmf_tgt_listener_remove(env->tgt, slot, &m);
		if (rc)
			return rpc_fail_errno(c, rc, "stop listening");
	}
	c->result = json_object();
	json_object_set_new(c->result, "disconnected", json_integer(n + m));
	return 0;
}
