/*
 * proto/nvme/spec_data.h - NVMe data structures a controller returns:
 * Identify Controller / Namespace / Active Namespace ID list / Namespace
 * Identification Descriptors, the Error Information, SMART / Health and
 * Changed Namespace List log pages, and the property (register) layout.
 *
 * Source: NVM Express Base 1.4 (5.15, 5.14.1). Sizes and the offsets
 * that are filled are pinned with _Static_assert; fields no wharf
 * controller sets are folded into reserved arrays.
 */
#ifndef WHARF_PROTO_NVME_SPEC_DATA_H
#define WHARF_PROTO_NVME_SPEC_DATA_H

#include "proto/nvme/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NVME_IDENTIFY_SIZE 4096

/* Identify CNS values served. */
#define NVME_CNS_NS	     0x00
#define NVME_CNS_CTRL	     0x01
#define NVME_CNS_ACTIVE_NSL  0x02
#define NVME_CNS_NS_DESCLIST 0x03
/* I/O Command Set specific Identify Controller (the host asks for it). */
#define NVME_CNS_CS_CTRL 0x06
/* Identify CDW11 31:24: Command Set Identifier; NVM is 0. */
#define NVME_CSI_NVM 0x00

/* Power state descriptor (32 bytes). */
struct nvme_psd {
	uint16_t mp; /* maximum power, centiwatts */
	uint8_t rsvd2;
	uint8_t flags;
	uint32_t enlat;
	uint32_t exlat;
	uint8_t rrt;
	uint8_t rrl;
	uint8_t rwt;
	uint8_t rwl;
	uint8_t rsvd16[16];
} NVME_PACKED;

/* Identify Controller data structure (CNS 01h). */
struct nvme_id_ctrl {
	uint16_t vid;
	uint16_t ssvid;
	char sn[20]; /* ASCII, space padded */
	char mn[40];
	char fr[8];
	uint8_t rab;
	uint8_t ieee[3];
	uint8_t cmic;
	uint8_t mdts;
	uint16_t cntlid;
	uint32_t ver;
	uint32_t rtd3r;
	uint32_t rtd3e;
	uint32_t oaes;
	uint32_t ctratt;
	uint8_t rsvd100[11];
	uint8_t cntrltype;
	uint8_t fguid[16];
	uint8_t rsvd128[128];
	uint16_t oacs;
	uint8_t acl;
	uint8_t aerl;
	uint8_t frmw;
	uint8_t lpa;
	uint8_t elpe;
	uint8_t npss;
	uint8_t avscc;
	uint8_t apsta;
	uint16_t wctemp;
	uint16_t cctemp;
	uint8_t rsvd270[50];
	uint16_t kas;
	uint8_t rsvd322[190];
	uint8_t sqes;
	uint8_t cqes;
	uint16_t maxcmd;
	uint32_t nn;
	uint16_t oncs;
	uint16_t fuses;
	uint8_t fna;
	uint8_t vwc;
	uint16_t awun;
	uint16_t awupf;
	uint8_t nvscc;
	uint8_t nwpc;
	uint16_t acwu;
	uint8_t rsvd534[2];
	uint32_t sgls;
	uint32_t mnan;
	uint8_t rsvd544[224];
	char subnqn[256];
	uint8_t rsvd1024[768];
	/* NVMe over Fabrics attributes. */
	uint32_t ioccsz; /* I/O command capsule size, 16-byte units */
	uint32_t iorcsz; /* I/O response capsule size, 16-byte units */
	uint16_t icdoff; /* in-capsule data offset, 16-byte units */
	uint8_t fcatt;	 /* bit 0: static controller model */
	uint8_t msdbd;	 /* max SGL data block descriptors */
	uint16_t ofcs;
	uint8_t rsvd1806[242];
	struct nvme_psd psd[32];
	uint8_t vs[1024];
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_psd) == 32, "power state size");
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ctrl) == NVME_IDENTIFY_SIZE,
		   "Identify Controller size");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, sn) == 4, "sn");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, mn) == 24, "mn");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, fr) == 64, "fr");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, cmic) == 76, "cmic");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, mdts) == 77, "mdts");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, cntlid) == 78, "cntlid");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, ver) == 80, "ver");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, oaes) == 92, "oaes");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, cntrltype) == 111, "type");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, oacs) == 256, "oacs");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, aerl) == 259, "aerl");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, lpa) == 261, "lpa");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, elpe) == 262, "elpe");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, wctemp) == 266, "wctemp");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, kas) == 320, "kas");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, sqes) == 512, "sqes");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, maxcmd) == 514, "maxcmd");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, nn) == 516, "nn");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, oncs) == 520, "oncs");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, vwc) == 525, "vwc");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, sgls) == 536, "sgls");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, subnqn) == 768, "subnqn");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, ioccsz) == 1792, "ioccsz");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, iorcsz) == 1796, "iorcsz");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, icdoff) == 1800, "icdoff");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, fcatt) == 1802, "fcatt");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, msdbd) == 1803, "msdbd");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, psd) == 2048, "psd");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, vs) == 3072, "vs");

