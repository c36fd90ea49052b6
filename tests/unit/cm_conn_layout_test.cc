// A connection's memory: a passive connection's request private data is
// sized to what arrived and follows the connection to its owner shard;
// the handshake's state (the request, an idle timer) is freed once the
// handshake is over, and a later wait gets its timer back; an active
// connection's callbacks are its own copy.
#include <gtest/gtest.h>

#include "tests/unit/cm_conn_layout_shim.h"

namespace
{

TEST(CmConnLayout, RequestDataMovesWithTheConnection)
{
	for (size_t len : {size_t(0), size_t(32), size_t(56), size_t(255)}) {
		cm_layout_result r;
		cm_layout_run(len, &r);
		ASSERT_EQ(0, r.err) << len;
		EXPECT_EQ(len, r.pdata_len);
		EXPECT_TRUE(r.pdata_intact) << len;
		// Not into the shard-0 copy the move freed.
		EXPECT_TRUE(r.pdata_points_home) << len;
		EXPECT_TRUE(r.part_follows) << len;
	}
}

TEST(CmConnLayout, TheHandshakesStateGoesWhenItIsOver)
{
	cm_layout_result r;
	cm_layout_run(56, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_TRUE(r.kept_in_handshake);
	EXPECT_TRUE(r.freed_when_over);
	EXPECT_TRUE(r.timer_freed);
	EXPECT_TRUE(r.timer_recreated);
}

TEST(CmConnLayout, MoreThanAnyTransportReportsIsRefused)
{
	cm_layout_result r;
	cm_layout_run(56, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_TRUE(r.oversize_refused);
}

TEST(CmConnLayout, AnActiveConnectionCallsItsOwnCallbacks)
{
	cm_layout_result r;
	cm_layout_run(0, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_TRUE(r.active_ops_own);
}

} // namespace
