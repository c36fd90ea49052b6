// The seeds' connect / accept / reject semantics on real rdma_cm, wharf
// against wharf on rxe0 (see cm/cm.h, atop, and the seed man pages):
// 0xFF = device maximum, explicit values above it -EINVAL with nothing
// sent, accept(NULL) = the request adjusted down, 3-bit retry clamps,
// flow_control exchanged and reported, srq/qp_num from the library's QP,
// private-data limits and delivery with the transport's length.
#include "tests/guest/cm_guest_util.h"

using namespace wharf_cm_test;

namespace
{

class CmSemantics : public CmGuest
{
};

wharf_conn_param Param()
{
	wharf_conn_param p = {};
	p.size = sizeof(p);
	return p;
}

TEST_F(CmSemantics, ConnectFFMeansDeviceMaximum)
{
	ibv_device_attr dev = DevAttr();
	Recorder &srv = *NewRec(), &cli = *NewRec();
	uint16_t port = Listen(&srv);
	wharf_conn_param p = Param();
	p.responder_resources = WHARF_RD_ATOM_DEV_MAX;
	p.initiator_depth = WHARF_RD_ATOM_DEV_MAX;
	uint64_t id = Connect(&cli, port, &p);
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1)) << cli.Dump();
	// The passive side sees the request in its own point of view: the
	// peer's initiator depth is its responder resources.
	Rec req = srv.First(Ev::Request);
	EXPECT_EQ(dev.max_qp_init_rd_atom, req.req.responder_resources);
	EXPECT_EQ(dev.max_qp_rd_atom, req.req.initiator_depth);
	Destroy(id);
}

TEST_F(CmSemantics, ConnectAboveDeviceMaximumIsEinvalAndSendsNothing)
{
	ibv_device_attr dev = DevAttr();
	Recorder &srv = *NewRec(), &cli = *NewRec();
	wharf_listener *l = nullptr;
	uint16_t port = Listen(&srv, nullptr, &l);
	sockaddr_in a = Addr(port);
	wharf_connect_opts o;
	wharf_connect_opts_init(&o);
	o.dst = (sockaddr *)&a;
	o.ops = Recorder::Ops();
	o.arg = &cli;
	wharf_conn_param p = Param();
	o.param = &p;
	p.responder_resources = (uint8_t)(dev.max_qp_rd_atom + 1);
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, &o, nullptr));
	p.responder_resources = 1;
	p.initiator_depth = (uint8_t)(dev.max_qp_init_rd_atom + 1);
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, &o, nullptr));
	p.initiator_depth = 1;
	uint8_t big[57] = {};
	p.private_data = big;
	p.private_data_len = sizeof(big); // RC connect limit: 56
	EXPECT_EQ(-EINVAL, wharf_connect(cm_, &o, nullptr));
	// A valid connection afterwards: the only request the listener saw.
	p.private_data_len = 56;
	uint64_t id = 0;
	ASSERT_EQ(0, wharf_connect(cm_, &o, &id));
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1)) << cli.Dump();
	EXPECT_EQ(1u, ListenerStats(l).requests);
	EXPECT_EQ(1u, CmStats(cm_).connects);
	EXPECT_EQ(1u, srv.Count(Ev::Request));
	Destroy(id);
}