/* I/O Command Set specific Identify Controller, NVM (CNS 06h, CSI 0):
 * size limits of Verify, Write Zeroes, Write Uncorrectable (powers of
 * two of CAP.MPSMIN units, 0 = none) and of Dataset Management (ranges,
 * blocks per range, blocks per command; 0 = none). */
struct nvme_id_ctrl_nvm {
	uint8_t vsl;
	uint8_t wzsl;
	uint8_t wusl;
	uint8_t dmrl;
	uint32_t dmrsl;
	uint64_t dmsl;
	uint8_t rsvd16[4080];
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_id_ctrl_nvm) == NVME_IDENTIFY_SIZE,
		   "Identify NVM controller size");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl_nvm, dmrsl) == 4, "dmrsl");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl_nvm, dmsl) == 8, "dmsl");

/* Identify Controller bits (those a wharf controller sets). */
#define NVME_CMIC_MULTI_CTRL	   (1u << 1)
#define NVME_OAES_NS_ATTR	   (1u << 8)
#define NVME_LPA_EXT_DATA	   (1u << 2)
#define NVME_ONCS_DSM		   (1u << 2)
#define NVME_ONCS_WRITE_ZEROES	   (1u << 3)
#define NVME_VWC_PRESENT	   (1u << 0)
#define NVME_SGLS_SUPPORTED	   (1u << 0)
#define NVME_SGLS_KEYED		   (1u << 2)
#define NVME_SGLS_LONGER_THAN_DATA (1u << 18)
#define NVME_SGLS_OFFSET	   (1u << 20)

/* LBA format descriptor. */
struct nvme_lbaf {
	uint16_t ms;
	uint8_t lbads; /* log2 of the block size */
	uint8_t rp;
} NVME_PACKED;

/* Identify Namespace data structure (CNS 00h). */
struct nvme_id_ns {
	uint64_t nsze;
	uint64_t ncap;
	uint64_t nuse;
	uint8_t nsfeat;
	uint8_t nlbaf; /* 0's based */
	uint8_t flbas;
	uint8_t mc;
	uint8_t dpc;
	uint8_t dps;
	uint8_t nmic;
	uint8_t rescap;
	uint8_t fpi;
	uint8_t dlfeat;
	uint16_t nawun;
	uint16_t nawupf;
	uint16_t nacwu;
	uint16_t nabsn;
	uint16_t nabo;
	uint16_t nabspf;
	uint16_t noiob;
	uint8_t nvmcap[16];
	uint16_t npwg; /* preferred write granularity, 0's based blocks */
	uint16_t npwa; /* preferred write alignment */
	uint16_t npdg; /* preferred deallocate granularity */
	uint16_t npda; /* preferred deallocate alignment */
	uint16_t nows; /* optimal write size */
	uint8_t rsvd74[18];
	uint32_t anagrpid;
	uint8_t rsvd96[3];
	uint8_t nsattr;
	uint16_t nvmsetid;
	uint16_t endgid;
	uint8_t nguid[16];
	uint8_t eui64[8];
	struct nvme_lbaf lbaf[16];
	uint8_t rsvd192[192];
	uint8_t vs[3712];
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_lbaf) == 4, "LBA format size");
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ns) == NVME_IDENTIFY_SIZE,
		   "Identify Namespace size");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, nsfeat) == 24, "nsfeat");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, nmic) == 30, "nmic");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, dlfeat) == 33, "dlfeat");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, nvmcap) == 48, "nvmcap");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, npwg) == 64, "npwg");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, nows) == 72, "nows");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, anagrpid) == 92, "anagrpid");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, nguid) == 104, "nguid");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, eui64) == 120, "eui64");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, lbaf) == 128, "lbaf");

