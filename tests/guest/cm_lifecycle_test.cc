// A connection's life on real rdma_cm: hand-over to the owner shard,
// deferred accept and the decision timeout, COMM_EST / rdma_notify with
// receives held until ESTABLISHED, disconnect from either side with
// on_disconnected exactly once, TIMEWAIT_EXIT, a lost DREP ending in a
// forced teardown, and the errors of a connect that cannot succeed.
#include "tests/guest/cm_guest_util.h"

using namespace wharf_cm_test;

namespace
{

class CmLifecycle : public CmGuest
{
      protected:
	void HeldReceives(bool private_rq);
};

int PickShard1(const wharf_conn_request *, const wharf_cm_shard_load *,
	       unsigned, void *)
{
	return 1;
}

TEST_F(CmLifecycle, EveryEventOfAPassiveConnectionRunsOnItsOwnerShard)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	wharf_listener *l = nullptr;
	uint16_t port = Listen(
		&srv,
		[](wharf_listen_opts &o) {
			o.shard = 0; // the listener drains on shard 0
			o.pick_shard = PickShard1;
		},
		&l);
	uint64_t id = Connect(&cli, port); // owned by shard 0
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1)) << cli.Dump();
	ASSERT_TRUE(srv.WaitCount(Ev::Established, 1)) << srv.Dump();
	uint64_t pid = srv.First(Ev::Request).id;
	EXPECT_EQ(1u, pid >> 48); // the owner shard is in the id
	OnConn(cm_, id, [](wharf_conn *c) {
		ASSERT_NE(nullptr, c);
		EXPECT_EQ(0, wharf_disconnect(c));
		EXPECT_EQ(-EALREADY, wharf_disconnect(c));
	});
	ASSERT_TRUE(srv.WaitCount(Ev::Disconnected, 1)) << srv.Dump();
	ASSERT_TRUE(cli.WaitCount(Ev::Disconnected, 1)) << cli.Dump();
	for (const Rec &r : srv.All())
		EXPECT_EQ(1u, r.shard) << EvName(r.ev);
	for (const Rec &r : cli.All())
		EXPECT_EQ(0u, r.shard) << EvName(r.ev);
	// Both sides leave timewait: their QPs go back to the pool.
	EXPECT_TRUE(Poll([&] { return CmStats(cm_).timewait_exits >= 2; }));
	EXPECT_EQ(1u, srv.Count(Ev::Disconnected));
	EXPECT_EQ(1u, cli.Count(Ev::Disconnected));
	struct wharf_cm_stats ls = ListenerStats(l);
	EXPECT_EQ(1u, ls.requests);
	EXPECT_EQ(1u, ls.accepted);
	EXPECT_EQ(1u, ls.disconnected);
	EXPECT_EQ(ls.requests, Finals(ls));
	Destroy(id);
	Destroy(pid);
	struct wharf_cm_stats s = CmStats(cm_);
	EXPECT_EQ(s.requests + s.connects, Finals(s));
	EXPECT_EQ(0u, s.handshakes);
	EXPECT_EQ(0u, s.connections);
}

TEST_F(CmLifecycle, DisconnectFromEitherSideDeliversOnDisconnectedOnce)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	uint16_t port = Listen(&srv);
	uint64_t a = Connect(&cli, port); // disconnected by the client
	uint64_t b = Connect(&cli, port); // by the server
	uint64_t c = Connect(&cli, port); // destroyed while established
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 3)) << cli.Dump();
	ASSERT_TRUE(srv.WaitCount(Ev::Established, 3)) << srv.Dump();
	auto peer_of = [&](uint64_t id) {
		uint32_t qpn = cli.First(Ev::Established, id).info.qp_num;
		for (const Rec &r : srv.All())
			if (r.ev == Ev::Established &&
			    r.info.remote_qp_num == qpn)
				return r.id;
		return (uint64_t)0;
	};
	uint64_t pa = peer_of(a), pb = peer_of(b), pc = peer_of(c);
	ASSERT_TRUE(pa && pb && pc);
	OnConn(cm_, a,
	       [](wharf_conn *x) { EXPECT_EQ(0, wharf_disconnect(x)); });
	OnConn(cm_, pb,
	       [](wharf_conn *x) { EXPECT_EQ(0, wharf_disconnect(x)); });
	size_t before = cli.Count(Ev::Disconnected, c);
	OnConn(cm_, c,
	       [](wharf_conn *x) { EXPECT_EQ(0, wharf_conn_destroy(x)); });
	// Destroying an established connection delivers on_disconnected
	// inside the call.
	EXPECT_EQ(before + 1, cli.Count(Ev::Disconnected, c));
	for (uint64_t id : {a, b})
		ASSERT_TRUE(cli.WaitCount(Ev::Disconnected, 1, id));
	for (uint64_t id : {pa, pb, pc})
		ASSERT_TRUE(srv.WaitCount(Ev::Disconnected, 1, id))
			<< srv.Dump();
	EXPECT_TRUE(Poll([&] { return CmStats(cm_).timewait_exits >= 4; }));
	for (uint64_t id : {a, b, c})
		EXPECT_EQ(1u, cli.Count(Ev::Disconnected, id));
	for (uint64_t id : {pa, pb, pc})
		EXPECT_EQ(1u, srv.Count(Ev::Disconnected, id));
	OnConn(cm_, a, [](wharf_conn *x) {
		EXPECT_EQ(-ENOTCONN, wharf_disconnect(x));
		EXPECT_EQ(0, wharf_conn_destroy(x));
	});
	EXPECT_EQ(1u, cli.Count(Ev::Disconnected, a));
	for (uint64_t id : {b, pa, pb, pc})
		Destroy(id);
}

