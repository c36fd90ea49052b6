/*
 * targets/nvmf/identify.c - Identify: controller (CNS 01h), namespace
 * (00h), active namespace ID list (02h) and namespace identification
 * descriptors (03h). A discovery controller serves CNS 01h only; other
 * CNS values are Invalid Field.
 *
 * Namespace rules (NVMe Base 1.4 5.15.2): an NSID that is valid for the
 * controller (1..NN) but not attached returns zeroes for CNS 00h and
 * Invalid Namespace for CNS 03h; NSID 0, FFFFFFFFh or above NN is Invalid
 * Namespace. The active list holds the NSIDs above CDW1.NSID in
 * increasing order (NSID FFFFFFFEh and FFFFFFFFh are Invalid Namespace).
 */
#include <string.h>

#include "targets/nvmf/internal.h"
#include "targets/nvmf/nqn.h"
#include "targets/nvmf/kato.h"

/* CNS, CDW10 7:0. */
static uint8_t cns_of(const struct nvmf_req *req)
{
	return (uint8_t)(req->cmd.common.cdw10 & 0xFF);
}

uint16_t nvmf_identify_prep(struct nvmf_queue *q, struct nvmf_req *req)
{
	uint8_t cns = cns_of(req);

	if (q->ctrl->subsys->discovery ? cns != NVME_CNS_CTRL
				       : cns > NVME_CNS_NS_DESCLIST)
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	req->xfer = NVMF_XFER_C2H;
	req->xfer_len = NVME_IDENTIFY_SIZE;
	return 0;
}

/* Whether a namespace of @s writes through a volatile cache (the page
 * cache, or a device's own write-back cache): Flush then matters. */
static bool any_vwc_ns(struct nvmf_subsys *s)
{
	for (uint32_t i = 1; i <= NVMF_MAX_NSID; i++) {
		struct nvmf_ns *ns = nvmf_subsys_ns(s, i);

		if (ns && nvmf_bdev_async(&ns->bdev) && ns->bdev.vwc)
			return true;
	}
	return false;
}

/* Fill Identify Controller for @q's controller. */
static void id_ctrl(struct nvmf_queue *q, struct nvme_id_ctrl *id)
{
	struct nvmf_ctrl *c = q->ctrl;
	struct nvmf_subsys *s = c->subsys;
	struct nvmf_tgt *tgt = q->tgt;

	nvmf_ascii_field(id->sn, sizeof(id->sn), s->sn);
	nvmf_ascii_field(id->mn, sizeof(id->mn), s->mn);
	nvmf_ascii_field(id->fr, sizeof(id->fr), "wharf1");
	id->mdts = tgt->mdts;
	id->cntlid = c->cntlid;
	id->ver = NVME_VS_1_3;
	id->acl = NVMF_ACL;
	id->aerl = NVMF_AERL;
	id->lpa = NVME_LPA_EXT_DATA;
	id->elpe = NVMF_ELPE;
	id->kas = NVMF_KAS;
	id->sqes = 0x66;
	id->cqes = 0x44;
	id->maxcmd =
		(uint16_t)(s->discovery ? NVMF_ADMIN_DEPTH : tgt->io_depth);
	id->sgls = NVME_SGLS_SUPPORTED | NVME_SGLS_KEYED |
		   NVME_SGLS_LONGER_THAN_DATA | NVME_SGLS_OFFSET;
	memcpy(id->subnqn, s->nqn, sizeof(id->subnqn));
	id->msdbd = 1;
	if (s->discovery)
		return;
	id->cmic = NVME_CMIC_MULTI_CTRL;
	id->oaes = NVME_OAES_NS_ATTR;
	id->wctemp = 343;
	id->cctemp = 373;
	id->nn = NVMF_MAX_NSID;
	id->oncs = NVME_ONCS_DSM | NVME_ONCS_WRITE_ZEROES;
	id->vwc = any_vwc_ns(s) ? NVME_VWC_PRESENT : 0;
	id->ioccsz = (NVME_SQE_SIZE + tgt->icd_size) / 16;
	id->iorcsz = NVME_CQE_SIZE / 16;
}

