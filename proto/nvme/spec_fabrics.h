/*
 * proto/nvme/spec_fabrics.h - NVMe over Fabrics wire structures: the
 * Connect command's 1024-byte data, the Discovery Log Page (header,
 * entries, RDMA transport specific address subtype), the RDMA CM
 * private data of the NVMe RDMA transport binding (REQ, ACCEPT, REJ and
 * the REJ status codes) and in-band authentication (Authentication
 * Send / Receive and the DH-HMAC-CHAP messages).
 *
 * Sources: NVMe over Fabrics 1.1 (3.3, 5.3), NVMe RDMA Transport
 * Specification 1.0 (3.1), NVM Express Base 2.0 (6.2, 6.3, 8.13) and
 * the Linux kernel's include/linux/nvme.h for the names. Sizes and
 * offsets pinned with _Static_assert.
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

/* ---- In-band authentication (NVMe base 2.0 6.2, 6.3, 8.13) --------- */

/*
 * Connect response DW0 (with the controller ID in 15:0), AUTHREQ:
 * ATR, an authentication transaction is required before any other
 * command on this queue; ASCR, authentication and a secure channel
 * (TLS, not on RDMA) are required.
 */
#define NVME_CONNECT_AUTHREQ_ATR  (1u << 17)
#define NVME_CONNECT_AUTHREQ_ASCR (1u << 18)

/* Command specific status (SCT 1): a command arrived before authentication. */
#define NVME_SC_AUTH_REQUIRED 0x91

/*
 * Authentication Send (fctype 0x05: TL bytes host to controller) and
 * Authentication Receive (fctype 0x06: at most AL bytes back). CDW10
 * carries SECP 31:24, SPSP1 23:16, SPSP0 15:8; CDW11 is TL or AL.
 */
struct nvme_auth_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd5[19];
	struct nvme_sgl sgl;
	uint8_t rsvd40;
	uint8_t spsp0;
	uint8_t spsp1;
	uint8_t secp;
	uint32_t tl_al; /* Send: TL, Receive: AL (bytes) */
	uint8_t rsvd48[16];
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_auth_cmd) == 64, "auth cmd size");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_cmd, spsp0) == 41, "spsp0");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_cmd, spsp1) == 42, "spsp1");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_cmd, secp) == 43, "secp");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_cmd, tl_al) == 44, "tl/al");

/* SECP of NVMe in-band authentication, and its only SPSP0 / SPSP1. */
#define NVME_AUTH_SECP	0xE9
#define NVME_AUTH_SPSP0 0x01
#define NVME_AUTH_SPSP1 0x01

/* AUTH_TYPE of a message: common (Negotiate, Failure) or DH-HMAC-CHAP. */
#define NVME_AUTH_TYPE_COMMON 0x00
#define NVME_AUTH_TYPE_DHCHAP 0x01

/* AUTH_ID of a message. */
#define NVME_AUTH_MSG_NEGOTIATE 0x00 /* AUTH_Negotiate (common) */
#define NVME_AUTH_MSG_CHALLENGE 0x01 /* DH-HMAC-CHAP_Challenge */
#define NVME_AUTH_MSG_REPLY	0x02 /* DH-HMAC-CHAP_Reply */
#define NVME_AUTH_MSG_SUCCESS1	0x03 /* DH-HMAC-CHAP_Success1 */
#define NVME_AUTH_MSG_SUCCESS2	0x04 /* DH-HMAC-CHAP_Success2 */
#define NVME_AUTH_MSG_FAILURE2	0xF0 /* AUTH_Failure2 (common, host) */
#define NVME_AUTH_MSG_FAILURE1	0xF1 /* AUTH_Failure1 (common, ctrl) */

/* Protocol descriptor AUTHID: DH-HMAC-CHAP. */
#define NVME_AUTH_ID_DHCHAP 0x01

/* Hash function identifiers (HASHID). */
#define NVME_AUTH_HASH_SHA256 0x01
#define NVME_AUTH_HASH_SHA384 0x02
#define NVME_AUTH_HASH_SHA512 0x03

/* Diffie-Hellman group identifiers (DHGID), RFC 7919 groups. */
#define NVME_AUTH_DHGROUP_NULL 0x00
#define NVME_AUTH_DHGROUP_2048 0x01
#define NVME_AUTH_DHGROUP_3072 0x02
#define NVME_AUTH_DHGROUP_4096 0x03
#define NVME_AUTH_DHGROUP_6144 0x04
#define NVME_AUTH_DHGROUP_8192 0x05

/* SC_C of AUTH_Negotiate: secure channel concatenation (TCP only). */
#define NVME_AUTH_SC_NONE	   0x00
#define NVME_AUTH_SC_SC		   0x01
#define NVME_AUTH_SC_NEWTLSPSK	   0x02
#define NVME_AUTH_SC_REPLACETLSPSK 0x03

/* Failure messages: the reason code and its explanations. */
#define NVME_AUTH_RC_FAILED 0x01 /* authentication failure */

#define NVME_AUTH_RCE_FAILED		0x01 /* authentication failed */
#define NVME_AUTH_RCE_NOT_USABLE	0x02 /* protocol not usable */
#define NVME_AUTH_RCE_CONCAT_MISMATCH	0x03 /* secure channel mismatch */
#define NVME_AUTH_RCE_HASH_UNUSABLE	0x04 /* hash function not usable */
#define NVME_AUTH_RCE_DHGROUP_UNUSABLE	0x05 /* DH group not usable */
#define NVME_AUTH_RCE_INCORRECT_PAYLOAD 0x06 /* incorrect payload */
#define NVME_AUTH_RCE_INCORRECT_MESSAGE 0x07 /* incorrect protocol message */

