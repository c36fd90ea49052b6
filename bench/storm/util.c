/*
 * bench/storm/util.c - clock, heap and CPU readings and the QP shape,
 * shared by the server and the client processes.
 */
#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <wharf/qp.h>

#include "bench/storm/rdma.h"

/* jemalloc's statistics are a snapshot taken at each epoch: refresh it. */
static int heap_refresh(void)
{
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch);

	return mallctl("epoch", &epoch, &sz, &epoch, sz);
}

double storm_heap_bytes(void)
{
	size_t allocated = 0, sz;

	if (heap_refresh())
		return -1;
	sz = sizeof(allocated);
	if (mallctl("stats.allocated", &allocated, &sz, NULL, 0))
		return -1;
	return (double)allocated;
}

int storm_heap_classes(struct storm_heap_classes *h)
{
	unsigned nbins = 0, nlextents = 0;
	size_t sz;
	char name[96];

	h->n = 0;
	if (heap_refresh())
		return -1;
	sz = sizeof(nbins);
	if (mallctl("arenas.nbins", &nbins, &sz, NULL, 0))
		return -1;
	sz = sizeof(nlextents);
	if (mallctl("arenas.nlextents", &nlextents, &sz, NULL, 0))
		nlextents = 0;
	for (unsigned i = 0; i < nbins + nlextents && h->n < STORM_HEAP_CLASSES;
	     i++) {
		bool small = i < nbins;
		unsigned k = small ? i : i - nbins;
		size_t size = 0, count = 0;

		snprintf(name, sizeof(name),
			 small ? "arenas.bin.%u.size"
			       : "arenas.lextent.%u.size",
			 k);
		sz = sizeof(size);
		if (mallctl(name, &size, &sz, NULL, 0))
			continue;
		snprintf(name, sizeof(name),
			 small ? "stats.arenas.%u.bins.%u.curregs"
			       : "stats.arenas.%u.lextents.%u.curlextents",
			 MALLCTL_ARENAS_ALL, k);
		sz = sizeof(count);
		if (mallctl(name, &count, &sz, NULL, 0))
			continue;
		h->size[h->n] = size;
		h->count[h->n] = count;
		h->n++;
	}
	return 0;
}

void storm_heap_classes_print(FILE *f, const struct storm_heap_classes *a,
			      const struct storm_heap_classes *b,
			      unsigned conns)
{
	double total = 0;

	fprintf(f, "server heap by size class (allocations added per "
		   "connection, bytes per connection):");
	for (size_t i = 0; i < a->n && i < b->n; i++) {
		double d = (double)b->count[i] - (double)a->count[i];
		double per = d / (conns ? conns : 1);
		double bytes = per * (double)b->size[i];

		total += d * (double)b->size[i];
		if (bytes < 8 && bytes > -8)
			continue;
		fprintf(f, " %zu B x %.2f = %.0f;", b->size[i], per, bytes);
	}
	fprintf(f, " in all %.0f B\n", total / (conns ? conns : 1));
}

void storm_heap_prof_dump(const char *tag)
{
	const char *dir = getenv("STORM_HEAP_PROF");
	char path[512];
	const char *p = path;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s.heap", dir, tag);
	if (mallctl("prof.dump", NULL, NULL, &p, sizeof(p)))
		fprintf(stderr,
			"storm: no heap profile %s (run with "
			"MALLOC_CONF=prof:true,lg_prof_sample:0)\n",
			path);
}

int storm_cpus_allowed(int *cpus, unsigned cap)
{
	cpu_set_t set;
	unsigned n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return (int)n;
}

int storm_cpus_bind(const int *cpus, unsigned n)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (unsigned i = 0; i < n; i++)
		if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE)
			CPU_SET(cpus[i], &set);
	if (!CPU_COUNT(&set))
		return -EINVAL;
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

double storm_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

void storm_res_shape(struct wharf_qp_res_opts *ro, unsigned conns)
{
	ro->sq_depth = STORM_SQ_DEPTH;
	ro->max_send_sge = 1;
	ro->cq_size = ro->srq_depth + (conns + 16) * STORM_SQ_DEPTH;
}
