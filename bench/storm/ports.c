/*
 * bench/storm/ports.c - the local port range every storm connection
 * takes a port from.  All clients connect from one address to one
 * server port, so each active rdma_cm_id needs a local port of its own
 * (the kernel's CM reuses a port only for a different 4-tuple) from
 * net.ipv4.ip_local_port_range: 28,232 ports by default.  A run that
 * needs more is refused before it starts, naming the limit, instead of
 * failing its last connections one by one.
 */
#include <errno.h>
#include <stdio.h>

#include "bench/storm/storm.h"

int storm_port_range_read(const char *path, unsigned *lo, unsigned *hi)
{
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%u %u", lo, hi);
	fclose(f);
	return n == 2 && *lo <= *hi ? 0 : -EINVAL;
}

int storm_ports_check(unsigned conns, unsigned lo, unsigned hi, char *err,
		      size_t errlen)
{
	/* The server's listening port may lie in the range too. */
	unsigned long have = (unsigned long)hi - lo + 1;

	if ((unsigned long)conns + 1 <= have)
		return 0;
	snprintf(err, errlen,
		 "--conns %u needs %u local ports from one address, and "
		 "net.ipv4.ip_local_port_range (%u %u) has %lu: widen it "
		 "(sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\" "
		 "gives 64,512) or run fewer connections",
		 conns, conns + 1, lo, hi, have);
	return -ENOSPC;
}
