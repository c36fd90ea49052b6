/*
 * targets/nvmf/fabrics.c - Fabrics commands (opcode 7Fh): Connect,
 * Property Get / Set and Disconnect.
 *
 * Connect is the only command a new queue accepts (anything else is a
 * Command Sequence Error) and is refused on a connected one. Its SQE
 * fields are checked before the 1024 bytes of data are fetched: RECFMT 0
 * (else Connect Incompatible Format), QID equal to the CM private data's
 * (the queue already exists for it), SQSIZE 1..(entries negotiated in the
 * CM exchange - 1); failures are Connect Invalid Parameters with IATTR 0
 * and the byte offset of the field as IPO. The data then names the
 * subsystem and host (NUL-terminated, valid NQN; IATTR 1, IPO of the
 * field), the admin queue asks for a new controller (CNTLID FFFFh, the
 * dynamic model), I/O queues name theirs (see ctrl.c). A host missing
 * from the subsystem's allow-list gets Connect Invalid Host; a subsystem
 * not exported on the queue's listener is refused as an unknown one. Each
 * admin queue Connect, accepted or refused, is reported to the binding
 * (nvmf_tgt_ops.connect_audit) with the host's NQN and ID and the reason.
 *
 * Property Get / Set run on the admin queue only (Invalid Opcode on I/O
 * queues, as for unknown fctypes); Disconnect on I/O queues only (Invalid
 * Queue Type on the admin queue) and asks the binding to close the queue
 * after the response.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/nvmf/internal.h"
#include "targets/nvmf/nqn.h"

/* Connect Invalid Parameters with IATTR / IPO in DW0. */
static uint16_t invalid_param(struct nvmf_req *req, uint8_t iattr, uint16_t ipo)
{
	req->rsp.result = NVME_CONNECT_IPO(iattr, ipo);
	return nvmf_sts(NVME_SCT_CMD, NVME_SC_CONNECT_INVALID_PARAM);
}

/* Connect SQE checks; 1024 bytes of data to fetch. */
static uint16_t connect_prep(struct nvmf_queue *q, struct nvmf_req *req)
{
	const struct nvme_connect_cmd *c = &req->cmd.connect;

	if (q->live || q->ctrl)
		return nvmf_sts_gen(NVME_SC_CMD_SEQ_ERROR);
	if (c->recfmt != 0)
		return nvmf_sts(NVME_SCT_CMD, NVME_SC_CONNECT_INCOMPAT_FMT);
	if (c->qid != q->qid)
		return invalid_param(req, NVME_CONNECT_IATTR_CMD,
				     NVME_IPO_CMD_QID);
	if (c->sqsize == 0 || (uint32_t)c->sqsize + 1 > q->sq_entries)
		return invalid_param(req, NVME_CONNECT_IATTR_CMD,
				     NVME_IPO_CMD_SQSIZE);
	req->xfer = NVMF_XFER_H2C;
	req->xfer_len = NVME_CONNECT_DATA_SIZE;
	return 0;
}

/* Connect data checks; create or join the controller. @why: set to the
 * reason of a refusal. */
