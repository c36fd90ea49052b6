/*
 * cm/passive.c - the passive side: adopting a handed-over request on its
 * owner shard, wharf_accept() / wharf_reject().
 *
 * Admission (defer.c) happens when the owner adopts the request: room
 * for its handshake and its SRQ receive budget (wharf_qp_res_admit(),
 * which only the owner may call) before the request is shown to the
 * application; wharf_qp_take() checks the budget again at accept time.
 * A refusal carries the private data cm/overload.h chooses (refusal.c).
 *
 * wharf_accept() validates the application's parameters against the
 * request and the device before touching the state machine, so a bad call
 * changes nothing and sends nothing.
 */
#include <errno.h>
#include <string.h>

#include "base/opts.h"
#include "cm/qp_opts.h"
#include "cm/rt.h"

void wcm_conn_timeout(struct wharf_conn *c)
{
	struct wcm_step st;
	unsigned kind = c->sm.timer;

	if (kind == WCM_TIMER_DISCONNECT || kind == WCM_TIMER_TIMEWAIT)
		wcm_count(c, WCM_C_FORCED);
	if (kind == WCM_TIMER_DISCONNECT) /* a DREQ unanswered */
		wcm_dwin_timeout(c);
	if (c->sm.state == WCM_ST_DEFERRED)
		c->refusal = WCM_REFUSE_DEFER_TIMEOUT;
	c->last_err = -ETIMEDOUT;
	if (wcm_conn_on_timer(&c->sm, (enum wcm_timer)kind, &st))
		return;
	wcm_run(c, &st);
}

/* A connection's timer came due: first the events that came before it
 * (wcm_shard_catch_up, events.c), then, if @c still waits on this
 * deadline (a wait that an event ended or re-armed does not; one that an
 * event kept without a new deadline does), its timeout.  A retry delay
 * waits for no event. */
static void conn_timer_fn(struct wharf_timer *t, void *arg)
{
	struct wharf_conn *c = arg;

	(void)t;
	if (c->sm.timer == WCM_TIMER_RETRY) {
		wcm_conn_timeout(c);
		return;
	}
	c->refs++;
	wcm_shard_catch_up(c->sh);
	if (!c->freeing && c->sm.timer != WCM_TIMER_NONE &&
	    !(c->timer && wharf_timer_armed(c->timer)))
		wcm_conn_timeout(c);
	wcm_conn_unref(c);
}

int wcm_conn_timer_create(struct wharf_conn *c)
{
	return wharf_timer_create(c->sh->shard, conn_timer_fn, c, &c->timer);
}

/* Give @c its id, timer and table entries on its owner shard. */
static int conn_setup(struct wharf_conn *c)
{
	uint64_t seq = atomic_fetch_add_explicit(&c->sh->next_seq, 1,
						 memory_order_relaxed);
	int err;

	if (!c->id) {
		err = wcm_conn_id_make(c->sh->index, seq, &c->id);
		if (err)
			return -EOVERFLOW;
	}
	err = wcm_conn_timer_create(c);
	if (err)
		return err;
	err = wcm_conn_publish(c);
	if (err) {
		wharf_timer_destroy(c->timer);
		c->timer = NULL;
	}
	return err;
}

int wcm_conn_setup(struct wharf_conn *c)
{
	return conn_setup(c);
}

void wcm_adopt(struct wharf_conn *c)
{
	c->adopted = true;
	wcm_stamp(c, WHARF_STEP_ADOPTED);
	wcm_admit(c); /* defer.c */
}

/* ---------------------------------------------------------------- */
/* Accept                                                            */
/* ---------------------------------------------------------------- */

static void param_in(const struct wharf_conn_param *p, struct wcm_conn_param *w)
{
	memset(w, 0, sizeof(*w));
	w->private_data = p->private_data;
	w->private_data_len = p->private_data_len;
	w->responder_resources = p->responder_resources;
	w->initiator_depth = p->initiator_depth;
	w->flow_control = p->flow_control;
	w->retry_count = p->retry_count;
	w->rnr_retry_count = p->rnr_retry_count;
}

/* Negotiate what rdma_accept() will send; @qp NULL: a dry run. */
static int negotiate(struct wharf_conn *c, const struct wharf_conn_param *p,
		     const struct wcm_qp_info *qp, struct wcm_conn_param *out)
{
	struct wcm_conn_param want;
	struct wcm_qp_info dry = {0, 0};

	if (p)
		param_in(p, &want);
	return wcm_conn_param_accept(p ? &want : NULL, &c->pas->req, c->ps,
				     &c->dev->lim, qp ? qp : &dry, out);
}

