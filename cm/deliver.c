/*
 * cm/deliver.c - the application callbacks a step delivers, with what
 * they carry.  A connection being torn down by wharf_cm_destroy() is
 * quiet: nothing is delivered but on_send_done.
 */
#include <string.h>

#include "cm/rt.h"

static enum wharf_conn_error public_error(unsigned e)
{
	switch (e) {
	case WCM_ERR_ADDRESS:
		return WHARF_CONN_ERR_ADDRESS;
	case WCM_ERR_ROUTE:
		return WHARF_CONN_ERR_ROUTE;
	case WCM_ERR_UNREACHABLE:
		return WHARF_CONN_ERR_UNREACHABLE;
	case WCM_ERR_TIMEOUT:
		return WHARF_CONN_ERR_TIMEOUT;
	case WCM_ERR_DEVICE:
		return WHARF_CONN_ERR_DEVICE;
	default:
		return WHARF_CONN_ERR_CONNECT;
	}
}

void wcm_deliver_request(struct wharf_conn *c)
{
	const struct wharf_listener *l = c->listener;

	if (c->quiet)
		return;
	if (c->ops->on_request) {
		c->ops->on_request(c, &c->pas->req_view, c->arg);
		return;
	}
	/* No decision callback: the listener's default accept. */
	(void)wharf_accept(c,
			   l && l->has_accept_param ? &l->accept_param : NULL);
}

void wcm_deliver_established(struct wharf_conn *c)
{
	struct wharf_conn_info info;

	wcm_stamp(c, WHARF_STEP_ESTABLISHED);
	if (c->quiet || !c->ops->on_established)
		return;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.ps = c->ps == WCM_PS_UD ? WHARF_PS_UD : WHARF_PS_RC;
	if (c->ps == WCM_PS_RC) {
		const struct wcm_conn_param *peer =
			c->sm.side == WCM_SIDE_ACTIVE ? &c->act->peer_param
						      : &c->pas->req;

		if (c->sm.side == WCM_SIDE_ACTIVE) {
			info.responder_resources = peer->responder_resources;
			info.initiator_depth = peer->initiator_depth;
		} else {
			info.responder_resources = c->neg.responder_resources;
			info.initiator_depth = c->neg.initiator_depth;
		}
		info.flow_control = peer->flow_control;
		info.rnr_retry_count = peer->rnr_retry_count;
		info.remote_qp_num = peer->qp_num;
		info.srq = c->qp ? wharf_qp_uses_srq(c->qp) : 0;
		info.qp_num = c->qp ? wharf_qp_num(c->qp) : 0;
	} else {
		info.qp_num = c->neg.qp_num;
		if (c->sm.side == WCM_SIDE_ACTIVE) {
			info.remote_qp_num = c->act->ud_qpn;
			info.qkey = c->act->ud_qkey;
			info.ah = c->act->ud_ah;
			info.ah_attr = &c->act->ud_ah_attr;
		}
	}
	if (c->sm.side == WCM_SIDE_ACTIVE && c->act->peer_pdata.len) {
		info.private_data = c->act->peer_pdata.bytes;
		info.private_data_len = c->act->peer_pdata.len;
	}
	c->ops->on_established(c, &info, c->arg);
}

void wcm_deliver_rejected(struct wharf_conn *c)
{
	struct wharf_conn_reject rej;

	if (c->quiet || !c->ops->on_rejected)
		return;
	memset(&rej, 0, sizeof(rej));
	rej.size = sizeof(rej);
	rej.reason = c->rej_reason;
	if (c->act->peer_pdata.len) {
		rej.private_data = c->act->peer_pdata.bytes;
		rej.private_data_len = c->act->peer_pdata.len;
	}
	if (c->act->rej_is_busy) {
		rej.busy = true;
		rej.busy_reason = c->act->rej_busy.reason;
		rej.retry_after_ms = c->act->rej_busy.retry_after_ms;
		rej.load_permille = c->act->rej_busy.load_permille;
	}
	c->ops->on_rejected(c, &rej, c->arg);
}

void wcm_deliver_error(struct wharf_conn *c, unsigned error)
{
	int err = c->last_err;

	if (c->quiet || !c->ops->on_error)
		return;
	if (error == WCM_ERR_TIMEOUT)
		err = -ETIMEDOUT;
	c->ops->on_error(c, public_error(error), err ? err : -EIO, c->arg);
}

void wcm_deliver_disconnected(struct wharf_conn *c)
{
	if (c->quiet || !c->ops->on_disconnected)
		return;
	c->ops->on_disconnected(c, c->arg);
}
