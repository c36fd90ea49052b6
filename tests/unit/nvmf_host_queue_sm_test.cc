// A queue's life (nvmf_host/queue_sm.h): every event in every state
// against a table written out here, then the lives a queue really has.
#include <gtest/gtest.h>

#include <initializer_list>

extern "C" {
#include "nvmf_host/queue_sm.h"
}

namespace
{

struct Want {
	wnh_qstate next;
	unsigned act;
};

bool Alive(wnh_qstate s)
{
	return s == NHQ_CONNECTING || s == NHQ_FABRICS || s == NHQ_LIVE;
}

// The expected transition; anything not listed leaves the state as it
// is with no action.
Want Expected(wnh_qstate s, wnh_qev ev)
{
	switch (ev) {
	case NHQ_EV_START:
		if (s == NHQ_DOWN)
			return {NHQ_CONNECTING, NHQ_ACT_CONNECT};
		break;
	case NHQ_EV_START_FAILED:
		if (s == NHQ_CONNECTING)
			return {NHQ_DOWN, 0};
		break;
	case NHQ_EV_ESTABLISHED:
		if (s == NHQ_CONNECTING)
			return {NHQ_FABRICS, NHQ_ACT_SEND_CONNECT};
		if (s == NHQ_RESETTING || s == NHQ_CLOSING)
			return {s, NHQ_ACT_CLOSE_CONN};
		break;
	case NHQ_EV_CONNECTED:
		if (s == NHQ_FABRICS)
			return {NHQ_LIVE, NHQ_ACT_RESUME};
		break;
	case NHQ_EV_LOST:
		if (Alive(s))
			return {NHQ_RESETTING,
				NHQ_ACT_FAIL_INTERNAL | NHQ_ACT_CLOSE_CONN};
		break;
	case NHQ_EV_GONE:
		if (s == NHQ_RESETTING)
			return {NHQ_DOWN, NHQ_ACT_RESET_DONE};
		break;
	case NHQ_EV_CLOSE:
		return {NHQ_CLOSING, NHQ_ACT_FAIL_ALL | NHQ_ACT_CLOSE_CONN};
	default:
		break;
	}
	return {s, 0};
}

TEST(NvmfHostQueueSm, EveryEventInEveryState)
{
	for (int s = 0; s < NHQ_STATE_COUNT; s++)
		for (int ev = 0; ev < NHQ_EV_COUNT; ev++) {
			wnh_qtrans t =
				wnh_queue_next((wnh_qstate)s, (wnh_qev)ev);
			Want w = Expected((wnh_qstate)s, (wnh_qev)ev);
			EXPECT_EQ(w.next, t.next)
				<< wnh_qstate_name((wnh_qstate)s) << " ev "
				<< ev;
			EXPECT_EQ(w.act, t.act)
				<< wnh_qstate_name((wnh_qstate)s) << " ev "
				<< ev;
		}
}

TEST(NvmfHostQueueSm, AliveIsConnectingFabricsOrLive)
{
	for (int s = 0; s < NHQ_STATE_COUNT; s++)
		EXPECT_EQ(Alive((wnh_qstate)s), wnh_queue_alive((wnh_qstate)s))
			<< s;
}

TEST(NvmfHostQueueSm, ClosingIsFinal)
{
	for (int ev = 0; ev < NHQ_EV_COUNT; ev++)
		EXPECT_EQ(NHQ_CLOSING,
			  wnh_queue_next(NHQ_CLOSING, (wnh_qev)ev).next)
			<< ev;
}

TEST(NvmfHostQueueSm, UnknownStatesAndEventsChangeNothing)
{
	wnh_qtrans t = wnh_queue_next(NHQ_STATE_COUNT, NHQ_EV_CLOSE);
	EXPECT_EQ(NHQ_STATE_COUNT, t.next);
	EXPECT_EQ(0u, t.act);
	t = wnh_queue_next(NHQ_LIVE, NHQ_EV_COUNT);
	EXPECT_EQ(NHQ_LIVE, t.next);
	EXPECT_EQ(0u, t.act);
}

// Runs @evs from DOWN; returns the final state.
wnh_qstate Drive(std::initializer_list<wnh_qev> evs, unsigned *acts)
{
	wnh_qstate s = NHQ_DOWN;
	*acts = 0;
	for (wnh_qev ev : evs) {
		wnh_qtrans t = wnh_queue_next(s, ev);
		*acts |= t.act;
		s = t.next;
	}
	return s;
}

TEST(NvmfHostQueueSm, LivesAQueueHas)
{
	unsigned acts;
	// Up, lost, reconnected.
	EXPECT_EQ(NHQ_LIVE,
		  Drive({NHQ_EV_START, NHQ_EV_ESTABLISHED, NHQ_EV_CONNECTED,
			 NHQ_EV_LOST, NHQ_EV_GONE, NHQ_EV_START,
			 NHQ_EV_ESTABLISHED, NHQ_EV_CONNECTED},
			&acts));
	// A Connect answered just before a loss completes while the queue
	// resets: it does not make the queue LIVE.
	EXPECT_EQ(NHQ_RESETTING, Drive({NHQ_EV_START, NHQ_EV_ESTABLISHED,
					NHQ_EV_LOST, NHQ_EV_CONNECTED},
				       &acts));
	// Refused at the handshake: down again, no Connect sent.
	EXPECT_EQ(NHQ_DOWN,
		  Drive({NHQ_EV_START, NHQ_EV_LOST, NHQ_EV_GONE}, &acts));
	EXPECT_EQ(0u, acts & NHQ_ACT_SEND_CONNECT);
	// wharf_connect() refused at once.
	EXPECT_EQ(NHQ_DOWN, Drive({NHQ_EV_START, NHQ_EV_START_FAILED}, &acts));
	// Closed while connecting: established late, then closed.
	EXPECT_EQ(NHQ_CLOSING, Drive({NHQ_EV_START, NHQ_EV_CLOSE,
				      NHQ_EV_ESTABLISHED, NHQ_EV_GONE},
				     &acts));
	EXPECT_EQ(0u, acts & NHQ_ACT_SEND_CONNECT);
	EXPECT_EQ(0u, acts & NHQ_ACT_RESET_DONE);
}

} // namespace
