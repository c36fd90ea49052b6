// The latency histogram's buckets and percentiles (targets/nvmf/latency.h).
#include <stdint.h>

#include <gtest/gtest.h>

extern "C" {
#include "targets/nvmf/latency.h"
}

namespace
{

TEST(NvmfLatency, BucketsArePowersOfTwoMicroseconds)
{
	EXPECT_EQ(0u, nvmf_lat_bucket(0));
	EXPECT_EQ(0u, nvmf_lat_bucket(1999)); // 1.999 us: under 2
	EXPECT_EQ(1u, nvmf_lat_bucket(2000));
	EXPECT_EQ(1u, nvmf_lat_bucket(3999));
	EXPECT_EQ(2u, nvmf_lat_bucket(4000));
	EXPECT_EQ(9u, nvmf_lat_bucket(1000 * 1000)); // 1 ms: [512, 1024)
	EXPECT_EQ(NVMF_LAT_BUCKETS - 1u, nvmf_lat_bucket(UINT64_MAX));
	EXPECT_EQ(2u, nvmf_lat_bucket_le_us(0));
	EXPECT_EQ(1024u, nvmf_lat_bucket_le_us(9));
	EXPECT_EQ(UINT64_MAX, nvmf_lat_bucket_le_us(NVMF_LAT_BUCKETS - 1));
}

TEST(NvmfLatency, PercentilesAreTheBucketBounds)
{
	uint64_t c[NVMF_LAT_BUCKETS] = {0};

	EXPECT_EQ(0u, nvmf_lat_percentile_us(c, 500)) << "no commands";
	c[3] = 90; // [8, 16) us
	c[7] = 9;  // [128, 256) us
	c[12] = 1; // [4096, 8192) us
	EXPECT_EQ(16u, nvmf_lat_percentile_us(c, 500));
	EXPECT_EQ(16u, nvmf_lat_percentile_us(c, 900));
	EXPECT_EQ(256u, nvmf_lat_percentile_us(c, 901));
	EXPECT_EQ(256u, nvmf_lat_percentile_us(c, 990));
	EXPECT_EQ(8192u, nvmf_lat_percentile_us(c, 999));
	EXPECT_EQ(8192u, nvmf_lat_percentile_us(c, 1000));
	EXPECT_EQ(16u, nvmf_lat_percentile_us(c, 0)) << "the first command";
	uint64_t slow[NVMF_LAT_BUCKETS] = {0};
	slow[NVMF_LAT_BUCKETS - 1] = 1;
	EXPECT_EQ(1u << (NVMF_LAT_BUCKETS - 1),
		  nvmf_lat_percentile_us(slow, 500))
		<< "the open bucket reports its lower bound";
}

} // namespace
