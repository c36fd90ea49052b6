// Placement policy on hwloc synthetic topologies (pure functions).
#include <gtest/gtest.h>

#include <errno.h>
#include <sched.h>

#include <vector>

extern "C" {
#include <wharf/numa.h>
}

namespace
{

// 2 packages, one NUMA node each, 4 cores x 2 hardware threads per node:
// node 0 = CPUs 0-7, node 1 = CPUs 8-15; core k = CPUs 2k, 2k+1.
constexpr const char *kTwoNodes = "pack:2 numa:1 core:4 pu:2";
// Same CPUs but a single NUMA node.
constexpr const char *kOneNode = "pack:2 core:4 pu:2";

class Synthetic
{
      public:
	explicit Synthetic(const char *desc)
	{
		struct wharf_numa_opts opts = {};
		opts.size = sizeof(opts);
		opts.synthetic = desc;
		err_ = wharf_numa_open(&opts, &numa_);
	}
	~Synthetic()
	{
		wharf_numa_close(numa_);
	}
	struct wharf_numa *get() const
	{
		return numa_;
	}
	int err() const
	{
		return err_;
	}

      private:
	struct wharf_numa *numa_ = nullptr;
	int err_;
};

std::vector<int> Place(const struct wharf_numa *numa, uint64_t local,
		       unsigned n)
{
	std::vector<int> cpus(n, -1);
	EXPECT_EQ(0, wharf_numa_place_shards(numa, local, n, cpus.data()));
	return cpus;
}

uint64_t NodesOf(const struct wharf_numa *numa, const std::vector<int> &cpus)
{
	uint64_t mask = 0;
	EXPECT_EQ(0,
		  wharf_numa_cpus_nodes(numa, cpus.data(), cpus.size(), &mask));
	return mask;
}

TEST(NumaTopo, TwoNodeSyntheticShape)
{
	Synthetic t(kTwoNodes);
	ASSERT_EQ(0, t.err());
	EXPECT_FALSE(wharf_numa_is_this_system(t.get()));
	EXPECT_EQ(2u, wharf_numa_node_count(t.get()));
	EXPECT_EQ(3u, wharf_numa_all_nodes(t.get()));
	EXPECT_EQ(16u, wharf_numa_cpu_count(t.get(), 0));
	EXPECT_EQ(8u, wharf_numa_core_count(t.get(), 0));
	EXPECT_EQ(4u, wharf_numa_core_count(t.get(), 1u << 1));
	EXPECT_EQ(8u, wharf_numa_cpu_count(t.get(), 1u << 0));

	int cpus[16];
	ASSERT_EQ(8, wharf_numa_node_cpus(t.get(), 1, cpus, 16));
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(8 + i, cpus[i]);
	EXPECT_EQ(8, wharf_numa_node_cpus(t.get(), 0, cpus, 2));
	EXPECT_EQ(-EINVAL, wharf_numa_node_cpus(t.get(), 2, cpus, 16));

	EXPECT_EQ(0, wharf_numa_cpu_node(t.get(), 7));
	EXPECT_EQ(1, wharf_numa_cpu_node(t.get(), 8));
	EXPECT_EQ(-EINVAL, wharf_numa_cpu_node(t.get(), 16));
	EXPECT_EQ(1, wharf_numa_node_os_index(t.get(), 1));
	EXPECT_EQ(-EINVAL, wharf_numa_node_os_index(t.get(), 2));
}

TEST(NumaTopo, OneNodeSynthetic)
{
	Synthetic t(kOneNode);
	ASSERT_EQ(0, t.err());
	EXPECT_EQ(1u, wharf_numa_node_count(t.get()));
	EXPECT_EQ(16u, wharf_numa_cpu_count(t.get(), 0));
	EXPECT_EQ(8u, wharf_numa_default_shards(t.get(), 0));
}

TEST(NumaTopo, CpusToNodes)
{
	Synthetic t(kTwoNodes);
	ASSERT_EQ(0, t.err());
	EXPECT_EQ(2u, NodesOf(t.get(), {8, 9, 15}));
	EXPECT_EQ(3u, NodesOf(t.get(), {0, 15}));
	uint64_t mask = 99;
	int bad[] = {3, 42};
	EXPECT_EQ(-EINVAL, wharf_numa_cpus_nodes(t.get(), bad, 2, &mask));
	EXPECT_EQ(99u, mask);
}

TEST(NumaTopo, MachineOnlyCallsRefuseSynthetic)
{
	Synthetic t(kTwoNodes);
	ASSERT_EQ(0, t.err());
	uint64_t nodes;
	EXPECT_EQ(-EOPNOTSUPP,
		  wharf_numa_device_nodes(t.get(), "mlx5_0", &nodes));
	EXPECT_EQ(-EOPNOTSUPP, wharf_numa_bind_thread(t.get(), 0));
	EXPECT_EQ(-EINVAL, wharf_numa_bind_thread(t.get(), 99));
}

TEST(NumaTopo, OptionsSizeRules)
{
	struct wharf_numa *numa = nullptr;
	struct {
		struct wharf_numa_opts opts;
		uint64_t future_field;
	} bigger = {};
	bigger.opts.size = sizeof(bigger);
	bigger.opts.synthetic = kTwoNodes;

	// A newer caller with its new field left zero is accepted...
	ASSERT_EQ(0, wharf_numa_open(&bigger.opts, &numa));
	EXPECT_EQ(2u, wharf_numa_node_count(numa));
	wharf_numa_close(numa);
	// ...but not when it asks for something we do not know.
	bigger.future_field = 1;
	EXPECT_EQ(-EINVAL, wharf_numa_open(&bigger.opts, &numa));

	// An older caller that only knew `size` gets this machine.
	struct wharf_numa_opts old = {};
	old.size = sizeof(size_t);
	old.synthetic = kTwoNodes; // beyond its size: must be ignored
	ASSERT_EQ(0, wharf_numa_open(&old, &numa));
	EXPECT_TRUE(wharf_numa_is_this_system(numa));
	wharf_numa_close(numa);

	old.size = 3;
	EXPECT_EQ(-EINVAL, wharf_numa_open(&old, &numa));
	struct wharf_numa_opts junk = {};
	junk.size = sizeof(junk);
	junk.synthetic = "not a topology";
	EXPECT_EQ(-EINVAL, wharf_numa_open(&junk, &numa));
}

TEST(NumaPlace, NicOnNodeOneFillsNodeOneCoresFirst)
{
	Synthetic t(kTwoNodes);
	ASSERT_EQ(0, t.err());
	// The NIC's local CPUs are node 1's.
	uint64_t local = NodesOf(t.get(), {8, 9, 10, 11, 12, 13, 14, 15});
	ASSERT_EQ(2u, local);

	EXPECT_EQ(4u, wharf_numa_default_shards(t.get(), local));
	// One hardware thread per node-1 core...
	EXPECT_EQ((std::vector<int>{8, 10, 12, 14}), Place(t.get(), local, 4));
	// ...then node 0's cores...
	EXPECT_EQ((std::vector<int>{8, 10, 12, 14, 0, 2, 4, 6}),
		  Place(t.get(), local, 8));
	// ...then the siblings, local node first, then wrap around.
	std::vector<int> all = Place(t.get(), local, 17);
	EXPECT_EQ((std::vector<int>{8, 10, 12, 14, 0, 2, 4, 6, 9, 11, 13, 15, 1,
				    3, 5, 7, 8}),
		  all);
}

TEST(NumaPlace, NicOnNodeZero)
{
	Synthetic t(kTwoNodes);
	ASSERT_EQ(0, t.err());
	EXPECT_EQ((std::vector<int>{0, 2, 4, 6, 8, 10}),
		  Place(t.get(), 1u << 0, 6));
}

TEST(NumaPlace, UnknownLocalityUsesAllCores)
{
	Synthetic t(kTwoNodes);
	ASSERT_EQ(0, t.err());
	EXPECT_EQ(8u, wharf_numa_default_shards(t.get(), 0));
	EXPECT_EQ(8u, wharf_numa_default_shards(t.get(), 3));
	EXPECT_EQ((std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14}),
		  Place(t.get(), 0, 8));
}

