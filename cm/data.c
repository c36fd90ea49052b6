/*
 * cm/data.c - a connection's QP: taking it, the qp callbacks, receives held
 * until ESTABLISHED, COMM_EST -> rdma_notify(), disconnecting and the QP's
 * release with the fate its number deserves.
 *
 * Every receive completion goes through wcm_conn_on_qp(WCM_QP_RECV), which
 * says hold, deliver or drop.  A held SRQ buffer is kept
 * (WHARF_QP_RECV_KEEP) on the connection's FIFO; a private receive queue's
 * buffer is copied (qp reposts those).  on_established is followed by the
 * held receives in order (each given back unless the application keeps
 * it), or, when the handshake fails, they are given back undelivered.
 *
 * QP fate (see <wharf/qp.h>): a QP whose number never reached a peer is
 * released UNUSED; after TIMEWAIT_EXIT, TIMEWAIT_EXIT; otherwise UNKNOWN
 * (destroyed).  The connection keeps a reference until the QP's on_closed
 * ran and it was released.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm/rt.h"

static struct wharf_conn *conn_of_qp(void *arg)
{
	return arg;
}

/*
 * Hold a receive: keep the SRQ buffer, or copy it from a private receive
 * queue (qp reposts those).  Returns what on_recv must return.
 */
static int held_push(struct wharf_conn *c, void *buf,
		     const struct wharf_qp_recv *rx)
{
	struct wcm_held *h = malloc(sizeof(*h));
	bool copy = !wharf_qp_uses_srq(c->qp);

	if (!h)
		return 0; /* dropped, and counted nowhere: out of memory */
	h->copy = copy;
	if (copy) {
		h->buf = malloc(rx->len ? rx->len : 1);
		if (!h->buf) {
			free(h);
			return 0;
		}
		memcpy(h->buf, buf, rx->len);
	} else {
		h->buf = buf;
	}
	h->next = NULL;
	h->rx = *rx;
	if (c->held_tail)
		c->held_tail->next = h;
	else
		c->held = h;
	c->held_tail = h;
	wcm_count(c, WCM_C_HELD);
	return copy ? 0 : WHARF_QP_RECV_KEEP;
}

static void held_free(struct wharf_conn *c, struct wcm_held *h, int keep)
{
	if (h->copy) {
		free(h->buf);
	} else if (keep != WHARF_QP_RECV_KEEP) {
		if (c->qp)
			wharf_qp_res_recv_put(wharf_qp_res_of(c->qp), h->buf);
		else if (c->dev) /* the QP went: whichever res lent it */
			wcm_res_recv_put(c->sh, c->dev, h->buf);
	}
	free(h);
}

static bool delivers(const struct wharf_conn *c)
{
	return !c->quiet && (c->sm.state == WCM_ST_ESTABLISHED ||
			     c->sm.state == WCM_ST_DISCONNECTING);
}

static struct wcm_held *held_pop(struct wharf_conn *c)
{
	struct wcm_held *h = c->held;

	if (h) {
		c->held = h->next;
		if (!c->held)
			c->held_tail = NULL;
	}
	return h;
}

void wcm_held_flush(struct wharf_conn *c)
{
	struct wcm_held *h;

	c->refs++;
	while ((h = held_pop(c))) {
		int keep = 0;

		if (delivers(c) && c->ops->on_recv)
			keep = c->ops->on_recv(c, h->buf, &h->rx, c->arg);
		held_free(c, h, h->copy ? 0 : keep);
	}
	wcm_conn_unref(c);
}

void wcm_held_drop(struct wharf_conn *c)
{
	struct wcm_held *h;

	while ((h = held_pop(c)))
		held_free(c, h, 0);
}

static void run_qp_event(struct wharf_conn *c, enum wcm_qp_event ev)
{
	struct wcm_step st;

	if (wcm_conn_on_qp(&c->sm, ev, &st))
		return;
	wcm_run(c, &st);
}

static int on_recv(struct wharf_qp *qp, void *buf,
		   const struct wharf_qp_recv *rx, void *arg)
{
	struct wharf_conn *c = conn_of_qp(arg);
	struct wcm_step st;
	int ret = 0;

	(void)qp;
	if (wcm_conn_on_qp(&c->sm, WCM_QP_RECV, &st))
		return 0;
	/* Only HOLD/DELIVER/DROP_RECV: no state change, nothing to run. */
	if (st.actions & WCM_ACT_HOLD_RECV)
		return held_push(c, buf, rx);
	if ((st.actions & WCM_ACT_DELIVER_RECV) && c->ops->on_recv &&
	    !c->quiet) {
		c->refs++;
		ret = c->ops->on_recv(c, buf, rx, c->arg);
		wcm_conn_unref(c);
	}
	return ret;
}

