/*
 * nvmf_host/auth.h - the host's side of one queue's DH-HMAC-CHAP
 * transaction (NVMe base 2.0 8.13), as the Linux host runs it: what the
 * host sends (Authentication Send) built, what it fetches
 * (Authentication Receive) checked in its order.  The computations are
 * proto/nvme/auth.h's; no I/O here: queue.c carries the messages.
 *
 *   wnh_auth_step(NULL)      -> AUTH_Negotiate to send; CHALLENGE
 *   CHALLENGE + Challenge    -> DH-HMAC-CHAP_Reply to send; SUCCESS1
 *   SUCCESS1 + Success1      -> done (unidirectional), or R2 checked and
 *                               Success2 to send, then done
 *   a Failure1 in any state  -> failed, -EKEYREJECTED (the controller
 *                               refused the host's response, or gave up)
 *   a controller's message that breaks the protocol, or a wrong R2
 *                            -> AUTH_Failure2 to send, then failed
 *
 * Offered: SHA-256, -384 and -512; the null DH group and ffdhe2048 ..
 * ffdhe8192 (the Linux host's lists); the controller chooses.
 */
#ifndef WHARF_NVMF_HOST_AUTH_H
#define WHARF_NVMF_HOST_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/nvme/auth.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest message either side sends (SHA-512, ffdhe8192). */
#define WNH_AUTH_MAX_MSG (16u + 2u * NVME_AUTH_MAX_HASH_LEN + 1024u)
/* The allocation length of each Authentication Receive (the Linux
 * host's). */
#define WNH_AUTH_RECV_LEN 4096u

enum wnh_auth_state {
	WNH_AUTH_START = 0, /* nothing sent yet */
	WNH_AUTH_CHALLENGE, /* Negotiate sent: a Receive gets the Challenge */
	WNH_AUTH_SUCCESS1,  /* Reply sent: a Receive gets Success1 */
	WNH_AUTH_DONE,	    /* authenticated (Success2 sent if asked for) */
	WNH_AUTH_FAILED,    /* final; error says why */
};

/* What the caller does after a step. */
enum wnh_auth_next {
	WNH_AUTH_NEXT_RECV = 0, /* send the message out (if any), then
				 * receive and step again */
	WNH_AUTH_NEXT_DONE,	/* send the message out (if any): the
				 * queue is authenticated */
	WNH_AUTH_NEXT_FAIL,	/* send the message out (a Failure2, if
				 * any), then fail the queue with error */
};

struct wnh_auth {
	enum wnh_auth_state state;
	int error; /* FAILED: -EKEYREJECTED, -EPROTO, -ENOMEM, -EIO */
	const struct nvme_auth_key *key;      /* the host's secret */
	const struct nvme_auth_key *ctrl_key; /* NULL: unidirectional */
	const char *hostnqn, *subnqn;	      /* as in the Connect data */
	uint16_t t_id;
	uint8_t hash, hl, dhgid;
	uint8_t fail_exp; /* the Failure2's reason, NVME_AUTH_RCE_* */
	bool peer_failed; /* the controller sent Failure1 */
	uint8_t peer_exp; /* its reason, NVME_AUTH_RCE_* */
	bool bidi;
	uint32_t s2;
	uint8_t r2[NVME_AUTH_MAX_HASH_LEN]; /* the R2 the controller owes */
};

/**
 * wnh_auth_init() - a transaction of one queue.
 * @key: the host's secret; @ctrl_key: the controller's (bidirectional) or
 * NULL; both, and the NQNs, must outlive the transaction.
 * @t_id: the transaction ID the messages carry.
 * Context: any thread; pure.
 */
void wnh_auth_init(struct wnh_auth *a, const struct nvme_auth_key *key,
		   const struct nvme_auth_key *ctrl_key, const char *hostnqn,
		   const char *subnqn, uint16_t t_id);

/**
 * wnh_auth_step() - the next step of the transaction.
 * @in: the message an Authentication Receive fetched (@in_len bytes as
 *      the controller sent them), or NULL for the first step.
 * @out: WNH_AUTH_MAX_MSG bytes: the message to send next.
 * @out_len: its length; 0 when there is nothing to send.
 *
 * Return: enum wnh_auth_next; on WNH_AUTH_NEXT_FAIL, @a->error holds
 * the reason.  Any step in DONE or FAILED fails with -EPROTO.
 * Context: the queue's thread; FFDHE costs CPU (milliseconds for the
 * large groups), nothing blocks.
 */
enum wnh_auth_next wnh_auth_step(struct wnh_auth *a, const uint8_t *in,
				 size_t in_len, uint8_t *out, size_t *out_len);

/* wnh_auth_clear() - cleanse what the transaction derived (NULL ignored). */
void wnh_auth_clear(struct wnh_auth *a);

/* The reason of a Failure1 / Failure2 explanation, for a log line. */
const char *wnh_auth_rce_str(uint8_t rce);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_NVMF_HOST_AUTH_H */
