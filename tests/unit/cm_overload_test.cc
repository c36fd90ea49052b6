// Unit tests for cm/overload: what the owner shard does with a request it
// may have no room for, every rule of overload.h against rooms given as
// numbers, plus a model of one shard's FIFO driven by those decisions
// (arrival order, the defer_max bound, a request leaving while it waits).
#include <errno.h>

#include <deque>
#include <string>

#include <gtest/gtest.h>

extern "C" {
#include "cm/overload.h"
}

namespace
{

wcm_room Room(unsigned running, bool budget_ok = true, unsigned queued = 0,
	      wcm_overload policy = WCM_OVERLOAD_DEFER)
{
	wcm_room r = {};
	r.running = running;
	r.cap = 2;
	r.budget_ok = budget_ok;
	r.queued = queued;
	r.listener_deferred = queued;
	r.defer_max = 3;
	r.policy = policy;
	return r;
}

wcm_decision Decide(const wcm_room &r)
{
	wcm_decision d = {};
	EXPECT_EQ(0, wcm_overload_decide(&r, &d));
	return d;
}

TEST(CmOverload, RoomAndNoQueueIsTakenNow)
{
	wcm_decision d = Decide(Room(1));
	EXPECT_EQ(WCM_TAKE, d.verdict);
	EXPECT_EQ(WCM_REFUSE_NONE, d.why);
	d = Decide(Room(1, true, 0, WCM_OVERLOAD_REJECT_BUSY));
	EXPECT_EQ(WCM_TAKE, d.verdict);
}

TEST(CmOverload, DeferWaitsForTheCapOrTheBudgetAndSaysWhich)
{
	wcm_decision d = Decide(Room(2));
	EXPECT_EQ(WCM_DEFER, d.verdict);
	EXPECT_EQ(WCM_REFUSE_HANDSHAKES, d.why);
	d = Decide(Room(0, false));
	EXPECT_EQ(WCM_DEFER, d.verdict);
	EXPECT_EQ(WCM_REFUSE_RECV_BUDGET, d.why);
}

TEST(CmOverload, DeferKeepsArrivalOrderBehindWaitingRequests)
{
	// Room now, but earlier requests wait: queue behind them.
	wcm_decision d = Decide(Room(0, true, 1));
	EXPECT_EQ(WCM_DEFER, d.verdict);
	EXPECT_EQ(WCM_REFUSE_NONE, d.why);
}

TEST(CmOverload, DeferMaxBoundsTheWaitingRequestsOfAListener)
{
	wcm_room r = Room(2, true, 3);
	wcm_decision d = Decide(r);
	EXPECT_EQ(WCM_REFUSE, d.verdict);
	EXPECT_EQ(WCM_REFUSE_DEFER_FULL, d.why);
	r.listener_deferred = 2; // the others are another listener's
	EXPECT_EQ(WCM_DEFER, Decide(r).verdict);
}

TEST(CmOverload, RejectBusyRefusesAtOnceAndIgnoresOthersQueues)
{
	wcm_decision d = Decide(Room(2, true, 0, WCM_OVERLOAD_REJECT_BUSY));
	EXPECT_EQ(WCM_REFUSE, d.verdict);
	EXPECT_EQ(WCM_REFUSE_HANDSHAKES, d.why);
	d = Decide(Room(0, false, 0, WCM_OVERLOAD_REJECT_BUSY));
	EXPECT_EQ(WCM_REFUSE, d.verdict);
	EXPECT_EQ(WCM_REFUSE_RECV_BUDGET, d.why);
	// A DEFER listener's requests wait on the shard: not our concern.
	wcm_room r = Room(0, true, 5, WCM_OVERLOAD_REJECT_BUSY);
	r.listener_deferred = 0;
	EXPECT_EQ(WCM_TAKE, Decide(r).verdict);
}

TEST(CmOverload, ClosingRefusesEverythingAsDraining)
{
	for (wcm_overload p : {WCM_OVERLOAD_DEFER, WCM_OVERLOAD_REJECT_BUSY}) {
		wcm_room r = Room(0, true, 0, p);
		r.closing = true;
		wcm_decision d = Decide(r);
		EXPECT_EQ(WCM_REFUSE, d.verdict);
		EXPECT_EQ(WCM_REFUSE_DRAINING, d.why);
		EXPECT_FALSE(wcm_overload_room(&r));
	}
}

TEST(CmOverload, RoomForTheHeadIsCapAndBudget)
{
	wcm_room r = Room(1);
	EXPECT_TRUE(wcm_overload_room(&r));
	r = Room(2);
	EXPECT_FALSE(wcm_overload_room(&r));
	r = Room(0, false);
	EXPECT_FALSE(wcm_overload_room(&r));
	r = Room(0, true, 7); // the queue behind does not matter
	EXPECT_TRUE(wcm_overload_room(&r));
	EXPECT_FALSE(wcm_overload_room(nullptr));
}

TEST(CmOverload, PayloadIsTheCallbacksWheneverThereIsOne)
{
	for (wcm_overload p : {WCM_OVERLOAD_DEFER, WCM_OVERLOAD_REJECT_BUSY})
		for (int why = WCM_REFUSE_HANDSHAKES;
		     why <= WCM_REFUSE_RESOURCES; why++)
			EXPECT_EQ(
				WCM_PAYLOAD_CALLBACK,
				wcm_refusal_payload(p, true, (wcm_refusal)why))
				<< p << " " << why;
}

TEST(CmOverload, PayloadIsBusyOnlyForRejectBusyAndItsOwnReasons)
{
	for (int why = WCM_REFUSE_HANDSHAKES; why <= WCM_REFUSE_RESOURCES;
	     why++) {
		bool busy = why == WCM_REFUSE_HANDSHAKES ||
			    why == WCM_REFUSE_RECV_BUDGET ||
			    why == WCM_REFUSE_DRAINING;
		EXPECT_EQ(busy ? WCM_PAYLOAD_BUSY : WCM_PAYLOAD_NONE,
			  wcm_refusal_payload(WCM_OVERLOAD_REJECT_BUSY, false,
					      (wcm_refusal)why))
			<< why;
		// A DEFER listener serves standard peers: a plain REJ.
		EXPECT_EQ(WCM_PAYLOAD_NONE,
			  wcm_refusal_payload(WCM_OVERLOAD_DEFER, false,
					      (wcm_refusal)why))
			<< why;
	}
}

TEST(CmOverload, NoRefusalHasNoPayload)
{
	EXPECT_EQ(WCM_PAYLOAD_NONE,
		  wcm_refusal_payload(WCM_OVERLOAD_REJECT_BUSY, true,
				      WCM_REFUSE_NONE));
}

TEST(CmOverload, BadRoomsAreEinval)
{
	wcm_decision d;
	wcm_room r = Room(0);
	EXPECT_EQ(-EINVAL, wcm_overload_decide(nullptr, &d));
	EXPECT_EQ(-EINVAL, wcm_overload_decide(&r, nullptr));
	r.cap = 0;
	EXPECT_EQ(-EINVAL, wcm_overload_decide(&r, &d));
	r = Room(0);
	r.defer_max = 0;
	EXPECT_EQ(-EINVAL, wcm_overload_decide(&r, &d));
	r = Room(0);
	r.policy = (wcm_overload)7;
	EXPECT_EQ(-EINVAL, wcm_overload_decide(&r, &d));
}

// One shard driven by the decisions: requests arrive, handshakes end,
// a waiting request's peer leaves.  The shard presents the head of its
// FIFO whenever there is room (what defer.c's poller does), and every
// request ends in exactly one place.
struct Shard {
	unsigned cap = 2, running = 0;
	uint32_t defer_max = 3;
	std::deque<char> fifo;
	std::string presented, refused, lost;

