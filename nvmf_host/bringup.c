/*
 * nvmf_host/bringup.c - the admin queue's state machine (enum
 * wnh_step, admin shard only): after the admin Connect, Property Get CAP
 * and VS, CC.EN and CSTS.RDY within CAP.TO, Identify Controller, the
 * NVM command set's Identify Controller (CNS 06h: size limits; an NVMe
 * error means none), Set Features Number of Queues, the active namespace
 * list and each namespace, then the I/O queues; keep-alive every KATO/2
 * from the admin Connect on (the controller's timer starts there); the
 * normal shutdown (CC.SHN, CSTS.SHST) at disconnect.  One completion
 * handler, one switch.
 *
 * The same steps run again for each reconnect attempt (recover.c): what
 * they find goes to h->scan / h->scan_ns, which the first bring-up
 * publishes as info / ns and a reconnect only compares with info (the
 * submission path reads info without a lock, so its limits never change
 * after the connect); the namespaces found are published again (ns.c).
 * Any failure of a step is a loss (wnh_ctrl_event), which during the
 * first bring-up the connect call reports.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvmf_host/ctrl_sm.h"
#include "nvmf_host/auth.h"
#include "nvmf_host/host_int.h"
#include "nvmf_host/limits.h"

#define POLL_NS (10ull * 1000 * 1000) /* CSTS polling period */
/* next()'s result for an Identify CNS 06h the controller failed. */
#define ID_CS_FAILED UINT64_MAX

