/*
 * proto/nvme/rdma_pdata.c - RDMA CM private data of the NVMe RDMA
 * transport (rules in rdma_pdata.h).
 */
#include "proto/nvme/rdma_pdata.h"

#include <errno.h>
#include <string.h>

/* min(a, b) saturated to 8 bits. */
static uint8_t min_u8(uint32_t a, uint32_t b)
{
	uint32_t m = a < b ? a : b;

	return m > 0xFF ? 0xFF : (uint8_t)m;
}

/* The REJ status for a REQ, or 0 when it is acceptable. */
static uint16_t check_req(const struct nvme_rdma_limits *lim,
			  const struct nvme_rdma_cm_req *req, uint8_t host_ird,
			  uint8_t host_ord)
{
	uint32_t depth = req->qid ? lim->io_depth : lim->admin_depth;

	if (req->recfmt != NVME_RDMA_RECFMT)
		return NVME_RDMA_CM_INVALID_RECFMT;
	if (req->qid > lim->max_qid)
		return NVME_RDMA_CM_INVALID_QID;
	if (req->hsqsize < 1 || (uint32_t)req->hsqsize + 1 > depth)
		return NVME_RDMA_CM_INVALID_HSQSIZE;
	if ((uint32_t)req->hrqsize < (uint32_t)req->hsqsize + 1)
		return NVME_RDMA_CM_INVALID_HRQSIZE;
	if (host_ird == 0)
		return NVME_RDMA_CM_INVALID_IRD;
	if (host_ord > lim->dev_max_rd_atom)
		return NVME_RDMA_CM_INVALID_ORD;
	if (lim->dev_max_init_rd_atom == 0)
		return NVME_RDMA_CM_NO_RSC;
	return 0;
}

int nvme_rdma_req_parse(const struct nvme_rdma_limits *lim, const void *pdata,
			size_t len, uint8_t host_ird, uint8_t host_ord,
			struct nvme_rdma_accept *acc, uint16_t *rej_sts)
{
	struct nvme_rdma_cm_req req;
	uint16_t sts;

	if (!lim || !acc || !rej_sts || lim->max_qid < 1 ||
	    lim->admin_depth < 2 || lim->io_depth < 2)
		return -EINVAL;
	if (!pdata || len < sizeof(req)) {
		*rej_sts = NVME_RDMA_CM_INVALID_LEN;
		return -EPROTO;
	}
	memcpy(&req, pdata, sizeof(req));
	sts = check_req(lim, &req, host_ird, host_ord);
	if (sts) {
		*rej_sts = sts;
		return -EPROTO;
	}
	memset(acc, 0, sizeof(*acc));
	acc->qid = req.qid;
	acc->cntlid = req.cntlid;
	acc->sq_entries = (uint16_t)(req.hsqsize + 1);
	acc->host_rq = req.hrqsize;
	acc->initiator_depth = min_u8(
		min_u8(acc->sq_entries, lim->dev_max_init_rd_atom), host_ird);
	acc->responder_resources = 0;
	acc->rep.recfmt = NVME_RDMA_RECFMT;
	acc->rep.crqsize = acc->sq_entries;
	return 0;
}

int nvme_rdma_rej_build(uint16_t sts, struct nvme_rdma_cm_rej *out)
{
	if (!out || sts < NVME_RDMA_CM_INVALID_LEN ||
	    sts > NVME_RDMA_CM_INVALID_CNTLID)
		return -EINVAL;
	out->recfmt = NVME_RDMA_RECFMT;
	out->sts = sts;
	return 0;
}

int nvme_rdma_req_build(uint16_t qid, uint32_t entries, uint16_t cntlid,
			struct nvme_rdma_cm_req *out)
{
	if (!out || entries < 2 || entries > 0xFFFF)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->recfmt = NVME_RDMA_RECFMT;
	out->qid = qid;
	out->hrqsize = (uint16_t)entries;
	out->hsqsize = (uint16_t)(entries - 1);
	out->cntlid = cntlid;
	return 0;
}

const char *nvme_rdma_cm_sts_str(uint16_t sts)
{
	switch (sts) {
	case NVME_RDMA_CM_INVALID_LEN:
		return "invalid private data length";
	case NVME_RDMA_CM_INVALID_RECFMT:
		return "invalid record format";
	case NVME_RDMA_CM_INVALID_QID:
		return "invalid queue ID";
	case NVME_RDMA_CM_INVALID_HSQSIZE:
		return "invalid host SQ size";
	case NVME_RDMA_CM_INVALID_HRQSIZE:
		return "invalid host RQ size";
	case NVME_RDMA_CM_NO_RSC:
		return "no resources";
	case NVME_RDMA_CM_INVALID_IRD:
		return "invalid IRD";
	case NVME_RDMA_CM_INVALID_ORD:
		return "invalid ORD";
	case NVME_RDMA_CM_INVALID_CNTLID:
		return "invalid controller ID";
	default:
		return "unknown";
	}
}