	wcm_room RoomNow() const
	{
		wcm_room r = {};
		r.running = running;
		r.cap = cap;
		r.budget_ok = true;
		r.queued = (unsigned)fifo.size();
		r.listener_deferred = (uint32_t)fifo.size();
		r.defer_max = defer_max;
		r.policy = WCM_OVERLOAD_DEFER;
		return r;
	}
	void Pump()
	{
		wcm_room r = RoomNow();
		while (!fifo.empty() && wcm_overload_room(&r)) {
			presented += fifo.front();
			fifo.pop_front();
			running++;
			r = RoomNow();
		}
	}
	void Arrive(char tag)
	{
		wcm_decision d = {};
		wcm_room r = RoomNow();
		ASSERT_EQ(0, wcm_overload_decide(&r, &d));
		if (d.verdict == WCM_TAKE) {
			presented += tag;
			running++;
		} else if (d.verdict == WCM_DEFER) {
			fifo.push_back(tag);
		} else {
			refused += tag;
		}
	}
	void HandshakeEnds()
	{
		ASSERT_GT(running, 0u);
		running--;
		Pump();
	}
	void PeerLeaves(char tag)
	{
		for (auto it = fifo.begin(); it != fifo.end(); ++it)
			if (*it == tag) {
				fifo.erase(it);
				lost += tag;
				return;
			}
	}
};

TEST(CmOverload, ModelShardPresentsInArrivalOrderWithinItsBounds)
{
	Shard s;
	for (char t : std::string("ABCDEFG"))
		s.Arrive(t);
	EXPECT_EQ("AB", s.presented); // the cap
	EXPECT_EQ("CDE", std::string(s.fifo.begin(), s.fifo.end()));
	EXPECT_EQ("FG", s.refused); // defer_max 3
	s.PeerLeaves('D');	    // its id got an event while waiting
	s.HandshakeEnds();
	EXPECT_EQ("ABC", s.presented);
	s.Arrive('H'); // behind E, though there is no room anyway
	s.HandshakeEnds();
	s.HandshakeEnds();
	EXPECT_EQ("ABCEH", s.presented);
	EXPECT_EQ("D", s.lost);
	EXPECT_TRUE(s.fifo.empty());
	// Every request has exactly one fate.
	EXPECT_EQ(8u, s.presented.size() + s.refused.size() + s.lost.size());
}

} // namespace
