/*
 * bench/storm/util.c - clock, heap and CPU readings and the QP shape,
 * shared by the server and the client processes.
 */
#include <jemalloc/jemalloc.h>
#include <sys/resource.h>
#include <time.h>

#include <wharf/qp.h>

#include "bench/storm/rdma.h"

double storm_heap_bytes(void)
{
	uint64_t epoch = 1;
	size_t allocated = 0, sz = sizeof(epoch);

	if (mallctl("epoch", &epoch, &sz, &epoch, sz))
		return -1;
	sz = sizeof(allocated);
	if (mallctl("stats.allocated", &allocated, &sz, NULL, 0))
		return -1;
	return (double)allocated;
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
