/*
 * initiators/nbd/nbd_args.h - wharf-nbd's options and their parser
 * (nbd_args.c, pure).
 */
#ifndef WHARF_INITIATORS_NBD_ARGS_H
#define WHARF_INITIATORS_NBD_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "initiators/common/host_args.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nbd_args {
	struct host_args host; /* the controller, as whom, its recovery */
	uint32_t queue_size;   /* 0: the library's default */
	uint32_t max_io_size;
	const char *device;	 /* kernel mode: /dev/nbdN */
	const char *socket;	 /* socket mode: a Unix socket path */
	const char *export_name; /* socket mode */
	unsigned connections;	 /* kernel mode; 0: one per I/O queue */
	unsigned timeout_s;	 /* kernel mode request timeout; 0: default */
	bool null_io;		 /* benchmark: no NVMe commands */
	bool quiet;
	bool help;
	bool version;
};

/* Parses argv into @a (defaults first).  0, or -EINVAL with a message in
 * @err. */
int nbd_parse(int argc, char **argv, struct nbd_args *a, char *err,
	      size_t errlen);
extern const char nbd_usage[];

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NBD_ARGS_H */
