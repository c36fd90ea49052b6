/*
 * nvmf_host/cmd.c - command capsules and the response parser
 * (cmd.h).
 */
#include "nvmf_host/cmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void wnh_sgl_keyed(struct nvme_sgl *sgl, uint64_t addr, uint32_t len,
		   uint32_t key)
{
	memset(sgl, 0, sizeof(*sgl));
	sgl->addr = addr;
	sgl->keyed.len[0] = (uint8_t)len;
	sgl->keyed.len[1] = (uint8_t)(len >> 8);
	sgl->keyed.len[2] = (uint8_t)(len >> 16);
	sgl->keyed.key = key;
	sgl->keyed.type = NVME_SGL_TYPE_KEYED_DATA << 4 | NVME_SGL_SUB_ADDRESS;
}

void wnh_sgl_in_capsule(struct nvme_sgl *sgl, uint32_t len)
{
	memset(sgl, 0, sizeof(*sgl));
	sgl->addr = 0;
	sgl->unkeyed.len = len;
	sgl->unkeyed.type = NVME_SGL_TYPE_DATA_BLOCK << 4 | NVME_SGL_SUB_OFFSET;
}

static void fabrics(union nvme_cmd *c, uint8_t fctype)
{
	memset(c, 0, sizeof(*c));
	c->fabrics.opc = NVME_OPC_FABRICS;
	/* Byte 1 is PSDT for every command: nvmet refuses anything but
	 * "SGL" there, Fabrics commands included. */
	c->common.flags = NVME_FLAGS_PSDT_SGL;
	c->fabrics.fctype = fctype;
}

void wnh_cmd_connect(union nvme_cmd *c, uint16_t qid, uint32_t entries,
		     uint32_t kato_ms)
{
	fabrics(c, NVME_FCTYPE_CONNECT);
	c->connect.recfmt = 0;
	c->connect.qid = qid;
	c->connect.sqsize = (uint16_t)(entries - 1);
	c->connect.kato = qid ? 0 : kato_ms;
}

void wnh_cmd_auth(union nvme_cmd *c, bool send, uint32_t len)
{
	struct nvme_auth_cmd a;

	fabrics(c, send ? NVME_FCTYPE_AUTH_SEND : NVME_FCTYPE_AUTH_RECV);
	memcpy(&a, c, sizeof(a));
	a.secp = NVME_AUTH_SECP;
	a.spsp0 = NVME_AUTH_SPSP0;
	a.spsp1 = NVME_AUTH_SPSP1;
	a.tl_al = len;
	memcpy(c, &a, sizeof(a));
}

static int nqn_ok(const char *nqn)
{
	size_t n = nqn ? strnlen(nqn, NVME_NQN_MAX + 1) : 0;

	return n > 0 && n <= NVME_NQN_MAX;
}

int wnh_connect_data(struct nvme_connect_data *d, const uint8_t hostid[16],
		     uint16_t cntlid, const char *subnqn, const char *hostnqn)
{
	if (!nqn_ok(subnqn) || !nqn_ok(hostnqn))
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	memcpy(d->hostid, hostid, NVME_HOSTID_LEN);
	d->cntlid = cntlid;
	memcpy(d->subnqn, subnqn, strlen(subnqn));
	memcpy(d->hostnqn, hostnqn, strlen(hostnqn));
	return 0;
}

void wnh_cmd_prop_get(union nvme_cmd *c, uint32_t ofst, int size8)
{
	fabrics(c, NVME_FCTYPE_PROP_GET);
	c->prop.attrib = size8 ? NVME_PROP_SIZE_8 : NVME_PROP_SIZE_4;
	c->prop.ofst = ofst;
}

void wnh_cmd_prop_set(union nvme_cmd *c, uint32_t ofst, uint32_t value)
{
	fabrics(c, NVME_FCTYPE_PROP_SET);
	c->prop.attrib = NVME_PROP_SIZE_4;
	c->prop.ofst = ofst;
	c->prop.value = value;
}

static void admin(union nvme_cmd *c, uint8_t opc, uint32_t nsid)
{
	memset(c, 0, sizeof(*c));
	c->common.opc = opc;
	c->common.flags = NVME_FLAGS_PSDT_SGL;
	c->common.nsid = nsid;
}