TEST_F(CmLifecycle, DeferredAcceptAndTheDecisionTimeout)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	srv.on_request = [](wharf_conn *, const wharf_conn_request *) {
		// Decide later.
	};
	wharf_listener *l = nullptr;
	uint16_t port = Listen(
		&srv,
		[](wharf_listen_opts &o) { o.decision_timeout_ms = 3000; }, &l);
	uint64_t x = Connect(&cli, port);
	ASSERT_TRUE(srv.WaitCount(Ev::Request, 1));
	uint64_t px = srv.First(Ev::Request).id;
	uint64_t y = Connect(&cli, port); // never decided
	OnConn(cm_, px, [](wharf_conn *c) {
		ASSERT_NE(nullptr, c);
		EXPECT_STREQ("REQ_RECEIVED", wharf_conn_state_name(c));
		EXPECT_NE(nullptr, wharf_conn_get_request(c));
		EXPECT_EQ(0, wharf_accept(c, nullptr));
	});
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, x)) << cli.Dump();
	// The undecided request: rejected by the library, reported to both.
	ASSERT_TRUE(cli.WaitCount(Ev::Rejected, 1, y)) << cli.Dump();
	ASSERT_TRUE(srv.WaitCount(Ev::Error, 1)) << srv.Dump();
	Rec err = srv.First(Ev::Error);
	EXPECT_EQ(WHARF_CONN_ERR_TIMEOUT, err.a);
	EXPECT_EQ(-ETIMEDOUT, err.b);
	EXPECT_EQ(28, cli.First(Ev::Rejected, y).a);
	EXPECT_EQ(1u, ListenerStats(l).timed_out);
	for (uint64_t id : {x, y, px, err.id})
		Destroy(id);
}

// A raw client withholds its RTU and sends three messages as soon as its
// QP is ready; the passive wharf connection holds them until it is
// ESTABLISHED (COMM_EST -> rdma_notify by the library, or wharf_notify()).
void CmLifecycle::HeldReceives(bool private_rq)
{
	Recorder &srv = *NewRec();
	uint16_t port = Listen(&srv, [private_rq](wharf_listen_opts &o) {
		o.qp.private_rq = private_rq;
	});
	RawPeer raw;
	rdma_cm_id *id = raw.NewId();
	ASSERT_TRUE(raw.Resolve(id, port));
	ibv_qp *qp = raw.QpInit(id);
	ASSERT_NE(nullptr, qp);
	rdma_conn_param cp = {};
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.qp_num = qp->qp_num;
	ASSERT_EQ(0, rdma_connect(id, &cp));
	// The QP is not on the id: the REP comes as CONNECT_RESPONSE and
	// the RTU waits for rdma_establish(), which we withhold.
	ASSERT_TRUE(raw.Expect(RDMA_CM_EVENT_CONNECT_RESPONSE));
	raw.Modify(id, qp, IBV_QPS_RTR);
	raw.Modify(id, qp, IBV_QPS_RTS);
	ASSERT_TRUE(raw.Send(qp, "m1"));
	ASSERT_TRUE(raw.Send(qp, "m2"));
	ASSERT_TRUE(raw.Send(qp, "m3"));
	// The three arrived (their ACKs completed the sends).  Unless the
	// device reported COMM_EST (then the library notified already),
	// force ESTABLISHED with wharf_notify().
	ASSERT_TRUE(srv.WaitCount(Ev::Request, 1));
	uint64_t pid = srv.First(Ev::Request).id;
	EXPECT_TRUE(Poll([&] {
		return CmStats(cm_).held_recvs >= 3 ||
		       srv.Count(Ev::Established) > 0;
	}));
	OnConn(cm_, pid, [](wharf_conn *c) {
		ASSERT_NE(nullptr, c);
		EXPECT_EQ(0, wharf_notify(c, IBV_EVENT_COMM_EST));
		EXPECT_EQ(-EINVAL, wharf_notify(c, IBV_EVENT_QP_FATAL));
	});
	ASSERT_TRUE(srv.WaitCount(Ev::Recv, 3)) << srv.Dump();
	std::vector<Rec> all = srv.All();
	std::vector<std::string> seen;
	for (const Rec &r : all) {
		if (r.ev == Ev::Established)
			seen.push_back("EST");
		if (r.ev == Ev::Recv)
			seen.push_back(
				std::string(r.data.begin(), r.data.end()));
	}
	std::vector<std::string> want = {"EST", "m1", "m2", "m3"};
	EXPECT_EQ(want, seen);
	EXPECT_EQ(3u, CmStats(cm_).held_recvs);
	EXPECT_GE(CmStats(cm_).notifies, 1u);
	// The late RTU changes nothing.
	(void)rdma_establish(id);
	EXPECT_EQ(1u, srv.Count(Ev::Established));
	Destroy(pid);
}

