// The connect window on real rdma_cm: a shard runs at most connect_window
// active handshakes; later wharf_connect() calls wait (no id, no REQ on
// the wire), start in call order as earlier ones end, and a waiter
// destroyed while waiting ends as aborted without ever reaching the peer.
// Teardown with waiters left does not hang.  wharf_disconnect() goes
// through a disconnect window (fixed at the same width here): DREQs
// beyond it wait, still established, and go as answers come back; a
// waiter's peer DREQ or destroy ends its wait.
#include <atomic>
#include <future>

#include "tests/guest/cm_guest_util.h"

using namespace wharf_cm_test;

namespace
{

constexpr unsigned kWindow = 2;

class CmWindow : public CmGuest
{
      protected:
	void EditCmOpts(wharf_cm_opts &o) override
	{
		o.connect_window = kWindow;
	}

	// Passive connections on shard 1; requests are held (not decided)
	// until @accept_now is set, then accepted on arrival.
	uint16_t HoldingListener(Recorder *srv, std::atomic<bool> *accept_now)
	{
		srv->on_request = [accept_now](wharf_conn *c,
					       const wharf_conn_request *) {
			if (accept_now->load()) {
				EXPECT_EQ(0, wharf_accept(c, nullptr));
			}
		};
		return Listen(srv, [](wharf_listen_opts &o) {
			o.pick_shard = [](const wharf_conn_request *,
					  const wharf_cm_shard_load *, unsigned,
					  void *) { return 1; };
		});
	}

	// Accepts every request received so far that is still undecided.
	void AcceptHeld(Recorder &srv)
	{
		for (const Rec &r : srv.All())
			if (r.ev == Ev::Request)
				OnConn(cm_, r.id, [](wharf_conn *c) {
					if (c)
						(void)wharf_accept(c, nullptr);
				});
	}

	// Destroys @ids and every passive connection @srv saw, then checks
	// that every handshake the cm started ended with one outcome.
	void DestroyAllAndCheckAccounting(Recorder &srv,
					  const std::vector<uint64_t> &ids)
	{
		DestroyWithPeers(ids, srv);
		struct wharf_cm_stats s = CmStats(cm_);
		EXPECT_EQ(0u, s.connects_waiting);
		EXPECT_EQ(s.requests + s.connects, Finals(s));
	}

	uint64_t Admitted(uint64_t id)
	{
		uint64_t t = 0;
		OnConn(cm_, id, [&t](wharf_conn *c) {
			if (c)
				t = wharf_conn_step_ns(c, WHARF_STEP_ADMITTED);
		});
		return t;
	}
};

TEST_F(CmWindow, ConnectsBeyondTheWindowWaitAndStartInCallOrder)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	std::atomic<bool> &accept_now = *Keep(new std::atomic<bool>(false));
	uint16_t port = HoldingListener(&srv, &accept_now);
	std::vector<uint64_t> ids;
	for (int i = 0; i < 6; i++)
		ids.push_back(Connect(&cli, port)); // all on shard 0
	// Two handshakes reach the peer; four wait, counted as handshakes.
	ASSERT_TRUE(srv.WaitCount(Ev::Request, kWindow)) << srv.Dump();
	ASSERT_TRUE(Poll([&] { return CmStats(cm_).connects_waiting == 4; }))
		<< CmStats(cm_).connects_waiting;
	EXPECT_EQ(kWindow, srv.Count(Ev::Request));
	struct wharf_cm_stats s = CmStats(cm_);
	EXPECT_EQ(6u + kWindow, s.handshakes); // 6 active + 2 held passive
	for (int i = 2; i < 6; i++) {
		EXPECT_EQ(0u, Admitted(ids[i])) << i;
		uint64_t adopted = 0;
		OnConn(cm_, ids[i], [&adopted](wharf_conn *c) {
			adopted = wharf_conn_step_ns(c, WHARF_STEP_ADOPTED);
		});
		EXPECT_NE(0u, adopted) << i;
	}
	// Let them through: each end of a handshake admits the next waiter.
	accept_now = true;
	AcceptHeld(srv);
	for (uint64_t id : ids)
		ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, id))
			<< cli.Dump();
	EXPECT_EQ(6u, srv.Count(Ev::Request));
	uint64_t prev = 0;
	for (uint64_t id : ids) {
		uint64_t t = Admitted(id);
		EXPECT_NE(0u, t);
		EXPECT_GE(t, prev); // call order
		prev = t;
	}
	s = CmStats(cm_);
	EXPECT_EQ(0u, s.connects_waiting);
	EXPECT_EQ(6u, s.connected);
	// A fixed window: both shards' widths as set, never moved.
	EXPECT_EQ(2u * kWindow, s.connect_window);
	EXPECT_EQ(0u, s.window_grows + s.window_shrinks);
	DestroyAllAndCheckAccounting(srv, ids);
}

