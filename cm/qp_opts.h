/*
 * cm/qp_opts.h - the check of an embedded wharf_conn_qp_opts (internal).
 */
#ifndef WHARF_CM_QP_OPTS_H
#define WHARF_CM_QP_OPTS_H

#include <errno.h>

#include "cm/cm.h"

/*
 * 0 or -EINVAL: @q carries this header's size (or size 0 and nothing
 * else set) and an RNR timer in the IB encoding.
 */
static inline int wcm_qp_opts_check(const struct wharf_conn_qp_opts *q)
{
	if (q->size != sizeof(*q) &&
	    (q->size || q->recv_credits || q->private_rq || q->rq_depth ||
	     q->sq_depth || q->min_rnr_timer))
		return -EINVAL;
	return q->min_rnr_timer > 31 ? -EINVAL : 0;
}

#endif /* WHARF_CM_QP_OPTS_H */
