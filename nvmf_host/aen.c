/*
 * nvmf_host/aen.c - Asynchronous Event Requests as pure functions
 * (aen.h).
 */
#include "nvmf_host/aen.h"

#include <string.h>

#define OAES_FW_ACT (1u << 9)

unsigned wnh_aer_count(uint8_t aerl)
{
	unsigned n = (unsigned)aerl + 1;

	return n < WNH_AER_MAX ? n : WNH_AER_MAX;
}

uint32_t wnh_aec_value(uint32_t oaes)
{
	return oaes & (NVME_OAES_NS_ATTR | OAES_FW_ACT);
}

void wnh_aen_decode(uint32_t dw0, struct wnh_aen *out)
{
	out->type = (uint8_t)(dw0 & 0x7);
	out->info = (uint8_t)(dw0 >> 8);
	out->lid = (uint8_t)(dw0 >> 16);
}

uint32_t wnh_aen_log_len(uint8_t lid)
{
	switch (lid) {
	case NVME_LID_ERROR:
		return 64;
	case NVME_LID_SMART:
	case 0x03: /* Firmware Slot Information */
		return 512;
	case NVME_LID_CHANGED_NS:
		return NVME_CHANGED_NS_LOG_SIZE;
	default:
		return 0;
	}
}

enum wnh_aer_next wnh_aer_after(int status, const struct wnh_aen *ev)
{
	if (status)
		return WNH_AER_STOP;
	if (ev->type == NVME_AER_TYPE_ERROR &&
	    ev->info == WNH_AER_INFO_PERSIST_INT_ERR)
		return WNH_AER_RESET;
	return WNH_AER_REARM;
}

int wnh_changed_ns_count(const void *buf, uint32_t len)
{
	const uint8_t *p = buf;
	int n = 0;

	for (uint32_t off = 0; off + 4 <= len && n < NVME_CHANGED_NS_MAX;
	     off += 4) {
		uint32_t nsid;

		memcpy(&nsid, p + off, 4);
		if (off == 0 && nsid == NVME_CHANGED_NS_OVERFLOW)
			return -1;
		if (!nsid)
			break;
		n++;
	}
	return n;
}
