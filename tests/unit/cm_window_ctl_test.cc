// The adaptive connect window's width (cm/window_ctl.h), driven with
// made-up handshake times.
#include <gtest/gtest.h>

extern "C" {
#include "cm/window_ctl.h"
}

namespace
{

constexpr uint64_t kMs = 1000000;

// Feeds one epoch (as many samples as the width asks) of @ns each.
unsigned Epoch(wcm_wctl *w, uint64_t ns)
{
	unsigned len =
		w->limit < WCM_WCTL_EPOCH_MAX ? w->limit : WCM_WCTL_EPOCH_MAX;
	unsigned limit = w->limit;

	for (unsigned i = 0; i < len; i++)
		limit = wcm_wctl_signal(w, WCM_WCTL_ESTABLISHED, ns);
	return limit;
}

TEST(WindowCtl, StartIsClampedToTheBounds)
{
	wcm_wctl w;

	wcm_wctl_init(&w, 32, 8, 1024);
	EXPECT_EQ(w.limit, 32u);
	wcm_wctl_init(&w, 4, 8, 1024);
	EXPECT_EQ(w.limit, 8u);
	wcm_wctl_init(&w, 5000, 8, 1024);
	EXPECT_EQ(w.limit, 1024u);
	wcm_wctl_init(&w, 5, 0, 0); // lo 0 is 1; hi below lo is lo
	EXPECT_EQ(w.lo, 1u);
	EXPECT_EQ(w.hi, 1u);
	EXPECT_EQ(w.limit, 1u);
}

TEST(WindowCtl, GrowsByHalfWhileTheTimeStaysFlat)
{
	wcm_wctl w;

	wcm_wctl_init(&w, 32, 8, 1024);
	// The first epoch sets the base and, being flat against itself,
	// grows.
	EXPECT_EQ(Epoch(&w, 10 * kMs), 48u);
	EXPECT_EQ(w.base_ns, 10 * kMs);
	EXPECT_EQ(Epoch(&w, 12 * kMs), 72u); // 1.2x the base: still flat
	EXPECT_EQ(Epoch(&w, 14 * kMs), 108u);
	EXPECT_EQ(w.grows, 3u);
	EXPECT_EQ(w.shrinks, 0u);
}

TEST(WindowCtl, GrowthStopsAtTheUpperBound)
{
	wcm_wctl w;

	wcm_wctl_init(&w, 32, 8, 100);
	for (int i = 0; i < 20; i++)
		Epoch(&w, 10 * kMs);
	EXPECT_EQ(w.limit, 100u);
}

TEST(WindowCtl, HoldsBetweenOneAndAHalfAndTwiceTheBase)
{
	wcm_wctl w;

	wcm_wctl_init(&w, 32, 8, 1024);
	Epoch(&w, 10 * kMs); // base 10 ms, width 48
	EXPECT_EQ(Epoch(&w, 18 * kMs), 48u);
	EXPECT_EQ(w.grows, 1u);
	EXPECT_EQ(w.shrinks, 0u);
}

TEST(WindowCtl, ShrinksWhenHandshakesQueue)
{
	wcm_wctl w;

	wcm_wctl_init(&w, 64, 8, 1024);
	Epoch(&w, 10 * kMs);		     // base 10 ms, 96
	EXPECT_EQ(Epoch(&w, 40 * kMs), 72u); // 4x: to 3/4
	EXPECT_EQ(Epoch(&w, 40 * kMs), 54u);
	EXPECT_EQ(w.shrinks, 2u);
	EXPECT_EQ(w.base_ns, 10 * kMs) << "the base is the lowest mean";
}

TEST(WindowCtl, AQueueThatBuildsSlowlyStillNarrowsIt)
{
	wcm_wctl w;

	wcm_wctl_init(&w, 32, 8, 1024);
	// Each round 10 % slower than the last, as a queue builds: the
	// window widens while within 3/2 of the base, then holds, then
	// narrows once the time passes twice the base.
	uint64_t ns = 10 * kMs;
	unsigned widest = 0;
	for (int i = 0; i < 12; i++, ns = ns * 11 / 10) {
		Epoch(&w, ns);
		widest = w.limit > widest ? w.limit : widest;
	}
	EXPECT_GT(w.grows, 0u);
	EXPECT_GT(w.shrinks, 0u);
	EXPECT_LT(w.limit, widest);
	EXPECT_EQ(w.base_ns, 10 * kMs);
}

TEST(WindowCtl, BusyOrTimeoutHalvesOncePerEpoch)
{
	wcm_wctl w;

	wcm_wctl_init(&w, 64, 8, 1024);
	EXPECT_EQ(wcm_wctl_signal(&w, WCM_WCTL_BUSY, 0), 32u);
	EXPECT_EQ(wcm_wctl_signal(&w, WCM_WCTL_TIMEOUT, 0), 32u)
		<< "a burst of refusals counts once";
	EXPECT_EQ(wcm_wctl_signal(&w, WCM_WCTL_BUSY, 0), 32u);
	// A new epoch (32 samples) later, the next refusal counts again.
	Epoch(&w, 30 * kMs);
	unsigned after = w.limit;
	EXPECT_EQ(wcm_wctl_signal(&w, WCM_WCTL_TIMEOUT, 0), after / 2);
	EXPECT_EQ(w.shrinks, 2u);
}

TEST(WindowCtl, NeverBelowTheLowerBound)
{
	wcm_wctl w;

	wcm_wctl_init(&w, 16, 8, 1024);
	for (int i = 0; i < 10; i++) {
		wcm_wctl_signal(&w, WCM_WCTL_TIMEOUT, 0);
		Epoch(&w, 10 * kMs * (i + 2)); // rising every epoch
	}
	EXPECT_GE(w.limit, 8u);
	for (int i = 0; i < 10; i++) {
		wcm_wctl_signal(&w, WCM_WCTL_BUSY, 0);
		w.backed_off = false;
	}
	EXPECT_EQ(w.limit, 8u);
}

TEST(WindowCtl, AFixedWindowNeverMoves)
{
	wcm_wctl w;

	wcm_wctl_init(&w, 64, 64, 64);
	EXPECT_EQ(wcm_wctl_signal(&w, WCM_WCTL_BUSY, 0), 64u);
	EXPECT_EQ(Epoch(&w, 10 * kMs), 64u);
	EXPECT_EQ(Epoch(&w, 100 * kMs), 64u);
	EXPECT_EQ(w.grows + w.shrinks, 0u);
}

TEST(WindowCtl, EpochsAreCappedForWideWindows)
{
	wcm_wctl w;

	wcm_wctl_init(&w, 1000, 8, 4096);
	for (unsigned i = 0; i < WCM_WCTL_EPOCH_MAX - 1; i++)
		wcm_wctl_signal(&w, WCM_WCTL_ESTABLISHED, 10 * kMs);
	EXPECT_EQ(w.limit, 1000u);
	EXPECT_EQ(wcm_wctl_signal(&w, WCM_WCTL_ESTABLISHED, 10 * kMs), 1500u);
}

} // namespace
