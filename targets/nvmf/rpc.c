/*
 * targets/nvmf/rpc.c - JSON-RPC 2.0 requests against a running target
 * (methods and errors in rpc.h). jansson parses and prints; this file
 * checks the envelope and each method's params strictly (an unknown
 * member is an error: a misspelt option must not be ignored), then calls
 * the core's run-time functions (tgt.c, mgmt.c, save.c). A namespace's
 * "bdev" goes through the configuration parser itself, so the RPC and the
 * config file accept the same backings with the same messages.
 */
#include "targets/nvmf/rpc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "targets/nvmf/internal.h"
#include "targets/nvmf/rpc_int.h"

/* Cut a trailing UTF-8 sequence that truncation left incomplete. */
static void utf8_trim(char *s)
{
	size_t n = strlen(s), lead = n, need;
	unsigned char b;

	while (lead > 0 && n - lead < 4 &&
	       ((unsigned char)s[lead - 1] & 0xC0) == 0x80)
		lead--;
	if (lead == 0)
		return;
	lead--; /* the byte that starts the last sequence */
	b = (unsigned char)s[lead];
	need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
	if (lead + need > n)
		s[lead] = '\0';
}

/* A JSON string of @s, or a stand-in when @s is NULL or not UTF-8. */
json_t *rpc_jstr(const char *s)
{
	json_t *v = s ? json_string(s) : NULL;

	return v ? v : json_string("(not UTF-8)");
}

int rpc_fail(struct rpc_call *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	utf8_trim(c->msg);
	c->code = code;
	return -1;
}

/* An operation's -errno as the error, with @what said first. */
int rpc_fail_errno(struct rpc_call *c, int rc, const char *what)
{
	return rpc_fail(c, rc < 0 ? rc : NVMF_RPC_INTERNAL_ERROR, "%s: %s",
			what, strerror(rc < 0 ? -rc : EIO));
}

/* Params must be members of @allowed (NULL-terminated) only. */
int rpc_only(struct rpc_call *c, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(c->params, key, v)
	{
		const char *const *a = allowed;

		while (*a && strcmp(*a, key))
			a++;
		if (!*a)
			return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
					"unknown member \"%s\"", key);
	}
	return 0;
}

/* A string member; NULL (error set) if missing or not a string. */
const char *rpc_str(struct rpc_call *c, const char *key)
{
	json_t *v = json_object_get(c->params, key);

	if (!json_is_string(v)) {
		rpc_fail(c, NVMF_RPC_INVALID_PARAMS, "\"%s\": %s", key,
			 v ? "must be a string" : "missing");
		return NULL;
	}
	return json_string_value(v);
}

/* An integer member in [lo, hi]; @def when absent unless @required. */
int rpc_u32(struct rpc_call *c, const char *key, uint32_t lo, uint32_t hi,
	    bool required, uint32_t def, uint32_t *out)
{
	json_t *v = json_object_get(c->params, key);
	json_int_t n;

	if (!v && !required) {
		*out = def;
		return 0;
	}
	if (!json_is_integer(v))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS, "\"%s\": %s", key,
				v ? "must be an integer" : "missing");
	n = json_integer_value(v);
	if (n < (json_int_t)lo || n > (json_int_t)hi)
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"%s\": %lld is not %u..%u", key, (long long)n,
				lo, hi);
	*out = (uint32_t)n;
	return 0;
}

/* The subsystem @nqn names (not the discovery one), or NULL (error set). */
struct nvmf_subsys *rpc_subsys(struct rpc_call *c)
{
	const char *nqn = rpc_str(c, "nqn");
	struct nvmf_subsys *s;

	if (!nqn)
		return NULL;
	s = nvmf_subsys_find(c->env->tgt, nqn);
	if (!s || s->discovery) {
		rpc_fail(c, -ENOENT,
			 "no subsystem %s (nvmf_get_subsystems lists them)",
			 nqn);
		return NULL;
	}
	return s;
}

