/*
 * targets/nvmf/config.c - configuration parser (format in config.h).
 *
 * Each line is split into at most MAX_WORDS whitespace-separated words and
 * dispatched on the first. Handlers check their arguments and either fill
 * the configuration or format "source:LINE: message" into the caller's
 * buffer; nothing is partially applied on error except allocations that
 * nvmf_config_free() releases.
 */
#include "targets/nvmf/config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/crypto.h>

#include "cli/cli.h"
#include "targets/nvmf/nqn.h"
#include "proto/nvme/spec_fabrics.h"

#define MAX_WORDS 16

struct line_ctx {
	struct nvmf_config *cfg;
	unsigned int lineno;
	char *w[MAX_WORDS];
	int n;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int fail(struct line_ctx *c,
						      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err && c->errlen && c->lineno)
		snprintf(c->err, c->errlen, "%s:%u: %s", c->cfg->source,
			 c->lineno, msg);
	else if (c->err && c->errlen) /* about the whole configuration */
		snprintf(c->err, c->errlen, "%s: %s", c->cfg->source, msg);
	return -EINVAL;
}

void nvmf_config_init(struct nvmf_config *cfg, const char *source)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->source, sizeof(cfg->source), "%s",
		 source ? source : "config");
	cfg->shards = 0;
	cfg->queue_depth = 128;
	cfg->io_queues = 8;
	cfg->in_capsule = 4096;
	cfg->max_io_size = 128 * 1024;
}

int nvmf_parse_size(const char *s, uint64_t *out)
{
	return cli_size(s, 0, UINT64_MAX, out);
}

/* An unsigned decimal in [lo, hi]. */
static int parse_uint(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	return cli_u32(s, lo, hi, out);
}

/* Check the argument count of a directive; message with @usage. */
static int need_args(struct line_ctx *c, int lo, int hi, const char *usage)
{
	if (c->n - 1 < lo || c->n - 1 > hi)
		return fail(c, "%s: expected \"%s\"", c->w[0], usage);
	return 0;
}

/* The subsystem block a directive belongs to, or NULL (message set). */
static struct nvmf_cfg_subsys *cur_subsys(struct line_ctx *c)
{
	if (!c->cfg->nsubsys) {
		fail(c, "%s: outside a subsystem (put \"subsystem NQN\" first)",
		     c->w[0]);
		return NULL;
	}
	return &c->cfg->subsys[c->cfg->nsubsys - 1];
}

/* "WORD ADDRESS [PORT]" into @l (listen and export lines). */
static int parse_addr(struct line_ctx *c, struct nvmf_cfg_listen *l)
{
	unsigned char buf[16];
	uint32_t port = NVMF_DEFAULT_PORT;
	int family;

	if (c->n < 2 || c->n > 3)
		return fail(c, "%s: expected \"%s ADDRESS [PORT]\"", c->w[0],
			    c->w[0]);
	if (inet_pton(AF_INET, c->w[1], buf) == 1)
		family = AF_INET;
	else if (inet_pton(AF_INET6, c->w[1], buf) == 1)
		family = AF_INET6;
	else
		return fail(c, "%s: \"%s\" is not an IPv4 or IPv6 address",
			    c->w[0], c->w[1]);
	if (c->n == 3 && parse_uint(c->w[2], 1, 65535, &port))
		return fail(c, "%s: port \"%s\" is not 1..65535", c->w[0],
			    c->w[2]);
	if (strlen(c->w[1]) >= sizeof(l->addr))
		return fail(c, "%s: address too long", c->w[0]);
	memset(l, 0, sizeof(*l));
	snprintf(l->addr, sizeof(l->addr), "%s", c->w[1]);
	l->family = family;
	l->port = (uint16_t)port;
	l->line = c->lineno;
	return 0;
}

/* Whether @a and @b are the same address and port ("fd00::1" is
 * "fd00:0::1"). */
static bool same_addr(const struct nvmf_cfg_listen *a,
		      const struct nvmf_cfg_listen *b)
{
	unsigned char x[16] = {0}, y[16] = {0};

	return a->port == b->port && a->family == b->family &&
	       inet_pton(a->family, a->addr, x) == 1 &&
	       inet_pton(b->family, b->addr, y) == 1 && !memcmp(x, y, 16);
}

