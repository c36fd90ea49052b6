/*
 * cm/rej_busy.c - busy REJ payload codec and retry backoff (format and
 * rules in rej_busy.h).
 */
#include "cm/rej_busy.h"

#include <errno.h>
#include <string.h>

enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 4,
	OFF_HDR_LEN = 5,
	OFF_REASON = 6,
	OFF_FLAGS = 7,
	OFF_RETRY_AFTER = 8,
	OFF_LOAD = 12,
	OFF_CHECK = 14,
};

static const uint8_t magic[4] = {WCM_BUSY_MAGIC0, WCM_BUSY_MAGIC1,
				 WCM_BUSY_MAGIC2, WCM_BUSY_MAGIC3};

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return ((uint32_t)get_be16(p) << 16) | get_be16(p + 2);
}

/* Fletcher-16 of @p[0..len), with the check field read as zero. */
static uint16_t busy_check(const uint8_t *p, size_t len)
{
	uint32_t sum1 = 0, sum2 = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		uint8_t b = (i == OFF_CHECK || i == OFF_CHECK + 1) ? 0 : p[i];

		sum1 = (sum1 + b) % 255;
		sum2 = (sum2 + sum1) % 255;
	}
	return (uint16_t)((sum2 << 8) | sum1);
}

int wcm_rej_busy_encode(const struct wcm_rej_busy *msg, void *buf,
			size_t buf_len, size_t *out_len)
{
	uint8_t *p = buf;

	if (!msg || !buf || buf_len < WCM_BUSY_LEN || msg->reason == 0 ||
	    msg->reason > WCM_BUSY_REASON_MAX ||
	    msg->retry_after_ms > WCM_BUSY_RETRY_AFTER_MAX ||
	    msg->load_permille > WCM_BUSY_LOAD_MAX)
		return -EINVAL;
	memcpy(p + OFF_MAGIC, magic, sizeof(magic));
	p[OFF_VERSION] = WCM_BUSY_VERSION;
	p[OFF_HDR_LEN] = WCM_BUSY_LEN;
	p[OFF_REASON] = msg->reason;
	p[OFF_FLAGS] = 0;
	put_be32(p + OFF_RETRY_AFTER, msg->retry_after_ms);
	put_be16(p + OFF_LOAD, msg->load_permille);
	put_be16(p + OFF_CHECK, busy_check(p, WCM_BUSY_LEN));
	if (out_len)
		*out_len = WCM_BUSY_LEN;
	return 0;
}

int wcm_rej_busy_decode(const void *data, size_t len, struct wcm_rej_busy *out)
{
	const uint8_t *p = data;
	struct wcm_rej_busy res;
	uint8_t hdr_len;

	if (!p || len < sizeof(magic) || memcmp(p, magic, sizeof(magic)))
		return -ENOMSG;
	if (len < WCM_BUSY_LEN)
		return -EPROTO;
	hdr_len = p[OFF_HDR_LEN];
	if (p[OFF_VERSION] == 0 || hdr_len < WCM_BUSY_LEN || hdr_len > len)
		return -EPROTO;
	if (get_be16(p + OFF_CHECK) != busy_check(p, hdr_len))
		return -EPROTO;
	res.version = p[OFF_VERSION];
	res.reason = p[OFF_REASON];
	res.retry_after_ms = get_be32(p + OFF_RETRY_AFTER);
	res.load_permille = get_be16(p + OFF_LOAD);
	if (res.reason == 0 || res.retry_after_ms > WCM_BUSY_RETRY_AFTER_MAX ||
	    res.load_permille > WCM_BUSY_LOAD_MAX)
		return -EPROTO;
	if (res.version == WCM_BUSY_VERSION &&
	    (res.reason > WCM_BUSY_REASON_MAX || p[OFF_FLAGS] != 0))
		return -EPROTO;
	if (out)
		*out = res;
	return 0;
}

void wcm_retry_policy_stale_default(struct wcm_retry_policy *p)
{
	p->max_attempts = 5;
	p->base_ms = 10;
	p->cap_ms = 1000;
}

void wcm_retry_policy_busy_default(struct wcm_retry_policy *p)
{
	p->max_attempts = 8;
	p->base_ms = 50;
	p->cap_ms = 30 * 1000;
}

uint32_t wcm_backoff_ms(uint32_t hint_ms, uint32_t attempt, uint32_t rnd,
			uint32_t cap_ms)
{
	uint64_t h, hi;

	if (!cap_ms)
		cap_ms = 1;
	h = hint_ms ? hint_ms : 1;
	if (h > cap_ms)
		h = cap_ms;
	/* h * 2^(attempt + 1), saturating at the cap (h < 2^32, shift < 32). */
	hi = attempt >= 31 ? cap_ms : h << (attempt + 1);
	if (hi > cap_ms)
		hi = cap_ms;
	return (uint32_t)(h + rnd % (hi - h + 1));
}

static int retry_next(const struct wcm_retry_policy *p, uint32_t hint_ms,
		      uint32_t attempt, uint32_t rnd, uint32_t *delay_ms)
{
	if (attempt >= p->max_attempts)
		return -ECONNREFUSED;
	if (hint_ms < p->base_ms)
		hint_ms = p->base_ms;
	*delay_ms = wcm_backoff_ms(hint_ms, attempt, rnd, p->cap_ms);
	return 0;
}

int wcm_retry_busy(const struct wcm_retry_policy *p,
		   const struct wcm_rej_busy *busy, uint32_t attempt,
		   uint32_t rnd, uint32_t *delay_ms)
{
	if (!p || !busy || !delay_ms || !p->cap_ms)
		return -EINVAL;
	return retry_next(p, busy->retry_after_ms, attempt, rnd, delay_ms);
}

int wcm_retry_stale(const struct wcm_retry_policy *p, int rej_reason,
		    uint32_t attempt, uint32_t rnd, uint32_t *delay_ms)
{
	if (!p || !delay_ms || !p->cap_ms)
		return -EINVAL;
	if (rej_reason != WCM_REJ_REASON_STALE_CONN)
		return -ECONNREFUSED;
	return retry_next(p, 0, attempt, rnd, delay_ms);
}
