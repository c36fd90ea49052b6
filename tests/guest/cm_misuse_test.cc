// Bad input: every misuse of the cm API returns -errno and leaves no
// state behind (no request at the peer, no connect counted); a peer's
// malformed private data is delivered, never trusted.
#include "tests/guest/cm_guest_util.h"

using namespace wharf_cm_test;

namespace
{

class CmMisuse : public CmGuest
{
};

TEST_F(CmMisuse, ListenAndConnectRefuseBadArguments)
{
	Recorder &rec = *NewRec();
	sockaddr_in a = Addr(0);
	wharf_listen_opts lo;
	wharf_listener *l = nullptr;
	wharf_listen_opts_init(&lo);
	lo.addr = (sockaddr *)&a;
	lo.ops = Recorder::Ops();
	EXPECT_EQ(-EINVAL, wharf_listen(nullptr, &lo, &l));
	EXPECT_EQ(-EINVAL, wharf_listen(cm_, nullptr, &l));
	EXPECT_EQ(-EINVAL, wharf_listen(cm_, &lo, nullptr));
	lo.size = 1;
	EXPECT_EQ(-EINVAL, wharf_listen(cm_, &lo, &l));
	lo.size = sizeof(lo);
	lo.ps = (enum wharf_ps)7;
	EXPECT_EQ(-EINVAL, wharf_listen(cm_, &lo, &l));
	lo.ps = WHARF_PS_RC;
	lo.shard = 99;
	EXPECT_EQ(-EINVAL, wharf_listen(cm_, &lo, &l));
	lo.shard = 0;
	lo.ops = nullptr;
	EXPECT_EQ(-EINVAL, wharf_listen(cm_, &lo, &l));
	lo.ops = Recorder::Ops();
	lo.qp.min_rnr_timer = 32;
	EXPECT_EQ(-EINVAL, wharf_listen(cm_, &lo, &l));
	lo.qp.min_rnr_timer = 0;
	// The embedded QP shape carries its own size (0 only when unset).
	lo.qp.size = 0;
	lo.qp.recv_credits = 4;
	EXPECT_EQ(-EINVAL, wharf_listen(cm_, &lo, &l));
	lo.qp.size = sizeof(lo.qp) + 8;
	EXPECT_EQ(-EINVAL, wharf_listen(cm_, &lo, &l));
	lo.qp.size = sizeof(lo.qp);
	lo.qp.recv_credits = 0;
	uint8_t big[197] = {};
	wharf_conn_param ap = {};
	ap.size = sizeof(ap);
	ap.private_data = big;
	ap.private_data_len = sizeof(big);
	lo.accept_param = &ap;
	EXPECT_EQ(-EINVAL, wharf_listen(cm_, &lo, &l));
	lo.accept_param = nullptr;
	sockaddr_in nowhere = Addr(0);
	inet_pton(AF_INET, "192.0.2.1", &nowhere.sin_addr); // no device
	lo.addr = (sockaddr *)&nowhere;
	EXPECT_GT(0, wharf_listen(cm_, &lo, &l));
	EXPECT_EQ(nullptr, l);

	wharf_connect_opts co;
	wharf_connect_opts_init(&co);
	sockaddr_in d = Addr(7471);
	co.dst = (sockaddr *)&d;
	co.ops = Recorder::Ops();
	co.arg = &rec;
	EXPECT_EQ(-EINVAL, wharf_connect(nullptr, &co, nullptr));
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, nullptr, nullptr));
	co.ops = nullptr;
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, &co, nullptr));
	co.ops = Recorder::Ops();
	co.dst = nullptr;
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, &co, nullptr));
	co.dst = (sockaddr *)&d;
	co.shard = 2;
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, &co, nullptr));
	co.shard = -2;
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, &co, nullptr));
	co.shard = WHARF_SHARD_ANY;
	sockaddr_in6 src6 = {};
	src6.sin6_family = AF_INET6;
	co.src = (sockaddr *)&src6; // another family than dst
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, &co, nullptr));
	co.src = nullptr;
	co.qp.size = 1;
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, &co, nullptr));
	co.qp.size = sizeof(co.qp);
	// A newer caller that set a field this library does not know.
	EXPECT_EQ(-EINVAL, [&] {
		struct {
			wharf_conn_param p;
			uint64_t extra;
		} newer = {};
		newer.p.size = sizeof(newer);
		newer.extra = 1;
		co.param = &newer.p;
		return wharf_connect(cm_, &co, nullptr);
	}());
	co.param = nullptr;
	EXPECT_EQ(0u, CmStats(cm_).connects);
	EXPECT_EQ(-EINVAL, wharf_accept(nullptr, nullptr));
	EXPECT_EQ(-EINVAL, wharf_reject(nullptr, nullptr, 0));
	EXPECT_EQ(-EINVAL, wharf_notify(nullptr, IBV_EVENT_COMM_EST));
	EXPECT_EQ(-EINVAL, wharf_disconnect(nullptr));
	EXPECT_EQ(-EINVAL, wharf_conn_destroy(nullptr));
	EXPECT_EQ(-EINVAL, wharf_conn_call(
				   cm_, (uint64_t)7 << 48,
				   [](wharf_conn *, void *) {}, nullptr));
	EXPECT_EQ(nullptr, wharf_conn_lookup(cm_, 12345));
}

