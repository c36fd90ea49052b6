/*
 * nvmf_host/aen.h - Asynchronous Event Requests as pure functions:
 * how many to keep outstanding, which events to enable, what a
 * completion says and which log page it names, whether to arm another.
 * No state, no I/O: aer.c drives them at run time, the unit test on its
 * own.
 */
#ifndef WHARF_INITIATORS_NVMF_AEN_H
#define WHARF_INITIATORS_NVMF_AEN_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/nvme/spec.h"
#include "proto/nvme/spec_data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* AERs kept outstanding at most (Linux keeps one; the controller takes
 * AERL + 1). */
#define WNH_AER_MAX 4u

/* Error type, information "persistent internal error": the controller
 * needs a reset (Linux resets it and does not re-arm). */
#define WNH_AER_INFO_PERSIST_INT_ERR 0x03

/* AERs to keep outstanding: min(@aerl + 1, WNH_AER_MAX). */
unsigned wnh_aer_count(uint8_t aerl);

/* The Asynchronous Event Configuration (Set Features 0Bh CDW11) for a
 * controller advertising @oaes: the notices this host handles
 * (namespace attribute, firmware activation) that it advertises, as
 * Linux's nvme_enable_aen; 0: nothing to enable (skip the command). */
uint32_t wnh_aec_value(uint32_t oaes);

/* An AER completion's DW0 decoded. */
struct wnh_aen {
	uint8_t type; /* NVMF_AER_TYPE_*, 2:0 */
	uint8_t info; /* 15:8 */
	uint8_t lid;  /* the log page to read, 23:16 */
};

void wnh_aen_decode(uint32_t dw0, struct wnh_aen *out);

/* Bytes of log page @lid the host reads after an event naming it (with
 * RAE clear, which re-enables the event): the Error Information entry
 * (64), SMART / Health and Firmware Slot (512), the Changed Namespace
 * List (4096); 0 for other pages (none is read). */
uint32_t wnh_aen_log_len(uint8_t lid);

/* What follows an AER's completion. */
enum wnh_aer_next {
	WNH_AER_REARM = 0, /* an event: report it, submit another AER */
	WNH_AER_STOP,	   /* an error status (Abort at a teardown, Limit
			    * Exceeded, Invalid ...) or a local failure: do
			    * not submit again (no loop); a new association
			    * arms its own */
	WNH_AER_RESET,	   /* a persistent internal error: reset the
			    * controller (logged, not reported to
			    * on_event; the reconnect re-arms) */
};

/* @status as the command's callback got it (-EIO for any NVMe status),
 * @ev the decoded DW0 (ignored unless @status is 0). */
enum wnh_aer_next wnh_aer_after(int status, const struct wnh_aen *ev);

/* The Changed Namespace List (@buf, @len bytes from the peer): the
 * number of NSIDs before the first 0 (at most NVME_CHANGED_NS_MAX), or
 * -1 when it overflowed (first entry FFFFFFFFh: "more than 1024"). */
int wnh_changed_ns_count(const void *buf, uint32_t len);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NVMF_AEN_H */
