/*
 * cm/conn_param.c - connection parameter negotiation (see conn_param.h for
 * the rules and where each comes from).
 */
#include "cm/conn_param.h"

#include <errno.h>
#include <string.h>

#include <rdma/rdma_cma.h>

/* 0xFF is the sentinel, so a real device maximum is at most 254. */
#define WCM_RD_ATOM_LIMIT 0xFE

int wcm_dev_limits_init(struct wcm_dev_limits *out, int max_qp_rd_atom,
			int max_qp_init_rd_atom)
{
	if (!out || max_qp_rd_atom < 0 || max_qp_init_rd_atom < 0)
		return -EINVAL;
	out->max_qp_rd_atom = max_qp_rd_atom > WCM_RD_ATOM_LIMIT
				      ? WCM_RD_ATOM_LIMIT
				      : (uint8_t)max_qp_rd_atom;
	out->max_qp_init_rd_atom = max_qp_init_rd_atom > WCM_RD_ATOM_LIMIT
					   ? WCM_RD_ATOM_LIMIT
					   : (uint8_t)max_qp_init_rd_atom;
	return 0;
}

size_t wcm_pdata_limit(enum wcm_msg msg, enum wcm_ps ps)
{
	static const size_t limit[3][2] = {
		[WCM_MSG_CONNECT] = {WCM_PDATA_CONNECT_RC,
				     WCM_PDATA_CONNECT_UD},
		[WCM_MSG_ACCEPT] = {WCM_PDATA_ACCEPT_RC, WCM_PDATA_ACCEPT_UD},
		[WCM_MSG_REJECT] = {WCM_PDATA_REJECT_RC, WCM_PDATA_REJECT_UD},
	};

	if ((unsigned int)msg > WCM_MSG_REJECT || (unsigned int)ps > WCM_PS_UD)
		return 0;
	return limit[msg][ps];
}

int wcm_pdata_check(enum wcm_msg msg, enum wcm_ps ps, const void *data,
		    size_t len)
{
	size_t limit = wcm_pdata_limit(msg, ps);

	if (!limit || (!data && len) || len > limit)
		return -EINVAL;
	return 0;
}

uint8_t wcm_retry_clamp(unsigned int count)
{
	return count > WCM_RETRY_MAX ? WCM_RETRY_MAX : (uint8_t)count;
}

static uint8_t min_u8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

/*
 * Resolve one depth: 0xFF picks @dflt, anything else must be <= @max.
 * Returns the depth, or -EINVAL.
 */
static int resolve_depth(uint8_t asked, uint8_t max, uint8_t dflt)
{
	if (asked == WCM_RD_ATOM_DEV_MAX)
		return dflt;
	if (asked > max)
		return -EINVAL;
	return asked;
}

/* Checks shared by connect and accept; sets the QP-derived fields. */
static int begin(enum wcm_msg msg, const struct wcm_conn_param *param,
		 enum wcm_ps ps, const struct wcm_dev_limits *dev,
		 const struct wcm_qp_info *qp, struct wcm_conn_param *res)
{
	if (!dev || !qp || (unsigned int)ps > WCM_PS_UD ||
	    qp->qp_num > WCM_QP_NUM_MAX)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	if (param) {
		if (wcm_pdata_check(msg, ps, param->private_data,
				    param->private_data_len))
			return -EINVAL;
		if (param->private_data_len) {
			res->private_data = param->private_data;
			res->private_data_len = param->private_data_len;
		}
	}
	res->qp_num = qp->qp_num;
	res->srq = ps == WCM_PS_RC && qp->srq ? 1 : 0;
	return 0;
}

int wcm_conn_param_connect(const struct wcm_conn_param *param, enum wcm_ps ps,
			   const struct wcm_dev_limits *dev,
			   const struct wcm_qp_info *qp,
			   struct wcm_conn_param *out)
{
	struct wcm_conn_param res;
	int resp, init, ret;

	if (!out)
		return -EINVAL;
	ret = begin(WCM_MSG_CONNECT, param, ps, dev, qp, &res);
	if (ret)
		return ret;
	if (ps == WCM_PS_UD)
		goto done;
	if (!param) {
		res.responder_resources = dev->max_qp_rd_atom;
		res.initiator_depth = dev->max_qp_init_rd_atom;
		res.retry_count = WCM_RETRY_MAX;
		res.rnr_retry_count = WCM_RETRY_MAX;
		goto done;
	}
	resp = resolve_depth(param->responder_resources, dev->max_qp_rd_atom,
			     dev->max_qp_rd_atom);
	init = resolve_depth(param->initiator_depth, dev->max_qp_init_rd_atom,
			     dev->max_qp_init_rd_atom);
	if (resp < 0 || init < 0)
		return -EINVAL;
	res.responder_resources = (uint8_t)resp;
	res.initiator_depth = (uint8_t)init;
	res.flow_control = param->flow_control ? 1 : 0;
	res.retry_count = wcm_retry_clamp(param->retry_count);
	res.rnr_retry_count = wcm_retry_clamp(param->rnr_retry_count);
done:
	*out = res;
	return 0;
}