/* The entry of @arr[0..n) with @l's address and port, or NULL. */
static const struct nvmf_cfg_listen *
find_addr(const struct nvmf_cfg_listen *arr, size_t n,
	  const struct nvmf_cfg_listen *l)
{
	for (size_t i = 0; i < n; i++)
		if (same_addr(&arr[i], l))
			return &arr[i];
	return NULL;
}

/* "listen ADDRESS [PORT]". */
static int do_listen(struct line_ctx *c)
{
	struct nvmf_config *cfg = c->cfg;
	const struct nvmf_cfg_listen *dup;
	struct nvmf_cfg_listen l;

	if (parse_addr(c, &l))
		return -EINVAL;
	dup = find_addr(cfg->listen, cfg->nlisten, &l);
	if (dup)
		return fail(c, "listen: %s port %u twice (first on line %u)",
			    l.addr, l.port, dup->line);
	if (cfg->nlisten == NVMF_CFG_MAX_LISTEN)
		return fail(c, "listen: more than %d addresses",
			    NVMF_CFG_MAX_LISTEN);
	cfg->listen[cfg->nlisten++] = l;
	return 0;
}

/* "export ADDRESS [PORT]": the subsystem is served on that listen address
 * only (with its other export lines); resolved by nvmf_config_finish(). */
static int do_export(struct line_ctx *c)
{
	struct nvmf_cfg_subsys *s = cur_subsys(c);
	const struct nvmf_cfg_listen *dup;
	struct nvmf_cfg_listen l;

	if (!s)
		return -EINVAL;
	if (parse_addr(c, &l))
		return -EINVAL;
	if (s->export_none)
		return fail(c, "export: the subsystem has export-none");
	dup = find_addr(s->exports, s->nexports, &l);
	if (dup)
		return fail(c, "export: %s port %u twice (first on line %u)",
			    l.addr, l.port, dup->line);
	if (s->nexports == NVMF_CFG_MAX_LISTEN)
		return fail(c, "export: more than %d addresses",
			    NVMF_CFG_MAX_LISTEN);
	s->exports[s->nexports++] = l;
	return 0;
}

/* "export-none": served on no listen address (until one is added at run
 * time); what save_config writes for a subsystem whose last listener
 * was removed. */
static int do_export_none(struct line_ctx *c)
{
	struct nvmf_cfg_subsys *s = cur_subsys(c);

	if (!s)
		return -EINVAL;
	if (need_args(c, 0, 0, "export-none"))
		return -EINVAL;
	if (s->nexports)
		return fail(c, "export-none: the subsystem has export lines");
	s->export_none = true;
	return 0;
}

/* "shards N|auto". */
static int do_shards(struct line_ctx *c)
{
	if (need_args(c, 1, 1, "shards N|auto"))
		return -EINVAL;
	if (!strcmp(c->w[1], "auto")) {
		c->cfg->shards = 0;
		return 0;
	}
	if (parse_uint(c->w[1], 1, NVMF_CFG_MAX_SHARDS, &c->cfg->shards))
		return fail(c, "shards: \"%s\" is not auto or 1..%d", c->w[1],
			    NVMF_CFG_MAX_SHARDS);
	return 0;
}

/* "cpus LIST": comma-separated CPU indexes and A-B ranges, no empty item. */
static int do_cpus(struct line_ctx *c)
{
	unsigned n;
	int rc;

	if (need_args(c, 1, 1, "cpus LIST (e.g. 0,2-3)"))
		return -EINVAL;
	rc = cli_cpu_list(c->w[1], NVMF_CFG_MAX_CPU, c->cfg->cpus,
			  NVMF_CFG_MAX_SHARDS, &n);
	if (rc == -E2BIG)
		return fail(c, "cpus: more than %d entries",
			    NVMF_CFG_MAX_SHARDS);
	if (rc)
		return fail(c,
			    "cpus: \"%s\" is not a list of CPUs "
			    "0..%d and ranges A-B",
			    c->w[1], NVMF_CFG_MAX_CPU);
	c->cfg->ncpus = n;
	c->cfg->cpus_line = c->lineno;
	return 0;
}