TEST_F(CmSemantics, AcceptNullTakesTheRequestAdjustedDownWithLibraryQp)
{
	ibv_device_attr dev = DevAttr();
	Recorder &srv = *NewRec(), &cli = *NewRec();
	uint16_t port = Listen(&srv); // on_request: wharf_accept(c, NULL)
	wharf_conn_param p = Param();
	p.responder_resources = 3;
	p.initiator_depth = 2;
	p.flow_control = 1;
	p.retry_count = 15;    // 3-bit: the kernel makes it 7
	p.rnr_retry_count = 9; // likewise
	uint64_t id = Connect(&cli, port, &p);
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1)) << cli.Dump();
	ASSERT_TRUE(srv.WaitCount(Ev::Established, 1)) << srv.Dump();
	Rec req = srv.First(Ev::Request);
	EXPECT_EQ(2, req.req.responder_resources); // swapped: local view
	EXPECT_EQ(3, req.req.initiator_depth);
	EXPECT_EQ(7, req.req.retry_count);
	EXPECT_EQ(7, req.req.rnr_retry_count);
	EXPECT_EQ(1, req.req.flow_control);
	EXPECT_EQ(1, req.req.srq); // the library's QP is on the SRQ
	Rec act = cli.First(Ev::Established);
	EXPECT_EQ(act.info.qp_num, req.req.remote_qp_num);
	EXPECT_NE(0u, act.info.qp_num);
	// accept(NULL): min(request, local device), from the REP.
	Rec pas = srv.First(Ev::Established);
	EXPECT_EQ(std::min<int>(2, dev.max_qp_rd_atom),
		  pas.info.responder_resources);
	EXPECT_EQ(std::min<int>(3, dev.max_qp_init_rd_atom),
		  pas.info.initiator_depth);
	EXPECT_EQ(3, act.info.responder_resources);
	EXPECT_EQ(2, act.info.initiator_depth);
	EXPECT_EQ(1, act.info.flow_control); // accept(NULL) echoes it
	EXPECT_EQ(pas.info.qp_num, act.info.remote_qp_num);
	Destroy(id);
}

TEST_F(CmSemantics, AcceptExplicitAboveLocalMaximumIsEinvalAndKeepsRequest)
{
	ibv_device_attr dev = DevAttr();
	Recorder &srv = *NewRec(), &cli = *NewRec();
	Recorder *r = &srv;
	srv.on_request = [r, dev](wharf_conn *c, const wharf_conn_request *q) {
		wharf_conn_param p = Param();
		p.responder_resources = (uint8_t)(dev.max_qp_rd_atom + 1);
		r->Push(wharf_accept(c, &p));
		p.responder_resources = 0;
		p.initiator_depth = (uint8_t)(q->initiator_depth + 1);
		r->Push(wharf_accept(c, &p)); // above the request
		uint8_t big[197] = {};
		p = Param();
		p.private_data = big;
		p.private_data_len = sizeof(big); // RC accept limit: 196
		r->Push(wharf_accept(c, &p));
		// Nothing was sent: the request is still pending.
		r->Push(strcmp("REQ_RECEIVED", wharf_conn_state_name(c)));
		p.initiator_depth = 0;
		p.private_data_len = 0;
		p.flow_control = 0;
		r->Push(wharf_accept(c, &p));
	};
	uint16_t port = Listen(&srv);
	wharf_conn_param p = Param();
	p.responder_resources = 4;
	p.initiator_depth = 4;
	p.flow_control = 1;
	uint64_t id = Connect(&cli, port, &p);
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1)) << cli.Dump();
	ASSERT_TRUE(srv.WaitRcs(5));
	std::vector<int> want = {-EINVAL, -EINVAL, -EINVAL, 0, 0};
	EXPECT_EQ(want, srv.Rcs());
	// flow_control is what the peer sent, reported, not negotiated.
	EXPECT_EQ(0, cli.First(Ev::Established).info.flow_control);
	EXPECT_EQ(0, cli.First(Ev::Established).info.initiator_depth);
	Destroy(id);
}

TEST_F(CmSemantics, PrivateDataDeliveredWithTheTransportLength)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	std::vector<uint8_t> acc(196);
	for (size_t i = 0; i < acc.size(); i++)
		acc[i] = (uint8_t)(i * 7 + 1);
	srv.on_request = [acc](wharf_conn *c, const wharf_conn_request *) {
		wharf_conn_param p = Param();
		p.private_data = acc.data();
		p.private_data_len = acc.size(); // the RC accept maximum
		EXPECT_EQ(0, wharf_accept(c, &p));
	};
	uint16_t port = Listen(&srv);
	const char hello[] = "hello wharf"; // 12 bytes
	wharf_conn_param p = Param();
	p.private_data = hello;
	p.private_data_len = sizeof(hello);
	uint64_t id = Connect(&cli, port, &p);
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1)) << cli.Dump();
	// A REQ carries a 56-byte field: delivered whole, zero padded.
	Rec req = srv.First(Ev::Request);
	ASSERT_EQ(56u, req.data.size());
	EXPECT_EQ(0, memcmp(req.data.data(), hello, sizeof(hello)));
	for (size_t i = sizeof(hello); i < 56; i++)
		EXPECT_EQ(0, req.data[i]) << i;
	Rec est = cli.First(Ev::Established);
	EXPECT_EQ(acc, est.data);
	Destroy(id);
}

