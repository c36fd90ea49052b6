// Unit tests for cm/conn_table (IDs, the two RCU tables) and cm/conn_rcu.
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <atomic>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "cm/conn_rcu.h"
#include "cm/conn_table.h"
}

namespace
{

// --- IDs --------------------------------------------------------------------

TEST(CmConnId, ShardInHigh16BitsSequenceInLow48)
{
	uint64_t id = 0;
	ASSERT_EQ(0, wcm_conn_id_make(3, 5, &id));
	EXPECT_EQ((UINT64_C(3) << 48) | 5, id);
	EXPECT_EQ(3u, wcm_conn_id_shard(id));
	EXPECT_EQ(5u, wcm_conn_id_seq(id));
	ASSERT_EQ(0, wcm_conn_id_make(0xFFFF, WCM_CONN_ID_SEQ_MASK, &id));
	EXPECT_EQ(UINT64_MAX, id);
	EXPECT_EQ(0xFFFFu, wcm_conn_id_shard(id));
	EXPECT_EQ(WCM_CONN_ID_SEQ_MASK, wcm_conn_id_seq(id));
}

TEST(CmConnId, OutOfRangeFieldsAreEinvalAndZeroIsNeverAnId)
{
	uint64_t id = 7;
	EXPECT_EQ(-EINVAL, wcm_conn_id_make(0x10000, 1, &id));
	EXPECT_EQ(-EINVAL, wcm_conn_id_make(0, 0, &id)); // would be 0
	EXPECT_EQ(-EINVAL, wcm_conn_id_make(1, WCM_CONN_ID_SEQ_MASK + 1, &id));
	EXPECT_EQ(-EINVAL, wcm_conn_id_make(1, 1, nullptr));
	EXPECT_EQ(7u, id);
}

TEST(CmConnId, GeneratorCountsFromOneAndNeverWraps)
{
	wcm_conn_id_gen g;
	uint64_t id;
	ASSERT_EQ(0, wcm_conn_id_gen_init(&g, 9));
	ASSERT_EQ(0, wcm_conn_id_gen_next(&g, &id));
	EXPECT_EQ(9u, wcm_conn_id_shard(id));
	EXPECT_EQ(1u, wcm_conn_id_seq(id));
	ASSERT_EQ(0, wcm_conn_id_gen_next(&g, &id));
	EXPECT_EQ(2u, wcm_conn_id_seq(id));
	g.next_seq = WCM_CONN_ID_SEQ_MASK;
	ASSERT_EQ(0, wcm_conn_id_gen_next(&g, &id));
	EXPECT_EQ(WCM_CONN_ID_SEQ_MASK, wcm_conn_id_seq(id));
	EXPECT_EQ(-EOVERFLOW, wcm_conn_id_gen_next(&g, &id));
	EXPECT_EQ(-EOVERFLOW, wcm_conn_id_gen_next(&g, &id));
	EXPECT_EQ(-EINVAL, wcm_conn_id_gen_init(&g, 0x10000));
	EXPECT_EQ(-EINVAL, wcm_conn_id_gen_next(nullptr, &id));
}

// --- tables -----------------------------------------------------------------

struct Conn {
	wcm_conn_entry entry;
	int value;
};

std::atomic<int> g_freed;

void FreeConn(wcm_conn_entry *e)
{
	delete caa_container_of(e, Conn, entry);
	g_freed++;
}

Conn *NewConn(int value)
{
	Conn *c = new Conn();
	memset(&c->entry, 0, sizeof(c->entry));
	c->value = value;
	return c;
}

Conn *Of(wcm_conn_entry *e)
{
	return e ? caa_container_of(e, Conn, entry) : nullptr;
}

class CmConnTable : public ::testing::Test
{
      protected:
	void SetUp() override
	{
		ASSERT_EQ(0, wcm_rcu_register_thread());
		ASSERT_EQ(0, wcm_conn_table_create(16, &t_));
		g_freed = 0;
	}
	void TearDown() override
	{
		EXPECT_EQ(0, wcm_conn_table_destroy(t_));
		wcm_rcu_barrier();
		wcm_rcu_unregister_thread();
	}
	wcm_conn_entry *Lookup(uint64_t id)
	{
		urcu_qsbr_read_lock();
		wcm_conn_entry *e = wcm_conn_table_lookup(t_, id);
		urcu_qsbr_read_unlock();
		return e;
	}
	wcm_conn_entry *LookupQp(uint32_t dev, uint32_t qpn)
	{
		urcu_qsbr_read_lock();
		wcm_conn_entry *e = wcm_conn_table_lookup_qp(t_, dev, qpn);
		urcu_qsbr_read_unlock();
		return e;
	}
	wcm_conn_table *t_ = nullptr;
};

TEST_F(CmConnTable, InsertLookupRemoveFreesAfterGracePeriod)
{
	Conn *a = NewConn(1), *b = NewConn(2);
	ASSERT_EQ(0, wcm_conn_table_insert(t_, &a->entry, 100));
	ASSERT_EQ(0, wcm_conn_table_insert(t_, &b->entry, 200));
	EXPECT_EQ(a, Of(Lookup(100)));
	EXPECT_EQ(b, Of(Lookup(200)));
	EXPECT_EQ(nullptr, Lookup(300));
	EXPECT_EQ(100u, wcm_conn_entry_id(Lookup(100)));
	ASSERT_EQ(0, wcm_conn_table_remove(t_, &a->entry, FreeConn));
	EXPECT_EQ(nullptr, Lookup(100));
	EXPECT_EQ(b, Of(Lookup(200)));
	wcm_rcu_barrier();
	EXPECT_EQ(1, g_freed.load());
	ASSERT_EQ(0, wcm_conn_table_remove(t_, &b->entry, FreeConn));
	wcm_rcu_barrier();
	EXPECT_EQ(2, g_freed.load());
}

TEST_F(CmConnTable, DuplicateIdIsEexistAndLeavesTheFirst)
{
	Conn *a = NewConn(1), *b = NewConn(2);
	ASSERT_EQ(0, wcm_conn_table_insert(t_, &a->entry, 7));
	EXPECT_EQ(-EEXIST, wcm_conn_table_insert(t_, &b->entry, 7));
	EXPECT_EQ(a, Of(Lookup(7)));
	EXPECT_EQ(-ENOENT, wcm_conn_table_remove(t_, &b->entry, FreeConn));
	delete b; // never published: no grace period needed
	ASSERT_EQ(0, wcm_conn_table_remove(t_, &a->entry, FreeConn));
}

TEST_F(CmConnTable, MisuseIsReportedNotCorrupting)
{
	Conn *a = NewConn(1);
	EXPECT_EQ(-EINVAL, wcm_conn_table_insert(t_, &a->entry, 0));
	EXPECT_EQ(-EINVAL, wcm_conn_table_insert(nullptr, &a->entry, 1));
	EXPECT_EQ(-EINVAL, wcm_conn_table_insert(t_, nullptr, 1));
	EXPECT_EQ(-ENOENT, wcm_conn_table_bind_qp(t_, &a->entry, 0, 5));
	ASSERT_EQ(0, wcm_conn_table_insert(t_, &a->entry, 1));
	EXPECT_EQ(-EALREADY, wcm_conn_table_insert(t_, &a->entry, 2));
	EXPECT_EQ(nullptr, Lookup(2));
	EXPECT_EQ(-EINVAL, wcm_conn_table_remove(t_, &a->entry, nullptr));
	EXPECT_EQ(-ENOENT, wcm_conn_table_unbind_qp(t_, &a->entry));
	EXPECT_EQ(-EBUSY, wcm_conn_table_destroy(t_));
	ASSERT_EQ(0, wcm_conn_table_remove(t_, &a->entry, FreeConn));
	// a is now owned by the pending callback; only flags are read.
	EXPECT_EQ(-ENOENT, wcm_conn_table_remove(t_, &a->entry, FreeConn));
	EXPECT_EQ(-ENOENT, wcm_conn_table_bind_qp(t_, &a->entry, 0, 5));
	wcm_rcu_barrier();
	EXPECT_EQ(1, g_freed.load());
}

TEST_F(CmConnTable, QpTableKeyedByDeviceAndQpNumber)
{
	Conn *a = NewConn(1), *b = NewConn(2), *c = NewConn(3);
	ASSERT_EQ(0, wcm_conn_table_insert(t_, &a->entry, 1));
	ASSERT_EQ(0, wcm_conn_table_insert(t_, &b->entry, 2));
	ASSERT_EQ(0, wcm_conn_table_insert(t_, &c->entry, 3));
	ASSERT_EQ(0, wcm_conn_table_bind_qp(t_, &a->entry, 0, 0x11));
	ASSERT_EQ(0, wcm_conn_table_bind_qp(t_, &b->entry, 1, 0x11));
	EXPECT_EQ(-EEXIST, wcm_conn_table_bind_qp(t_, &c->entry, 0, 0x11));
	EXPECT_EQ(-EINVAL, wcm_conn_table_bind_qp(t_, &c->entry, 0, 1u << 24));
	EXPECT_EQ(a, Of(LookupQp(0, 0x11)));
	EXPECT_EQ(b, Of(LookupQp(1, 0x11)));
	EXPECT_EQ(nullptr, LookupQp(2, 0x11));
	EXPECT_EQ(nullptr, LookupQp(0, 0x12));
	EXPECT_EQ(-EALREADY, wcm_conn_table_bind_qp(t_, &a->entry, 0, 0x12));
	for (Conn *x : {a, b, c}) {
		ASSERT_EQ(0, wcm_conn_table_remove(t_, &x->entry, FreeConn));
	}
}

TEST_F(CmConnTable, UnboundQpNumberCanGoToAnotherConnection)
{
	Conn *a = NewConn(1), *b = NewConn(2);
	ASSERT_EQ(0, wcm_conn_table_insert(t_, &a->entry, 1));
	ASSERT_EQ(0, wcm_conn_table_insert(t_, &b->entry, 2));
	ASSERT_EQ(0, wcm_conn_table_bind_qp(t_, &a->entry, 0, 77));
	ASSERT_EQ(0, wcm_conn_table_unbind_qp(t_, &a->entry));
	EXPECT_EQ(nullptr, LookupQp(0, 77));
	EXPECT_EQ(a, Of(Lookup(1))); // still known by ID
	ASSERT_EQ(0, wcm_conn_table_bind_qp(t_, &b->entry, 0, 77));
	EXPECT_EQ(b, Of(LookupQp(0, 77)));
	// An entry is bound once in its life.
	EXPECT_EQ(-EALREADY, wcm_conn_table_bind_qp(t_, &a->entry, 0, 78));
	ASSERT_EQ(0, wcm_conn_table_remove(t_, &a->entry, FreeConn));
	ASSERT_EQ(0, wcm_conn_table_remove(t_, &b->entry, FreeConn));
}

TEST_F(CmConnTable, RemoveWithdrawsFromBothTables)
{
	Conn *a = NewConn(1);
	ASSERT_EQ(0, wcm_conn_table_insert(t_, &a->entry, 5));
	ASSERT_EQ(0, wcm_conn_table_bind_qp(t_, &a->entry, 3, 9));
	ASSERT_EQ(0, wcm_conn_table_remove(t_, &a->entry, FreeConn));
	EXPECT_EQ(nullptr, Lookup(5));
	EXPECT_EQ(nullptr, LookupQp(3, 9));
}

TEST_F(CmConnTable, GrowsWellBeyondItsInitialSize)
{
	std::vector<Conn *> v;
	for (int i = 1; i <= 5000; i++) {
		v.push_back(NewConn(i));
		ASSERT_EQ(0, wcm_conn_table_insert(t_, &v.back()->entry, i));
		ASSERT_EQ(0,
			  wcm_conn_table_bind_qp(t_, &v.back()->entry, 0, i));
	}
	for (int i = 1; i <= 5000; i++) {
		ASSERT_EQ(i, Of(Lookup(i))->value);
		ASSERT_EQ(i, Of(LookupQp(0, i))->value);
	}
	for (Conn *c : v) {
		ASSERT_EQ(0, wcm_conn_table_remove(t_, &c->entry, FreeConn));
	}
	wcm_rcu_barrier();
	EXPECT_EQ(5000, g_freed.load());
}

TEST(CmConnRcu, RegisterTwiceIsEalready)
{
	ASSERT_EQ(0, wcm_rcu_register_thread());
	EXPECT_EQ(-EALREADY, wcm_rcu_register_thread());
	wcm_rcu_unregister_thread();
	wcm_rcu_unregister_thread(); // a no-op now
	ASSERT_EQ(0, wcm_rcu_register_thread());
	wcm_rcu_unregister_thread();
}

TEST(CmConnTableCreate, NullOutIsEinvalNullTableDestroyIsNoop)
{
	EXPECT_EQ(-EINVAL, wcm_conn_table_create(1, nullptr));
	EXPECT_EQ(0, wcm_conn_table_destroy(nullptr));
}

} // namespace
