// Storm control and retries on real rdma_cm: requests beyond the per-shard
// handshake cap deferred (arrival order, the deferral's bound and its
// refusal private data, a peer that gives up meanwhile) or, for a
// REJECT_BUSY listener, answered with a busy REJ (reason and retry-after
// in the private data), wharf_connect() honouring the hint with jittered
// backoff, the receive budget, and the stale-connection REJ (reason 10)
// retried with backoff.
#include <chrono>
#include <thread>

#include "tests/guest/cm_guest_util.h"

using namespace wharf_cm_test;

namespace
{

constexpr uint32_t kRetryAfterMs = 300;

class CmStorm : public CmGuest
{
      protected:
	void EditCmOpts(wharf_cm_opts &o) override
	{
		o.handshake_cap = 1;
		o.busy_retry_after_ms = kRetryAfterMs;
	}
};

struct Picks {
	std::mutex lock;
	std::vector<std::pair<char, Clock::time_point>> seen;
};

// Records which client (first private-data byte) asked, and when; runs on
// the listener's shard for every request, before the cap check.
int RecordPick(const wharf_conn_request *req, const wharf_cm_shard_load *,
	       unsigned, void *arg)
{
	Picks *p = static_cast<Picks *>(arg);
	std::lock_guard<std::mutex> g(p->lock);
	char tag = req->private_data_len ? ((const char *)req->private_data)[0]
					 : '?';
	p->seen.emplace_back(tag, Clock::now());
	return 0; // every passive connection on shard 0: one cap
}

wharf_conn_param Tagged(const char *tag)
{
	wharf_conn_param p = {};
	p.size = sizeof(p);
	p.private_data = tag;
	p.private_data_len = 1;
	return p;
}

TEST_F(CmStorm, HandshakeCapRejectsBusyAndConnectHonoursRetryAfter)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	Picks &picks = *Keep(new Picks);
	srv.on_request = [](wharf_conn *c, const wharf_conn_request *q) {
		// 'A' is decided later: it holds the shard's only slot.
		if (((const char *)q->private_data)[0] != 'A') {
			EXPECT_EQ(0, wharf_accept(c, nullptr));
		}
	};
	wharf_listener *l = nullptr;
	uint16_t port = Listen(
		&srv,
		[&picks](wharf_listen_opts &o) {
			o.overload = WHARF_OVERLOAD_REJECT_BUSY;
			o.pick_shard = RecordPick;
			o.pick_arg = &picks;
		},
		&l);
	wharf_conn_param pa = Tagged("A"), pb = Tagged("B"), pc = Tagged("C");
	uint64_t a = Connect(&cli, port, &pa);
	ASSERT_TRUE(srv.WaitCount(Ev::Request, 1));
	uint64_t c = Connect(&cli, port, &pc); // gives up at the busy REJ
	uint64_t b = Connect(&cli, port, &pb, [](wharf_connect_opts &o) {
		o.busy_retry = true;
	});
	ASSERT_TRUE(cli.WaitCount(Ev::Rejected, 1, c)) << cli.Dump();
	Rec rej = cli.First(Ev::Rejected, c);
	EXPECT_EQ(28, rej.rej.reason);
	EXPECT_TRUE(rej.rej.busy);
	EXPECT_EQ(1, rej.rej.busy_reason); // the handshake cap
	EXPECT_EQ(kRetryAfterMs, rej.rej.retry_after_ms);
	ASSERT_EQ(148u, rej.data.size()); // the REJ field, padded
	EXPECT_EQ(0, memcmp(rej.data.data(), "WHRF", 4));
	// B was refused too, and retries; let A through now.
	ASSERT_TRUE(Poll([&] { return ListenerStats(l).rejected_busy >= 2; }));
	uint64_t pa_id = srv.First(Ev::Request).id;
	OnConn(cm_, pa_id,
	       [](wharf_conn *x) { EXPECT_EQ(0, wharf_accept(x, nullptr)); });
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, a)) << cli.Dump();
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, b)) << cli.Dump();
	// B asked at least twice; never again before the retry-after.
	std::vector<Clock::time_point> bt;
	{
		std::lock_guard<std::mutex> g(picks.lock);
		for (auto &s : picks.seen)
			if (s.first == 'B')
				bt.push_back(s.second);
	}
	ASSERT_GE(bt.size(), 2u);
	for (size_t i = 1; i < bt.size(); i++)
		EXPECT_GE(bt[i] - bt[i - 1],
			  std::chrono::milliseconds(kRetryAfterMs));
	struct wharf_cm_stats s = CmStats(cm_);
	EXPECT_GE(s.busy_retried, 1u);
	EXPECT_EQ(1u, s.rejected_by_peer); // C
	struct wharf_cm_stats ls = ListenerStats(l);
	EXPECT_EQ(ls.requests - ls.rejected_busy, srv.Count(Ev::Request));
	for (uint64_t id : {a, b, c})
		Destroy(id);
	for (const Rec &r : srv.All())
		if (r.ev == Ev::Request) {
			Destroy(r.id);
		}
	s = CmStats(cm_);
	EXPECT_EQ(s.requests + s.connects, Finals(s));
}

