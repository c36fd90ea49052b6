/*
 * RNR behaviour when the SRQ runs dry: the server keeps every buffer it
 * receives (WHARF_QP_RECV_KEEP), so the 17th message to a 16-deep SRQ finds
 * none.  With rnr_retry_count 0 the sender's WR fails with
 * IBV_WC_RNR_RETRY_EXC_ERR (mapped to the QP's on_error); with 7 it waits
 * through RNR NAKs and completes once the buffers are given back
 * (wharf_qp_res_recv_put), after the SRQ limit event fired.
 */
#include <chrono>
#include <thread>

#include <cstring>
#include <vector>

#include "tests/guest/guest_env.h"
#include "tests/guest/qp_loopback.h"

namespace
{

using qpl::Env;
using qpl::kCli;
using qpl::kSrv;
using qpl::Peer;

constexpr unsigned kDepth = 16;
constexpr uint32_t kSendTag = 0x534e4431; /* 'SND1' */

class Hoarder : public Peer
{
      public:
	int recv(void *buf, const wharf_qp_recv &rx) override
	{
		(void)rx;
		held.push_back(buf);
		got++;
		return WHARF_QP_RECV_KEEP;
	}
	/* On the shard. */
	void give_back(wharf_qp_res *res)
	{
		for (void *b : held)
			EXPECT_EQ(wharf_qp_res_recv_put(res, b), 0);
		EXPECT_EQ(wharf_qp_res_recv_put(res, held.empty() ? nullptr
								  : held[0]),
			  -EINVAL)
			<< "double put";
		held.clear();
	}
	std::vector<void *> held;
	std::atomic<unsigned> got{0};
};

struct SendCtx {
	wharf_wr wr;
	std::atomic<int> status{-1};
};

class Sender : public Peer
{
      public:
	void send_done(wharf_wr *wr) override
	{
		SendCtx *c = wharf_wr_entry(wr, SendCtx, wr, kSendTag);
		ASSERT_NE(c, nullptr);
		c->status = (int)wr->status;
		done++;
	}
	void error(ibv_wc_status) override
	{
		/* Keep the QP for inspection; the test closes it. */
	}
	/* On the shard. */
	void send(unsigned i)
	{
		ibv_sge sge = {(uintptr_t)mr->at(i * 64), 64, mr->mr->lkey};
		wharf_wr_init(&ctx[i].wr, kSendTag);
		EXPECT_EQ(wharf_qp_post_send(qp, &ctx[i].wr, &sge, 1, false, 0),
			  0);
	}
	qpl::Mr *mr = nullptr;
	SendCtx ctx[kDepth + 1];
	std::atomic<unsigned> done{0};
};

struct Rig {
	Env env;
	qpl::Mr mr;
	Sender *s = nullptr;
	Hoarder *h = nullptr;

	void connect(uint8_t rnr_retry)
	{
		wharf_qp_res_opts so{}, co{};
		so.size = co.size = sizeof(so);
		so.srq_depth = kDepth;
		so.recv_reserve = 1;
		so.recv_credits = 8;
		so.srq_limit = 4;
		so.recv_batch = 4;
		so.pool_size = 4;
		co.srq_depth = 64;
		co.recv_credits = 8;
		co.pool_size = 4;
		ASSERT_EQ(env.start(&so, &co), "");
		ASSERT_TRUE(mr.reg(wharf_qp_dev_pd(env.dev), 64 * (kDepth + 1),
				   IBV_ACCESS_LOCAL_WRITE));
		env.server_factory = [rnr_retry](const wcm_conn_param &,
						 unsigned) {
			auto p = std::make_unique<Hoarder>();
			/* REP's rnr_retry_count: the client QP's. */
			p->custom_param = true;
			p->param.rnr_retry_count = rnr_retry;
			/* A short RNR NAK timer (0.01 ms) on the receiver. */
			p->qopts.min_rnr_timer = 1;
			return p;
		};
		auto snd = std::make_unique<Sender>();
		snd->mr = &mr;
		s = snd.get();
		Peer *c = env.add(std::move(snd));
		ASSERT_TRUE(env.connect_all({c}));
		ASSERT_EQ(c->state, qpl::P_ESTABLISHED) << c->cm_err;
		h = static_cast<Hoarder *>(env.server_of(0));
		ASSERT_NE(h, nullptr);
		ASSERT_EQ(h->state, qpl::P_ESTABLISHED);
	}