TEST_F(CmWindow, WaiterDestroyedWhileWaitingIsAbortedAndNeverSent)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	std::atomic<bool> &accept_now = *Keep(new std::atomic<bool>(false));
	uint16_t port = HoldingListener(&srv, &accept_now);
	uint64_t a = Connect(&cli, port), b = Connect(&cli, port);
	uint64_t c = Connect(&cli, port), d = Connect(&cli, port);
	ASSERT_TRUE(srv.WaitCount(Ev::Request, kWindow)) << srv.Dump();
	ASSERT_TRUE(Poll([&] { return CmStats(cm_).connects_waiting == 2; }));
	Destroy(c);
	struct wharf_cm_stats s = CmStats(cm_);
	EXPECT_EQ(1u, s.connects_waiting);
	EXPECT_EQ(1u, s.aborted);
	accept_now = true;
	AcceptHeld(srv);
	for (uint64_t id : {a, b, d})
		ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, id))
			<< cli.Dump();
	EXPECT_EQ(3u, srv.Count(Ev::Request)); // c never sent its REQ
	EXPECT_EQ(0u, cli.Count(Ev::Error, c));
	EXPECT_EQ(0u, CmStats(cm_).connects_waiting);
	DestroyAllAndCheckAccounting(srv, {a, b, d});
}

TEST_F(CmWindow, TeardownWithWaitersLeftEnds)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	std::atomic<bool> &accept_now = *Keep(new std::atomic<bool>(false));
	uint16_t port = HoldingListener(&srv, &accept_now);
	for (int i = 0; i < 5; i++)
		Connect(&cli, port);
	ASSERT_TRUE(srv.WaitCount(Ev::Request, kWindow)) << srv.Dump();
	ASSERT_TRUE(Poll([&] { return CmStats(cm_).connects_waiting == 3; }));
	// TearDown destroys the cm with 2 handshakes held and 3 waiting.
}

// Blocks shard @index of @ctx until the returned promise is set (or
// destroyed): a passive side that reads no event, so sends no DREP.
static std::shared_ptr<std::promise<void>> BlockShard(wharf_ctx *ctx,
						      unsigned index)
{
	struct Block {
		std::shared_future<void> release;
		std::promise<void> started;
	};
	auto release = std::make_shared<std::promise<void>>();
	Block *b = new Block{release->get_future().share(), {}};
	auto started = b->started.get_future();
	EXPECT_EQ(0, wharf_shard_send(
			     wharf_ctx_shard(ctx, index),
			     [](wharf_shard *, void *arg) {
				     Block *k = static_cast<Block *>(arg);
				     k->started.set_value();
				     k->release.wait();
				     delete k;
			     },
			     b));
	started.wait();
	return release;
}

