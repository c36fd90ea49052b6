/*
 * Teardown under traffic: both ends stream SENDs and RDMA WRITEs with more
 * WRs than the send queue holds, then every QP is closed mid-flight.  Pins:
 * each accepted post gets exactly one on_send_done (success, flush, or
 * cancelled before posting), on_closed comes once per QP after the last of
 * them, and no WR context is touched after its completion (contexts are
 * heap-allocated and freed in on_send_done: run under --config=asan).
 */
#include <cstring>
#include <set>

#include "tests/guest/guest_env.h"
#include "tests/guest/qp_loopback.h"

namespace
{

using qpl::Env;
using qpl::kCli;
using qpl::kSrv;
using qpl::Peer;

constexpr unsigned kConns = 16;
constexpr unsigned kInFlight = 24; /* more than the send queue (16) */
constexpr uint32_t kMsg = 256;
constexpr uint32_t kStreamTag = 0x5354524d; /* 'STRM' */

struct Op {
	wharf_wr wr;
	unsigned slot;
};

class Streamer : public Peer
{
      public:
	/* On the shard: fills the pipe. */
	void start()
	{
		for (unsigned i = 0; i < kInFlight; i++) {
			Op *op = new Op{};
			op->slot = i;
			post(op);
		}
	}
	void post(Op *op)
	{
		ibv_sge sge = {(uintptr_t)mr->at(base + op->slot * kMsg), kMsg,
			       mr->mr->lkey};
		wharf_wr_init(&op->wr, kStreamTag);
		int e;
		if (n++ % 2)
			e = wharf_qp_post_send(qp, &op->wr, &sge, 1, false, 0);
		else
			e = wharf_qp_post_write(
				qp, &op->wr, &sge, 1,
				(uintptr_t)peer_mr->at(peer_base +
						       op->slot * kMsg),
				peer_mr->mr->rkey, false, 0);
		if (e) {
			refused++;
			delete op;
			live--;
			return;
		}
		posted++;
	}
	void send_done(wharf_wr *wr) override
	{
		Op *op = wharf_wr_entry(wr, Op, wr, kStreamTag);
		if (!op) {
			bad++;
			return;
		}
		completed++;
		if (wr->status == IBV_WC_SUCCESS)
			ok++;
		else
			failed++;
		if (wr->status == IBV_WC_SUCCESS && !stopping) {
			post(op);
			return;
		}
		delete op; /* ASan: the library must not touch it again */
		live--;
	}
	int recv(void *, const wharf_qp_recv &) override
	{
		received++;
		return 0;
	}
	void error(ibv_wc_status) override
	{
		/* The test closes the QPs itself. */
	}
	void closed() override
	{
		if (completed != posted || live != 0)
			bad++;
	}
	qpl::Mr *mr = nullptr, *peer_mr = nullptr;
	size_t base = 0, peer_base = 0;
	bool stopping = false;
	unsigned n = 0;
	std::atomic<unsigned> live{kInFlight};
	std::atomic<unsigned> posted{0}, completed{0}, ok{0}, failed{0};
	std::atomic<unsigned> refused{0}, received{0}, bad{0};
};

struct Rig {
	Env env;
	qpl::Mr smr, cmr;
	std::vector<Peer *> clients;
	std::vector<Streamer *> all;

	void start()
	{
		wharf_qp_res_opts o{};
		o.size = sizeof(o);
		o.srq_depth = 512;
		o.recv_credits = 16;
		o.sq_depth = 16;
		o.pool_size = 16;
		ASSERT_EQ(env.start(&o, &o), "");
		ibv_pd *pd = wharf_qp_dev_pd(env.dev);
		int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
		ASSERT_TRUE(smr.reg(pd, kConns * kInFlight * kMsg, acc));
		ASSERT_TRUE(cmr.reg(pd, kConns * kInFlight * kMsg, acc));
		env.server_factory = [this](const wcm_conn_param &,
					    unsigned idx) {
			auto p = std::make_unique<Streamer>();
			p->mr = &smr;
			p->peer_mr = &cmr;
			p->base = p->peer_base = idx * kInFlight * kMsg;
			return p;
		};
		for (unsigned i = 0; i < kConns; i++) {
			auto p = std::make_unique<Streamer>();
			p->index = i;
			p->mr = &cmr;
			p->peer_mr = &smr;
			p->base = p->peer_base = i * kInFlight * kMsg;
			clients.push_back(env.add(std::move(p)));
		}
		ASSERT_TRUE(env.connect_all(clients));
		for (Peer *c : clients) {
			ASSERT_EQ(c->state, qpl::P_ESTABLISHED) << c->cm_err;
			Peer *s = env.server_of(c->index);
			ASSERT_NE(s, nullptr);
			ASSERT_EQ(s->state, qpl::P_ESTABLISHED);
			all.push_back(static_cast<Streamer *>(c));
			all.push_back(static_cast<Streamer *>(s));
		}
		for (Streamer *s : all)
			env.on(s->side, [s] { s->start(); });
		/* Real traffic in both directions before pulling the plug. */
		ASSERT_TRUE(env.pump([&] {
			for (Streamer *s : all)
				if (s->ok < 200)
					return false;
			return true;
		}));
	}

	/* Every WR completed once, every QP closed once, nothing leaked. */
	void check_closed()
	{
		ASSERT_TRUE(env.pump([&] {
			for (Streamer *s : all)
				if (s->closed_calls == 0)
					return false;
			return true;
		}));
		unsigned failed = 0;
		for (Streamer *s : all) {
			EXPECT_EQ(s->closed_calls, 1);
			EXPECT_EQ(s->bad, 0u);
			EXPECT_EQ(s->completed, s->posted);
			EXPECT_EQ(s->live, 0u);
			EXPECT_EQ(s->refused, 0u);
			failed += s->failed;
		}
		/* The pipes were full: closing flushed or cancelled WRs. */
		EXPECT_GT(failed, 0u);
	}