/* A directive with one number in [lo, hi] (queue-depth, io-queues). */
static int do_number(struct line_ctx *c, uint32_t lo, uint32_t hi,
		     uint32_t *out)
{
	if (need_args(c, 1, 1, "N"))
		return -EINVAL;
	if (parse_uint(c->w[1], lo, hi, out))
		return fail(c, "%s: \"%s\" is not %u..%u", c->w[0], c->w[1], lo,
			    hi);
	return 0;
}

/* "in-capsule BYTES". */
static int do_in_capsule(struct line_ctx *c)
{
	uint32_t v;

	if (do_number(c, 0, 65536, &v))
		return -EINVAL;
	if (v % 16)
		return fail(c, "in-capsule: %u is not a multiple of 16", v);
	c->cfg->in_capsule = v;
	return 0;
}

/* "max-io-size SIZE". */
static int do_max_io_size(struct line_ctx *c)
{
	uint64_t v;

	if (need_args(c, 1, 1, "max-io-size SIZE"))
		return -EINVAL;
	if (nvmf_parse_size(c->w[1], &v) || v < 4096 || v > (2u << 20) ||
	    (v & (v - 1)))
		return fail(c,
			    "max-io-size: \"%s\" is not a power of two "
			    "from 4K to 2M",
			    c->w[1]);
	c->cfg->max_io_size = (uint32_t)v;
	return 0;
}