/* The hash and DH group lists of a protocol descriptor: 30 slots each. */
#define NVME_AUTH_MAX_HASH_IDS 30
#define NVME_AUTH_MAX_DH_IDS   30

/* DH-HMAC-CHAP protocol descriptor (64 bytes) of AUTH_Negotiate. */
struct nvme_auth_dhchap_desc {
	uint8_t authid; /* NVME_AUTH_ID_DHCHAP */
	uint8_t rsvd1;
	uint8_t halen; /* hash IDs in hash_ids[] */
	uint8_t dhlen; /* DH group IDs in dh_ids[] */
	uint8_t hash_ids[NVME_AUTH_MAX_HASH_IDS];
	uint8_t dh_ids[NVME_AUTH_MAX_DH_IDS];
} NVME_PACKED;

/* AUTH_Negotiate (host to controller): napd descriptors follow. */
struct nvme_auth_negotiate {
	uint8_t auth_type; /* NVME_AUTH_TYPE_COMMON */
	uint8_t auth_id;   /* NVME_AUTH_MSG_NEGOTIATE */
	uint16_t rsvd2;
	uint16_t t_id;
	uint8_t sc_c;
	uint8_t napd; /* number of protocol descriptors */
} NVME_PACKED;

/*
 * DH-HMAC-CHAP_Challenge (controller to host): hl bytes of challenge C1
 * follow, then dhvlen bytes of the controller's DH public value.
 */
struct nvme_auth_challenge {
	uint8_t auth_type; /* NVME_AUTH_TYPE_DHCHAP */
	uint8_t auth_id;   /* NVME_AUTH_MSG_CHALLENGE */
	uint16_t rsvd2;
	uint16_t t_id;
	uint8_t hl; /* hash length */
	uint8_t rsvd7;
	uint8_t hashid;
	uint8_t dhgid;
	uint16_t dhvlen;
	uint32_t seqnum; /* S1 */
} NVME_PACKED;

/*
 * DH-HMAC-CHAP_Reply (host to controller): hl bytes of response R1,
 * hl bytes of challenge C2 (zero unless cvalid), then dhvlen bytes of
 * the host's DH public value.
 */
struct nvme_auth_reply {
	uint8_t auth_type; /* NVME_AUTH_TYPE_DHCHAP */
	uint8_t auth_id;   /* NVME_AUTH_MSG_REPLY */
	uint16_t rsvd2;
	uint16_t t_id;
	uint8_t hl;
	uint8_t rsvd7;
	uint8_t cvalid; /* bit 0: C2 is valid (bidirectional) */
	uint8_t rsvd9;
	uint16_t dhvlen;
	uint32_t seqnum; /* S2 */
} NVME_PACKED;

/* DH-HMAC-CHAP_Success1 (controller to host): hl bytes of R2 follow. */
struct nvme_auth_success1 {
	uint8_t auth_type; /* NVME_AUTH_TYPE_DHCHAP */
	uint8_t auth_id;   /* NVME_AUTH_MSG_SUCCESS1 */
	uint16_t rsvd2;
	uint16_t t_id;
	uint8_t hl;
	uint8_t rsvd7;
	uint8_t rvalid; /* bit 0: R2 is valid; else R2 is zero */
	uint8_t rsvd9[7];
} NVME_PACKED;

/* DH-HMAC-CHAP_Success2 (host to controller). */
struct nvme_auth_success2 {
	uint8_t auth_type; /* NVME_AUTH_TYPE_DHCHAP */
	uint8_t auth_id;   /* NVME_AUTH_MSG_SUCCESS2 */
	uint16_t rsvd2;
	uint16_t t_id;
	uint8_t rsvd6[10];
} NVME_PACKED;

/* AUTH_Failure1 (controller to host) and AUTH_Failure2 (host to ctrl). */
struct nvme_auth_failure {
	uint8_t auth_type; /* NVME_AUTH_TYPE_COMMON */
	uint8_t auth_id;   /* NVME_AUTH_MSG_FAILURE1 / _FAILURE2 */
	uint16_t rsvd2;
	uint16_t t_id;
	uint8_t rescode;     /* NVME_AUTH_RC_FAILED */
	uint8_t rescode_exp; /* NVME_AUTH_RCE_* */
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_auth_dhchap_desc) == 64, "desc");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_dhchap_desc, hash_ids) == 4,
		   "desc hash ids");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_dhchap_desc, dh_ids) == 34,
		   "desc DH ids");
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_negotiate) == 8, "negotiate");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_negotiate, t_id) == 4, "t_id");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_negotiate, napd) == 7, "napd");
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_challenge) == 16, "challenge");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_challenge, hl) == 6, "chal hl");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_challenge, hashid) == 8,
		   "challenge hashid");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_challenge, dhvlen) == 10,
		   "challenge dhvlen");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_challenge, seqnum) == 12,
		   "challenge seqnum");
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_reply) == 16, "reply");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_reply, cvalid) == 8, "cvalid");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_reply, dhvlen) == 10, "dhvlen");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_reply, seqnum) == 12, "seqnum");
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_success1) == 16, "success1");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_success1, rvalid) == 8,
		   "success1 rvalid");
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_success2) == 16, "success2");
NVME_STATIC_ASSERT(sizeof(struct nvme_auth_failure) == 8, "failure");
NVME_STATIC_ASSERT(offsetof(struct nvme_auth_failure, rescode) == 6,
		   "failure rescode");

#ifdef __cplusplus
}
#endif

#endif /* WHARF_PROTO_NVME_SPEC_FABRICS_H */
