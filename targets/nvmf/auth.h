/*
 * targets/nvmf/auth.h - the controller's side of one queue's DH-HMAC-CHAP
 * transaction (NVMe base 2.0 8.13), as a state machine over the messages
 * the host sends (Authentication Send) and fetches (Authentication
 * Receive). The computations are proto/nvme/auth.h's; this file decides
 * what each message may be in each state, and what the answer is.
 *
 *   NEGOTIATE --Send Negotiate--> CHALLENGE --Receive--> REPLY
 *   REPLY --Send Reply (R1 right)--> SUCCESS1 --Receive--> DONE, or
 *                                               SUCCESS2 (bidirectional)
 *   SUCCESS2 --Send Success2--> DONE
 *   a protocol error --> FAILURE1 --Receive Failure1--> FAILED
 *   a wrong message after Success1 / on a done queue --> FAILED
 *   Send Failure2 (the host gave up) --> FAILED
 *
 * FAILED is final: the queue closes, nothing moves it again. A Negotiate
 * in any other state starts a new transaction (the host re-authenticates
 * a live queue that way; a queue authenticated once stays usable while
 * it does, and closes if that fails); at most NVMF_AUTH_MAX_ATTEMPTS
 * before the first success.
 */
#ifndef WHARF_TARGETS_NVMF_AUTH_H
#define WHARF_TARGETS_NVMF_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/nvme/auth.h"
#include "proto/nvme/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the target knows of a host that must authenticate. */
struct nvmf_auth_cfg {
	struct nvme_auth_key key;      /* the host's secret */
	bool has_ctrl_key;	       /* bidirectional allowed */
	struct nvme_auth_key ctrl_key; /* the controller's secret */
	uint8_t hash;		       /* preferred NVME_AUTH_HASH_* */
	uint8_t dhgroup;	       /* NVME_AUTH_DHGROUP_* required */
};

enum nvmf_auth_state {
	NVMF_AUTH_NEGOTIATE = 0, /* expects AUTH_Negotiate */
	NVMF_AUTH_CHALLENGE,	 /* a Receive gets the Challenge */
	NVMF_AUTH_REPLY,	 /* expects the Reply */
	NVMF_AUTH_SUCCESS1,	 /* a Receive gets Success1 */
	NVMF_AUTH_SUCCESS2,	 /* expects Success2 */
	NVMF_AUTH_FAILURE1,	 /* a Receive gets Failure1 */
	NVMF_AUTH_DONE,		 /* authenticated */
	NVMF_AUTH_FAILED,	 /* the queue must close */
};

struct nvmf_auth {
	enum nvmf_auth_state state;
	bool authenticated; /* a transaction succeeded on this queue */
	struct nvmf_auth_cfg cfg;
	char hostnqn[NVME_NQN_FIELD];
	char subnqn[NVME_NQN_FIELD];
	uint16_t t_id;
	uint8_t hash; /* chosen from the host's list */
	uint8_t hl;   /* its digest length */
	uint8_t dhgid;
	uint32_t s1;
	uint8_t c1[NVME_AUTH_MAX_HASH_LEN];
	struct nvme_auth_dh *dh; /* ours, for this transaction */
	bool bidi;
	uint8_t r2[NVME_AUTH_MAX_HASH_LEN];
	uint8_t fail_exp; /* NVME_AUTH_RCE_* for Failure1 */
	uint8_t attempts; /* transactions started before the first success */
};

/* Transactions a queue may start before one succeeds: each costs the
 * shard a DH key pair, and an NQN is no secret. */
#define NVMF_AUTH_MAX_ATTEMPTS 3

/* The largest message either side sends: a Challenge or Reply with
 * SHA-512 and ffdhe8192 (16 + 2 * 64 + 1024 bytes). */
#define NVMF_AUTH_MAX_MSG 1168
/* How long a queue has to authenticate after its Connect. */
#define NVMF_AUTH_TIMEOUT_MS 30000
/* The largest TL / AL taken (the Linux host asks for 4096). */
#define NVMF_AUTH_XFER_MAX 4096

/**
 * nvmf_auth_init() - a queue's transaction, before the host's Negotiate.
 * @a: the state (zeroed here).
 * @cfg: the host's secrets and choices (copied).
 * @hostnqn: the host NQN of the Connect.
 * @subnqn: the subsystem NQN of the Connect.
 *
 * Context: any thread; pure.
 */
void nvmf_auth_init(struct nvmf_auth *a, const struct nvmf_auth_cfg *cfg,
		    const char *hostnqn, const char *subnqn);