/* "subsystem NQN": opens a block with default serial and model. */
static int do_subsystem(struct line_ctx *c)
{
	struct nvmf_config *cfg = c->cfg;
	struct nvmf_cfg_subsys *s;

	if (need_args(c, 1, 1, "subsystem NQN"))
		return -EINVAL;
	if (!nvmf_nqn_valid(c->w[1]))
		return fail(c,
			    "subsystem: \"%s\" is not a valid NQN "
			    "(nqn.yyyy-mm.reverse.domain[:name], <= 223 "
			    "bytes)",
			    c->w[1]);
	if (!strcmp(c->w[1], NVME_DISC_NQN))
		return fail(c, "subsystem: the discovery NQN is built in");
	for (size_t i = 0; i < cfg->nsubsys; i++)
		if (!strcmp(cfg->subsys[i].nqn, c->w[1]))
			return fail(c, "subsystem: %s twice (first on line %u)",
				    c->w[1], cfg->subsys[i].line);
	if (cfg->nsubsys == NVMF_CFG_MAX_SUBSYS)
		return fail(c, "subsystem: more than %d subsystems",
			    NVMF_CFG_MAX_SUBSYS);
	s = realloc(cfg->subsys, (cfg->nsubsys + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	cfg->subsys = s;
	s = &cfg->subsys[cfg->nsubsys++];
	memset(s, 0, sizeof(*s));
	snprintf(s->nqn, sizeof(s->nqn), "%s", c->w[1]);
	snprintf(s->serial, sizeof(s->serial), "WHARF%04zu", cfg->nsubsys);
	snprintf(s->model, sizeof(s->model), "wharf NVMe-oF target");
	s->line = c->lineno;
	return 0;
}

/* Printable ASCII only. */
static bool printable(const char *s)
{
	for (; *s; s++)
		if (*s < ' ' || *s > '~')
			return false;
	return true;
}

/* "serial TEXT". */
static int do_serial(struct line_ctx *c)
{
	struct nvmf_cfg_subsys *s = cur_subsys(c);

	if (!s)
		return -EINVAL;
	if (need_args(c, 1, 1, "serial TEXT"))
		return -EINVAL;
	if (strlen(c->w[1]) > 20 || !printable(c->w[1]))
		return fail(c, "serial: at most 20 printable characters");
	snprintf(s->serial, sizeof(s->serial), "%s", c->w[1]);
	return 0;
}

/* "model TEXT...": the rest of the line, words joined by one space. */
static int do_model(struct line_ctx *c)
{
	struct nvmf_cfg_subsys *s = cur_subsys(c);
	char buf[64] = "";
	size_t used = 0;

	if (!s)
		return -EINVAL;
	if (c->n < 2)
		return fail(c, "model: expected \"model TEXT\"");
	for (int i = 1; i < c->n; i++) {
		int n = snprintf(buf + used, sizeof(buf) - used, "%s%s",
				 i > 1 ? " " : "", c->w[i]);

		if (n < 0 || (size_t)n >= sizeof(buf) - used)
			return fail(c, "model: at most 40 characters");
		used += (size_t)n;
	}
	if (used > 40 || !printable(buf))
		return fail(c, "model: at most 40 printable characters");
	memcpy(s->model, buf, used + 1);
	return 0;
}

/* Parse "ram:SIZE", "null:SIZE" or "file:PATH" into @ns. */
static int ns_backing(struct line_ctx *c, struct nvmf_cfg_ns *ns,
		      const char *spec)
{
	static const struct {
		const char *prefix;
		enum nvmf_bdev_kind kind;
	} sized[] = {{"ram", NVMF_BDEV_RAM}, {"null", NVMF_BDEV_NULL}};

	for (size_t i = 0; i < sizeof(sized) / sizeof(sized[0]); i++) {
		size_t n = strlen(sized[i].prefix);

		if (strncmp(spec, sized[i].prefix, n) || spec[n] != ':')
			continue;
		ns->kind = sized[i].kind;
		if (nvmf_parse_size(spec + n + 1, &ns->size) || !ns->size)
			return fail(c,
				    "namespace: \"%s\": bad size (%s:SIZE, "
				    "e.g. %s:64M)",
				    spec, sized[i].prefix, sized[i].prefix);
		return 0;
	}
	if (!strncmp(spec, "file:", 5)) {
		ns->kind = NVMF_BDEV_FILE;
		if (!spec[5])
			return fail(c, "namespace: file: needs a path");
		ns->path = strdup(spec + 5);
		return ns->path ? 0 : -ENOMEM;
	}
	return fail(c,
		    "namespace: backing \"%s\" is not ram:SIZE, null:SIZE "
		    "or file:PATH",
		    spec);
}

/* One option word of a namespace line: "block=N" or "io=MODE". */
static int ns_option(struct line_ctx *c, struct nvmf_cfg_ns *ns, const char *w)
{
	if (!strncmp(w, "io=", 3)) {
		if (!strcmp(w + 3, "direct"))
			ns->io = NVMF_BDEV_IO_DIRECT;
		else if (!strcmp(w + 3, "buffered"))
			ns->io = NVMF_BDEV_IO_BUFFERED;
		else
			return fail(c,
				    "namespace: \"%s\" is not io=direct or "
				    "io=buffered",
				    w);
		return 0;
	}
	if (strncmp(w, "block=", 6) ||
	    parse_uint(w + 6, 512, 4096, &ns->block_size) ||
	    (ns->block_size != 512 && ns->block_size != 4096))
		return fail(c,
			    "namespace: \"%s\" is not block=512 or "
			    "block=4096",
			    w);
	return 0;
}

/* "namespace NSID BACKING [block=N] [io=direct|buffered]". */
static int do_namespace(struct line_ctx *c)
{
	struct nvmf_cfg_subsys *s = cur_subsys(c);
	struct nvmf_cfg_ns ns = {.line = c->lineno};
	struct nvmf_cfg_ns *arr;
	int rc;

	if (!s)
		return -EINVAL;
	if (need_args(c, 2, 4,
		      "namespace NSID ram:SIZE|null:SIZE|file:PATH "
		      "[block=N] [io=direct|buffered]"))
		return -EINVAL;
	if (parse_uint(c->w[1], 1, NVMF_MAX_NSID, &ns.nsid))
		return fail(c, "namespace: NSID \"%s\" is not 1..%d", c->w[1],
			    NVMF_MAX_NSID);
	for (size_t i = 0; i < s->nns; i++)
		if (s->ns[i].nsid == ns.nsid)
			return fail(c,
				    "namespace: duplicate NSID %u (first on "
				    "line %u)",
				    ns.nsid, s->ns[i].line);
	for (int i = 3; i < c->n; i++) {
		rc = ns_option(c, &ns, c->w[i]);
		if (rc)
			return rc;
	}
	rc = ns_backing(c, &ns, c->w[2]);
	if (rc)
		return rc;
	if (ns.kind != NVMF_BDEV_FILE && ns.io) {
		free(ns.path);
		return fail(c, "namespace: io= is for file: backings");
	}
	/* A file or device without block=: the device's own LBA size. */
	if (ns.kind != NVMF_BDEV_FILE && !ns.block_size)
		ns.block_size = 512;
	if (ns.kind != NVMF_BDEV_FILE && ns.size % ns.block_size) {
		free(ns.path);
		return fail(c,
			    "namespace: size %llu is not a multiple of the "
			    "%u-byte block",
			    (unsigned long long)ns.size, ns.block_size);
	}
	arr = realloc(s->ns, (s->nns + 1) * sizeof(*arr));
	if (!arr) {
		free(ns.path);
		return -ENOMEM;
	}
	s->ns = arr;
	s->ns[s->nns++] = ns;
	return 0;
}

/* The host's own part of an allow-host line (its secrets parsed into
 * @auth), checked; 0 or the error set. */
static int allow_host_check(struct line_ctx *c, struct nvmf_cfg_subsys *s,
			    struct nvmf_auth_cfg *auth)
{
	char why[160];

	for (int i = 2; i < c->n; i++) {
		const char *eq = strchr(c->w[i], '=');
		int rc = nvmf_auth_cfg_option(c->w[i], auth, why, sizeof(why));

		/* Only the name: the word may carry a secret. */
		if (rc == -ENOENT)
			return fail(c,
				    "allow-host: \"%.*s\" is not dhchap-key, "
				    "dhchap-ctrl-key, dhchap-hash or "
				    "dhchap-dhgroup",
				    (int)(eq ? eq - c->w[i] : 24), c->w[i]);
		if (rc)
			return fail(c, "allow-host: %s", why);
	}
	if (nvmf_auth_cfg_check(auth, why, sizeof(why)))
		return fail(c, "allow-host: %s", why);
	if (s->allow_any || s->allow_none)
		return fail(c,
			    "allow-host: the subsystem already has "
			    "%s (line %u)",
			    s->allow_any ? "allow-any-host" : "allow-no-host",
			    s->allow_line);
	if (strstr(c->w[1], "DHHC-1"))
		return fail(c, "allow-host: a secret where the host NQN "
			       "belongs (allow-host NQN dhchap-key=...)");
	if (!nvmf_nqn_valid(c->w[1]))
		return fail(c, "allow-host: \"%s\" is not a valid NQN",
			    c->w[1]);
	for (size_t i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i], c->w[1]))
			return fail(c, "allow-host: %s twice", c->w[1]);
	if (s->nhosts == NVMF_CFG_MAX_HOSTS)
		return fail(c, "allow-host: more than %d hosts",
			    NVMF_CFG_MAX_HOSTS);
	return 0;
}

