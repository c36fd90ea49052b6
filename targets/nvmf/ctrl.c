/*
 * targets/nvmf/ctrl.c - controllers: creation by an admin Connect, I/O
 * queue association by controller ID, teardown, the error log and
 * namespace change events.
 *
 * Life cycle: the admin Connect creates the controller (LIVE, one
 * reference). Each I/O Connect adds a reference. Destroying the admin
 * queue, or a keep-alive expiry, makes it DYING (no new queues; I/O
 * queues killed through ops->kill). The last queue destroyed frees it and
 * its controller ID.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "targets/nvmf/internal.h"
#include "targets/nvmf/kato.h"

/* Whether controller ID @id is taken. tgt->lock held. */
static bool cntlid_test(const struct nvmf_tgt *t, uint16_t id)
{
	return t->cntlid_used[id / 64] >> (id % 64) & 1;
}

/* Mark controller ID @id taken or free. tgt->lock held. */
static void cntlid_set(struct nvmf_tgt *t, uint16_t id, bool on)
{
	if (on)
		t->cntlid_used[id / 64] |= 1ull << (id % 64);
	else
		t->cntlid_used[id / 64] &= ~(1ull << (id % 64));
}

/* Next free ID after the last one handed out (IDs are not reused soon). */
static uint16_t cntlid_alloc(struct nvmf_tgt *t)
{
	uint32_t span = NVME_CNTLID_MAX - NVME_CNTLID_MIN + 1;

	for (uint32_t i = 0; i < span; i++) {
		uint16_t id = t->next_cntlid;

		t->next_cntlid = id == NVME_CNTLID_MAX ? NVME_CNTLID_MIN
						       : (uint16_t)(id + 1);
		if (!cntlid_test(t, id)) {
			cntlid_set(t, id, true);
			return id;
		}
	}
	return 0;
}

uint16_t nvmf_ctrl_create(struct nvmf_queue *admin, struct nvmf_subsys *s,
			  const struct nvme_connect_data *d, uint32_t kato_ms,
			  struct nvmf_ctrl **out)
{
	struct nvmf_tgt *tgt = admin->tgt;
	struct nvmf_ctrl *c = calloc(1, sizeof(*c));
	uint16_t max_qid = s->discovery ? 0 : tgt->max_qid;

	if (!c)
		return nvmf_sts(NVME_SCT_CMD, NVME_SC_CONNECT_CTRL_BUSY);
	c->queues = calloc((size_t)max_qid + 1, sizeof(*c->queues));
	if (!c->queues) {
		free(c);
		return nvmf_sts(NVME_SCT_CMD, NVME_SC_CONNECT_CTRL_BUSY);
	}
	pthread_mutex_init(&c->lock, NULL);
	c->tgt = tgt;
	c->subsys = s;
	memcpy(c->hostnqn, d->hostnqn, sizeof(c->hostnqn));
	memcpy(c->hostid, d->hostid, sizeof(c->hostid));
	c->max_qid = max_qid;
	c->nsqa = c->ncqa = max_qid ? (uint16_t)(max_qid - 1) : 0;
	c->kato_connect = kato_ms;
	c->kato_ms = nvmf_kato_round(kato_ms);
	atomic_init(&c->io_ok, false);
	atomic_init(&c->ka_last_ms, nvmf_now(tgt));
	c->queues[0] = admin;
	c->refs = 1;

	pthread_mutex_lock(&tgt->lock);
	/* The allow-list may have lost the host, the subsystem been deleted
	 * or taken off the queue's listener since Connect checked (mgmt.c,
	 * mgmt_subsys.c, mgmt_ports.c): none gets a controller. */
	if (s->deleted || !nvmf_subsys_on_listener(s, admin->listener) ||
	    !nvmf_queue_listener_current(admin) ||
	    !nvmf_subsys_host_allowed_locked(s, d->hostnqn)) {
		bool gone = s->deleted ||
			    !nvmf_subsys_on_listener(s, admin->listener) ||
			    !nvmf_queue_listener_current(admin);

		pthread_mutex_unlock(&tgt->lock);
		pthread_mutex_destroy(&c->lock);
		free(c->queues);
		free(c);
		return gone ? nvmf_sts(NVME_SCT_CMD,
				       NVME_SC_CONNECT_INVALID_PARAM)
			    : nvmf_sts(NVME_SCT_CMD,
				       NVME_SC_CONNECT_INVALID_HOST);
	}
	/* The secrets as they are now: each queue of this controller
	 * authenticates with them. */
	{
		const struct nvmf_auth_cfg *a =
			nvmf_subsys_host_auth_locked(s, d->hostnqn);

		if (a && !s->discovery) {
			c->auth = true;
			c->auth_cfg = *a;
		}
	}
	c->cntlid = cntlid_alloc(tgt);
	if (c->cntlid) {
		c->next = tgt->ctrls;
		tgt->ctrls = c;
	}
	pthread_mutex_unlock(&tgt->lock);
	if (!c->cntlid) {
		OPENSSL_cleanse(&c->auth_cfg, sizeof(c->auth_cfg));
		pthread_mutex_destroy(&c->lock);
		free(c->queues);
		free(c);
		return nvmf_sts(NVME_SCT_CMD, NVME_SC_CONNECT_CTRL_BUSY);
	}
	nvmf_stat_add(&tgt->n_ctrls, 1);
	nvmf_stat_add(&tgt->n_ctrls_created, 1);
	admin->ctrl = c;
	*out = c;
	return 0;
}

