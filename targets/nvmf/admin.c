/*
 * targets/nvmf/admin.c - the admin command set of a fabrics controller.
 *
 * Admin commands other than Fabrics ones need an enabled controller
 * (CC.EN = 1 and CSTS.RDY = 1), else Command Sequence Error. An NVM
 * controller serves Identify, Get Log Page, Set / Get Features, Keep
 * Alive, Asynchronous Event Request and Abort; a discovery controller
 * serves Identify (controller), Get Log Page (discovery, error), Set /
 * Get Features, Keep Alive and Asynchronous Event Request. Everything else
 * (queue creation and deletion, which fabrics does through Connect,
 * namespace management, firmware, format, security, ...) is Invalid
 * Opcode.
 */
#include "targets/nvmf/internal.h"

uint16_t nvmf_admin_prep(struct nvmf_queue *q, struct nvmf_req *req)
{
	bool disc = q->ctrl->subsys->discovery;

	if (!atomic_load(&q->ctrl->io_ok))
		return nvmf_sts_gen(NVME_SC_CMD_SEQ_ERROR);
	switch (req->cmd.common.opc) {
	case NVME_ADM_IDENTIFY:
		return nvmf_identify_prep(q, req);
	case NVME_ADM_GET_LOG_PAGE:
		return nvmf_log_prep(q, req);
	case NVME_ADM_ABORT:
		if (disc)
			break;
		/* fall through */
	case NVME_ADM_SET_FEATURES:
	case NVME_ADM_GET_FEATURES:
	case NVME_ADM_KEEP_ALIVE:
	case NVME_ADM_ASYNC_EVENT:
		return 0;
	default:
		break;
	}
	return nvmf_sts_gen(NVME_SC_INVALID_OPCODE);
}

/* Keep Alive: the timer restarts as for every admin command (queue.c). */
static uint16_t keep_alive(struct nvmf_queue *q)
{
	(void)q;
	return 0;
}

uint16_t nvmf_admin_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	switch (req->cmd.common.opc) {
	case NVME_ADM_IDENTIFY:
		return nvmf_identify_exec(q, req);
	case NVME_ADM_GET_LOG_PAGE:
		return nvmf_log_exec(q, req);
	case NVME_ADM_SET_FEATURES:
	case NVME_ADM_GET_FEATURES:
		return nvmf_features_exec(q, req);
	case NVME_ADM_KEEP_ALIVE:
		return keep_alive(q);
	case NVME_ADM_ASYNC_EVENT:
		return nvmf_aer_exec(q, req);
	case NVME_ADM_ABORT:
		return nvmf_abort_exec(q, req);
	default:
		return nvmf_sts_gen(NVME_SC_INVALID_OPCODE);
	}
}