/* "allow-host NQN [dhchap-...=...]". */
static int do_allow_host(struct line_ctx *c)
{
	struct nvmf_cfg_subsys *s = cur_subsys(c);
	struct nvmf_auth_cfg auth, *adup = NULL;
	char *dup = NULL;
	int rc;

	if (!s)
		return -EINVAL;
	if (need_args(c, 1, 5,
		      "allow-host NQN [dhchap-key=SECRET] "
		      "[dhchap-ctrl-key=SECRET] [dhchap-hash=H] "
		      "[dhchap-dhgroup=G]"))
		return -EINVAL;
	nvmf_auth_cfg_init(&auth);
	rc = allow_host_check(c, s, &auth);
	if (!rc) {
		dup = strdup(c->w[1]);
		adup = auth.key.len ? nvmf_auth_cfg_dup(&auth) : NULL;
		if (!dup || (auth.key.len && !adup) ||
		    nvmf_hosts_grow(&s->hosts, &s->host_auth, s->nhosts))
			rc = -ENOMEM;
	}
	OPENSSL_cleanse(&auth, sizeof(auth));
	if (rc) {
		free(dup);
		nvmf_auth_cfg_free(adup);
		return rc;
	}
	s->hosts[s->nhosts] = dup;
	s->host_auth[s->nhosts] = adup;
	s->nhosts++;
	if (!s->allow_line)
		s->allow_line = c->lineno;
	return 0;
}