static uint16_t connect_run(struct nvmf_queue *q, struct nvmf_req *req,
			    const struct nvme_connect_data *d, const char **why)
{
	const struct nvme_connect_cmd *c = &req->cmd.connect;
	struct nvmf_subsys *s;
	struct nvmf_ctrl *ctrl;
	uint32_t dw0 = 0;
	uint16_t sts;

	if (nvmf_nqn_field(d->subnqn, sizeof(d->subnqn)) <= 0) {
		*why = "subsystem NQN not terminated";
		return invalid_param(
			req, NVME_CONNECT_IATTR_DATA,
			offsetof(struct nvme_connect_data, subnqn));
	}
	if (nvmf_nqn_field(d->hostnqn, sizeof(d->hostnqn)) <= 0 ||
	    !nvmf_nqn_valid(d->hostnqn)) {
		*why = "invalid host NQN";
		return invalid_param(
			req, NVME_CONNECT_IATTR_DATA,
			offsetof(struct nvme_connect_data, hostnqn));
	}
	s = nvmf_subsys_find(q->tgt, d->subnqn);
	/* A subsystem not exported on this listener is unknown here, as
	 * nvmet refuses a subsystem not linked to the port. */
	if (!s || !nvmf_subsys_on_listener(s, q->listener) ||
	    !nvmf_queue_listener_current(q)) {
		*why = !s ? "unknown subsystem"
		       : !nvmf_queue_listener_current(q)
			       ? "listener removed"
			       : "subsystem not exported on this listener";
		return invalid_param(
			req, NVME_CONNECT_IATTR_DATA,
			offsetof(struct nvme_connect_data, subnqn));
	}
	if (q->qid == 0) {
		if (d->cntlid != NVME_CNTLID_DYNAMIC) {
			nvmf_stat_add(&s->n_refused_other, 1);
			*why = "static controller ID asked for";
			return invalid_param(
				req, NVME_CONNECT_IATTR_DATA,
				offsetof(struct nvme_connect_data, cntlid));
		}
		if (!nvmf_subsys_host_allowed(s, d->hostnqn)) {
			nvmf_stat_add(&s->n_refused_host, 1);
			*why = "host not allowed";
			req->rsp.result = NVME_CONNECT_IPO(
				NVME_CONNECT_IATTR_DATA,
				offsetof(struct nvme_connect_data, hostnqn));
			return nvmf_sts(NVME_SCT_CMD,
					NVME_SC_CONNECT_INVALID_HOST);
		}
		sts = nvmf_ctrl_create(q, s, d, c->kato, &ctrl);
		if (sts ==
		    nvmf_sts(NVME_SCT_CMD, NVME_SC_CONNECT_INVALID_HOST)) {
			/* removed from the allow-list meanwhile */
			nvmf_stat_add(&s->n_refused_host, 1);
			*why = "host not allowed";
			req->rsp.result = NVME_CONNECT_IPO(
				NVME_CONNECT_IATTR_DATA,
				offsetof(struct nvme_connect_data, hostnqn));
			return sts;
		}
		if (sts ==
		    nvmf_sts(NVME_SCT_CMD, NVME_SC_CONNECT_INVALID_PARAM)) {
			/* deleted or unexported meanwhile */
			*why = "unknown subsystem";
			return invalid_param(
				req, NVME_CONNECT_IATTR_DATA,
				offsetof(struct nvme_connect_data, subnqn));
		}
		if (sts) {
			nvmf_stat_add(&s->n_refused_other, 1);
			*why = "no controller (IDs or memory exhausted)";
			return sts;
		}
		nvmf_stat_add(&s->n_connects, 1);
		dw0 = ctrl->cntlid;
	} else {
		sts = nvmf_ctrl_attach_io(q, d, &dw0);
		req->rsp.result = dw0;
		if (sts)
			return sts;
	}
	/* The host must authenticate this queue before anything else
	 * (AUTHREQ.ATR), when it has a secret here. */
	if (q->ctrl->auth) {
		q->auth = malloc(sizeof(*q->auth));
		if (!q->auth) {
			/* Undo the create / join: no controller may keep a
			 * queue that is not live. */
			nvmf_ctrl_detach(q);
			*why = "no memory for authentication";
			return nvmf_sts_gen(NVME_SC_INTERNAL);
		}
		nvmf_auth_init(q->auth, &q->ctrl->auth_cfg, d->hostnqn,
			       d->subnqn);
		atomic_store(&q->auth_deadline_ms,
			     nvmf_now(q->tgt) + NVMF_AUTH_TIMEOUT_MS);
		dw0 |= NVME_CONNECT_AUTHREQ_ATR;
	}
	q->live = true;
	q->sq_size = (uint32_t)c->sqsize + 1;
	q->sqflow_off = c->cattr & NVME_CATTR_DISABLE_SQFLOW;
	req->rsp.result = dw0;
	return 0;
}

/* A printable copy of an NQN field: stops at its NUL, '?' for the rest. */
static void printable_field(char *dst, size_t dlen, const char *src,
			    size_t slen)
{
	size_t i;

	for (i = 0; i + 1 < dlen && i < slen && src[i]; i++)
		dst[i] = src[i] >= ' ' && src[i] <= '~' ? src[i] : '?';
	dst[i] = '\0';
}