static json_t *uuid_json(const uint8_t *u)
{
	char id[40];

	snprintf(id, sizeof(id),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
	return json_string(id);
}

static const char *const bdev_kind_names[] = {
	[NVMF_BDEV_RAM] = "ram",
	[NVMF_BDEV_FILE] = "file",
	[NVMF_BDEV_NULL] = "null",
	[NVMF_BDEV_BLOCK] = "block",
};

static json_t *ns_json(const struct nvmf_ns *ns)
{
	int state = atomic_load(&ns->state);
	json_t *o = json_object();

	json_object_set_new(o, "nsid", json_integer(ns->nsid));
	json_object_set_new(o, "backing",
			    json_string(bdev_kind_names[ns->bdev.kind]));
	if (ns->cfg.path)
		json_object_set_new(o, "path", rpc_jstr(ns->cfg.path));
	json_object_set_new(o, "size", json_integer((json_int_t)ns->bdev.size));
	json_object_set_new(o, "block_size", json_integer(ns->bdev.block_size));
	json_object_set_new(o, "read_only", json_boolean(ns->bdev.read_only));
	json_object_set_new(
		o, "state",
		json_string(state == NVMF_NS_ACTIVE ? "active" : "not-ready"));
	json_object_set_new(o, "uuid", uuid_json(ns->uuid));
	return o;
}

static json_t *listen_json(const struct nvmf_cfg_listen *l)
{
	json_t *o = json_object();
	char svc[8];

	snprintf(svc, sizeof(svc), "%u", l->port);
	json_object_set_new(o, "trtype", json_string("RDMA"));
	json_object_set_new(
		o, "adrfam",
		json_string(l->family == AF_INET6 ? "IPv6" : "IPv4"));
	json_object_set_new(o, "traddr", json_string(l->addr));
	json_object_set_new(o, "trsvcid", json_string(svc));
	return o;
}

/* One subsystem. tgt->lock held. */
static json_t *subsys_json(const struct nvmf_tgt *tgt,
			   const struct nvmf_subsys *s)
{
	json_t *o = json_object(), *a;

	json_object_set_new(o, "nqn", json_string(s->nqn));
	json_object_set_new(o, "subtype",
			    json_string(s->discovery ? "Discovery" : "NVMe"));
	a = json_array();
	for (size_t i = 0; i < NVMF_CFG_MAX_LISTEN; i++)
		if (nvmf_subsys_on_listener(s, (uint16_t)(i + 1)))
			json_array_append_new(a, listen_json(&tgt->listen[i]));
	json_object_set_new(o, "listen_addresses", a);
	if (s->discovery)
		return o;
	json_object_set_new(o, "serial_number", json_string(s->sn));
	json_object_set_new(o, "model_number", json_string(s->mn));
	json_object_set_new(o, "allow_any_host", json_boolean(s->allow_any));
	a = json_array();
	for (size_t i = 0; i < s->nhosts; i++) {
		const struct nvmf_auth_cfg *auth = s->host_auth[i];
		json_t *h = json_object();

		json_object_set_new(h, "nqn", json_string(s->hosts[i]));
		/* Whether it authenticates, never the secret. */
		if (auth) {
			json_object_set_new(h, "dhchap", json_true());
			json_object_set_new(h, "dhchap_ctrlr",
					    json_boolean(auth->has_ctrl_key));
		}
		json_array_append_new(a, h);
	}
	json_object_set_new(o, "hosts", a);
	a = json_array();
	for (uint32_t n = 1; n <= NVMF_MAX_NSID; n++) {
		const struct nvmf_ns *ns =
			atomic_load_explicit(&s->ns[n], memory_order_acquire);

		if (ns && atomic_load(&ns->state) != NVMF_NS_REMOVED)
			json_array_append_new(a, ns_json(ns));
	}
	json_object_set_new(o, "namespaces", a);
	return o;
}

static int m_get_subsystems(struct rpc_call *c)
{
	static const char *const keys[] = {NULL};
	struct nvmf_tgt *tgt = c->env->tgt;

	if (rpc_only(c, keys))
		return -1;
	c->result = json_array();
	pthread_mutex_lock(&tgt->lock);
	struct nvmf_subsys_tab *t = nvmf_subsys_table(tgt);
	for (size_t i = 0; i < t->n; i++)
		json_array_append_new(c->result, subsys_json(tgt, t->s[i]));
	pthread_mutex_unlock(&tgt->lock);
	return 0;
}

static int m_get_controllers(struct rpc_call *c)
{
	static const char *const keys[] = {"nqn", NULL};
	struct nvmf_tgt *tgt = c->env->tgt;
	struct nvmf_subsys *s;

	if (rpc_only(c, keys) || !(s = rpc_subsys(c)))
		return -1;
	c->result = json_array();
	pthread_mutex_lock(&tgt->lock);
	for (struct nvmf_ctrl *ctrl = tgt->ctrls; ctrl; ctrl = ctrl->next) {
		json_t *o;
		unsigned nq = 0;
		uint32_t kato;

		if (ctrl->subsys != s)
			continue;
		o = json_object();
		pthread_mutex_lock(&ctrl->lock);
		for (uint32_t q = 0; q <= ctrl->max_qid; q++)
			nq += ctrl->queues[q] != NULL;
		kato = ctrl->kato_ms;
		pthread_mutex_unlock(&ctrl->lock);
		json_object_set_new(o, "cntlid", json_integer(ctrl->cntlid));
		json_object_set_new(o, "hostnqn", json_string(ctrl->hostnqn));
		json_object_set_new(o, "hostid", uuid_json(ctrl->hostid));
		json_object_set_new(o, "state",
				    json_string(ctrl->state == NVMF_CTRL_LIVE
							? "live"
							: "dying"));
		json_object_set_new(o, "queues", json_integer(nq));
		json_object_set_new(o, "keep_alive_ms", json_integer(kato));
		json_array_append_new(c->result, o);
	}
	pthread_mutex_unlock(&tgt->lock);
	return 0;
}

static json_t *u64_json(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* A queue's latency: percentiles and the non-empty buckets. */
static json_t *lat_json(const uint64_t *b)
{
	json_t *o = json_object(), *h = json_array();

	json_object_set_new(o, "p50", u64_json(nvmf_lat_percentile_us(b, 500)));
	json_object_set_new(o, "p99", u64_json(nvmf_lat_percentile_us(b, 990)));
	json_object_set_new(o, "p99_9",
			    u64_json(nvmf_lat_percentile_us(b, 999)));
	for (unsigned i = 0; i < NVMF_LAT_BUCKETS; i++) {
		json_t *e;
		uint64_t le = nvmf_lat_bucket_le_us(i);

		if (!b[i])
			continue;
		e = json_object();
		/* "le_us": below this bound; the last bucket has none. */
		json_object_set_new(e, "le_us",
				    le == UINT64_MAX ? json_null()
						     : u64_json(le));
		json_object_set_new(e, "count", u64_json(b[i]));
		json_array_append_new(h, e);
	}
	json_object_set_new(o, "histogram", h);
	return o;
}

/* One queue of a controller, as nvmf_subsystem_get_qpairs shows it
 * (ctrl->lock held: the queue stays). */
static json_t *qpair_json(const struct nvmf_ctrl *ctrl,
			  const struct nvmf_queue *q)
{
	json_t *o = json_object();
	uint64_t b[NVMF_LAT_BUCKETS];

	for (unsigned i = 0; i < NVMF_LAT_BUCKETS; i++)
		b[i] = atomic_load_explicit(&q->lat[i], memory_order_relaxed);
	json_object_set_new(o, "cntlid", json_integer(ctrl->cntlid));
	json_object_set_new(o, "qid", json_integer(q->qid));
	json_object_set_new(o, "commands", u64_json(atomic_load(&q->n_cmds)));
	json_object_set_new(o, "errors", u64_json(atomic_load(&q->n_errors)));
	json_object_set_new(o, "read_cmds",
			    u64_json(atomic_load(&q->io.read_cmds)));
	json_object_set_new(o, "write_cmds",
			    u64_json(atomic_load(&q->io.write_cmds)));
	json_object_set_new(o, "read_bytes",
			    u64_json(atomic_load(&q->io.read_bytes)));
	json_object_set_new(o, "write_bytes",
			    u64_json(atomic_load(&q->io.write_bytes)));
	json_object_set_new(o, "flush_cmds",
			    u64_json(atomic_load(&q->io.flush_cmds)));
	json_object_set_new(o, "write_zeroes_cmds",
			    u64_json(atomic_load(&q->io.write_zeroes_cmds)));
	json_object_set_new(o, "dsm_cmds",
			    u64_json(atomic_load(&q->io.dsm_cmds)));
	json_object_set_new(o, "latency_us", lat_json(b));
	return o;
}

static int m_get_qpairs(struct rpc_call *c)
{
	static const char *const keys[] = {"nqn", NULL};
	struct nvmf_tgt *tgt = c->env->tgt;
	struct nvmf_subsys *s;

	if (rpc_only(c, keys) || !(s = rpc_subsys(c)))
		return -1;
	c->result = json_array();
	pthread_mutex_lock(&tgt->lock);
	for (struct nvmf_ctrl *ctrl = tgt->ctrls; ctrl; ctrl = ctrl->next) {
		if (ctrl->subsys != s)
			continue;
		pthread_mutex_lock(&ctrl->lock);
		for (uint32_t q = 0; q <= ctrl->max_qid; q++)
			if (ctrl->queues[q])
				json_array_append_new(
					c->result,
					qpair_json(ctrl, ctrl->queues[q]));
		pthread_mutex_unlock(&ctrl->lock);
	}
	pthread_mutex_unlock(&tgt->lock);
	return 0;
}

/* A subsystem's counters: its Connects, and its queues' commands (live
 * ones and those gone). */
static json_t *subsys_stats_json(struct nvmf_tgt *tgt,
				 const struct nvmf_subsys *s)
{
	json_t *o = json_object();
	uint64_t cmds = atomic_load(&s->n_cmds_gone),
		 errs = atomic_load(&s->n_errors_gone), ctrls = 0;

	for (struct nvmf_ctrl *ctrl = tgt->ctrls; ctrl; ctrl = ctrl->next) {
		if (ctrl->subsys != s)
			continue;
		ctrls++;
		pthread_mutex_lock(&ctrl->lock);
		for (uint32_t q = 0; q <= ctrl->max_qid; q++)
			if (ctrl->queues[q]) {
				cmds += atomic_load(&ctrl->queues[q]->n_cmds);
				errs += atomic_load(&ctrl->queues[q]->n_errors);
			}
		pthread_mutex_unlock(&ctrl->lock);
	}
	json_object_set_new(o, "nqn", json_string(s->nqn));
	json_object_set_new(o, "controllers", u64_json(ctrls));
	json_object_set_new(o, "connects",
			    u64_json(atomic_load(&s->n_connects)));
	json_object_set_new(o, "refused_host_not_allowed",
			    u64_json(atomic_load(&s->n_refused_host)));
	json_object_set_new(o, "refused_other",
			    u64_json(atomic_load(&s->n_refused_other)));
	json_object_set_new(o, "auth_failed",
			    u64_json(atomic_load(&s->n_auth_failed)));
	json_object_set_new(o, "commands", u64_json(cmds));
	json_object_set_new(o, "errors", u64_json(errs));
	return o;
}

static void add_counter(void *ctx, const char *name, uint64_t v)
{
	json_object_set_new((json_t *)ctx, name, json_integer((json_int_t)v));
}

static int m_get_stats(struct rpc_call *c)
{
	static const char *const keys[] = {NULL};
	struct nvmf_tgt_stats t;
	json_t *o;

	if (rpc_only(c, keys))
		return -1;
	nvmf_tgt_get_stats(c->env->tgt, &t);
	o = json_object();
#define PUT(f) add_counter(o, #f, t.f)
	PUT(ctrls);
	PUT(queues);
	PUT(reqs);
	PUT(held);
	PUT(ctrls_created);
	PUT(connects_failed);
	PUT(kato_expired);
	PUT(dropped);
	PUT(auth_ok);
	PUT(auth_failed);
	PUT(media_errors);
	PUT(capacity_errors);
	PUT(write_protect_errors);
	PUT(internal_errors);
#undef PUT
	{
		struct nvmf_tgt *tgt = c->env->tgt;
		json_t *a = json_array();

		pthread_mutex_lock(&tgt->lock);
		struct nvmf_subsys_tab *tab = nvmf_subsys_table(tgt);
		for (size_t i = 0; i < tab->n; i++)
			json_array_append_new(
				a, subsys_stats_json(tgt, tab->s[i]));
		pthread_mutex_unlock(&tgt->lock);
		json_object_set_new(o, "subsystems", a);
	}
	if (c->env->stats) {
		json_t *b = json_object();

		c->env->stats(c->env->arg, add_counter, b);
		json_object_set_new(o, "transport", b);
	}
	c->result = o;
	return 0;
}

/* The "namespace ..." configuration line of add_ns' params, parsed by the
 * configuration parser into @out (path owned by @tmp). */
static int ns_from_params(struct rpc_call *c, struct nvmf_config *tmp,
			  const struct nvmf_cfg_ns **out)
{
	char line[NVMF_CFG_LINE_MAX + 1], err[512] = "", blk[24];
	const char *bdev, *io = NULL, *msg;
	int rc;
	uint32_t nsid, block;
	json_t *v;
	int n;

	if (rpc_u32(c, "nsid", 1, NVMF_MAX_NSID, true, 0, &nsid) ||
	    !(bdev = rpc_str(c, "bdev")) ||
	    rpc_u32(c, "block_size", 0, 4096, false, 0, &block))
		return -1;
	v = json_object_get(c->params, "io");
	if (v && !(io = rpc_str(c, "io")))
		return -1;
	if (strpbrk(bdev, " \t\r\n#") || (io && strpbrk(io, " \t\r\n#")))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"bdev\" and \"io\" are single words");
	/* Room for the line saved indented by save_config. */
	if (strlen(bdev) > 900 || (io && strlen(io) > 16))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"bdev\": at most 900 bytes");
	snprintf(blk, sizeof(blk), " block=%u", block);
	n = snprintf(line, sizeof(line), "namespace %u %s%s%s%s", nsid, bdev,
		     block ? blk : "", io ? " io=" : "", io ? io : "");
	if (n < 0 || n >= (int)sizeof(line))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"bdev\": too long");
	nvmf_config_init(tmp, "rpc");
	rc = nvmf_config_line(tmp, "subsystem nqn.2024-01.io.wharf:rpc", 1, err,
			      sizeof(err));
	if (!rc)
		rc = nvmf_config_line(tmp, line, 2, err, sizeof(err));
	if (rc == -ENOMEM)
		return rpc_fail(c, NVMF_RPC_INTERNAL_ERROR, "out of memory");
	if (rc) {
		/* "rpc:2: namespace: ..." -> "namespace: ..." */
		msg = strstr(err, ": ");
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS, "%s",
				msg ? msg + 2 : err);
	}
	*out = &tmp->subsys[0].ns[0];
	return 0;
}

