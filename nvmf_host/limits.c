/*
 * nvmf_host/limits.c - the NVM command set's size limits
 * (limits.h).
 */
#include "nvmf_host/limits.h"

#include <errno.h>
#include <stdbool.h>

void wnh_nvm_limits(const struct nvme_id_ctrl_nvm *id,
		    struct wharf_nvmf_host_info *in)
{
	in->wzsl = id ? id->wzsl : 0;
	in->dmrl = id ? id->dmrl : 0;
	in->dmrsl = id ? id->dmrsl : 0;
	in->dmsl = id ? id->dmsl : 0;
}

uint32_t wnh_wz_max_blocks(uint8_t wzsl, uint64_t cap, uint32_t block_size)
{
	unsigned shift = (unsigned)wzsl + 12 + (unsigned)(cap >> 48 & 0xF);
	uint64_t blocks;

	if (!wzsl || !block_size || shift >= 63)
		return WHARF_NVMF_HOST_WZ_MAX_BLOCKS;
	blocks = (1ull << shift) / block_size;
	if (blocks > WHARF_NVMF_HOST_WZ_MAX_BLOCKS)
		return WHARF_NVMF_HOST_WZ_MAX_BLOCKS;
	return blocks ? (uint32_t)blocks : 1;
}

int wnh_dsm_check_limits(const struct wharf_nvmf_host_info *in,
			 const struct wharf_nvmf_host_range *r, unsigned nr)
{
	uint64_t total = 0;

	if (in->dmrl && nr > in->dmrl)
		return -EINVAL;
	for (unsigned i = 0; i < nr; i++) {
		if (in->dmrsl && r[i].nlb > in->dmrsl)
			return -EINVAL;
		total += r[i].nlb;
	}
	return in->dmsl && total > in->dmsl ? -EINVAL : 0;
}

/* @now's limit is tighter than @was's (0 = no limit). */
static bool tighter(uint64_t was, uint64_t now)
{
	return now && (!was || now < was);
}

const char *wnh_limits_tighter(const struct wharf_nvmf_host_info *was,
			       const struct wharf_nvmf_host_info *now)
{
	const uint16_t optional = NVME_ONCS_WRITE_ZEROES | NVME_ONCS_DSM;

	if (was->oncs & optional & ~now->oncs)
		return "fewer optional commands (ONCS)";
	if (tighter(was->wzsl, now->wzsl))
		return "a smaller Write Zeroes limit (WZSL)";
	if (tighter(was->dmrl, now->dmrl) || tighter(was->dmrsl, now->dmrsl) ||
	    tighter(was->dmsl, now->dmsl))
		return "smaller Dataset Management limits (DMRL, DMRSL, DMSL)";
	return NULL;
}
