// The programs' toolbox (cli/cli.h): every spelling a tool takes and
// every mistake it refuses, at the edges.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

extern "C" {
#include "cli/cli.h"
}

TEST(CliU64, TakesDecimalInRange)
{
	uint64_t v = 7;
	EXPECT_EQ(0, cli_u64("0", 0, 10, &v));
	EXPECT_EQ(0u, v);
	EXPECT_EQ(0, cli_u64("10", 0, 10, &v));
	EXPECT_EQ(10u, v);
	EXPECT_EQ(0, cli_u64("18446744073709551615", 0, UINT64_MAX, &v));
	EXPECT_EQ(UINT64_MAX, v);
}

TEST(CliU64, RefusesWhatStrtoulWouldTake)
{
	uint64_t v = 7;
	for (const char *s : {"", "-1", "+1", " 1", "1 ", "1x", "0x10", "1k",
			      "18446744073709551616", "99999999999999999999"})
		EXPECT_EQ(-EINVAL, cli_u64(s, 0, UINT64_MAX, &v)) << s;
	EXPECT_EQ(-EINVAL, cli_u64(nullptr, 0, 1, &v));
	EXPECT_EQ(-EINVAL, cli_u64("1", 0, 1, nullptr));
	EXPECT_EQ(7u, v); // untouched on failure
}

TEST(CliU64, RangeBothEnds)
{
	uint64_t v;
	EXPECT_EQ(-EINVAL, cli_u64("0", 1, 5, &v));
	EXPECT_EQ(-EINVAL, cli_u64("6", 1, 5, &v));
	EXPECT_EQ(0, cli_u64("1", 1, 5, &v));
	EXPECT_EQ(0, cli_u64("5", 1, 5, &v));
}

TEST(CliU32, Bounded)
{
	uint32_t v = 0;
	EXPECT_EQ(0, cli_u32("4294967295", 0, UINT32_MAX, &v));
	EXPECT_EQ(UINT32_MAX, v);
	EXPECT_EQ(-EINVAL, cli_u32("4294967296", 0, UINT32_MAX, &v));
}

TEST(CliSize, Suffixes)
{
	uint64_t v;
	const struct {
		const char *s;
		uint64_t want;
	} ok[] = {
		{"4096", 4096},
		{"4k", 4096},
		{"4K", 4096},
		{"2m", 2u << 20},
		{"2M", 2u << 20},
		{"3g", 3ull << 30},
		{"1T", 1ull << 40},
		{"0k", 0},
		{"16777215t", 16777215ull << 40},
	};
	for (const auto &c : ok) {
		ASSERT_EQ(0, cli_size(c.s, 0, UINT64_MAX, &v)) << c.s;
		EXPECT_EQ(c.want, v) << c.s;
	}
}

TEST(CliSize, RefusesOverflowAndJunk)
{
	uint64_t v = 7;
	for (const char *s :
	     {"", "k", "4kb", "4 k", "-4k", "4p", "1.5m", "16777216t",
	      "17179869184g", "18446744073709551616"})
		EXPECT_EQ(-EINVAL, cli_size(s, 0, UINT64_MAX, &v)) << s;
	EXPECT_EQ(7u, v);
}

TEST(CliSize, RangeAfterTheSuffix)
{
	uint64_t v;
	EXPECT_EQ(0, cli_size("128k", 4096, 128 << 10, &v));
	EXPECT_EQ(-EINVAL, cli_size("129k", 4096, 128 << 10, &v));
	EXPECT_EQ(-EINVAL, cli_size("4095", 4096, 128 << 10, &v));
}

TEST(CliCpuList, NumbersAndRanges)
{
	int c[16];
	unsigned n = 0;
	ASSERT_EQ(0, cli_cpu_list("0-3,8,10-11", 4095, c, 16, &n));
	const int want[] = {0, 1, 2, 3, 8, 10, 11};
	ASSERT_EQ(7u, n);
	for (unsigned i = 0; i < n; i++)
		EXPECT_EQ(want[i], c[i]);
	ASSERT_EQ(0, cli_cpu_list("5", 4095, c, 16, &n));
	EXPECT_EQ(1u, n);
	EXPECT_EQ(5, c[0]);
	ASSERT_EQ(0, cli_cpu_list("3,1", 4095, c, 16, &n)); // the order given
	EXPECT_EQ(3, c[0]);
	EXPECT_EQ(1, c[1]);
}

TEST(CliCpuList, Refuses)
{
	int c[4];
	unsigned n = 9;
	for (const char *s : {"", ",", "1,", ",1", "1,,2", "3-1", "1-", "-1",
			      "1-2-3", "64", "0-64", "a", "1 ,2"})
		EXPECT_EQ(-EINVAL, cli_cpu_list(s, 63, c, 4, &n)) << s;
	EXPECT_EQ(-E2BIG, cli_cpu_list("0-4", 63, c, 4, &n)); // five CPUs
	EXPECT_EQ(-E2BIG, cli_cpu_list("1,1,1,1,1", 63, c, 4, &n));
	EXPECT_EQ(-EINVAL, cli_cpu_list("0", CLI_CPU_LIMIT, c, 4, &n));
	EXPECT_EQ(9u, n);
	EXPECT_EQ(0, cli_cpu_list("0-3", 63, c, 4, &n));
	EXPECT_EQ(4u, n);
	EXPECT_EQ(0, cli_cpu_list("63", 63, c, 4, &n));
}

TEST(CliVersion, NamesProgramAndVersion)
{
	char buf[128] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	ASSERT_NE(nullptr, f);
	cli_version(f, "wharf-test");
	fclose(f);
	std::string s(buf);
	EXPECT_EQ(0u, s.find("wharf-test (wharf) ")) << s;
	EXPECT_EQ('\n', s.back());
	EXPECT_GT(s.size(), strlen("wharf-test (wharf) \n")); // a version
}

TEST(CliPollMode, Names)
{
	int m = -1;
	EXPECT_EQ(0, cli_poll_mode("event", &m));
	EXPECT_EQ(0, m);
	EXPECT_EQ(0, cli_poll_mode("busy", &m));
	EXPECT_EQ(1, m);
	EXPECT_EQ(0, cli_poll_mode("adaptive", &m));
	EXPECT_EQ(2, m);
	m = 7;
	EXPECT_EQ(-EINVAL, cli_poll_mode("spin", &m));
	EXPECT_EQ(-EINVAL, cli_poll_mode("", &m));
	EXPECT_EQ(7, m) << "untouched on failure";
}