static int m_add_ns(struct rpc_call *c)
{
	static const char *const keys[] = {"nqn",	 "nsid", "bdev",
					   "block_size", "io",	 NULL};
	const struct nvmf_cfg_ns *ns = NULL;
	struct nvmf_config tmp;
	struct nvmf_subsys *s;
	char why[256] = "";
	int rc;

	if (rpc_only(c, keys) || !(s = rpc_subsys(c)))
		return -1;
	memset(&tmp, 0, sizeof(tmp));
	if (ns_from_params(c, &tmp, &ns)) {
		nvmf_config_free(&tmp);
		return -1;
	}
	if (ns->kind == NVMF_BDEV_FILE && !c->env->file_ns) {
		nvmf_config_free(&tmp);
		return rpc_fail(
			c, -EOPNOTSUPP,
			"file and device namespaces need io_uring, which "
			"this target's shards could not set up (see its "
			"log); ram: and null: work");
	}
	rc = nvmf_tgt_ns_add(c->env->tgt, s->nqn, ns, why, sizeof(why));
	if (rc == -EEXIST)
		rpc_fail(c, rc,
			 "namespace %u of %s exists (nvmf_subsystem_remove_ns "
			 "first)",
			 ns->nsid, s->nqn);
	else if (rc == -EBUSY)
		rpc_fail(c, rc,
			 "NSID %u: %d removed namespaces are kept already (I/O "
			 "in "
			 "flight may use them until the target restarts): use "
			 "another NSID",
			 ns->nsid, NVMF_MAX_RETIRED);
	else if (rc)
		rpc_fail(c, rc, "namespace %u (%s): %s", ns->nsid,
			 ns->path ? ns->path : "memory",
			 why[0] ? why : strerror(-rc));
	else
		c->result = json_true();
	nvmf_config_free(&tmp);
	return rc ? -1 : 0;
}

