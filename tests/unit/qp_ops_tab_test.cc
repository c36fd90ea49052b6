/* The res's table of distinct QP callback sets (qp/ops_tab.h). */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

extern "C" {
#include "qp/ops_tab.h"
}

namespace
{

int recv_a(wharf_qp *, void *, const wharf_qp_recv *, void *)
{
	return 0;
}
int recv_b(wharf_qp *, void *, const wharf_qp_recv *, void *)
{
	return 1;
}
void closed_a(wharf_qp *, void *)
{
}

wharf_qp_ops ops_of(decltype(wharf_qp_ops::on_recv) r,
		    decltype(wharf_qp_ops::on_closed) c)
{
	wharf_qp_ops o{};
	o.size = sizeof(o);
	o.on_recv = r;
	o.on_closed = c;
	return o;
}

} // namespace

TEST(QpOpsTab, EmptySetIsIndexZero)
{
	wqp_ops_tab t;
	ASSERT_EQ(wqp_ops_tab_init(&t, nullptr, WQP_OPS_TAB_MAX), 0);
	uint16_t idx = 7;
	wharf_qp_ops none = ops_of(nullptr, nullptr);
	ASSERT_EQ(wqp_ops_tab_intern(&t, &none, &idx), 0);
	EXPECT_EQ(idx, 0u);
	EXPECT_EQ(wqp_ops_tab_get(&t, 0)->on_recv, nullptr);
	EXPECT_EQ(t.n, 1u);
	wqp_ops_tab_fini(&t);
}

TEST(QpOpsTab, SameCallbacksShareAnEntry)
{
	wqp_ops_tab t;
	ASSERT_EQ(wqp_ops_tab_init(&t, nullptr, WQP_OPS_TAB_MAX), 0);
	wharf_qp_ops a = ops_of(recv_a, closed_a);
	wharf_qp_ops a2 = a;
	a2.size = 16; /* the caller's size is not part of the set */
	wharf_qp_ops b = ops_of(recv_b, closed_a);
	wharf_qp_ops c = ops_of(recv_a, nullptr);
	uint16_t ia, ia2, ib, ic;
	ASSERT_EQ(wqp_ops_tab_intern(&t, &a, &ia), 0);
	ASSERT_EQ(wqp_ops_tab_intern(&t, &b, &ib), 0);
	ASSERT_EQ(wqp_ops_tab_intern(&t, &a2, &ia2), 0);
	ASSERT_EQ(wqp_ops_tab_intern(&t, &c, &ic), 0);
	EXPECT_EQ(ia, ia2);
	EXPECT_NE(ia, 0u);
	EXPECT_NE(ia, ib);
	EXPECT_NE(ia, ic);
	EXPECT_NE(ib, ic);
	EXPECT_EQ(t.n, 4u);
	EXPECT_EQ(wqp_ops_tab_get(&t, ia)->on_recv, recv_a);
	EXPECT_EQ(wqp_ops_tab_get(&t, ia)->on_closed, closed_a);
	EXPECT_EQ(wqp_ops_tab_get(&t, ib)->on_recv, recv_b);
	EXPECT_EQ(wqp_ops_tab_get(&t, ic)->on_closed, nullptr);
	EXPECT_EQ(wqp_ops_tab_get(&t, ia)->size, sizeof(wharf_qp_ops));
	wqp_ops_tab_fini(&t);
}

TEST(QpOpsTab, BadMaxRefused)
{
	wqp_ops_tab t;
	EXPECT_EQ(wqp_ops_tab_init(&t, nullptr, 1), -EINVAL);
	EXPECT_EQ(wqp_ops_tab_init(&t, nullptr, WQP_OPS_TAB_MAX + 1), -EINVAL);
}

/* Growth keeps every entry at its index; a full table refuses a new set
 * (the res's is as full as 16-bit indexes go) instead of handing out an
 * index of another set. */
TEST(QpOpsTab, FullTableRefusesNewSets)
{
	const uint32_t max = 11; /* grows 4 -> 8 -> 11 */
	wqp_ops_tab t;
	ASSERT_EQ(wqp_ops_tab_init(&t, nullptr, max), 0);
	wharf_qp_ops o{};
	o.size = sizeof(o);
	auto fake = [](uintptr_t i) {
		/* Distinct values standing for distinct callbacks; they
		 * are compared, never called. */
		return reinterpret_cast<decltype(o.on_closed)>(i * 16);
	};
	for (uint32_t i = 1; i < max; i++) {
		o.on_closed = fake(i);
		uint16_t idx;
		ASSERT_EQ(wqp_ops_tab_intern(&t, &o, &idx), 0) << i;
		ASSERT_EQ(idx, i);
	}
	EXPECT_EQ(t.n, max);
	o.on_closed = fake(max);
	uint16_t idx = 0;
	EXPECT_EQ(wqp_ops_tab_intern(&t, &o, &idx), -ENOSPC);
	for (uint32_t i = 1; i < max; i++) {
		o.on_closed = fake(i);
		ASSERT_EQ(wqp_ops_tab_intern(&t, &o, &idx), 0);
		EXPECT_EQ(idx, i);
	}
	wqp_ops_tab_fini(&t);
}
