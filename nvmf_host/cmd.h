/*
 * nvmf_host/cmd.h - the host's command capsules and response
 * parser: pure functions over the wire structures of proto/nvme, with no
 * state and no I/O, unit-tested and fuzzed on their own.
 */
#ifndef WHARF_INITIATORS_NVMF_CMD_H
#define WHARF_INITIATORS_NVMF_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/nvme/spec.h"
#include "proto/nvme/spec_data.h"
#include "proto/nvme/spec_fabrics.h"
#include <wharf/nvmf_host.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A keyed SGL (subtype address: the target never invalidates @key). */
void wnh_sgl_keyed(struct nvme_sgl *sgl, uint64_t addr, uint32_t len,
		   uint32_t key);
/* An in-capsule data SGL: @len bytes right after the 64-byte command. */
void wnh_sgl_in_capsule(struct nvme_sgl *sgl, uint32_t len);

/* Fabrics Connect for queue @qid with @entries entries (sqsize =
 * entries - 1) and KATO @kato_ms (admin queue only). */
void wnh_cmd_connect(union nvme_cmd *c, uint16_t qid, uint32_t entries,
		     uint32_t kato_ms);
/* The 1024-byte Connect data; -EINVAL when an NQN is empty or longer
 * than NVME_NQN_MAX. */
int wnh_connect_data(struct nvme_connect_data *d, const uint8_t hostid[16],
		     uint16_t cntlid, const char *subnqn, const char *hostnqn);
/* Authentication Send (@send, TL @len) or Receive (AL @len) of NVMe
 * in-band authentication (SECP E9h, SPSP 01h 01h). */
void wnh_cmd_auth(union nvme_cmd *c, bool send, uint32_t len);
/* Property Get (@size8: an 8-byte property) and Property Set (4 bytes). */
void wnh_cmd_prop_get(union nvme_cmd *c, uint32_t ofst, int size8);
void wnh_cmd_prop_set(union nvme_cmd *c, uint32_t ofst, uint32_t value);
/* Identify with @cns for @nsid. */
void wnh_cmd_identify(union nvme_cmd *c, uint8_t cns, uint32_t nsid);
/* Set Features Number of Queues: @n I/O submission and completion
 * queues (>= 1). */
void wnh_cmd_set_nqueues(union nvme_cmd *c, unsigned n);
void wnh_cmd_keep_alive(union nvme_cmd *c);
/* Asynchronous Event Request; Set Features Asynchronous Event
 * Configuration (0Bh) with @aec; Identify @cns for command set @csi
 * (CDW11 31:24). */
void wnh_cmd_aer(union nvme_cmd *c);
void wnh_cmd_set_aec(union nvme_cmd *c, uint32_t aec);
void wnh_cmd_identify_csi(union nvme_cmd *c, uint8_t cns, uint8_t csi);
/* Read / Write of @nlb (>= 1) blocks at @slba; Flush. */
void wnh_cmd_rw(union nvme_cmd *c, uint8_t opc, uint32_t nsid, uint64_t slba,
		uint32_t nlb);
void wnh_cmd_flush(union nvme_cmd *c, uint32_t nsid);
/* Write Zeroes of @nlb (1 .. 65536) blocks at @slba; @deac sets DEAC
 * (the controller may deallocate the blocks). */
void wnh_cmd_write_zeroes(union nvme_cmd *c, uint32_t nsid, uint64_t slba,
			  uint32_t nlb, int deac);
/* Dataset Management with @nr (1 .. NVME_DSM_MAX_RANGES) ranges and the
 * attribute Deallocate; the ranges travel as the command's data. */
void wnh_cmd_dsm_deallocate(union nvme_cmd *c, uint32_t nsid, unsigned nr);
/* One DSM range: @nlb blocks (not 0's based) at @slba, no context
 * attributes. */
void wnh_dsm_range(struct nvme_dsm_range *r, uint64_t slba, uint32_t nlb);
/* 1 when @nlb >= 1 blocks at @slba lie inside a namespace of @nsze
 * blocks (no overflow), else 0. */
int wnh_lba_range_ok(uint64_t slba, uint64_t nlb, uint64_t nsze);
/* 1 when Identify Namespace DLFEAT promises that deallocated blocks read
 * as zeroes (bits 2:0 = 001b), else 0. */
int wnh_dlfeat_reads_zero(uint8_t dlfeat);

/* Get Log Page @lid: @len bytes (a multiple of 4, >= 4) from byte
 * offset @off (a multiple of 4). */
void wnh_cmd_get_log_page(union nvme_cmd *c, uint8_t lid, uint64_t off,
			  uint32_t len);

/*
 * wnh_disc_hdr_parse - check a Discovery Log Page header from the peer.
 * @buf, @len: the bytes received (peer bytes, any content).
 * @max: the most records the caller takes.
 * Return: 0 and *@genctr, *@numrec (clamped to @max) filled; -EMSGSIZE
 * when @len is shorter than the 1024-byte header; -EPROTO for a record
 * format other than 0.
 */
int wnh_disc_hdr_parse(const void *buf, size_t len, uint64_t *genctr,
		       uint64_t *numrec, uint64_t max);

/*
 * wnh_disc_entry_parse - one 1024-byte Discovery Log Page entry from the
 * peer into @out (strings NUL-terminated, trailing spaces and NULs
 * removed, the RDMA TSAS fields only for trtype RDMA).
 * @buf, @len: the entry's bytes (peer bytes, any content).
 * Return: 0; -EMSGSIZE when @len < 1024.
 */
int wnh_disc_entry_parse(const void *buf, size_t len,
			 struct wharf_nvmf_host_disc_entry *out);

/* The largest write that may travel in the capsule of an I/O command:
 * (IOCCSZ * 16 - 64) bytes when ICDOFF is 0 and the controller takes
 * offset SGLs, capped at @cap; 0 otherwise. */
uint32_t wnh_in_capsule_max(const struct nvme_id_ctrl *id, uint32_t cap);
/* The largest transfer: @want clamped to MDTS (2^mdts * 4 KiB, with
 * CAP.MPSMIN 0; mdts 0 = no limit). */
uint32_t wnh_max_xfer(uint8_t mdts, uint32_t want);

/* A received response capsule, checked. */
struct wnh_rsp {
	uint16_t cid;
	uint16_t status; /* SC 7:0, SCT 10:8, DNR 14 (the phase bit dropped) */
	uint16_t sqhd;
	uint64_t result;
};

/*
 * wnh_rsp_parse - check a response capsule from the peer.
 * @buf, @len: the bytes received (peer bytes, any content).
 * @depth: commands the queue can have outstanding (cids 0..depth-1).
 * Return: 0 and *@out filled; -EMSGSIZE when @len < 16 (a capsule
 * shorter than a completion); -ERANGE when the cid is >= @depth.
 * Whether the cid is outstanding is the queue's check.
 */
int wnh_rsp_parse(const void *buf, size_t len, uint32_t depth,
		  struct wnh_rsp *out);

/* "SCT 1 SC 0x82 (connect invalid parameters)" into @buf. */
void wnh_status_str(uint16_t status, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NVMF_CMD_H */
