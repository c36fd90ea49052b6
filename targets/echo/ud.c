/*
 * targets/echo/ud.c - udaddy's exchange over UD (echo.h).  The UD QPs and
 * their CQs are the program's own (wharf's qp module drives RC QPs); they
 * live on wharf_conn_pd() and are polled by one poller per shard.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "targets/echo/echo.h"

static unsigned n_msgs(const struct echo *e)
{
	return e->a.count ? e->a.count : 1;
}

static char *slot(struct echo_conn *ec, unsigned i)
{
	return (char *)ec->buf + (size_t)i * (ec->e->a.size + ECHO_GRH);
}

static int post_recvs(struct echo_conn *ec)
{
	struct echo *e = ec->e;

	for (unsigned i = 0; i < e->a.count; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)slot(ec, i),
			.length = e->a.size + ECHO_GRH,
			.lkey = ec->mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1};
		struct ibv_recv_wr *bad;
		int err = ibv_post_recv(ec->qp, &wr, &bad);

		if (err)
			return -err;
	}
	return 0;
}

static int ud_setup(struct echo_conn *ec)
{
	struct echo *e = ec->e;
	struct ibv_pd *pd = wharf_conn_pd(ec->conn);
	unsigned n = n_msgs(e);
	size_t len = (size_t)n * (e->a.size + ECHO_GRH) + e->a.size;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UD,
		.cap = {.max_send_wr = n,
			.max_recv_wr = n,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	int err;

	if (!pd)
		return -ENOTCONN;
	err = echo_ud_poller_ensure(e, ec->shard, pd->context);
	if (err)
		return err;
	ec->cq = ibv_create_cq(pd->context, (int)(2 * n + 2), ec,
			       e->shards[ec->shard].cc, 0);
	if (!ec->cq)
		return -errno;
	err = ibv_req_notify_cq(ec->cq, 0);
	if (err)
		return -err;
	qa.send_cq = qa.recv_cq = ec->cq;
	ec->qp = ibv_create_qp(pd, &qa);
	if (!ec->qp)
		return -errno;
	err = wharf_conn_ud_qp_ready(ec->conn, ec->qp);
	if (err)
		return err;
	ec->buf = calloc(1, len);
	if (!ec->buf)
		return -ENOMEM;
	ec->mr = ibv_reg_mr(pd, ec->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!ec->mr)
		return -errno;
	return post_recvs(ec);
}

static int post_sends(struct echo_conn *ec, struct ibv_ah *ah)
{
	struct echo *e = ec->e;
	char *msg = slot(ec, n_msgs(e));
	struct ibv_sge sge = {.addr = (uintptr_t)msg,
			      .length = e->a.size,
			      .lkey = ec->mr->lkey};
	struct ibv_send_wr wr = {
		.wr_id = UINT64_MAX,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(ec->qp->qp_num),
	};
	struct ibv_send_wr *bad;

	memset(msg, 0x5a, e->a.size);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = ec->remote_qpn;
	wr.wr.ud.remote_qkey = ec->remote_qkey;
	for (unsigned i = 0; i < e->a.count; i++) {
		int err = ibv_post_send(ec->qp, &wr, &bad);

		if (err)
			return -err;
	}
	ec->replied = true;
	return 0;
}

static void fail_conn(struct echo_conn *ec, const char *what, int err)
{
	echo_fail(ec->e, what, err);
	echo_finished(ec->e, ec, false);
}

/* Server: the first receive gives the peer (GRH, immediate, Q_Key). */
static int learn_peer(struct echo_conn *ec, struct ibv_wc *wc)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int err;

	ec->ah = ibv_create_ah_from_wc(
		ec->qp->pd, wc, (struct ibv_grh *)slot(ec, (unsigned)wc->wr_id),
		wharf_conn_port_num(ec->conn));
	if (!ec->ah)
		return -errno;
	ec->remote_qpn = be32toh(wc->imm_data);
	err = ibv_query_qp(ec->qp, &attr, IBV_QP_QKEY, &init);
	if (err)
		return -err;
	ec->remote_qkey = attr.qkey;
	return 0;
}

static void completion(struct echo_conn *ec, struct ibv_wc *wc)
{
	struct echo *e = ec->e;
	bool server = !e->a.dst;
	int err;

	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "wharf-echo: UD completion: %s\n",
			ibv_wc_status_str(wc->status));
		fail_conn(ec, "UD completion", -EIO);
		return;
	}
	if (!(wc->opcode & IBV_WC_RECV)) {
		if (++ec->sends_done == e->a.count && server)
			echo_finished(e, ec, true);
		return;
	}
	ec->recvs++;
	if (server && !ec->ah) {
		err = learn_peer(ec, wc);
		if (err) {
			fail_conn(ec, "reply address", err);
			return;
		}
	}
	if (ec->recvs < e->a.count)
		return;
	if (!server) {
		echo_finished(e, ec, true);
		return;
	}
	err = post_sends(ec, ec->ah);
	if (err)
		fail_conn(ec, "post replies", err);
}

