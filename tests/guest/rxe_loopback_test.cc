/*
 * Proves the guest test bed: rxe0 exists with sane attributes, and a
 * loopback RC connection through the kernel RDMA CM carries a SEND/RECV and
 * an RDMA READ, then tears down cleanly.  Raw librdmacm + verbs on purpose:
 * this checks the environment, not wharf.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "tests/guest/guest_env.h"

namespace
{

using wharf_guest::kRxeAddr;
using wharf_guest::kRxeDev;

/* TCG is slow: generous, but bounded, waits. */
constexpr int kEventTimeoutMs = 20000;

struct DeviceList {
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	~DeviceList()
	{
		if (list)
			ibv_free_device_list(list);
	}
};

/* Next CM event on @ch, or nullptr after kEventTimeoutMs. */
rdma_cm_event *next_event(rdma_event_channel *ch)
{
	pollfd p = {ch->fd, POLLIN, 0};
	if (poll(&p, 1, kEventTimeoutMs) != 1)
		return nullptr;
	rdma_cm_event *ev = nullptr;
	if (rdma_get_cm_event(ch, &ev))
		return nullptr;
	return ev;
}

/* Waits for @want on @ch, acks it, returns the id it concerns. */
::testing::AssertionResult expect_event(rdma_event_channel *ch,
					rdma_cm_event_type want,
					rdma_cm_id **id_out = nullptr)
{
	rdma_cm_event *ev = next_event(ch);
	if (!ev)
		return ::testing::AssertionFailure()
		       << "no event, wanted " << rdma_event_str(want);
	rdma_cm_event_type got = ev->event;
	int status = ev->status;
	if (id_out)
		*id_out = ev->id;
	rdma_ack_cm_event(ev);
	if (got != want)
		return ::testing::AssertionFailure()
		       << "got " << rdma_event_str(got) << " status " << status
		       << ", wanted " << rdma_event_str(want);
	return ::testing::AssertionSuccess();
}

::testing::AssertionResult poll_one(ibv_cq *cq, ibv_wc *wc)
{
	auto deadline = std::chrono::steady_clock::now() +
			std::chrono::milliseconds(kEventTimeoutMs);
	while (std::chrono::steady_clock::now() < deadline) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return ::testing::AssertionFailure() << "poll_cq " << n;
		if (n == 1) {
			if (wc->status != IBV_WC_SUCCESS)
				return ::testing::AssertionFailure()
				       << "wc status "
				       << ibv_wc_status_str(wc->status);
			return ::testing::AssertionSuccess();
		}
		std::this_thread::sleep_for(std::chrono::microseconds(50));
	}
	return ::testing::AssertionFailure() << "no completion";
}

/* One side of the connection: its own PD, CQ and one registered buffer. */
struct Side {
	rdma_cm_id *id = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_mr *mr = nullptr;
	char buf[4096] = {};

	bool setup(rdma_cm_id *cm_id)
	{
		id = cm_id;
		pd = ibv_alloc_pd(id->verbs);
		cq = pd ? ibv_create_cq(id->verbs, 16, nullptr, nullptr, 0)
			: nullptr;
		mr = cq ? ibv_reg_mr(pd, buf, sizeof(buf),
				     IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_REMOTE_READ)
			: nullptr;
		if (!mr)
			return false;
		ibv_qp_init_attr qa = {};
		qa.send_cq = cq;
		qa.recv_cq = cq;
		qa.qp_type = IBV_QPT_RC;
		qa.cap.max_send_wr = 4;
		qa.cap.max_recv_wr = 4;
		qa.cap.max_send_sge = 1;
		qa.cap.max_recv_sge = 1;
		return rdma_create_qp(id, pd, &qa) == 0;
	}

	~Side()
	{
		if (id && id->qp)
			rdma_destroy_qp(id);
		if (mr)
			ibv_dereg_mr(mr);
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		if (id)
			rdma_destroy_id(id);
	}
};

