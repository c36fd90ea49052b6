/*
 * targets/nvmf/logpage.c - Get Log Page: Discovery (70h, discovery
 * controllers), Error Information (01h), SMART / Health (02h) and Changed
 * Namespace List (04h) (NVM controllers).
 *
 * CDW10 LID 7:0, RAE 15, NUMDL 31:16; CDW11 NUMDU 15:0; CDW12/13 the byte
 * offset (dword aligned, LPA bit 2). The transfer is (NUMD + 1) dwords,
 * within MDTS; an offset past the end of the log or unaligned is Invalid
 * Field, an unknown or unserved LID Invalid Log Page. Bytes past the end
 * of the log read as zero. Each page is produced through a window so that
 * only the requested bytes are written (a discovery log is not built
 * whole). SMART is controller-wide: NSID must be 0 or FFFFFFFFh (LPA bit
 * 0 is clear). Reading the Changed Namespace List with RAE clear empties
 * it and re-arms the namespace notice.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "targets/nvmf/internal.h"
#include "targets/nvmf/nqn.h"

#define SMART_TEMP_K 293

/* The requested part of a log page. */
struct win {
	uint8_t *dst;
	uint64_t off;
	uint64_t len;
};

/* Copy the part of [pos, pos + n) that falls into the window. */
static void put(struct win *w, uint64_t pos, const void *src, uint64_t n)
{
	uint64_t lo = pos > w->off ? pos : w->off;
	uint64_t hi = pos + n < w->off + w->len ? pos + n : w->off + w->len;

	if (lo < hi)
		memcpy(w->dst + (lo - w->off),
		       (const uint8_t *)src + (lo - pos), hi - lo);
}

/* Whether @q's discovery log lists subsystem @s at listen line @p: @s is
 * served there and, if it has export lines, @q came in through one of
 * them (nvmet lists a port's own subsystems only). */
static bool disc_lists(const struct nvmf_queue *q, const struct nvmf_subsys *s,
		       size_t p)
{
	if (!nvmf_subsys_on_listener(s, (uint16_t)(p + 1)))
		return false;
	return s->listen_all || nvmf_subsys_on_listener(s, q->listener);
}

/* Discovery log entries @q's host may see: each allowed subsystem on each
 * listen address it is exported on. tgt->lock held. */
static size_t disc_records_locked(struct nvmf_queue *q)
{
	struct nvmf_subsys_tab *t = nvmf_subsys_table(q->tgt);
	size_t n = 0;

	for (size_t i = 1; i < t->n; i++) {
		if (!nvmf_subsys_host_allowed_locked(t->s[i], q->ctrl->hostnqn))
			continue;
		for (size_t p = 0; p < NVMF_CFG_MAX_LISTEN; p++)
			n += disc_lists(q, t->s[i], p);
	}
	return n;
}

static size_t disc_records(struct nvmf_queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->tgt->lock);
	n = disc_records_locked(q);
	pthread_mutex_unlock(&q->tgt->lock);
	return n;
}

/* The size of a log page on this controller; 0 if not served. */
static uint64_t log_size(struct nvmf_queue *q, uint8_t lid)
{
	bool disc = q->ctrl->subsys->discovery;

	switch (lid) {
	case NVME_LID_DISCOVERY:
		return disc ? sizeof(struct nvme_disc_hdr) +
				       disc_records(q) *
					       sizeof(struct nvme_disc_entry)
			    : 0;
	case NVME_LID_ERROR:
		return NVMF_ERRLOG_N * sizeof(struct nvme_error_log);
	case NVME_LID_SMART:
		return disc ? 0 : sizeof(struct nvme_smart_log);
	case NVME_LID_CHANGED_NS:
		return disc ? 0 : NVME_CHANGED_NS_LOG_SIZE;
	default:
		return 0;
	}
}

/* The log page offset, CDW13:CDW12. */
static uint64_t log_offset(const struct nvmf_req *req)
{
	return (uint64_t)req->cmd.common.cdw13 << 32 | req->cmd.common.cdw12;
}

uint16_t nvmf_log_prep(struct nvmf_queue *q, struct nvmf_req *req)
{
	const struct nvme_sqe *cmd = &req->cmd.common;
	uint8_t lid = (uint8_t)(cmd->cdw10 & 0xFF);
	uint64_t numd =
		((uint64_t)(cmd->cdw11 & 0xFFFF) << 16 | cmd->cdw10 >> 16) + 1;
	uint64_t off = log_offset(req), size = log_size(q, lid);

	if (!size)
		return nvmf_sts(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE);
	if ((off & 3) || off > size || numd * 4 > q->tgt->max_xfer)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	if (lid == NVME_LID_SMART && cmd->nsid != 0 &&
	    cmd->nsid != NVME_NSID_ALL)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	req->xfer = NVMF_XFER_C2H;
	req->xfer_len = (uint32_t)(numd * 4);
	return 0;
}

