/*
 * nvmf_host/limits.h - the NVM command set's size limits (I/O
 * Command Set specific Identify Controller, CNS 06h) as pure functions:
 * reading them, and checking Write Zeroes and Dataset Management against
 * them.  Unit-tested on their own.
 */
#ifndef WHARF_INITIATORS_NVMF_LIMITS_H
#define WHARF_INITIATORS_NVMF_LIMITS_H

#include <stdint.h>

#include "proto/nvme/spec_data.h"
#include <wharf/nvmf_host.h>

#ifdef __cplusplus
extern "C" {
#endif

/* @in's wzsl, dmrl, dmrsl and dmsl from @id (NULL: the controller failed
 * the Identify: no limits, all 0). */
void wnh_nvm_limits(const struct nvme_id_ctrl_nvm *id,
		    struct wharf_nvmf_host_info *in);

/* The most blocks of one Write Zeroes on a namespace of @block_size
 * bytes: WHARF_NVMF_HOST_WZ_MAX_BLOCKS, lowered to WZSL (2^@wzsl pages
 * of 2^(12 + CAP.MPSMIN) bytes, @cap the CAP property) when it is set;
 * at least 1. */
uint32_t wnh_wz_max_blocks(uint8_t wzsl, uint64_t cap, uint32_t block_size);

/* 0 when @nr (>= 1) ranges fit DMRL, DMRSL and DMSL of @in (0 = no
 * limit); -EINVAL otherwise. */
int wnh_dsm_check_limits(const struct wharf_nvmf_host_info *in,
			 const struct wharf_nvmf_host_range *r, unsigned nr);

/* A reconnect: why the controller found now (@now) cannot take the
 * commands the application was allowed by the one before (@was): an
 * optional command (ONCS Write Zeroes, DSM) gone, or a Write Zeroes or
 * Dataset Management limit tighter (0 = no limit); NULL when none.  The
 * submission path reads these values without a lock, so they are never
 * changed under it: a tighter controller fails the attempt instead. */
const char *wnh_limits_tighter(const struct wharf_nvmf_host_info *was,
			       const struct wharf_nvmf_host_info *now);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NVMF_LIMITS_H */
