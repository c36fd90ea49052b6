// The cm runtime's connection registry under churn: readers on every
// shard and an application thread look connections up (by id and by QP)
// while every shard publishes and retires its own.  Run it under
// --config=tsan (races between a reader and a free or reuse) and
// --config=asan as well.  See cm_torture_shim.c.
#include <gtest/gtest.h>

#include "tests/unit/cm_torture_shim.h"

TEST(CmRuntimeTorture, LookupsWhileConnectionsChurnOnEveryShard)
{
	struct cm_torture_result r;

	cm_torture_run(4, 3000, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(r.created, r.destroyed);
	EXPECT_GT(r.created, 4u * 1000);
	EXPECT_GT(r.app_lookups, 0u);
	EXPECT_GT(r.hits, 0u); // the readers did find live connections
	EXPECT_EQ(0u, r.bad);
	EXPECT_EQ(0u, r.left_in_table);
}
