/*
 * targets/nvmf/aer.c - Asynchronous Event Request and Abort.
 *
 * An AER completes at once when a notice is pending (a namespace changed
 * while none was outstanding), else it is parked on the controller (at
 * most AERL + 1 = 4; one more is Asynchronous Event Request Limit
 * Exceeded) until an event: ops->held_ready then hands it back to the
 * binding with DW0 = type / info / log page. After a notice, further
 * notices of that type stay masked until the host reads the Changed
 * Namespace List with RAE clear (logpage.c).
 *
 * Abort (CDW10: SQID 15:0, CID 31:16) can only catch a parked AER: other
 * commands either run to completion at once, or are with the backend
 * (a file or device), which cannot take an operation back. The aborted AER
 * completes with Command Abort Requested and Abort's DW0 bit 0 is 0;
 * otherwise DW0 bit 0 is 1 ("not aborted"), which the specification
 * allows for any command.
 */
#include "targets/nvmf/internal.h"

void nvmf_aer_unlink_locked(struct nvmf_ctrl *c, struct nvmf_req *req)
{
	for (struct nvmf_req **pp = &c->aer_head; *pp; pp = &(*pp)->next) {
		if (*pp != req)
			continue;
		*pp = req->next;
		req->next = NULL;
		c->naer--;
		nvmf_stat_add(&c->tgt->n_held, -1);
		return;
	}
}

uint16_t nvmf_aer_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	struct nvmf_ctrl *c = q->ctrl;
	struct nvmf_req **pp;
	uint16_t sts = 0;

	pthread_mutex_lock(&c->lock);
	if (c->ns_notice_pending) {
		c->ns_notice_pending = false;
		req->rsp.result = NVME_AER_DW0(NVME_AER_TYPE_NOTICE,
					       NVME_AER_INFO_NS_CHANGED,
					       NVME_LID_CHANGED_NS);
	} else if (c->naer > NVMF_AERL) {
		sts = nvmf_sts(NVME_SCT_CMD, NVME_SC_AER_LIMIT);
	} else {
		for (pp = &c->aer_head; *pp; pp = &(*pp)->next)
			;
		req->next = NULL;
		*pp = req;
		c->naer++;
		req->held = true;
		req->state = NVMF_REQ_HELD;
		nvmf_stat_add(&q->tgt->n_held, 1);
	}
	pthread_mutex_unlock(&c->lock);
	return sts;
}

uint16_t nvmf_abort_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	struct nvmf_ctrl *c = q->ctrl;
	uint16_t sqid = (uint16_t)(req->cmd.common.cdw10 & 0xFFFF);
	uint16_t cid = (uint16_t)(req->cmd.common.cdw10 >> 16);
	struct nvmf_req *victim = NULL;

	req->rsp.result = 1; /* not aborted */
	if (sqid != 0)
		return 0;
	pthread_mutex_lock(&c->lock);
	for (struct nvmf_req *r = c->aer_head; r; r = r->next)
		if (r->cmd.common.cid == cid)
			victim = r;
	if (victim) {
		nvmf_aer_unlink_locked(c, victim);
		victim->held_status = nvmf_sts_gen(NVME_SC_ABORT_REQ);
		victim->rsp.result = 0;
		victim->state = NVMF_REQ_READY;
		q->tgt->ops.held_ready(q, victim, q->tgt->arg);
		req->rsp.result = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}
