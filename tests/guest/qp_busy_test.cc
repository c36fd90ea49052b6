/*
 * Admission: a shard takes a connection only while its SRQ budget (minus
 * the reserve) covers the connection's receive credits; beyond that the
 * take fails with -EBUSY and the connection is rejected busy (cm/rej_busy.h
 * payload, REJ reason 28).  Credits come back when a QP has drained.
 */
#include "tests/guest/guest_env.h"
#include "tests/guest/qp_loopback.h"

extern "C" {
#include "cm/rej_busy.h"
}

namespace
{

using qpl::Env;
using qpl::kCli;
using qpl::kSrv;
using qpl::Peer;

TEST(QpBusy, RejectsBusyWhenReceiveBudgetIsExhausted)
{
	WHARF_REQUIRE_GUEST();
	Env env;
	wharf_qp_res_opts so{}, co{};
	so.size = co.size = sizeof(so);
	so.srq_depth = 64;
	so.recv_reserve = 4;
	so.recv_credits = 20; /* (64 - 4) / 20 = 3 connections */
	so.pool_size = 4;
	co.srq_depth = 256;
	co.recv_credits = 8;
	co.pool_size = 8;
	ASSERT_EQ(env.start(&so, &co), "");
	std::vector<Peer *> clients;
	for (unsigned i = 0; i < 5; i++) {
		auto p = std::make_unique<Peer>();
		p->index = i;
		clients.push_back(env.add(std::move(p)));
	}
	ASSERT_TRUE(env.connect_all(clients));
	std::vector<Peer *> up;
	unsigned busy = 0;
	for (Peer *c : clients) {
		if (c->state == qpl::P_ESTABLISHED) {
			up.push_back(c);
			continue;
		}
		EXPECT_EQ(c->state, qpl::P_REJECTED) << c->cm_err;
		EXPECT_EQ(c->reject_status, WCM_REJ_REASON_CONSUMER);
		EXPECT_EQ(c->reject_busy, 0) << "not a wharf busy payload";
		EXPECT_EQ(c->reject_busy_reason,
			  (unsigned)WCM_BUSY_RECV_BUDGET);
		busy++;
	}
	EXPECT_EQ(up.size(), 3u);
	EXPECT_EQ(busy, 2u);
	EXPECT_EQ(env.busy_rejects, 2);
	struct wharf_qp_res_stats st = env.stats(kSrv);
	EXPECT_EQ(st.admitted_credits, 60u);
	EXPECT_EQ(st.admit_refused, 2u);
	env.on(kSrv, [&] {
		/* 60 of 60 admissible credits are out; the reserve stays. */
		EXPECT_EQ(wharf_qp_res_admit(env.res[kSrv], 0), -EBUSY);
		EXPECT_EQ(wharf_qp_res_admit(env.res[kSrv], 1), -EBUSY);
	});

	/* One connection goes away: once drained, its credits are free. */
	ASSERT_TRUE(env.disconnect_all({up[0]}, false));
	ASSERT_TRUE(env.pump(
		[&] { return env.stats(kSrv).admitted_credits == 40; }));
	env.on(kSrv,
	       [&] { EXPECT_EQ(wharf_qp_res_admit(env.res[kSrv], 0), 0); });
	auto p = std::make_unique<Peer>();
	p->index = 99;
	Peer *late = env.add(std::move(p));
	ASSERT_TRUE(env.connect_all({late}));
	EXPECT_EQ(late->state, qpl::P_ESTABLISHED) << late->reject_status;
	EXPECT_EQ(env.stop(), "");
}

/* With srq_max the SRQ grows instead of refusing, up to its ceiling. */
TEST(QpBusy, GrowsTheSrqUpToSrqMaxThenRejectsBusy)
{
	WHARF_REQUIRE_GUEST();
	Env env;
	wharf_qp_res_opts so{}, co{};
	so.size = co.size = sizeof(so);
	so.srq_depth = 64;
	so.srq_max = 160;
	so.recv_reserve = 4;
	so.recv_credits = 20; /* (160 - 4) / 20 = 7 connections at most */
	so.pool_size = 4;
	co.srq_depth = 256;
	co.recv_credits = 8;
	co.pool_size = 8;
	ASSERT_EQ(env.start(&so, &co), "");
	env.on(kSrv, [&] {
		EXPECT_EQ(wharf_qp_res_admit(env.res[kSrv], 140), 0);
		EXPECT_EQ(wharf_qp_res_admit(env.res[kSrv], 157), -EBUSY);
	});
	std::vector<Peer *> clients;
	for (unsigned i = 0; i < 9; i++) {
		auto p = std::make_unique<Peer>();
		p->index = i;
		clients.push_back(env.add(std::move(p)));
	}
	ASSERT_TRUE(env.connect_all(clients));
	unsigned up = 0, busy = 0;
	for (Peer *c : clients) {
		if (c->state == qpl::P_ESTABLISHED) {
			up++;
			continue;
		}
		EXPECT_EQ(c->state, qpl::P_REJECTED) << c->cm_err;
		EXPECT_EQ(c->reject_busy_reason,
			  (unsigned)WCM_BUSY_RECV_BUDGET);
		busy++;
	}
	EXPECT_EQ(up, 7u);
	EXPECT_EQ(busy, 2u);
	struct wharf_qp_res_stats st = env.stats(kSrv);
	EXPECT_EQ(st.srq_depth, 160u); /* 64 + 64 + the last 32 */
	EXPECT_EQ(st.srq_max, 160u);
	EXPECT_EQ(st.srq_grows, 2u);
	EXPECT_EQ(st.admitted_credits, 140u);
	EXPECT_EQ(st.recv_bytes, 160u * WHARF_QP_DEFAULT_RECV_SIZE);
	EXPECT_EQ(env.stop(), "");
}

} // namespace
