/*
 * targets/nvmf/tgt_main.h - wharf-nvmf-tgt's command line (tgt_args.c).
 */
#ifndef WHARF_TARGETS_NVMF_TGT_MAIN_H
#define WHARF_TARGETS_NVMF_TGT_MAIN_H

#include <stdio.h>

#include "targets/nvmf/config.h"
#include "targets/nvmf/rdma.h"

struct tgt_args {
	const char *config;	    /* -c FILE or NULL */
	struct nvmf_config cfg;	    /* the file's lines, then the flags' */
	struct nvmf_rdma_opts opts; /* binding options */
	unsigned nflags;	    /* configuration flags seen */
	const char *rpc;	    /* --rpc PATH or NULL */
};

/**
 * tgt_args_parse() - parse the command line into @a.
 * Return: 0; 1 after --help (printed); -EINVAL / -errno after printing the
 * error (free @a->cfg with nvmf_config_free() in every case).
 * Context: main thread.
 */
int tgt_args_parse(struct tgt_args *a, int argc, char **argv);

/* Print the help text. */
void tgt_usage(FILE *f);

#endif /* WHARF_TARGETS_NVMF_TGT_MAIN_H */