TEST(NumaPlace, OneNodeMachineIgnoresLocality)
{
	Synthetic t(kOneNode);
	ASSERT_EQ(0, t.err());
	EXPECT_EQ((std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14, 1}),
		  Place(t.get(), 1, 9));
}

TEST(NumaPlace, BadArguments)
{
	Synthetic t(kTwoNodes);
	ASSERT_EQ(0, t.err());
	int cpu;
	EXPECT_EQ(-EINVAL, wharf_numa_place_shards(t.get(), 0, 0, &cpu));
	EXPECT_EQ(-EINVAL, wharf_numa_place_shards(t.get(), 0, 1, nullptr));
}

TEST(NumaPick, PrefersLeastLoadedLocalShard)
{
	struct wharf_numa_shard_load s[] = {
		{0, 0}, {0, 1}, {1, 5}, {1, 3}, {1, 3},
	};
	// Node 1 local: shard 3 (load 3, first of the two 3s).
	EXPECT_EQ(3, wharf_numa_pick_shard(s, 5, 1u << 1, 10));
	// No penalty: the globally least loaded wins.
	EXPECT_EQ(0, wharf_numa_pick_shard(s, 5, 1u << 1, 0));
	// Penalty smaller than the gap: remote shard 0 (0 + 2 < 3).
	EXPECT_EQ(0, wharf_numa_pick_shard(s, 5, 1u << 1, 2));
	// Equal cost (remote 0 + 3 == local 3): the lower index wins.
	EXPECT_EQ(0, wharf_numa_pick_shard(s, 5, 1u << 1, 3));
	EXPECT_EQ(3, wharf_numa_pick_shard(s, 5, 1u << 1, 4));
	// Unknown locality: plain least load.
	EXPECT_EQ(0, wharf_numa_pick_shard(s, 5, 0, 1000));
}

