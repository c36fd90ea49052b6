/*
 * proto/nvme/spec.h - NVMe base wire structures: the 64-byte submission
 * queue entry (with the Fabrics command variants), the 16-byte completion
 * queue entry, SGL descriptors, opcodes and status codes.
 *
 * Sources: NVM Express Base 1.4, NVMe over Fabrics 1.1 and the NVMe RDMA
 * Transport Binding 1.0. Every structure is packed and its size and the
 * offsets that are read are pinned with _Static_assert. Multi-byte
 * fields are little-endian on the wire; wharf runs on little-endian
 * machines only (asserted below), so fields are read directly. Never take the
 * address of a member of a packed structure (it may be unaligned).
 */
#ifndef WHARF_PROTO_NVME_SPEC_H
#define WHARF_PROTO_NVME_SPEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define NVME_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define NVME_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

#define NVME_PACKED __attribute__((packed))

NVME_STATIC_ASSERT(
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	"NVMe wire structures are read in place: little-endian only");

/* ---- SGL descriptors (NVMe 1.4 4.4) -------------------------------- */

/* Descriptor type, bits 7:4 of byte 15. */
#define NVME_SGL_TYPE_DATA_BLOCK   0x0
#define NVME_SGL_TYPE_BIT_BUCKET   0x1
#define NVME_SGL_TYPE_SEGMENT	   0x2
#define NVME_SGL_TYPE_LAST_SEGMENT 0x3
#define NVME_SGL_TYPE_KEYED_DATA   0x4
#define NVME_SGL_TYPE_TRANSPORT	   0x5
/* Descriptor subtype, bits 3:0 of byte 15. */
#define NVME_SGL_SUB_ADDRESS	0x0
#define NVME_SGL_SUB_OFFSET	0x1 /* in-capsule data: addr is an offset */
#define NVME_SGL_SUB_INVALIDATE 0xF /* keyed (RDMA): invalidate the key */

/* Keyed SGL data block lengths are 24-bit. */
#define NVME_SGL_KEYED_LEN_MAX 0xFFFFFFu

/* One 16-byte SGL descriptor; unkeyed and keyed (RDMA) layouts. */
struct nvme_sgl {
	uint64_t addr; /* address, or offset into in-capsule data */
	union {
		struct {
			uint32_t len;
			uint8_t rsvd[3];
			uint8_t type; /* type << 4 | subtype */
		} NVME_PACKED unkeyed;
		struct {
			uint8_t len[3]; /* 24-bit little-endian length */
			uint32_t key;	/* remote key (rkey) */
			uint8_t type;
		} NVME_PACKED keyed;
	};
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_sgl) == 16, "SGL descriptor size");
NVME_STATIC_ASSERT(offsetof(struct nvme_sgl, unkeyed.len) == 8, "SGL len");
NVME_STATIC_ASSERT(offsetof(struct nvme_sgl, unkeyed.type) == 15, "SGL type");
NVME_STATIC_ASSERT(offsetof(struct nvme_sgl, keyed.len) == 8, "keyed len");
NVME_STATIC_ASSERT(offsetof(struct nvme_sgl, keyed.key) == 11, "keyed key");
NVME_STATIC_ASSERT(offsetof(struct nvme_sgl, keyed.type) == 15, "keyed type");

/* ---- Submission queue entry ---------------------------------------- */

#define NVME_SQE_SIZE 64
#define NVME_CQE_SIZE 16

/* Byte 1 of the SQE: FUSE (1:0) and PSDT (7:6). */
#define NVME_FLAGS_FUSE_MASK 0x03
#define NVME_FLAGS_PSDT_MASK 0xC0
#define NVME_FLAGS_PSDT_SGL  0x40 /* 01b: SGL, MPTR contiguous (fabrics) */