	void finish()
	{
		env.pump(
			[&] {
				for (Peer *c : clients)
					if (c->state == qpl::P_ESTABLISHED)
						return false;
				return true;
			},
			1);
		smr.reset();
		cmr.reset();
		EXPECT_EQ(env.stop(), "");
	}
};

TEST(QpTeardown, CloseUnderTrafficCompletesEveryWrOnce)
{
	WHARF_REQUIRE_GUEST();
	Rig rig;
	rig.start();
	if (HasFatalFailure())
		return;
	/* Close everything on both shards, mid-flight. */
	for (unsigned side : {kCli, kSrv})
		rig.env.on(side, [&, side] {
			for (Streamer *s : rig.all)
				if (s->side == side) {
					s->stopping = true;
					EXPECT_EQ(wharf_qp_close(s->qp), 0);
					EXPECT_EQ(wharf_qp_close(s->qp), 0);
					Op extra{};
					wharf_wr_init(&extra.wr, kStreamTag);
					ibv_sge sge = {(uintptr_t)s->mr->buf, 8,
						       s->mr->mr->lkey};
					EXPECT_EQ(wharf_qp_post_send(
							  s->qp, &extra.wr,
							  &sge, 1, false, 0),
						  -ENOTCONN);
				}
		});
	rig.check_closed();
	if (HasFatalFailure())
		return;
	/* The CM side: disconnect, then release at timewait exit. */
	ASSERT_TRUE(rig.env.disconnect_all(rig.clients, true));
	/*
	 * The releases at TIMEWAIT_EXIT finish on the shards, after the CM
	 * event was seen here: wait (bounded) for the server to settle.
	 */
	EXPECT_TRUE(rig.env.pump(
		[&] { return rig.env.stats(kSrv).qps_active == 0; }));
	struct wharf_qp_res_stats st = rig.env.stats(kSrv);
	EXPECT_EQ(st.qps_active, 0u);
	EXPECT_EQ(st.admitted_credits, 0u);
	EXPECT_EQ(st.cq_reserved, 512u);
	EXPECT_EQ(st.srq_posted + st.recv_held + st.recv_pending, 512u)
		<< "no SRQ buffer lost";
	rig.finish();
}

TEST(QpTeardown, ReleaseBeforeDrainStillCompletesEverything)
{
	WHARF_REQUIRE_GUEST();
	Rig rig;
	rig.start();
	if (HasFatalFailure())
		return;
	/* Close and release at once, as an owner giving up. */
	for (unsigned side : {kSrv, kCli})
		rig.env.on(side, [&, side] {
			for (Streamer *s : rig.all)
				if (s->side == side) {
					s->stopping = true;
					ASSERT_EQ(wharf_qp_close(s->qp), 0);
					ASSERT_EQ(
						wharf_qp_release(
							s->qp,
							WHARF_QP_FATE_UNKNOWN),
						0);
					s->released = true;
				}
		});
	rig.check_closed();
	struct wharf_qp_res_stats st = rig.env.stats(kCli);
	EXPECT_EQ(st.qps_active, 0u);
	EXPECT_GE(st.qps_destroyed, kConns);
	for (Peer *c : rig.clients)
		rdma_disconnect(c->id);
	rig.finish();
}

TEST(QpTeardown, PostCloseReleaseInOneIteration)
{
	WHARF_REQUIRE_GUEST();
	Env env;
	wharf_qp_res_opts o{};
	o.size = sizeof(o);
	o.srq_depth = 64;
	o.recv_credits = 8;
	o.sq_depth = 4;
	o.pool_size = 2;
	ASSERT_EQ(env.start(&o, &o), "");
	qpl::Mr mr;
	ASSERT_TRUE(mr.reg(wharf_qp_dev_pd(env.dev), 64 * kMsg,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
	auto p = std::make_unique<Streamer>();
	p->mr = p->peer_mr = &mr;
	Streamer *s = p.get();
	Peer *c = env.add(std::move(p));
	ASSERT_TRUE(env.connect_all({c}));
	ASSERT_EQ(c->state, qpl::P_ESTABLISHED);
	/*
	 * Queued WRs (more than the send queue), then close and release
	 * before the loop could flush them: every one completes as flushed,
	 * and the QP is freed while it was still on the flush list.
	 */
	env.on(kCli, [&] {
		s->stopping = true;
		s->live = 10;
		for (unsigned i = 0; i < 10; i++) {
			Op *op = new Op{};
			op->slot = i;
			s->post(op);
		}
		EXPECT_EQ(wharf_qp_close(s->qp), 0);
		EXPECT_EQ(wharf_qp_release(s->qp, WHARF_QP_FATE_UNKNOWN), 0);
		s->released = true;
	});
	ASSERT_TRUE(env.pump([&] { return s->closed_calls == 1; }));
	EXPECT_EQ(s->posted, 10u);
	EXPECT_EQ(s->completed, 10u);
	EXPECT_EQ(s->failed, 10u);
	EXPECT_EQ(s->live, 0u);
	EXPECT_EQ(s->bad, 0u);
	struct wharf_qp_res_stats st = env.stats(kCli);
	EXPECT_EQ(st.wrs_posted, 0u) << "nothing reached the device";
	EXPECT_EQ(st.qps_active, 0u);
	rdma_disconnect(c->id);
	mr.reset();
	EXPECT_EQ(env.stop(), "");
}

} // namespace