static const char *step_name(enum wnh_step s)
{
	static const char *const names[] = {
		"Connect",
		"Property Get CAP",
		"Property Get VS",
		"Property Get CC",
		"Property Set CC",
		"Property Get CSTS",
		"Identify Controller",
		"Identify I/O Command Set Controller (NVM)",
		"Set Features Number of Queues",
		"Identify Active Namespace List",
		"Identify Namespace",
		"I/O queues",
		"Get Log Page Discovery (header)",
		"Get Log Page Discovery",
		"Get Log Page Discovery (header again)",
		"live",
		"shutdown",
		"stopped",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static void admin_cb(int status, uint16_t nvme_status, void *arg);

static bool first(const struct wharf_nvmf_host *h)
{
	return atomic_load(&h->cstate) == WHARF_NVMF_HOST_NEW;
}

/* The bring-up failed with @err: stop, and report a loss. */
static void step_fail(struct wharf_nvmf_host *h, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void step_fail(struct wharf_nvmf_host *h, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wnh_fail(h, err, "%s", msg);
	h->step = NHS_STOPPED;
	wnh_ctrl_event(h, WNH_EV_LOSS, err);
}

static void submit(struct wharf_nvmf_host *h, enum wnh_step step,
		   const union nvme_cmd *c, enum wnh_dir dir, void *buf,
		   uint32_t len)
{
	int rc;

	h->step = step;
	rc = wnh_submit(&h->admin, c, dir, buf, len, admin_cb, h);
	if (rc)
		step_fail(h, rc, "admin %s: %s", step_name(step),
			  strerror(-rc));
}

static void prop_get(struct wharf_nvmf_host *h, enum wnh_step step,
		     uint32_t ofst, int size8)
{
	union nvme_cmd c;

	wnh_cmd_prop_get(&c, ofst, size8);
	submit(h, step, &c, NH_DIR_NONE, NULL, 0);
}

static void prop_set(struct wharf_nvmf_host *h, enum wnh_step step,
		     uint32_t ofst, uint32_t v)
{
	union nvme_cmd c;

	wnh_cmd_prop_set(&c, ofst, v);
	submit(h, step, &c, NH_DIR_NONE, NULL, 0);
}

static void identify(struct wharf_nvmf_host *h, enum wnh_step step, uint8_t cns,
		     uint32_t nsid)
{
	union nvme_cmd c;

	wnh_cmd_identify(&c, cns, nsid);
	submit(h, step, &c, NH_DIR_FROM_CTRL, h->id_buf, NVME_IDENTIFY_SIZE);
}

/* ------------------------------------------------------------------ */
/* Keep-alive                                                          */
/* ------------------------------------------------------------------ */

static void ka_cb(int status, uint16_t nvme_status, void *arg)
{
	struct wharf_nvmf_host *h = arg;

	h->ka_busy = false;
	if (!status || h->admin.state != NHQ_LIVE)
		return; /* aborted by a teardown: not news */
	/* A failed Keep Alive on a live queue: the controller is lost. */
	wharf_ctx_log(h->ctx, WHARF_LOG_WARN,
		      "nvmf host: Keep Alive failed: %s (status 0x%x)",
		      strerror(-status), nvme_status);
	wnh_ctrl_event(h, WNH_EV_LOSS, status);
}

static void ka_fn(struct wharf_timer *t, void *arg)
{
	struct wharf_nvmf_host *h = arg;
	union nvme_cmd c;

	if (h->step == NHS_STOPPED || h->admin.state != NHQ_LIVE)
		return;
	if (!h->ka_busy) {
		wnh_cmd_keep_alive(&c);
		if (!wnh_submit(&h->admin, &c, NH_DIR_NONE, NULL, 0, ka_cb, h))
			h->ka_busy = true;
	}
	wharf_timer_arm(t, (uint64_t)h->kato_ms / 2 * 1000000ull);
}

/* ------------------------------------------------------------------ */
/* Steps                                                               */
/* ------------------------------------------------------------------ */

static void copy_str(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = '\0';
	while (n > 0 && (dst[n - 1] == ' ' || dst[n - 1] == '\0'))
		dst[--n] = '\0';
}

static void got_id_ctrl(struct wharf_nvmf_host *h)
{
	const struct nvme_id_ctrl *id = (const void *)h->id_buf;
	struct wharf_nvmf_host_info *in = &h->scan;

	in->mdts = id->mdts;
	in->ioccsz = id->ioccsz;
	in->icdoff = id->icdoff;
	in->msdbd = id->msdbd;
	in->nn = id->nn;
	in->oncs = id->oncs;
	h->aerl = id->aerl;
	h->oaes = id->oaes;
	copy_str(in->sn, id->sn, sizeof(id->sn));
	copy_str(in->mn, id->mn, sizeof(id->mn));
	copy_str(in->fr, id->fr, sizeof(id->fr));
	copy_str(in->subnqn, id->subnqn, sizeof(id->subnqn));
	in->max_io_size = wnh_max_xfer(id->mdts, h->want_io);
	in->in_capsule_size =
		h->no_in_capsule ? 0 : wnh_in_capsule_max(id, in->max_io_size);
}

static void got_ns_list(struct wharf_nvmf_host *h)
{
	h->scan.nr_ns = wnh_ns_list_parse(h->id_buf, h->scan_ns);
	h->ns_next = 0;
}

static void got_ns(struct wharf_nvmf_host *h)
{
	wnh_ns_parse(h->id_buf, &h->scan_ns[h->ns_next]);
}

/* A reconnect: why the controller found now cannot carry on the one
 * the application uses, or NULL. */
static const char *changed(const struct wharf_nvmf_host *h, uint32_t entries)
{
	const struct wharf_nvmf_host_info *a = &h->info, *b = &h->scan;
	const char *why;

	if (b->nr_io_queues < a->nr_io_queues)
		return "fewer I/O queues granted";
	if (entries < a->queue_size)
		return "smaller queues (CAP.MQES)";
	if (b->max_io_size < a->max_io_size)
		return "a smaller transfer limit (MDTS)";
	if (b->in_capsule_size < a->in_capsule_size)
		return "a smaller in-capsule size";
	why = wnh_limits_tighter(a, b);
	if (why)
		return why;
	/* The namespaces may have changed (start_io_queues publishes the
	 * new list, as a namespace attribute notice would). */
	return NULL;
}

static void start_io_queues(struct wharf_nvmf_host *h)
{
	uint32_t mqes = (uint32_t)NVME_CAP_MQES(h->scan.cap) + 1;
	uint32_t entries = h->want_entries < mqes ? h->want_entries : mqes;
	const char *why;

	h->step = NHS_IO_QUEUES;
	h->io_up = 0;
	if (first(h)) {
		h->scan.queue_size = entries;
		h->scan.cntlid = h->cntlid;
		h->scan.kato_ms = h->kato_ms;
		h->scan.size = sizeof(h->scan);
		pthread_mutex_lock(&h->lock);
		h->nio = h->scan.nr_io_queues;
		h->info = h->scan;
		pthread_mutex_unlock(&h->lock);
		if (wnh_ns_publish(h, h->scan_ns, h->scan.nr_ns)) {
			step_fail(h, -ENOMEM, "namespaces: %s",
				  strerror(ENOMEM));
			return;
		}
		for (unsigned i = 0; i < h->nio; i++) {
			struct wharf_nvmf_host_queue *q = &h->io[i];

			q->entries = entries;
			q->in_capsule = h->info.in_capsule_size;
			/* A slot also carries the queue's own commands: the
			 * Connect data (1 KiB) and, with a secret, the
			 * Authentication Receive (4 KiB). */
			q->bounce_size = h->info.max_io_size;
			if (q->bounce_size < sizeof(struct nvme_connect_data))
				q->bounce_size =
					sizeof(struct nvme_connect_data);
			if (h->has_auth_key &&
			    q->bounce_size < WNH_AUTH_RECV_LEN)
				q->bounce_size = WNH_AUTH_RECV_LEN;
			q->timeout_ms = h->io_timeout_ms;
		}
	} else if ((why = changed(h, entries))) {
		step_fail(h, -EPROTO,
			  "reconnect: the controller came back with "
			  "%s",
			  why);
		return;
	} else if (wnh_ns_publish(h, h->scan_ns, h->scan.nr_ns)) {
		step_fail(h, -ENOMEM, "namespaces: %s", strerror(ENOMEM));
		return;
	} else {
		pthread_mutex_lock(&h->lock);
		h->info.cntlid = h->cntlid;
		pthread_mutex_unlock(&h->lock);
	}
	/* Each queue connects on its own shard, which owns it. */
	for (unsigned i = 0; i < h->nio; i++) {
		int rc = wnh_post(h, h->io[i].shard, wnh_q_start, &h->io[i]);

		if (rc) {
			step_fail(h, rc, "I/O queue %u: %s", h->io[i].qid,
				  strerror(-rc));
			return;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Discovery (wharf_nvmf_host_discover())                              */
/* ------------------------------------------------------------------ */

#define DISC_READS_MAX 10u /* log reads before giving up on genctr */
#define DISC_ENTRY     sizeof(struct nvme_disc_entry)

static void disc_get(struct wharf_nvmf_host *h, enum wnh_step step, void *buf,
		     uint64_t off, uint32_t len)
{
	union nvme_cmd c;

	wnh_cmd_get_log_page(&c, NVME_LID_DISCOVERY, off, len);
	submit(h, step, &c, NH_DIR_FROM_CTRL, buf, len);
}

static void disc_next_chunk(struct wharf_nvmf_host *h)
{
	size_t left = h->disc_len - h->disc_off;
	uint32_t n = left < NH_ADMIN_BOUNCE ? (uint32_t)left : NH_ADMIN_BOUNCE;

	disc_get(h, NHS_DISC_LOG, h->disc_log + h->disc_off, h->disc_off, n);
}

/* A header arrived in id_buf: read the whole log it announces. */
static void disc_got_hdr(struct wharf_nvmf_host *h)
{
	uint64_t genctr, numrec;
	uint8_t *p;
	int rc = wnh_disc_hdr_parse(h->id_buf, DISC_ENTRY, &genctr, &numrec,
				    WHARF_NVMF_HOST_DISC_MAX);

	if (rc) {
		step_fail(h, -EPROTO, "discovery log header: %s",
			  strerror(-rc));
		return;
	}
	if (++h->disc_reads > DISC_READS_MAX) {
		step_fail(h, -EPROTO, "discovery log changed during %u reads",
			  DISC_READS_MAX);
		return;
	}
	h->disc_len = (size_t)(numrec + 1) * DISC_ENTRY;
	p = realloc(h->disc_log, h->disc_len);
	if (!p) {
		step_fail(h, -ENOMEM, "discovery log: %s", strerror(ENOMEM));
		return;
	}
	h->disc_log = p;
	h->disc_off = 0;
	disc_next_chunk(h);
}

static void disc_step(struct wharf_nvmf_host *h)
{
	uint64_t g0, n0, g1, n1;

	switch (h->step) {
	case NHS_DISC_HDR:
		disc_got_hdr(h);
		break;
	case NHS_DISC_LOG:
		h->disc_off += h->disc_len - h->disc_off < NH_ADMIN_BOUNCE
				       ? h->disc_len - h->disc_off
				       : NH_ADMIN_BOUNCE;
		if (h->disc_off < h->disc_len)
			disc_next_chunk(h);
		else
			disc_get(h, NHS_DISC_CHECK, h->id_buf, 0, DISC_ENTRY);
		break;
	case NHS_DISC_CHECK:
		/* The log read is whole when its own header and the one
		 * read after it name the same generation. */
		if (!wnh_disc_hdr_parse(h->disc_log, h->disc_len, &g0, &n0,
					WHARF_NVMF_HOST_DISC_MAX) &&
		    !wnh_disc_hdr_parse(h->id_buf, DISC_ENTRY, &g1, &n1,
					WHARF_NVMF_HOST_DISC_MAX) &&
		    g0 == g1 && n0 == n1 &&
		    h->disc_len == (size_t)(n0 + 1) * DISC_ENTRY) {
			h->step = NHS_LIVE;
			wnh_disc_done(h);
		} else {
			disc_got_hdr(h);
		}
		break;
	default:
		break;
	}
}

static void csts_poll_fn(struct wharf_timer *t, void *arg)
{
	struct wharf_nvmf_host *h = arg;

	(void)t;
	if (h->step == NHS_CSTS || h->step == NHS_SHN)
		prop_get(h, h->step, NVME_PROP_CSTS, 0);
}

static void shutdown_done(struct wharf_nvmf_host *h)
{
	h->step = NHS_STOPPED;
	pthread_mutex_lock(&h->lock);
	h->shut_down = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static void next(struct wharf_nvmf_host *h, uint64_t r)
{
	union nvme_cmd c;
	uint32_t csts = (uint32_t)r;

	switch (h->step) {
	case NHS_CAP:
		h->scan.cap = r;
		prop_get(h, NHS_VS, NVME_PROP_VS, 0);
		break;
	case NHS_VS:
		h->scan.vs = (uint32_t)r;
		prop_get(h, NHS_CC, NVME_PROP_CC, 0);
		break;
	case NHS_CC:
		h->cc = (uint32_t)r;
		if (h->cc & NVME_CC_EN) {
			h->step = NHS_ENABLE;
			next(h, 0);
			break;
		}
		/* NVM command set, 4 KiB pages, 64-byte SQEs, 16-byte CQEs. */
		h->cc = NVME_CC_EN | 6u << 16 | 4u << 20;
		prop_set(h, NHS_ENABLE, NVME_PROP_CC, h->cc);
		break;
	case NHS_ENABLE: {
		uint64_t to = (h->scan.cap >> 24 & 0xFF) * 500;

		h->step_deadline_ms = wharf_now_ms() + (to ? to : 500);
		prop_get(h, NHS_CSTS, NVME_PROP_CSTS, 0);
		break;
	}
	case NHS_CSTS:
		if (csts & NVME_CSTS_CFS) {
			step_fail(h, -EIO,
				  "controller fatal status (CSTS 0x%x)", csts);
		} else if (csts & NVME_CSTS_RDY && h->disc) {
			h->disc_reads = 0;
			disc_get(h, NHS_DISC_HDR, h->id_buf, 0, DISC_ENTRY);
		} else if (csts & NVME_CSTS_RDY) {
			identify(h, NHS_ID_CTRL, NVME_CNS_CTRL, 0);
		} else if (wharf_now_ms() > h->step_deadline_ms) {
			step_fail(h, -ETIMEDOUT,
				  "CSTS.RDY not set within CAP.TO (%u ms)",
				  (unsigned)((h->scan.cap >> 24 & 0xFF) * 500));
		} else {
			wharf_timer_arm(h->step_timer, POLL_NS);
		}
		break;
	case NHS_ID_CTRL:
		got_id_ctrl(h);
		/* Linux asks from NVMe 1.2 on; any failure: no limits. */
		wnh_cmd_identify_csi(&c, NVME_CNS_CS_CTRL, NVME_CSI_NVM);
		submit(h, NHS_ID_CS_CTRL, &c, NH_DIR_FROM_CTRL, h->id_buf,
		       NVME_IDENTIFY_SIZE);
		break;
	case NHS_ID_CS_CTRL:
		wnh_nvm_limits(r == ID_CS_FAILED
				       ? NULL
				       : (const struct nvme_id_ctrl_nvm
						  *)(const void *)h->id_buf,
			       &h->scan);
		wnh_cmd_set_nqueues(&c, h->want_queues);
		submit(h, NHS_NQUEUES, &c, NH_DIR_NONE, NULL, 0);
		break;
	case NHS_NQUEUES: {
		uint32_t nsqa = (uint32_t)(r & 0xFFFF) + 1;
		uint32_t ncqa = (uint32_t)(r >> 16 & 0xFFFF) + 1;
		uint32_t g = nsqa < ncqa ? nsqa : ncqa;

		h->scan.nr_io_queues = h->want_queues < g ? h->want_queues : g;
		identify(h, NHS_NS_LIST, NVME_CNS_ACTIVE_NSL, 0);
		break;
	}
	case NHS_NS_LIST:
		got_ns_list(h);
		if (h->scan.nr_ns)
			identify(h, NHS_ID_NS, NVME_CNS_NS, h->scan_ns[0].nsid);
		else
			start_io_queues(h);
		break;
	case NHS_ID_NS:
		got_ns(h);
		if (++h->ns_next < h->scan.nr_ns)
			identify(h, NHS_ID_NS, NVME_CNS_NS,
				 h->scan_ns[h->ns_next].nsid);
		else
			start_io_queues(h);
		break;
	case NHS_SHN:
		if ((csts & NVME_CSTS_SHST_MASK) == NVME_CSTS_SHST_CMPLT ||
		    wharf_now_ms() > h->step_deadline_ms)
			shutdown_done(h);
		else
			wharf_timer_arm(h->step_timer, POLL_NS);
		break;
	case NHS_DISC_HDR:
	case NHS_DISC_LOG:
	case NHS_DISC_CHECK:
		disc_step(h);
		break;
	case NHS_CONNECT:
	case NHS_IO_QUEUES:
	case NHS_LIVE:
	case NHS_STOPPED:
		break;
	}
}

static void admin_cb(int status, uint16_t nvme_status, void *arg)
{
	struct wharf_nvmf_host *h = arg;
	char st[96];

	if (h->step == NHS_STOPPED)
		return;
	if (status && h->step == NHS_SHN) {
		shutdown_done(h);
		return;
	}
	if (status && h->admin.state != NHQ_LIVE) {
		h->step = NHS_STOPPED; /* the queue was lost: it reports */
		return;
	}
	if (status == -EIO && h->step == NHS_ID_CS_CTRL) {
		next(h, ID_CS_FAILED); /* not supported: no limits */
	} else if (status == -EIO) {
		wnh_status_str(nvme_status, st, sizeof(st));
		step_fail(h, -EIO, "admin %s failed: %s", step_name(h->step),
			  st);
	} else if (status) {
		step_fail(h, status, "admin %s: %s", step_name(h->step),
			  strerror(-status));
	} else {
		next(h, h->admin.last_result);
	}
}

/* ------------------------------------------------------------------ */
/* Entry points (admin shard)                                          */
/* ------------------------------------------------------------------ */

int wnh_admin_start(struct wharf_nvmf_host *h)
{
	h->step = NHS_CONNECT;
	h->ka_busy = false;
	return wnh_queue_start(&h->admin);
}

void wnh_admin_connected(struct wharf_nvmf_host *h)
{
	int rc = 0;

	if (!h->step_timer)
		rc = wharf_timer_create(h->admin.shard, csts_poll_fn, h,
					&h->step_timer);
	if (!rc && h->kato_ms && !h->ka_timer)
		rc = wharf_timer_create(h->admin.shard, ka_fn, h, &h->ka_timer);
	if (!rc)
		rc = wnh_ctrl_timers(h);
	if (!rc && h->kato_ms)
		rc = wharf_timer_arm(h->ka_timer,
				     (uint64_t)h->kato_ms / 2 * 1000000ull);
	if (rc) {
		step_fail(h, rc, "admin timers: %s", strerror(-rc));
		return;
	}
	prop_get(h, NHS_CAP, NVME_PROP_CAP, 1);
}

void wnh_admin_halt(struct wharf_nvmf_host *h)
{
	if (h->ka_timer)
		wharf_timer_cancel(h->ka_timer);
	if (h->step_timer)
		wharf_timer_cancel(h->step_timer);
	h->step = NHS_STOPPED;
}

void wnh_admin_shutdown(struct wharf_nvmf_host *h)
{
	if (!h->may_shutdown || h->step != NHS_LIVE ||
	    h->admin.state != NHQ_LIVE) {
		shutdown_done(h);
		return;
	}
	h->step_deadline_ms = wharf_now_ms() + h->admin_timeout_ms;
	h->cc = (h->cc & ~(3u << 14)) | 1u << 14; /* SHN: normal */
	prop_set(h, NHS_SHN, NVME_PROP_CC, h->cc);
	if (h->step == NHS_STOPPED)
		shutdown_done(h);
}

void wnh_admin_free(struct wharf_nvmf_host *h)
{
	wharf_timer_destroy(h->step_timer);
	h->step_timer = NULL;
	wharf_timer_destroy(h->ka_timer);
	h->ka_timer = NULL;
	wnh_ctrl_free(h);
}