TEST(NumaPick, SaturatesAndValidates)
{
	struct wharf_numa_shard_load s[] = {
		{0, 5},
		{1, UINT64_MAX - 1},
	};
	// 5 + penalty must not wrap around to 4.
	EXPECT_EQ(1, wharf_numa_pick_shard(s, 2, 1u << 1, UINT64_MAX));
	EXPECT_EQ(0, wharf_numa_pick_shard(s, 2, 1u << 0, UINT64_MAX));
	EXPECT_EQ(-EINVAL, wharf_numa_pick_shard(s, 0, 0, 0));
	EXPECT_EQ(-EINVAL, wharf_numa_pick_shard(nullptr, 2, 0, 0));
}

TEST(NumaPick, SpreadsConnectionsOverLocalShards)
{
	// Simulate 12 connections arriving for a NIC on node 1.
	struct wharf_numa_shard_load s[] = {
		{0, 0},
		{0, 0},
		{1, 0},
		{1, 0},
	};
	int hits[4] = {};
	for (int i = 0; i < 12; i++) {
		int k = wharf_numa_pick_shard(s, 4, 1u << 1, 4);
		ASSERT_GE(k, 0);
		hits[k]++;
		s[k].load++;
	}
	// Local shards take 4 each before a remote one costs the same;
	// then ties go to the lower index, so remote shards get one each.
	EXPECT_EQ(1, hits[0]);
	EXPECT_EQ(1, hits[1]);
	EXPECT_EQ(5, hits[2]);
	EXPECT_EQ(5, hits[3]);
}

} // namespace

// This machine, with the calling thread bound to one CPU (as taskset
// does): the snapshot has that CPU only, so placement and the default
// shard count stay inside the binding.
TEST(NumaThisSystem, FollowsTheCpuBinding)
{
	cpu_set_t all, one;
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	if (CPU_COUNT(&all) < 2)
		GTEST_SKIP() << "one CPU: no binding narrower than the machine";
	int last = -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all))
			last = c;
	CPU_ZERO(&one);
	CPU_SET(last, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));

	struct wharf_numa *numa = nullptr;
	int err = wharf_numa_open(nullptr, &numa);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	ASSERT_EQ(0, err);
	EXPECT_EQ(1u, wharf_numa_cpu_count(numa, 0));
	EXPECT_EQ(1u, wharf_numa_default_shards(numa, 0));
	std::vector<int> cpus(3, -1);
	ASSERT_EQ(0, wharf_numa_place_shards(numa, 0, 3, cpus.data()));
	for (int c : cpus)
		EXPECT_EQ(last, c);
	int first = last == 0 ? 1 : 0;
	EXPECT_LT(wharf_numa_cpu_node(numa, first), 0)
		<< "a CPU outside the binding is not in the snapshot";
	wharf_numa_close(numa);

	// Unbound again: every CPU.
	ASSERT_EQ(0, wharf_numa_open(nullptr, &numa));
	EXPECT_EQ((unsigned)CPU_COUNT(&all), wharf_numa_cpu_count(numa, 0));
	wharf_numa_close(numa);
}
