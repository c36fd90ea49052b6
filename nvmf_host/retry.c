/*
 * nvmf_host/retry.c - the disposition of a user command at a loss
 * (retry.h).
 */
#include "nvmf_host/retry.h"

enum wnh_disp wnh_disposition(bool answered, uint16_t status, unsigned tries,
			      unsigned max_tries)
{
	if (answered)
		return (status & 0x7FF) ? WNH_DISP_NVME_ERROR
					: WNH_DISP_SUCCESS;
	return tries < max_tries ? WNH_DISP_RESEND : WNH_DISP_GIVE_UP;
}
