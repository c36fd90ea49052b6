/*
 * cm/rej_busy.h - the "busy, retry later" REJ payload and retry backoff.
 *
 * When a shard refuses a connection for storm control (too many handshakes
 * in flight, receive budget exhausted, draining), wharf rejects it with
 * rdma_reject(), which puts IB_CM_REJ_CONSUMER_DEFINED (28) in the REJ
 * reason, and carries this payload in the REJ private data. Applications
 * define their own REJ payloads too (NVMe-oF puts {recfmt, sts} there), so
 * the format starts with a magic and a checksum: any payload that is not
 * ours decodes as -ENOMSG ("not wharf"), never as a wrong busy hint.
 *
 * Wire format, version 1: 16 bytes, multi-byte fields big-endian.
 *
 *   byte  0..3  magic        'W' 'H' 'R' 'F' (0x57 0x48 0x52 0x46)
 *   byte  4     version      1 (decoders accept newer versions, below)
 *   byte  5     hdr_len      16: length of the header in bytes, this
 *                            field included; never less than 16
 *   byte  6     reason       enum wcm_busy_reason, 1..3 in version 1
 *   byte  7     flags        0 in version 1
 *   byte  8..11 retry_after  milliseconds, u32, <= WCM_BUSY_RETRY_AFTER_MAX
 *   byte 12..13 load         shard load in per mille of its handshake cap,
 *                            u16, 0..1000
 *   byte 14..15 check        Fletcher-16 (mod 255) of bytes 0..hdr_len-1
 *                            with these two bytes taken as zero; stored as
 *                            (sum2 << 8) | sum1
 *
 * The IB CM reports the whole 148-byte REJ field (zero padded) whatever
 * the peer sent, so bytes after hdr_len are ignored. A later version keeps
 * bytes 0..15 as they are and may only grow hdr_len and add fields after
 * byte 15 (covered by the check); a version 1 decoder reads such a message,
 * ignoring flags and passing unknown reasons through. 16 bytes fit every
 * reject limit (148 RC, 136 UD).
 *
 * Stale connections (REJ reason IB_CM_REJ_STALE_CONN, 10: the remote CM
 * still has a connection with our QP number in timewait) are retried by the
 * connecting side with the same jittered backoff, a bounded number of
 * times.
 */
#ifndef WHARF_CM_REJ_BUSY_H
#define WHARF_CM_REJ_BUSY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* REJ reasons (RDMA_CM_EVENT_REJECTED status on IB and RoCE). */
#define WCM_REJ_REASON_STALE_CONN 10 /* IB_CM_REJ_STALE_CONN */
#define WCM_REJ_REASON_CONSUMER	  28 /* IB_CM_REJ_CONSUMER_DEFINED */

#define WCM_BUSY_MAGIC0		 0x57 /* 'W' */
#define WCM_BUSY_MAGIC1		 0x48 /* 'H' */
#define WCM_BUSY_MAGIC2		 0x52 /* 'R' */
#define WCM_BUSY_MAGIC3		 0x46 /* 'F' */
#define WCM_BUSY_VERSION	 1
#define WCM_BUSY_LEN		 16		   /* version 1 header */
#define WCM_BUSY_RETRY_AFTER_MAX (10u * 60 * 1000) /* 10 minutes */
#define WCM_BUSY_LOAD_MAX	 1000		   /* per mille */

enum wcm_busy_reason {
	WCM_BUSY_HANDSHAKES = 1,  /* the shard's handshake cap is reached */
	WCM_BUSY_RECV_BUDGET = 2, /* the shard's SRQ receive budget is full */
	WCM_BUSY_DRAINING = 3,	  /* the listener is shutting down */
};
#define WCM_BUSY_REASON_MAX WCM_BUSY_DRAINING

/* A decoded (or to be encoded) busy payload. */
struct wcm_rej_busy {
	uint8_t version;	 /* decode: as received; encode: ignored */
	uint8_t reason;		 /* enum wcm_busy_reason */
	uint32_t retry_after_ms; /* the peer should wait at least this long */
	uint16_t load_permille;	 /* 0..1000 */
};

/**
 * wcm_rej_busy_encode() - write a version 1 busy payload.
 * @msg: the fields (version ignored; 1 is written).
 * @buf: where to write.
 * @buf_len: room in @buf; WCM_BUSY_LEN bytes are written.
 * @out_len: receives WCM_BUSY_LEN; may be NULL.
 *
 * Return: 0; -EINVAL if @msg or @buf is NULL, @buf_len < WCM_BUSY_LEN,
 * the reason is not 1..WCM_BUSY_REASON_MAX, retry_after_ms is above
 * WCM_BUSY_RETRY_AFTER_MAX or load_permille above 1000 (nothing written).
 * Context: any thread; pure, non-blocking.
 */
