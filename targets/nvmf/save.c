/*
 * targets/nvmf/save.c - the running target as configuration text
 * (config.h's format): the listen addresses as they are now, the other
 * global lines the target started with, then each subsystem as it is
 * now, with the namespaces, hosts, allow-any switch and export lines that
 * run-time changes left. Parsing the text back gives the same
 * target; nvmf_tgt_save_config() is what the management RPC's save_config
 * writes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "targets/nvmf/internal.h"

/* The cpus line: runs of consecutive CPUs as "A-B", in list order. */
static void put_cpus(FILE *f, const struct nvmf_config *cfg)
{
	fputs("cpus ", f);
	for (uint32_t i = 0, j; i < cfg->ncpus; i = j) {
		for (j = i + 1;
		     j < cfg->ncpus && cfg->cpus[j] == cfg->cpus[j - 1] + 1;
		     j++)
			;
		fprintf(f, "%s%d", i ? "," : "", cfg->cpus[i]);
		if (j - i > 1)
			fprintf(f, "-%d", cfg->cpus[j - 1]);
	}
	fputc('\n', f);
}

/* The listen lines: the live slots, added at run time included.
 * tgt->lock held. */
static void put_listen(FILE *f, const struct nvmf_tgt *tgt)
{
	uint32_t live = (uint32_t)atomic_load(&tgt->listen_live);

	for (size_t i = 0; i < NVMF_CFG_MAX_LISTEN; i++)
		if (live >> i & 1u)
			fprintf(f, "listen %s %u\n", tgt->listen[i].addr,
				tgt->listen[i].port);
}

static void put_globals(FILE *f, const struct nvmf_config *cfg)
{
	if (cfg->shards)
		fprintf(f, "shards %u\n", cfg->shards);
	else
		fputs("shards auto\n", f);
	if (cfg->ncpus)
		put_cpus(f, cfg);
	fprintf(f,
		"queue-depth %u\nio-queues %u\nin-capsule %u\n"
		"max-io-size %u\n",
		cfg->queue_depth, cfg->io_queues, cfg->in_capsule,
		cfg->max_io_size);
}

static void put_ns(FILE *f, const struct nvmf_ns *ns)
{
	const struct nvmf_cfg_ns *c = &ns->cfg;

	fprintf(f, "  namespace %u ", ns->nsid);
	switch (c->kind) {
	case NVMF_BDEV_RAM:
	case NVMF_BDEV_NULL:
		fprintf(f, "%s:%llu block=%u",
			c->kind == NVMF_BDEV_RAM ? "ram" : "null",
			(unsigned long long)c->size, ns->bdev.block_size);
		break;
	default:
		fprintf(f, "file:%s", c->path ? c->path : "?");
		if (c->block_size)
			fprintf(f, " block=%u", c->block_size);
		if (c->io == NVMF_BDEV_IO_DIRECT)
			fputs(" io=direct", f);
		else if (c->io == NVMF_BDEV_IO_BUFFERED)
			fputs(" io=buffered", f);
		break;
	}
	fputc('\n', f);
}

/* One subsystem block. tgt->lock held. */
static void put_subsys(FILE *f, const struct nvmf_tgt *tgt,
		       const struct nvmf_subsys *s)
{
	fprintf(f, "\nsubsystem %s\n  serial %s\n  model %s\n", s->nqn, s->sn,
		s->mn);
	for (uint32_t n = 1; n <= NVMF_MAX_NSID; n++) {
		const struct nvmf_ns *ns =
			atomic_load_explicit(&s->ns[n], memory_order_acquire);

		if (ns && atomic_load(&ns->state) != NVMF_NS_REMOVED)
			put_ns(f, ns);
	}
	if (s->allow_any)
		fputs("  allow-any-host\n", f);
	else if (!s->nhosts)
		fputs("  allow-no-host\n", f);
	for (size_t i = 0; i < s->nhosts; i++) {
		char words[NVMF_AUTH_CFG_TEXT] = "";

		if (s->host_auth[i])
			nvmf_auth_cfg_words(s->host_auth[i], words,
					    sizeof(words));
		fprintf(f, "  allow-host %s%s\n", s->hosts[i], words);
		OPENSSL_cleanse(words, sizeof(words));
	}
	if (!s->listen_all && !s->listen_mask)
		fputs("  export-none\n", f);
	for (size_t i = 0; !s->listen_all && i < NVMF_CFG_MAX_LISTEN; i++)
		if (s->listen_mask >> i & 1u)
			fprintf(f, "  export %s %u\n", tgt->listen[i].addr,
				tgt->listen[i].port);
}

int nvmf_tgt_save_config(struct nvmf_tgt *tgt, const struct nvmf_config *cfg,
			 char **text, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f;

	if (!tgt || !cfg || !text)
		return -EINVAL;
	f = open_memstream(&buf, &n);
	if (!f)
		return -ENOMEM;
	fputs("# wharf-nvmf-tgt: the running configuration (save_config)\n", f);
	pthread_mutex_lock(&tgt->lock);
	put_listen(f, tgt);
	put_globals(f, cfg);
	struct nvmf_subsys_tab *t = nvmf_subsys_table(tgt);
	for (size_t i = 1; i < t->n; i++)
		put_subsys(f, tgt, t->s[i]);
	pthread_mutex_unlock(&tgt->lock);
	if (fclose(f)) {
		free(buf);
		return -ENOMEM;
	}
	*text = buf;
	if (len)
		*len = n;
	return 0;
}