int wcm_conn_param_accept(const struct wcm_conn_param *param,
			  const struct wcm_conn_param *req, enum wcm_ps ps,
			  const struct wcm_dev_limits *dev,
			  const struct wcm_qp_info *qp,
			  struct wcm_conn_param *out)
{
	struct wcm_conn_param res;
	uint8_t resp_dflt, init_dflt;
	int resp, init, ret;

	if (!req || !out)
		return -EINVAL;
	ret = begin(WCM_MSG_ACCEPT, param, ps, dev, qp, &res);
	if (ret)
		return ret;
	if (ps == WCM_PS_UD)
		goto done;
	resp_dflt = min_u8(req->responder_resources, dev->max_qp_rd_atom);
	init_dflt = min_u8(req->initiator_depth, dev->max_qp_init_rd_atom);
	/* Ignored on accept: the passive QP uses the requester's value. */
	res.retry_count = wcm_retry_clamp(req->retry_count);
	if (!param) {
		res.responder_resources = resp_dflt;
		res.initiator_depth = init_dflt;
		res.flow_control = req->flow_control ? 1 : 0;
		res.rnr_retry_count = WCM_RETRY_MAX;
		goto done;
	}
	resp = resolve_depth(param->responder_resources, dev->max_qp_rd_atom,
			     resp_dflt);
	init = resolve_depth(param->initiator_depth, init_dflt, init_dflt);
	if (resp < 0 || init < 0)
		return -EINVAL;
	res.responder_resources = (uint8_t)resp;
	res.initiator_depth = (uint8_t)init;
	res.flow_control = param->flow_control ? 1 : 0;
	res.rnr_retry_count = wcm_retry_clamp(param->rnr_retry_count);
done:
	*out = res;
	return 0;
}

int wcm_conn_param_preset(enum wcm_role role, uint32_t queue_depth,
			  const struct wcm_dev_limits *dev,
			  const struct wcm_conn_param *req,
			  unsigned int explicit_mask,
			  struct wcm_conn_param *param)
{
	uint8_t resp, init;
	uint32_t depth;

	if (!dev || !param ||
	    (explicit_mask & ~(WCM_CP_EXPLICIT_RESP | WCM_CP_EXPLICIT_INIT)))
		return -EINVAL;
	switch (role) {
	case WCM_ROLE_CUSTOM:
		return 0;
	case WCM_ROLE_TARGET:
		if (!queue_depth)
			return -EINVAL;
		depth = dev->max_qp_init_rd_atom;
		if (queue_depth < depth)
			depth = queue_depth;
		if (req && req->initiator_depth < depth)
			depth = req->initiator_depth;
		resp = 0;
		init = (uint8_t)depth;
		break;
	case WCM_ROLE_HOST:
		resp = dev->max_qp_rd_atom;
		init = 0;
		break;
	case WCM_ROLE_SYMMETRIC:
		resp = WCM_RD_ATOM_DEV_MAX;
		init = WCM_RD_ATOM_DEV_MAX;
		break;
	default:
		return -EINVAL;
	}
	if (!(explicit_mask & WCM_CP_EXPLICIT_RESP))
		param->responder_resources = resp;
	if (!(explicit_mask & WCM_CP_EXPLICIT_INIT))
		param->initiator_depth = init;
	return 0;
}

int wcm_pdata_recv(struct wcm_pdata *dst, const void *src, size_t len)
{
	if (!dst)
		return -EINVAL;
	dst->len = 0;
	if (!src && len)
		return -EPROTO;
	if (len > WCM_PDATA_RX_MAX)
		return -EMSGSIZE;
	if (len)
		memcpy(dst->bytes, src, len);
	dst->len = (uint8_t)len;
	return 0;
}

int wcm_conn_param_recv(const struct rdma_conn_param *ev,
			struct wcm_conn_param *out, struct wcm_pdata *pdata)
{
	int ret;

	if (!ev || !out || !pdata)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	ret = wcm_pdata_recv(pdata, ev->private_data, ev->private_data_len);
	if (ret)
		return ret;
	if (pdata->len) {
		out->private_data = pdata->bytes;
		out->private_data_len = pdata->len;
	}
	out->responder_resources = ev->responder_resources;
	out->initiator_depth = ev->initiator_depth;
	out->flow_control = ev->flow_control;
	out->retry_count = ev->retry_count;
	out->rnr_retry_count = ev->rnr_retry_count;
	out->srq = ev->srq;
	out->qp_num = ev->qp_num & WCM_QP_NUM_MAX;
	return 0;
}

int wcm_conn_param_to_rdma(const struct wcm_conn_param *param,
			   struct rdma_conn_param *out)
{
	if (!param || !out ||
	    (!param->private_data && param->private_data_len) ||
	    param->private_data_len > UINT8_MAX)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->private_data =
		param->private_data_len ? param->private_data : NULL;
	out->private_data_len = (uint8_t)param->private_data_len;
	out->responder_resources = param->responder_resources;
	out->initiator_depth = param->initiator_depth;
	out->flow_control = param->flow_control;
	out->retry_count = param->retry_count;
	out->rnr_retry_count = param->rnr_retry_count;
	out->srq = param->srq;
	out->qp_num = param->qp_num;
	return 0;
}