void wnh_cmd_identify(union nvme_cmd *c, uint8_t cns, uint32_t nsid)
{
	admin(c, NVME_ADM_IDENTIFY, nsid);
	c->common.cdw10 = cns;
}

void wnh_cmd_get_log_page(union nvme_cmd *c, uint8_t lid, uint64_t off,
			  uint32_t len)
{
	uint32_t numd = (len / 4 ? len / 4 : 1) - 1;

	admin(c, NVME_ADM_GET_LOG_PAGE, 0);
	c->common.cdw10 = lid | (numd & 0xFFFF) << 16;
	c->common.cdw11 = numd >> 16;
	c->common.cdw12 = (uint32_t)off;
	c->common.cdw13 = (uint32_t)(off >> 32);
}

int wnh_disc_hdr_parse(const void *buf, size_t len, uint64_t *genctr,
		       uint64_t *numrec, uint64_t max)
{
	struct nvme_disc_hdr hdr;

	if (len < sizeof(hdr))
		return -EMSGSIZE;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.recfmt != 0)
		return -EPROTO;
	*genctr = hdr.genctr;
	*numrec = hdr.numrec < max ? hdr.numrec : max;
	return 0;
}

/* @n bytes of a space-padded (or NUL-terminated) field into @dst
 * (n + 1 bytes): up to the first NUL, trailing spaces removed. */
static void disc_str(char *dst, const char *src, size_t n)
{
	size_t l = strnlen(src, n);

	memcpy(dst, src, l);
	while (l > 0 && dst[l - 1] == ' ')
		l--;
	dst[l] = '\0';
}

int wnh_disc_entry_parse(const void *buf, size_t len,
			 struct wharf_nvmf_host_disc_entry *out)
{
	struct nvme_disc_entry e;

	if (len < sizeof(e))
		return -EMSGSIZE;
	memcpy(&e, buf, sizeof(e));
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->trtype = e.trtype;
	out->adrfam = e.adrfam;
	out->subtype = e.subtype;
	out->treq = e.treq;
	out->portid = e.portid;
	out->cntlid = e.cntlid;
	out->asqsz = e.asqsz;
	disc_str(out->trsvcid, e.trsvcid, sizeof(e.trsvcid));
	disc_str(out->subnqn, e.subnqn, sizeof(e.subnqn));
	disc_str(out->traddr, e.traddr, sizeof(e.traddr));
	if (e.trtype == NVME_TRTYPE_RDMA) {
		out->rdma_qptype = e.tsas.qptype;
		out->rdma_prtype = e.tsas.prtype;
		out->rdma_cms = e.tsas.cms;
		out->rdma_pkey = e.tsas.pkey;
	}
	return 0;
}

void wnh_cmd_set_nqueues(union nvme_cmd *c, unsigned n)
{
	uint32_t z = n ? (uint32_t)(n - 1) & 0xFFFF : 0;

	admin(c, NVME_ADM_SET_FEATURES, 0);
	c->common.cdw10 = NVME_FEAT_NUM_QUEUES;
	c->common.cdw11 = z | z << 16;
}

void wnh_cmd_keep_alive(union nvme_cmd *c)
{
	admin(c, NVME_ADM_KEEP_ALIVE, 0);
}

void wnh_cmd_aer(union nvme_cmd *c)
{
	admin(c, NVME_ADM_ASYNC_EVENT, 0);
}

void wnh_cmd_set_aec(union nvme_cmd *c, uint32_t aec)
{
	admin(c, NVME_ADM_SET_FEATURES, 0);
	c->common.cdw10 = NVME_FEAT_ASYNC_EVENT;
	c->common.cdw11 = aec;
}

void wnh_cmd_identify_csi(union nvme_cmd *c, uint8_t cns, uint8_t csi)
{
	wnh_cmd_identify(c, cns, 0);
	c->common.cdw11 = (uint32_t)csi << 24;
}

void wnh_cmd_rw(union nvme_cmd *c, uint8_t opc, uint32_t nsid, uint64_t slba,
		uint32_t nlb)
{
	admin(c, opc, nsid);
	c->common.cdw10 = (uint32_t)slba;
	c->common.cdw11 = (uint32_t)(slba >> 32);
	c->common.cdw12 = (nlb - 1) & NVME_RW_NLB_MASK;
}

