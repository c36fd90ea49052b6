// UD (RDMA_PS_UDP) on real rdma_cm: the connect is a service-ID lookup
// that delivers the remote QP number, its Q_Key and an address handle; the
// passive side accepts with its own UD QP and <= 136 bytes of private
// data; a datagram then goes through on what the lookup returned.
#include "tests/guest/cm_guest_util.h"

using namespace wharf_cm_test;

namespace
{

// A UD QP with its CQ and one receive buffer, on a connection's PD.
struct UdQp {
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	ibv_mr *mr = nullptr;
	char buf[512] = {};

	int Create(wharf_conn *c)
	{
		ibv_pd *pd = wharf_conn_pd(c);
		if (!pd)
			return -ENOTCONN;
		cq = ibv_create_cq(pd->context, 16, nullptr, nullptr, 0);
		ibv_qp_init_attr ia = {};
		ia.send_cq = ia.recv_cq = cq;
		ia.qp_type = IBV_QPT_UD;
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		qp = cq ? ibv_create_qp(pd, &ia) : nullptr;
		mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		if (!qp || !mr)
			return -ENOMEM;
		int err = wharf_conn_ud_qp_ready(c, qp);
		if (err)
			return err;
		ibv_sge sge = {(uintptr_t)buf, sizeof(buf), mr->lkey};
		ibv_recv_wr wr = {}, *bad;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		return -ibv_post_recv(qp, &wr, &bad);
	}
	// Before wharf_cm_destroy(): the QP is on the cm's UD PD.
	void Close()
	{
		if (qp) {
			EXPECT_EQ(0, ibv_destroy_qp(qp));
		}
		if (cq) {
			EXPECT_EQ(0, ibv_destroy_cq(cq));
		}
		if (mr) {
			EXPECT_EQ(0, ibv_dereg_mr(mr));
		}
		qp = nullptr;
		cq = nullptr;
		mr = nullptr;
	}
	~UdQp()
	{
		Close();
	}
	// Waits for one completion (bounded).
	bool Wait(ibv_wc *wc)
	{
		auto end = Clock::now() + kWait;
		while (Clock::now() < end) {
			if (ibv_poll_cq(cq, 1, wc) > 0)
				return true;
			std::this_thread::sleep_for(
				std::chrono::milliseconds(1));
		}
		return false;
	}
};

TEST_F(CmGuest, UdLookupDeliversRemoteQpnQkeyAndAddressHandle)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	// Verbs objects the callbacks create: kept until the cm is gone.
	UdQp &pqp = *Keep(new UdQp), &aqp = *Keep(new UdQp);
	std::vector<uint8_t> acc(136), req(180);
	for (size_t i = 0; i < acc.size(); i++)
		acc[i] = (uint8_t)(0xA0 + i);
	for (size_t i = 0; i < req.size(); i++)
		req[i] = (uint8_t)(0x10 + i);
	Recorder *r = &srv;
	UdQp *pq = &pqp, *aq = &aqp;
	srv.on_request = [r, pq, acc](wharf_conn *c,
				      const wharf_conn_request *q) {
		EXPECT_EQ(WHARF_PS_UD, q->ps);
		UdQp &pqp = *pq;
		r->Push(pqp.Create(c));
		r->Push(wharf_accept(c, nullptr)); // needs the QP
		wharf_conn_param p = {};
		p.size = sizeof(p);
		p.ud_qp_num = pqp.qp->qp_num;
		std::vector<uint8_t> big(137);
		p.private_data = big.data();
		p.private_data_len = big.size(); // UD accept limit: 136
		r->Push(wharf_accept(c, &p));
		p.private_data = acc.data();
		p.private_data_len = acc.size();
		r->Push(wharf_accept(c, &p));
	};
	uint16_t port =
		Listen(&srv, [](wharf_listen_opts &o) { o.ps = WHARF_PS_UD; });
	wharf_conn_param p = {};
	p.size = sizeof(p);
	std::vector<uint8_t> over(181);
	p.private_data = over.data();
	p.private_data_len = over.size(); // UD connect limit: 180
	sockaddr_in a = Addr(port);
	wharf_connect_opts o;
	wharf_connect_opts_init(&o);
	o.dst = (sockaddr *)&a;
	o.ps = WHARF_PS_UD;
	o.ops = Recorder::Ops();
	o.arg = &cli;
	o.param = &p;
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, &o, nullptr));
	p.private_data = req.data();
	p.private_data_len = req.size();
	uint64_t id = 0;
	cli.on_established = [aq](wharf_conn *c, const wharf_conn_info *) {
		EXPECT_EQ(0, aq->Create(c));
	};
	ASSERT_EQ(0, wharf_connect(cm_, &o, &id));
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1)) << cli.Dump();
	ASSERT_TRUE(srv.WaitRcs(4));
	std::vector<int> want = {0, -EINVAL, -EINVAL, 0};
	EXPECT_EQ(want, srv.Rcs());
	// The SIDR REQ's private data: all 180 bytes.
	EXPECT_EQ(req, srv.First(Ev::Request).data);
	// The passive side is established as soon as the SIDR REP is out.
	EXPECT_TRUE(srv.WaitCount(Ev::Established, 1)) << srv.Dump();
	EXPECT_EQ(1u, srv.Count(Ev::Established));
	Rec est = cli.First(Ev::Established);
	EXPECT_EQ(WHARF_PS_UD, est.info.ps);
	EXPECT_EQ(pqp.qp->qp_num, est.info.remote_qp_num);
	EXPECT_EQ(WHARF_UD_QKEY, est.info.qkey);
	ASSERT_NE(nullptr, est.info.ah);
	EXPECT_EQ(acc, est.data);
	// A datagram on what the lookup returned.
	ASSERT_NE(nullptr, aqp.qp);
	memcpy(aqp.buf + 256, "datagram", 9);
	ibv_sge sge = {(uintptr_t)(aqp.buf + 256), 9, aqp.mr->lkey};
	ibv_send_wr wr = {}, *bad;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = est.info.ah; // owned by the connection: still alive
	wr.wr.ud.remote_qpn = est.info.remote_qp_num;
	wr.wr.ud.remote_qkey = est.info.qkey;
	ASSERT_EQ(0, ibv_post_send(aqp.qp, &wr, &bad));
	ibv_wc wc;
	ASSERT_TRUE(pqp.Wait(&wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(pqp.buf + 40, "datagram", 9)); // after the GRH
	// No DREQ in UD: disconnect ends both ends locally, once.
	OnConn(cm_, id,
	       [](wharf_conn *c) { EXPECT_EQ(0, wharf_disconnect(c)); });
	EXPECT_EQ(1u, cli.Count(Ev::Disconnected));
	uint64_t pid = srv.First(Ev::Request).id;
	OnConn(cm_, pid,
	       [](wharf_conn *c) { EXPECT_EQ(0, wharf_conn_destroy(c)); });
	EXPECT_EQ(1u, srv.Count(Ev::Disconnected));
	Destroy(id);
	pqp.Close();
	aqp.Close();
}

} // namespace
