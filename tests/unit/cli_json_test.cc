// The programs' JSON documents (cli/json.h): nesting, escapes, numbers,
// and every misuse reported rather than printed.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

extern "C" {
#include "cli/json.h"
}

namespace
{

// What @fn writes, and cli_json_finish()'s verdict in @rc.
std::string Doc(cli_json_style style, const std::function<void(cli_json *)> &fn,
		int *rc)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cli_json j;
	cli_json_init(&j, f, style);
	fn(&j);
	*rc = cli_json_finish(&j);
	fclose(f);
	std::string s(buf, len);
	free(buf);
	return s;
}

TEST(CliJson, NestedObjectsArraysAndEscapes)
{
	int rc = -1;
	std::string s = Doc(
		CLI_JSON_PRETTY,
		[](cli_json *j) {
			cli_json_obj(j, nullptr);
			cli_json_str(j, "name", "a \"b\"\\\n\x01");
			cli_json_u64(j, "n", 42);
			cli_json_i64(j, "errno", -110);
			cli_json_num(j, "x", 0.5);
			cli_json_num(j, "inf", INFINITY);
			cli_json_num(j, "nan", NAN);
			cli_json_bool(j, "ok", true);
			cli_json_str(j, "none", nullptr);
			cli_json_arr(j, "empty");
			cli_json_end(j);
			cli_json_arr(j, "pts");
			cli_json_arr(j, nullptr);
			cli_json_u64(j, nullptr, 1);
			cli_json_num(j, nullptr, 2.25);
			cli_json_end(j);
			cli_json_end(j);
			cli_json_end(j);
		},
		&rc);
	EXPECT_EQ(0, rc);
	EXPECT_EQ("{\n"
		  "  \"name\": \"a \\\"b\\\"\\\\\\n\\u0001\",\n"
		  "  \"n\": 42,\n"
		  "  \"errno\": -110,\n"
		  "  \"x\": 0.5,\n"
		  "  \"inf\": null,\n"
		  "  \"nan\": null,\n"
		  "  \"ok\": true,\n"
		  "  \"none\": null,\n"
		  "  \"empty\": [],\n"
		  "  \"pts\": [\n"
		  "    [\n"
		  "      1,\n"
		  "      2.25\n"
		  "    ]\n"
		  "  ]\n"
		  "}\n",
		  s);
}

TEST(CliJson, CompactIsOneLineInInsertionOrder)
{
	int rc = -1;
	std::string s = Doc(
		CLI_JSON_COMPACT,
		[](cli_json *j) {
			cli_json_obj(j, nullptr);
			cli_json_str(j, "tool", "t");
			cli_json_u64(j, "z", 1);
			cli_json_u64(j, "a", 2);
			cli_json_obj(j, "lat");
			cli_json_num(j, "p50", 12.5);
			cli_json_end(j);
			cli_json_end(j);
		},
		&rc);
	EXPECT_EQ(0, rc);
	EXPECT_EQ("{\"tool\":\"t\",\"z\":1,\"a\":2,\"lat\":{\"p50\":12.5}}\n",
		  s);
}

TEST(CliJson, TenSignificantDigitsAndHugeCounters)
{
	int rc = -1;
	std::string s = Doc(
		CLI_JSON_COMPACT,
		[](cli_json *j) {
			cli_json_arr(j, nullptr);
			cli_json_num(j, nullptr, 1.0 / 3);
			cli_json_u64(j, nullptr, INT64_MAX);
			cli_json_u64(j, nullptr, UINT64_MAX);
			cli_json_end(j);
		},
		&rc);
	EXPECT_EQ(0, rc);
	EXPECT_EQ("[0.3333333333,9223372036854775807,1.844674407e19]\n", s);
}

TEST(CliJson, BytesThatAreNotUtf8BecomeQuestionMarks)
{
	int rc = -1;
	std::string s = Doc(
		CLI_JSON_COMPACT,
		[](cli_json *j) {
			cli_json_obj(j, nullptr);
			cli_json_str(j, "nqn",
				     "a\xff"
				     "b");
			cli_json_str(j, "utf8", "\xc3\xa9");
			cli_json_end(j);
		},
		&rc);
	EXPECT_EQ(0, rc);
	EXPECT_EQ("{\"nqn\":\"a?b\",\"utf8\":\"\xc3\xa9\"}\n", s);
}

