// Cross-shard torture on real connections: lookups by id on every shard
// (pollers) and on an application thread (a registered wcm_rcu reader)
// while connections churn: each client disconnects from inside
// on_established (the DREQ right behind the RTU) and every connection is
// destroyed from inside its own on_disconnected.  Build it with
// --config=tsan (and asan) as well: a reader racing with a free is a
// ThreadSanitizer report.
#include <atomic>

#include <urcu/urcu-qsbr.h>

#include "cm/conn_rcu.h"
#include "tests/guest/cm_guest_util.h"

using namespace wharf_cm_test;

namespace
{

constexpr unsigned kRounds = 8;
constexpr unsigned kPerRound = 12;
constexpr unsigned kMax = kRounds * kPerRound;

struct Ids {
	wharf_cm *cm = nullptr;
	std::atomic<uint64_t> ids[kMax];
	std::atomic<unsigned> n{0};
	std::atomic<uint64_t> lookups{0}, hits{0}, bad{0};
	std::atomic<bool> stop{false};
	Ids()
	{
		for (auto &i : ids)
			i = 0;
	}
};

void LookupOne(Ids *ids, uint32_t *rnd)
{
	unsigned n = ids->n.load();
	if (!n)
		return;
	*rnd = *rnd * 1103515245u + 12345u;
	uint64_t id = ids->ids[(*rnd >> 8) % n].load();
	ids->lookups++;
	wharf_conn *c = wharf_conn_lookup(ids->cm, id);
	if (!c)
		return;
	ids->hits++;
	if (wharf_conn_id(c) != id ||
	    wharf_shard_index(wharf_conn_shard(c)) != (unsigned)(id >> 48))
		ids->bad++;
}

int ShardReader(wharf_shard *shard, void *arg)
{
	uint32_t rnd = 17 + wharf_shard_index(shard);
	for (int i = 0; i < 8; i++)
		LookupOne(static_cast<Ids *>(arg), &rnd);
	return 0;
}

class CmTorture : public CmGuest
{
      protected:
	// Room for a few rounds of QPs still draining.
	void EditResOpts(wharf_qp_res_opts &o) override
	{
		o.srq_depth = 1024;
	}
};

TEST_F(CmTorture, LookupsFromEveryShardAndAnAppThreadWhileConnectionsChurn)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	Ids &ids = *Keep(new Ids);
	ids.cm = cm_;
	cli.on_established = [](wharf_conn *c, const wharf_conn_info *) {
		EXPECT_EQ(0, wharf_disconnect(c));
	};
	cli.on_disconnected = [](wharf_conn *c) {
		EXPECT_EQ(0, wharf_conn_destroy(c));
	};
	srv.on_disconnected = [](wharf_conn *c) {
		EXPECT_EQ(0, wharf_conn_destroy(c));
	};
	uint16_t port = Listen(&srv);
	std::vector<wharf_poller *> pollers(2);
	for (unsigned i = 0; i < 2; i++)
		RunOn(ctx_, i, [&, i] {
			ASSERT_EQ(0,
				  wharf_shard_poller_add(
					  wharf_ctx_shard(ctx_, i), ShardReader,
					  nullptr, &ids, &pollers[i]));
		});
	std::thread app([&ids] {
		uint32_t rnd = 99;
		unsigned k = 0;
		ASSERT_EQ(0, wcm_rcu_register_thread());
		while (!ids.stop) {
			urcu_qsbr_read_lock();
			LookupOne(&ids, &rnd);
			urcu_qsbr_read_unlock();
			if (++k % 16 == 0)
				wcm_rcu_quiescent_state();
			if (k % 256 == 0) {
				wcm_rcu_thread_offline();
				std::this_thread::yield();
				wcm_rcu_thread_online();
			}
		}
		wcm_rcu_unregister_thread();
	});
	for (unsigned r = 0; r < kRounds; r++) {
		for (unsigned i = 0; i < kPerRound; i++) {
			uint64_t id = Connect(&cli, port, nullptr,
					      [i](wharf_connect_opts &o) {
						      o.shard = (int)(i % 2);
						      o.busy_retry = true;
					      });
			ids.ids[ids.n.load()] = id;
			ids.n++;
		}
		// Every client of the round has its one outcome.
		size_t want = (r + 1) * kPerRound;
		EXPECT_TRUE(cli.Wait([&] {
			return cli.CountLocked(Ev::Disconnected) +
				       cli.CountLocked(Ev::Rejected) +
				       cli.CountLocked(Ev::Error) >=
			       want;
		})) << cli.Dump();
	}
	// The server side of every established connection ends too:
	// on_disconnected, or, when the client's DREQ overtook its RTU, a
	// connect error (the server's CM reports DISCONNECTED for a handshake
	// that never completed on its side).
	size_t cli_est = cli.Count(Ev::Established);
	EXPECT_TRUE(srv.Wait([&] {
		return srv.CountLocked(Ev::Disconnected) +
			       srv.CountLocked(Ev::Error) >=
		       cli_est;
	})) << srv.Dump();
	ids.stop = true;
	app.join();
	for (unsigned i = 0; i < 2; i++)
		RunOn(ctx_, i, [&, i] { wharf_poller_remove(pollers[i]); });
	// Exactly one outcome per client; on_disconnected exactly once on
	// both ends of every connection that was established.  (A client
	// may end rejected busy when its retries run out: the SRQ budget of
	// a shard also covers QPs that are still draining.)
	size_t est = 0;
	for (unsigned i = 0; i < kMax; i++) {
		uint64_t id = ids.ids[i];
		size_t e = cli.Count(Ev::Established, id);
		EXPECT_LE(e, 1u);
		EXPECT_EQ(e, cli.Count(Ev::Disconnected, id));
		EXPECT_EQ(1u, cli.Count(Ev::Disconnected, id) +
				      cli.Count(Ev::Rejected, id) +
				      cli.Count(Ev::Error, id))
			<< id;
		if (!e)
			Destroy(id); // not destroyed by a hook
		est += e;
	}
	EXPECT_GT(est, kMax / 2);
	size_t overtaken = 0;
	for (const Rec &r : srv.All()) {
		if (r.ev != Ev::Error)
			continue;
		EXPECT_EQ((int)WHARF_CONN_ERR_CONNECT, r.a) << r.id;
		EXPECT_EQ(0u, srv.Count(Ev::Established, r.id)) << r.id;
		Destroy(r.id); // not destroyed by a hook
		overtaken++;
	}
	EXPECT_EQ(est, srv.Count(Ev::Established) + overtaken);
	EXPECT_EQ(srv.Count(Ev::Established), srv.Count(Ev::Disconnected));
	EXPECT_EQ(0u, ids.bad.load());
	EXPECT_GT(ids.lookups.load(), 0u);
	struct wharf_cm_stats s = CmStats(cm_);
	EXPECT_EQ(s.requests + s.connects, Finals(s));
	EXPECT_EQ(2 * est - overtaken, s.disconnected);
	EXPECT_EQ(0u, s.handshakes);
	EXPECT_EQ(0u, s.connections);
	// Every one was destroyed: no lookup on its owner finds it.
	for (unsigned i = 0; i < kMax; i++)
		OnConn(cm_, ids.ids[i],
		       [](wharf_conn *c) { EXPECT_EQ(nullptr, c); });
}

} // namespace