static int m_remove_ns(struct rpc_call *c)
{
	static const char *const keys[] = {"nqn", "nsid", NULL};
	struct nvmf_subsys *s;
	uint32_t nsid;
	int rc;

	if (rpc_only(c, keys) || !(s = rpc_subsys(c)) ||
	    rpc_u32(c, "nsid", 1, NVMF_MAX_NSID, true, 0, &nsid))
		return -1;
	rc = nvmf_tgt_ns_remove(c->env->tgt, s->nqn, nsid);
	if (rc)
		return rpc_fail(c, rc, "%s has no namespace %u", s->nqn, nsid);
	c->result = json_true();
	return 0;
}

/* The optional DH-HMAC-CHAP params of add_host into @a. */
static int auth_params(struct rpc_call *c, struct nvmf_auth_cfg *a)
{
	static const char *const names[][2] = {
		{"dhchap_key", "dhchap-key"},
		{"dhchap_ctrlr_key", "dhchap-ctrl-key"},
		{"dhchap_hash", "dhchap-hash"},
		{"dhchap_dhgroup", "dhchap-dhgroup"},
	};
	char word[256], why[160];

	nvmf_auth_cfg_init(a);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v;

		if (!json_object_get(c->params, names[i][0]))
			continue;
		if (!(v = rpc_str(c, names[i][0])))
			return -1;
		snprintf(word, sizeof(word), "%s=%s", names[i][1], v);
		if (nvmf_auth_cfg_option(word, a, why, sizeof(why))) {
			OPENSSL_cleanse(word, sizeof(word));
			OPENSSL_cleanse(a, sizeof(*a));
			return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
					"\"%s\": %s", names[i][0], why);
		}
	}
	OPENSSL_cleanse(word, sizeof(word));
	if (nvmf_auth_cfg_check(a, why, sizeof(why))) {
		OPENSSL_cleanse(a, sizeof(*a));
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS, "%s", why);
	}
	return 0;
}