static int ud_poll(struct wharf_shard *shard, void *arg)
{
	struct echo *e = arg;
	struct echo_shard *sh = &e->shards[wharf_shard_index(shard)];
	int work = 0;

	for (struct echo_conn *ec = sh->conns; ec; ec = ec->next) {
		struct ibv_wc wc[16];
		int n;

		if (!ec->cq || ec->done)
			continue;
		n = ibv_poll_cq(ec->cq, 16, wc);
		for (int i = 0; i < n && !ec->done; i++)
			completion(ec, &wc[i]);
		work += n > 0 ? n : 0;
	}
	return work;
}

/* Before the shard sleeps: re-arm every CQ, then look once more. */
static int ud_arm(struct wharf_shard *shard, void *arg)
{
	struct echo *e = arg;
	struct echo_shard *sh = &e->shards[wharf_shard_index(shard)];

	for (struct echo_conn *ec = sh->conns; ec; ec = ec->next)
		if (ec->cq && !ec->done)
			ibv_req_notify_cq(ec->cq, 0);
	return ud_poll(shard, arg);
}

/* A CQ event woke the shard: acknowledge it; the poller does the rest. */
static void cc_ready(struct wharf_watch *w, int fd, uint32_t events, void *arg)
{
	struct echo_shard *sh = arg;
	struct ibv_cq *cq;
	void *ctx;

	(void)w;
	(void)fd;
	(void)events;
	while (!ibv_get_cq_event(sh->cc, &cq, &ctx))
		ibv_ack_cq_events(cq, 1);
}

int echo_ud_poller_ensure(struct echo *e, unsigned shard,
			  struct ibv_context *verbs)
{
	struct echo_shard *sh = &e->shards[shard];
	struct wharf_shard *s = wharf_ctx_shard(e->ctx, shard);
	int fl, err;

	if (sh->poller)
		return 0;
	sh->cc = ibv_create_comp_channel(verbs);
	if (!sh->cc)
		return -errno;
	fl = fcntl(sh->cc->fd, F_GETFL);
	if (fl < 0 || fcntl(sh->cc->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	err = wharf_shard_watch(s, sh->cc->fd, WHARF_WATCH_IN, cc_ready, sh,
				&sh->ccw);
	if (err)
		return err;
	return wharf_shard_poller_add(s, ud_poll, ud_arm, e, &sh->poller);
}

/* On the shard, after its connections' CQs are gone. */
void echo_ud_shard_stop(struct echo_shard *sh)
{
	if (sh->poller)
		wharf_poller_remove(sh->poller);
	sh->poller = NULL;
	if (sh->ccw)
		wharf_watch_remove(sh->ccw);
	sh->ccw = NULL;
	if (sh->cc)
		ibv_destroy_comp_channel(sh->cc);
	sh->cc = NULL;
}

static void on_request(struct wharf_conn *conn,
		       const struct wharf_conn_request *req, void *arg)
{
	struct echo_conn *ec = echo_conn_of(conn, arg);
	struct wharf_conn_param p = {.size = sizeof(p)};
	int err;

	(void)req;
	if (!ec)
		return;
	err = ud_setup(ec);
	if (!err) {
		p.ud_qp_num = ec->qp->qp_num;
		err = wharf_accept(conn, &p);
	}
	if (err)
		fail_conn(ec, "UD accept", err);
}

static void client_go(struct echo_conn *ec)
{
	int err;

	if (ec->e->a.dst && !ec->replied) {
		err = post_sends(ec, ec->peer_ah);
		if (err)
			fail_conn(ec, "post sends", err);
	}
}

static void on_established(struct wharf_conn *conn,
			   const struct wharf_conn_info *info, void *arg)
{
	struct echo_conn *ec = echo_conn_of(conn, arg);
	struct echo *e;
	int err;

	if (!ec)
		return;
	e = ec->e;
	if (e->a.dst) { /* the SIDR reply */
		ec->remote_qpn = info->remote_qp_num;
		ec->remote_qkey = info->qkey;
		ec->peer_ah = info->ah;
		err = ud_setup(ec);
		if (err) {
			fail_conn(ec, "UD QP", err);
			return;
		}
	}
	ec->established = true;
	if (atomic_fetch_add(&e->established, 1) + 1 == e->a.conns)
		echo_all_established(e, client_go);
	if (!e->a.count && !e->a.dst)
		echo_finished(e, ec, true);
}

static void on_rejected(struct wharf_conn *conn,
			const struct wharf_conn_reject *rej, void *arg)
{
	echo_conn_failed(conn, arg, "UD lookup rejected, status %d",
			 rej->reason);
}

static void on_error(struct wharf_conn *conn, enum wharf_conn_error error,
		     int err, void *arg)
{
	echo_conn_failed(conn, arg, "UD connection error %d: %s", (int)error,
			 strerror(-err));
}

const struct wharf_conn_ops echo_ud_ops = {
	.size = sizeof(struct wharf_conn_ops),
	.on_request = on_request,
	.on_established = on_established,
	.on_rejected = on_rejected,
	.on_error = on_error,
};
