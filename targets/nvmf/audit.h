/*
 * targets/nvmf/audit.h - the target's audit trail: one log line per admin
 * queue Connect (a controller created, or refused and why) naming the
 * host's NQN and ID, its address, the listen address and the subsystem,
 * as nvmet logs them. Lines are limited per shard (a fixed one-second
 * window): a connect storm neither floods the log nor holds a shard in
 * write(2); the lines held back are counted and the next line says how
 * many. Everything here is pure (no I/O): the binding prints.
 */
#ifndef WHARF_TARGETS_NVMF_AUDIT_H
#define WHARF_TARGETS_NVMF_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "targets/nvmf/config.h"
#include "targets/nvmf/nvmf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lines a shard prints a second before it starts counting instead. */
#define NVMF_AUDIT_PER_SEC 20

/* One shard's limit: owned by that shard's thread. */
struct nvmf_audit_limit {
	uint32_t per_sec;    /* lines a window; 0: no limit */
	uint64_t window_ms;  /* start of the current one-second window */
	uint32_t used;	     /* lines printed in it */
	uint64_t held_back;  /* lines not printed since the last one */
	uint64_t held_total; /* lines not printed, ever */
};

/**
 * nvmf_audit_limit_init() - a limit of @per_sec lines a second.
 * @l: the limit.
 * @per_sec: lines a one-second window; 0 for none.
 *
 * Context: any thread; pure.
 */
void nvmf_audit_limit_init(struct nvmf_audit_limit *l, uint32_t per_sec);

/**
 * nvmf_audit_admit() - whether a line may be printed now.
 * @l: the limit.
 * @now_ms: a monotonic clock in milliseconds.
 * @held_back: set, when admitted, to the lines held back since the last
 *             admitted one (then reset); 0 otherwise.
 *
 * Return: true to print the line; false: it was counted as held back.
 * Context: the thread that owns @l; pure.
 */
bool nvmf_audit_admit(struct nvmf_audit_limit *l, uint64_t now_ms,
		      uint64_t *held_back);

/**
 * nvmf_audit_format() - the log line of a Connect's outcome.
 * @buf: receives the line (no newline), truncated to @len.
 * @len: size of @buf.
 * @a: the outcome.
 * @peer: the host's address ("10.0.0.2:4711"); NULL: "?".
 * @local: the listen address it came in on; NULL: "?".
 * @held_back: lines held back before this one (said at the end if > 0).
 *
 * Return: the length snprintf() reports.
 * Context: any thread; pure.
 */
int nvmf_audit_format(char *buf, size_t len, const struct nvmf_connect_audit *a,
		      const char *peer, const char *local, uint64_t held_back);

/**
 * nvmf_sockaddr_str() - "A.B.C.D:PORT" or "[V6]:PORT".
 * @sa: an AF_INET or AF_INET6 address; NULL or another family: "?".
 * @buf: receives the text (at least 56 bytes hold any).
 * @len: size of @buf.
 *
 * Context: any thread; pure.
 */
void nvmf_sockaddr_str(const struct sockaddr *sa, char *buf, size_t len);

/**
 * nvmf_listener_match() - the listen line a connection came in on.
 * @l: the listen slots (NVMF_CFG_MAX_LISTEN of them).
 * @live: bit i set: l[i] is a listen address; the others are skipped.
 * @local: the connection's local address (port included).
 *
 * Return: 1 + the index of the slot with that port and address (a
 * wildcard address, 0.0.0.0 or ::, matches any address of the port); 0
 * when none does.
 * Context: any thread; pure.
 */
uint16_t nvmf_listener_match(const struct nvmf_cfg_listen *l, uint32_t live,
			     const struct sockaddr *local);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_AUDIT_H */
