/*
 * targets/nvmf/features.c - Set / Get Features: Number of Queues (07h),
 * Asynchronous Event Configuration (0Bh) and Keep Alive Timer (0Fh).
 * A discovery controller has no I/O queues: Number of Queues is Invalid
 * Field there. Other feature IDs are Invalid Field.
 *
 *  - Number of Queues: NSQR / NCQR (0's based) in CDW11; FFFFh is Invalid
 *    Field; once an I/O queue has connected the count is fixed (Command
 *    Sequence Error). The allocation is min(requested, io-queues - 1) for
 *    each, reported in DW0 (NCQA 31:16, NSQA 15:0); I/O Connects above it
 *    are refused.
 *  - Asynchronous Event Configuration: the bits the controller can raise
 *    are kept (namespace attribute notices on NVM controllers; discovery
 *    log change notices, bit 31, on discovery controllers, which this
 *    target never raises since its configuration is static).
 *  - Keep Alive Timer: KATO in ms (CDW11), rounded up to the KAS
 *    granularity; setting it restarts the timer; 0 disables it.
 * Saving (Set Features SV) is Feature Identifier Not Saveable. Get
 * Features SEL: current, default (the value at Connect), saved (= default)
 * and supported capabilities (changeable, not saveable, not per
 * namespace).
 */
#include "targets/nvmf/internal.h"
#include "targets/nvmf/kato.h"

#define AEC_DISC_LOG_CHANGE (1u << 31)

/* The asynchronous event configuration bits @c may raise. */
static uint32_t aec_supported(const struct nvmf_ctrl *c)
{
	return c->subsys->discovery ? AEC_DISC_LOG_CHANGE : NVME_OAES_NS_ATTR;
}

/* Set Features of @fid; DW0 in *@dw0. Controller lock held. */
static uint16_t set_feature(struct nvmf_queue *q, uint8_t fid, uint32_t dw11,
			    uint32_t *dw0)
{
	struct nvmf_ctrl *c = q->ctrl;
	uint16_t nsqr = (uint16_t)(dw11 & 0xFFFF),
		 ncqr = (uint16_t)(dw11 >> 16);
	uint16_t max = c->max_qid ? (uint16_t)(c->max_qid - 1) : 0;

	switch (fid) {
	case NVME_FEAT_NUM_QUEUES:
		if (c->subsys->discovery || nsqr == 0xFFFF || ncqr == 0xFFFF)
			return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
		if (c->io_connected)
			return nvmf_sts_gen(NVME_SC_CMD_SEQ_ERROR);
		c->nsqa = nsqr < max ? nsqr : max;
		c->ncqa = ncqr < max ? ncqr : max;
		*dw0 = (uint32_t)c->ncqa << 16 | c->nsqa;
		return 0;
	case NVME_FEAT_ASYNC_EVENT:
		c->aec = dw11 & aec_supported(c);
		return 0;
	case NVME_FEAT_KATO:
		c->kato_ms = nvmf_kato_round(dw11);
		atomic_store(&c->ka_last_ms, nvmf_now(q->tgt));
		return 0;
	default:
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	}
}

/* Get Features of @fid with select @sel. Controller lock held. */
static uint16_t get_feature(struct nvmf_queue *q, uint8_t fid, uint8_t sel,
			    uint32_t *dw0)
{
	struct nvmf_ctrl *c = q->ctrl;
	bool dflt = sel == NVME_FEAT_SEL_DEFAULT || sel == NVME_FEAT_SEL_SAVED;
	uint16_t max = c->max_qid ? (uint16_t)(c->max_qid - 1) : 0;

	if (sel > NVME_FEAT_SEL_CAPS)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	if (fid == NVME_FEAT_NUM_QUEUES && c->subsys->discovery)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	if (sel == NVME_FEAT_SEL_CAPS &&
	    (fid == NVME_FEAT_NUM_QUEUES || fid == NVME_FEAT_ASYNC_EVENT ||
	     fid == NVME_FEAT_KATO)) {
		*dw0 = NVME_FEAT_CAP_CHANGEABLE;
		return 0;
	}
	switch (fid) {
	case NVME_FEAT_NUM_QUEUES:
		*dw0 = dflt ? (uint32_t)max << 16 | max
			    : (uint32_t)c->ncqa << 16 | c->nsqa;
		return 0;
	case NVME_FEAT_ASYNC_EVENT:
		*dw0 = dflt ? 0 : c->aec;
		return 0;
	case NVME_FEAT_KATO:
		*dw0 = dflt ? nvmf_kato_round(c->kato_connect) : c->kato_ms;
		return 0;
	default:
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	}
}

uint16_t nvmf_features_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	const struct nvme_sqe *cmd = &req->cmd.common;
	uint8_t fid = (uint8_t)(cmd->cdw10 & 0xFF);
	uint32_t dw0 = 0;
	uint16_t sts;

	pthread_mutex_lock(&q->ctrl->lock);
	if (cmd->opc == NVME_ADM_SET_FEATURES) {
		if (cmd->cdw10 & NVME_FEAT_SAVE)
			sts = nvmf_sts(NVME_SCT_CMD, NVME_SC_FEAT_NOT_SAVEABLE);
		else
			sts = set_feature(q, fid, cmd->cdw11, &dw0);
	} else {
		sts = get_feature(q, fid, (uint8_t)NVME_FEAT_SEL(cmd->cdw10),
				  &dw0);
	}
	pthread_mutex_unlock(&q->ctrl->lock);
	req->rsp.result = dw0;
	return sts;
}