// --- the DEFER policy (the default) --------------------------------------

// Waits until the listener's shard has seen @n requests (picks), so that
// the next connect arrives after them.
bool WaitPicks(Picks &p, size_t n)
{
	return Poll([&] {
		std::lock_guard<std::mutex> g(p.lock);
		return p.seen.size() >= n;
	});
}

// A refusal callback that writes "NOPE" and the reason.
size_t Nope(const wharf_conn_request *req, enum wharf_refusal why, void *buf,
	    size_t max, void *)
{
	EXPECT_NE(nullptr, req); // read before the refusal
	EXPECT_GE(max, 5u);
	memcpy(buf, "NOPE", 4);
	((uint8_t *)buf)[4] = (uint8_t)why;
	return 5;
}

TEST_F(CmStorm, RequestsBeyondTheCapWaitAndArePresentedInArrivalOrder)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	Picks &picks = *Keep(new Picks);
	srv.on_request = [](wharf_conn *c, const wharf_conn_request *q) {
		if (((const char *)q->private_data)[0] != 'A') {
			EXPECT_EQ(0, wharf_accept(c, nullptr));
		}
	};
	wharf_listener *l = nullptr;
	uint16_t port = Listen(
		&srv,
		[&picks](wharf_listen_opts &o) {
			o.pick_shard = RecordPick;
			o.pick_arg = &picks;
		},
		&l);
	wharf_conn_param pa = Tagged("A"), pb = Tagged("B"), pc = Tagged("C"),
			 pd = Tagged("D");
	uint64_t a = Connect(&cli, port, &pa);
	ASSERT_TRUE(srv.WaitCount(Ev::Request, 1));
	// B, C and D arrive in that order while A holds the only slot.
	std::vector<uint64_t> ids;
	const wharf_conn_param *ps[] = {&pb, &pc, &pd};
	for (size_t i = 0; i < 3; i++) {
		ids.push_back(Connect(&cli, port, ps[i]));
		ASSERT_TRUE(WaitPicks(picks, i + 2));
	}
	ASSERT_TRUE(Poll([&] { return ListenerStats(l).deferred == 3; }))
		<< "deferred " << ListenerStats(l).deferred;
	EXPECT_EQ(1u, srv.Count(Ev::Request)); // only A was shown
	EXPECT_EQ(3u, CmStats(cm_).deferred);
	EXPECT_EQ(0u, cli.Count(Ev::Rejected));
	OnConn(cm_, srv.First(Ev::Request).id,
	       [](wharf_conn *x) { EXPECT_EQ(0, wharf_accept(x, nullptr)); });
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 4)) << cli.Dump();
	std::string order;
	for (const Rec &r : srv.All())
		if (r.ev == Ev::Request)
			order += (char)r.data.at(0);
	EXPECT_EQ("ABCD", order);
	// The server counts its side once established there: the client may
	// see its event first.
	EXPECT_TRUE(
		Poll([&] { return ListenerStats(l).deferred_accepted == 3; }));
	struct wharf_cm_stats ls = ListenerStats(l);
	EXPECT_EQ(3u, ls.deferred_total);
	EXPECT_EQ(3u, ls.deferred_accepted);
	EXPECT_EQ(0u, ls.deferred);
	EXPECT_EQ(0u, ls.rejected_busy + ls.deferred_timed_out);
	EXPECT_EQ(0u, cli.Count(Ev::Rejected) + cli.Count(Ev::Error));
	ids.push_back(a);
	for (uint64_t id : ids)
		Destroy(id);
	for (const Rec &r : srv.All())
		if (r.ev == Ev::Request)
			Destroy(r.id);
	ASSERT_TRUE(Poll([&] {
		struct wharf_cm_stats s = CmStats(cm_);
		return s.requests + s.connects == Finals(s);
	}));
}