static int m_add_host(struct rpc_call *c)
{
	static const char *const keys[] = {"nqn",	  "host",
					   "dhchap_key",  "dhchap_ctrlr_key",
					   "dhchap_hash", "dhchap_dhgroup",
					   NULL};
	struct nvmf_auth_cfg auth;
	struct nvmf_subsys *s;
	const char *host;
	int rc;

	if (rpc_only(c, keys) || !(s = rpc_subsys(c)) ||
	    !(host = rpc_str(c, "host")) || auth_params(c, &auth))
		return -1;
	rc = nvmf_tgt_host_add(c->env->tgt, s->nqn, host, &auth);
	OPENSSL_cleanse(&auth, sizeof(auth));
	switch (rc) {
	case 0:
		c->result = json_true();
		return 0;
	case -EINVAL:
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"host\": \"%s\" is not a valid NQN", host);
	case -EEXIST:
		return rpc_fail(c, rc, "%s is already allowed on %s", host,
				s->nqn);
	case -EPERM:
		return rpc_fail(c, rc,
				"%s allows any host: set allow_any_host false "
				"first (nvmf_subsystem_allow_any_host)",
				s->nqn);
	default:
		return rpc_fail_errno(c, rc, "add_host");
	}
}

static int m_remove_host(struct rpc_call *c)
{
	static const char *const keys[] = {"nqn", "host", NULL};
	struct nvmf_subsys *s;
	const char *host;
	unsigned n = 0;
	int rc;

	if (rpc_only(c, keys) || !(s = rpc_subsys(c)) ||
	    !(host = rpc_str(c, "host")))
		return -1;
	rc = nvmf_tgt_host_remove(c->env->tgt, s->nqn, host, &n);
	if (rc)
		return rpc_fail(c, rc, "%s is not on %s's allow-list", host,
				s->nqn);
	c->result = json_object();
	json_object_set_new(c->result, "disconnected", json_integer(n));
	return 0;
}

