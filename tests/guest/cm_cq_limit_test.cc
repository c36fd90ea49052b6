/*
 * A shard past one CQ, and at its last: the server's send CQs are forced
 * small (cq_max 63 entries, send queues of 15: four QPs a CQ, three CQs),
 * so one shard serves more connections than one CQ holds, and at the limit
 * a new request waits in the deferral queue (or is refused with the
 * listener's reason) while the established connections keep exchanging
 * messages.  With one resource set per device (res_per_device 1) that
 * limit is the set's; with two, the shard makes a second set once the
 * first is full, and the limit is the second's.  The clients run on a cm
 * of their own with default limits, so only the server meets the ceiling.
 */
#include <atomic>
#include <set>

#include "tests/guest/cm_guest_util.h"

using namespace wharf_cm_test;

namespace
{

constexpr uint32_t kTag = 0x43514c4d; // "CQLM"
// rxe sizes a CQ and a send queue to 2^k - 1 entries: ask for exactly that.
constexpr uint32_t kSqDepth = 15;
constexpr uint32_t kCqMax = 63;
constexpr uint32_t kSendCqs = 3;
constexpr unsigned kFit = kSendCqs * (kCqMax / kSqDepth); // 12

class CmCqLimit : public CmGuest
{
      protected:
	void EditCmOpts(wharf_cm_opts &o) override
	{
		o.res_per_device = sets_;
	}
	void EditResOpts(wharf_qp_res_opts &o) override
	{
		o.srq_depth = 63;
		o.recv_credits = 1;
		o.recv_reserve = 4;
		o.sq_depth = kSqDepth;
		o.cq_max = kCqMax;
		o.send_cq_max = kSendCqs;
	}

	void SetUp() override
	{
		CmGuest::SetUp();
		if (HasFatalFailure() || IsSkipped())
			return;
		wharf_ctx_opts co;
		wharf_ctx_opts_init(&co);
		co.nshards = 1;
		ASSERT_EQ(0, wharf_ctx_create(&co, &cctx_));
		wharf_cm_opts mo;
		wharf_cm_opts_init(&mo);
		ASSERT_EQ(0, wharf_cm_create(cctx_, &mo, &ccm_));
	}

	void TearDown() override
	{
		for (auto &r : recs_)
			r->Close();
		if (ccm_) {
			EXPECT_EQ(0, wharf_cm_destroy(ccm_));
		}
		if (cctx_) {
			EXPECT_EQ(0, wharf_ctx_destroy(cctx_));
		}
		CmGuest::TearDown();
	}

	uint64_t ClientConnect(Recorder *rec, uint16_t port)
	{
		sockaddr_in a = Addr(port);
		wharf_connect_opts o;
		wharf_connect_opts_init(&o);
		o.dst = (sockaddr *)&a;
		o.ops = Recorder::Ops();
		o.arg = rec;
		uint64_t id = 0;
		EXPECT_EQ(0, wharf_connect(ccm_, &o, &id));
		return id;
	}

	// One SEND of "ping" from client connection @id (registered once).
	void Ping(uint64_t id)
	{
		OnConn(ccm_, id, [this](wharf_conn *c) {
			ASSERT_NE(nullptr, c);
			if (!mr_)
				mr_ = ibv_reg_mr(wharf_conn_pd(c), msg_,
						 sizeof(msg_),
						 IBV_ACCESS_LOCAL_WRITE);
			ASSERT_NE(nullptr, mr_);
			unsigned i = next_++ % kSlots;
			ibv_sge sge = {(uintptr_t)msg_, 4, mr_->lkey};
			wharf_wr_init(&wrs_[i], kTag);
			ASSERT_EQ(0,
				  wharf_qp_post_send(wharf_conn_qp(c), &wrs_[i],
						     &sge, 1, false, 0));
		});
	}

	// The server's res stats, read on the shard of connection @id.
	struct wharf_qp_res_stats ServerRes(uint64_t id)
	{
		struct wharf_qp_res_stats st = {};
		st.size = sizeof(st);
		OnConn(cm_, id, [&st](wharf_conn *c) {
			ASSERT_NE(nullptr, c);
			EXPECT_EQ(0, wharf_qp_res_stats(
					     wharf_qp_res_of(wharf_conn_qp(c)),
					     &st));
		});
		return st;
	}

	// The server's res of connection @id (read on its shard).
	const wharf_qp_res *ResOf(uint64_t id)
	{
		const wharf_qp_res *res = nullptr;
		OnConn(cm_, id, [&res](wharf_conn *c) {
			ASSERT_NE(nullptr, c);
			res = wharf_qp_res_of(wharf_conn_qp(c));
		});
		return res;
	}

