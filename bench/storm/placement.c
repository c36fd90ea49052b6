/*
 * bench/storm/placement.c - which CPUs the server and the clients use when
 * both run on one machine.
 *
 * wharf pins every shard to a CPU.  Left to the library, the server's
 * shard i and every client process's one shard each take the first CPUs
 * in placement order, so on one node the clients' shards and the server's
 * first shard shared a CPU while another CPU idled (two vCPUs: CPU 0 90 %
 * busy, CPU 1 50 %; docs/bench/storm.md).  A target and its initiators
 * are measured on CPUs of their own, as bench/nvmf does: the server takes
 * the first CPUs storm may use and the client processes the others, one
 * CPU each in turn; cmtime's server and client get the same two sets.
 * --share-cpus keeps every process on every CPU.
 */
#include "bench/storm/storm.h"

void storm_placement_plan(const int *allowed, unsigned n, bool split_ok,
			  unsigned server_want, struct storm_placement *p)
{
	unsigned ns;

	p->nserver = p->nclient = 0;
	if (n > STORM_MAX_CPUS)
		n = STORM_MAX_CPUS;
	ns = server_want ? server_want : n / 2;
	if (!split_ok || n < 2 || ns >= n)
		return;
	for (unsigned i = 0; i < n; i++) {
		if (i < ns)
			p->server[p->nserver++] = allowed[i];
		else
			p->client[p->nclient++] = allowed[i];
	}
}

int storm_placement_client_cpu(const struct storm_placement *p, unsigned k)
{
	return storm_placement_split(p) ? p->client[k % p->nclient] : -1;
}

void storm_placement_format(const struct storm_placement *p, char *buf,
			    size_t len)
{
	size_t o = 0;

	if (!storm_placement_split(p)) {
		snprintf(buf, len, "every process on every CPU");
		return;
	}
	o += (size_t)snprintf(buf, len, "server on CPUs");
	for (unsigned i = 0; i < p->nserver && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? "," : " ",
				      p->server[i]);
	if (o < len)
		o += (size_t)snprintf(buf + o, len - o, ", clients on CPUs");
	for (unsigned i = 0; i < p->nclient && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? "," : " ",
				      p->client[i]);
}