static int m_allow_any(struct rpc_call *c)
{
	static const char *const keys[] = {"nqn", "allow_any_host", NULL};
	struct nvmf_subsys *s;
	unsigned n = 0;
	json_t *v;
	int rc;

	if (rpc_only(c, keys) || !(s = rpc_subsys(c)))
		return -1;
	v = json_object_get(c->params, "allow_any_host");
	if (!json_is_boolean(v))
		return rpc_fail(c, NVMF_RPC_INVALID_PARAMS,
				"\"allow_any_host\": %s",
				v ? "must be true or false" : "missing");
	rc = nvmf_tgt_allow_any(c->env->tgt, s->nqn, json_is_true(v), &n);
	if (rc == -EPERM)
		return rpc_fail(c, rc,
				"%s lists hosts: remove them first "
				"(nvmf_subsystem_remove_host)",
				s->nqn);
	if (rc)
		return rpc_fail_errno(c, rc, "allow_any_host");
	c->result = json_object();
	json_object_set_new(c->result, "disconnected", json_integer(n));
	return 0;
}

/* Write @text to @path through a temporary file and rename(). Blocks
 * (fsync): runs on the management thread only, never on a shard. */
static int write_atomic(const char *path, const char *text, size_t len)
{
	char tmp[4096];
	ssize_t w;
	size_t off = 0;
	int fd, rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (!rc && off < len) {
		w = write(fd, text + off, len - off);
		if (w < 0 && errno != EINTR)
			rc = -errno;
		else if (w == 0)
			rc = -EIO;
		else if (w > 0)
			off += (size_t)w;
	}
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

static int m_save_config(struct rpc_call *c)
{
	static const char *const keys[] = {"path", NULL};
	const char *path = NULL;
	char *text;
	size_t len;
	int rc;

	if (rpc_only(c, keys))
		return -1;
	if (json_object_get(c->params, "path") && !(path = rpc_str(c, "path")))
		return -1;
	rc = nvmf_tgt_save_config(c->env->tgt, c->env->cfg, &text, &len);
	if (rc)
		return rpc_fail_errno(c, rc, "save_config");
	if (path && (rc = write_atomic(path, text, len))) {
		free(text);
		return rpc_fail(c, rc, "save_config: %s: %s", path,
				strerror(-rc));
	}
	c->result = json_object();
	json_object_set_new(c->result, "config", json_stringn(text, len));
	if (!json_object_get(c->result, "config")) /* a path not UTF-8 */
		json_object_set_new(c->result, "config", rpc_jstr(NULL));
	if (path)
		json_object_set_new(c->result, "path", rpc_jstr(path));
	free(text);
	return 0;
}

static int m_get_methods(struct rpc_call *c);

static const struct method {
	const char *name;
	int (*fn)(struct rpc_call *c);
} methods[] = {
	{"rpc_get_methods", m_get_methods},
	{"nvmf_get_subsystems", m_get_subsystems},
	{"nvmf_subsystem_get_controllers", m_get_controllers},
	{"nvmf_subsystem_get_qpairs", m_get_qpairs},
	{"nvmf_get_stats", m_get_stats},
	{"nvmf_subsystem_add_ns", m_add_ns},
	{"nvmf_subsystem_remove_ns", m_remove_ns},
	{"nvmf_subsystem_add_host", m_add_host},
	{"nvmf_subsystem_remove_host", m_remove_host},
	{"nvmf_subsystem_allow_any_host", m_allow_any},
	{"save_config", m_save_config},
	{"nvmf_create_subsystem", rpc_create_subsystem},
	{"nvmf_delete_subsystem", rpc_delete_subsystem},
	{"nvmf_subsystem_add_listener", rpc_add_listener},
	{"nvmf_subsystem_remove_listener", rpc_remove_listener},
};

static int m_get_methods(struct rpc_call *c)
{
	static const char *const keys[] = {NULL};

	if (rpc_only(c, keys))
		return -1;
	c->result = json_array();
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		json_array_append_new(c->result, json_string(methods[i].name));
	return 0;
}

/* The response to @id: @c's result or error. */
static char *respond(json_t *id, struct rpc_call *c)
{
	json_t *r = json_object();
	char *text;

	json_object_set_new(r, "jsonrpc", json_string("2.0"));
	if (c->result) {
		json_object_set_new(r, "result", c->result);
		c->result = NULL;
	} else {
		json_t *e = json_object();

		json_object_set_new(e, "code", json_integer(c->code));
		json_object_set_new(e, "message", rpc_jstr(c->msg));
		json_object_set_new(r, "error", e);
	}
	json_object_set(r, "id", id ? id : json_null());
	text = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	return text;
}

char *nvmf_rpc_handle(const struct nvmf_rpc_env *env, const char *req,
		      size_t len)
{
	struct rpc_call c = {.env = env};
	json_error_t jerr;
	json_t *doc, *id = NULL, *m, *p;
	const char *name;
	bool notify = false;
	char *out;

	doc = json_loadb(req, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
			 &jerr);
	if (!doc) {
		rpc_fail(&c, NVMF_RPC_PARSE_ERROR, "parse error: %s (byte %d)",
			 jerr.text, jerr.position);
		return respond(NULL, &c);
	}
	if (!json_is_object(doc)) {
		rpc_fail(&c, NVMF_RPC_INVALID_REQUEST,
			 json_is_array(doc) ? "batches are not supported: send "
					      "one request object at a time"
					    : "a request is a JSON object");
		goto out;
	}
	id = json_object_get(doc, "id");
	if (id && !json_is_string(id) && !json_is_integer(id) &&
	    !json_is_null(id)) {
		id = NULL;
		rpc_fail(&c, NVMF_RPC_INVALID_REQUEST,
			 "\"id\" must be a string, an integer or null");
		goto out;
	}
	if (!json_is_string(json_object_get(doc, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(doc, "jsonrpc")), "2.0")) {
		rpc_fail(&c, NVMF_RPC_INVALID_REQUEST,
			 "\"jsonrpc\" must be \"2.0\"");
		goto out;
	}
	m = json_object_get(doc, "method");
	if (!json_is_string(m)) {
		rpc_fail(&c, NVMF_RPC_INVALID_REQUEST,
			 "\"method\" must be a string");
		goto out;
	}
	/* A valid request without an id is a notification: no answer,
	 * whatever its outcome. */
	notify = !id;
	p = json_object_get(doc, "params");
	if (p && !json_is_object(p)) {
		rpc_fail(&c, NVMF_RPC_INVALID_PARAMS,
			 "\"params\" must be an object (named members)");
		goto out;
	}
	c.params = p ? json_incref(p) : json_object();
	name = json_string_value(m);
	c.code = NVMF_RPC_METHOD_NOT_FOUND;
	snprintf(c.msg, sizeof(c.msg),
		 "no method \"%.200s\" (rpc_get_methods lists them)", name);
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(methods[i].name, name))
			continue;
		c.code = 0;
		c.msg[0] = '\0';
		if (methods[i].fn(&c) == 0 && !c.result)
			rpc_fail(&c, NVMF_RPC_INTERNAL_ERROR, "out of memory");
		break;
	}
	json_decref(c.params);
