// Events before deadlines, on real rdma_cm: a shard that stalls (here a
// poller that sleeps, as a client process starved of CPU would) while the
// answers to its connections' resolve steps arrive finds, when it runs
// again, more answers in its channel than one read takes.  Every one of
// them came before its step's deadline, so none may end as a timeout:
// each connection's timer first reads what the channel holds.
#include <atomic>
#include <thread>

#include "tests/guest/cm_guest_util.h"

using namespace wharf_cm_test;

namespace
{

constexpr unsigned kConns = 200;
constexpr uint32_t kResolveMs = 1000; // wharf's timer: + 1 s grace
constexpr auto kStall = std::chrono::milliseconds(3500); // past both

class CmDeadline : public CmGuest
{
      protected:
	void EditCmOpts(wharf_cm_opts &o) override
	{
		o.connect_window = WHARF_CONNECT_WINDOW_NONE;
	}
	void EditResOpts(wharf_qp_res_opts &o) override
	{
		o.srq_depth = 1024;
		o.recv_credits = 1;
		o.pool_size = 64;
	}
};

// Shard 0's stall: once armed, after enough passes for the inbox to have
// handed every connect to the shard (8 a pass), one sleep past every
// resolve deadline.
struct Stall {
	std::atomic<bool> armed{false}, done{false};
	unsigned passes = 0;
	wharf_poller *poller = nullptr;
};

int StallPoll(wharf_shard *, void *arg)
{
	Stall *s = static_cast<Stall *>(arg);
	if (!s->armed.load() || s->done.load())
		return 0;
	if (++s->passes < kConns / 8 + 8)
		return 1; /* stay awake: the connects are being adopted */
	std::this_thread::sleep_for(kStall);
	s->done = true;
	return 0;
}

TEST_F(CmDeadline, AnswersThatCameInTimeAreReadBeforeTheTimersJudge)
{
	Recorder &srv = *NewRec(), &cli = *NewRec();
	srv.on_request = [](wharf_conn *c, const wharf_conn_request *) {
		EXPECT_EQ(0, wharf_accept(c, nullptr));
	};
	uint16_t port = Listen(&srv, [](wharf_listen_opts &o) {
		o.pick_shard = [](const wharf_conn_request *,
				  const wharf_cm_shard_load *, unsigned,
				  void *) { return 1; };
	});
	Stall &stall = *Keep(new Stall);
	RunOn(ctx_, 0, [&] {
		EXPECT_EQ(0, wharf_shard_poller_add(wharf_shard_current(),
						    StallPoll, nullptr, &stall,
						    &stall.poller));
	});
	std::vector<uint64_t> ids;
	// From shard 0 itself, so the stall cannot start before the
	// connects are in its inbox.
	RunOn(ctx_, 0, [&] {
		for (unsigned i = 0; i < kConns; i++)
			ids.push_back(Connect(
				&cli, port, nullptr, [](wharf_connect_opts &o) {
					o.resolve_addr_timeout_ms = kResolveMs;
				}));
		stall.armed = true;
	});
	ASSERT_TRUE(Poll([&] { return stall.done.load(); }));
	// Every handshake ends, one way or the other, within one bound.
	ASSERT_TRUE(cli.Wait([&] {
		return cli.CountLocked(Ev::Established) +
			       cli.CountLocked(Ev::Error) >=
		       kConns;
	})) << cli.Dump();
	struct wharf_cm_stats s = CmStats(cm_);
	EXPECT_EQ(0u, s.timed_out);
	EXPECT_EQ(kConns, s.connected);
	EXPECT_EQ(0u, cli.Count(Ev::Error));
	RunOn(ctx_, 0,
	      [&] { EXPECT_EQ(0, wharf_poller_remove(stall.poller)); });
	DestroyWithPeers(ids, srv);
}

} // namespace
