// A command slot's life (nvmf_host/slot_sm.h): every event in every
// state, live and closing, against a table written out here; then the
// lives a command really has, event by event.
#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>
#include <vector>

extern "C" {
#include "nvmf_host/slot_sm.h"
}

namespace
{

constexpr unsigned CB = NHC_ACT_CALLBACK, PUT = NHC_ACT_PUT, BAD = NHC_ACT_BAD;

struct Want {
	wnh_slot_state next;
	unsigned act;
};

// The expected transition, written as a table of exceptions: anything
// not listed leaves the state as it is with no action.
Want Expected(wnh_slot_state s, wnh_slot_ev ev, bool live)
{
	const unsigned stray = live ? BAD : 0;
	switch (s) {
	case NHC_FREE:
		if (ev == NHC_EV_SUBMIT)
			return {NHC_HELD, 0};
		if (ev == NHC_EV_RESPONSE)
			return {s, stray};
		break;
	case NHC_HELD:
		if (ev == NHC_EV_CANCEL)
			return {NHC_FREE, PUT};
		if (ev == NHC_EV_POST)
			return {NHC_POSTED, 0};
		if (ev == NHC_EV_FAIL)
			return {NHC_FREE, CB | PUT};
		if (ev == NHC_EV_RESPONSE)
			return {s, stray};
		break;
	case NHC_POSTED:
		if (ev == NHC_EV_SEND_DONE)
			return {NHC_SENT, 0};
		if (ev == NHC_EV_RESPONSE)
			return {NHC_ANSWERED, 0};
		if (ev == NHC_EV_FAIL)
			return {NHC_ORPHAN, CB};
		if (ev == NHC_EV_GONE)
			return {NHC_HELD, 0};
		break;
	case NHC_SENT:
		if (ev == NHC_EV_RESPONSE)
			return live ? Want{NHC_FREE, CB | PUT}
				    : Want{NHC_ANSWERED, 0};
		if (ev == NHC_EV_FAIL)
			return {NHC_ORPHAN, CB};
		if (ev == NHC_EV_GONE)
			return {NHC_HELD, 0};
		break;
	case NHC_ANSWERED:
		if (ev == NHC_EV_SEND_DONE)
			return live ? Want{NHC_FREE, CB | PUT} : Want{s, 0};
		if (ev == NHC_EV_FAIL)
			return {NHC_ORPHAN, CB};
		if (ev == NHC_EV_GONE)
			return {NHC_FREE, CB | PUT};
		if (ev == NHC_EV_RESPONSE)
			return {s, stray};
		break;
	case NHC_ORPHAN:
		if (ev == NHC_EV_GONE)
			return {NHC_FREE, PUT};
		if (ev == NHC_EV_RESPONSE)
			return {s, stray};
		break;
	default:
		break;
	}
	return {s, 0};
}

TEST(NvmfHostSlotSm, EveryEventInEveryStateLiveAndClosing)
{
	for (bool live : {true, false})
		for (int s = 0; s < NHC_STATE_COUNT; s++)
			for (int ev = 0; ev < NHC_EV_COUNT; ev++) {
				wnh_slot_trans t =
					wnh_slot_next((wnh_slot_state)s,
						      (wnh_slot_ev)ev, live);
				Want w = Expected((wnh_slot_state)s,
						  (wnh_slot_ev)ev, live);
				EXPECT_EQ(w.next, t.next)
					<< wnh_slot_state_name(
						   (wnh_slot_state)s)
					<< " ev " << ev << " live " << live;
				EXPECT_EQ(w.act, t.act)
					<< wnh_slot_state_name(
						   (wnh_slot_state)s)
					<< " ev " << ev << " live " << live;
			}
}

TEST(NvmfHostSlotSm, ACallbackRunsOnceAndAFreeSlotIsPutOnce)
{
	// Whatever the path, a slot leaves FREE by SUBMIT only, and every
	// transition into FREE puts it back (never one out of FREE).
	for (bool live : {true, false})
		for (int s = 0; s < NHC_STATE_COUNT; s++)
			for (int ev = 0; ev < NHC_EV_COUNT; ev++) {
				wnh_slot_trans t =
					wnh_slot_next((wnh_slot_state)s,
						      (wnh_slot_ev)ev, live);
				bool to_free =
					t.next == NHC_FREE && s != NHC_FREE;
				EXPECT_EQ(to_free, (t.act & PUT) != 0)
					<< s << " " << ev;
				// A callback is owed only before ORPHAN/FREE.
				if (t.act & CB) {
					EXPECT_TRUE(s != NHC_FREE &&
						    s != NHC_ORPHAN)
						<< s << " " << ev;
				}
			}
}

TEST(NvmfHostSlotSm, TheAnswerTravelsWithTheSlot)
{
	EXPECT_TRUE(wnh_slot_answered(NHC_ANSWERED, NHC_EV_FAIL));
	EXPECT_TRUE(wnh_slot_answered(NHC_ANSWERED, NHC_EV_GONE));
	EXPECT_TRUE(wnh_slot_answered(NHC_SENT, NHC_EV_RESPONSE));
	EXPECT_TRUE(wnh_slot_answered(NHC_POSTED, NHC_EV_RESPONSE));
	EXPECT_FALSE(wnh_slot_answered(NHC_SENT, NHC_EV_FAIL));
	EXPECT_FALSE(wnh_slot_answered(NHC_HELD, NHC_EV_FAIL));
	EXPECT_FALSE(wnh_slot_answered(NHC_ORPHAN, NHC_EV_RESPONSE));
	EXPECT_FALSE(wnh_slot_answered(NHC_FREE, NHC_EV_RESPONSE));
}

// One life of a command: events (with the queue's liveness) from FREE,
// the state it ends in, how many callbacks ran, actions it must not see.
struct Life {
	const char *what;
	std::vector<std::pair<wnh_slot_ev, bool>> evs;
	wnh_slot_state end;
	unsigned callbacks;
	unsigned never; // action bits that must not occur
};

constexpr bool L = true, C = false; // live, closing

TEST(NvmfHostSlotSm, LivesACommandHas)
{
	const Life lives[] = {
		{"response after the SEND's completion",
		 {{NHC_EV_SUBMIT, L},
		  {NHC_EV_POST, L},
		  {NHC_EV_SEND_DONE, L},
		  {NHC_EV_RESPONSE, L}},
		 NHC_FREE,
		 1,
		 BAD},
		{"response before the SEND's completion",
		 {{NHC_EV_SUBMIT, L},
		  {NHC_EV_POST, L},
		  {NHC_EV_RESPONSE, L},
		  {NHC_EV_SEND_DONE, L}},
		 NHC_FREE,
		 1,
		 BAD},
		{"lost unanswered: held, posted again, completes",
		 {{NHC_EV_SUBMIT, L},
		  {NHC_EV_POST, L},
		  {NHC_EV_SEND_DONE, C},
		  {NHC_EV_GONE, C},
		  {NHC_EV_POST, L},
		  {NHC_EV_SEND_DONE, L},
		  {NHC_EV_RESPONSE, L}},
		 NHC_FREE,
		 1,
		 BAD},
		{"answered while closing: completed at GONE, never resent",
		 {{NHC_EV_SUBMIT, L},
		  {NHC_EV_POST, L},
		  {NHC_EV_SEND_DONE, L},
		  {NHC_EV_RESPONSE, C},
		  {NHC_EV_GONE, C}},
		 NHC_FREE,
		 1,
		 BAD},
		{"timed out: callback now, slot kept until GONE",
		 {{NHC_EV_SUBMIT, L},
		  {NHC_EV_POST, L},
		  {NHC_EV_FAIL, L},
		  {NHC_EV_RESPONSE, C},
		  {NHC_EV_SEND_DONE, C}},
		 NHC_ORPHAN,
		 1,
		 PUT | BAD},
		{"first post failed: unused, no callback",
		 {{NHC_EV_SUBMIT, L}, {NHC_EV_CANCEL, L}},
		 NHC_FREE,
		 0,
		 CB | BAD},
	};
	for (const Life &l : lives) {
		wnh_slot_state s = NHC_FREE;
		unsigned acts = 0, cbs = 0;
		for (auto [ev, live] : l.evs) {
			wnh_slot_trans t = wnh_slot_next(s, ev, live);
			acts |= t.act;
			cbs += (t.act & CB) != 0;
			s = t.next;
		}
		EXPECT_EQ(l.end, s) << l.what;
		EXPECT_EQ(l.callbacks, cbs) << l.what;
		EXPECT_EQ(0u, acts & l.never) << l.what;
	}
	// A duplicate response on a live queue is a protocol error.
	wnh_slot_state s = NHC_FREE;
	for (wnh_slot_ev ev : {NHC_EV_SUBMIT, NHC_EV_POST, NHC_EV_RESPONSE})
		s = wnh_slot_next(s, ev, L).next;
	EXPECT_EQ(BAD, wnh_slot_next(s, NHC_EV_RESPONSE, L).act);
}

} // namespace
