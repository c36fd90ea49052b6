/*
 * initiators/common/host_stats.h - the controller's state and recovery
 * counters on the stats line of wharf-nbd and wharf-ublk, kept past the
 * controller's disconnect (which frees it), so that the line printed at
 * exit still says how often the controller was lost and came back.
 */
#ifndef WHARF_INITIATORS_COMMON_HOST_STATS_H
#define WHARF_INITIATORS_COMMON_HOST_STATS_H

#include <stddef.h>

#include <wharf/nvmf_host.h>

#ifdef __cplusplus
extern "C" {
#endif

struct host_stats {
	const struct wharf_nvmf_host *host; /* NULL: not connected */
	struct wharf_nvmf_host_stats last;  /* the last snapshot */
};

/** host_stats_attach() - read @host from now on (until detached). */
void host_stats_attach(struct host_stats *s,
		       const struct wharf_nvmf_host *host);

/** host_stats_detach() - a last snapshot; call before the disconnect. */
void host_stats_detach(struct host_stats *s);

/**
 * host_stats_line() - "ctrl=STATE losses=N reconnects=N resent=N
 * failed_held=N" into @buf: the controller's counters now while
 * attached, else the last snapshot ("ctrl=none" before any).
 * Context: the thread that attaches and detaches (the program's main
 * thread); non-blocking.
 */
void host_stats_line(struct host_stats *s, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_COMMON_HOST_STATS_H */
