/*
 * qp/cm.c - moving a QP through RESET -> INIT -> RTR -> RTS with the
 * attributes the RDMA CM computed for a connection (rdma_init_qp_attr()),
 * as librdmacm does for QPs it owns, but on QPs the cm_id does not carry.
 *
 * The RDMA read/atomic depths are overridden with the negotiated values:
 * the kernel's RTR attributes carry the peer's requested initiator depth
 * on the passive side before the REP, unclamped.
 */
#include <errno.h>
#include <stdbool.h>

#include <rdma/rdma_cma.h>

#include "qp/internal.h"

/*
 * librdmacm masks these off (bits 21-23, kernel-only SMAC/VID flags) before
 * ibv_modify_qp ("workaround for rdma_ucm kernel bug").
 */
#define KERNEL_ONLY_MASK 0xe00000

static int init_attr(struct rdma_cm_id *id, enum ibv_qp_state state,
		     struct ibv_qp_attr *attr, int *mask)
{
	*attr = (struct ibv_qp_attr){.qp_state = state};
	if (rdma_init_qp_attr(id, attr, mask))
		return errno ? -errno : -EINVAL;
	*mask &= ~KERNEL_ONLY_MASK;
	return 0;
}

static int modify(struct wharf_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	int err = ibv_modify_qp(qp->ibqp, attr, mask);

	if (err) {
		qp->broken = true;
		return -err;
	}
	qp->vstate = attr->qp_state;
	return 0;
}

int wharf_qp_cm_init(struct wharf_qp *qp, struct rdma_cm_id *id)
{
	struct ibv_qp_attr attr;
	enum wqp_life_act a;
	int mask, err;

	if (!qp || !id)
		return -EINVAL;
	if (qp->life != WQP_LIFE_TAKEN || qp->vstate != IBV_QPS_RESET)
		return -EALREADY;
	err = init_attr(id, IBV_QPS_INIT, &attr, &mask);
	if (err)
		return err;
	err = modify(qp, &attr, mask);
	if (err)
		return err;
	wqp_life_step(&qp->life, WQP_EV_LEAVE_RESET, qp->fate, true, &a);
	if (qp->private_rq)
		return wqp_rq_fill(qp);
	return 0;
}

/*
 * INIT (again, with @refresh: before the connection exists the CM's INIT
 * attributes carry no remote access rights; librdmacm's
 * ucma_modify_qp_rtr() re-applies INIT the same way), RTR, RTS.
 */
static int rtr_rts(struct wharf_qp *qp, struct rdma_cm_id *id, uint8_t resp,
		   uint8_t init, bool refresh)
{
	const struct ibv_device_attr *da;
	struct ibv_qp_attr attr;
	int mask, err;

	if (!qp || !id)
		return -EINVAL;
	da = &qp->res->dev->attr;
	if (resp > da->max_qp_rd_atom || init > da->max_qp_init_rd_atom)
		return -EINVAL;
	if (qp->life != WQP_LIFE_LIVE || qp->vstate != IBV_QPS_INIT)
		return -EALREADY;
	if (refresh) {
		err = init_attr(id, IBV_QPS_INIT, &attr, &mask);
		if (!err)
			err = modify(qp, &attr, mask);
		if (err)
			return err;
	}
	err = init_attr(id, IBV_QPS_RTR, &attr, &mask);
	if (err)
		return err;
	attr.max_dest_rd_atomic = resp;
	mask |= IBV_QP_MAX_DEST_RD_ATOMIC;
	if (qp->min_rnr_timer) {
		attr.min_rnr_timer = qp->min_rnr_timer;
		mask |= IBV_QP_MIN_RNR_TIMER;
	}
	err = modify(qp, &attr, mask);
	if (err)
		return err;
	err = init_attr(id, IBV_QPS_RTS, &attr, &mask);
	if (err)
		return err;
	attr.max_rd_atomic = init;
	mask |= IBV_QP_MAX_QP_RD_ATOMIC;
	err = modify(qp, &attr, mask);
	if (err)
		return err;
	qp->cr.rd_max = init;
	return 0;
}

int wharf_qp_cm_rtr_rts(struct wharf_qp *qp, struct rdma_cm_id *id,
			uint8_t responder_resources, uint8_t initiator_depth)
{
	return rtr_rts(qp, id, responder_resources, initiator_depth, true);
}

int wharf_qp_cm_accept_ready(struct wharf_qp *qp, struct rdma_cm_id *id,
			     uint8_t responder_resources,
			     uint8_t initiator_depth)
{
	int err = wharf_qp_cm_init(qp, id);

	if (err)
		return err;
	/* INIT was just computed from the request: no refresh needed. */
	return rtr_rts(qp, id, responder_resources, initiator_depth, false);
}