/* nvmf_auth_clear() - free and cleanse (NULL ignored). */
void nvmf_auth_clear(struct nvmf_auth *a);

/**
 * nvmf_auth_send() - a message the host sent (Authentication Send data).
 * @a: the transaction.
 * @msg: the message.
 * @len: its length (TL).
 * @s1: the sequence number a Challenge this message calls for carries
 *      (the target's counter, never 0).
 *
 * A protocol error is not a command error: the command succeeds and the
 * next Receive gets Failure1 with the reason (as nvmet answers).
 *
 * Return: 0, or the command's status for a message that cannot be
 * read at all (shorter than its header: Invalid Field).
 * Context: the queue's thread; FFDHE costs CPU (milliseconds for the
 * large groups), nothing blocks.
 */
uint16_t nvmf_auth_send(struct nvmf_auth *a, const uint8_t *msg, size_t len,
			uint32_t s1);

/**
 * nvmf_auth_recv() - the message the host fetches (Authentication
 * Receive).
 * @a: the transaction.
 * @buf: receives the message (NVMF_AUTH_MAX_MSG bytes hold any).
 * @al: the host's allocation length.
 * @len: receives the message's length.
 *
 * Return: 0; Invalid Field if @al cannot hold the message (the state
 * does not move); internal error if libcrypto failed (Failure1 next).
 * Context: the queue's thread; non-blocking (FFDHE as above).
 */
uint16_t nvmf_auth_recv(struct nvmf_auth *a, uint8_t *buf, size_t al,
			size_t *len);

/* ---- auth_cfg.c: a host's secrets in the configuration's words ------ */

/**
 * nvmf_auth_cfg_init() - no secret yet; SHA-256 and the null DH group
 * (nvmet's defaults).
 * Context: any thread; pure.
 */
void nvmf_auth_cfg_init(struct nvmf_auth_cfg *a);

/**
 * nvmf_auth_cfg_option() - one "NAME=VALUE" word of an allow-host line
 * (or the management RPC's params): dhchap-key=DHHC-1:..:,
 * dhchap-ctrl-key=DHHC-1:..:, dhchap-hash=sha256|sha384|sha512,
 * dhchap-dhgroup=null|ffdhe2048|ffdhe3072|ffdhe4096|ffdhe6144|ffdhe8192.
 * @word: the word.
 * @a: updated.
 * @why: receives what is wrong.
 * @whylen: its size.
 *
 * Return: 0; -EINVAL (reason in @why); -ENOENT for a word that is none
 * of these names.
 * Context: any thread; pure.
 */
int nvmf_auth_cfg_option(const char *word, struct nvmf_auth_cfg *a, char *why,
			 size_t whylen);

/**
 * nvmf_auth_cfg_check() - the options of one host agree: a controller
 * key, hash or group only with a host key.
 * Return: 0; -EINVAL (reason in @why).
 * Context: any thread; pure.
 */
int nvmf_auth_cfg_check(const struct nvmf_auth_cfg *a, char *why,
			size_t whylen);

/**
 * nvmf_hosts_grow() - room for one more host in an allow-list and its
 * parallel secrets array (the configuration's and a subsystem's).
 * @hosts: the NQN array (replaced when it moves).
 * @auth: the parallel secrets array (likewise).
 * @n: the hosts there now.
 *
 * Return: 0; -ENOMEM (both arrays still valid, with @n entries).
 * Context: any thread; the caller's lock for the arrays.
 */
int nvmf_hosts_grow(char ***hosts, struct nvmf_auth_cfg ***auth, size_t n);

/* A copy on the heap (NULL without memory), and its cleansing free(). */
struct nvmf_auth_cfg *nvmf_auth_cfg_dup(const struct nvmf_auth_cfg *a);
void nvmf_auth_cfg_free(struct nvmf_auth_cfg *a);

/**
 * nvmf_auth_cfg_words() - @a as the words nvmf_auth_cfg_option() reads
 * back, each preceded by a space (defaults left out).
 * @a: the secrets.
 * @buf: receives the text.
 * @len: its size (NVMF_AUTH_CFG_TEXT holds any).
 * Context: any thread; pure.
 */
#define NVMF_AUTH_CFG_TEXT 320
void nvmf_auth_cfg_words(const struct nvmf_auth_cfg *a, char *buf, size_t len);

/* Whether commands other than authentication may run on the queue. */
static inline bool nvmf_auth_ok(const struct nvmf_auth *a)
{
	return a->authenticated && a->state != NVMF_AUTH_FAILED;
}

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_AUTH_H */