static void on_send_done(struct wharf_qp *qp, struct wharf_wr *wr, void *arg)
{
	struct wharf_conn *c = conn_of_qp(arg);

	(void)qp;
	if (c->ops->on_send_done) {
		c->refs++;
		c->ops->on_send_done(c, wr, c->arg);
		wcm_conn_unref(c);
	}
}

static void on_error(struct wharf_qp *qp, enum ibv_wc_status status, void *arg)
{
	struct wharf_conn *c = conn_of_qp(arg);

	(void)qp;
	(void)status;
	if (c->qp != qp)
		return; /* a released QP's late report */
	c->last_err = -EIO;
	run_qp_event(c, WCM_QP_FATAL);
}

static void on_async(struct wharf_qp *qp, enum ibv_event_type event, void *arg)
{
	struct wharf_conn *c = conn_of_qp(arg);

	if (c->qp != qp)
		return;
	switch (event) {
	case IBV_EVENT_COMM_EST:
		run_qp_event(c, WCM_QP_COMM_EST);
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		c->last_err = -EIO;
		run_qp_event(c, WCM_QP_FATAL);
		break;
	default:
		break;
	}
}

static void on_closed(struct wharf_qp *qp, void *arg)
{
	struct wharf_conn *c = conn_of_qp(arg);

	if (qp == c->qp) { /* closed, not yet released */
		c->qp_closed_cb = true;
		return;
	}
	c->qps_draining--; /* released earlier: its last callback */
	wcm_conn_put(c);
}

static const struct wharf_qp_ops qp_ops = {
	.size = sizeof(struct wharf_qp_ops),
	.on_recv = on_recv,
	.on_send_done = on_send_done,
	.on_error = on_error,
	.on_async = on_async,
	.on_closed = on_closed,
};

int wcm_take_qp(struct wharf_conn *c, struct wharf_qp_res *res)
{
	const struct wharf_conn_qp_opts *q = wcm_conn_qp_opts(c);
	struct wharf_qp_opts o = {
		.size = sizeof(o),
		.ops = &qp_ops,
		.arg = c,
		.private_rq = q->private_rq,
		.rq_depth = q->rq_depth,
		.recv_credits = q->recv_credits,
		.sq_depth = q->sq_depth,
		.min_rnr_timer = q->min_rnr_timer,
	};
	int err;

	if (c->qp)
		return -EBUSY;
	err = wharf_qp_take(res, &o, &c->qp);
	if (err) {
		c->qp = NULL;
		return err;
	}
	c->qp_closed_cb = false;
	wcm_conn_bind_qp(c);
	return 0;
}

void wcm_qp_close(struct wharf_conn *c)
{
	if (c->qp)
		(void)wharf_qp_close(c->qp);
}

void wcm_qp_release(struct wharf_conn *c, bool timewait_exit)
{
	enum wharf_qp_fate fate;
	struct wharf_qp *qp = c->qp;

	if (!qp)
		return;
	if (c->qp_bound) {
		wcm_conn_table_unbind_qp(c->cm->table, &c->entry);
		c->qp_bound = false;
	}
	(void)wharf_qp_close(qp);
	if (!c->qpn_sent)
		fate = WHARF_QP_FATE_UNUSED;
	else if (timewait_exit)
		fate = WHARF_QP_FATE_TIMEWAIT_EXIT;
	else
		fate = WHARF_QP_FATE_UNKNOWN;
	if (timewait_exit)
		wcm_count(c, WCM_C_TW_EXITS);
	c->qp = NULL;
	if (!c->qp_closed_cb)
		c->qps_draining++; /* on_closed is still to come */
	c->qp_closed_cb = false;
	(void)wharf_qp_release(qp, fate);
}

int wcm_act_notify(struct wharf_conn *c)
{
	if (!c->cm_id)
		return -ENOTCONN;
	wcm_count(c, WCM_C_NOTIFIES);
	if (rdma_notify(c->cm_id, IBV_EVENT_COMM_EST)) {
		int err = wcm_errno();

		return err == -EISCONN ? 0 : err;
	}
	return 0;
}

int wcm_act_disconnect(struct wharf_conn *c)
{
	struct wcm_cm_input in = {0};

	if (c->ps == WCM_PS_UD) {
		/* No DREQ in UD: end it here, through the state machine. */
		if (c->sm.state != WCM_ST_DISCONNECTING)
			return 0;
		in.event = WCM_CM_DISCONNECTED;
		wcm_feed_cm(c, &in);
		in.event = WCM_CM_TIMEWAIT_EXIT;
		wcm_feed_cm(c, &in);
		return 0;
	}
	if (!c->cm_id)
		return -ENOTCONN;
	if (rdma_disconnect(c->cm_id))
		return wcm_errno();
	return 0;
}