TEST_F(CmSemantics, RejectCarriesPrivateDataAndConsumerReason)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	Recorder *r = &srv;
	srv.on_request = [r](wharf_conn *c, const wharf_conn_request *) {
		uint8_t big[149] = {};
		r->Push(wharf_reject(c, big, sizeof(big))); // limit 148
		r->Push(wharf_reject(c, nullptr, 3));	    // NULL, length
		r->Push(wharf_reject(c, "nope", 4));
		r->Push(wharf_reject(c, "again", 5)); // already done
		r->Push(wharf_accept(c, nullptr));
	};
	wharf_listener *l = nullptr;
	uint16_t port = Listen(&srv, nullptr, &l);
	uint64_t id = Connect(&cli, port);
	ASSERT_TRUE(cli.WaitCount(Ev::Rejected, 1)) << cli.Dump();
	ASSERT_TRUE(srv.WaitRcs(5));
	std::vector<int> want = {-EINVAL, -EINVAL, 0, -EALREADY, -EALREADY};
	EXPECT_EQ(want, srv.Rcs());
	Rec rej = cli.First(Ev::Rejected);
	EXPECT_EQ(28, rej.rej.reason);	  // IB_CM_REJ_CONSUMER_DEFINED
	ASSERT_EQ(148u, rej.data.size()); // the REJ field, padded
	EXPECT_EQ(0, memcmp(rej.data.data(), "nope", 4));
	EXPECT_FALSE(rej.rej.busy);
	EXPECT_EQ(0u, cli.Count(Ev::Error));
	EXPECT_TRUE(Poll([&] { return ListenerStats(l).rejected_app == 1; }));
	EXPECT_EQ(1u, CmStats(cm_).rejected_by_peer);
	Destroy(id);
	// The passive connection ended; the application still destroys it.
	Destroy(srv.First(Ev::Request).id);
}

// The listen backlog defaults to rdma_ucm's system maximum (so a storm is
// never cut short by a small backlog); an explicit value wins.
TEST_F(CmSemantics, ListenBacklogDefaultsToTheSystemMaximum)
{
	const char *path = "/proc/sys/net/rdma_ucm/max_backlog";
	Recorder &srv = *NewRec();
	int sys = 0;
	FILE *f = fopen(path, "r");
	ASSERT_NE(nullptr, f) << "rdma_ucm is loaded in the guest";
	ASSERT_EQ(1, fscanf(f, "%d", &sys));
	fclose(f);
	// A value unlike the library's fallback (1024, also the kernel's
	// default), so only a listener that read the file can match it.
	f = fopen(path, "w");
	ASSERT_NE(nullptr, f);
	fprintf(f, "%d\n", 3001);
	ASSERT_EQ(0, fclose(f));
	wharf_listener *l = nullptr, *l7 = nullptr;
	uint16_t p1 = Listen(&srv, nullptr, &l);
	uint16_t p2 = Listen(
		&srv, [](wharf_listen_opts &o) { o.backlog = 7; }, &l7);
	f = fopen(path, "w");
	ASSERT_NE(nullptr, f);
	fprintf(f, "%d\n", sys);
	ASSERT_EQ(0, fclose(f));
	ASSERT_NE(0, p1);
	ASSERT_NE(0, p2);
	EXPECT_EQ(3001, wharf_listener_backlog(l));
	EXPECT_EQ(7, wharf_listener_backlog(l7));
	EXPECT_EQ(0, wharf_listener_backlog(nullptr));
}

} // namespace