	// A listener whose connections all go to server shard 1.
	uint16_t ListenOnShard1(Recorder *srv, enum wharf_overload p,
				wharf_listener **l)
	{
		return Listen(
			srv,
			[p](wharf_listen_opts &o) {
				o.overload = p;
				o.pick_shard = [](const wharf_conn_request *,
						  const wharf_cm_shard_load *,
						  unsigned,
						  void *) { return 1; };
			},
			l);
	}

	// Destroys the clients @ids and the server's side of each request.
	void DestroyAll(const std::vector<uint64_t> &ids, Recorder &srv)
	{
		for (uint64_t id : ids)
			OnConn(ccm_, id, [](wharf_conn *c) {
				if (c) {
					EXPECT_EQ(0, wharf_conn_destroy(c));
				}
			});
		for (const Rec &r : srv.All())
			if (r.ev == Ev::Request)
				Destroy(r.id);
	}

	// DestroyAll, then every request the server saw ended, the MR gone.
	void EndAll(const std::vector<uint64_t> &ids, Recorder &srv)
	{
		DestroyAll(ids, srv);
		ASSERT_TRUE(Poll([&] {
			struct wharf_cm_stats s = CmStats(cm_);
			return s.requests == Finals(s);
		}));
		if (mr_)
			ibv_dereg_mr(mr_);
		mr_ = nullptr;
	}

	static constexpr unsigned kSlots = 64;
	unsigned sets_ = 1; // res_per_device of the server's cm
	wharf_ctx *cctx_ = nullptr;
	wharf_cm *ccm_ = nullptr;
	ibv_mr *mr_ = nullptr;
	char msg_[8] = "ping";
	wharf_wr wrs_[kSlots];
	unsigned next_ = 0;
};

class CmResSets : public CmCqLimit
{
      protected:
	CmResSets()
	{
		sets_ = 2;
	}
};

uint64_t ServerId(Recorder &srv, uint64_t nth)
{
	uint64_t i = 0;
	for (const Rec &r : srv.All())
		if (r.ev == Ev::Request && i++ == nth)
			return r.id;
	return 0;
}

} // namespace

TEST_F(CmCqLimit, OneShardServesMoreThanOneCqHoldsAndDefersAtItsLastCq)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	wharf_listener *l = nullptr;
	uint16_t port = ListenOnShard1(&srv, WHARF_OVERLOAD_DEFER, &l);
	std::vector<uint64_t> ids;
	for (unsigned i = 0; i < kFit; i++)
		ids.push_back(ClientConnect(&cli, port));
	ASSERT_TRUE(cli.WaitCount(Ev::Established, kFit)) << cli.Dump();
	struct wharf_qp_res_stats rs = ServerRes(ServerId(srv, 0));
	EXPECT_EQ(kFit, rs.qps_active);
	EXPECT_EQ(kSendCqs, rs.send_cqs); // more than one CQ holds
	EXPECT_EQ(0u, rs.cq_full);

	// The last CQ is full: two more wait, nobody is refused.
	ids.push_back(ClientConnect(&cli, port));
	ids.push_back(ClientConnect(&cli, port));
	ASSERT_TRUE(Poll([&] { return ListenerStats(l).deferred == 2; }))
		<< "deferred " << ListenerStats(l).deferred;
	EXPECT_EQ(kFit, srv.Count(Ev::Request));
	EXPECT_EQ(0u, cli.Count(Ev::Rejected) + cli.Count(Ev::Error));

	// The established ones keep exchanging messages meanwhile.
	for (unsigned i = 0; i < kFit; i++)
		Ping(ids[i]);
	ASSERT_TRUE(srv.WaitCount(Ev::Recv, kFit)) << srv.Dump();

	// Two leave: their CQ room comes back and the two waiting come in.
	Destroy(ServerId(srv, 0));
	Destroy(ServerId(srv, 1));
	ASSERT_TRUE(cli.WaitCount(Ev::Established, kFit + 2)) << cli.Dump();
	// The server counts its side once established there: the client may
	// see its event first.
	EXPECT_TRUE(
		Poll([&] { return ListenerStats(l).deferred_accepted == 2; }));
	struct wharf_cm_stats ls = ListenerStats(l);
	EXPECT_EQ(2u, ls.deferred_total);
	EXPECT_EQ(2u, ls.deferred_accepted);
	EXPECT_EQ(0u, ls.deferred + ls.deferred_timed_out + ls.rejected_busy);
	rs = ServerRes(ServerId(srv, kFit + 1));
	EXPECT_EQ(kFit, rs.qps_active);
	EXPECT_EQ(kSendCqs, rs.send_cqs);
	Ping(ids[kFit]);
	Ping(ids[kFit + 1]);
	ASSERT_TRUE(srv.WaitCount(Ev::Recv, kFit + 2)) << srv.Dump();

	EndAll(ids, srv);
}