TEST_F(CmStorm, DeferralPastItsLimitIsRefusedWithTheListenersPrivateData)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	srv.on_request = [](wharf_conn *, const wharf_conn_request *) {
	}; // A holds the slot
	wharf_listener *l = nullptr;
	uint16_t port = Listen(
		&srv,
		[](wharf_listen_opts &o) {
			o.defer_max_ms = 300;
			o.refusal = Nope;
		},
		&l);
	uint64_t a = Connect(&cli, port);
	ASSERT_TRUE(srv.WaitCount(Ev::Request, 1));
	Clock::time_point t0 = Clock::now();
	uint64_t b = Connect(&cli, port);
	ASSERT_TRUE(cli.WaitCount(Ev::Rejected, 1, b)) << cli.Dump();
	Rec rej = cli.First(Ev::Rejected, b);
	EXPECT_GE(rej.t - t0, std::chrono::milliseconds(300));
	EXPECT_EQ(28, rej.rej.reason);
	EXPECT_FALSE(rej.rej.busy); // the listener's bytes, not wharf's
	ASSERT_GE(rej.data.size(), 5u);
	EXPECT_EQ(0, memcmp(rej.data.data(), "NOPE", 4));
	EXPECT_EQ(WHARF_REFUSAL_DEFER_TIMEOUT, rej.data[4]);
	ASSERT_TRUE(
		Poll([&] { return ListenerStats(l).deferred_timed_out == 1; }));
	struct wharf_cm_stats ls = ListenerStats(l);
	EXPECT_EQ(1u, ls.deferred_total);
	EXPECT_EQ(0u, ls.deferred);
	EXPECT_EQ(1u, srv.Count(Ev::Request)); // B was never shown
	Destroy(a);
	Destroy(b);
	Destroy(srv.First(Ev::Request).id);
	ASSERT_TRUE(Poll([&] {
		struct wharf_cm_stats s = CmStats(cm_);
		return s.requests + s.connects == Finals(s) && !s.handshakes;
	}));
}

TEST_F(CmStorm, DeferMaxBoundsTheWaitAndTheDefaultRefusalIsAPlainRej)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	Picks &picks = *Keep(new Picks);
	srv.on_request = [](wharf_conn *, const wharf_conn_request *) {};
	wharf_listener *l = nullptr;
	uint16_t port = Listen(
		&srv,
		[&picks](wharf_listen_opts &o) {
			o.defer_max = 1;
			o.pick_shard = RecordPick;
			o.pick_arg = &picks;
		},
		&l);
	uint64_t a = Connect(&cli, port);
	ASSERT_TRUE(srv.WaitCount(Ev::Request, 1));
	uint64_t b = Connect(&cli, port); // deferred: the one place
	ASSERT_TRUE(WaitPicks(picks, 2));
	ASSERT_TRUE(Poll([&] { return ListenerStats(l).deferred == 1; }));
	uint64_t c = Connect(&cli, port); // no place left: refused now
	ASSERT_TRUE(cli.WaitCount(Ev::Rejected, 1, c)) << cli.Dump();
	Rec rej = cli.First(Ev::Rejected, c);
	EXPECT_EQ(28, rej.rej.reason);
	EXPECT_FALSE(rej.rej.busy); // a standard peer's REJ: no WHRF
	for (uint8_t byte : rej.data)
		ASSERT_EQ(0, byte);
	ASSERT_TRUE(Poll([&] { return ListenerStats(l).rejected_busy == 1; }));
	EXPECT_EQ(0u, cli.Count(Ev::Rejected, b));
	OnConn(cm_, srv.First(Ev::Request).id,
	       [](wharf_conn *x) { EXPECT_EQ(0, wharf_accept(x, nullptr)); });
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, a)) << cli.Dump();
	ASSERT_TRUE(srv.WaitCount(Ev::Request, 2)); // B, presented
	uint64_t sb = 0;
	for (const Rec &r : srv.All())
		if (r.ev == Ev::Request)
			sb = r.id; // the last one shown: B
	OnConn(cm_, sb,
	       [](wharf_conn *x) { EXPECT_EQ(0, wharf_accept(x, nullptr)); });
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, b)) << cli.Dump();
	for (uint64_t id : {a, b, c})
		Destroy(id);
	for (const Rec &r : srv.All())
		if (r.ev == Ev::Request)
			Destroy(r.id);
	ASSERT_TRUE(Poll([&] {
		struct wharf_cm_stats s = CmStats(cm_);
		return s.requests + s.connects == Finals(s) && !s.handshakes &&
		       !s.deferred;
	}));
}