/* One discovery log entry: subsystem @s on listen address @port. */
static void disc_entry(const struct nvmf_tgt *tgt, const struct nvmf_subsys *s,
		       size_t port, struct nvme_disc_entry *e)
{
	const struct nvmf_cfg_listen *l = &tgt->listen[port];
	char svc[8];

	memset(e, 0, sizeof(*e));
	e->trtype = NVME_TRTYPE_RDMA;
	e->adrfam = l->family == AF_INET6 ? NVME_ADRFAM_IPV6 : NVME_ADRFAM_IPV4;
	e->subtype = NVME_SUBTYPE_NVME;
	e->treq = NVME_TREQ_SECURE_NOT_REQUIRED | NVME_TREQ_SQFLOW_DISABLE;
	e->portid = (uint16_t)(port + 1);
	e->cntlid = NVME_CNTLID_DYNAMIC;
	e->asqsz = NVMF_ADMIN_DEPTH;
	snprintf(svc, sizeof(svc), "%u", l->port);
	nvmf_ascii_field(e->trsvcid, sizeof(e->trsvcid), svc);
	memcpy(e->subnqn, s->nqn, sizeof(e->subnqn));
	nvmf_ascii_field(e->traddr, sizeof(e->traddr), l->addr);
	e->tsas.qptype = NVME_RDMA_QPTYPE_CONNECTED;
	e->tsas.prtype = NVME_RDMA_PRTYPE_NONE;
	e->tsas.cms = NVME_RDMA_CMS_RDMA_CM;
}

/* The discovery log page through window @w. */
static void log_discovery(struct nvmf_queue *q, struct win *w)
{
	struct nvmf_tgt *tgt = q->tgt;
	struct nvmf_subsys_tab *t;
	struct nvme_disc_hdr h;
	struct nvme_disc_entry e;
	uint64_t pos = sizeof(h);

	memset(&h, 0, sizeof(h));
	pthread_mutex_lock(&tgt->lock);
	t = nvmf_subsys_table(tgt);
	h.genctr = tgt->disc_genctr;
	h.numrec = disc_records_locked(q);
	put(w, 0, &h, sizeof(h));
	for (size_t i = 1; i < t->n; i++) {
		if (!nvmf_subsys_host_allowed_locked(t->s[i], q->ctrl->hostnqn))
			continue;
		for (size_t p = 0; p < NVMF_CFG_MAX_LISTEN; p++) {
			if (!disc_lists(q, t->s[i], p))
				continue;
			if (pos >= w->off + w->len)
				goto out;
			if (pos + sizeof(e) > w->off) {
				disc_entry(tgt, t->s[i], p, &e);
				put(w, pos, &e, sizeof(e));
			}
			pos += sizeof(e);
		}
	}
out:
	pthread_mutex_unlock(&tgt->lock);
}

/* The error information log through window @w. */
static void log_error(struct nvmf_ctrl *c, struct win *w)
{
	uint64_t n;

	pthread_mutex_lock(&c->lock);
	n = c->err_count < NVMF_ERRLOG_N ? c->err_count : NVMF_ERRLOG_N;
	for (uint64_t i = 0; i < n; i++) /* newest first */
		put(w, i * sizeof(struct nvme_error_log),
		    &c->errlog[(c->err_count - 1 - i) % NVMF_ERRLOG_N],
		    sizeof(struct nvme_error_log));
	pthread_mutex_unlock(&c->lock);
}

/* A 128-bit little-endian counter from @v. */
static void u128(uint8_t dst[16], uint64_t v)
{
	memset(dst, 0, 16);
	memcpy(dst, &v, sizeof(v));
}

/* Data units: thousands of 512-byte units, rounded up. */
static uint64_t data_units(uint64_t bytes)
{
	uint64_t units = (bytes + 511) / 512;

	return (units + 999) / 1000;
}

/* The SMART / health log through window @w. */
static void log_smart(struct nvmf_ctrl *c, struct win *w)
{
	struct nvme_smart_log s;
	uint64_t io[4], errs;

	nvmf_ctrl_io_totals(c, io);
	pthread_mutex_lock(&c->lock);
	errs = c->err_count;
	pthread_mutex_unlock(&c->lock);
	memset(&s, 0, sizeof(s));
	s.temperature = SMART_TEMP_K;
	s.avail_spare = 100;
	s.spare_thresh = 10;
	u128(s.host_reads, io[0]);
	u128(s.host_writes, io[1]);
	u128(s.data_units_read, data_units(io[2]));
	u128(s.data_units_written, data_units(io[3]));
	u128(s.num_err_log_entries, errs);
	put(w, 0, &s, sizeof(s));
}

/* The changed namespace list through window @w; cleared unless @rae. */
static void log_changed(struct nvmf_ctrl *c, struct win *w, bool rae)
{
	uint32_t overflow = NVME_CHANGED_NS_OVERFLOW;

	pthread_mutex_lock(&c->lock);
	if (c->changed_overflow)
		put(w, 0, &overflow, 4);
	else
		put(w, 0, c->changed, (uint64_t)c->nchanged * 4);
	if (!rae) {
		c->nchanged = 0;
		c->changed_overflow = false;
		c->ns_notice_masked = false;
		c->ns_notice_pending = false;
	}
	pthread_mutex_unlock(&c->lock);
}

uint16_t nvmf_log_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	struct win w = {
		.dst = req->data, .off = log_offset(req), .len = req->xfer_len};

	memset(req->data, 0, req->xfer_len);
	switch (req->cmd.common.cdw10 & 0xFF) {
	case NVME_LID_DISCOVERY:
		log_discovery(q, &w);
		return 0;
	case NVME_LID_ERROR:
		log_error(q->ctrl, &w);
		return 0;
	case NVME_LID_SMART:
		log_smart(q->ctrl, &w);
		return 0;
	case NVME_LID_CHANGED_NS:
		log_changed(q->ctrl, &w, req->cmd.common.cdw10 & NVME_GLP_RAE);
		return 0;
	default:
		return nvmf_sts(NVME_SCT_CMD, NVME_SC_INVALID_LOG_PAGE);
	}
}
