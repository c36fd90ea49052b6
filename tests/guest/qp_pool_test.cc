/*
 * The QP pool: background refill with bounded steps, inline creation when
 * empty (counted), and the quarantine rule under connect/disconnect churn:
 * QPs come back only after TIMEWAIT_EXIT + quarantine and are reused, and
 * no connection is ever rejected as stale (REJ reason 10).  A negative
 * control breaks the rule (reuse right after the disconnect) and shows
 * that the check can fail.
 */
#include <chrono>
#include <map>
#include <set>

#include "tests/guest/guest_env.h"
#include "tests/guest/qp_loopback.h"

namespace
{

using qpl::Env;
using qpl::kCli;
using qpl::kSrv;
using qpl::Peer;

const wharf_qp_ops kNoOps = {
	sizeof(wharf_qp_ops), nullptr, nullptr, nullptr, nullptr, nullptr};

bool pool_is(Env &env, unsigned side, uint32_t n)
{
	return env.pump([&] { return env.stats(side).pool_free == n; }, 60);
}

TEST(QpPool, RefillsInBackgroundAndCountsEmptyTakes)
{
	WHARF_REQUIRE_GUEST();
	Env env;
	wharf_qp_res_opts o{};
	o.size = sizeof(o);
	o.srq_depth = 256;
	o.recv_credits = 4;
	o.pool_size = 8;
	o.pool_low_water = 4;
	o.pool_batch = 2;
	ASSERT_EQ(env.start(&o, &o), "");
	ASSERT_TRUE(pool_is(env, kSrv, 8));
	struct wharf_qp_res_stats st = env.stats(kSrv);
	EXPECT_EQ(st.pool_created, 8u);
	EXPECT_EQ(st.pool_empty, 0u);

	std::vector<wharf_qp *> qps;
	wharf_qp_opts qo{};
	qo.size = sizeof(qo);
	qo.ops = &kNoOps;
	env.on(kSrv, [&] {
		for (int i = 0; i < 6; i++) {
			wharf_qp *qp = nullptr;
			ASSERT_EQ(wharf_qp_take(env.res[kSrv], &qo, &qp), 0);
			qps.push_back(qp);
		}
	});
	/* 2 left < low water 4: the timer refills to 8, 2 per step. */
	ASSERT_TRUE(pool_is(env, kSrv, 8));
	st = env.stats(kSrv);
	EXPECT_EQ(st.pool_created, 14u);
	EXPECT_EQ(st.pool_empty, 0u);
	EXPECT_EQ(st.qps_active, 6u);

	/* Ten takes in one go: eight from the pool, two created inline. */
	env.on(kSrv, [&] {
		for (int i = 0; i < 10; i++) {
			wharf_qp *qp = nullptr;
			ASSERT_EQ(wharf_qp_take(env.res[kSrv], &qo, &qp), 0);
			qps.push_back(qp);
		}
		struct wharf_qp_res_stats s2 {
		};
		s2.size = sizeof(s2);
		wharf_qp_res_stats(env.res[kSrv], &s2);
		EXPECT_EQ(s2.pool_empty, 2u);
		EXPECT_EQ(s2.pool_free, 0u);
	});
	std::set<uint32_t> nums;
	for (wharf_qp *qp : qps)
		nums.insert(wharf_qp_num(qp));
	EXPECT_EQ(nums.size(), qps.size());

	/* Never connected: FATE_UNUSED goes straight back (up to the size). */
	env.on(kSrv, [&] {
		for (wharf_qp *qp : qps)
			ASSERT_EQ(wharf_qp_release(qp, WHARF_QP_FATE_UNUSED),
				  0);
	});
	ASSERT_TRUE(env.pump([&] { return env.stats(kSrv).qps_active == 0; }));
	st = env.stats(kSrv);
	/* Recycled QPs are kept up to twice the pool size. */
	EXPECT_GE(st.pool_free, 8u);
	EXPECT_LE(st.pool_free, 16u);
	EXPECT_EQ(st.pool_recycled + st.qps_destroyed, 16u);
	EXPECT_GT(st.pool_recycled, 0u);
	EXPECT_EQ(st.admitted_credits, 0u);
	EXPECT_EQ(env.stop(), "");
}

wharf_qp_res_opts churn_opts()
{
	wharf_qp_res_opts o{};
	o.size = sizeof(o);
	/*
	 * Credits come back when a QP has drained, which on rxe takes the
	 * 200 ms LAST_WQE fallback: room for ~900 connections in flight
	 * keeps admission out of the way however fast the cycles run.
	 */
	o.srq_depth = 1024;
	o.recv_credits = 1;
	o.sq_depth = 8;
	o.pool_size = 4;
	o.pool_low_water = 2;
	o.pool_batch = 2;
	return o;
}

TEST(QpPool, ChurnRecyclesAfterQuarantineWithoutStaleRejects)
{
	WHARF_REQUIRE_GUEST();
	Env env;
	wharf_qp_res_opts o = churn_opts(); /* default 2 s quarantine */
	ASSERT_EQ(env.start(&o, &o), "");
	/*
	 * At least 30 cycles, and on until both sides reused a QP number.
	 * QPs come back some seconds after their connection (timewait plus
	 * quarantine), so what bounds a broken run is time, not a cycle
	 * count: a fast machine ran 400 cycles in 6 s, before the first QP
	 * had left quarantine.  Even cycles: the client hangs up and the
	 * server holds its DREP until the next cycle's connections are up
	 * (a slow peer); odd cycles: the server hangs up.
	 */
	constexpr unsigned kMinCycles = 30, kPerCycle = 4;
	const auto give_up =
		std::chrono::steady_clock::now() + std::chrono::seconds(120);
	std::map<uint32_t, std::set<unsigned>> cycles_of_qpn[2];
	std::vector<Peer *> held;
	unsigned reused[2] = {0, 0};
	unsigned established = 0, cycles = 0;
	env.server_factory = [](const wcm_conn_param &, unsigned) {
		auto p = std::make_unique<Peer>();
		p->hold_drep = true;
		return p;
	};
	for (unsigned cyc = 0; std::chrono::steady_clock::now() < give_up;
	     cyc++) {
		if (cyc >= kMinCycles && reused[kSrv] && reused[kCli])
			break;
		cycles++;
		std::vector<Peer *> clients;
		for (unsigned i = 0; i < kPerCycle; i++) {
			auto p = std::make_unique<Peer>();
			p->index = cyc * kPerCycle + i;
			clients.push_back(env.add(std::move(p)));
		}
		ASSERT_TRUE(env.connect_all(clients));
		for (Peer *c : clients) {
			ASSERT_EQ(c->state, qpl::P_ESTABLISHED)
				<< "cycle " << cyc << " err " << c->cm_err
				<< " rej " << c->reject_status;
			Peer *s = env.server_of(c->index);
			ASSERT_NE(s, nullptr);
			ASSERT_EQ(s->state, qpl::P_ESTABLISHED);
			for (unsigned side : {kSrv, kCli}) {
				Peer *e = side == kSrv ? s : c;
				auto &seen = cycles_of_qpn[side][e->qpn];
				if (!seen.empty())
					reused[side]++;
				seen.insert(cyc);
			}
			established++;
		}
		for (Peer *s : held)
			env.answer(s);
		held.clear();
		if (cyc % 2 == 0) {
			std::vector<Peer *> ends;
			for (Peer *c : clients) {
				env.hang_up(c);
				held.push_back(env.server_of(c->index));
				ends.push_back(held.back());
			}
			ASSERT_TRUE(env.pump([&] {
				for (Peer *s : ends)
					if (s->state != qpl::P_DISCONNECTED)
						return false;
				return true;
			}));
		} else {
			ASSERT_TRUE(env.disconnect_all(clients, false, true));
		}
		env.reap_peers();
	}
	for (Peer *s : held)
		env.answer(s);
	/* Let every timewait end so all QPs are released. */
	ASSERT_TRUE(env.pump([&] {
		for (auto &p : env.peers)
			if (p->qp && !p->released)
				return false;
		return true;
	}));
	EXPECT_EQ(established, cycles * kPerCycle);
	EXPECT_EQ(env.stale_rejects, 0);
	for (unsigned side : {kSrv, kCli}) {
		struct wharf_qp_res_stats st = env.stats(side);
		EXPECT_GT(st.pool_recycled, 0u) << "side " << side;
		EXPECT_GT(reused[side], 0u) << "no QP number was used twice";
		fprintf(stderr,
			"side %u: %u cycles, %zu distinct QPNs for %u "
			"connections, %u reuses; recycled %llu, created %llu, "
			"inline %llu, drain timeouts %llu\n",
			side, cycles, cycles_of_qpn[side].size(),
			cycles * kPerCycle, reused[side],
			(unsigned long long)st.pool_recycled,
			(unsigned long long)st.pool_created,
			(unsigned long long)st.pool_empty,
			(unsigned long long)st.last_wqe_timeouts);
	}
	EXPECT_EQ(env.stop(), "");
}

TEST(QpPool, ReuseBeforeTheDrepGoesStale)
{
	WHARF_REQUIRE_GUEST();
	Env env;
	wharf_qp_res_opts o = churn_opts();
	o.pool_size = 1;
	o.pool_low_water = 0; /* 1 / 2 = 0: filled once, never refilled */
	o.no_quarantine_delay = true;
	ASSERT_EQ(env.start(&o, &o), "");
	ASSERT_TRUE(pool_is(env, kCli, 1));
	env.server_factory = [](const wcm_conn_param &, unsigned) {
		auto p = std::make_unique<Peer>();
		p->hold_drep = true; /* a slow peer */
		return p;
	};
	/*
	 * Breaks the rule on purpose: the client releases its QP as UNUSED
	 * right after sending the DREQ, while the server still holds the
	 * connection (no DREP yet), and reconnects with the same QP number.
	 */
	auto p = std::make_unique<Peer>();
	p->release_at_disconnect = true;
	p->fate_on_timewait = WHARF_QP_FATE_UNUSED;
	Peer *c = env.add(std::move(p));
	ASSERT_TRUE(env.connect_all({c}));
	ASSERT_EQ(c->state, qpl::P_ESTABLISHED);
	Peer *s = env.server_of(0);
	ASSERT_NE(s, nullptr);
	uint32_t qpn = c->qpn;
	env.hang_up(c);
	ASSERT_TRUE(env.pump([&] { return s->state == qpl::P_DISCONNECTED; }));
	ASSERT_TRUE(pool_is(env, kCli, 1));

	auto p2 = std::make_unique<Peer>();
	p2->index = 1;
	Peer *c2 = env.add(std::move(p2));
	ASSERT_TRUE(env.connect_all({c2}));
	EXPECT_EQ(c2->qpn, qpn) << "the pool handed out another QP: " << [&] {
		struct wharf_qp_res_stats st = env.stats(kCli);
		return "created " + std::to_string(st.pool_created) +
		       " inline " + std::to_string(st.pool_empty) +
		       " recycled " + std::to_string(st.pool_recycled) +
		       " destroyed " + std::to_string(st.qps_destroyed) +
		       " free " + std::to_string(st.pool_free);
	}();
	EXPECT_EQ(c2->state, qpl::P_REJECTED);
	EXPECT_EQ(c2->reject_status, 10);
	EXPECT_EQ(env.stale_rejects, 1)
		<< "reusing a QP number the peer still holds was not "
		   "rejected: the churn test could not fail";
	env.answer(s);
	env.pump([&] { return c->state == qpl::P_DISCONNECTED; }, 30);
	EXPECT_EQ(env.stop(), "");
}

} // namespace