TEST(RxeDevice, PresentWithSaneAttributes)
{
	WHARF_REQUIRE_GUEST();
	DeviceList devs;
	ASSERT_NE(devs.list, nullptr);
	ibv_device *rxe = nullptr;
	for (int i = 0; i < devs.n; i++)
		if (std::string(ibv_get_device_name(devs.list[i])) == kRxeDev)
			rxe = devs.list[i];
	ASSERT_NE(rxe, nullptr) << "rxe0 not found";

	ibv_context *ctx = ibv_open_device(rxe);
	ASSERT_NE(ctx, nullptr);
	ibv_device_attr da = {};
	ASSERT_EQ(ibv_query_device(ctx, &da), 0);
	EXPECT_GT(da.max_qp, 1000);
	EXPECT_GT(da.max_qp_wr, 256);
	EXPECT_GT(da.max_srq, 0);
	EXPECT_GE(da.max_srq_wr, 1024);
	EXPECT_GT(da.max_qp_rd_atom, 0);
	EXPECT_GT(da.max_qp_init_rd_atom, 0);
	EXPECT_EQ(da.phys_port_cnt, 1);

	ibv_port_attr pa = {};
	ASSERT_EQ(ibv_query_port(ctx, 1, &pa), 0);
	EXPECT_EQ(pa.state, IBV_PORT_ACTIVE);
	EXPECT_EQ(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	ibv_close_device(ctx);
}

TEST(RxeLoopback, RcSendRecvAndRdmaRead)
{
	WHARF_REQUIRE_GUEST();
	rdma_event_channel *sch = rdma_create_event_channel();
	rdma_event_channel *cch = rdma_create_event_channel();
	ASSERT_TRUE(sch && cch);

	rdma_cm_id *listen_id = nullptr;
	ASSERT_EQ(rdma_create_id(sch, &listen_id, nullptr, RDMA_PS_TCP), 0);
	sockaddr_in sin = {};
	sin.sin_family = AF_INET;
	ASSERT_EQ(inet_pton(AF_INET, kRxeAddr, &sin.sin_addr), 1);
	ASSERT_EQ(rdma_bind_addr(listen_id, (sockaddr *)&sin), 0);
	ASSERT_EQ(rdma_listen(listen_id, 8), 0);
	sin.sin_port = rdma_get_src_port(listen_id);
	ASSERT_NE(sin.sin_port, 0);

	{
		Side cli, srv;
		rdma_cm_id *cid = nullptr;
		ASSERT_EQ(rdma_create_id(cch, &cid, nullptr, RDMA_PS_TCP), 0);
		cli.id = cid;
		ASSERT_EQ(rdma_resolve_addr(cid, nullptr, (sockaddr *)&sin,
					    kEventTimeoutMs),
			  0);
		ASSERT_TRUE(expect_event(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
		ASSERT_EQ(rdma_resolve_route(cid, kEventTimeoutMs), 0);
		ASSERT_TRUE(expect_event(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
		ASSERT_TRUE(cli.setup(cid));

		rdma_conn_param cp = {};
		cp.responder_resources = 1;
		cp.initiator_depth = 1;
		cp.retry_count = 7;
		cp.rnr_retry_count = 7;
		ASSERT_EQ(rdma_connect(cid, &cp), 0);

		rdma_cm_id *sid = nullptr;
		ASSERT_TRUE(
			expect_event(sch, RDMA_CM_EVENT_CONNECT_REQUEST, &sid));
		ASSERT_TRUE(srv.setup(sid));
		ibv_sge rsge = {(uintptr_t)srv.buf, 64, srv.mr->lkey};
		ibv_recv_wr rwr = {}, *bad_r = nullptr;
		rwr.wr_id = 1;
		rwr.sg_list = &rsge;
		rwr.num_sge = 1;
		ASSERT_EQ(ibv_post_recv(sid->qp, &rwr, &bad_r), 0);
		ASSERT_EQ(rdma_accept(sid, &cp), 0);
		ASSERT_TRUE(expect_event(cch, RDMA_CM_EVENT_ESTABLISHED));
		ASSERT_TRUE(expect_event(sch, RDMA_CM_EVENT_ESTABLISHED));

		/* SEND client -> server. */
		const char msg[] = "wharf says hello";
		std::memcpy(cli.buf, msg, sizeof(msg));
		ibv_sge ssge = {(uintptr_t)cli.buf, sizeof(msg), cli.mr->lkey};
		ibv_send_wr swr = {}, *bad_s = nullptr;
		swr.wr_id = 2;
		swr.sg_list = &ssge;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		ASSERT_EQ(ibv_post_send(cid->qp, &swr, &bad_s), 0);
		ibv_wc wc = {};
		ASSERT_TRUE(poll_one(cli.cq, &wc));
		EXPECT_EQ(wc.opcode, IBV_WC_SEND);
		ASSERT_TRUE(poll_one(srv.cq, &wc));
		EXPECT_EQ(wc.opcode, IBV_WC_RECV);
		EXPECT_EQ(wc.wr_id, 1u);
		EXPECT_EQ(wc.byte_len, sizeof(msg));
		EXPECT_STREQ(srv.buf, msg);

		/* RDMA READ: the client pulls a pattern out of the server. */
		for (int i = 0; i < 1024; i++)
			srv.buf[1024 + i] = (char)(i * 7 + 3);
		std::memset(cli.buf + 1024, 0, 1024);
		ibv_sge lsge = {(uintptr_t)(cli.buf + 1024), 1024,
				cli.mr->lkey};
		ibv_send_wr rd = {}, *bad_rd = nullptr;
		rd.wr_id = 3;
		rd.sg_list = &lsge;
		rd.num_sge = 1;
		rd.opcode = IBV_WR_RDMA_READ;
		rd.send_flags = IBV_SEND_SIGNALED;
		rd.wr.rdma.remote_addr = (uintptr_t)(srv.buf + 1024);
		rd.wr.rdma.rkey = srv.mr->rkey;
		ASSERT_EQ(ibv_post_send(cid->qp, &rd, &bad_rd), 0);
		ASSERT_TRUE(poll_one(cli.cq, &wc));
		EXPECT_EQ(wc.opcode, IBV_WC_RDMA_READ);
		EXPECT_EQ(wc.byte_len, 1024u);
		EXPECT_EQ(std::memcmp(cli.buf + 1024, srv.buf + 1024, 1024), 0);

		/*
		 * Teardown from the client.  The passive side answers the DREQ
		 * with its own rdma_disconnect (that sends the DREP); without
		 * it the active side only sees DISCONNECTED after the DREQ
		 * times out.
		 */
		ASSERT_EQ(rdma_disconnect(cid), 0);
		EXPECT_TRUE(expect_event(sch, RDMA_CM_EVENT_DISCONNECTED));
		EXPECT_EQ(rdma_disconnect(sid), 0);
		EXPECT_TRUE(expect_event(cch, RDMA_CM_EVENT_DISCONNECTED));
	}
	EXPECT_EQ(rdma_destroy_id(listen_id), 0);
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
}

} // namespace
