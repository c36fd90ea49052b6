// Every options struct of the public headers has an _init call that zeroes
// it and sets its size (and, where the struct embeds one, the size of the
// embedded wharf_conn_qp_opts).
#include <gtest/gtest.h>

#include <cstring>

extern "C" {
#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/numa.h>
#include <wharf/qp.h>
}

namespace
{

// The checks read the very object the _init call wrote, byte by byte:
// padding is only zero there (a copy of a struct need not copy its
// padding, and under ASan it did not).

// Fills @s with garbage and runs @init on it.
template <typename T, typename Init> void Fill(T *s, Init init)
{
	memset(s, 0xab, sizeof(*s));
	init(s);
}

template <typename T> bool AllZero(const T *s)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < sizeof(*s); i++)
		if (p[i])
			return false;
	return true;
}

#define EXPECT_INIT(type, init)                                                \
	do {                                                                   \
		type s;                                                        \
		Fill(&s, init);                                                \
		EXPECT_EQ(sizeof(type), s.size) << #init;                      \
		s.size = 0;                                                    \
		EXPECT_TRUE(AllZero(&s)) << #init;                             \
		init(nullptr);                                                 \
	} while (0)

TEST(ApiOptsInit, ZeroesAndSetsTheSize)
{
	EXPECT_INIT(wharf_ctx_opts, wharf_ctx_opts_init);
	EXPECT_INIT(wharf_numa_opts, wharf_numa_opts_init);
	EXPECT_INIT(wharf_buf_pool_opts, wharf_buf_pool_opts_init);
	EXPECT_INIT(wharf_qp_dev_opts, wharf_qp_dev_opts_init);
	EXPECT_INIT(wharf_qp_res_opts, wharf_qp_res_opts_init);
	EXPECT_INIT(wharf_qp_opts, wharf_qp_opts_init);
	EXPECT_INIT(wharf_cm_opts, wharf_cm_opts_init);
	EXPECT_INIT(wharf_conn_param, wharf_conn_param_init);
}

TEST(ApiOptsInit, EmbeddedQpOptsCarryTheirSize)
{
	wharf_listen_opts lo;
	Fill(&lo, wharf_listen_opts_init);
	EXPECT_EQ(sizeof(lo), lo.size);
	EXPECT_EQ(sizeof(lo.qp), lo.qp.size);
	lo.size = 0;
	lo.qp.size = 0;
	EXPECT_TRUE(AllZero(&lo));

	wharf_connect_opts co;
	Fill(&co, wharf_connect_opts_init);
	EXPECT_EQ(sizeof(co), co.size);
	EXPECT_EQ(sizeof(co.qp), co.qp.size);
	EXPECT_EQ(WHARF_SHARD_ANY, co.shard);
	co.size = 0;
	co.qp.size = 0;
	co.shard = 0;
	EXPECT_TRUE(AllZero(&co));
}

} // namespace
