/*
 * nvmf_host/retry.h - what becomes of a user command when its
 * queue is lost: a pure function, unit-tested on its own.
 *
 * The rule (docs/design/nvmf_host.md, "What is sent again"): a command
 * the controller answered completes with that answer - success, or -EIO
 * and the NVMe status whatever its DNR bit says: the library never
 * resends a command that got a completion.  A command that got no
 * completion (lost with the queue, or timed out) is sent again on the
 * next association, up to NH_MAX_TRIES posts in all (Linux's
 * nvme_max_retries: 5 retries), then fails with the loss's error.
 */
#ifndef WHARF_INITIATORS_NVMF_RETRY_H
#define WHARF_INITIATORS_NVMF_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum wnh_disp {
	WNH_DISP_SUCCESS = 0, /* answered with success: complete, status 0 */
	WNH_DISP_NVME_ERROR,  /* answered with an NVMe error: complete with
			       * -EIO and the status, never resend */
	WNH_DISP_RESEND,      /* no completion: hold, send again */
	WNH_DISP_GIVE_UP,     /* no completion and @max_tries posts spent:
			       * fail with the loss's error */
};

/* @answered: a response capsule for the command arrived; @status: its
 * status (SC 7:0, SCT 10:8, DNR 14); @tries: times posted so far;
 * @max_tries: the most posts. */
enum wnh_disp wnh_disposition(bool answered, uint16_t status, unsigned tries,
			      unsigned max_tries);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NVMF_RETRY_H */
