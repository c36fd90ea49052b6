// A command slot's life (nvmf_host/slot_sm.h): every event in every
// state, live and closing, against a table written out here; then the
// lives a command really has, event by event.
#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

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

// Runs @evs from FREE; returns the final state and ORs the actions.
wnh_slot_state Drive(std::initializer_list<std::pair<wnh_slot_ev, bool>> evs,
		     unsigned *acts, unsigned *callbacks)
{
	wnh_slot_state s = NHC_FREE;
	*acts = 0;
	*callbacks = 0;
	for (auto [ev, live] : evs) {
		wnh_slot_trans t = wnh_slot_next(s, ev, live);
		*acts |= t.act;
		*callbacks += (t.act & CB) != 0;
		s = t.next;
	}
	return s;
}

TEST(NvmfHostSlotSm, LivesACommandHas)
{
	unsigned acts, cbs;
	// Response after the SEND's completion, or before it.
	EXPECT_EQ(NHC_FREE, Drive({{NHC_EV_SUBMIT, true},
				   {NHC_EV_POST, true},
				   {NHC_EV_SEND_DONE, true},
				   {NHC_EV_RESPONSE, true}},
				  &acts, &cbs));
	EXPECT_EQ(1u, cbs);
	EXPECT_EQ(NHC_FREE, Drive({{NHC_EV_SUBMIT, true},
				   {NHC_EV_POST, true},
				   {NHC_EV_RESPONSE, true},
				   {NHC_EV_SEND_DONE, true}},
				  &acts, &cbs));
	EXPECT_EQ(1u, cbs);
	// A loss before any answer: held, posted again, then completes.
	EXPECT_EQ(NHC_FREE, Drive({{NHC_EV_SUBMIT, true},
				   {NHC_EV_POST, true},
				   {NHC_EV_SEND_DONE, false},
				   {NHC_EV_GONE, false},
				   {NHC_EV_POST, true},
				   {NHC_EV_SEND_DONE, true},
				   {NHC_EV_RESPONSE, true}},
				  &acts, &cbs));
	EXPECT_EQ(1u, cbs);
	// Answered while the connection closes: completed at GONE, never
	// resent.
	EXPECT_EQ(NHC_FREE, Drive({{NHC_EV_SUBMIT, true},
				   {NHC_EV_POST, true},
				   {NHC_EV_SEND_DONE, true},
				   {NHC_EV_RESPONSE, false},
				   {NHC_EV_GONE, false}},
				  &acts, &cbs));
	EXPECT_EQ(1u, cbs);
	// An internal command timed out: its callback now, its slot only
	// once the connection is gone; a late response is ignored.
	EXPECT_EQ(NHC_ORPHAN, Drive({{NHC_EV_SUBMIT, true},
				     {NHC_EV_POST, true},
				     {NHC_EV_FAIL, true},
				     {NHC_EV_RESPONSE, false},
				     {NHC_EV_SEND_DONE, false}},
				    &acts, &cbs));
	EXPECT_EQ(1u, cbs);
	EXPECT_EQ(0u, acts & PUT);
	// A duplicate response on a live queue is a protocol error.
	Drive({{NHC_EV_SUBMIT, true},
	       {NHC_EV_POST, true},
	       {NHC_EV_RESPONSE, true},
	       {NHC_EV_RESPONSE, true}},
	      &acts, &cbs);
	EXPECT_NE(0u, acts & BAD);
	// A first post that fails: the slot returns unused, no callback.
	EXPECT_EQ(NHC_FREE,
		  Drive({{NHC_EV_SUBMIT, true}, {NHC_EV_CANCEL, true}}, &acts,
			&cbs));
	EXPECT_EQ(0u, cbs);
}

} // namespace
