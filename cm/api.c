/*
 * cm/api.c - wharf_notify(), wharf_disconnect(), wharf_conn_destroy(), the
 * UD QP helper and the step timestamps: API calls on a connection, each a wcm_conn_on_api()
 * transition executed by wcm_run().
 */
#include <errno.h>
#include <time.h>

#include "cm/rt.h"

void wcm_stamp(struct wharf_conn *c, enum wharf_conn_step step)
{
	c->step_ns[step] = wharf_now_ns();
}

uint64_t wharf_conn_step_ns(const struct wharf_conn *conn,
			    enum wharf_conn_step step)
{
	if (!conn || (unsigned)step >= WHARF_STEP_COUNT)
		return 0;
	return conn->step_ns[step];
}

/* Run an API transition; returns its precondition error or last_err. */
static int api(struct wharf_conn *c, enum wcm_api call)
{
	struct wcm_step st;
	int err;

	if (!c || c->freeing)
		return -EINVAL;
	err = wcm_conn_on_api(&c->sm, call, &st);
	if (err)
		return err;
	c->refs++;
	c->last_err = 0;
	wcm_run(c, &st);
	err = c->last_err;
	wcm_conn_unref(c);
	return err;
}

int wharf_notify(struct wharf_conn *conn, int event)
{
	if (!conn || wcm_notify_event_check(event))
		return -EINVAL;
	if (conn->sm.state == WCM_ST_ESTABLISHED && conn->cm_id) {
		/* Nothing to do for the state machine; rdma_notify would say
		 * EISCONN, which is success. */
		return 0;
	}
	return api(conn, WCM_API_NOTIFY);
}

int wharf_disconnect(struct wharf_conn *conn)
{
	int err;

	if (!conn || conn->freeing)
		return -EINVAL;
	/* The DREQ may wait for a slot.  A slot is taken only when
	 * ESTABLISHED, where the call is always valid: its transition
	 * (wcm_run) settles it. */
	err = wcm_dwin_disconnect(conn);
	if (err)
		return err > 0 ? 0 : err;
	err = api(conn, WCM_API_DISCONNECT);

	/* A failed DREQ ends in a forced teardown: the call still did it. */
	return err == -EINVAL || err == -EALREADY || err == -ENOTCONN ? err : 0;
}

int wharf_conn_destroy(struct wharf_conn *conn)
{
	if (!conn || conn->freeing || !conn->app_ref ||
	    conn->sm.state == WCM_ST_DESTROYED)
		return -EINVAL;
	atomic_store_explicit(&conn->dead, 1, memory_order_release);
	conn->refs++;
	/* Valid in every state but DESTROYED (checked above).  What the
	 * step's calls return is not the caller's error: a REJ for a request
	 * whose peer already left fails with EINVAL, yet the connection is
	 * destroyed all the same. */
	(void)api(conn, WCM_API_DESTROY);
	conn->app_ref = false;
	conn->quiet = true;
	wcm_held_drop(conn);
	wcm_conn_unref(conn);
	return 0;
}

int wharf_conn_ud_qp_ready(struct wharf_conn *conn, struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_INIT};
	int mask, err;

	if (!conn || !qp || conn->ps != WCM_PS_UD || qp->qp_type != IBV_QPT_UD)
		return -EINVAL;
	if (!conn->cm_id || !conn->dev)
		return -ENOTCONN;
	if (rdma_init_qp_attr(conn->cm_id, &attr, &mask))
		return wcm_errno();
	err = ibv_modify_qp(qp, &attr, mask);
	if (err)
		return -err;
	attr = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR};
	err = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (err)
		return -err;
	attr = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .sq_psn = 0};
	err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return err ? -err : 0;
}