out:
	out = notify ? NULL : respond(id, &c);
	if (c.result)
		json_decref(c.result);
	json_decref(doc);
	return out;
}

char *nvmf_rpc_build_request(const char *method, char *const *args, int nargs,
			     long id, char *err, size_t errlen)
{
	json_t *req = json_object(), *params = json_object();
	char *text = NULL;

	for (int i = 0; i < nargs; i++) {
		const char *eq = strchr(args[i], '=');
		char name[256];
		json_t *v;

		if (!eq || eq == args[i] ||
		    (size_t)(eq - args[i]) >= sizeof(name)) {
			snprintf(err, errlen,
				 "\"%s\" is not NAME=VALUE (e.g. nsid=2, "
				 "bdev=ram:64M)",
				 args[i]);
			goto out;
		}
		memcpy(name, args[i], (size_t)(eq - args[i]));
		name[eq - args[i]] = '\0';
		if (json_object_get(params, name)) {
			snprintf(err, errlen, "%s given twice", name);
			goto out;
		}
		v = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
		if (!v)
			v = json_string(eq + 1);
		if (!v) { /* not UTF-8 */
			snprintf(err, errlen, "%s: not UTF-8 text", name);
			goto out;
		}
		json_object_set_new(params, name, v);
	}
	json_object_set_new(req, "jsonrpc", json_string("2.0"));
	json_object_set_new(req, "method", json_string(method));
	json_object_set(req, "params", params);
	json_object_set_new(req, "id", json_integer(id));
	text = json_dumps(req, JSON_COMPACT);
	if (!text)
		snprintf(err, errlen, "out of memory");
out:
	json_decref(params);
	json_decref(req);
	return text;
}