/* Connect Invalid Parameters with IATTR / IPO in DW0. */
static uint16_t invalid_param(uint32_t *dw0, uint8_t iattr, uint16_t ipo)
{
	*dw0 = NVME_CONNECT_IPO(iattr, ipo);
	return nvmf_sts(NVME_SCT_CMD, NVME_SC_CONNECT_INVALID_PARAM);
}

/* Checks of an I/O Connect against its controller. Both locks held. */
static uint16_t io_check(struct nvmf_queue *q, struct nvmf_ctrl *c,
			 const struct nvme_connect_data *d, uint32_t *dw0)
{
	if (strncmp(c->subsys->nqn, d->subnqn, NVME_NQN_FIELD))
		return invalid_param(
			dw0, NVME_CONNECT_IATTR_DATA,
			offsetof(struct nvme_connect_data, subnqn));
	if (strncmp(c->hostnqn, d->hostnqn, NVME_NQN_FIELD))
		return invalid_param(
			dw0, NVME_CONNECT_IATTR_DATA,
			offsetof(struct nvme_connect_data, hostnqn));
	if (memcmp(c->hostid, d->hostid, NVME_HOSTID_LEN))
		return invalid_param(
			dw0, NVME_CONNECT_IATTR_DATA,
			offsetof(struct nvme_connect_data, hostid));
	if (c->subsys->discovery || q->qid > c->max_qid)
		return invalid_param(dw0, NVME_CONNECT_IATTR_CMD,
				     NVME_IPO_CMD_QID);
	if (!(c->regs.cc & NVME_CC_EN) || !(c->regs.csts & NVME_CSTS_RDY))
		return nvmf_sts_gen(NVME_SC_CMD_SEQ_ERROR);
	if (q->qid > (uint32_t)c->nsqa + 1 || q->qid > (uint32_t)c->ncqa + 1)
		return invalid_param(dw0, NVME_CONNECT_IATTR_CMD,
				     NVME_IPO_CMD_QID);
	if (c->queues[q->qid])
		return nvmf_sts(NVME_SCT_CMD, NVME_SC_CONNECT_CTRL_BUSY);
	return 0;
}

uint16_t nvmf_ctrl_attach_io(struct nvmf_queue *q,
			     const struct nvme_connect_data *d, uint32_t *dw0)
{
	struct nvmf_tgt *tgt = q->tgt;
	struct nvmf_ctrl *c;
	uint16_t sts;

	pthread_mutex_lock(&tgt->lock);
	for (c = tgt->ctrls; c; c = c->next)
		if (c->cntlid == d->cntlid && c->state == NVMF_CTRL_LIVE)
			break;
	if (!c) {
		pthread_mutex_unlock(&tgt->lock);
		return invalid_param(
			dw0, NVME_CONNECT_IATTR_DATA,
			offsetof(struct nvme_connect_data, cntlid));
	}
	pthread_mutex_lock(&c->lock);
	sts = io_check(q, c, d, dw0);
	if (!sts) {
		c->queues[q->qid] = q;
		c->io_connected = true;
		c->refs++;
		q->ctrl = c;
		*dw0 = c->cntlid;
	}
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&tgt->lock);
	return sts;
}

void nvmf_ctrl_kill_locked(struct nvmf_ctrl *c, bool io_only)
{
	for (uint32_t qid = io_only ? 1 : 0; qid <= c->max_qid; qid++)
		if (c->queues[qid])
			nvmf_queue_kill_locked(c->queues[qid]);
}

void nvmf_ctrl_revoke_locked(struct nvmf_ctrl *c)
{
	pthread_mutex_lock(&c->lock);
	c->state = NVMF_CTRL_DYING;
	atomic_store(&c->io_ok, false);
	nvmf_ctrl_kill_locked(c, false);
	pthread_mutex_unlock(&c->lock);
}

/* Free a controller with no queue left. tgt->lock held. */
static void ctrl_free(struct nvmf_ctrl *c)
{
	OPENSSL_cleanse(&c->auth_cfg, sizeof(c->auth_cfg));
	pthread_mutex_destroy(&c->lock);
	free(c->queues);
	free(c);
}