#define NVME_NSFEAT_THIN    (1u << 0)
#define NVME_NMIC_SHARED    (1u << 0)
#define NVME_NSFEAT_IO_OPT  (1u << 4) /* NPWG, NPWA, NPDG, NPDA, NOWS valid */
#define NVME_NSATTR_WP	    (1u << 0) /* namespace is write protected */
#define NVME_DLFEAT_READ_0  0x1	      /* deallocated blocks read as zeroes */
#define NVME_DLFEAT_WZ_DEAC (1u << 3) /* Write Zeroes DEAC supported */

/* Active Namespace ID list (CNS 02h): up to 1024 IDs, zero terminated. */
#define NVME_NSID_LIST_MAX 1024

/* Namespace Identification Descriptor header (CNS 03h). */
struct nvme_ns_desc {
	uint8_t nidt;
	uint8_t nidl;
	uint8_t rsvd[2];
	/* nidl bytes of identifier follow */
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_ns_desc) == 4, "NS descriptor size");

#define NVME_NIDT_EUI64 0x1
#define NVME_NIDT_NGUID 0x2
#define NVME_NIDT_UUID	0x3

/* ---- Log pages ----------------------------------------------------- */

/* Log identifiers served. */
#define NVME_LID_ERROR	    0x01
#define NVME_LID_SMART	    0x02
#define NVME_LID_CHANGED_NS 0x04
#define NVME_LID_DISCOVERY  0x70

/* Get Log Page CDW10: LID 7:0, LSP 11:8, RAE 15, NUMDL 31:16. */
#define NVME_GLP_RAE (1u << 15)

/* Error Information log entry (LID 01h). */
struct nvme_error_log {
	uint64_t error_count;
	uint16_t sqid;
	uint16_t cid;
	uint16_t status; /* status field << 1 | phase */
	uint16_t param_loc;
	uint64_t lba;
	uint32_t nsid;
	uint8_t vs;
	uint8_t trtype;
	uint8_t rsvd30[2];
	uint64_t cs;
	uint16_t trtype_spec;
	uint8_t rsvd42[22];
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_error_log) == 64, "error log size");
NVME_STATIC_ASSERT(offsetof(struct nvme_error_log, sqid) == 8, "err sqid");
NVME_STATIC_ASSERT(offsetof(struct nvme_error_log, status) == 12, "err sts");
NVME_STATIC_ASSERT(offsetof(struct nvme_error_log, lba) == 16, "err lba");
NVME_STATIC_ASSERT(offsetof(struct nvme_error_log, nsid) == 24, "err nsid");
NVME_STATIC_ASSERT(offsetof(struct nvme_error_log, trtype) == 29, "err tr");

/* SMART / Health Information log (LID 02h). 128-bit counters are LE. */
struct nvme_smart_log {
	uint8_t critical_warning;
	uint16_t temperature; /* Kelvin */
	uint8_t avail_spare;
	uint8_t spare_thresh;
	uint8_t percent_used;
	uint8_t endgrp_crit;
	uint8_t rsvd7[25];
	uint8_t data_units_read[16]; /* 1000s of 512-byte units, rounded up */
	uint8_t data_units_written[16];
	uint8_t host_reads[16];
	uint8_t host_writes[16];
	uint8_t ctrl_busy_time[16];
	uint8_t power_cycles[16];
	uint8_t power_on_hours[16];
	uint8_t unsafe_shutdowns[16];
	uint8_t media_errors[16];
	uint8_t num_err_log_entries[16];
	uint32_t warning_temp_time;
	uint32_t critical_comp_time;
	uint16_t temp_sensor[8];
	uint8_t rsvd216[296];
} NVME_PACKED;

NVME_STATIC_ASSERT(sizeof(struct nvme_smart_log) == 512, "SMART log size");
NVME_STATIC_ASSERT(offsetof(struct nvme_smart_log, temperature) == 1, "temp");
NVME_STATIC_ASSERT(offsetof(struct nvme_smart_log, avail_spare) == 3, "spare");
NVME_STATIC_ASSERT(offsetof(struct nvme_smart_log, data_units_read) == 32,
		   "data units read");
NVME_STATIC_ASSERT(offsetof(struct nvme_smart_log, host_reads) == 64,
		   "host reads");
