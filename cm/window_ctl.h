/*
 * cm/window_ctl.h - how wide a shard's connect window is (pure logic; the
 * window itself, its FIFO and slots, is cm/window.c).
 *
 * The window bounds the active handshakes a shard runs at once.  A fixed
 * width is either too narrow for a server with CPU to spare (the client
 * waits on its own window while the server idles) or too wide for one
 * that is saturated (the kernel's CM queues grow until resolve timers run
 * out).  The adaptive width follows what the handshakes report, in the
 * spirit of TCP Vegas:
 *  - Every handshake that ends established is a sample of its time in
 *    the window (admitted to established).  An epoch is `limit` samples
 *    (at most WCM_WCTL_EPOCH_MAX): about one round of the window.
 *  - The lowest epoch mean seen is the handshake's cost without queueing
 *    (the base).  It never drifts up: a base that followed the latency
 *    would follow a queue as it builds (measured: 30,000 connects on two
 *    nodes, windows up to 996, 650 route resolutions timed out).  A
 *    fabric that got slower for good keeps the window narrower, never
 *    below lo.
 *  - An epoch whose mean stays within 3/2 of the base says the peers keep
 *    up: the window grows by half (at least one).  A mean above twice the
 *    base says handshakes queue: it shrinks to 3/4.  In between it holds.
 *  - A busy REJ or a step timeout halves it at once and starts a new
 *    epoch (a burst of them counts once per epoch).
 *  - It stays within [lo, hi].  lo == hi is a fixed window: nothing here
 *    changes it.
 */
#ifndef WHARF_CM_WINDOW_CTL_H
#define WHARF_CM_WINDOW_CTL_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Samples per epoch at most: a wide window still adapts within a few
 * hundred handshakes. */
#define WCM_WCTL_EPOCH_MAX 256u
/* Adaptive defaults: the first width, and the bounds. */
#define WCM_WCTL_DEF_START 32u
#define WCM_WCTL_DEF_LO	   8u
#define WCM_WCTL_DEF_HI	   1024u

enum wcm_wctl_signal {
	WCM_WCTL_ESTABLISHED, /* with its time in the window */
	WCM_WCTL_BUSY,	      /* the peer refused for load (busy REJ) */
	WCM_WCTL_TIMEOUT,     /* a step's timer ran out */
};

struct wcm_wctl {
	unsigned limit;	  /* handshakes that may run at once */
	unsigned lo, hi;  /* bounds */
	uint64_t base_ns; /* 0 until the first epoch ends */
	uint64_t sum_ns;  /* this epoch's samples */
	unsigned n;
	bool backed_off; /* a back-off already taken in this epoch */
	uint64_t grows, shrinks;
};

/* A window starting at @start within [@lo, @hi] (clamped; @lo 0 is 1). */
void wcm_wctl_init(struct wcm_wctl *w, unsigned start, unsigned lo,
		   unsigned hi);

/* One handshake's outcome; @ns is its time in the window for
 * ESTABLISHED and ignored otherwise.  Returns the width now. */
unsigned wcm_wctl_signal(struct wcm_wctl *w, enum wcm_wctl_signal sig,
			 uint64_t ns);

#ifdef __cplusplus
}
#endif

#endif
