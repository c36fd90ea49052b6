// The NVMe-oF host's controller recovery (nvmf_host/ctrl_sm.h):
// every event in every state against a table written out here, the
// paths a loss takes (reconnected, lost for good, deleted), and the
// reconnect backoff.
#include <stdint.h>

#include <gtest/gtest.h>

#include "nvmf_host/ctrl_sm.h"

namespace
{

constexpr auto NEW = WHARF_NVMF_HOST_NEW, LIVE = WHARF_NVMF_HOST_LIVE,
	       RST = WHARF_NVMF_HOST_RESETTING,
	       CON = WHARF_NVMF_HOST_CONNECTING, DEL = WHARF_NVMF_HOST_DELETING,
	       DEAD = WHARF_NVMF_HOST_DEAD;

struct Row {
	enum wharf_nvmf_host_state from;
	enum wnh_ev ev;
	enum wharf_nvmf_host_state to;
	unsigned act;
};

// Every (state, event) pair that does something; all others must leave
// the state alone and do nothing.
const Row kTable[] = {
	{NEW, WNH_EV_UP, LIVE, WNH_ACT_CONNECTED},
	{NEW, WNH_EV_DELETE, DEL, WNH_ACT_STOP},
	{LIVE, WNH_EV_LOSS, RST, WNH_ACT_TEARDOWN | WNH_ACT_ARM_LOSS},
	{LIVE, WNH_EV_DELETE, DEL, WNH_ACT_STOP},
	{RST, WNH_EV_DOWN, CON, WNH_ACT_ARM_RETRY},
	{RST, WNH_EV_LOSS_TMO, DEAD, WNH_ACT_STOP | WNH_ACT_FAIL_HELD},
	{RST, WNH_EV_FAST_FAIL, RST, WNH_ACT_FAST_FAIL},
	{RST, WNH_EV_DELETE, DEL, WNH_ACT_STOP},
	{CON, WNH_EV_RETRY, CON, WNH_ACT_ATTEMPT},
	{CON, WNH_EV_UP, LIVE, WNH_ACT_RESUME},
	{CON, WNH_EV_LOSS, RST, WNH_ACT_TEARDOWN},
	{CON, WNH_EV_LOSS_TMO, DEAD,
	 WNH_ACT_STOP | WNH_ACT_TEARDOWN | WNH_ACT_FAIL_HELD},
	{CON, WNH_EV_FAST_FAIL, CON, WNH_ACT_FAST_FAIL},
	{CON, WNH_EV_DELETE, DEL, WNH_ACT_STOP},
	{DEAD, WNH_EV_DELETE, DEL, WNH_ACT_STOP},
};

const enum wharf_nvmf_host_state kStates[] = {NEW, LIVE, RST, CON, DEL, DEAD};

TEST(NvmfHostCtrlSm, EveryEventInEveryState)
{
	unsigned acting = 0;

	for (auto s : kStates) {
		for (int e = 0; e < WNH_EV_COUNT; e++) {
			auto ev = (enum wnh_ev)e;
			struct wnh_trans t = wnh_ctrl_next(s, ev);
			const Row *want = nullptr;

			for (const Row &r : kTable)
				if (r.from == s && r.ev == ev)
					want = &r;
			SCOPED_TRACE(
				std::string(wharf_nvmf_host_state_name(s)) +
				" on " + wnh_ev_name(ev));
			if (want) {
				EXPECT_EQ(want->to, t.next);
				EXPECT_EQ(want->act, t.act);
				acting++;
			} else {
				EXPECT_EQ(s, t.next) << "ignored events stay";
				EXPECT_EQ(0u, t.act);
			}
		}
	}
	EXPECT_EQ(sizeof(kTable) / sizeof(kTable[0]), acting);
}

TEST(NvmfHostCtrlSm, DeletingAndOutOfRangeAreFinal)
{
	for (int e = 0; e <= WNH_EV_COUNT; e++) {
		struct wnh_trans t = wnh_ctrl_next(DEL, (enum wnh_ev)e);
		EXPECT_EQ(DEL, t.next);
		EXPECT_EQ(0u, t.act);
	}
	// 7: no state's value, yet inside the enum's range (values 0-5 give
	// it three bits); a value beyond that is undefined in C++.
	const auto kNoState = (enum wharf_nvmf_host_state)7;
	struct wnh_trans t = wnh_ctrl_next(kNoState, WNH_EV_LOSS);
	EXPECT_EQ(7, (int)t.next);
	EXPECT_EQ(0u, t.act);
	EXPECT_STREQ("?", wnh_ev_name(WNH_EV_COUNT));
	EXPECT_STREQ("?", wharf_nvmf_host_state_name(kNoState));
}

// Runs @evs from @s, collecting the actions; returns the final state.
enum wharf_nvmf_host_state Drive(enum wharf_nvmf_host_state s,
				 std::initializer_list<enum wnh_ev> evs,
				 unsigned *acts)
{
	*acts = 0;
	for (auto e : evs) {
		struct wnh_trans t = wnh_ctrl_next(s, e);
		*acts |= t.act;
		s = t.next;
	}
	return s;
}

TEST(NvmfHostCtrlSm, LossThenTwoFailedAttemptsThenBack)
{
	unsigned a;
	// A loss during the first bring-up is the connect call's, not a
	// recovery.
	EXPECT_EQ(NEW,
		  Drive(NEW, {WNH_EV_LOSS, WNH_EV_DOWN, WNH_EV_RETRY}, &a));
	EXPECT_EQ(0u, a);

	EXPECT_EQ(LIVE,
		  Drive(NEW,
			{WNH_EV_UP, WNH_EV_LOSS, WNH_EV_LOSS, WNH_EV_DOWN,
			 WNH_EV_RETRY, WNH_EV_LOSS, WNH_EV_DOWN, WNH_EV_RETRY,
			 WNH_EV_LOSS, WNH_EV_DOWN, WNH_EV_RETRY, WNH_EV_UP},
			&a));
	EXPECT_TRUE(a & WNH_ACT_RESUME);
	EXPECT_FALSE(a & WNH_ACT_FAIL_HELD);
}

TEST(NvmfHostCtrlSm, LossTimeoutFailsHeldInEitherRecoveryState)
{
	unsigned a;
	// While the queues are still closing ...
	EXPECT_EQ(DEAD, Drive(LIVE,
			      {WNH_EV_LOSS, WNH_EV_LOSS_TMO, WNH_EV_DOWN,
			       WNH_EV_RETRY, WNH_EV_UP},
			      &a));
	EXPECT_TRUE(a & WNH_ACT_FAIL_HELD);
	EXPECT_FALSE(a & (WNH_ACT_ATTEMPT | WNH_ACT_RESUME));
	// ... and between attempts: what the attempt opened is closed.
	EXPECT_EQ(DEAD, Drive(LIVE,
			      {WNH_EV_LOSS, WNH_EV_DOWN, WNH_EV_RETRY,
			       WNH_EV_LOSS_TMO, WNH_EV_UP},
			      &a));
	EXPECT_TRUE(a & WNH_ACT_FAIL_HELD);
	EXPECT_FALSE(a & WNH_ACT_RESUME);
	EXPECT_EQ(DEL, Drive(DEAD, {WNH_EV_DELETE, WNH_EV_RETRY}, &a));
	EXPECT_EQ((unsigned)WNH_ACT_STOP, a);
}

TEST(NvmfHostCtrlSm, FastFailKeepsReconnecting)
{
	unsigned a;
	EXPECT_EQ(LIVE, Drive(LIVE,
			      {WNH_EV_LOSS, WNH_EV_FAST_FAIL, WNH_EV_DOWN,
			       WNH_EV_FAST_FAIL, WNH_EV_RETRY, WNH_EV_UP},
			      &a));
	EXPECT_TRUE(a & WNH_ACT_FAST_FAIL);
	EXPECT_FALSE(a & WNH_ACT_FAIL_HELD);
	// A stale fast-fail once LIVE again does nothing.
	EXPECT_EQ(LIVE, Drive(LIVE, {WNH_EV_FAST_FAIL, WNH_EV_LOSS_TMO}, &a));
	EXPECT_EQ(0u, a);
}

TEST(NvmfHostCtrlSm, Backoff)
{
	EXPECT_EQ(2000u, wnh_backoff_ms(2000, 0));
	EXPECT_EQ(4000u, wnh_backoff_ms(2000, 1));
	EXPECT_EQ(8000u, wnh_backoff_ms(2000, 2));
	EXPECT_EQ(16000u, wnh_backoff_ms(2000, 3));
	EXPECT_EQ(16000u, wnh_backoff_ms(2000, 4));
	EXPECT_EQ(16000u, wnh_backoff_ms(2000, 1000000));
	EXPECT_EQ(1u, wnh_backoff_ms(0, 0));
	EXPECT_EQ(8u, wnh_backoff_ms(0, 77));
	// No overflow at the top of the option's range.
	EXPECT_EQ(8ull * UINT32_MAX, wnh_backoff_ms(UINT32_MAX, 64));
	EXPECT_EQ(2ull * UINT32_MAX, wnh_backoff_ms(UINT32_MAX, 1));
	// Monotonic, never below the option.
	for (uint32_t base : {1u, 10u, 500u, 2000u}) {
		uint64_t prev = 0;
		for (unsigned f = 0; f < 40; f++) {
			uint64_t d = wnh_backoff_ms(base, f);
			EXPECT_GE(d, prev);
			EXPECT_GE(d, base);
			EXPECT_LE(d, (uint64_t)WNH_BACKOFF_CAP * base);
			prev = d;
		}
	}
}

} // namespace
