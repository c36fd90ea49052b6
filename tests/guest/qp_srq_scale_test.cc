/*
 * 256 connections whose server ends share one SRQ (and whose client ends
 * share another) exchange 100 messages each: SEND and SEND with immediate,
 * echoed back by the server; in event mode (CQ channel + arm before sleep)
 * and, with 32 connections, in busy-polling mode; and on SRQs that grow
 * from 64 buffers as the connections need (srq_max).  Pins: every message arrives once, intact, on
 * the right QP (completion demux by wc.qp_num), the SRQ's registered
 * receive memory does not grow with the connections, the CQ budget covers
 * SRQ + send queues, and the typed WR contexts come back with their tag.
 * Small sends go inline (max_inline_data).
 */
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "tests/guest/guest_env.h"
#include "tests/guest/qp_loopback.h"

namespace
{

using qpl::Env;
using qpl::kCli;
using qpl::kSrv;
using qpl::Peer;

constexpr unsigned kMsgs = 100;
constexpr uint32_t kMsgSize = 64;
constexpr uint32_t kPingTag = 0x50494e47; /* 'PING' */
constexpr uint32_t kEchoTag = 0x4543484f; /* 'ECHO' */
constexpr unsigned kEchoSlots = 4;

struct Msg {
	uint32_t conn;
	uint32_t seq;
	uint8_t fill[kMsgSize - 8];
};

void fill(Msg *m, uint32_t conn, uint32_t seq)
{
	m->conn = conn;
	m->seq = seq;
	for (unsigned i = 0; i < sizeof(m->fill); i++)
		m->fill[i] = (uint8_t)(conn * 31 + seq * 7 + i);
}

bool check(const Msg *m, uint32_t conn, uint32_t seq)
{
	Msg want;
	fill(&want, conn, seq);
	return memcmp(m, &want, sizeof(want)) == 0;
}

struct SendCtx {
	uint64_t pad; /* the wharf_wr is not at offset 0 */
	wharf_wr wr;
	bool busy;
	uint32_t slot;
};

/* Server end: echoes every message back, with its immediate data. */
class Echo : public Peer
{
      public:
	int recv(void *buf, const wharf_qp_recv &rx) override
	{
		SendCtx *c = nullptr;
		for (auto &s : slots)
			if (!s.busy)
				c = &s;
		if (!c || rx.len != kMsgSize) {
			bad++;
			return 0;
		}
		char *dst = mr->at(base + c->slot * kMsgSize);
		memcpy(dst, buf, kMsgSize);
		ibv_sge sge = {(uintptr_t)dst, kMsgSize, mr->mr->lkey};
		wharf_wr_init(&c->wr, kEchoTag);
		c->busy = true;
		bool imm = rx.flags & WHARF_QP_RECV_IMM;
		if (wharf_qp_post_send(qp, &c->wr, &sge, 1, imm, rx.imm)) {
			c->busy = false;
			bad++;
		}
		return 0;
	}
	void send_done(wharf_wr *wr) override
	{
		SendCtx *c = wharf_wr_entry(wr, SendCtx, wr, kEchoTag);
		if (!c || wr->status != IBV_WC_SUCCESS) {
			bad++;
			return;
		}
		c->busy = false;
		echoed++;
	}
	qpl::Mr *mr = nullptr;
	size_t base = 0;
	SendCtx slots[kEchoSlots] = {};
	std::atomic<unsigned> echoed{0};
	std::atomic<unsigned> bad{0};
};

/* Client end: sends message n+1 once message n is acked and echoed. */
class Pinger : public Peer
{
      public:
	void start()
	{
		for (unsigned i = 0; i < kEchoSlots; i++)
			srv_slots_unused[i] = 0;
		send_next();
	}
	void send_next()
	{
		Msg *m = (Msg *)mr->at(base);
		fill(m, index, seq);
		ibv_sge sge = {(uintptr_t)m, kMsgSize, mr->mr->lkey};
		wharf_wr_init(&ctx.wr, kPingTag);
		sent = false;
		echoed = false;
		bool imm = seq % 2;
		if (wharf_qp_post_send(qp, &ctx.wr, &sge, 1, imm, seq * 3 + 1))
			bad++;
	}
	void maybe_next()
	{
		if (!sent || !echoed)
			return;
		if (++seq == kMsgs) {
			done = true;
			return;
		}
		send_next();
	}
	int recv(void *buf, const wharf_qp_recv &rx) override
	{
		bool imm = rx.flags & WHARF_QP_RECV_IMM;
		if (rx.len != kMsgSize || !check((Msg *)buf, index, seq) ||
		    imm != (seq % 2 == 1) || (imm && rx.imm != seq * 3 + 1))
			bad++;
		got++;
		echoed = true;
		maybe_next();
		return 0;
	}
	void send_done(wharf_wr *wr) override
	{
		SendCtx *c = wharf_wr_entry(wr, SendCtx, wr, kPingTag);
		if (!c || c != &ctx || wr->status != IBV_WC_SUCCESS) {
			bad++;
			return;
		}
		sent = true;
		maybe_next();
	}
	qpl::Mr *mr = nullptr;
	size_t base = 0;
	SendCtx ctx = {};
	uint32_t seq = 0;
	bool sent = false, echoed = false;
	unsigned srv_slots_unused[kEchoSlots] = {};
	std::atomic<unsigned> got{0};
	std::atomic<unsigned> bad{0};
	std::atomic<bool> done{false};
};

/*
 * @srq_max above @srq_depth: the SRQs start small and grow, a chunk of
 * @srq_depth buffers at a time, as the connections' credits need.
 */
void exchange(wharf_poll_mode mode, unsigned nconns, uint32_t srq_depth = 1024,
	      uint32_t srq_max = 0, uint32_t credits = 2)
{
	Env env;
	wharf_qp_res_opts o{};
	o.size = sizeof(o);
	o.srq_depth = srq_depth;
	o.srq_max = srq_max;
	o.recv_credits = credits;
	o.sq_depth = 4;
	o.pool_size = 64;
	ASSERT_EQ(env.start(&o, &o, mode), "");

	qpl::Mr smr, cmr;
	ASSERT_TRUE(smr.reg(wharf_qp_dev_pd(env.dev),
			    nconns * kEchoSlots * kMsgSize,
			    IBV_ACCESS_LOCAL_WRITE));
	ASSERT_TRUE(cmr.reg(wharf_qp_dev_pd(env.dev), nconns * kMsgSize,
			    IBV_ACCESS_LOCAL_WRITE));
	env.server_factory = [&](const wcm_conn_param &, unsigned idx) {
		auto e = std::make_unique<Echo>();
		e->mr = &smr;
		e->base = (size_t)(idx % nconns) * kEchoSlots * kMsgSize;
		for (unsigned i = 0; i < kEchoSlots; i++)
			e->slots[i].slot = i;
		return e;
	};
	std::vector<Peer *> clients;
	std::vector<Pinger *> pingers;
	for (unsigned i = 0; i < nconns; i++) {
		auto p = std::make_unique<Pinger>();
		p->index = i;
		p->mr = &cmr;
		p->base = (size_t)i * kMsgSize;
		pingers.push_back(p.get());
		clients.push_back(env.add(std::move(p)));
	}
	auto t0 = std::chrono::steady_clock::now();
	ASSERT_TRUE(env.connect_all(clients));
	auto t1 = std::chrono::steady_clock::now();
	for (Peer *p : clients) {
		ASSERT_EQ(p->state, qpl::P_ESTABLISHED)
			<< "client " << p->index << " err " << p->cm_err
			<< " rej " << p->reject_status;
		ASSERT_NE(env.server_of(p->index), nullptr);
		ASSERT_EQ(env.server_of(p->index)->state, qpl::P_ESTABLISHED);
		EXPECT_TRUE(wharf_qp_uses_srq(p->qp));
	}

	/* The buffers the credits need, in whole chunks (reserve 1/16). */
	uint32_t need = nconns * credits + srq_depth / 16, depth = srq_depth;
	while (depth < need)
		depth += srq_depth;
	struct wharf_qp_res_stats ss = env.stats(kSrv), cs = env.stats(kCli);
	EXPECT_EQ(ss.qps_active, nconns);
	EXPECT_EQ(cs.qps_active, nconns);
	EXPECT_EQ(ss.srq_depth, depth);
	EXPECT_EQ(ss.srq_grows, (depth - srq_depth) / srq_depth);
	/* Receive memory: the SRQ's buffers, whatever the connections. */
	EXPECT_EQ(ss.recv_bytes, depth * WHARF_QP_DEFAULT_RECV_SIZE);
	EXPECT_EQ(cs.recv_bytes, depth * WHARF_QP_DEFAULT_RECV_SIZE);
	EXPECT_EQ(ss.cq_reserved, depth + nconns * 4);
	EXPECT_GE(ss.cq_size, ss.cq_reserved);
	EXPECT_EQ(ss.admitted_credits, nconns * credits);

	for (Pinger *p : pingers)
		env.on(kCli, [p] { p->start(); });
	/*
	 * Wait for the server's send completions too: a client can see its
	 * echo before the server's shard has reaped the completion of the
	 * SEND that carried it (the ACK comes later).
	 */
	ASSERT_TRUE(env.pump([&] {
		for (Pinger *p : pingers) {
			if (p->bad || p->errors)
				continue;
			if (!p->done)
				return false;
			Echo *e = static_cast<Echo *>(env.server_of(p->index));
			if (!e->bad && e->echoed.load() < kMsgs)
				return false;
		}
		return true;
	}));
	auto t2 = std::chrono::steady_clock::now();
	unsigned echoed = 0;
	for (Pinger *p : pingers) {
		EXPECT_TRUE(p->done) << p->index;
		EXPECT_EQ(p->got, kMsgs) << p->index;
		EXPECT_EQ(p->bad, 0u) << p->index;
		EXPECT_EQ(p->errors, 0) << p->index;
		Echo *e = static_cast<Echo *>(env.server_of(p->index));
		EXPECT_EQ(e->bad, 0u) << p->index;
		EXPECT_EQ(e->errors, 0) << p->index;
		echoed += e->echoed;
	}
	EXPECT_EQ(echoed, nconns * kMsgs);
	ss = env.stats(kSrv);
	EXPECT_EQ(ss.recv_bytes, depth * WHARF_QP_DEFAULT_RECV_SIZE);
	EXPECT_EQ(ss.wc_errors, 0u);
	EXPECT_GE(ss.completions, 2ull * nconns * kMsgs);
	EXPECT_LE(ss.post_calls, ss.wrs_posted);
	fprintf(stderr,
		"connect %d conns: %lld ms; %u round trips: %lld ms; "
		"server post calls %llu for %llu WRs, srq posts %llu\n",
		(int)nconns,
		(long long)
			std::chrono::duration_cast<std::chrono::milliseconds>(
				t1 - t0)
				.count(),
		nconns * kMsgs,
		(long long)
			std::chrono::duration_cast<std::chrono::milliseconds>(
				t2 - t1)
				.count(),
		(unsigned long long)ss.post_calls,
		(unsigned long long)ss.wrs_posted,
		(unsigned long long)ss.srq_post_calls);

	ASSERT_TRUE(env.disconnect_all(clients, false));
	smr.reset();
	cmr.reset();
	EXPECT_EQ(env.stop(), "");
}

TEST(QpSrqScale, TwoHundredFiftySixConnectionsHundredMessagesEach)
{
	WHARF_REQUIRE_GUEST();
	exchange(WHARF_POLL_EVENT, 256);
}

/* 64 connections of 8 credits on SRQs that start with 64 buffers: each
 * grows to 576 (8 more chunks), and every message still arrives intact
 * in buffers of every chunk. */
TEST(QpSrqScale, SrqGrowsInChunksAsConnectionsNeedAndCarriesTheExchange)
{
	WHARF_REQUIRE_GUEST();
	exchange(WHARF_POLL_EVENT, 64, 64, 1024, 8);
}

class Counter : public Peer
{
      public:
	int recv(void *, const wharf_qp_recv &) override
	{
		got++;
		return 0;
	}
	void send_done(wharf_wr *wr) override
	{
		done += wr->status == IBV_WC_SUCCESS;
		finished++;
	}
	std::atomic<unsigned> got{0}, done{0}, finished{0};
};

/* One connection's worth of SRQ, credits and send queue. */
wharf_qp_res_opts small_res()
{
	wharf_qp_res_opts o{};
	o.size = sizeof(o);
	o.srq_depth = 64;
	o.recv_credits = 16;
	o.sq_depth = 16;
	o.pool_size = 2;
	return o;
}

/* A Counter client connected to env.server_factory's peer, or nullptr. */
Counter *connect_one(Env &env)
{
	auto p = std::make_unique<Counter>();
	Counter *c = p.get();
	env.add(std::move(p));
	if (!env.connect_all({c}) || c->state != qpl::P_ESTABLISHED)
		return nullptr;
	return c;
}

/* WRs posted during one loop iteration leave in one ibv_post_send(). */
TEST(QpSrqScale, PostsOfOneIterationShareOnePostCall)
{
	WHARF_REQUIRE_GUEST();
	Env env;
	wharf_qp_res_opts o = small_res();
	ASSERT_EQ(env.start(&o, &o), "");
	qpl::Mr mr;
	ASSERT_TRUE(mr.reg(wharf_qp_dev_pd(env.dev), 16 * kMsgSize,
			   IBV_ACCESS_LOCAL_WRITE));
	env.server_factory = [](const wcm_conn_param &, unsigned) {
		return std::make_unique<Counter>();
	};
	Counter *c = connect_one(env);
	ASSERT_NE(c, nullptr);
	Counter *s = static_cast<Counter *>(env.server_of(0));
	struct wharf_qp_res_stats a = env.stats(kCli);
	SendCtx ctx[12];
	env.on(kCli, [&] {
		for (unsigned i = 0; i < 12; i++) {
			ibv_sge sge = {(uintptr_t)mr.at(i * kMsgSize), kMsgSize,
				       mr.mr->lkey};
			wharf_wr_init(&ctx[i].wr, kPingTag);
			ASSERT_EQ(wharf_qp_post_send(c->qp, &ctx[i].wr, &sge, 1,
						     false, 0),
				  0);
		}
	});
	ASSERT_TRUE(env.pump([&] { return c->done == 12 && s->got == 12; }));
	struct wharf_qp_res_stats b = env.stats(kCli);
	EXPECT_EQ(b.wrs_posted - a.wrs_posted, 12u);
	EXPECT_EQ(b.post_calls - a.post_calls, 1u);
	ASSERT_TRUE(env.disconnect_all({c}, false));
	mr.reset();
	EXPECT_EQ(env.stop(), "");
}

/* Keeps what arrives, in order. */
class Collector : public Peer
{
      public:
	int recv(void *buf, const wharf_qp_recv &rx) override
	{
		std::lock_guard<std::mutex> g(lock);
		msgs.emplace_back((const char *)buf, rx.len);
		got++;
		return 0;
	}
	std::mutex lock;
	std::vector<std::string> msgs;
	std::atomic<unsigned> got{0};
};

/*
 * Sends of at most max_inline_data bytes go inline: from memory no MR
 * covers (lkey 0, which the device would refuse to read) they arrive
 * intact; a larger one still reads its registered buffer.
 */
TEST(QpSrqScale, SmallSendsGoInline)
{
	WHARF_REQUIRE_GUEST();
	Env env;
	wharf_qp_res_opts o = small_res(), co = small_res();
	co.max_inline_data = 64;
	ASSERT_EQ(env.start(&o, &co), "");
	qpl::Mr mr;
	ASSERT_TRUE(mr.reg(wharf_qp_dev_pd(env.dev), 4 * kMsgSize,
			   IBV_ACCESS_LOCAL_WRITE));
	env.server_factory = [](const wcm_conn_param &, unsigned) {
		return std::make_unique<Collector>();
	};
	Counter *c = connect_one(env);
	ASSERT_NE(c, nullptr);
	Collector *s = static_cast<Collector *>(env.server_of(0));

	std::string plain16(16, 'a'), plain48(48, 'b');
	std::string reg64(64, 'c'), reg100(100, 'd');
	memcpy(mr.at(0), reg64.data(), reg64.size());
	memcpy(mr.at(kMsgSize), reg100.data(), reg100.size());
	struct wharf_qp_res_stats a = env.stats(kCli);
	SendCtx ctx[4];
	env.on(kCli, [&] {
		ibv_sge sg[4] = {
			{(uintptr_t)plain16.data(), 16, 0},
			{(uintptr_t)plain48.data(), 48, 0},
			{(uintptr_t)mr.at(0), 64, mr.mr->lkey},
			{(uintptr_t)mr.at(kMsgSize), 100, mr.mr->lkey},
		};
		for (unsigned i = 0; i < 4; i++) {
			wharf_wr_init(&ctx[i].wr, kPingTag);
			ASSERT_EQ(wharf_qp_post_send(c->qp, &ctx[i].wr, &sg[i],
						     1, false, 0),
				  0);
		}
	});
	/* A refused lkey would end the connection: wait for the sender. */
	ASSERT_TRUE(env.pump([&] { return c->finished == 4; }));
	EXPECT_EQ(c->done, 4u);
	ASSERT_TRUE(env.pump([&] { return s->got == 4; }));
	struct wharf_qp_res_stats b = env.stats(kCli);
	EXPECT_EQ(b.wrs_posted - a.wrs_posted, 4u);
	EXPECT_EQ(b.wrs_inline - a.wrs_inline, 3u);
	EXPECT_EQ(b.wc_errors, 0u);
	{
		std::lock_guard<std::mutex> g(s->lock);
		ASSERT_EQ(s->msgs.size(), 4u);
		EXPECT_EQ(s->msgs[0], plain16);
		EXPECT_EQ(s->msgs[1], plain48);
		EXPECT_EQ(s->msgs[2], reg64);
		EXPECT_EQ(s->msgs[3], reg100);
	}
	ASSERT_TRUE(env.disconnect_all({c}, false));
	mr.reset();
	EXPECT_EQ(env.stop(), "");
}

/* The CQ driven by the poller alone: shards never sleep, never arm. */
TEST(QpSrqScale, BusyPollingShards)
{
	WHARF_REQUIRE_GUEST();
	exchange(WHARF_POLL_BUSY, 32);
}

} // namespace
