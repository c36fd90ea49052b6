/*
 * initiators/ublk/ublk_args.h - wharf-ublk's command line (ublk_args.c,
 * pure): the subcommand and its options.
 */
#ifndef WHARF_INITIATORS_UBLK_ARGS_H
#define WHARF_INITIATORS_UBLK_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "initiators/common/host_args.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ublk_verb {
	UBLK_VERB_ADD = 1, /* create /dev/ublkbN and serve it */
	UBLK_VERB_RECOVER, /* take over a device whose server died */
	UBLK_VERB_DEL,	   /* stop and remove a device (or all) */
	UBLK_VERB_LIST,	   /* the devices, as text or JSON */
};

/* CPUs --cpus may list. */
#define UBLK_MAX_CPUS 64

/* -1 for --number: the driver picks the device number. */
#define UBLK_ARGS_ANY_NUMBER (-1)

struct ublk_args {
	enum ublk_verb verb;
	/* The controller (add, recover). */
	struct host_args host;	 /* the controller, as whom, its recovery */
	int cpus[UBLK_MAX_CPUS]; /* --cpus: shard i on cpus[i] */
	unsigned ncpus;
	int poll;	      /* --poll: enum wharf_poll_mode */
	uint32_t queue_depth; /* 0: the I/O queue's size, at most 128 */
	uint32_t max_io_size;
	/* The device. */
	int number; /* --number; UBLK_ARGS_ANY_NUMBER */
	bool all;   /* del --all */
	bool json;  /* list --json */
	bool quiet;
	bool help;
	bool version;
};

/* Parses argv (argv[1] the subcommand) into @a (defaults first).  0, or
 * -EINVAL with a message in @err. */
int ublk_parse(int argc, char **argv, struct ublk_args *a, char *err,
	       size_t errlen);
extern const char ublk_usage[];

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_UBLK_ARGS_H */
