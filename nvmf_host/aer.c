/*
 * nvmf_host/aer.c - Asynchronous Event Requests, on the admin
 * shard (the pure decisions: aen.h).
 *
 * Once the controller is LIVE (the first bring-up and every reconnect):
 * Set Features Asynchronous Event Configuration with the notices the
 * controller advertises in OAES and this host handles, then min(AERL + 1,
 * 4) AERs.  They have no deadline (queue.c) and no keep-alive role.
 *
 * An AER that completes with an event is submitted again at once, and
 * the event queued; events are then handled one at a time: Get Log Page
 * of the page DW0 names (RAE clear: reading it re-enables the event),
 * for a namespace attribute notice the active namespace list and each
 * namespace identified again and published (ns.c), then on_event.  An
 * AER that completes with an error (the Abort of a teardown, Limit
 * Exceeded ...) is not submitted again: there is no loop, and a lost
 * association's AERs are never held nor resent - the next association
 * arms its own.  A handling interrupted by a loss is dropped: the
 * reconnect identifies the namespaces anyway.  As Linux
 * (nvme_complete_async_event), a persistent internal error resets the
 * controller instead of re-arming.
 */
#include <errno.h>
#include <string.h>

#include "nvmf_host/aen.h"
#include "nvmf_host/ctrl_sm.h"
#include "nvmf_host/host_int.h"

