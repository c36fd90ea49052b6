/*
 * targets/echo/rc.c - ucmatose's exchange over RC connections (echo.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "targets/echo/echo.h"

static int ensure_buf(struct echo_conn *ec)
{
	struct echo *e = ec->e;
	size_t n = e->a.count ? e->a.count : 1;

	if (ec->mr)
		return 0;
	ec->buf = malloc(e->a.size);
	ec->wrs = calloc(n, sizeof(*ec->wrs));
	if (!ec->buf || !ec->wrs)
		return -ENOMEM;
	memset(ec->buf, 0x5a, e->a.size);
	ec->mr = ibv_reg_mr(wharf_conn_pd(ec->conn), ec->buf, e->a.size,
			    IBV_ACCESS_LOCAL_WRITE);
	return ec->mr ? 0 : -errno;
}

static void post_sends(struct echo_conn *ec)
{
	struct echo *e = ec->e;
	struct ibv_sge sge;
	int err;

	err = ensure_buf(ec);
	if (err) {
		echo_fail(e, "send buffer", err);
		echo_finished(e, ec, false);
		return;
	}
	sge.addr = (uintptr_t)ec->buf;
	sge.length = e->a.size;
	sge.lkey = ec->mr->lkey;
	for (unsigned i = 0; i < e->a.count; i++) {
		struct echo_wr *w = &ec->wrs[i];

		wharf_wr_init(&w->wr, ECHO_WR_TAG);
		w->ec = ec;
		err = wharf_qp_post_send(wharf_conn_qp(ec->conn), &w->wr, &sge,
					 1, false, 0);
		if (err) {
			echo_fail(e, "post send", err);
			echo_finished(e, ec, false);
			return;
		}
		ec->sends_posted++;
	}
}

static bool is_server(const struct echo *e)
{
	return !e->a.dst;
}

static void disconnect(struct echo_conn *ec)
{
	int err;

	if (ec->disconnected)
		return; /* the client's DREQ came first */
	echo_log(ec->e, "connection %#llx disconnecting",
		 (unsigned long long)ec->id);
	err = wharf_disconnect(ec->conn);
	if (err)
		echo_fail(ec->e, "disconnect", err);
}

static void hold_done(struct wharf_timer *t, void *arg)
{
	(void)t;
	disconnect(arg);
}

/* Server: both directions done -> disconnect (ucmatose's order), after
 * --hold-ms. */
static void server_check(struct echo_conn *ec)
{
	struct echo *e = ec->e;
	int err;

	if (ec->replied || ec->sends_done < e->a.count ||
	    ec->recvs < e->a.count)
		return;
	ec->replied = true;
	if (!e->a.hold_ms) {
		disconnect(ec);
		return;
	}
	err = wharf_timer_create(wharf_conn_shard(ec->conn), hold_done, ec,
				 &ec->hold);
	if (!err)
		err = wharf_timer_arm(ec->hold,
				      (uint64_t)e->a.hold_ms * 1000000);
	if (err) {
		echo_fail(e, "hold timer", err);
		disconnect(ec);
	}
}

/* Client: all established and every message in -> the replies. */
static void client_check(struct echo_conn *ec)
{
	struct echo *e = ec->e;

	if (ec->replied || !atomic_load(&e->go) || ec->recvs < e->a.count)
		return;
	ec->replied = true;
	post_sends(ec);
}

static void go(struct echo_conn *ec)
{
	if (is_server(ec->e)) {
		post_sends(ec);
		server_check(ec); /* -C 0 */
	} else {
		client_check(ec);
	}
}

static void on_request(struct wharf_conn *conn,
		       const struct wharf_conn_request *req, void *arg)
{
	struct echo_conn *ec = echo_conn_of(conn, arg);
	int err;

	(void)req;
	if (!ec)
		return;
	/* ucmatose: rdma_accept(id, NULL); the SRQ already has receives. */
	err = wharf_accept(conn, NULL);
	if (err) {
		echo_fail(ec->e, "accept", err);
		echo_finished(ec->e, ec, false);
	}
}