/* Fill Identify Namespace for @ns. */
static void id_ns(const struct nvmf_ns *ns, struct nvme_id_ns *id)
{
	id->nsze = id->ncap = id->nuse = ns->nsze;
	id->nlbaf = 0;
	id->flbas = 0;
	id->nmic = NVME_NMIC_SHARED;
	id->dlfeat = NVME_DLFEAT_WZ_DEAC |
		     (ns->bdev.dealloc_zeroes ? NVME_DLFEAT_READ_0 : 0);
	memcpy(id->nguid, ns->nguid, sizeof(id->nguid));
	id->lbaf[0].lbads = ns->lbads;
	if (nvmf_bdev_async(&ns->bdev)) { /* the device's own preferences */
		id->nsfeat |= NVME_NSFEAT_IO_OPT;
		id->npwg = id->npwa = ns->bdev.npwg;
		id->npdg = id->npda = ns->bdev.npwg;
		id->nows = ns->bdev.nows;
	}
	if (ns->bdev.read_only)
		id->nsattr |= NVME_NSATTR_WP;
}

/* Append one namespace identification descriptor at *@off. */
static void put_desc(uint8_t *buf, size_t *off, uint8_t type, const uint8_t *id,
		     uint8_t len)
{
	struct nvme_ns_desc d = {.nidt = type, .nidl = len};

	memcpy(buf + *off, &d, sizeof(d));
	memcpy(buf + *off + sizeof(d), id, len);
	*off += sizeof(d) + len;
}

uint16_t nvmf_identify_exec(struct nvmf_queue *q, struct nvmf_req *req)
{
	uint32_t nsid = req->cmd.common.nsid;
	struct nvmf_subsys *s = q->ctrl->subsys;
	uint8_t *buf = req->data;
	struct nvmf_ns *ns;
	uint32_t n = 0;
	size_t off = 0;

	memset(buf, 0, NVME_IDENTIFY_SIZE);
	switch (cns_of(req)) {
	case NVME_CNS_CTRL: {
		struct nvme_id_ctrl id;

		memset(&id, 0, sizeof(id));
		id_ctrl(q, &id);
		memcpy(buf, &id, sizeof(id));
		return 0;
	}
	case NVME_CNS_NS:
		if (nsid < 1 || nsid > NVMF_MAX_NSID)
			return nvmf_sts_gen(NVME_SC_INVALID_NS);
		ns = nvmf_subsys_ns(s, nsid);
		if (ns && atomic_load(&ns->state) != NVMF_NS_REMOVED) {
			struct nvme_id_ns id;

			memset(&id, 0, sizeof(id));
			id_ns(ns, &id);
			memcpy(buf, &id, sizeof(id));
		}
		return 0;
	case NVME_CNS_ACTIVE_NSL:
		if (nsid >= 0xFFFFFFFEu)
			return nvmf_sts_gen(NVME_SC_INVALID_NS);
		for (uint32_t i = nsid + 1; i <= NVMF_MAX_NSID; i++) {
			ns = nvmf_subsys_ns(s, i);
			if (!ns || atomic_load(&ns->state) == NVMF_NS_REMOVED)
				continue;
			memcpy(buf + 4 * n++, &i, 4);
		}
		return 0;
	case NVME_CNS_NS_DESCLIST:
		ns = nvmf_subsys_ns(s, nsid);
		if (!ns || atomic_load(&ns->state) == NVMF_NS_REMOVED)
			return nvmf_sts_gen(NVME_SC_INVALID_NS);
		put_desc(buf, &off, NVME_NIDT_NGUID, ns->nguid, 16);
		put_desc(buf, &off, NVME_NIDT_UUID, ns->uuid, 16);
		return 0;
	default:
		return nvmf_sts_gen(NVME_SC_INVALID_FIELD);
	}
}
