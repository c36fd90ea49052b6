/*
 * In the 2-node soft-RoCE guest: a context with one shard per CPU puts its
 * shards on both NUMA nodes where the placement policy says, each thread
 * pinned and its memory bound (checked with get_mempolicy(2)), and shard
 * arenas back registered-buffer pools on rxe0's PD.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <set>
#include <vector>

#include "tests/guest/guest_env.h"
#include "tests/unit/core_test_util.h"

extern "C" {
#include <wharf/core.h>
#include <wharf/numa.h>
}

namespace
{

using wharf_guest::kRxeDev;
using wharf_test::MakeCtx;
using wharf_test::Opts;
using wharf_test::RunOn;

constexpr unsigned long kMaskBits = 1024;

struct Policy {
	int mode = -1;
	std::vector<int> nodes; /* OS indexes in the mask */
};

/* The calling thread's policy, or (with @addr) the policy of that page. */
Policy GetPolicy(void *addr = nullptr)
{
	unsigned long mask[kMaskBits / 64] = {};
	Policy p;
	if (syscall(SYS_get_mempolicy, &p.mode, mask, kMaskBits + 1, addr,
		    addr ? MPOL_F_ADDR : 0)) {
		ADD_FAILURE() << "get_mempolicy: " << strerror(errno);
		return p;
	}
	for (unsigned long i = 0; i < kMaskBits; i++)
		if (mask[i / 64] >> (i % 64) & 1)
			p.nodes.push_back((int)i);
	return p;
}

/* The node the page holding @addr is on (the page must be touched). */
int PageNode(void *addr)
{
	int node = -1;
	if (syscall(SYS_get_mempolicy, &node, nullptr, 0, addr,
		    MPOL_F_NODE | MPOL_F_ADDR))
		ADD_FAILURE() << "get_mempolicy: " << strerror(errno);
	return node;
}

struct Rxe {
	struct ibv_context *verbs = nullptr;
	struct ibv_pd *pd = nullptr;
	Rxe()
	{
		int n = 0;
		struct ibv_device **list = ibv_get_device_list(&n);
		for (int i = 0; list && i < n && !verbs; i++)
			if (!strcmp(ibv_get_device_name(list[i]), kRxeDev))
				verbs = ibv_open_device(list[i]);
		if (list)
			ibv_free_device_list(list);
		if (verbs)
			pd = ibv_alloc_pd(verbs);
	}
	~Rxe()
	{
		if (pd)
			ibv_dealloc_pd(pd);
		if (verbs)
			ibv_close_device(verbs);
	}
};

