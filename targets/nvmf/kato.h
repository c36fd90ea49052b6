/*
 * targets/nvmf/kato.h - keep-alive timeout arithmetic, as pure functions
 * of time (milliseconds from any monotonic clock).
 *
 * The controller reports KAS = NVMF_KAS (units of 100 ms) in Identify
 * Controller and rounds every KATO up to that granularity, as NVMe Base
 * 1.4 7.12.1 allows. A controller whose KATO is 0 never expires. Every
 * admin or Fabrics command of the controller restarts the timer - Keep
 * Alive, the admin Connect, Property Set CC.EN, Identify, and each I/O
 * queue's Connect - and the timeout fires once now - last >= twice the
 * rounded KATO (NVMF_KATO_GRACE_FACTOR).  I/O commands do not restart it (the controller does not claim
 * TBKAS, and the data path stays free of a shared store).
 *
 * Why not Keep Alive alone: the Linux host (6.1) sends its first Keep
 * Alive KATO/2 after it has set up every queue, each later one KATO/2
 * after the previous completed.  A controller whose queues took longer
 * than KATO/2 to set up expired before its first Keep Alive arrived: 37
 * of 256 controllers in a slow boot (docs/bench/connect_storm.md).
 *
 * Why twice KATO: the host sends the next Keep Alive KATO/2 after the
 * previous one completed, so a slow round trip (the same run saw 3 to 6 s
 * under load) spaces them by more than KATO.  nvmet restarts its timer on
 * any command and checks it lazily every KATO, so it expires between KATO
 * and 2 * KATO after the last command; wharf waits the full 2 * KATO, the
 * same for every controller.
 */
#ifndef WHARF_TARGETS_NVMF_KATO_H
#define WHARF_TARGETS_NVMF_KATO_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Keep Alive Support: granularity of 10 x 100 ms. */
#define NVMF_KAS	   10
#define NVMF_KATO_GRAIN_MS (NVMF_KAS * 100u)
/* A controller expires after this many KATOs without a command. */
#define NVMF_KATO_GRACE_FACTOR 2u

/**
 * nvmf_kato_round() - a KATO rounded up to the controller's granularity.
 * @kato_ms: the host's KATO in milliseconds (0 = disabled).
 *
 * Return: 0 for 0; otherwise the next multiple of NVMF_KATO_GRAIN_MS
 * (saturating at the largest multiple below 2^32).
 * Context: any thread; pure, non-blocking.
 */
uint32_t nvmf_kato_round(uint32_t kato_ms);

/**
 * nvmf_kato_expired() - whether a keep-alive timer has expired.
 * @last_ms: when the timer last restarted.
 * @kato_ms: the (rounded) KATO; 0 never expires.
 * @now_ms: the current time; a clock behind @last_ms means "not expired".
 *
 * Return: true once @now_ms - @last_ms >= NVMF_KATO_GRACE_FACTOR *
 * @kato_ms.
 * Context: any thread; pure, non-blocking.
 */
bool nvmf_kato_expired(uint64_t last_ms, uint32_t kato_ms, uint64_t now_ms);

/**
 * nvmf_kato_deadline() - when a keep-alive timer expires.
 * @last_ms: when the timer last restarted.
 * @kato_ms: the (rounded) KATO.
 *
 * Return: @last_ms + NVMF_KATO_GRACE_FACTOR * @kato_ms, or UINT64_MAX when
 * @kato_ms is 0 or the sum overflows (never).
 * Context: any thread; pure, non-blocking.
 */
uint64_t nvmf_kato_deadline(uint64_t last_ms, uint32_t kato_ms);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_KATO_H */
