/*
 * cm/window_ctl.c - the adaptive connect window's width (design in
 * window_ctl.h).
 */
#include "cm/window_ctl.h"

static unsigned clamp(unsigned v, unsigned lo, unsigned hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void wcm_wctl_init(struct wcm_wctl *w, unsigned start, unsigned lo, unsigned hi)
{
	*w = (struct wcm_wctl){0};
	w->lo = lo ? lo : 1;
	w->hi = hi < w->lo ? w->lo : hi;
	w->limit = clamp(start, w->lo, w->hi);
}

static void new_epoch(struct wcm_wctl *w)
{
	w->sum_ns = 0;
	w->n = 0;
	w->backed_off = false;
}

static void set_limit(struct wcm_wctl *w, unsigned v)
{
	v = clamp(v, w->lo, w->hi);
	if (v > w->limit)
		w->grows++;
	else if (v < w->limit)
		w->shrinks++;
	w->limit = v;
}

static unsigned epoch_len(const struct wcm_wctl *w)
{
	return w->limit < WCM_WCTL_EPOCH_MAX ? w->limit : WCM_WCTL_EPOCH_MAX;
}

static void end_epoch(struct wcm_wctl *w)
{
	uint64_t mean = w->sum_ns / w->n;

	if (!w->base_ns || mean < w->base_ns)
		w->base_ns = mean;
	if (mean * 2 <= w->base_ns * 3)
		set_limit(w, w->limit + (w->limit / 2 ? w->limit / 2 : 1));
	else if (mean > w->base_ns * 2)
		set_limit(w, w->limit - w->limit / 4);
	new_epoch(w);
}

unsigned wcm_wctl_signal(struct wcm_wctl *w, enum wcm_wctl_signal sig,
			 uint64_t ns)
{
	if (w->lo == w->hi)
		return w->limit;
	switch (sig) {
	case WCM_WCTL_ESTABLISHED:
		w->sum_ns += ns;
		if (++w->n >= epoch_len(w))
			end_epoch(w);
		break;
	case WCM_WCTL_BUSY:
	case WCM_WCTL_TIMEOUT:
		if (!w->backed_off) {
			set_limit(w, w->limit / 2);
			new_epoch(w);
			w->backed_off = true;
		}
		break;
	}
	return w->limit;
}
