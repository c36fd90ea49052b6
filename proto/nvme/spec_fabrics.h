/*
 * proto/nvme/spec_fabrics.h - NVMe over Fabrics wire structures: the
 * Connect command's 1024-byte data, the Discovery Log Page (header,
 * entries, RDMA transport specific address subtype) and the RDMA CM
 * private data of the NVMe RDMA transport binding (REQ, ACCEPT, REJ and
 * the REJ status codes).
 *
 * Sources: NVMe over Fabrics 1.1 (3.3, 5.3), NVMe RDMA Transport
 * Specification 1.0 (3.1). Sizes and offsets pinned with _Static_assert.
 */
#ifndef WHARF_PROTO_NVME_SPEC_FABRICS_H
#define WHARF_PROTO_NVME_SPEC_FABRICS_H

#include "proto/nvme/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NQN fields are 256 bytes; a valid NQN is at most 223 bytes + NUL. */
#define NVME_NQN_FIELD	256
#define NVME_NQN_MAX	223
#define NVME_DISC_NQN	"nqn.2014-08.org.nvmexpress.discovery"
#define NVME_HOSTID_LEN 16

/* Connect data (1024 bytes, host to controller). */
struct nvme_connect_data {
	uint8_t hostid[NVME_HOSTID_LEN];
	uint16_t cntlid;
	uint8_t rsvd18[238];
	char subnqn[NVME_NQN_FIELD];
	char hostnqn[NVME_NQN_FIELD];
	uint8_t rsvd768[256];
} NVME_PACKED;

#define NVME_CONNECT_DATA_SIZE 1024
NVME_STATIC_ASSERT(sizeof(struct nvme_connect_data) == NVME_CONNECT_DATA_SIZE,
		   "Connect data size");
NVME_STATIC_ASSERT(offsetof(struct nvme_connect_data, cntlid) == 16,
		   "Connect data cntlid");
NVME_STATIC_ASSERT(offsetof(struct nvme_connect_data, subnqn) == 256,
		   "Connect data subnqn");
NVME_STATIC_ASSERT(offsetof(struct nvme_connect_data, hostnqn) == 512,
		   "Connect data hostnqn");

/* Connect data CNTLID for the dynamic controller model. */
#define NVME_CNTLID_DYNAMIC 0xFFFF
/* Controller IDs a target hands out (0 and FFF0h..FFFFh are special). */
#define NVME_CNTLID_MIN 0x0001
#define NVME_CNTLID_MAX 0xFFEF

/* ---- Discovery Log Page (LID 70h) ---------------------------------- */

#define NVME_TRTYPE_RDMA       0x01
#define NVME_ADRFAM_IPV4       0x01
#define NVME_ADRFAM_IPV6       0x02
#define NVME_SUBTYPE_DISCOVERY 0x01
#define NVME_SUBTYPE_NVME      0x02
/* TREQ: secure channel 1:0, bit 2: SQ flow control disable supported. */
#define NVME_TREQ_SECURE_NOT_REQUIRED 0x02
#define NVME_TREQ_SQFLOW_DISABLE      0x04

#define NVME_RDMA_QPTYPE_CONNECTED 0x01
#define NVME_RDMA_PRTYPE_NONE	   0x01 /* no provider specified */
#define NVME_RDMA_PRTYPE_IB	   0x02
#define NVME_RDMA_PRTYPE_ROCE	   0x03
#define NVME_RDMA_PRTYPE_ROCE2	   0x04
#define NVME_RDMA_PRTYPE_IWARP	   0x05
#define NVME_RDMA_CMS_RDMA_CM	   0x01

/* RDMA Transport Specific Address Subtype (256 bytes). */
struct nvme_rdma_tsas {
	uint8_t qptype;
	uint8_t prtype;
	uint8_t cms;
	uint8_t rsvd3[5];
	uint16_t pkey;
	uint8_t rsvd10[246];
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_rdma_tsas) == 256, "RDMA TSAS size");
NVME_STATIC_ASSERT(offsetof(struct nvme_rdma_tsas, pkey) == 8, "TSAS pkey");

#define NVME_TRSVCID_LEN 32
#define NVME_TRADDR_LEN	 256

/* One Discovery Log Page entry (1024 bytes). */
struct nvme_disc_entry {
	uint8_t trtype;
	uint8_t adrfam;
	uint8_t subtype;
	uint8_t treq;
	uint16_t portid;
	uint16_t cntlid;
	uint16_t asqsz;
	uint16_t eflags;
	uint8_t rsvd12[20];
	char trsvcid[NVME_TRSVCID_LEN]; /* ASCII, space padded */
	uint8_t rsvd64[192];
	char subnqn[NVME_NQN_FIELD];  /* NUL terminated */
	char traddr[NVME_TRADDR_LEN]; /* ASCII, space padded */
	struct nvme_rdma_tsas tsas;
} NVME_PACKED;