// A peer that gives up while its request waits: its kernel sends a REJ
// that the passive kernel does not report for a request userspace holds
// unanswered (ucma drops events of ids it has not accepted), so the
// request is presented later and its accept fails.  Whatever path it
// takes, it ends with exactly one counted outcome and nothing left.
TEST_F(CmStorm, APeerThatGivesUpWhileDeferredIsAccountedFor)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	Picks &picks = *Keep(new Picks);
	srv.on_request = [](wharf_conn *c, const wharf_conn_request *q) {
		if (((const char *)q->private_data)[0] != 'A') {
			wharf_accept(c, nullptr); // may fail: the peer left
		}
	};
	wharf_listener *l = nullptr;
	uint16_t port = Listen(
		&srv,
		[&picks](wharf_listen_opts &o) {
			o.pick_shard = RecordPick;
			o.pick_arg = &picks;
		},
		&l);
	wharf_conn_param pa = Tagged("A"), pb = Tagged("B");
	uint64_t a = Connect(&cli, port, &pa);
	ASSERT_TRUE(srv.WaitCount(Ev::Request, 1));
	uint64_t b = Connect(&cli, port, &pb);
	ASSERT_TRUE(WaitPicks(picks, 2));
	ASSERT_TRUE(Poll([&] { return ListenerStats(l).deferred == 1; }));
	Destroy(b); // the peer gives up: its kernel sends a REJ
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	OnConn(cm_, srv.First(Ev::Request).id,
	       [](wharf_conn *x) { EXPECT_EQ(0, wharf_accept(x, nullptr)); });
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, a)) << cli.Dump();
	// B's request: presented and failed, or lost while deferred.
	ASSERT_TRUE(Poll([&] {
		struct wharf_cm_stats ls = ListenerStats(l);
		return ls.deferred == 0 &&
		       ls.requests == Finals(ls) + 1; // + A, established
	})) << "requests "
	    << ListenerStats(l).requests << " finals "
	    << Finals(ListenerStats(l));
	struct wharf_cm_stats ls = ListenerStats(l);
	EXPECT_EQ(1u, ls.deferred_total);
	EXPECT_EQ(0u, ls.deferred_accepted);
	EXPECT_EQ(1u, ls.failed + ls.deferred_lost + ls.deferred_timed_out +
			      ls.aborted + ls.timed_out)
		<< "failed " << ls.failed << " lost " << ls.deferred_lost;
	Destroy(a);
	for (const Rec &r : srv.All())
		if (r.ev == Ev::Request)
			Destroy(r.id);
	ASSERT_TRUE(Poll([&] {
		struct wharf_cm_stats s = CmStats(cm_);
		return s.requests + s.connects == Finals(s) && !s.handshakes;
	}));
}

class CmBudget : public CmGuest
{
      protected:
	void EditCmOpts(wharf_cm_opts &o) override
	{
		o.busy_retry_after_ms = 50;
	}
};

TEST_F(CmBudget, ReceiveBudgetRejectsBusyBeforeTheApplicationSeesIt)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	wharf_listener *l = nullptr;
	// The fixture's SRQ has 256 buffers, 16 kept in reserve: 240 fit,
	// one connection claiming 200.  Passive connections all on shard 1,
	// the clients on shard 0.
	uint16_t port = Listen(
		&srv,
		[](wharf_listen_opts &o) {
			o.overload = WHARF_OVERLOAD_REJECT_BUSY;
			o.qp.recv_credits = 200;
			o.pick_shard = [](const wharf_conn_request *,
					  const wharf_cm_shard_load *, unsigned,
					  void *) { return 1; };
		},
		&l);
	uint64_t a = Connect(&cli, port);
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, a)) << cli.Dump();
	uint64_t b = Connect(&cli, port);
	ASSERT_TRUE(cli.WaitCount(Ev::Rejected, 1, b)) << cli.Dump();
	Rec rej = cli.First(Ev::Rejected, b);
	EXPECT_TRUE(rej.rej.busy);
	EXPECT_EQ(2, rej.rej.busy_reason); // the receive budget
	EXPECT_EQ(1u, srv.Count(Ev::Request));
	// The counter is bumped on the refusing shard after the REJ has left,
	// so the client can see the REJ first: poll it, bounded.
	uint64_t busy = 0;
	for (int i = 0; i < 1000; i++) {
		busy = ListenerStats(l).rejected_busy;
		if (busy >= 1)
			break;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	EXPECT_EQ(1u, busy);
	Destroy(a);
	Destroy(b);
	Destroy(srv.First(Ev::Request).id);
}

