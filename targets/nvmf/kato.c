/*
 * targets/nvmf/kato.c - keep-alive timeout arithmetic (see kato.h).
 */
#include "targets/nvmf/kato.h"

uint32_t nvmf_kato_round(uint32_t kato_ms)
{
	uint64_t r;

	if (!kato_ms)
		return 0;
	r = ((uint64_t)kato_ms + NVMF_KATO_GRAIN_MS - 1) / NVMF_KATO_GRAIN_MS *
	    NVMF_KATO_GRAIN_MS;
	if (r > UINT32_MAX)
		r = UINT32_MAX / NVMF_KATO_GRAIN_MS * NVMF_KATO_GRAIN_MS;
	return (uint32_t)r;
}

bool nvmf_kato_expired(uint64_t last_ms, uint32_t kato_ms, uint64_t now_ms)
{
	if (!kato_ms || now_ms < last_ms)
		return false;
	return now_ms - last_ms >= (uint64_t)kato_ms * NVMF_KATO_GRACE_FACTOR;
}

uint64_t nvmf_kato_deadline(uint64_t last_ms, uint32_t kato_ms)
{
	uint64_t span = (uint64_t)kato_ms * NVMF_KATO_GRACE_FACTOR;

	if (!kato_ms || last_ms > UINT64_MAX - span)
		return UINT64_MAX;
	return last_ms + span;
}
