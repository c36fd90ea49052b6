/*
 * nvmf_host/ctrl_sm.c - the controller's recovery transitions and
 * the reconnect backoff (ctrl_sm.h): one switch per state over the
 * events, nothing else.
 */
#include "nvmf_host/ctrl_sm.h"

#define S(st, a) ((struct wnh_trans){.next = (st), .act = (a)})

static struct wnh_trans on_new(enum wnh_ev ev)
{
	switch (ev) {
	case WNH_EV_UP:
		return S(WHARF_NVMF_HOST_LIVE, WNH_ACT_CONNECTED);
	case WNH_EV_DELETE:
		return S(WHARF_NVMF_HOST_DELETING, WNH_ACT_STOP);
	default: /* a loss: the connect call reports it and tears down */
		break;
	}
	return S(WHARF_NVMF_HOST_NEW, 0);
}

static struct wnh_trans on_live(enum wnh_ev ev)
{
	switch (ev) {
	case WNH_EV_LOSS:
		return S(WHARF_NVMF_HOST_RESETTING,
			 WNH_ACT_TEARDOWN | WNH_ACT_ARM_LOSS);
	case WNH_EV_DELETE:
		return S(WHARF_NVMF_HOST_DELETING, WNH_ACT_STOP);
	default: /* ignored */
		break;
	}
	return S(WHARF_NVMF_HOST_LIVE, 0);
}

static struct wnh_trans on_resetting(enum wnh_ev ev)
{
	switch (ev) {
	case WNH_EV_DOWN:
		return S(WHARF_NVMF_HOST_CONNECTING, WNH_ACT_ARM_RETRY);
	case WNH_EV_LOSS_TMO: /* the teardown goes on; DOWN then does nothing */
		return S(WHARF_NVMF_HOST_DEAD,
			 WNH_ACT_STOP | WNH_ACT_FAIL_HELD);
	case WNH_EV_FAST_FAIL:
		return S(WHARF_NVMF_HOST_RESETTING, WNH_ACT_FAST_FAIL);
	case WNH_EV_DELETE:
		return S(WHARF_NVMF_HOST_DELETING, WNH_ACT_STOP);
	default: /* a loss while tearing down, a failed attempt's UP */
		break;
	}
	return S(WHARF_NVMF_HOST_RESETTING, 0);
}

static struct wnh_trans on_connecting(enum wnh_ev ev)
{
	switch (ev) {
	case WNH_EV_RETRY:
		return S(WHARF_NVMF_HOST_CONNECTING, WNH_ACT_ATTEMPT);
	case WNH_EV_UP:
		return S(WHARF_NVMF_HOST_LIVE, WNH_ACT_RESUME);
	case WNH_EV_LOSS: /* the attempt failed: close what it opened */
		return S(WHARF_NVMF_HOST_RESETTING, WNH_ACT_TEARDOWN);
	case WNH_EV_LOSS_TMO:
		return S(WHARF_NVMF_HOST_DEAD,
			 WNH_ACT_STOP | WNH_ACT_TEARDOWN | WNH_ACT_FAIL_HELD);
	case WNH_EV_FAST_FAIL:
		return S(WHARF_NVMF_HOST_CONNECTING, WNH_ACT_FAST_FAIL);
	case WNH_EV_DELETE:
		return S(WHARF_NVMF_HOST_DELETING, WNH_ACT_STOP);
	default: /* ignored */
		break;
	}
	return S(WHARF_NVMF_HOST_CONNECTING, 0);
}

static struct wnh_trans on_dead(enum wnh_ev ev)
{
	switch (ev) {
	case WNH_EV_DELETE:
		return S(WHARF_NVMF_HOST_DELETING, WNH_ACT_STOP);
	default: /* ignored */
		break;
	}
	return S(WHARF_NVMF_HOST_DEAD, 0);
}

struct wnh_trans wnh_ctrl_next(enum wharf_nvmf_host_state s, enum wnh_ev ev)
{
	switch (s) {
	case WHARF_NVMF_HOST_NEW:
		return on_new(ev);
	case WHARF_NVMF_HOST_LIVE:
		return on_live(ev);
	case WHARF_NVMF_HOST_RESETTING:
		return on_resetting(ev);
	case WHARF_NVMF_HOST_CONNECTING:
		return on_connecting(ev);
	case WHARF_NVMF_HOST_DEAD:
		return on_dead(ev);
	case WHARF_NVMF_HOST_DELETING: /* final: everything is ignored */
		break;
	}
	return S(s, 0);
}

uint64_t wnh_backoff_ms(uint32_t base_ms, unsigned failed)
{
	uint64_t b = base_ms ? base_ms : 1;
	uint64_t cap = b * WNH_BACKOFF_CAP;

	if (failed >= 4) /* 2^3 = WNH_BACKOFF_CAP already */
		return cap;
	b <<= failed;
	return b < cap ? b : cap;
}

const char *wnh_ev_name(enum wnh_ev ev)
{
	static const char *const names[] = {
		"up",	  "loss",	   "down",
		"retry",  "ctrl_loss_tmo", "fast_io_fail_tmo",
		"delete",
	};

	return (unsigned)ev < WNH_EV_COUNT ? names[ev] : "?";
}

const char *wharf_nvmf_host_state_name(enum wharf_nvmf_host_state s)
{
	switch (s) {
	case WHARF_NVMF_HOST_NEW:
		return "new";
	case WHARF_NVMF_HOST_LIVE:
		return "live";
	case WHARF_NVMF_HOST_RESETTING:
		return "resetting";
	case WHARF_NVMF_HOST_CONNECTING:
		return "connecting";
	case WHARF_NVMF_HOST_DELETING:
		return "deleting";
	case WHARF_NVMF_HOST_DEAD:
		return "dead";
	}
	return "?";
}