TEST_F(CmCqLimit, RejectBusyRefusesAtTheLastCqWithTheBusyReason)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	wharf_listener *l = nullptr;
	uint16_t port = ListenOnShard1(&srv, WHARF_OVERLOAD_REJECT_BUSY, &l);
	std::vector<uint64_t> ids;
	for (unsigned i = 0; i < kFit; i++)
		ids.push_back(ClientConnect(&cli, port));
	ASSERT_TRUE(cli.WaitCount(Ev::Established, kFit)) << cli.Dump();
	uint64_t extra = ClientConnect(&cli, port);
	ASSERT_TRUE(cli.WaitCount(Ev::Rejected, 1, extra)) << cli.Dump();
	EXPECT_TRUE(cli.First(Ev::Rejected, extra).rej.busy);
	EXPECT_EQ(kFit, srv.Count(Ev::Request)); // never shown to the app
	ASSERT_TRUE(Poll([&] { return ListenerStats(l).rejected_busy == 1; }));
	for (unsigned i = 0; i < kFit; i++)
		Ping(ids[i]);
	ASSERT_TRUE(srv.WaitCount(Ev::Recv, kFit)) << srv.Dump();
	ids.push_back(extra);
	DestroyAll(ids, srv);
	if (mr_)
		ibv_dereg_mr(mr_);
	mr_ = nullptr;
}

TEST_F(CmCqLimit, OptionsNoCqCanHoldAreRefusedAtCmCreate)
{
	wharf_ctx *ctx = nullptr;
	wharf_ctx_opts co;
	wharf_ctx_opts_init(&co);
	co.nshards = 1;
	ASSERT_EQ(0, wharf_ctx_create(&co, &ctx));
	ibv_device_attr a = DevAttr();
	wharf_qp_res_opts ro;
	wharf_qp_res_opts_init(&ro);
	// The storm's old sizing for 30,000 connections.
	ro.srq_depth = (uint32_t)a.max_cqe + 1;
	wharf_cm_opts mo;
	wharf_cm_opts_init(&mo);
	mo.res_opts = &ro;
	wharf_cm *cm = nullptr;
	EXPECT_EQ(-EINVAL, wharf_cm_create(ctx, &mo, &cm));
	EXPECT_EQ(nullptr, cm);
	// A ceiling beyond the device is clamped, and the cm comes up.
	wharf_qp_res_opts_init(&ro);
	ro.srq_depth = 1024;
	ro.srq_max = (uint32_t)a.max_cqe * 2;
	ro.cq_max = (uint32_t)a.max_cqe * 2;
	EXPECT_EQ(0, wharf_cm_create(ctx, &mo, &cm));
	if (cm) {
		EXPECT_EQ(0, wharf_cm_destroy(cm));
	}
	EXPECT_EQ(0, wharf_ctx_destroy(ctx));
}

TEST_F(CmResSets, AShardMakesASecondSetWhenItsFirstIsFullAndDefersPastIt)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	wharf_listener *l = nullptr;
	uint16_t port = ListenOnShard1(&srv, WHARF_OVERLOAD_DEFER, &l);
	std::vector<uint64_t> ids;
	for (unsigned i = 0; i < 2 * kFit; i++)
		ids.push_back(ClientConnect(&cli, port));
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 2 * kFit)) << cli.Dump();
	EXPECT_EQ(0u, ListenerStats(l).deferred_total);
	// Two sets on the one shard, each as full as one set can be.
	std::set<const wharf_qp_res *> sets;
	for (unsigned i = 0; i < 2 * kFit; i++)
		sets.insert(ResOf(ServerId(srv, i)));
	ASSERT_EQ(2u, sets.size());
	for (unsigned i : {0u, 2 * kFit - 1}) {
		struct wharf_qp_res_stats rs = ServerRes(ServerId(srv, i));
		EXPECT_EQ(kFit, rs.qps_active);
		EXPECT_EQ(kSendCqs, rs.send_cqs);
	}

	// Past the last set: the listener's policy, nobody refused.
	ids.push_back(ClientConnect(&cli, port));
	ASSERT_TRUE(Poll([&] { return ListenerStats(l).deferred == 1; }))
		<< "deferred " << ListenerStats(l).deferred;
	EXPECT_EQ(2 * kFit, srv.Count(Ev::Request));

	// Every connection of both sets receives on its set's SRQ.
	for (unsigned i = 0; i < 2 * kFit; i++)
		Ping(ids[i]);
	ASSERT_TRUE(srv.WaitCount(Ev::Recv, 2 * kFit)) << srv.Dump();

	// One leaves: the waiting one comes in where room came back.
	Destroy(ServerId(srv, 0));
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 2 * kFit + 1)) << cli.Dump();
	EndAll(ids, srv);
}