void nvmf_ctrl_detach(struct nvmf_queue *q)
{
	struct nvmf_ctrl *c = q->ctrl, **pp;
	struct nvmf_tgt *tgt = q->tgt;

	pthread_mutex_lock(&tgt->lock);
	pthread_mutex_lock(&c->lock);
	if (q->qid == 0) {
		/* The association ends with the admin queue. */
		c->state = NVMF_CTRL_DYING;
		atomic_store(&c->io_ok, false);
		nvmf_stat_add(&tgt->n_held, -(int64_t)c->naer);
		c->aer_head = NULL;
		c->naer = 0;
		nvmf_ctrl_kill_locked(c, true);
	} else {
		c->retired[0] += atomic_load(&q->io.read_cmds);
		c->retired[1] += atomic_load(&q->io.write_cmds);
		c->retired[2] += atomic_load(&q->io.read_bytes);
		c->retired[3] += atomic_load(&q->io.write_bytes);
	}
	nvmf_stat_add(&c->subsys->n_cmds_gone,
		      (int64_t)atomic_load(&q->n_cmds));
	nvmf_stat_add(&c->subsys->n_errors_gone,
		      (int64_t)atomic_load(&q->n_errors));
	c->queues[q->qid] = NULL;
	pthread_mutex_unlock(&c->lock);
	q->ctrl = NULL;
	if (--c->refs == 0) {
		for (pp = &tgt->ctrls; *pp != c; pp = &(*pp)->next)
			;
		*pp = c->next;
		cntlid_set(tgt, c->cntlid, false);
		nvmf_stat_add(&tgt->n_ctrls, -1);
		ctrl_free(c);
	}
	pthread_mutex_unlock(&tgt->lock);
}

void nvmf_ctrl_log_error(struct nvmf_ctrl *c, const struct nvmf_req *req,
			 uint16_t qid, uint16_t status)
{
	struct nvme_error_log *e;

	pthread_mutex_lock(&c->lock);
	e = &c->errlog[c->err_count % NVMF_ERRLOG_N];
	c->err_count++;
	memset(e, 0, sizeof(*e));
	e->error_count = c->err_count;
	e->sqid = qid;
	e->cid = req->cmd.common.cid;
	e->status = (uint16_t)(status << 1);
	e->param_loc = 0xFFFF;
	if (req->cmd.common.opc != NVME_OPC_FABRICS)
		e->nsid = req->cmd.common.nsid;
	e->trtype = NVME_TRTYPE_RDMA;
	pthread_mutex_unlock(&c->lock);
}

/* Complete the oldest held AER with @dw0. Lock held. */
static bool aer_fire_locked(struct nvmf_ctrl *c, uint32_t dw0)
{
	struct nvmf_req *req = c->aer_head;

	if (!req || !c->queues[0])
		return false;
	c->aer_head = req->next;
	c->naer--;
	req->next = NULL;
	req->rsp.result = dw0;
	req->held_status = 0;
	req->state = NVMF_REQ_READY;
	nvmf_stat_add(&c->tgt->n_held, -1);
	c->tgt->ops.held_ready(c->queues[0], req, c->tgt->arg);
	return true;
}

void nvmf_ctrl_ns_changed_locked(struct nvmf_ctrl *c, uint32_t nsid)
{
	bool known = false;

	for (unsigned int i = 0; i < c->nchanged; i++)
		known |= c->changed[i] == nsid;
	if (!known) {
		if (c->nchanged < NVME_CHANGED_NS_MAX)
			c->changed[c->nchanged++] = nsid;
		else
			c->changed_overflow = true;
	}
	if (!(c->aec & NVME_OAES_NS_ATTR) || c->ns_notice_masked)
		return;
	c->ns_notice_masked = true;
	if (!aer_fire_locked(c, NVME_AER_DW0(NVME_AER_TYPE_NOTICE,
					     NVME_AER_INFO_NS_CHANGED,
					     NVME_LID_CHANGED_NS)))
		c->ns_notice_pending = true;
}

void nvmf_ctrl_io_totals(struct nvmf_ctrl *c, uint64_t out[4])
{
	pthread_mutex_lock(&c->lock);
	memcpy(out, c->retired, sizeof(c->retired));
	for (uint32_t qid = 1; qid <= c->max_qid; qid++) {
		struct nvmf_queue *q = c->queues[qid];

		if (!q)
			continue;
		out[0] += atomic_load_explicit(&q->io.read_cmds,
					       memory_order_relaxed);
		out[1] += atomic_load_explicit(&q->io.write_cmds,
					       memory_order_relaxed);
		out[2] += atomic_load_explicit(&q->io.read_bytes,
					       memory_order_relaxed);
		out[3] += atomic_load_explicit(&q->io.write_bytes,
					       memory_order_relaxed);
	}
	pthread_mutex_unlock(&c->lock);
}