/* "allow-no-host": a closed subsystem, hosts to be added at run time. */
static int do_allow_none(struct line_ctx *c)
{
	struct nvmf_cfg_subsys *s = cur_subsys(c);

	if (!s)
		return -EINVAL;
	if (need_args(c, 0, 0, "allow-no-host"))
		return -EINVAL;
	if (s->allow_line)
		return fail(c,
			    "allow-no-host: the subsystem already says who "
			    "may connect (line %u)",
			    s->allow_line);
	s->allow_none = true;
	s->allow_line = c->lineno;
	return 0;
}

/* "allow-any-host". */
static int do_allow_any(struct line_ctx *c)
{
	struct nvmf_cfg_subsys *s = cur_subsys(c);

	if (!s)
		return -EINVAL;
	if (need_args(c, 0, 0, "allow-any-host"))
		return -EINVAL;
	if (s->allow_none)
		return fail(c,
			    "allow-any-host: the subsystem has allow-no-host "
			    "(line %u)",
			    s->allow_line);
	if (s->nhosts)
		return fail(c,
			    "allow-any-host: the subsystem already lists "
			    "hosts (line %u)",
			    s->allow_line);
	if (s->allow_any)
		return fail(c, "allow-any-host: twice (first on line %u)",
			    s->allow_line);
	s->allow_any = true;
	s->allow_line = c->lineno;
	return 0;
}

/* Split @buf in place; '#' at the start of a word ends the line. */
static int split(struct line_ctx *c, char *buf)
{
	char *p = buf;

	c->n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			return 0;
		if (c->n == MAX_WORDS)
			return fail(c, "too many words (at most %d)",
				    MAX_WORDS);
		c->w[c->n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		if (*p)
			*p++ = '\0';
	}
}

int nvmf_config_line(struct nvmf_config *cfg, const char *line,
		     unsigned int lineno, char *err, size_t errlen)
{
	static const struct {
		const char *word;
		int (*fn)(struct line_ctx *c);
	} table[] = {
		{"listen", do_listen},
		{"shards", do_shards},
		{"cpus", do_cpus},
		{"in-capsule", do_in_capsule},
		{"max-io-size", do_max_io_size},
		{"subsystem", do_subsystem},
		{"serial", do_serial},
		{"model", do_model},
		{"namespace", do_namespace},
		{"allow-host", do_allow_host},
		{"allow-any-host", do_allow_any},
		{"allow-no-host", do_allow_none},
		{"export", do_export},
		{"export-none", do_export_none},
	};
	struct line_ctx c = {
		.cfg = cfg, .lineno = lineno, .err = err, .errlen = errlen};
	char buf[NVMF_CFG_LINE_MAX + 1];
	size_t len;
	int rc;

	if (!cfg || !line)
		return -EINVAL;
	cfg->line = lineno;
	len = strnlen(line, sizeof(buf));
	if (len > NVMF_CFG_LINE_MAX)
		return fail(&c, "line longer than %d bytes", NVMF_CFG_LINE_MAX);
	memcpy(buf, line, len + 1);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] < ' ' && buf[i] != '\t' &&
		    buf[i] != '\r')
			return fail(&c, "control character 0x%02x",
				    (unsigned char)buf[i]);
	rc = split(&c, buf);
	if (rc || !c.n)
		return rc;
	if (!strcmp(c.w[0], "queue-depth"))
		return do_number(&c, 2, 1024, &cfg->queue_depth);
	if (!strcmp(c.w[0], "io-queues"))
		return do_number(&c, 1, 1024, &cfg->io_queues);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(c.w[0], table[i].word))
			return table[i].fn(&c);
	return fail(&c, "unknown directive \"%s\"", c.w[0]);
}

/* @s's export lines as a mask of listen lines; each must name one. */
static int resolve_exports(const struct nvmf_config *cfg,
			   struct nvmf_cfg_subsys *s, struct line_ctx *c)
{
	s->listen_mask = 0;
	for (size_t i = 0; i < s->nexports; i++) {
		const struct nvmf_cfg_listen *e = &s->exports[i];
		const struct nvmf_cfg_listen *l =
			find_addr(cfg->listen, cfg->nlisten, e);

		if (!l) {
			c->lineno = e->line;
			return fail(c,
				    "export: %s port %u is not a listen "
				    "address (add \"listen %s %u\")",
				    e->addr, e->port, e->addr, e->port);
		}
		s->listen_mask |= 1u << (l - cfg->listen);
	}
	return 0;
}