/* Discovery Log Page header (1024 bytes; entries follow). */
struct nvme_disc_hdr {
	uint64_t genctr;
	uint64_t numrec;
	uint16_t recfmt;
	uint8_t rsvd18[1006];
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_disc_entry) == 1024, "disc entry");
NVME_STATIC_ASSERT(offsetof(struct nvme_disc_entry, portid) == 4, "portid");
NVME_STATIC_ASSERT(offsetof(struct nvme_disc_entry, asqsz) == 8, "asqsz");
NVME_STATIC_ASSERT(offsetof(struct nvme_disc_entry, trsvcid) == 32, "svcid");
NVME_STATIC_ASSERT(offsetof(struct nvme_disc_entry, subnqn) == 256, "subnqn");
NVME_STATIC_ASSERT(offsetof(struct nvme_disc_entry, traddr) == 512, "traddr");
NVME_STATIC_ASSERT(offsetof(struct nvme_disc_entry, tsas) == 768, "tsas");
NVME_STATIC_ASSERT(sizeof(struct nvme_disc_hdr) == 1024, "disc header");
NVME_STATIC_ASSERT(offsetof(struct nvme_disc_hdr, numrec) == 8, "numrec");
NVME_STATIC_ASSERT(offsetof(struct nvme_disc_hdr, recfmt) == 16, "recfmt");

/* ---- RDMA CM private data (RDMA transport binding) ------------------ */

#define NVME_RDMA_RECFMT 0x0000 /* the only record format */

/* RDMA_CM_REQUEST private data, host to controller (32 bytes). */
struct nvme_rdma_cm_req {
	uint16_t recfmt;
	uint16_t qid;
	uint16_t hrqsize; /* host receive queue size (entries) */
	uint16_t hsqsize; /* host send queue size, 0's based (= SQSIZE) */
	uint16_t cntlid;  /* I/O queues: the controller's ID (TP 8012) */
	uint8_t rsvd10[22];
} NVME_PACKED;

/* RDMA_CM_ACCEPT private data, controller to host (32 bytes). */
struct nvme_rdma_cm_rep {
	uint16_t recfmt;
	uint16_t crqsize; /* controller receive queue size (entries) */
	uint8_t rsvd4[28];
} NVME_PACKED;

/* RDMA_CM_REJECT private data, controller to host (4 bytes). */
struct nvme_rdma_cm_rej {
	uint16_t recfmt;
	uint16_t sts;
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_rdma_cm_req) == 32, "CM REQ size");
NVME_STATIC_ASSERT(offsetof(struct nvme_rdma_cm_req, qid) == 2, "REQ qid");
NVME_STATIC_ASSERT(offsetof(struct nvme_rdma_cm_req, hrqsize) == 4, "hrq");
NVME_STATIC_ASSERT(offsetof(struct nvme_rdma_cm_req, hsqsize) == 6, "hsq");
NVME_STATIC_ASSERT(offsetof(struct nvme_rdma_cm_req, cntlid) == 8, "cntlid");
NVME_STATIC_ASSERT(sizeof(struct nvme_rdma_cm_rep) == 32, "CM ACCEPT size");
NVME_STATIC_ASSERT(offsetof(struct nvme_rdma_cm_rep, crqsize) == 2, "crq");
NVME_STATIC_ASSERT(sizeof(struct nvme_rdma_cm_rej) == 4, "CM REJ size");
NVME_STATIC_ASSERT(offsetof(struct nvme_rdma_cm_rej, sts) == 2, "REJ sts");

/* RDMA_CM_REJECT status codes. */
enum nvme_rdma_cm_sts {
	NVME_RDMA_CM_INVALID_LEN = 0x01,     /* invalid private data length */
	NVME_RDMA_CM_INVALID_RECFMT = 0x02,  /* invalid record format */
	NVME_RDMA_CM_INVALID_QID = 0x03,     /* invalid queue ID */
	NVME_RDMA_CM_INVALID_HSQSIZE = 0x04, /* invalid host SQ size */
	NVME_RDMA_CM_INVALID_HRQSIZE = 0x05, /* invalid host RQ size */
	NVME_RDMA_CM_NO_RSC = 0x06,	     /* no resources */
	NVME_RDMA_CM_INVALID_IRD = 0x07,     /* invalid IRD */
	NVME_RDMA_CM_INVALID_ORD = 0x08,     /* invalid ORD */
	NVME_RDMA_CM_INVALID_CNTLID = 0x09,  /* invalid controller ID */
};

#ifdef __cplusplus
}
#endif

#endif /* WHARF_PROTO_NVME_SPEC_FABRICS_H */
