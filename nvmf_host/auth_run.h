/*
 * nvmf_host/auth_run.h - a queue's DH-HMAC-CHAP transaction on the wire
 * (auth_run.c), between its Fabrics Connect and its first other command.
 */
#ifndef WHARF_NVMF_HOST_AUTH_RUN_H
#define WHARF_NVMF_HOST_AUTH_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "nvmf_host/host_int.h"

/* The end of a transaction: 0 (authenticated), or -errno (already
 * logged through wnh_fail() while the queue was alive); @connect_dw0 is
 * the Connect response's DW0 (the controller ID on the admin queue). */
typedef void (*wnh_auth_done_fn)(struct wharf_nvmf_host_queue *q, int err,
				 uint32_t connect_dw0);

/**
 * wnh_auth_start() - authenticate @q with the controller's secrets of its
 * host (h->auth_key, and h->auth_ctrl_key when set: bidirectional).
 * @done runs exactly once when the function returned 0, possibly before
 * it returns.
 * Return: 0; -ENOMEM.
 * Context: @q's owner shard, in FABRICS (the Connect succeeded).
 */
int wnh_auth_start(struct wharf_nvmf_host_queue *q, uint32_t connect_dw0,
		   wnh_auth_done_fn done);

/* Whether @r sent (or is sending) the host's response and waits for the
 * controller's verdict: a controller that refuses may drop the
 * connection instead of answering (nvmet does: it ends the controller
 * before its Failure1 reaches the host). */
bool wnh_auth_run_replied(const struct wnh_auth_run *r);

#endif /* WHARF_NVMF_HOST_AUTH_RUN_H */