static void cnt_inc(atomic_uint_fast64_t *c)
{
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Admin commands may flow: the association is up and not shutting down. */
static bool live(const struct wharf_nvmf_host *h)
{
	return h->step == NHS_LIVE && h->admin.state == NHQ_LIVE &&
	       atomic_load(&h->cstate) == WHARF_NVMF_HOST_LIVE;
}

static void aer_done(int status, uint16_t nvme_status, void *arg);
static void handle_next(struct wharf_nvmf_host *h);

static int submit_aer(struct wharf_nvmf_host *h)
{
	union nvme_cmd c;
	int rc;

	wnh_cmd_aer(&c);
	rc = wnh_submit(&h->admin, &c, NH_DIR_NONE, NULL, 0, aer_done, h);
	if (rc)
		wharf_ctx_log(h->ctx, WHARF_LOG_WARN,
			      "nvmf host: %s: Asynchronous Event Request: %s",
			      h->subnqn, strerror(-rc));
	else
		h->aer.outstanding++;
	return rc;
}

static void aec_done(int status, uint16_t nvme_status, void *arg)
{
	struct wharf_nvmf_host *h = arg;
	unsigned n = wnh_aer_count(h->aerl);

	if (status == -EIO) /* as Linux: warn, arm the AERs anyway */
		wharf_ctx_log(h->ctx, WHARF_LOG_WARN,
			      "nvmf host: %s: Set Features Asynchronous Event "
			      "Configuration failed (status 0x%x)",
			      h->subnqn, nvme_status);
	else if (status)
		return; /* lost or closing */
	while (live(h) && h->aer.outstanding < n)
		if (submit_aer(h))
			break; /* no free slot: fewer AERs */
}

void wnh_aer_start(struct wharf_nvmf_host *h)
{
	uint32_t aec = wnh_aec_value(h->oaes);
	union nvme_cmd c;

	h->aer.outstanding = 0; /* the old association's were aborted */
	h->aer.step = NHA_IDLE;
	h->aer.n = 0;
	if (h->disc || !live(h))
		return;
	if (!aec) {
		aec_done(0, 0, h);
		return;
	}
	wnh_cmd_set_aec(&c, aec);
	if (wnh_submit(&h->admin, &c, NH_DIR_NONE, NULL, 0, aec_done, h))
		aec_done(0, 0, h);
}

/* ------------------------------------------------------------------ */
/* One event at a time                                                 */
/* ------------------------------------------------------------------ */

static void step_done(int status, uint16_t nvme_status, void *arg);

static int submit_step(struct wharf_nvmf_host *h, enum wnh_aen_step step,
		       const union nvme_cmd *c, void *buf, uint32_t len)
{
	h->aer.step = step;
	return wnh_submit(&h->admin, c, NH_DIR_FROM_CTRL, buf, len, step_done,
			  h);
}

static void deliver(struct wharf_nvmf_host *h)
{
	cnt_inc(&h->events);
	wharf_ctx_log(h->ctx, WHARF_LOG_INFO,
		      "nvmf host: %s: asynchronous event type %u info 0x%x "
		      "log page 0x%x (log %d, rescan %d)",
		      h->subnqn, h->aer.ev.type, h->aer.ev.info,
		      h->aer.ev.log_page, h->aer.ev.log_status,
		      h->aer.ev.rescan_status);
	if (h->on_event)
		h->on_event(&h->aer.ev, h->event_arg);
	h->aer.step = NHA_IDLE;
	handle_next(h);
}

static bool ns_notice(const struct wharf_nvmf_host_event *ev)
{
	return ev->type == NVME_AER_TYPE_NOTICE &&
	       ev->info == NVME_AER_INFO_NS_CHANGED;
}

static void identify_ns(struct wharf_nvmf_host *h)
{
	union nvme_cmd c;
	int rc;

	if (h->aer.next >= h->aer.nr) {
		rc = wnh_ns_publish(h, h->aer.ns, h->aer.nr);
		if (!rc)
			cnt_inc(&h->ns_rescans);
		h->aer.ev.rescan_status = rc;
		deliver(h);
		return;
	}
	wnh_cmd_identify(&c, NVME_CNS_NS, h->aer.ns[h->aer.next].nsid);
	rc = submit_step(h, NHA_ID_NS, &c, h->aer.id, NVME_IDENTIFY_SIZE);
	if (rc) {
		h->aer.ev.rescan_status = rc;
		deliver(h);
	}
}

static void rescan(struct wharf_nvmf_host *h)
{
	union nvme_cmd c;
	int rc;

	wnh_cmd_identify(&c, NVME_CNS_ACTIVE_NSL, 0);
	rc = submit_step(h, NHA_NS_LIST, &c, h->aer.id, NVME_IDENTIFY_SIZE);
	if (rc) {
		h->aer.ev.rescan_status = rc;
		deliver(h);
	}
}

static void got_log(struct wharf_nvmf_host *h)
{
	struct wharf_nvmf_host_event *ev = &h->aer.ev;

	if (!ev->log_status) {
		ev->log = h->aer.log;
		if (ev->log_page == NVME_LID_CHANGED_NS)
			ev->nr_changed =
				wnh_changed_ns_count(h->aer.log, ev->log_len);
	}
	if (ns_notice(ev))
		rescan(h);
	else
		deliver(h);
}

static void step_done(int status, uint16_t nvme_status, void *arg)
{
	struct wharf_nvmf_host *h = arg;
	struct wharf_nvmf_host_event *ev = &h->aer.ev;

	if ((status && status != -EIO) || !live(h)) { /* lost, closing */
		h->aer.step = NHA_IDLE;
		h->aer.n = 0;
		return;
	}
	if (status && h->aer.step != NHA_LOG) { /* the rescan failed */
		ev->rescan_status = status;
		deliver(h);
		return;
	}
	switch (h->aer.step) {
	case NHA_LOG:
		ev->log_status = status;
		ev->log_nvme_status = nvme_status;
		got_log(h);
		break;
	case NHA_NS_LIST:
		h->aer.nr = wnh_ns_list_parse(h->aer.id, h->aer.ns);
		h->aer.next = 0;
		identify_ns(h);
		break;
	case NHA_ID_NS:
		wnh_ns_parse(h->aer.id, &h->aer.ns[h->aer.next]);
		h->aer.next++;
		identify_ns(h);
		break;
	case NHA_IDLE:
		break;
	}
}

/* Handles the oldest queued event unless one is being handled. */
static void handle_next(struct wharf_nvmf_host *h)
{
	struct wharf_nvmf_host_event *ev = &h->aer.ev;
	struct wnh_aen a;
	union nvme_cmd c;

	if (h->aer.step != NHA_IDLE || !h->aer.n || !live(h))
		return;
	memset(ev, 0, sizeof(*ev));
	ev->size = sizeof(*ev);
	ev->dw0 = h->aer.queue[h->aer.head];
	h->aer.head = (h->aer.head + 1) % NH_AEN_QUEUE;
	h->aer.n--;
	wnh_aen_decode(ev->dw0, &a);
	ev->type = a.type;
	ev->info = a.info;
	ev->log_page = a.lid;
	ev->log_len = wnh_aen_log_len(a.lid);
	if (!ev->log_len) {
		ev->log_status = -EOPNOTSUPP;
		got_log(h);
		return;
	}
	wnh_cmd_get_log_page(&c, a.lid, 0, ev->log_len);
	ev->log_status = submit_step(h, NHA_LOG, &c, h->aer.log, ev->log_len);
	if (ev->log_status)
		got_log(h);
}

static void aer_done(int status, uint16_t nvme_status, void *arg)
{
	struct wharf_nvmf_host *h = arg;
	uint32_t dw0 = (uint32_t)h->admin.last_result;
	struct wnh_aen a;

	if (h->aer.outstanding)
		h->aer.outstanding--;
	wnh_aen_decode(dw0, &a);
	switch (wnh_aer_after(status, &a)) {
	case WNH_AER_STOP:
		if (status == -EIO)
			wharf_ctx_log(h->ctx, WHARF_LOG_WARN,
				      "nvmf host: %s: Asynchronous Event "
				      "Request failed (status 0x%x): not "
				      "submitted again",
				      h->subnqn, nvme_status);
		return;
	case WNH_AER_RESET:
		wharf_ctx_log(h->ctx, WHARF_LOG_WARN,
			      "nvmf host: %s: persistent internal error "
			      "event: resetting the controller",
			      h->subnqn);
		wnh_ctrl_event(h, WNH_EV_LOSS, -EIO);
		return;
	case WNH_AER_REARM:
		break;
	}
	if (live(h))
		submit_aer(h);
	if (h->aer.n < NH_AEN_QUEUE) {
		h->aer.queue[(h->aer.head + h->aer.n) % NH_AEN_QUEUE] = dw0;
		h->aer.n++;
	} else {
		wharf_ctx_log(h->ctx, WHARF_LOG_WARN,
			      "nvmf host: %s: asynchronous event 0x%x dropped: "
			      "%u waiting",
			      h->subnqn, dw0, NH_AEN_QUEUE);
	}
	handle_next(h);
}