TEST_F(CmLifecycle, ReceivesBeforeTheRtuAreHeldUntilEstablishedInOrder)
{
	HeldReceives(false); // SRQ buffers, kept
}

TEST_F(CmLifecycle, HeldReceivesOnAPrivateReceiveQueueAreCopies)
{
	HeldReceives(true);
}

TEST_F(CmLifecycle, LostDrepEndsInForcedTeardownNeverAHang)
{
	RawPeer raw;
	uint16_t port = raw.Listen();
	Recorder &cli = *NewRec();
	uint64_t id = Connect(&cli, port, nullptr, [](wharf_connect_opts &o) {
		o.disconnect_timeout_ms = 800;
	});
	rdma_cm_id *pid = nullptr;
	ASSERT_TRUE(raw.Expect(RDMA_CM_EVENT_CONNECT_REQUEST, nullptr, &pid));
	raw.AcceptWithQp(pid);
	ASSERT_TRUE(raw.Expect(RDMA_CM_EVENT_ESTABLISHED));
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1)) << cli.Dump();
	OnConn(cm_, id,
	       [](wharf_conn *c) { EXPECT_EQ(0, wharf_disconnect(c)); });
	// The peer sees the DREQ and never answers it (no rdma_disconnect).
	ASSERT_TRUE(raw.Expect(RDMA_CM_EVENT_DISCONNECTED));
	ASSERT_TRUE(cli.WaitCount(Ev::Disconnected, 1)) << cli.Dump();
	EXPECT_EQ(1u, CmStats(cm_).forced_teardowns);
	std::this_thread::sleep_for(std::chrono::seconds(1));
	EXPECT_EQ(1u, cli.Count(Ev::Disconnected));
	Destroy(id);
}

TEST_F(CmLifecycle, ConnectErrorsAreReportedOnce)
{
	Recorder &cli = *NewRec();
	// Nobody listens on this port: the peer's CM rejects the REQ.
	RawPeer probe;
	uint16_t unused = probe.Listen();
	rdma_destroy_id(probe.ids_.back());
	probe.ids_.pop_back();
	uint64_t a = Connect(&cli, unused);
	// No such host on rxe0's subnet: address resolution fails or
	// times out.
	sockaddr_in none = Addr(7471);
	inet_pton(AF_INET, "198.18.0.77", &none.sin_addr);
	wharf_connect_opts o;
	wharf_connect_opts_init(&o);
	o.dst = (sockaddr *)&none;
	o.ops = Recorder::Ops();
	o.arg = &cli;
	o.resolve_addr_timeout_ms = 1500;
	uint64_t b = 0;
	ASSERT_EQ(0, wharf_connect(cm_, &o, &b));
	ASSERT_TRUE(cli.WaitCount(Ev::Rejected, 1, a)) << cli.Dump();
	ASSERT_TRUE(cli.WaitCount(Ev::Error, 1, b)) << cli.Dump();
	int kind = cli.First(Ev::Error, b).a;
	EXPECT_TRUE(kind == WHARF_CONN_ERR_ADDRESS ||
		    kind == WHARF_CONN_ERR_TIMEOUT ||
		    kind == WHARF_CONN_ERR_UNREACHABLE)
		<< kind;
	EXPECT_NE(28, cli.First(Ev::Rejected, a).a); // not a consumer REJ
	std::this_thread::sleep_for(std::chrono::seconds(2));
	EXPECT_EQ(1u, cli.Count(Ev::Error, b));
	EXPECT_EQ(0u, cli.Count(Ev::Error, a));
	struct wharf_cm_stats s = CmStats(cm_);
	EXPECT_EQ(2u, s.connects);
	EXPECT_EQ(1u, s.rejected_by_peer);
	EXPECT_EQ(1u, s.failed + s.timed_out + s.unreachable);
	EXPECT_EQ(s.connects, Finals(s));
	Destroy(a);
	Destroy(b);
}

} // namespace
