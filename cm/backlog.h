/*
 * cm/backlog.h - the listen backlog a listener asks rdma_listen() for when
 * the options leave it 0: the system maximum of the RDMA CM
 * (/proc/sys/net/rdma_ucm/max_backlog).
 */
#ifndef WHARF_CM_BACKLOG_H
#define WHARF_CM_BACKLOG_H

#ifdef __cplusplus
extern "C" {
#endif

/** Where the kernel publishes rdma_ucm's maximum listen backlog. */
#define WCM_MAX_BACKLOG_PATH "/proc/sys/net/rdma_ucm/max_backlog"

/**
 * wcm_backlog_read - the positive decimal integer in the file at @path
 * (one line, surrounding whitespace allowed), or @fallback when the file
 * is missing, unreadable, empty, not a number, not positive or above
 * INT_MAX.
 * Context: any thread; blocks on the file read.
 */
int wcm_backlog_read(const char *path, int fallback);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CM_BACKLOG_H */
