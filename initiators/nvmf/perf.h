/*
 * initiators/nvmf/perf.h - wharf-nvmf-perf: options and their parser
 * (perf_args.c, pure) and the run (perf_main.c).
 */
#ifndef WHARF_INITIATORS_NVMF_PERF_H
#define WHARF_INITIATORS_NVMF_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "initiators/common/host_args.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PERF_MAX_CPUS 64

enum perf_pattern {
	PERF_READ = 0,
	PERF_WRITE,
	PERF_RANDREAD,
	PERF_RANDWRITE,
};

struct perf_args {
	struct host_args host; /* the controller, as whom, its recovery */
	unsigned qd;	       /* per queue */
	uint32_t io_size;      /* bytes */
	enum perf_pattern pattern;
	unsigned time_s;
	int cpus[PERF_MAX_CPUS]; /* --cpus: shard i on cpus[i] */
	unsigned ncpus;
	int poll; /* enum wharf_poll_mode */
	bool verify;
	bool zero_copy;	    /* each queue's buffers registered once */
	bool submit_thread; /* submit from an application thread */
	bool discover;	    /* print the discovery log instead */
	bool json;
	bool quiet; /* no progress */
	bool help;
	bool version;
};

/* Parses argv into @a (defaults first).  0, or -EINVAL with a message in
 * @err. */
int perf_parse(int argc, char **argv, struct perf_args *a, char *err,
	       size_t errlen);
const char *perf_pattern_name(enum perf_pattern p);
extern const char perf_usage[];

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NVMF_PERF_H */
