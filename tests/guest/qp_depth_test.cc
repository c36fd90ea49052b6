/*
 * Depth tuning on a real QP: the negotiated RDMA read/atomic depths become
 * max_rd_atomic / max_dest_rd_atomic (read back with ibv_query_qp), the
 * passive side's RTR override beats the peer's unclamped value that
 * rdma_init_qp_attr() carries, role presets from cm/conn_param.h apply,
 * and RDMA READs beyond the initiator depth wait in the library.
 */
#include <cstring>

#include "tests/guest/guest_env.h"
#include "tests/guest/qp_loopback.h"

namespace
{

using qpl::Env;
using qpl::kCli;
using qpl::kSrv;
using qpl::Peer;

constexpr uint32_t kReadTag = 0x52454144; /* 'READ' */
constexpr unsigned kReads = 10;
constexpr uint32_t kChunk = 4096;

struct ReadCtx {
	wharf_wr wr;
	unsigned n;
};

/* Issues RDMA READs and records their completion order. */
class Reader : public Peer
{
      public:
	void send_done(wharf_wr *wr) override
	{
		ReadCtx *c = wharf_wr_entry(wr, ReadCtx, wr, kReadTag);
		if (!c || wr->status != IBV_WC_SUCCESS) {
			bad++;
			return;
		}
		order.push_back(c->n);
		done++;
	}
	ReadCtx ctx[kReads] = {};
	std::vector<unsigned> order;
	std::atomic<unsigned> done{0};
	std::atomic<unsigned> bad{0};
};

ibv_qp_attr query(Env &env, Peer *p)
{
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};
	env.on(p->side, [&] {
		EXPECT_EQ(ibv_query_qp(wharf_qp_ibv(p->qp), &a,
				       IBV_QP_MAX_QP_RD_ATOMIC |
					       IBV_QP_MAX_DEST_RD_ATOMIC |
					       IBV_QP_STATE,
				       &ia),
			  0);
	});
	return a;
}

wharf_qp_res_opts small()
{
	wharf_qp_res_opts o{};
	o.size = sizeof(o);
	o.srq_depth = 256;
	o.recv_credits = 8;
	o.pool_size = 8;
	return o;
}

/* Posts kReads READs of @src on @r in one go; returns (posted, waited). */
std::pair<uint64_t, uint64_t> post_reads(Env &env, Reader *r, qpl::Mr &dst,
					 const qpl::Mr &src)
{
	std::pair<uint64_t, uint64_t> got;
	env.on(r->side, [&] {
		struct wharf_qp_res_stats a {
		}, b{};
		a.size = b.size = sizeof(a);
		wharf_qp_res *res = env.res[r->side];
		wharf_qp_res_stats(res, &a);
		for (unsigned i = 0; i < kReads; i++) {
			ibv_sge sge = {(uintptr_t)dst.at(i * kChunk), kChunk,
				       dst.mr->lkey};
			wharf_wr_init(&r->ctx[i].wr, kReadTag);
			r->ctx[i].n = i;
			EXPECT_EQ(wharf_qp_post_read(
					  r->qp, &r->ctx[i].wr, &sge, 1,
					  (uintptr_t)src.at(i * kChunk),
					  src.mr->rkey),
				  0);
		}
		/* Nothing can complete between these lines: same thread. */
		EXPECT_GE(wharf_qp_res_flush(res), 1);
		wharf_qp_res_stats(res, &b);
		got = {b.wrs_posted - a.wrs_posted,
		       b.wrs_waited_rd - a.wrs_waited_rd};
	});
	return got;
}

