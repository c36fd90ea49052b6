/*
 * proto/nvme/rdma_pdata.h - the NVMe RDMA transport's CM private data:
 * validate an RDMA_CM_REQUEST and produce either the accepted queue
 * parameters (with the ACCEPT private data) or the REJ status to send.
 *
 * Rules, in the order they are checked (the first failure is reported):
 *  1. INVALID_LEN: no private data, or fewer than the 32 bytes of the REQ
 *     format (IB pads the REQ field to 56 bytes; anything >= 32 is read).
 *  2. INVALID_RECFMT: recfmt is not 0.
 *  3. INVALID_QID: qid above lim->max_qid (the most I/O queues a
 *     controller may have; the admin queue is qid 0).
 *  4. INVALID_HSQSIZE: hsqsize is 0's based (the host sends the queue
 *     size minus one, the same number as the Connect command's SQSIZE);
 *     hsqsize 0 (a 1-entry queue) or hsqsize + 1 above the queue-depth
 *     limit for the queue type (lim->admin_depth for qid 0, else
 *     lim->io_depth) is refused. The controller cannot shrink a queue the
 *     host has sized already, so an oversized queue is refused, not
 *     clamped: CAP.MQES and the discovery entry's ASQSZ tell hosts the
 *     limits beforehand.
 *  5. INVALID_HRQSIZE: hrqsize (entries, not 0's based) below hsqsize + 1:
 *     every command the host may have outstanding needs a host receive
 *     buffer for its response capsule.
 *  6. INVALID_IRD: the host's IRD (its responder_resources; in the local
 *     view of the CONNECT_REQUEST event, the event's initiator_depth) is
 *     0: the controller fetches host data with RDMA READ and needs at
 *     least one read outstanding.
 *  7. INVALID_ORD: the host's ORD (its initiator_depth; the event's
 *     responder_resources) above lim->dev_max_rd_atom, which this device
 *     could never serve. NVMe-oF hosts never read controller memory and
 *     send 0 (Linux, SPDK); a smaller non-zero ORD is accepted and
 *     granted 0 (a controller serves no RDMA READs).
 *  8. NO_RSC: the device allows no RDMA READ at all (dev_max_init_rd_atom
 *     0). A controller also sends NO_RSC when it cannot allocate the
 *     queue (nvme_rdma_rej_build()).
 *
 * Accepted parameters: sq_entries = hsqsize + 1 (the receives the
 * controller posts, sent back as crqsize), host_rq = hrqsize,
 * responder_resources 0 and initiator_depth = min(sq_entries,
 * dev_max_init_rd_atom, host IRD).  The REQ's cntlid is reported as sent;
 * whether it names a live controller is the controller's to check
 * (INVALID_CNTLID).  Reserved bytes are ignored.
 */
#ifndef WHARF_PROTO_NVME_RDMA_PDATA_H
#define WHARF_PROTO_NVME_RDMA_PDATA_H

#include <stddef.h>
#include <stdint.h>

#include "proto/nvme/spec_fabrics.h"

/*
 * How long either end of a queue waits for the peer's DREP after its
 * DREQ before it ends the connection anyway (not the spec's: it names
 * none).  Short, because a reset waits for the old queue to end and an
 * NVMe-oF peer that lost the DREQ finds the queue gone by its
 * keep-alive or its next command.
 */
#define NVME_RDMA_DISCONNECT_MS 5000u

#ifdef __cplusplus
extern "C" {
#endif

/* What a controller accepts: its configuration and its device's limits. */
struct nvme_rdma_limits {
	uint16_t max_qid;	      /* highest I/O queue ID (>= 1) */
	uint16_t admin_depth;	      /* admin queue entries (>= 2) */
	uint16_t io_depth;	      /* I/O queue entries (>= 2) */
	uint8_t dev_max_init_rd_atom; /* ibv_device_attr.max_qp_init_rd_atom */
	uint8_t dev_max_rd_atom;      /* ibv_device_attr.max_qp_rd_atom */
};

/* The accepted queue parameters and the ACCEPT private data. */
struct nvme_rdma_accept {
	uint16_t qid;
	uint16_t cntlid;	 /* as the REQ carried it (0 when absent) */
	uint16_t sq_entries;	 /* hsqsize + 1: receives to post, crqsize */
	uint16_t host_rq;	 /* hrqsize: responses the host can receive */
	uint8_t initiator_depth; /* the controller's ORD (RDMA READs) */
	uint8_t responder_resources; /* the controller's IRD: always 0 */
	struct nvme_rdma_cm_rep rep; /* ready to send with rdma_accept */
};

/**
 * nvme_rdma_req_parse() - validate a REQ's private data and depths.
 * @lim: the controller's limits (max_qid >= 1, depths >= 2).
 * @pdata: the private data as the CONNECT_REQUEST event reports it;
 *         peer bytes, may be NULL when @len is 0. Borrowed.
 * @len: its length.
 * @host_ird: the host's responder_resources (event initiator_depth).
 * @host_ord: the host's initiator_depth (event responder_resources).
 * @acc: on success, the accepted parameters (untouched on failure).
 * @rej_sts: on -EPROTO, the NVME_RDMA_CM_* status to reject with.
 *
 * Return: 0 to accept; -EPROTO to reject with *@rej_sts (see the rules
 * above); -EINVAL if @lim, @acc or @rej_sts is NULL or @lim is out of
 * range.
 * Context: any thread; pure, non-blocking.
 */
int nvme_rdma_req_parse(const struct nvme_rdma_limits *lim, const void *pdata,
			size_t len, uint8_t host_ird, uint8_t host_ord,
			struct nvme_rdma_accept *acc, uint16_t *rej_sts);

/**
 * nvme_rdma_rej_build() - the REJ private data for a status.
 * @sts: an NVME_RDMA_CM_* status (1..9).
 * @out: the 4-byte REJ private data (recfmt 0, sts).
 *
 * Return: 0; -EINVAL if @out is NULL or @sts is not a defined status.
 * Context: any thread; pure, non-blocking.
 */
int nvme_rdma_rej_build(uint16_t sts, struct nvme_rdma_cm_rej *out);

/**
 * nvme_rdma_req_build() - the REQ private data a host sends (for tests
 * and test initiators).
 * @qid: the queue ID.
 * @entries: the queue size in entries (>= 2): hrqsize = entries,
 *           hsqsize = entries - 1.
 * @cntlid: the controller ID for I/O queues, 0 for the admin queue.
 * @out: the 32-byte REQ private data.
 *
 * Return: 0; -EINVAL if @out is NULL or @entries < 2.
 * Context: any thread; pure, non-blocking.
 */
int nvme_rdma_req_build(uint16_t qid, uint32_t entries, uint16_t cntlid,
			struct nvme_rdma_cm_req *out);

/**
 * nvme_rdma_cm_sts_str() - a short description of a REJ status.
 * @sts: an NVME_RDMA_CM_* status.
 *
 * Return: a static string ("unknown" for undefined values).
 * Context: any thread; pure, non-blocking.
 */
const char *nvme_rdma_cm_sts_str(uint16_t sts);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_PROTO_NVME_RDMA_PDATA_H */
