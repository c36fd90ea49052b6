/*
 * targets/nvmf/props.c - CAP / VS / CC / CSTS properties (see props.h).
 */
#include "targets/nvmf/props.h"

#include <errno.h>
#include <string.h>

#include "proto/nvme/spec_data.h"

uint64_t nvmf_cap(uint32_t max_entries)
{
	if (max_entries < 2 || max_entries > 65536)
		return 0;
	return NVME_CAP_MQES(max_entries - 1) | NVME_CAP_CQR | NVME_CAP_TO(1) |
	       NVME_CAP_CSS_NVM;
}

int nvmf_prop_get(const struct nvmf_regs *regs, uint64_t cap, uint32_t ofst,
		  bool size8, uint64_t *val)
{
	if (size8) {
		if (ofst != NVME_PROP_CAP)
			return -EINVAL;
		*val = cap;
		return 0;
	}
	switch (ofst) {
	case NVME_PROP_VS:
		*val = NVME_VS_1_3;
		return 0;
	case NVME_PROP_CC:
		*val = regs->cc;
		return 0;
	case NVME_PROP_CSTS:
		*val = regs->csts;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Whether an enabling CC value asks for what CAP offers. */
static bool cc_valid(uint32_t cc)
{
	return NVME_CC_CSS(cc) == 0 && NVME_CC_MPS(cc) == 0 &&
	       NVME_CC_AMS(cc) == 0 && NVME_CC_IOSQES(cc) == 6 &&
	       NVME_CC_IOCQES(cc) == 4;
}

void nvmf_cc_write(struct nvmf_regs *regs, uint32_t val,
		   struct nvmf_cc_effect *eff)
{
	uint32_t old = regs->cc;

	memset(eff, 0, sizeof(*eff));
	val &= NVME_CC_WRITABLE_MASK;
	regs->cc = val;
	if (!(old & NVME_CC_EN) && (val & NVME_CC_EN)) {
		if (cc_valid(val)) {
			regs->csts |= NVME_CSTS_RDY;
			eff->enabled = true;
		} else {
			regs->csts |= NVME_CSTS_CFS;
			eff->failed = true;
		}
	} else if ((old & NVME_CC_EN) && !(val & NVME_CC_EN)) {
		regs->csts = 0;
		eff->reset = true;
	}
	if (NVME_CC_SHN(val))
		regs->csts = (regs->csts & ~NVME_CSTS_SHST_MASK) |
			     NVME_CSTS_SHST_CMPLT;
	else
		regs->csts &= ~NVME_CSTS_SHST_MASK;
}