class CmDisconnectWindow : public CmWindow
{
      protected:
	// Established connections from shard 0: the first @on_one of them
	// accepted on shard 1, the rest on shard 0.  @srv_ids gets the
	// passive ids in the order of @ids.
	std::vector<uint64_t> Establish(Recorder &srv, Recorder &cli,
					unsigned n, unsigned on_one,
					std::vector<uint64_t> *srv_ids)
	{
		std::atomic<unsigned> &picked =
			*Keep(new std::atomic<unsigned>(on_one));
		uint16_t port = Listen(&srv, [&picked](wharf_listen_opts &o) {
			o.pick_arg = &picked;
			o.pick_shard = [](const wharf_conn_request *,
					  const wharf_cm_shard_load *, unsigned,
					  void *arg) {
				auto *left =
					static_cast<std::atomic<unsigned> *>(
						arg);
				unsigned v = left->load();
				while (v &&
				       !left->compare_exchange_weak(v, v - 1))
					;
				return v ? 1 : 0;
			};
		});
		srv.on_request = [](wharf_conn *c, const wharf_conn_request *) {
			EXPECT_EQ(0, wharf_accept(c, nullptr));
		};
		std::vector<uint64_t> ids;
		for (unsigned i = 0; i < n; i++) {
			// One at a time: the pick follows the call order.
			ids.push_back(Connect(&cli, port));
			EXPECT_TRUE(cli.WaitCount(Ev::Established, 1, ids[i]))
				<< cli.Dump();
			EXPECT_TRUE(srv.WaitCount(Ev::Established, i + 1))
				<< srv.Dump();
		}
		std::vector<Rec> est;
		for (const Rec &r : srv.All())
			if (r.ev == Ev::Established)
				est.push_back(r);
		for (const Rec &r : est)
			srv_ids->push_back(r.id);
		return ids;
	}

	// wharf_disconnect() of every @ids in one turn of shard 0.
	std::vector<int> DisconnectAll(const std::vector<uint64_t> &ids)
	{
		std::vector<int> rcs;
		RunOn(ctx_, 0, [&] {
			wharf_rcu_read_lock();
			for (uint64_t id : ids) {
				wharf_conn *c = wharf_conn_lookup(cm_, id);
				rcs.push_back(c ? wharf_disconnect(c)
						: -ENOENT);
			}
			wharf_rcu_read_unlock();
		});
		return rcs;
	}
};

TEST_F(CmDisconnectWindow, DreqsBeyondTheWindowWaitEstablishedAndGoInOrder)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	std::vector<uint64_t> sids;
	std::vector<uint64_t> ids = Establish(srv, cli, 5, 5, &sids);
	ASSERT_EQ(5u, sids.size());
	auto release = BlockShard(ctx_, 1); // the peers answer no DREQ
	std::vector<int> rcs = DisconnectAll(ids);
	for (int rc : rcs)
		EXPECT_EQ(0, rc);
	struct wharf_cm_stats s = CmStats(cm_);
	EXPECT_EQ(3u, s.disconnects_waiting);
	EXPECT_EQ(0u, s.connects_waiting);
	EXPECT_EQ(2u * kWindow, s.disconnect_window); // fixed, both shards
	// Twice: the waiting one says so, as a sent one does.
	EXPECT_EQ(std::vector<int>({-EALREADY, -EALREADY}),
		  DisconnectAll({ids[0], ids[4]}));
	// A waiter destroyed: out of the queue, told once, never waits.
	Destroy(ids[3]);
	EXPECT_EQ(2u, CmStats(cm_).disconnects_waiting);
	EXPECT_EQ(1u, cli.Count(Ev::Disconnected, ids[3]));
	EXPECT_EQ(0u, cli.Count(Ev::Disconnected, ids[0]));
	release->set_value();
	for (uint64_t id : ids)
		ASSERT_TRUE(cli.WaitCount(Ev::Disconnected, 1, id))
			<< cli.Dump();
	ASSERT_TRUE(srv.WaitCount(Ev::Disconnected, 5)) << srv.Dump();
	s = CmStats(cm_);
	EXPECT_EQ(0u, s.disconnects_waiting);
	EXPECT_EQ(0u, s.forced_teardowns);
	for (uint64_t id : ids)
		EXPECT_EQ(1u, cli.Count(Ev::Disconnected, id)) << id;
	// The waiters went as slots came back, in call order.
	Rec r1 = cli.First(Ev::Disconnected, ids[1]);
	Rec r2 = cli.First(Ev::Disconnected, ids[2]);
	Rec r4 = cli.First(Ev::Disconnected, ids[4]);
	EXPECT_LE(r2.t, r4.t);
	EXPECT_LE(r1.t, r4.t);
	DestroyWithPeers(ids, srv);
	s = CmStats(cm_);
	EXPECT_EQ(s.requests + s.connects, Finals(s));
}