int wcm_act_accept(struct wharf_conn *c)
{
	const struct wharf_conn_param *p = c->pas->acc;
	struct rdma_conn_param rp;
	struct wcm_qp_info qi = {0, 0};
	struct wharf_qp_res *res;
	int err;

	if (c->ps == WCM_PS_UD) {
		qi.qp_num = p->ud_qp_num & WCM_QP_NUM_MAX;
	} else {
		res = wcm_res_admitting(c->sh, c->dev, wcm_conn_qp_opts(c),
					&err);
		if (!res && err != -EBUSY)
			return err;
		err = res ? wcm_take_qp(c, res) : -EBUSY;
		if (err) {
			/* The library's own refusal: the listener's private
			 * data, in the peer's protocol. */
			if (err == -EBUSY) {
				c->refusal = WCM_REFUSE_RECV_BUDGET;
				c->busy_rejected = true;
			} else {
				c->refusal = WCM_REFUSE_RESOURCES;
				wcm_log_take_fail(c->sh, err);
			}
			return err;
		}
		qi.qp_num = wharf_qp_num(c->qp);
		qi.srq = wharf_qp_uses_srq(c->qp);
	}
	err = negotiate(c, p, &qi, &c->neg);
	if (err)
		return err;
	if (c->ps == WCM_PS_RC) {
		err = wharf_qp_cm_accept_ready(c->qp, c->cm_id,
					       c->neg.responder_resources,
					       c->neg.initiator_depth);
		if (err)
			return err;
		wcm_stamp(c, WHARF_STEP_QP_READY);
	}
	err = wcm_conn_param_to_rdma(&c->neg, &rp);
	if (err)
		return err;
	if (rdma_accept(c->cm_id, &rp))
		return wcm_errno();
	wcm_stamp(c, WHARF_STEP_SENT);
	c->qpn_sent = true;
	if (c->ps == WCM_PS_UD) {
		/* The SIDR REP is the whole handshake: established now. */
		struct wcm_cm_input in = {.event = WCM_CM_ESTABLISHED};

		wcm_feed_cm(c, &in);
	}
	return 0;
}

int wharf_accept(struct wharf_conn *conn, const struct wharf_conn_param *in)
{
	struct wharf_conn_param p;
	struct wcm_conn_param dry;
	struct wcm_step st;
	int err;

	if (!conn || conn->freeing)
		return -EINVAL;
	if (conn->sm.side != WCM_SIDE_PASSIVE)
		return -EINVAL;
	if (in) {
		err = wbase_opts_copy(&p, sizeof(p), in);
		if (err)
			return err;
		if (conn->ps == WCM_PS_UD && !p.ud_qp_num)
			return -EINVAL;
	} else if (conn->ps == WCM_PS_UD) {
		return -EINVAL; /* the SIDR REP needs the UD QP's number */
	}
	err = wcm_conn_on_api(&conn->sm, WCM_API_ACCEPT, &st);
	if (err)
		return err;
	/* Validate before the state changes: nothing sent on -EINVAL. */
	err = negotiate(conn, in ? &p : NULL, NULL, &dry);
	if (err)
		return err;
	conn->refs++;
	conn->pas->acc = in ? &p : NULL;
	conn->last_err = 0;
	wcm_run(conn, &st);
	if (conn->pas) /* (the frame's reference keeps it until here) */
		conn->pas->acc = NULL;
	err = conn->sm.state == WCM_ST_ACCEPTING ||
			      conn->sm.state == WCM_ST_ESTABLISHED
		      ? 0
		      : (conn->last_err ? conn->last_err : -ECONNABORTED);
	wcm_conn_unref(conn);
	return err;
}

int wharf_conn_set_qp(struct wharf_conn *conn,
		      const struct wharf_conn_qp_opts *qp)
{
	if (!conn || !qp || conn->freeing ||
	    conn->sm.side != WCM_SIDE_PASSIVE || conn->ps != WCM_PS_RC ||
	    wcm_qp_opts_check(qp))
		return -EINVAL;
	switch (conn->sm.state) {
	case WCM_ST_REQ_RECEIVED:
		break;
	case WCM_ST_ACCEPTING:
	case WCM_ST_ESTABLISHED:
		return -EALREADY;
	default:
		return -ENOTCONN;
	}
	if (qp->recv_credits)
		conn->pas->qp_opts.recv_credits = qp->recv_credits;
	if (qp->private_rq)
		conn->pas->qp_opts.private_rq = true;
	if (qp->rq_depth)
		conn->pas->qp_opts.rq_depth = qp->rq_depth;
	if (qp->sq_depth)
		conn->pas->qp_opts.sq_depth = qp->sq_depth;
	if (qp->min_rnr_timer)
		conn->pas->qp_opts.min_rnr_timer = qp->min_rnr_timer;
	return 0;
}

/* ---------------------------------------------------------------- */
/* Reject                                                            */
/* ---------------------------------------------------------------- */

int wcm_act_reject(struct wharf_conn *c)
{
	uint8_t buf[WCM_PDATA_REJECT_RC];
	const void *pd = c->pas->rej_pdata;
	size_t len = c->pas->rej_len;

	if (!c->cm_id)
		return -ENOTCONN;
	if (c->refusal) { /* the library's own: the listener's private data */
		len = wcm_refusal_pdata(c->listener, c->sh, &c->pas->req_view,
					(enum wcm_refusal)c->refusal, buf);
		pd = len ? buf : NULL;
	}
	if (rdma_reject(c->cm_id, pd, (uint8_t)len))
		return wcm_errno();
	return 0;
}

int wharf_reject(struct wharf_conn *conn, const void *pdata, size_t len)
{
	uint8_t *copy = NULL;
	struct wcm_step st;
	int err;

	if (!conn || conn->freeing || conn->sm.side != WCM_SIDE_PASSIVE)
		return -EINVAL;
	err = wcm_pdata_check(WCM_MSG_REJECT, conn->ps, pdata, len);
	if (err)
		return err;
	if (len) {
		copy = malloc(len);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, pdata, len);
	}
	err = wcm_conn_on_api(&conn->sm, WCM_API_REJECT, &st);
	if (err) {
		free(copy);
		return err;
	}
	free(conn->pas->rej_pdata);
	conn->pas->rej_pdata = copy;
	conn->pas->rej_len = len;
	conn->refs++;
	conn->last_err = 0;
	wcm_run(conn, &st);
	err = conn->last_err;
	wcm_conn_unref(conn);
	return err;
}
