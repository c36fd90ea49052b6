// wharf-nvmf-perf's pure pieces: the latency histogram (buckets,
// percentiles, merge) and the command line.
#include <errno.h>

#include <gtest/gtest.h>

#include <wharf/nvmf_host.h>

#include "initiators/nvmf/perf.h"
#include "initiators/nvmf/perf_hist.h"

namespace
{

TEST(NvmfPerfHist, BucketsAreOrderedAndTight)
{
	unsigned prev = 0;

	for (uint64_t v = 0; v < 100000; v++) {
		unsigned i = ph_index(v);

		ASSERT_GE(i, prev) << v;
		ASSERT_LE(ph_lower(i), v) << v;
		ASSERT_GT(ph_lower(i + 1), v) << v;
		prev = i;
	}
	EXPECT_LT(ph_index(UINT64_MAX), (unsigned)PH_BUCKETS);
	// About 3%: the bucket of 1,000,000 ns is narrower than 32 us.
	unsigned i = ph_index(1000000);
	EXPECT_LE(ph_lower(i + 1) - ph_lower(i), 32768u);
}

TEST(NvmfPerfHist, Percentiles)
{
	static struct perf_hist h, other;

	ph_init(&h);
	EXPECT_EQ(0u, ph_percentile(&h, 0.5));
	for (uint64_t v = 1; v <= 1000; v++)
		ph_add(&h, v * 1000); // 1 us .. 1 ms
	EXPECT_EQ(1000u, h.count);
	EXPECT_EQ(1000u, h.min);
	EXPECT_EQ(1000000u, h.max);
	uint64_t p50 = ph_percentile(&h, 0.5);
	uint64_t p99 = ph_percentile(&h, 0.99);
	EXPECT_GE(p50, 500000u);
	EXPECT_LE(p50, 500000u * 103 / 100);
	EXPECT_GE(p99, 990000u);
	EXPECT_LE(p99, 1000000u) << "capped at the maximum";
	EXPECT_EQ(1000000u, ph_percentile(&h, 1.0));

	ph_init(&other);
	ph_add(&other, 5);
	ph_add(&other, 7000000);
	ph_merge(&h, &other);
	EXPECT_EQ(1002u, h.count);
	EXPECT_EQ(5u, h.min);
	EXPECT_EQ(7000000u, h.max);
	EXPECT_EQ(5u, ph_percentile(&h, 0.0001));
}

int Parse(std::vector<const char *> v, struct perf_args *a)
{
	char err[128];
	v.insert(v.begin(), "wharf-nvmf-perf");
	return perf_parse((int)v.size(), (char **)v.data(), a, err,
			  sizeof(err));
}

TEST(NvmfPerfArgs, DefaultsAndValues)
{
	struct perf_args a;

	ASSERT_EQ(0, Parse({"--traddr", "1.2.3.4", "--subnqn", "nqn.x"}, &a));
	EXPECT_STREQ("4420", a.host.trsvcid);
	EXPECT_EQ(32u, a.qd);
	EXPECT_EQ(4096u, a.io_size);
	EXPECT_EQ(PERF_RANDREAD, a.pattern);
	EXPECT_EQ(10u, a.time_s);
	ASSERT_EQ(0, Parse({"--traddr", "::1", "--subnqn", "n", "--qd", "64",
			    "--io-size", "128k", "--pattern", "randwrite",
			    "--time", "3", "--queues", "2", "--verify",
			    "--json", "--trsvcid", "4421"},
			   &a));
	EXPECT_EQ(64u, a.qd);
	EXPECT_EQ(131072u, a.io_size);
	EXPECT_EQ(PERF_RANDWRITE, a.pattern);
	EXPECT_EQ(2u, a.host.queues);
	EXPECT_TRUE(a.verify);
	EXPECT_TRUE(a.json);
	EXPECT_STREQ("4421", a.host.trsvcid);
	EXPECT_FALSE(a.zero_copy);
	EXPECT_FALSE(a.submit_thread);
	ASSERT_EQ(0, Parse({"--traddr", "a", "--subnqn", "n", "--zero-copy",
			    "--submit-thread", "--verify"},
			   &a));
	EXPECT_TRUE(a.zero_copy);
	EXPECT_TRUE(a.submit_thread);
	EXPECT_TRUE(a.verify);
	ASSERT_EQ(0, Parse({"--traddr", "a", "--subnqn", "n", "--cpus", "1,3",
			    "--poll", "busy"},
			   &a));
	ASSERT_EQ(2u, a.ncpus);
	EXPECT_EQ(1, a.cpus[0]);
	EXPECT_EQ(3, a.cpus[1]);
	EXPECT_EQ(1, a.poll);
	ASSERT_EQ(0, Parse({"--help"}, &a));
	EXPECT_TRUE(a.help);
	// --discover needs the address only.
	ASSERT_EQ(0, Parse({"--traddr", "a", "--discover"}, &a));
	EXPECT_TRUE(a.discover);
	EXPECT_EQ(nullptr, a.host.subnqn);
	EXPECT_EQ(-EINVAL, Parse({"--discover"}, &a));
}

TEST(NvmfPerfArgs, Refusals)
{
	struct perf_args a;

	EXPECT_EQ(-EINVAL, Parse({"--traddr", "1.2.3.4"}, &a));
	EXPECT_EQ(-EINVAL,
		  Parse({"--traddr", "a", "--subnqn", "n", "--qd", "0"}, &a));
	EXPECT_EQ(-EINVAL,
		  Parse({"--traddr", "a", "--subnqn", "n", "--pattern", "trim"},
			&a));
	EXPECT_EQ(-EINVAL,
		  Parse({"--traddr", "a", "--subnqn", "n", "--io-size", "12x"},
			&a));
	EXPECT_EQ(-EINVAL, Parse({"--traddr", "a", "--subnqn", "n", "--trsvcid",
				  "70000"},
				 &a));
	EXPECT_EQ(-EINVAL,
		  Parse({"--traddr", "a", "--subnqn", "n", "--bogus"}, &a));
	EXPECT_EQ(-EINVAL, Parse({"--traddr"}, &a));
	EXPECT_EQ(-EINVAL,
		  Parse({"--traddr", "a", "--subnqn", "n", "--cpus", "1,,2"},
			&a));
	EXPECT_EQ(-EINVAL,
		  Parse({"--traddr", "a", "--subnqn", "n", "--poll", "spin"},
			&a));
}

TEST(NvmfPerfArgs, GetoptSpellingsAndVersion)
{
	struct perf_args a;

	// --opt=value as well as --opt value; options after the others.
	ASSERT_EQ(0, Parse({"--traddr=1.2.3.4", "--subnqn", "n", "--qd=8",
			    "--io-size=1m", "--cpus=0-2,5"},
			   &a));
	EXPECT_STREQ("1.2.3.4", a.host.traddr);
	EXPECT_EQ(8u, a.qd);
	EXPECT_EQ(1u << 20, a.io_size);
	ASSERT_EQ(4u, a.ncpus);
	EXPECT_EQ(2, a.cpus[2]);
	EXPECT_EQ(5, a.cpus[3]);
	ASSERT_EQ(0, Parse({"--version"}, &a));
	EXPECT_TRUE(a.version);
	// A count takes no size suffix, a number no sign; no stray argument.
	EXPECT_EQ(-EINVAL,
		  Parse({"--traddr", "a", "--subnqn", "n", "--qd", "1k"}, &a));
	EXPECT_EQ(
		-EINVAL,
		Parse({"--traddr", "a", "--subnqn", "n", "--nsid", "-1"}, &a));
	EXPECT_EQ(-EINVAL,
		  Parse({"--traddr", "a", "--subnqn", "n", "--nsid", "0"}, &a));
	EXPECT_EQ(-EINVAL,
		  Parse({"--traddr", "a", "--subnqn", "n", "extra"}, &a));
	// The recovery options in nvme-cli's seconds, its short forms too.
	ASSERT_EQ(0,
		  Parse({"-a", "a", "-n", "n", "-l", "60", "-c", "0.3"}, &a));
	EXPECT_EQ(60000u, a.host.ctrl_loss_tmo_ms);
	EXPECT_EQ(300u, a.host.reconnect_delay_ms);
	ASSERT_EQ(0, Parse({"--traddr", "a", "--subnqn", "n"}, &a));
	EXPECT_EQ(0u, a.host.ctrl_loss_tmo_ms);
}

} // namespace