NVME_STATIC_ASSERT(offsetof(struct nvme_smart_log, num_err_log_entries) == 176,
		   "error log entries");
NVME_STATIC_ASSERT(offsetof(struct nvme_smart_log, warning_temp_time) == 192,
		   "warning temp time");

/* Changed Namespace List log (LID 04h): 1024 NSIDs; overflow marker. */
#define NVME_CHANGED_NS_MAX	 1024
#define NVME_CHANGED_NS_OVERFLOW 0xFFFFFFFFu
#define NVME_CHANGED_NS_LOG_SIZE (NVME_CHANGED_NS_MAX * 4)

/* ---- Features ------------------------------------------------------ */

#define NVME_FEAT_NUM_QUEUES  0x07
#define NVME_FEAT_ASYNC_EVENT 0x0B
#define NVME_FEAT_KATO	      0x0F

/* Set Features CDW10 bit 31: save; Get Features CDW10 10:8: select. */
#define NVME_FEAT_SAVE		 (1u << 31)
#define NVME_FEAT_SEL(cdw10)	 (((cdw10) >> 8) & 0x7)
#define NVME_FEAT_SEL_CURRENT	 0
#define NVME_FEAT_SEL_DEFAULT	 1
#define NVME_FEAT_SEL_SAVED	 2
#define NVME_FEAT_SEL_CAPS	 3
#define NVME_FEAT_CAP_CHANGEABLE (1u << 2)

/* ---- Asynchronous events ------------------------------------------- */

/* Completion DW0 of an AER: type 2:0, info 15:8, log page 23:16. */
#define NVME_AER_TYPE_ERROR	 0x0
#define NVME_AER_TYPE_SMART	 0x1
#define NVME_AER_TYPE_NOTICE	 0x2
#define NVME_AER_TYPE_IMMEDIATE	 0x3
#define NVME_AER_TYPE_IO_CMD_SET 0x6
#define NVME_AER_TYPE_VENDOR	 0x7
#define NVME_AER_INFO_NS_CHANGED 0x00
#define NVME_AER_INFO_FW_ACT	 0x01
#define NVME_AER_INFO_ANA	 0x03
#define NVME_AER_DW0(type, info, lid)                                          \
	((uint32_t)(type) | (uint32_t)(info) << 8 | (uint32_t)(lid) << 16)

/* ---- Properties (NVMe-oF 1.1 3.5; the PCIe register offsets) ------- */

#define NVME_PROP_CAP  0x00 /* 8 bytes */
#define NVME_PROP_VS   0x08
#define NVME_PROP_CC   0x14
#define NVME_PROP_CSTS 0x1C
#define NVME_PROP_NSSR 0x20

#define NVME_PROP_SIZE_4 0
#define NVME_PROP_SIZE_8 1

/* CAP fields. */
#define NVME_CAP_MQES(v) ((uint64_t)(v)&0xFFFF) /* 0's based */
#define NVME_CAP_CQR	 (1ull << 16)
#define NVME_CAP_TO(v)	 ((uint64_t)(v) << 24) /* 500 ms units */
#define NVME_CAP_CSS_NVM (1ull << 37)

/* CC fields. */
#define NVME_CC_EN	      (1u << 0)
#define NVME_CC_CSS(cc)	      (((cc) >> 4) & 0x7)
#define NVME_CC_MPS(cc)	      (((cc) >> 7) & 0xF)
#define NVME_CC_AMS(cc)	      (((cc) >> 11) & 0x7)
#define NVME_CC_SHN(cc)	      (((cc) >> 14) & 0x3)
#define NVME_CC_IOSQES(cc)    (((cc) >> 16) & 0xF)
#define NVME_CC_IOCQES(cc)    (((cc) >> 20) & 0xF)
#define NVME_CC_WRITABLE_MASK 0x00FFFFF1u

/* CSTS fields. */
#define NVME_CSTS_RDY	     (1u << 0)
#define NVME_CSTS_CFS	     (1u << 1)
#define NVME_CSTS_SHST_MASK  (3u << 2)
#define NVME_CSTS_SHST_CMPLT (2u << 2)

/* Version 1.3.0. */
#define NVME_VS_1_3 0x00010300u

#ifdef __cplusplus
}
#endif

#endif /* WHARF_PROTO_NVME_SPEC_DATA_H */