TEST_F(CmGuest, StaleConnectionRejectIsRetriedWithBackoff)
{
	// The peer's CM rejects a REQ whose (CA GUID, QP number) matches a
	// connection it still has (REJ reason 10).  To provoke it, a raw
	// client holds a connection to the same peer under the QP number
	// wharf's pool will hand out next: rxe numbers QPs sequentially, so
	// that is the number after the one wharf's first connection got.
	RawPeer srv_raw;
	uint16_t port = srv_raw.Listen();
	struct Acceptor {
		std::atomic<bool> stop{false};
		std::thread t;
		~Acceptor()
		{
			stop = true;
			if (t.joinable())
				t.join();
		}
	} acc;
	std::atomic<bool> &stop = acc.stop;
	acc.t = std::thread([&] {
		while (!stop) {
			rdma_cm_event ev;
			rdma_cm_id *id = nullptr;
			int t = srv_raw.Next(&ev, &id, nullptr, 1);
			if (t == RDMA_CM_EVENT_CONNECT_REQUEST)
				srv_raw.AcceptWithQp(id);
			if (t == RDMA_CM_EVENT_DISCONNECTED)
				rdma_disconnect(id);
		}
	});
	Recorder &cli = *NewRec();
	uint64_t first = Connect(&cli, port);
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, first)) << cli.Dump();
	uint32_t next = cli.First(Ev::Established, first).info.qp_num + 1;
	// Hold the next three numbers (the raw peer's own QP may take one).
	// A number some live connection already uses on this device is
	// refused by the peer's CM (REJ 10 to the holder): skip it.
	RawPeer holder;
	unsigned held = 0;
	for (uint32_t n = next; n < next + 3; n++) {
		rdma_cm_id *hid = holder.NewId();
		ASSERT_TRUE(holder.Resolve(hid, port));
		rdma_conn_param cp = {};
		cp.responder_resources = cp.initiator_depth = 1;
		cp.retry_count = cp.rnr_retry_count = 7;
		cp.qp_num = n;
		ASSERT_EQ(0, rdma_connect(hid, &cp));
		int t = -1;
		for (int i = 0; i < 16; i++) {
			t = holder.Next();
			if (t < 0 || t == RDMA_CM_EVENT_CONNECT_RESPONSE ||
			    t == RDMA_CM_EVENT_REJECTED)
				break;
		}
		ASSERT_TRUE(t == RDMA_CM_EVENT_CONNECT_RESPONSE ||
			    t == RDMA_CM_EVENT_REJECTED)
			<< "holder of QP " << n << ": event " << t;
		if (t == RDMA_CM_EVENT_CONNECT_RESPONSE) {
			ASSERT_EQ(0, rdma_establish(hid));
			held++;
		}
	}
	if (!held)
		GTEST_SKIP() << "every QP number after " << next
			     << " is in use on the device";
	uint64_t second = Connect(&cli, port);
	ASSERT_TRUE(cli.WaitCount(Ev::Established, 1, second)) << cli.Dump();
	struct wharf_cm_stats s = CmStats(cm_);
	uint32_t got = cli.First(Ev::Established, second).info.qp_num;
	if (s.stale_retried == 0) {
		GTEST_SKIP() << "could not provoke a stale REJ: the second "
				"connection got QP "
			     << got << ", the holder had " << next;
	}
	EXPECT_TRUE(got < next || got >= next + 3) << got; // another QP
	EXPECT_EQ(0u, cli.Count(Ev::Rejected, second));
	Destroy(first);
	Destroy(second);
}

} // namespace