TEST(NumaShards, OneShardPerCpuSpreadsOverBothNodesAndBindsMemory)
{
	WHARF_REQUIRE_GUEST();

	struct wharf_numa *numa = nullptr;
	ASSERT_EQ(0, wharf_numa_open(nullptr, &numa));
	ASSERT_EQ(2u, wharf_numa_node_count(numa))
		<< "the guest must boot with 2 NUMA nodes";
	unsigned ncpus = wharf_numa_cpu_count(numa, 0);
	// rxe has no PCI locality: every node counts as local.
	uint64_t local = 0;
	ASSERT_EQ(0, wharf_numa_device_nodes(numa, kRxeDev, &local));
	EXPECT_EQ(wharf_numa_all_nodes(numa), local);
	std::vector<int> expected(ncpus);
	ASSERT_EQ(0, wharf_numa_place_shards(numa, 0, ncpus, expected.data()));
	wharf_numa_close(numa);

	struct wharf_ctx *ctx = MakeCtx(Opts([&](struct wharf_ctx_opts &o) {
		o.nshards = ncpus;
		o.device = kRxeDev;
	}));
	ASSERT_NE(nullptr, ctx);
	numa = wharf_ctx_numa(ctx);
	ASSERT_EQ(ncpus, wharf_ctx_shard_count(ctx));

	std::set<unsigned> nodes;
	for (unsigned i = 0; i < ncpus; i++) {
		struct wharf_shard *shard = wharf_ctx_shard(ctx, i);
		unsigned node = wharf_shard_node(shard);
		int os_node = wharf_numa_node_os_index(numa, node);
		EXPECT_EQ(expected[i], wharf_shard_cpu(shard)) << "shard " << i;
		EXPECT_EQ(wharf_numa_cpu_node(numa, wharf_shard_cpu(shard)),
			  (int)node);
		nodes.insert(node);

		int cpu = -1, page_node = -1;
		Policy thread_policy, page_policy;
		RunOn(shard, [&] {
			cpu = sched_getcpu();
			thread_policy = GetPolicy();
			// Arena memory: bound to the node whoever touches it.
			char *p = static_cast<char *>(
				wharf_numa_alloc(wharf_shard_arena(shard),
						 1 << 20, 4096, false));
			ASSERT_NE(nullptr, p);
			memset(p, 1, 1 << 20);
			page_policy = GetPolicy(p);
			page_node = PageNode(p + (1 << 19));
			wharf_numa_free(wharf_shard_arena(shard), p);
		});
		EXPECT_EQ(wharf_shard_cpu(shard), cpu) << "shard " << i;
		EXPECT_EQ(MPOL_BIND, thread_policy.mode) << "shard " << i;
		EXPECT_EQ(std::vector<int>{os_node}, thread_policy.nodes);
		EXPECT_EQ(MPOL_BIND, page_policy.mode);
		EXPECT_EQ(std::vector<int>{os_node}, page_policy.nodes);
		EXPECT_EQ(os_node, page_node) << "shard " << i;
	}
	EXPECT_EQ(2u, nodes.size()) << "shards must land on both nodes";
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

TEST(NumaShards, BufferPoolRegisteredOnRxe0PerShard)
{
	WHARF_REQUIRE_GUEST();

	Rxe rxe;
	ASSERT_NE(nullptr, rxe.verbs) << "no " << kRxeDev;
	ASSERT_NE(nullptr, rxe.pd);
	struct wharf_ctx *ctx = MakeCtx(
		Opts([](struct wharf_ctx_opts &o) { o.device = kRxeDev; }));
	ASSERT_NE(nullptr, ctx);
	struct wharf_numa *numa = wharf_ctx_numa(ctx);

	for (unsigned i = 0; i < wharf_ctx_shard_count(ctx); i++) {
		struct wharf_shard *shard = wharf_ctx_shard(ctx, i);
		int os_node =
			wharf_numa_node_os_index(numa, wharf_shard_node(shard));
		RunOn(shard, [&] {
			struct wharf_buf_pool_opts po = {};
			po.size = sizeof(po);
			po.arena = wharf_shard_arena(shard);
			po.pd = rxe.pd;
			po.buf_size = 4096;
			po.count = 64;
			struct wharf_buf_pool *pool = nullptr;
			ASSERT_EQ(0, wharf_buf_pool_create(&po, &pool));
			struct ibv_mr *mr = wharf_buf_pool_mr(pool);
			ASSERT_NE(nullptr, mr);
			EXPECT_EQ(rxe.pd, mr->pd);
			EXPECT_EQ(mr->lkey, wharf_buf_pool_lkey(pool));
			EXPECT_EQ(wharf_buf_pool_buf(pool, 0), mr->addr);
			EXPECT_EQ(64u * 4096, mr->length);

			std::vector<void *> bufs;
			for (int b = 0; b < 64; b++) {
				void *buf = wharf_buf_pool_get(pool);
				ASSERT_NE(nullptr, buf);
				memset(buf, b, 4096);
				EXPECT_EQ(os_node, PageNode(buf));
				bufs.push_back(buf);
			}
			EXPECT_EQ(nullptr, wharf_buf_pool_get(pool));
			for (void *buf : bufs)
				EXPECT_EQ(0, wharf_buf_pool_put(pool, buf));
			wharf_buf_pool_destroy(pool);
		});
	}
	ASSERT_EQ(0, wharf_ctx_destroy(ctx));
}

} // namespace