/* The generic command layout. */
struct nvme_sqe {
	uint8_t opc;
	uint8_t flags;
	uint16_t cid;
	uint32_t nsid;
	uint32_t cdw2;
	uint32_t cdw3;
	uint64_t mptr;
	struct nvme_sgl sgl; /* DPTR: SGL entry 1 */
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_sqe) == NVME_SQE_SIZE, "SQE size");
NVME_STATIC_ASSERT(offsetof(struct nvme_sqe, cid) == 2, "SQE cid");
NVME_STATIC_ASSERT(offsetof(struct nvme_sqe, nsid) == 4, "SQE nsid");
NVME_STATIC_ASSERT(offsetof(struct nvme_sqe, sgl) == 24, "SQE dptr");
NVME_STATIC_ASSERT(offsetof(struct nvme_sqe, cdw10) == 40, "SQE cdw10");
NVME_STATIC_ASSERT(offsetof(struct nvme_sqe, cdw15) == 60, "SQE cdw15");

/* Fabrics command (opcode 0x7F): common layout (NVMe-oF 1.1 2.2). */
struct nvme_fabrics_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd5[19];
	struct nvme_sgl sgl;
	uint8_t specific[24];
} NVME_PACKED;

/* Connect (fctype 0x01). */
struct nvme_connect_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd5[19];
	struct nvme_sgl sgl;
	uint16_t recfmt;
	uint16_t qid;
	uint16_t sqsize; /* 0's based */
	uint8_t cattr;
	uint8_t rsvd47;
	uint32_t kato; /* milliseconds */
	uint8_t rsvd52[12];
} NVME_PACKED;

/* Connect CATTR bit 2: the host asks to disable SQ flow control. */
#define NVME_CATTR_DISABLE_SQFLOW 0x04

/* Property Get (fctype 0x04) and Property Set (fctype 0x00). */
struct nvme_prop_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd5[35];
	uint8_t attrib; /* bits 2:0 size: 0 = 4 bytes, 1 = 8 bytes */
	uint8_t rsvd41[3];
	uint32_t ofst;
	uint64_t value; /* Property Set only */
	uint8_t rsvd56[8];
} NVME_PACKED;

/* Disconnect (fctype 0x08, NVMe-oF 1.1): I/O queues only. */
struct nvme_disconnect_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd5[35];
	uint16_t recfmt;
	uint8_t rsvd42[22];
} NVME_PACKED;

/* Every view of one 64-byte command. */
union nvme_cmd {
	struct nvme_sqe common;
	struct nvme_fabrics_cmd fabrics;
	struct nvme_connect_cmd connect;
	struct nvme_prop_cmd prop;
	struct nvme_disconnect_cmd disconnect;
	uint8_t bytes[NVME_SQE_SIZE];
};

NVME_STATIC_ASSERT(sizeof(struct nvme_fabrics_cmd) == 64, "fabrics size");
NVME_STATIC_ASSERT(offsetof(struct nvme_fabrics_cmd, fctype) == 4, "fctype");
NVME_STATIC_ASSERT(offsetof(struct nvme_fabrics_cmd, sgl) == 24, "fab sgl");
NVME_STATIC_ASSERT(sizeof(struct nvme_connect_cmd) == 64, "connect size");
NVME_STATIC_ASSERT(offsetof(struct nvme_connect_cmd, recfmt) == 40, "recfmt");
NVME_STATIC_ASSERT(offsetof(struct nvme_connect_cmd, qid) == 42, "qid");
NVME_STATIC_ASSERT(offsetof(struct nvme_connect_cmd, sqsize) == 44, "sqsize");
NVME_STATIC_ASSERT(offsetof(struct nvme_connect_cmd, cattr) == 46, "cattr");
NVME_STATIC_ASSERT(offsetof(struct nvme_connect_cmd, kato) == 48, "kato");
NVME_STATIC_ASSERT(sizeof(struct nvme_prop_cmd) == 64, "property size");
NVME_STATIC_ASSERT(offsetof(struct nvme_prop_cmd, attrib) == 40, "attrib");
NVME_STATIC_ASSERT(offsetof(struct nvme_prop_cmd, ofst) == 44, "ofst");
NVME_STATIC_ASSERT(offsetof(struct nvme_prop_cmd, value) == 48, "value");
NVME_STATIC_ASSERT(sizeof(struct nvme_disconnect_cmd) == 64, "disc size");
NVME_STATIC_ASSERT(offsetof(struct nvme_disconnect_cmd, recfmt) == 40,
		   "disconnect recfmt");
