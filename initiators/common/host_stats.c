/*
 * initiators/common/host_stats.c - the controller's counters on a stats
 * line (host_stats.h).
 */
#include "initiators/common/host_stats.h"

#include <stdio.h>

static void snapshot(struct host_stats *s)
{
	s->last.size = sizeof(s->last);
	if (wharf_nvmf_host_stats(s->host, &s->last))
		s->last.size = 0;
}

void host_stats_attach(struct host_stats *s, const struct wharf_nvmf_host *host)
{
	s->host = host;
	snapshot(s);
}

void host_stats_detach(struct host_stats *s)
{
	if (!s->host)
		return;
	snapshot(s);
	s->host = NULL;
}

void host_stats_line(struct host_stats *s, char *buf, size_t len)
{
	if (s->host)
		snapshot(s);
	if (!s->last.size) {
		snprintf(buf, len, "ctrl=none");
		return;
	}
	snprintf(buf, len,
		 "ctrl=%s losses=%llu reconnects=%llu resent=%llu "
		 "failed_held=%llu",
		 wharf_nvmf_host_state_name(s->last.state),
		 (unsigned long long)s->last.losses,
		 (unsigned long long)s->last.reconnects,
		 (unsigned long long)s->last.retried,
		 (unsigned long long)s->last.failed_held);
}