/* Tell the binding how an admin queue's Connect ended. */
static void connect_audit(struct nvmf_queue *q,
			  const struct nvme_connect_data *d, uint16_t sts,
			  const char *why)
{
	struct nvmf_tgt *tgt = q->tgt;
	char host[NVME_NQN_FIELD], sub[NVME_NQN_FIELD], id[40];
	const uint8_t *u = d->hostid;
	struct nvmf_connect_audit a = {0};

	if (!tgt->ops.connect_audit)
		return;
	printable_field(host, sizeof(host), d->hostnqn, sizeof(d->hostnqn));
	printable_field(sub, sizeof(sub), d->subnqn, sizeof(d->subnqn));
	snprintf(id, sizeof(id),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
	a.hostnqn = host;
	a.hostid = id;
	a.subnqn = sub;
	a.status = sts;
	a.cntlid = !sts && q->ctrl ? q->ctrl->cntlid : 0;
	a.reason = sts ? (why ? why : "refused") : NULL;
	tgt->ops.connect_audit(q, &a, tgt->arg);
}

/* Connect data: checked, then the controller created or joined; the
 * admin queue's outcome goes to the binding's audit callback. */
static uint16_t connect_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	struct nvme_connect_data d;
	const char *why = NULL;
	uint16_t sts;

	memcpy(&d, req->data, sizeof(d));
	sts = connect_run(q, req, &d, &why);
	if (q->qid == 0)
		connect_audit(q, &d, sts, why);
	return sts;
}

/* Property Get: CAP (8 bytes), VS, CC, CSTS (4 bytes). */
static uint16_t prop_get(struct nvmf_queue *q, struct nvmf_req *req)
{
	const struct nvme_prop_cmd *p = &req->cmd.prop;
	struct nvmf_ctrl *c = q->ctrl;
	uint8_t size = p->attrib & 0x7;
	uint64_t val = 0;
	int rc;

	if (size > NVME_PROP_SIZE_8)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	pthread_mutex_lock(&c->lock);
	rc = nvmf_prop_get(&c->regs,
			   nvmf_cap(c->subsys->discovery ? NVMF_ADMIN_DEPTH
							 : q->tgt->io_depth),
			   p->ofst, size == NVME_PROP_SIZE_8, &val);
	pthread_mutex_unlock(&c->lock);
	if (rc)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	req->rsp.result = val;
	return 0;
}