TEST_F(CmMisuse, CallsInTheWrongStateChangeNothing)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	Recorder *ps = &srv, *pc = &cli;
	srv.on_request = [ps](wharf_conn *c, const wharf_conn_request *) {
		ps->Push(wharf_disconnect(c)); // not established
		ps->Push(wharf_notify(c, IBV_EVENT_COMM_EST));
		ps->Push(wharf_accept(c, nullptr));
		ps->Push(wharf_accept(c, nullptr)); // already accepting
		ps->Push(wharf_reject(c, "x", 1));  // while accepting
	};
	cli.on_established = [pc](wharf_conn *c, const wharf_conn_info *) {
		pc->Push(wharf_accept(c, nullptr)); // an active connection
		pc->Push(wharf_reject(c, nullptr, 0));
		pc->Push(wharf_notify(c, IBV_EVENT_COMM_EST)); // EISCONN: ok
		pc->Push(wharf_notify(c, IBV_EVENT_PATH_MIG));
	};
	uint16_t port = Listen(&srv);
	uint64_t id = Connect(&cli, port);
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1)) << cli.Dump();
	ASSERT_TRUE(srv.WaitCount(Ev::Established, 1)) << srv.Dump();
	ASSERT_TRUE(srv.WaitRcs(5));
	ASSERT_TRUE(cli.WaitRcs(4));
	std::vector<int> pwant = {-ENOTCONN, -ENOTCONN, 0, -EALREADY, -EBUSY};
	std::vector<int> awant = {-EINVAL, -EINVAL, 0, -EINVAL};
	EXPECT_EQ(pwant, srv.Rcs());
	EXPECT_EQ(awant, cli.Rcs());
	uint64_t pid = srv.First(Ev::Request).id;
	OnConn(cm_, pid, [](wharf_conn *c) {
		EXPECT_EQ(-EISCONN, wharf_accept(c, nullptr));
		EXPECT_EQ(-EISCONN, wharf_reject(c, nullptr, 0));
	});
	EXPECT_EQ(1u, srv.Count(Ev::Established));
	EXPECT_EQ(0u, srv.Count(Ev::Error) + cli.Count(Ev::Error));
	Destroy(id);
	Destroy(pid);
}

TEST_F(CmMisuse, MalformedPrivateDataFromAPeerIsDeliveredNotTrusted)
{
	// A raw server rejects with bytes that start like wharf's busy
	// payload but are not one; a raw client sends arbitrary bytes.
	RawPeer raw;
	uint16_t rport = raw.Listen();
	Recorder &cli = *NewRec();
	uint64_t id = Connect(&cli, rport);
	rdma_cm_id *rid = nullptr;
	ASSERT_TRUE(raw.Expect(RDMA_CM_EVENT_CONNECT_REQUEST, nullptr, &rid));
	uint8_t junk[20] = {'W',  'H',	'R',  'F',  1, 16, 1,	 0,
			    0xff, 0xff, 0xff, 0xff, 0, 0,  0xde, 0xad};
	ASSERT_EQ(0, rdma_reject(rid, junk, sizeof(junk)));
	ASSERT_TRUE(cli.WaitCount(Ev::Rejected, 1)) << cli.Dump();
	Rec rej = cli.First(Ev::Rejected);
	EXPECT_FALSE(rej.rej.busy); // bad check: not a busy hint
	ASSERT_EQ(148u, rej.data.size());
	EXPECT_EQ(0, memcmp(rej.data.data(), junk, sizeof(junk)));

	Recorder &srv = *NewRec();
	uint16_t port = Listen(&srv);
	RawPeer rc;
	rdma_cm_id *cid = rc.NewId();
	ASSERT_TRUE(rc.Resolve(cid, port));
	ibv_qp *qp = rc.QpInit(cid);
	uint8_t bytes[56];
	for (unsigned i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(0xff - i * 3);
	rdma_conn_param cp = {};
	cp.private_data = bytes;
	cp.private_data_len = sizeof(bytes);
	cp.responder_resources = cp.initiator_depth = 1;
	cp.qp_num = qp->qp_num;
	ASSERT_EQ(0, rdma_connect(cid, &cp));
	ASSERT_TRUE(srv.WaitCount(Ev::Request, 1)) << srv.Dump();
	Rec req = srv.First(Ev::Request);
	EXPECT_EQ(std::vector<uint8_t>(bytes, bytes + sizeof(bytes)), req.data);
	Destroy(id);
	Destroy(req.id);
}

} // namespace