int wcm_rej_busy_encode(const struct wcm_rej_busy *msg, void *buf,
			size_t buf_len, size_t *out_len);

/**
 * wcm_rej_busy_decode() - parse REJ private data a peer sent.
 * @data: the private data as delivered; may be NULL when @len is 0.
 * @len: its length as the transport reports it.
 * @out: the fields (written only on success); may be NULL to just classify.
 *
 * Return:
 *  0        a wharf busy payload;
 *  -ENOMSG  not a wharf payload (NULL/empty, shorter than the magic, or the
 *           magic differs): an application-defined REJ, not an error;
 *  -EPROTO  the magic matches but the rest is malformed: truncated (fewer
 *           than 16 bytes, or fewer than hdr_len), version 0, hdr_len < 16,
 *           bad check, reason 0, and in version 1 also an unknown reason or
 *           non-zero flags, retry_after above WCM_BUSY_RETRY_AFTER_MAX, or
 *           load above 1000.
 * Context: any thread; pure, non-blocking; safe on any bytes.
 */
int wcm_rej_busy_decode(const void *data, size_t len, struct wcm_rej_busy *out);

/* When and how often to retry a rejected connect. */
struct wcm_retry_policy {
	uint32_t max_attempts; /* retries allowed; 0 disables retrying */
	uint32_t base_ms;      /* floor of the first delay */
	uint32_t cap_ms;       /* no delay is longer; must be >= 1 */
};

/**
 * wcm_retry_policy_stale_default() - defaults for stale-connection REJs.
 * @p: filled with: 5 attempts, 10 ms base, 1000 ms cap (SPDK's host retries
 *     5 times, 10 ms apart; wharf backs off with jitter instead).
 * Context: any thread; pure, non-blocking.
 */
void wcm_retry_policy_stale_default(struct wcm_retry_policy *p);

/**
 * wcm_retry_policy_busy_default() - defaults for busy REJs.
 * @p: filled with: 8 attempts, 50 ms base, 30 s cap.
 * Context: any thread; pure, non-blocking.
 */
void wcm_retry_policy_busy_default(struct wcm_retry_policy *p);

/**
 * wcm_backoff_ms() - jittered exponential backoff that honours a hint.
 * @hint_ms: the earliest useful retry (the peer's retry-after, or a base);
 *           0 is taken as 1.
 * @attempt: retries already made (0 for the first retry).
 * @rnd: a random value from the caller (any 32 bits).
 * @cap_ms: the upper bound; 0 is taken as 1.
 *
 * With h = min(max(@hint_ms, 1), @cap_ms) the window is
 * [h, min(@cap_ms, h * 2^(@attempt + 1))] and the result is
 * h + @rnd mod (window width + 1): never earlier than the hint (when the
 * hint is within the cap), never above the cap, spread over a window that
 * doubles with each attempt so that rejected peers do not come back in
 * lockstep.
 *
 * Return: the delay in milliseconds.
 * Context: any thread; pure, non-blocking.
 */
uint32_t wcm_backoff_ms(uint32_t hint_ms, uint32_t attempt, uint32_t rnd,
			uint32_t cap_ms);

/**
 * wcm_retry_busy() - should a connect rejected busy be retried, and when.
 * @p: the policy (the application asked for busy retries).
 * @busy: the decoded payload (wcm_rej_busy_decode() returned 0).
 * @attempt: retries already made for this connect.
 * @rnd: a random value from the caller.
 * @delay_ms: receives the delay on success.
 *
 * The hint is max(retry_after_ms, base_ms).
 *
 * Return: 0 and *@delay_ms; -ECONNREFUSED when @attempt >=
 * max_attempts (give up and report the rejection); -EINVAL if an argument
 * is NULL or cap_ms is 0.
 * Context: any thread; pure, non-blocking.
 */
int wcm_retry_busy(const struct wcm_retry_policy *p,
		   const struct wcm_rej_busy *busy, uint32_t attempt,
		   uint32_t rnd, uint32_t *delay_ms);

/**
 * wcm_retry_stale() - should a rejected connect be retried as stale.
 * @p: the policy.
 * @rej_reason: the REJECTED event's status (the IB REJ reason).
 * @attempt: retries already made for this connect.
 * @rnd: a random value from the caller.
 * @delay_ms: receives the delay on success.
 *
 * Return: 0 and *@delay_ms (base_ms is the hint) when @rej_reason is
 * WCM_REJ_REASON_STALE_CONN and @attempt < max_attempts; -ECONNREFUSED
 * otherwise (another reason, or attempts exhausted); -EINVAL if @p or
 * @delay_ms is NULL or cap_ms is 0.
 * Context: any thread; pure, non-blocking.
 */
int wcm_retry_stale(const struct wcm_retry_policy *p, int rej_reason,
		    uint32_t attempt, uint32_t rnd, uint32_t *delay_ms);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CM_REJ_BUSY_H */