/* Property Set: CC (4 bytes) and its effects. */
static uint16_t prop_set(struct nvmf_queue *q, struct nvmf_req *req)
{
	const struct nvme_prop_cmd *p = &req->cmd.prop;
	struct nvmf_ctrl *c = q->ctrl;
	struct nvmf_cc_effect eff;

	if ((p->attrib & 0x7) != NVME_PROP_SIZE_4 || p->ofst != NVME_PROP_CC)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	pthread_mutex_lock(&c->lock);
	nvmf_cc_write(&c->regs, (uint32_t)p->value, &eff);
	if (eff.enabled && c->state == NVMF_CTRL_LIVE)
		atomic_store(&c->io_ok, true);
	if (eff.reset) {
		atomic_store(&c->io_ok, false);
		nvmf_ctrl_kill_locked(c, true);
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Authentication Send / Receive: SECP and SPSP of DH-HMAC-CHAP, a
 * length the message fits (Send: TL bytes to fetch; Receive: AL bytes to
 * return, the message zero-padded). */
static uint16_t auth_prep(struct nvmf_queue *q, struct nvmf_req *req)
{
	const struct nvme_auth_cmd *c = (const void *)&req->cmd;

	if (!q->live)
		return nvmf_sts_gen(NVME_SC_CMD_SEQ_ERROR);
	if (!q->auth) /* the host has no secret here */
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	if (c->secp != NVME_AUTH_SECP || c->spsp0 != NVME_AUTH_SPSP0 ||
	    c->spsp1 != NVME_AUTH_SPSP1 || c->tl_al == 0 ||
	    c->tl_al > NVMF_AUTH_XFER_MAX)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	req->xfer = c->fctype == NVME_FCTYPE_AUTH_SEND ? NVMF_XFER_H2C
						       : NVMF_XFER_C2H;
	req->xfer_len = c->tl_al;
	return 0;
}

/* Run the message through the queue's transaction; close the queue when
 * the transaction failed (as nvmet ends the controller). */
static uint16_t auth_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	const struct nvme_auth_cmd *c = (const void *)&req->cmd;
	struct nvmf_tgt *tgt = q->tgt;
	enum nvmf_auth_state before = q->auth->state;
	size_t len = 0;
	uint16_t sts;

	if (c->fctype == NVME_FCTYPE_AUTH_SEND) {
		uint32_t s1;

		/* S1: the target's counter, never 0. */
		do
			s1 = (uint32_t)atomic_fetch_add(&tgt->auth_seq, 1) + 1;
		while (!s1);
		sts = nvmf_auth_send(q->auth, req->data, req->xfer_len, s1);
	} else {
		sts = nvmf_auth_recv(q->auth, req->data, req->xfer_len, &len);
		if (!sts)
			memset((uint8_t *)req->data + len, 0,
			       req->xfer_len - len);
	}
	/* The keep-alive scan may end the queue at its deadline at the same
	 * moment: whoever takes the deadline counts a first transaction's
	 * failure (a later one has no deadline). */
	if (q->auth->state == NVMF_AUTH_FAILED) {
		if (before != NVMF_AUTH_FAILED &&
		    (atomic_exchange(&q->auth_deadline_ms, 0) ||
		     q->auth->authenticated)) {
			nvmf_stat_add(&tgt->n_auth_failed, 1);
			if (q->ctrl)
				nvmf_stat_add(&q->ctrl->subsys->n_auth_failed,
					      1);
		}
		req->close_after = true;
	} else if (q->auth->state == NVMF_AUTH_DONE &&
		   before != NVMF_AUTH_DONE) {
		nvmf_stat_add(&tgt->n_auth_ok, 1);
		atomic_store(&q->auth_deadline_ms, 0);
	}
	return sts;
}

uint16_t nvmf_fabrics_prep(struct nvmf_queue *q, struct nvmf_req *req)
{
	switch (req->cmd.fabrics.fctype) {
	case NVME_FCTYPE_CONNECT:
		return connect_prep(q, req);
	case NVME_FCTYPE_PROP_GET:
	case NVME_FCTYPE_PROP_SET:
		if (!q->live)
			return nvmf_sts_gen(NVME_SC_CMD_SEQ_ERROR);
		if (q->qid)
			return nvmf_sts_gen(NVME_SC_INVALID_OPCODE);
		return 0;
	case NVME_FCTYPE_DISCONNECT:
		if (!q->live)
			return nvmf_sts_gen(NVME_SC_CMD_SEQ_ERROR);
		if (q->qid == 0)
			return nvmf_sts(NVME_SCT_CMD,
					NVME_SC_INVALID_QUEUE_TYPE);
		if (req->cmd.disconnect.recfmt != 0)
			return nvmf_sts(NVME_SCT_CMD,
					NVME_SC_CONNECT_INCOMPAT_FMT);
		return 0;
	case NVME_FCTYPE_AUTH_SEND:
	case NVME_FCTYPE_AUTH_RECV:
		return auth_prep(q, req);
	default:
		return nvmf_sts_gen(NVME_SC_INVALID_OPCODE);
	}
}

uint16_t nvmf_fabrics_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	switch (req->cmd.fabrics.fctype) {
	case NVME_FCTYPE_CONNECT:
		return connect_exec(q, req);
	case NVME_FCTYPE_PROP_GET:
		return prop_get(q, req);
	case NVME_FCTYPE_PROP_SET:
		return prop_set(q, req);
	case NVME_FCTYPE_DISCONNECT:
		req->close_after = true;
		return 0;
	case NVME_FCTYPE_AUTH_SEND:
	case NVME_FCTYPE_AUTH_RECV:
		return auth_exec(q, req);
	default:
		return nvmf_sts_gen(NVME_SC_INVALID_OPCODE);
	}
}