	/* Fills the SRQ: the server holds every buffer. */
	void drain_srq()
	{
		env.on(kCli, [&] {
			for (unsigned i = 0; i < kDepth; i++)
				s->send(i);
		});
		ASSERT_TRUE(env.pump(
			[&] { return h->got == kDepth && s->done == kDepth; }));
		struct wharf_qp_res_stats st = env.stats(kSrv);
		EXPECT_EQ(st.srq_posted, 0u);
		EXPECT_EQ(st.recv_held, kDepth);
		/* The limit event travels the device's async reader to the
		 * shard on its own path: wait for it (bounded, 10 s). */
		for (int i = 0; i < 1000 && st.srq_limit_events < 1; i++) {
			std::this_thread::sleep_for(
				std::chrono::milliseconds(10));
			st = env.stats(kSrv);
		}
		EXPECT_GE(st.srq_limit_events, 1u) << "SRQ limit event";
	}

	void finish()
	{
		env.on(kSrv, [&] { h->give_back(env.res[kSrv]); });
		mr.reset();
		EXPECT_EQ(env.stop(), "");
	}
};

TEST(QpRnr, RetryCountZeroFailsWhenSrqRunsDry)
{
	WHARF_REQUIRE_GUEST();
	Rig rig;
	rig.connect(0);
	if (HasFatalFailure())
		return;
	rig.drain_srq();
	rig.env.on(kCli, [&] { rig.s->send(kDepth); });
	ASSERT_TRUE(rig.env.pump([&] { return rig.s->done == kDepth + 1; }));
	EXPECT_EQ(rig.s->ctx[kDepth].status, IBV_WC_RNR_RETRY_EXC_ERR);
	EXPECT_EQ(rig.s->errors, 1);
	EXPECT_EQ(rig.s->last_error, IBV_WC_RNR_RETRY_EXC_ERR);
	EXPECT_EQ(rig.h->got, kDepth);
	rig.finish();
}

TEST(QpRnr, RetryCountSevenWaitsUntilBuffersReturn)
{
	WHARF_REQUIRE_GUEST();
	Rig rig;
	rig.connect(7);
	if (HasFatalFailure())
		return;
	rig.drain_srq();
	long long rnr0 = qpl::hw_counter("rcvd_rnr_err");
	ASSERT_GE(rnr0, 0);
	rig.env.on(kCli, [&] { rig.s->send(kDepth); });
	/* Wait until the sender was RNR-NAKed at least twice. */
	ASSERT_TRUE(rig.env.pump(
		[&] { return qpl::hw_counter("rcvd_rnr_err") >= rnr0 + 2; }));
	EXPECT_EQ(rig.s->done, kDepth) << "completed before any buffer";
	EXPECT_EQ(rig.h->got, kDepth);
	rig.env.on(kSrv, [&] { rig.h->give_back(rig.env.res[kSrv]); });
	ASSERT_TRUE(rig.env.pump([&] {
		return rig.s->done == kDepth + 1 && rig.h->got == kDepth + 1;
	}));
	EXPECT_EQ(rig.s->ctx[kDepth].status, IBV_WC_SUCCESS);
	EXPECT_EQ(rig.s->errors, 0);
	struct wharf_qp_res_stats st = rig.env.stats(kSrv);
	EXPECT_EQ(st.recv_held, 1u);
	rig.finish();
}

} // namespace