int nvmf_config_finish(struct nvmf_config *cfg, char *err, size_t errlen)
{
	struct line_ctx c = {
		.cfg = cfg, .lineno = 0, .err = err, .errlen = errlen};

	if (!cfg->nlisten)
		return fail(&c, "no \"listen ADDRESS [PORT]\" line");
	if (!cfg->nsubsys)
		return fail(&c, "no \"subsystem NQN\" block");
	if (cfg->ncpus && cfg->shards && cfg->shards != cfg->ncpus) {
		c.lineno = cfg->cpus_line;
		return fail(&c, "cpus: %u CPUs listed for %u shards",
			    cfg->ncpus, cfg->shards);
	}
	for (size_t i = 0; i < cfg->nsubsys; i++) {
		const struct nvmf_cfg_subsys *s = &cfg->subsys[i];

		int rc = resolve_exports(cfg, &cfg->subsys[i], &c);

		if (rc)
			return rc;
		if (!s->allow_any && !s->allow_none && !s->nhosts) {
			c.lineno = s->line;
			return fail(&c,
				    "subsystem %s: no allow-host, "
				    "allow-any-host or allow-no-host (who may "
				    "connect must be explicit)",
				    s->nqn);
		}
	}
	return 0;
}

int nvmf_config_parse(const char *text, size_t len, const char *source,
		      struct nvmf_config *cfg, char *err, size_t errlen)
{
	char line[NVMF_CFG_LINE_MAX + 2];
	unsigned int lineno = 0;
	size_t pos = 0;

	if (!cfg || (!text && len))
		return -EINVAL;
	nvmf_config_init(cfg, source);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		struct line_ctx c = {.cfg = cfg,
				     .lineno = ++lineno,
				     .err = err,
				     .errlen = errlen};
		int rc;

		if (n > NVMF_CFG_LINE_MAX)
			return fail(&c, "line longer than %d bytes",
				    NVMF_CFG_LINE_MAX);
		if (memchr(text + pos, '\0', n))
			return fail(&c, "NUL byte");
		memcpy(line, text + pos, n);
		line[n] = '\0';
		rc = nvmf_config_line(cfg, line, lineno, err, errlen);
		if (rc)
			return rc;
		pos += n + (nl ? 1 : 0);
	}
	cfg->line = lineno;
	return nvmf_config_finish(cfg, err, errlen);
}

int nvmf_config_load(const char *path, struct nvmf_config *cfg, char *err,
		     size_t errlen)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int rc;

	if (!path || !cfg)
		return -EINVAL;
	nvmf_config_init(cfg, path);
	f = fopen(path, "r");
	if (!f) {
		rc = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			char *t = realloc(text, cap ? cap * 2 : 4096);

			if (!t || cap > (1u << 24)) {
				free(t ? t : text);
				fclose(f);
				if (err && errlen)
					snprintf(err, errlen, "%s: too large",
						 path);
				return -ENOMEM;
			}
			text = t;
			cap = cap ? cap * 2 : 4096;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	rc = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!rc)
		rc = nvmf_config_parse(text, len, path, cfg, err, errlen);
	else if (err && errlen)
		snprintf(err, errlen, "%s: read error", path);
	free(text);
	return rc;
}

void nvmf_config_free(struct nvmf_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->nsubsys; i++) {
		struct nvmf_cfg_subsys *s = &cfg->subsys[i];

		for (size_t j = 0; j < s->nhosts; j++) {
			free(s->hosts[j]);
			nvmf_auth_cfg_free(s->host_auth[j]);
		}
		free(s->hosts);
		free(s->host_auth);
		for (size_t j = 0; j < s->nns; j++)
			free(s->ns[j].path);
		free(s->ns);
	}
	free(cfg->subsys);
	cfg->subsys = NULL;
	cfg->nsubsys = 0;
}