TEST_F(CmDisconnectWindow, PeerDreqEndsTheWait)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	std::vector<uint64_t> sids;
	// a, b accepted on shard 1 (blocked below), c's peer on shard 0.
	std::vector<uint64_t> ids = Establish(srv, cli, 3, 2, &sids);
	ASSERT_EQ(3u, sids.size());
	auto release = BlockShard(ctx_, 1);
	EXPECT_EQ(std::vector<int>({0, 0, 0}), DisconnectAll(ids));
	EXPECT_EQ(1u, CmStats(cm_).disconnects_waiting);
	// c's peer disconnects first: c answers it, out of the queue.
	OnConn(cm_, sids[2], [](wharf_conn *c) {
		ASSERT_NE(nullptr, c);
		EXPECT_EQ(0, wharf_disconnect(c));
	});
	ASSERT_TRUE(cli.WaitCount(Ev::Disconnected, 1, ids[2])) << cli.Dump();
	ASSERT_TRUE(
		Poll([&] { return CmStats(cm_).disconnects_waiting == 0; }));
	EXPECT_EQ(0u, cli.Count(Ev::Disconnected, ids[0]));
	release->set_value();
	for (uint64_t id : ids)
		ASSERT_TRUE(cli.WaitCount(Ev::Disconnected, 1, id))
			<< cli.Dump();
	ASSERT_TRUE(srv.WaitCount(Ev::Disconnected, 3)) << srv.Dump();
	for (uint64_t id : ids)
		EXPECT_EQ(1u, cli.Count(Ev::Disconnected, id)) << id;
	EXPECT_EQ(0u, CmStats(cm_).forced_teardowns);
	DestroyWithPeers(ids, srv);
}

// The adaptive window (connect_window 0), bounded at 64 here.
class CmAdaptiveWindow : public CmGuest
{
      protected:
	void EditCmOpts(wharf_cm_opts &o) override
	{
		o.connect_window = 0;
		o.connect_window_max = 64;
	}
	void EditResOpts(wharf_qp_res_opts &o) override
	{
		o.srq_depth = 1024;
		o.recv_credits = 1;
		o.pool_size = 64;
	}

	struct wharf_cm_stats Shard0()
	{
		struct wharf_cm_stats s = {};
		s.size = sizeof(s);
		EXPECT_EQ(0, wharf_cm_shard_stats(cm_, 0, &s));
		return s;
	}
};

TEST_F(CmAdaptiveWindow, WidensAfterARoundOfSteadyHandshakesWithinItsBound)
{
	constexpr unsigned kConns = 120;
	Recorder &srv = *NewRec(), &cli = *NewRec();
	srv.on_request = [](wharf_conn *c, const wharf_conn_request *) {
		EXPECT_EQ(0, wharf_accept(c, nullptr));
	};
	uint16_t port = Listen(&srv);
	EXPECT_EQ(32u, Shard0().connect_window); // where it starts
	std::vector<uint64_t> ids;
	for (unsigned i = 0; i < kConns; i++)
		ids.push_back(Connect(&cli, port)); // all on shard 0
	for (uint64_t id : ids)
		ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, id))
			<< cli.Dump();
	struct wharf_cm_stats s = Shard0();
	// The first round of 32 sets the base and, level with it, widens
	// the window by half; it never passes connect_window_max.
	EXPECT_GE(s.window_grows, 1u);
	EXPECT_GE(s.connect_window, 48u);
	EXPECT_LE(s.connect_window, 64u);
	EXPECT_EQ(0u, s.connects_waiting);
	EXPECT_EQ(kConns, s.connected);
	DestroyWithPeers(ids, srv);
}

} // namespace