TEST(QpDepth, PassiveOverrideReadBackAndReadsQueuedBeyondDepth)
{
	WHARF_REQUIRE_GUEST();
	Env env;
	wharf_qp_res_opts o = small();
	ASSERT_EQ(env.start(&o, &o), "");
	qpl::Mr src, dst;
	ibv_pd *pd = wharf_qp_dev_pd(env.dev);
	ASSERT_TRUE(src.reg(pd, kReads * kChunk,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	ASSERT_TRUE(dst.reg(pd, kReads * kChunk, IBV_ACCESS_LOCAL_WRITE));
	for (size_t i = 0; i < src.len; i++)
		*src.at(i) = (char)(i * 13 + 5);

	/*
	 * The client asks for initiator depth 8; the server grants only 2
	 * responder resources.  The kernel's RTR attributes on the server
	 * carry the 8 (the peer's request, unclamped) until overridden.
	 */
	env.server_factory = [](const wcm_conn_param &req, unsigned) {
		EXPECT_EQ(req.responder_resources, 8);
		auto p = std::make_unique<Peer>();
		p->custom_param = true;
		p->param.responder_resources = 2;
		p->param.initiator_depth = 0;
		p->param.rnr_retry_count = 7;
		return p;
	};
	auto rd = std::make_unique<Reader>();
	Reader *r = rd.get();
	r->custom_param = true;
	r->param.responder_resources = 0;
	r->param.initiator_depth = 8;
	r->param.retry_count = 7;
	r->param.rnr_retry_count = 7;
	Peer *c = env.add(std::move(rd));
	ASSERT_TRUE(env.connect_all({c}));
	ASSERT_EQ(c->state, qpl::P_ESTABLISHED) << c->cm_err;
	Peer *s = env.server_of(0);
	ASSERT_NE(s, nullptr);
	ASSERT_EQ(s->state, qpl::P_ESTABLISHED);
	EXPECT_EQ(s->resp, 2);
	EXPECT_EQ(c->init, 2);

	ibv_qp_attr sa = query(env, s), ca = query(env, c);
	EXPECT_EQ(sa.qp_state, IBV_QPS_RTS);
	EXPECT_EQ(sa.max_dest_rd_atomic, 2) << "peer's 8 leaked through";
	EXPECT_EQ(sa.max_rd_atomic, 0);
	EXPECT_EQ(ca.max_rd_atomic, 2);
	EXPECT_EQ(ca.max_dest_rd_atomic, 0);

	auto pw = post_reads(env, r, dst, src);
	EXPECT_EQ(pw.first, 2u) << "only the initiator depth is posted";
	EXPECT_EQ(pw.second, kReads - 2);
	ASSERT_TRUE(env.pump([&] { return r->done + r->bad == kReads; }));
	EXPECT_EQ(r->bad, 0u);
	EXPECT_EQ(memcmp(src.buf, dst.buf, src.len), 0);
	for (unsigned i = 0; i < r->order.size(); i++)
		EXPECT_EQ(r->order[i], i) << "FIFO order";

	ASSERT_TRUE(env.disconnect_all({c}, false));
	src.reset();
	dst.reset();
	EXPECT_EQ(env.stop(), "");
}

TEST(QpDepth, TargetAndHostPresets)
{
	WHARF_REQUIRE_GUEST();
	Env env;
	wharf_qp_res_opts o = small();
	ASSERT_EQ(env.start(&o, &o), "");
	const uint8_t dev_resp = (uint8_t)env.attr()->max_qp_rd_atom;
	qpl::Mr host_mem, tgt_mem;
	ibv_pd *pd = wharf_qp_dev_pd(env.dev);
	ASSERT_TRUE(
		host_mem.reg(pd, kReads * kChunk,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	ASSERT_TRUE(tgt_mem.reg(pd, kReads * kChunk, IBV_ACCESS_LOCAL_WRITE));
	for (size_t i = 0; i < host_mem.len; i++)
		*host_mem.at(i) = (char)(i * 3 + 1);

	/* The server is an NVMe-oF-like target: it READs from the host. */
	env.server_factory = [](const wcm_conn_param &, unsigned) {
		auto p = std::make_unique<Reader>();
		p->role = WCM_ROLE_TARGET;
		p->queue_depth = 4;
		return p;
	};
	auto host = std::make_unique<Peer>();
	host->role = WCM_ROLE_HOST;
	host->param.retry_count = 7;
	host->param.rnr_retry_count = 7;
	Peer *c = env.add(std::move(host));
	ASSERT_TRUE(env.connect_all({c}));
	ASSERT_EQ(c->state, qpl::P_ESTABLISHED) << c->cm_err;
	Reader *t = static_cast<Reader *>(env.server_of(0));
	ASSERT_NE(t, nullptr);
	/* target: responder 0, initiator min(4, dev, host's responder). */
	EXPECT_EQ(t->resp, 0);
	EXPECT_EQ(t->init, 4);
	ibv_qp_attr ta = query(env, t), ha = query(env, c);
	EXPECT_EQ(ta.max_rd_atomic, 4);
	EXPECT_EQ(ta.max_dest_rd_atomic, 0);
	/* host: serves the target's 4, issues none. */
	EXPECT_EQ(ha.max_dest_rd_atomic, 4);
	EXPECT_EQ(ha.max_rd_atomic, 0);
	EXPECT_GE(dev_resp, 4);

	auto pw = post_reads(env, t, tgt_mem, host_mem);
	EXPECT_EQ(pw.first, 4u);
	EXPECT_EQ(pw.second, kReads - 4);
	ASSERT_TRUE(env.pump([&] { return t->done + t->bad == kReads; }));
	EXPECT_EQ(t->bad, 0u);
	EXPECT_EQ(memcmp(host_mem.buf, tgt_mem.buf, host_mem.len), 0);

	/* The host negotiated initiator depth 0: READs are refused. */
	env.on(kCli, [&] {
		ReadCtx rc{};
		ibv_sge sge = {(uintptr_t)host_mem.buf, 8, host_mem.mr->lkey};
		wharf_wr_init(&rc.wr, kReadTag);
		EXPECT_EQ(wharf_qp_post_read(c->qp, &rc.wr, &sge, 1,
					     (uintptr_t)tgt_mem.buf, 0),
			  -EOPNOTSUPP);
	});
	ASSERT_TRUE(env.disconnect_all({c}, false));
	host_mem.reset();
	tgt_mem.reset();
	EXPECT_EQ(env.stop(), "");
}

} // namespace