static void on_established(struct wharf_conn *conn,
			   const struct wharf_conn_info *info, void *arg)
{
	struct echo_conn *ec = echo_conn_of(conn, arg);
	struct echo *e;

	(void)info;
	if (!ec)
		return;
	e = ec->e;
	ec->established = true;
	echo_log(e, "connection %#llx established", (unsigned long long)ec->id);
	if (atomic_fetch_add(&e->established, 1) + 1 == e->a.conns)
		echo_all_established(e, go);
}

static void on_rejected(struct wharf_conn *conn,
			const struct wharf_conn_reject *rej, void *arg)
{
	echo_conn_failed(conn, arg, "connection rejected, reason %d",
			 rej->reason);
}

static void on_error(struct wharf_conn *conn, enum wharf_conn_error error,
		     int err, void *arg)
{
	echo_conn_failed(conn, arg, "connection error %d: %s", (int)error,
			 strerror(-err));
}

static void on_disconnected(struct wharf_conn *conn, void *arg)
{
	struct echo_conn *ec = echo_conn_of(conn, arg);
	struct echo *e;
	bool ok;

	if (!ec)
		return;
	e = ec->e;
	ec->disconnected = true;
	echo_log(e, "connection %#llx disconnected",
		 (unsigned long long)ec->id);
	if (is_server(e))
		ok = ec->recvs >= e->a.count && ec->sends_done == e->a.count;
	else
		ok = ec->recvs >= e->a.count && ec->sends_posted == e->a.count;
	if (!ok)
		fprintf(stderr,
			"wharf-echo: %#llx disconnected early: %u "
			"received, %u sent\n",
			(unsigned long long)ec->id, ec->recvs,
			ec->sends_posted);
	echo_finished(e, ec, ok);
}

static int on_recv(struct wharf_conn *conn, void *buf,
		   const struct wharf_qp_recv *rx, void *arg)
{
	struct echo_conn *ec = echo_conn_of(conn, arg);

	(void)buf;
	(void)rx;
	if (!ec)
		return 0;
	ec->recvs++;
	if (is_server(ec->e))
		server_check(ec);
	else
		client_check(ec);
	return 0;
}

static void on_send_done(struct wharf_conn *conn, struct wharf_wr *wr,
			 void *arg)
{
	struct echo_wr *w = wharf_wr_entry(wr, struct echo_wr, wr, ECHO_WR_TAG);
	struct echo_conn *ec;

	(void)conn;
	(void)arg;
	if (!w)
		return;
	ec = w->ec;
	ec->completions++;
	if (ec->zombie) {
		if (ec->completions == ec->sends_posted) {
			echo_conn_release(ec);
			free(ec);
		}
		return;
	}
	if (wr->status != IBV_WC_SUCCESS) {
		if (!ec->done && !ec->disconnected)
			echo_fail(ec->e, "send completion", -EIO);
		return;
	}
	ec->sends_done++;
	if (is_server(ec->e))
		server_check(ec);
}

void echo_conn_release(struct echo_conn *ec)
{
	if (ec->qp)
		ibv_destroy_qp(ec->qp);
	if (ec->ah)
		ibv_destroy_ah(ec->ah);
	if (ec->cq)
		ibv_destroy_cq(ec->cq);
	if (ec->mr)
		ibv_dereg_mr(ec->mr);
	free(ec->buf);
	free(ec->wrs);
	ec->qp = NULL;
	ec->ah = NULL;
	ec->cq = NULL;
	ec->mr = NULL;
	ec->buf = NULL;
	ec->wrs = NULL;
}

const struct wharf_conn_ops echo_rc_ops = {
	.size = sizeof(struct wharf_conn_ops),
	.on_request = on_request,
	.on_established = on_established,
	.on_rejected = on_rejected,
	.on_error = on_error,
	.on_disconnected = on_disconnected,
	.on_recv = on_recv,
	.on_send_done = on_send_done,
};
