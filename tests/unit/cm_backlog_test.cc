// The listen backlog default: the system maximum from rdma_ucm's sysctl
// file, and the fallback whenever that file does not hold one.
#include <gtest/gtest.h>

#include <climits>
#include <cstdio>
#include <string>
#include <unistd.h>

extern "C" {
#include "cm/backlog.h"
}

namespace
{

class CmBacklog : public ::testing::Test
{
      protected:
	std::string path_;

	void SetUp() override
	{
		char tmpl[] = "/tmp/wharf-backlog-XXXXXX";
		int fd = mkstemp(tmpl);
		ASSERT_GE(fd, 0);
		close(fd);
		path_ = tmpl;
	}
	void TearDown() override
	{
		unlink(path_.c_str());
	}
	int Read(const std::string &text, int fallback = 77)
	{
		FILE *f = fopen(path_.c_str(), "w");
		EXPECT_NE(nullptr, f);
		if (!f)
			return -1;
		fputs(text.c_str(), f);
		fclose(f);
		return wcm_backlog_read(path_.c_str(), fallback);
	}
};

TEST_F(CmBacklog, TheSysctlValueIsTheBacklog)
{
	EXPECT_EQ(1024, Read("1024\n"));
	EXPECT_EQ(4096, Read("4096"));
	EXPECT_EQ(1, Read("  1 \n"));
	EXPECT_EQ(INT_MAX, Read(std::to_string(INT_MAX) + "\n"));
}

TEST_F(CmBacklog, AnythingElseFallsBack)
{
	EXPECT_EQ(77, Read(""));
	EXPECT_EQ(77, Read("\n"));
	EXPECT_EQ(77, Read("0\n"));
	EXPECT_EQ(77, Read("-5\n"));
	EXPECT_EQ(77, Read("12abc\n"));
	EXPECT_EQ(77, Read("abc\n"));
	EXPECT_EQ(77, Read("1024 2048\n"));
	EXPECT_EQ(77, Read(std::to_string((long long)INT_MAX + 1) + "\n"));
	EXPECT_EQ(77, Read("99999999999999999999999999\n"));
}

TEST_F(CmBacklog, MissingFileOrNullPathFallsBack)
{
	EXPECT_EQ(9, wcm_backlog_read("/nonexistent/wharf/max_backlog", 9));
	EXPECT_EQ(9, wcm_backlog_read(nullptr, 9));
}

} // namespace