TEST(CliJson, MisuseIsReportedAndNothingHalfPrinted)
{
	int rc = 0;
	// A scalar outside any container.
	EXPECT_EQ("",
		  Doc(
			  CLI_JSON_COMPACT,
			  [](cli_json *j) { cli_json_u64(j, "n", 1); }, &rc));
	EXPECT_EQ(-EINVAL, rc);
	// A member of an object without a key: the rest still prints.
	rc = 0;
	EXPECT_EQ("{\"b\":2}\n", Doc(
					 CLI_JSON_COMPACT,
					 [](cli_json *j) {
						 cli_json_obj(j, nullptr);
						 cli_json_u64(j, nullptr, 1);
						 cli_json_u64(j, "b", 2);
						 cli_json_end(j);
					 },
					 &rc));
	EXPECT_EQ(-EINVAL, rc);
	// Left open: not printed, freed.
	rc = 0;
	EXPECT_EQ("", Doc(
			      CLI_JSON_PRETTY,
			      [](cli_json *j) {
				      cli_json_obj(j, nullptr);
				      cli_json_arr(j, "a");
				      cli_json_obj(j, nullptr);
				      cli_json_u64(j, "n", 1);
			      },
			      &rc));
	EXPECT_EQ(-EINVAL, rc);
	// One close too many.
	rc = 0;
	Doc(
		CLI_JSON_COMPACT,
		[](cli_json *j) {
			cli_json_arr(j, nullptr);
			cli_json_end(j);
			cli_json_end(j);
		},
		&rc);
	EXPECT_EQ(-EINVAL, rc);
}

TEST(CliJson, NestingBeyondTheLimitIsRefusedButBalanced)
{
	int rc = 0;
	std::string s = Doc(
		CLI_JSON_COMPACT,
		[](cli_json *j) {
			for (int i = 0; i < CLI_JSON_DEPTH + 2; i++)
				cli_json_arr(j, nullptr);
			cli_json_u64(j, nullptr, 7);
			for (int i = 0; i < CLI_JSON_DEPTH + 2; i++)
				cli_json_end(j);
		},
		&rc);
	EXPECT_EQ(-E2BIG, rc);
	std::string want;
	for (int i = 0; i < CLI_JSON_DEPTH; i++)
		want += "[";
	for (int i = 0; i < CLI_JSON_DEPTH; i++)
		want += "]";
	EXPECT_EQ(want + "\n", s);
}

TEST(CliJson, AStreamThatRefusesIsAnError)
{
	FILE *f = fopen("/dev/full", "w");
	ASSERT_NE(nullptr, f);
	setvbuf(f, nullptr, _IONBF, 0);
	cli_json j;
	cli_json_init(&j, f, CLI_JSON_COMPACT);
	cli_json_obj(&j, nullptr);
	cli_json_u64(&j, "n", 1);
	cli_json_end(&j);
	EXPECT_EQ(-EIO, cli_json_finish(&j));
	fclose(f);
}

} // namespace

namespace
{

void Tiny(cli_json *j, const void *arg)
{
	cli_json_obj(j, nullptr);
	cli_json_str(j, "v", static_cast<const char *>(arg));
	cli_json_end(j);
}

TEST(CliJson, WriteFillsAFileAndReportsOpenFailures)
{
	std::string path =
		std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR")
						  : "/tmp") +
		"/cli_json_write.json";
	ASSERT_EQ(0, cli_json_write(path.c_str(), CLI_JSON_COMPACT, Tiny, "x"));
	FILE *f = fopen(path.c_str(), "r");
	ASSERT_NE(nullptr, f);
	char buf[64] = {};
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	EXPECT_EQ("{\"v\":\"x\"}\n", std::string(buf, n));
	EXPECT_EQ(-ENOENT, cli_json_write("/nonexistent/dir/x.json",
					  CLI_JSON_COMPACT, Tiny, "x"));
}

} // namespace