NVME_STATIC_ASSERT(sizeof(union nvme_cmd) == 64, "command union size");

/* Byte offsets inside the SQE, reported as Connect's IPO. */
#define NVME_IPO_CMD_QID    42
#define NVME_IPO_CMD_SQSIZE 44
#define NVME_IPO_CMD_RECFMT 40

/* ---- Completion queue entry ---------------------------------------- */

struct nvme_cqe {
	uint64_t result; /* DW0 (and DW1: Property Get of an 8-byte value) */
	uint16_t sqhd;
	uint16_t sqid;
	uint16_t cid;
	uint16_t status; /* bit 0 phase tag (reserved on fabrics), 15:1 SF */
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_cqe) == NVME_CQE_SIZE, "CQE size");
NVME_STATIC_ASSERT(offsetof(struct nvme_cqe, sqhd) == 8, "CQE sqhd");
NVME_STATIC_ASSERT(offsetof(struct nvme_cqe, cid) == 12, "CQE cid");
NVME_STATIC_ASSERT(offsetof(struct nvme_cqe, status) == 14, "CQE status");

/* Connect response DW0 on Connect Invalid Parameters: IPO 15:0, IATTR. */
#define NVME_CONNECT_IATTR_CMD	     0 /* IPO is an offset into the SQE */
#define NVME_CONNECT_IATTR_DATA	     1 /* IPO is an offset into the data */
#define NVME_CONNECT_IPO(iattr, ipo) ((uint32_t)(ipo) | (uint32_t)(iattr) << 16)

/* SQHD of the Connect response when SQ flow control was disabled. */
#define NVME_SQHD_DISABLED 0xFFFF

/*
 * Status field, as the 15 bits above the phase tag: SC 7:0, SCT 10:8,
 * CRD 12:11, M 13, DNR 14. The CQE holds it shifted left by one.
 */
#define NVME_SCT_GENERIC     0x0
#define NVME_SCT_CMD	     0x1 /* command specific */
#define NVME_SCT_MEDIA	     0x2 /* media and data integrity errors */
#define NVME_DNR	     0x4000
#define NVME_STATUS(sct, sc) ((uint16_t)((sct) << 8 | (sc)))
#define NVME_STATUS_SCT(s)   (((s) >> 8) & 0x7)
#define NVME_STATUS_SC(s)    ((s)&0xFF)

/* Generic command status (SCT 0). */
#define NVME_SC_SUCCESS		  0x00
#define NVME_SC_INVALID_OPCODE	  0x01
#define NVME_SC_INVALID_FIELD	  0x02
#define NVME_SC_CID_CONFLICT	  0x03
#define NVME_SC_DATA_XFER_ERROR	  0x04
#define NVME_SC_INTERNAL	  0x06
#define NVME_SC_ABORT_REQ	  0x07
#define NVME_SC_ABORT_SQ_DELETED  0x08
#define NVME_SC_INVALID_NS	  0x0B
#define NVME_SC_CMD_SEQ_ERROR	  0x0C
#define NVME_SC_SGL_INVALID_SEG	  0x0D
#define NVME_SC_SGL_INVALID_COUNT 0x0E
#define NVME_SC_SGL_INVALID_DLEN  0x0F
#define NVME_SC_SGL_INVALID_MLEN  0x10
#define NVME_SC_SGL_INVALID_TYPE  0x11
#define NVME_SC_SGL_INVALID_OFS	  0x16
#define NVME_SC_KA_EXPIRED	  0x19
#define NVME_SC_KA_INVALID	  0x1A
#define NVME_SC_NS_WRITE_PROT	  0x20
#define NVME_SC_TRANSIENT_XPORT	  0x22
#define NVME_SC_LBA_RANGE	  0x80
#define NVME_SC_CAP_EXCEEDED	  0x81
#define NVME_SC_NS_NOT_READY	  0x82