void wnh_cmd_flush(union nvme_cmd *c, uint32_t nsid)
{
	admin(c, NVME_IO_FLUSH, nsid);
}

void wnh_cmd_write_zeroes(union nvme_cmd *c, uint32_t nsid, uint64_t slba,
			  uint32_t nlb, int deac)
{
	wnh_cmd_rw(c, NVME_IO_WRITE_ZEROES, nsid, slba, nlb);
	if (deac)
		c->common.cdw12 |= NVME_RW_DEAC;
}

void wnh_cmd_dsm_deallocate(union nvme_cmd *c, uint32_t nsid, unsigned nr)
{
	admin(c, NVME_IO_DSM, nsid);
	c->common.cdw10 = (uint32_t)(nr - 1) & NVME_DSM_NR_MASK;
	c->common.cdw11 = NVME_DSM_AD;
}

void wnh_dsm_range(struct nvme_dsm_range *r, uint64_t slba, uint32_t nlb)
{
	memset(r, 0, sizeof(*r));
	r->nlb = nlb;
	r->slba = slba;
}

int wnh_lba_range_ok(uint64_t slba, uint64_t nlb, uint64_t nsze)
{
	return nlb >= 1 && slba < nsze && nlb <= nsze - slba;
}

int wnh_dlfeat_reads_zero(uint8_t dlfeat)
{
	return (dlfeat & 0x7) == NVME_DLFEAT_READ_0;
}

uint32_t wnh_in_capsule_max(const struct nvme_id_ctrl *id, uint32_t cap)
{
	uint64_t bytes = (uint64_t)id->ioccsz * 16;

	if (id->icdoff != 0 || !(id->sgls & NVME_SGLS_OFFSET) ||
	    bytes <= NVME_SQE_SIZE)
		return 0;
	bytes -= NVME_SQE_SIZE;
	return bytes < cap ? (uint32_t)bytes : cap;
}

uint32_t wnh_max_xfer(uint8_t mdts, uint32_t want)
{
	uint64_t lim;

	if (mdts == 0 || mdts > 20)
		return want;
	lim = 4096ull << mdts;
	return want < lim ? want : (uint32_t)lim;
}

int wnh_rsp_parse(const void *buf, size_t len, uint32_t depth,
		  struct wnh_rsp *out)
{
	struct nvme_cqe cqe;

	if (!buf || len < sizeof(cqe))
		return -EMSGSIZE;
	memcpy(&cqe, buf, sizeof(cqe));
	if (cqe.cid >= depth)
		return -ERANGE;
	out->cid = cqe.cid;
	out->status = cqe.status >> 1;
	out->sqhd = cqe.sqhd;
	out->result = cqe.result;
	return 0;
}

static const char *sc_name(unsigned sct, unsigned sc)
{
	if (sct == NVME_SCT_GENERIC) {
		switch (sc) {
		case NVME_SC_INVALID_OPCODE:
			return "invalid opcode";
		case NVME_SC_INVALID_FIELD:
			return "invalid field";
		case NVME_SC_DATA_XFER_ERROR:
			return "data transfer error";
		case NVME_SC_INTERNAL:
			return "internal error";
		case NVME_SC_INVALID_NS:
			return "invalid namespace";
		case NVME_SC_CMD_SEQ_ERROR:
			return "command sequence error";
		case NVME_SC_LBA_RANGE:
			return "LBA out of range";
		}
	} else if (sct == NVME_SCT_CMD) {
		switch (sc) {
		case NVME_SC_CONNECT_INCOMPAT_FMT:
			return "connect incompatible format";
		case NVME_SC_CONNECT_CTRL_BUSY:
			return "connect controller busy";
		case NVME_SC_CONNECT_INVALID_PARAM:
			return "connect invalid parameters";
		case NVME_SC_CONNECT_RESTART_DISC:
			return "connect restart discovery";
		case NVME_SC_CONNECT_INVALID_HOST:
			return "connect invalid host";
		}
	}
	return "unknown";
}

void wnh_status_str(uint16_t status, char *buf, size_t len)
{
	unsigned sct = NVME_STATUS_SCT(status), sc = NVME_STATUS_SC(status);

	snprintf(buf, len, "SCT %u SC 0x%02x (%s)%s", sct, sc, sc_name(sct, sc),
		 status & NVME_DNR ? " DNR" : "");
}
