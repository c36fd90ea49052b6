/*
 * nvmf_host/auth_run.c - a queue's DH-HMAC-CHAP transaction on the wire:
 * the messages of auth.c carried by Authentication Send and Receive on
 * the queue itself, between its Fabrics Connect (which asked for them,
 * ATR) and its first other command, on the queue's owner shard.  Each
 * command has the queue's per-command timeout; the bring-up's (or the
 * recovery's) deadline bounds the whole.  A loss completes the command
 * in flight with an error, which ends the transaction: nothing outlives
 * the connection it ran on.
 */
#include "nvmf_host/auth_run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "nvmf_host/auth.h"
#include "nvmf_host/cmd.h"

struct wnh_auth_run {
	struct wharf_nvmf_host_queue *q;
	wnh_auth_done_fn done;
	uint32_t connect_dw0;
	bool logged; /* the reason went to wnh_fail() */
	struct wnh_auth a;
	enum wnh_auth_next next;
	uint8_t out[WNH_AUTH_MAX_MSG];
	uint8_t in[WNH_AUTH_RECV_LEN];
};

/* The end: @done with @err; a failure not yet told is told (the connect
 * call ends on the first wnh_fail()). */
static void finish(struct wnh_auth_run *r, int err)
{
	struct wharf_nvmf_host_queue *q = r->q;
	wnh_auth_done_fn done = r->done;
	uint32_t dw0 = r->connect_dw0;

	q->auth = NULL;
	if (err && !r->logged && wnh_queue_alive(q->state))
		wnh_fail(q->h, err, "queue %u: DH-HMAC-CHAP: %s", q->qid,
			 strerror(-err));
	wnh_auth_clear(&r->a);
	OPENSSL_cleanse(r, sizeof(*r));
	free(r);
	done(q, err, dw0);
}

/* The transaction failed on its own terms: why, in the bring-up's log. */
static void refused(struct wnh_auth_run *r)
{
	struct wharf_nvmf_host_queue *q = r->q;
	const struct wnh_auth *a = &r->a;

	if (r->logged || !wnh_queue_alive(q->state))
		return;
	r->logged = true;
	if (a->peer_failed)
		wnh_fail(q->h, a->error,
			 "queue %u: DH-HMAC-CHAP: the controller refused the "
			 "host: %s",
			 q->qid, wnh_auth_rce_str(a->peer_exp));
	else if (a->error == -EKEYREJECTED)
		wnh_fail(q->h, a->error,
			 "queue %u: DH-HMAC-CHAP: the controller's response "
			 "is wrong (not the controller secret given)",
			 q->qid);
	else
		wnh_fail(q->h, a->error, "queue %u: DH-HMAC-CHAP: %s%s%s",
			 q->qid,
			 a->fail_exp ? "the controller broke the protocol: "
				     : "",
			 a->fail_exp ? wnh_auth_rce_str(a->fail_exp) : "",
			 a->fail_exp ? "" : strerror(-a->error));
}

static void recv_done(int status, uint16_t nvme_status, void *arg);

/* A command of the transaction failed: the transport's error as it is
 * (a loss, an abort), an NVMe status as the controller refusing. */
static void cmd_failed(struct wnh_auth_run *r, int status, uint16_t nvme_status,
		       const char *what)
{
	struct wharf_nvmf_host_queue *q = r->q;
	char st[96];

	if (status == -EIO && wnh_queue_alive(q->state) && !r->logged) {
		wnh_status_str(nvme_status, st, sizeof(st));
		wnh_fail(q->h, -EPROTO,
			 "queue %u: DH-HMAC-CHAP: Authentication %s failed: "
			 "%s",
			 q->qid, what, st);
		r->logged = true;
		status = -EPROTO;
	}
	finish(r, status);
}

/* After a message went out: receive, or end as the step said. */
static void sent_done(int status, uint16_t nvme_status, void *arg)
{
	struct wnh_auth_run *r = arg;
	union nvme_cmd cmd;
	int rc;

	if (status) {
		cmd_failed(r, status, nvme_status, "Send");
		return;
	}
	switch (r->next) {
	case WNH_AUTH_NEXT_RECV:
		memset(r->in, 0, sizeof(r->in));
		wnh_cmd_auth(&cmd, false, sizeof(r->in));
		rc = wnh_submit(r->q, &cmd, NH_DIR_FROM_CTRL, r->in,
				sizeof(r->in), recv_done, r);
		if (rc)
			finish(r, rc);
		return;
	case WNH_AUTH_NEXT_DONE:
		finish(r, 0);
		return;
	case WNH_AUTH_NEXT_FAIL:
	default:
		refused(r);
		finish(r, r->a.error);
		return;
	}
}

/* Sends what the last step built, or ends when it built nothing. */
static void send_next(struct wnh_auth_run *r, size_t len)
{
	union nvme_cmd cmd;
	int rc;

	if (!len) {
		sent_done(0, 0, r);
		return;
	}
	wnh_cmd_auth(&cmd, true, (uint32_t)len);
	rc = wnh_submit(r->q, &cmd, NH_DIR_TO_CTRL, r->out, (uint32_t)len,
			sent_done, r);
	if (rc)
		finish(r, rc);
}

static void recv_done(int status, uint16_t nvme_status, void *arg)
{
	struct wnh_auth_run *r = arg;
	size_t len = 0;

	if (status) {
		cmd_failed(r, status, nvme_status, "Receive");
		return;
	}
	/* Answered just before a loss: no FFDHE for a dead connection. */
	if (!wnh_queue_alive(r->q->state)) {
		finish(r, -ECONNABORTED);
		return;
	}
	r->next = wnh_auth_step(&r->a, r->in, sizeof(r->in), r->out, &len);
	/* Told before a Failure2 goes out: the controller may drop the
	 * connection as soon as it has it. */
	if (r->next == WNH_AUTH_NEXT_FAIL)
		refused(r);
	send_next(r, len);
}

bool wnh_auth_run_replied(const struct wnh_auth_run *r)
{
	return r->a.state == WNH_AUTH_SUCCESS1;
}

int wnh_auth_start(struct wharf_nvmf_host_queue *q, uint32_t connect_dw0,
		   wnh_auth_done_fn done)
{
	struct wharf_nvmf_host *h = q->h;
	struct wnh_auth_run *r = calloc(1, sizeof(*r));
	size_t len = 0;

	if (!r)
		return -ENOMEM;
	r->q = q;
	r->done = done;
	r->connect_dw0 = connect_dw0;
	wnh_auth_init(&r->a, &h->auth_key,
		      h->has_auth_ctrl_key ? &h->auth_ctrl_key : NULL,
		      h->hostnqn, h->subnqn, ++q->auth_tid);
	q->auth = r;
	r->next = wnh_auth_step(&r->a, NULL, 0, r->out, &len);
	send_next(r, len);
	return 0;
}