/* Command specific status (SCT 1). */
#define NVME_SC_ABORT_LIMIT	      0x03
#define NVME_SC_AER_LIMIT	      0x05
#define NVME_SC_INVALID_LOG_PAGE      0x09
#define NVME_SC_FEAT_NOT_SAVEABLE     0x0D
#define NVME_SC_FEAT_NOT_CHANGEABLE   0x0E
#define NVME_SC_CONNECT_INCOMPAT_FMT  0x80
#define NVME_SC_CONNECT_CTRL_BUSY     0x81
#define NVME_SC_CONNECT_INVALID_PARAM 0x82
#define NVME_SC_CONNECT_RESTART_DISC  0x83
#define NVME_SC_CONNECT_INVALID_HOST  0x84
#define NVME_SC_INVALID_QUEUE_TYPE    0x85

/* Media and data integrity errors (SCT 2). */
#define NVME_SC_WRITE_FAULT	 0x80
#define NVME_SC_UNRECOVERED_READ 0x81

/* ---- Opcodes -------------------------------------------------------- */

#define NVME_OPC_FABRICS 0x7F

/* Fabrics command types. */
#define NVME_FCTYPE_PROP_SET   0x00
#define NVME_FCTYPE_CONNECT    0x01
#define NVME_FCTYPE_PROP_GET   0x04
#define NVME_FCTYPE_AUTH_SEND  0x05
#define NVME_FCTYPE_AUTH_RECV  0x06
#define NVME_FCTYPE_DISCONNECT 0x08

/* Admin opcodes. */
#define NVME_ADM_DELETE_SQ     0x00
#define NVME_ADM_CREATE_SQ     0x01
#define NVME_ADM_GET_LOG_PAGE  0x02
#define NVME_ADM_DELETE_CQ     0x04
#define NVME_ADM_CREATE_CQ     0x05
#define NVME_ADM_IDENTIFY      0x06
#define NVME_ADM_ABORT	       0x08
#define NVME_ADM_SET_FEATURES  0x09
#define NVME_ADM_GET_FEATURES  0x0A
#define NVME_ADM_ASYNC_EVENT   0x0C
#define NVME_ADM_KEEP_ALIVE    0x18
#define NVME_ADM_DOORBELL_BUF  0x7C
#define NVME_ADM_FORMAT_NVM    0x80
#define NVME_ADM_SECURITY_SEND 0x81

/* NVM command set (I/O) opcodes. */
#define NVME_IO_FLUSH	     0x00
#define NVME_IO_WRITE	     0x01
#define NVME_IO_READ	     0x02
#define NVME_IO_WRITE_UNCOR  0x04
#define NVME_IO_COMPARE	     0x05
#define NVME_IO_WRITE_ZEROES 0x08
#define NVME_IO_DSM	     0x09

/* Read / Write / Write Zeroes CDW12 bits. */
#define NVME_RW_NLB_MASK 0xFFFFu
#define NVME_RW_DEAC	 (1u << 25) /* Write Zeroes: deallocate */
#define NVME_RW_FUA	 (1u << 30)
#define NVME_RW_LR	 (1u << 31)

/* Dataset Management: CDW10 NR 7:0 (0's based), CDW11 attributes. */
#define NVME_DSM_NR_MASK    0xFFu
#define NVME_DSM_AD	    (1u << 2) /* deallocate */
#define NVME_DSM_MAX_RANGES 256

/* One Dataset Management range. */
struct nvme_dsm_range {
	uint32_t cattr;
	uint32_t nlb; /* NOT 0's based */
	uint64_t slba;
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_dsm_range) == 16, "DSM range size");
NVME_STATIC_ASSERT(offsetof(struct nvme_dsm_range, slba) == 8, "DSM slba");

/* Namespace IDs. */
#define NVME_NSID_ALL 0xFFFFFFFFu

#ifdef __cplusplus
}
#endif

#endif /* WHARF_PROTO_NVME_SPEC_H */
