// bench/storm's pure pieces: options, the reject/kill choices, outcome
// accounting, percentiles and step rows, the cmtime table parser (on
// output captured from the stock cmtime in the soft-RoCE guest) and the
// JSON writer.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/storm/storm.h"

namespace
{

int Parse(std::vector<std::string> args_in, storm_opts *o, std::string *err)
{
	// The parsed options point into argv (as into a real main's): keep
	// every argument vector alive for the whole test program.  A deque
	// never moves what it already holds.
	static std::deque<std::vector<std::string>> keep;
	keep.push_back(std::move(args_in));
	std::vector<std::string> &args = keep.back();
	std::vector<char *> argv;
	static char prog[] = "storm";
	argv.push_back(prog);
	for (auto &a : args)
		argv.push_back(&a[0]);
	char buf[256] = "";
	storm_opts_init(o);
	int rc = storm_opts_parse(o, (int)argv.size(), argv.data(), buf,
				  sizeof(buf));
	if (err)
		*err = buf;
	return rc;
}

TEST(StormOpts, Defaults)
{
	storm_opts o;
	ASSERT_EQ(0, Parse({}, &o, nullptr));
	EXPECT_EQ(2000u, o.conns);
	EXPECT_EQ(1u, o.clients); // one process, as cmtime's client
	ASSERT_EQ(0, Parse({"--conns", "30000"}, &o, nullptr));
	EXPECT_EQ(3u, o.clients); // one per 10,000
	ASSERT_EQ(0,
		  Parse({"--conns", "30000", "--clients", "1"}, &o, nullptr));
	EXPECT_EQ(1u, o.clients); // as told
	EXPECT_EQ(0u, o.shards);
	EXPECT_EQ((unsigned)STORM_V_ALL, o.variants);
	EXPECT_EQ(nullptr, o.json);
	EXPECT_FALSE(o.help);
}

TEST(StormOpts, GetoptSpellingsAndVersion)
{
	storm_opts o;
	std::string err;
	ASSERT_EQ(0, Parse({"--conns=300", "--clients", "3", "--window=none",
			    "--json=out.json"},
			   &o, &err))
		<< err;
	EXPECT_EQ(300u, o.conns);
	EXPECT_EQ(3u, o.clients);
	EXPECT_EQ((unsigned)STORM_WINDOW_NONE, o.window);
	EXPECT_STREQ("out.json", o.json);
	ASSERT_EQ(0, Parse({"--version"}, &o, nullptr));
	EXPECT_TRUE(o.version);
	EXPECT_EQ(-EINVAL, Parse({"--conns", "+5"}, &o, &err));
	EXPECT_NE(std::string::npos, err.find("--conns")) << err;
	EXPECT_EQ(-EINVAL, Parse({"--conns"}, &o, &err));
	EXPECT_NE(std::string::npos, err.find("missing value")) << err;
}

TEST(StormOpts, EveryOption)
{
	storm_opts o;
	ASSERT_EQ(0,
		  Parse({"--conns",   "500",	 "--clients",	"5",
			 "--shards",  "3",	 "--ramp",	"250.5",
			 "--reject",  "0.1",	 "--kill",	"0.2",
			 "--json",    "x.json",	 "--variants",	"wharf1,cmtime",
			 "--timeout", "30",	 "--addr",	"10.0.0.1",
			 "--cmtime",  "/bin/cm", "--share-cpus"},
			&o, nullptr));
	EXPECT_TRUE(o.share_cpus);
	EXPECT_EQ(500u, o.conns);
	EXPECT_EQ(5u, o.clients);
	EXPECT_EQ(3u, o.shards);
	EXPECT_DOUBLE_EQ(250.5, o.ramp);
	EXPECT_DOUBLE_EQ(0.1, o.reject);
	EXPECT_DOUBLE_EQ(0.2, o.kill);
	EXPECT_STREQ("x.json", o.json);
	EXPECT_EQ((unsigned)(STORM_V_WHARF1 | STORM_V_CMTIME), o.variants);
	EXPECT_EQ(30u, o.timeout_s);
	EXPECT_STREQ("10.0.0.1", o.addr);
	EXPECT_STREQ("/bin/cm", o.cmtime);
}

TEST(StormOpts, WindowIsANumberOrNone)
{
	storm_opts o;
	ASSERT_EQ(0, Parse({}, &o, nullptr));
	EXPECT_EQ(0u, o.window); // wharf's default: adaptive
	ASSERT_EQ(0, Parse({"--window", "16"}, &o, nullptr));
	EXPECT_EQ(16u, o.window);
	ASSERT_EQ(0, Parse({"--window", "adaptive"}, &o, nullptr));
	EXPECT_EQ(0u, o.window);
	ASSERT_EQ(0, Parse({"--window", "none"}, &o, nullptr));
	EXPECT_EQ((unsigned)STORM_WINDOW_NONE, o.window);
}

TEST(StormOpts, QuickUnlessGiven)
{
	storm_opts o;
	ASSERT_EQ(0, Parse({"--quick"}, &o, nullptr));
	EXPECT_EQ(100u, o.conns);
	EXPECT_EQ(2u, o.clients);
	ASSERT_EQ(0, Parse({"--conns", "60", "--quick"}, &o, nullptr));
	EXPECT_EQ(60u, o.conns);
	EXPECT_EQ(2u, o.clients);
}

TEST(StormOpts, HelpIsNotAnError)
{
	storm_opts o;
	ASSERT_EQ(0, Parse({"--help"}, &o, nullptr));
	EXPECT_TRUE(o.help);
}

TEST(StormOpts, ClientsAtRunsEveryVariantButKillsNone)
{
	storm_opts o;
	ASSERT_EQ(0, Parse({"--clients-at", "198.18.0.2:7600"}, &o, nullptr));
	EXPECT_STREQ("198.18.0.2:7600", o.clients_at);
	// cmtime's client runs at the relay too.
	EXPECT_EQ(unsigned(STORM_V_WHARF | STORM_V_WHARF1 | STORM_V_CMTIME),
		  o.variants);
	ASSERT_EQ(0, Parse({"--clients-at", "h:1", "--variants", "wharf1"}, &o,
			   nullptr));
	EXPECT_EQ(unsigned(STORM_V_WHARF1), o.variants);
	std::string err;
	// A killed client would be a process on the relay's machine.
	EXPECT_EQ(-EINVAL,
		  Parse({"--clients-at", "h:1", "--kill", "0.5"}, &o, &err));
	EXPECT_EQ(-EINVAL, Parse({"--clients-at", "nohostport"}, &o, &err));
}

TEST(StormOpts, BadValuesAreEinvalWithAMessage)
{
	const std::vector<std::vector<std::string>> bad = {
		{"--conns", "0"},
		{"--conns", "-5"},
		{"--conns", "12x"},
		{"--conns", ""},
		{"--conns"},
		{"--clients", "0"},
		{"--reject", "1.5"},
		{"--reject", "-0.1"},
		{"--kill", "nan"},
		{"--kill", "2"},
		{"--ramp", "-1"},
		{"--shards", "0"},
		{"--variants", "foo"},
		{"--variants", ","},
		{"--timeout", "0"},
		{"--window", "0"},
		{"--window", "some"},
		{"--window"},
		{"--bogus"},
		{"conns"},
		{"--conns", "10", "--clients", "11"},
	};
	for (const auto &args : bad) {
		storm_opts o;
		std::string err;
		std::string joined;
		for (auto &a : args)
			joined += a + " ";
		EXPECT_EQ(-EINVAL, Parse(args, &o, &err)) << joined;
		EXPECT_FALSE(err.empty()) << joined;
	}
}

TEST(StormChoices, RejectExactlyTheFraction)
{
	for (double f : {0.0, 0.1, 0.25, 0.333, 1.0}) {
		for (unsigned n : {1u, 10u, 97u, 1000u}) {
			unsigned k = 0;
			for (unsigned g = 0; g < n; g++)
				k += storm_should_reject(g, f);
			EXPECT_EQ((unsigned)(n * f + 1e-9), k)
				<< "f=" << f << " n=" << n;
		}
	}
}

TEST(StormChoices, KillCount)
{
	EXPECT_EQ(0u, storm_kill_count(4, 0));
	EXPECT_EQ(1u, storm_kill_count(4, 0.01)); // at least one
	EXPECT_EQ(1u, storm_kill_count(5, 0.2));
	EXPECT_EQ(2u, storm_kill_count(10, 0.2));
	EXPECT_EQ(3u, storm_kill_count(4, 1.0)); // never every client
	EXPECT_EQ(1u, storm_kill_count(1, 0.5));
}

storm_conn Conn(enum storm_outcome o, uint64_t start = 0, uint64_t est = 0)
{
	storm_conn c = {};
	c.outcome = (uint8_t)o;
	c.t[STORM_T_START] = start;
	c.t[STORM_T_EST] = est;
	return c;
}

TEST(StormOutcomes, EveryAttemptAccountedFor)
{
	std::vector<storm_conn> cs = {Conn(STORM_OUT_ESTABLISHED),
				      Conn(STORM_OUT_TIMED_OUT),
				      Conn(STORM_OUT_KILLED)};
	storm_conn app = Conn(STORM_OUT_REJECTED), busy = app, other = app;
	app.rej_app = true;
	busy.rej_busy = true;
	other.rej_reason = 10;
	cs.push_back(app);
	cs.push_back(busy);
	cs.push_back(other);
	storm_outcomes o = {};
	storm_outcomes_add(&o, cs.data(), cs.size());
	EXPECT_EQ(6u, o.attempts);
	EXPECT_EQ(1u, o.n[STORM_OUT_ESTABLISHED]);
	EXPECT_EQ(3u, o.n[STORM_OUT_REJECTED]);
	EXPECT_EQ(1u, o.rej_app);
	EXPECT_EQ(1u, o.rej_busy);
	EXPECT_EQ(1u, o.rej_reason[10]);
	char err[128];
	EXPECT_EQ(0, storm_outcomes_check(&o, err, sizeof(err)));
}

TEST(StormOutcomes, AMissingOutcomeFailsTheCheck)
{
	std::vector<storm_conn> cs = {Conn(STORM_OUT_ESTABLISHED),
				      Conn(STORM_OUT_NONE)};
	storm_outcomes o = {};
	storm_outcomes_add(&o, cs.data(), cs.size());
	char err[128] = "";
	EXPECT_EQ(-EPROTO, storm_outcomes_check(&o, err, sizeof(err)));
	EXPECT_NE(nullptr, strstr(err, "1 of 2")) << err;
	// Counts that do not add up fail too.
	storm_outcomes bad = {};
	bad.attempts = 3;
	bad.n[STORM_OUT_ESTABLISHED] = 2;
	EXPECT_EQ(-EPROTO, storm_outcomes_check(&bad, err, sizeof(err)));
	bad.attempts = 2;
	bad.n[STORM_OUT_REJECTED] = 1;
	bad.n[STORM_OUT_ESTABLISHED] = 1;
	EXPECT_EQ(-EPROTO, storm_outcomes_check(&bad, err, sizeof(err)));
}

TEST(StormOutcomes, AStormWhoseConnectionsFailedIsNotASuccess)
{
	std::vector<storm_conn> cs = {Conn(STORM_OUT_ESTABLISHED),
				      Conn(STORM_OUT_KILLED)};
	storm_conn app = Conn(STORM_OUT_REJECTED), busy = app;
	app.rej_app = true; // asked for (--reject)
	busy.rej_busy = true;
	cs.push_back(app);
	storm_outcomes o = {};
	storm_outcomes_add(&o, cs.data(), cs.size());
	char err[256] = "";
	// Established, killed and rejected on purpose: all as asked.
	EXPECT_EQ(0, storm_outcomes_expected(&o, err, sizeof(err)));
	// One refused busy, one timed out: accounted for, yet failed.
	cs.push_back(busy);
	cs.push_back(Conn(STORM_OUT_TIMED_OUT));
	o = {};
	storm_outcomes_add(&o, cs.data(), cs.size());
	EXPECT_EQ(0, storm_outcomes_check(&o, err, sizeof(err)));
	EXPECT_EQ(-EIO, storm_outcomes_expected(&o, err, sizeof(err)));
	EXPECT_NE(nullptr, strstr(err, "1 of 3 expected")) << err;
	EXPECT_NE(nullptr, strstr(err, "rejected busy 1")) << err;
	EXPECT_NE(nullptr, strstr(err, "timed out 1")) << err;
	// None at all: the 30,000-connection run that exited 0.
	std::vector<storm_conn> none(5, Conn(STORM_OUT_FAILED));
	o = {};
	storm_outcomes_add(&o, none.data(), none.size());
	EXPECT_EQ(-EIO, storm_outcomes_expected(&o, err, sizeof(err)));
	EXPECT_NE(nullptr, strstr(err, "0 of 5")) << err;
}

TEST(StormStats, NearestRankPercentiles)
{
	std::vector<uint64_t> v;
	for (uint64_t i = 1; i <= 1000; i++)
		v.push_back(i);
	EXPECT_EQ(500u, storm_percentile(v.data(), v.size(), 50));
	EXPECT_EQ(900u, storm_percentile(v.data(), v.size(), 90));
	EXPECT_EQ(990u, storm_percentile(v.data(), v.size(), 99));
	EXPECT_EQ(999u, storm_percentile(v.data(), v.size(), 99.9));
	EXPECT_EQ(1000u, storm_percentile(v.data(), v.size(), 100));
	uint64_t one = 7;
	EXPECT_EQ(7u, storm_percentile(&one, 1, 50));
	EXPECT_EQ(7u, storm_percentile(&one, 1, 99.9));
	EXPECT_EQ(0u, storm_percentile(nullptr, 0, 50));
}

TEST(StormStats, TimeToEstablishedOnlyCountsEstablished)
{
	// Durations 1..100 ms, shuffled, plus failures that must not count.
	std::vector<storm_conn> cs;
	for (uint64_t i = 100; i >= 1; i--)
		cs.push_back(Conn(STORM_OUT_ESTABLISHED, 1000000,
				  1000000 + i * 1000000));
	cs.push_back(Conn(STORM_OUT_TIMED_OUT, 1000000, 999000000));
	cs.push_back(Conn(STORM_OUT_ESTABLISHED, 0, 5)); // no start stamp
	std::vector<uint64_t> scratch(cs.size());
	struct storm_tte t;
	storm_tte(cs.data(), cs.size(), scratch.data(), &t);
	EXPECT_EQ(100u, t.n);
	EXPECT_DOUBLE_EQ(50000, t.p50_us);
	EXPECT_DOUBLE_EQ(90000, t.p90_us);
	EXPECT_DOUBLE_EQ(99000, t.p99_us);
	EXPECT_DOUBLE_EQ(100000, t.p999_us);
	EXPECT_DOUBLE_EQ(100000, t.max_us);
	double us[11], frac[11];
	ASSERT_EQ(11u, storm_tte_cdf(cs.data(), cs.size(), scratch.data(), us,
				     frac, 11));
	EXPECT_DOUBLE_EQ(1000, us[0]);
	EXPECT_DOUBLE_EQ(100000, us[10]);
	EXPECT_DOUBLE_EQ(1.0, frac[10]);
	for (int i = 1; i < 11; i++) {
		EXPECT_GE(us[i], us[i - 1]);
		EXPECT_GE(frac[i], frac[i - 1]);
	}
}

TEST(StormStats, StepRowHasCmtimesColumns)
{
	// Two connections: step A 10..30 us and 20..25 us.
	storm_conn a = {}, b = {}, c = {};
	a.t[STORM_T_ADDR] = 10000;
	a.t[STORM_T_ROUTE] = 30000;
	b.t[STORM_T_ADDR] = 20000;
	b.t[STORM_T_ROUTE] = 25000;
	c.t[STORM_T_ADDR] = 20000; // never got there: not counted
	std::vector<storm_conn> cs = {a, b, c};
	struct storm_step_row r;
	storm_step_row(cs.data(), cs.size(), "resolve route", STORM_T_ADDR,
		       STORM_T_ROUTE, &r);
	EXPECT_EQ(2u, r.n);
	EXPECT_DOUBLE_EQ(0.020, r.total_ms); // 10 us .. 30 us
	EXPECT_DOUBLE_EQ(0.020, r.max_ms);
	EXPECT_DOUBLE_EQ(5.0, r.min_us);
	EXPECT_DOUBLE_EQ(10.0, r.us_per_conn);
	EXPECT_DOUBLE_EQ(12.5, r.avg_us);
}

std::string ReadFile(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	std::stringstream s;
	s << f.rdbuf();
	return s.str();
}

TEST(StormCmtime, ParsesTheGuestsOutput)
{
	// Captured from `cmtime -s 198.18.0.1 -c 100` (rdma-core 44) in the
	// soft-RoCE guest, through its serial console (CRLF line ends).
	std::string text = ReadFile("tests/unit/testdata/cmtime_guest_100.txt");
	ASSERT_FALSE(text.empty());
	ASSERT_NE(std::string::npos, text.find('\r'));
	storm_cmtime t;
	ASSERT_EQ(0, storm_cmtime_parse(text.c_str(), 100, &t));
	ASSERT_EQ(7u, t.nrows);
	EXPECT_STREQ("create id", t.names[0]);
	EXPECT_STREQ("destroy", t.names[6]);
	const struct storm_step_row *c = storm_cmtime_row(&t, "connect");
	ASSERT_NE(nullptr, c);
	EXPECT_DOUBLE_EQ(567.42, c->total_ms);
	EXPECT_DOUBLE_EQ(508.78, c->max_ms);
	EXPECT_DOUBLE_EQ(266611.00, c->min_us);
	EXPECT_DOUBLE_EQ(5674.22, c->us_per_conn);
	EXPECT_EQ(100u, c->n);
	const struct storm_step_row *ra = storm_cmtime_row(&t, "resolve addr");
	ASSERT_NE(nullptr, ra);
	EXPECT_DOUBLE_EQ(32.68, ra->total_ms);
	EXPECT_EQ(nullptr, storm_cmtime_row(&t, "establish"));

	// The variant's rate: create..connect walls summed, as cmtime runs
	// its steps one after the other.
	storm_result r = {};
	r.conns = 100;
	storm_result_from_cmtime(&r, &t);
	EXPECT_NEAR((6.56 + 32.68 + 11.12 + 106.80 + 567.42) / 1e3, r.wall_s,
		    1e-9);
	EXPECT_NEAR(100 / r.wall_s, r.conn_per_s, 1e-6);
	EXPECT_NEAR((446.85 + 2.46) / 1e3, r.teardown_s, 1e-9);
}

TEST(StormCmtime, NoTableOrABadRow)
{
	storm_cmtime t;
	// A client killed while connecting prints its progress only.
	EXPECT_EQ(-ENODATA,
		  storm_cmtime_parse("creating id\nresolving address\n"
				     "connecting\n",
				     10, &t));
	EXPECT_EQ(-ENODATA, storm_cmtime_parse("", 10, &t));
	EXPECT_EQ(-EBADMSG,
		  storm_cmtime_parse("step              total ms     max ms  "
				     "   min us  us / conn\n"
				     "create id    :        6.56       x\n",
				     10, &t));
	// The table ends at the first line that is not a row.
	ASSERT_EQ(0,
		  storm_cmtime_parse("step              total ms     max ms  "
				     "   min us  us / conn\n"
				     "create id    :  1 2 3 4\n"
				     "\n"
				     "destroy      :  5 6 7 8\n",
				     10, &t));
	EXPECT_EQ(1u, t.nrows);
}

// storm_json_results() of @n results as a string.
std::string ResultsJson(const storm_opts &o, const storm_result *rs, size_t n)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cli_json j;
	cli_json_init(&j, f, CLI_JSON_PRETTY);
	storm_json_results(&j, &o, rs, n);
	EXPECT_EQ(0, cli_json_finish(&j));
	fclose(f);
	std::string s(buf, len);
	free(buf);
	return s;
}

TEST(StormJson, ResultsDocumentHasEveryVariant)
{
	static storm_result rs[2];
	storm_opts o;
	storm_opts_init(&o);
	snprintf(rs[0].name, sizeof(rs[0].name), "wharf");
	rs[0].ran = true;
	rs[0].has_outcomes = true;
	rs[0].out.attempts = 3;
	rs[0].out.n[STORM_OUT_ESTABLISHED] = 3;
	snprintf(rs[1].name, sizeof(rs[1].name), "cmtime");
	snprintf(rs[1].error, sizeof(rs[1].error), "no table");
	std::string s = ResultsJson(o, rs, 2);
	EXPECT_NE(std::string::npos, s.find("\"name\": \"wharf\""));
	EXPECT_NE(std::string::npos, s.find("\"established\": 3"));
	EXPECT_NE(std::string::npos, s.find("\"error\": \"no table\""));
	EXPECT_NE(std::string::npos, s.find("\"ran\": false"));
	EXPECT_NE(std::string::npos, s.find("\"nodes\": 1"));
	// Balanced: as many closers as openers.
	size_t open = 0, close = 0;
	for (char c : s) {
		open += c == '{' || c == '[';
		close += c == '}' || c == ']';
	}
	EXPECT_EQ(open, close);
}

TEST(StormJson, NodesIsTwoWithRemoteClients)
{
	static storm_result rs[1];
	storm_opts o;
	storm_opts_init(&o);
	o.clients_at = "198.18.0.2:7600";
	std::string s = ResultsJson(o, rs, 0);
	EXPECT_NE(std::string::npos, s.find("\"nodes\": 2")) << s;
}

} // namespace

namespace
{

TEST(StormGnuplot, InlineDataForEveryVariantThatRan)
{
	static storm_result rs[3];
	snprintf(rs[0].name, sizeof(rs[0].name), "wharf (2 shards, pool)");
	rs[0].ran = true;
	rs[0].conn_per_s = 123.4;
	rs[0].ncdf = 2;
	rs[0].cdf_us[0] = 1000;
	rs[0].cdf_frac[0] = 0.5;
	rs[0].cdf_us[1] = 3000;
	rs[0].cdf_frac[1] = 1;
	snprintf(rs[1].name, sizeof(rs[1].name), "cmtime");
	rs[1].ran = true;
	rs[1].conn_per_s = 50;
	snprintf(rs[2].name, sizeof(rs[2].name), "it's off");
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	storm_gnuplot(f, rs, 3, "out/x.png");
	fclose(f);
	std::string s(buf, len);
	free(buf);
	EXPECT_NE(std::string::npos, s.find("set output 'out/x.png'"));
	EXPECT_NE(std::string::npos, s.find("$cdf0 << EOD\n1.000 0.5000\n"
					    "3.000 1.0000\nEOD\n"));
	EXPECT_EQ(std::string::npos, s.find("$cdf1")); // cmtime: no CDF
	// Data blocks group words with double quotes only.
	EXPECT_NE(std::string::npos,
		  s.find("0 \"wharf (2 shards, pool)\" 123.4\n"));
	EXPECT_NE(std::string::npos, s.find("1 \"cmtime\" 50.0\n"));
	EXPECT_NE(std::string::npos, s.find("2 \"its off\" 0.0\n"));
	EXPECT_NE(std::string::npos,
		  s.find("plot $cdf0 using 1:2 with lines lw 2 title "
			 "'wharf (2 shards, pool)'\n"));
	EXPECT_NE(std::string::npos, s.find("set xrange [-0.5:2.5]"));
}

} // namespace

namespace
{

TEST(StormPrint, NothingEstablishedPrintsTotalsNotPerConnection)
{
	static storm_result r;
	snprintf(r.name, sizeof(r.name), "wharf");
	r.ran = true;
	r.conns = 2;
	r.has_outcomes = true;
	r.server.cpu_s = 1.5;
	r.server.reg_bytes = 4096;
	r.client.heap_bytes = -1;
	r.client.reg_bytes = -1;
	std::vector<storm_conn> cs = {Conn(STORM_OUT_TIMED_OUT, 1000),
				      Conn(STORM_OUT_TIMED_OUT, 2000)};
	cs[1].t[STORM_T_ID] = 3000;
	std::vector<uint64_t> scratch(cs.size());
	storm_result_from_conns(&r, cs.data(), cs.size(), scratch.data());
	storm_outcomes_add(&r.out, cs.data(), cs.size());
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	storm_print(f, &r);
	fclose(f);
	std::string s(buf, len);
	free(buf);
	EXPECT_NE(std::string::npos, s.find("connect :          -\n")) << s;
	EXPECT_NE(std::string::npos,
		  s.find("server  CPU 1.500 s, no connection established, "
			 "registered 4096 B\n"))
		<< s;
	EXPECT_NE(std::string::npos,
		  s.find("not established, last step: started: 1, id created: "
			 "1\n"))
		<< s;
	EXPECT_EQ(std::string::npos, s.find("us/conn")) << s;
}

} // namespace

TEST(StormResult, WindowWaitIsItsOwnRowBeforeCreateId)
{
	// Called at 1 us, admitted by the connect window at 5 us, id at 6 us:
	// the wait is not counted as creating the id.
	storm_conn c = {};
	c.outcome = STORM_OUT_ESTABLISHED;
	c.t[STORM_T_START] = 1000;
	c.t[STORM_T_ADMIT] = 5000;
	c.t[STORM_T_ID] = 6000;
	c.t[STORM_T_EST] = 9000;
	storm_result r = {};
	uint64_t scratch[1];
	storm_result_from_conns(&r, &c, 1, scratch);
	ASSERT_GE(r.nrows, 2u);
	EXPECT_STREQ("window wait", r.rows[0].name);
	EXPECT_DOUBLE_EQ(4.0, r.rows[0].min_us);
	EXPECT_STREQ("create id", r.rows[1].name);
	EXPECT_DOUBLE_EQ(1.0, r.rows[1].min_us);
	EXPECT_STREQ("admitted", storm_stamp_name(STORM_T_ADMIT));
	EXPECT_STREQ("id created", storm_stamp_name(STORM_T_ID));
}

TEST(StormOutcomes, FailuresAreCountedOncePerReason)
{
	std::vector<storm_conn> cs;
	for (int i = 0; i < 1633; i++) {
		storm_conn c = Conn(STORM_OUT_FAILED);
		c.fail_kind = 1; // address
		c.fail_err = -ENOMEM;
		cs.push_back(c);
	}
	storm_conn t = Conn(STORM_OUT_TIMED_OUT);
	t.fail_kind = 5;
	t.fail_err = -ETIMEDOUT;
	cs.push_back(t);
	cs.push_back(t);
	cs.push_back(Conn(STORM_OUT_ESTABLISHED));
	storm_outcomes o = {};
	storm_outcomes_add(&o, cs.data(), cs.size());
	ASSERT_EQ(2u, o.nfail);
	EXPECT_STREQ("address", storm_fail_kind_name(o.fail[0].kind));
	EXPECT_EQ(-ENOMEM, o.fail[0].err);
	EXPECT_EQ(1633u, o.fail[0].n);
	EXPECT_STREQ("timeout", storm_fail_kind_name(o.fail[1].kind));
	EXPECT_EQ(2u, o.fail[1].n);
	EXPECT_STREQ("other", storm_fail_kind_name(200));
	EXPECT_STREQ("wharf_connect()", storm_fail_kind_name(0));
	// More distinct reasons than the table holds: the last row takes
	// the rest, nothing is lost.
	cs.clear();
	for (int i = 0; i < STORM_FAIL_REASONS + 5; i++) {
		storm_conn c = Conn(STORM_OUT_FAILED);
		c.fail_kind = 3;
		c.fail_err = -i - 1;
		cs.push_back(c);
	}
	o = {};
	storm_outcomes_add(&o, cs.data(), cs.size());
	uint64_t sum = 0;
	for (unsigned i = 0; i < o.nfail; i++)
		sum += o.fail[i].n;
	EXPECT_EQ((uint64_t)cs.size(), sum);
	EXPECT_EQ(6u, o.fail[STORM_FAIL_REASONS - 1].n);
	// The report prints one line per reason.
	storm_result r = {};
	snprintf(r.name, sizeof(r.name), "x");
	r.ran = true;
	r.has_outcomes = true;
	r.out = o;
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	storm_print(f, &r);
	fclose(f);
	std::string s(buf, len);
	free(buf);
	EXPECT_NE(std::string::npos,
		  s.find("not established: connect error -1 (Operation not "
			 "permitted): 1\n"))
		<< s;
}

TEST(StormPorts, ARunNeedingMorePortsThanTheRangeIsRefusedUpFront)
{
	char err[512] = "";
	// Linux's default range: 28,232 ports, one may be the server's.
	EXPECT_EQ(0, storm_ports_check(28231, 32768, 60999, err, sizeof(err)));
	EXPECT_EQ(-ENOSPC,
		  storm_ports_check(30000, 32768, 60999, err, sizeof(err)));
	EXPECT_NE(nullptr, strstr(err, "ip_local_port_range (32768 60999) "
				       "has 28232"))
		<< err;
	EXPECT_EQ(0, storm_ports_check(60000, 1024, 65535, err, sizeof(err)));
	// The file as the kernel writes it.
	char path[] = "/tmp/storm_ports_XXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs("32768\t60999\n", f);
	fclose(f);
	unsigned lo = 0, hi = 0;
	EXPECT_EQ(0, storm_port_range_read(path, &lo, &hi));
	EXPECT_EQ(32768u, lo);
	EXPECT_EQ(60999u, hi);
	unlink(path);
	EXPECT_EQ(-ENOENT, storm_port_range_read(path, &lo, &hi));
}

// The CM's MAD counters as sysfs lays them out: summed over devices and
// ports, a device without ib_cm counters skipped, none at all -ENOENT.
TEST(StormCmMads, SumsEveryPortAndTellsNoneFromZero)
{
	char root[] = "/tmp/storm_mads_XXXXXX";
	ASSERT_NE(nullptr, mkdtemp(root));
	std::string r(root);
	struct storm_cm_mads m;
	EXPECT_EQ(-ENOENT, storm_cm_mads_read(root, &m));
	EXPECT_FALSE(m.ok);
	auto put = [&](const std::string &port, const char *dir,
		       const char *type, unsigned long v) {
		std::string d = r + "/" + port;
		ASSERT_EQ(0, system(("mkdir -p " + d + "/" + dir).c_str()));
		std::ofstream(d + "/" + dir + "/" + type) << v << "\n";
	};
	ASSERT_EQ(0, system(("mkdir -p " + r + "/mlx0/ports/1").c_str()));
	EXPECT_EQ(-ENOENT, storm_cm_mads_read(root, &m)); // no cm_* yet
	put("rxe0/ports/1", "cm_rx_msgs", "dreq", 60001);
	put("rxe0/ports/1", "cm_rx_duplicates", "dreq", 1);
	put("rxe1/ports/1", "cm_rx_msgs", "dreq", 9);
	put("rxe1/ports/2", "cm_tx_msgs", "drep", 7);
	put("rxe1/ports/2", "cm_tx_retries", "rep", 3);
	ASSERT_EQ(0, storm_cm_mads_read(root, &m));
	EXPECT_TRUE(m.ok);
	EXPECT_EQ(60010u, m.n[STORM_MAD_RX][STORM_MAD_DREQ]);
	EXPECT_EQ(1u, m.n[STORM_MAD_RX_DUP][STORM_MAD_DREQ]);
	EXPECT_EQ(7u, m.n[STORM_MAD_TX][STORM_MAD_DREP]);
	EXPECT_EQ(3u, m.n[STORM_MAD_TX_RETRIES][STORM_MAD_REP]);
	EXPECT_EQ(0u, m.n[STORM_MAD_TX][STORM_MAD_REQ]);
	struct storm_cm_mads later = m, d;
	later.n[STORM_MAD_RX][STORM_MAD_DREQ] += 5;
	later.n[STORM_MAD_TX][STORM_MAD_DREP] = 0; // went back: 0, not huge
	storm_cm_mads_delta(&d, &m, &later);
	EXPECT_TRUE(d.ok);
	EXPECT_EQ(5u, d.n[STORM_MAD_RX][STORM_MAD_DREQ]);
	EXPECT_EQ(0u, d.n[STORM_MAD_TX][STORM_MAD_DREP]);
	EXPECT_STREQ("dreq", storm_mad_type_name(STORM_MAD_DREQ));
	EXPECT_EQ(0, system(("rm -rf " + r).c_str()));
}

// One node: the server takes the first half of the CPUs storm may use
// (or as many as --shards), the clients the rest, one each in turn.
TEST(StormPlacement, ServerFirstHalfClientsTheRest)
{
	storm_placement p;
	const int two[] = {0, 1};
	storm_placement_plan(two, 2, true, 0, &p);
	ASSERT_TRUE(storm_placement_split(&p));
	ASSERT_EQ(1u, p.nserver);
	ASSERT_EQ(1u, p.nclient);
	EXPECT_EQ(0, p.server[0]);
	EXPECT_EQ(1, p.client[0]);
	EXPECT_EQ(1, storm_placement_client_cpu(&p, 0));
	EXPECT_EQ(1, storm_placement_client_cpu(&p, 3));

	const int gaps[] = {2, 5, 7, 9, 11};
	storm_placement_plan(gaps, 5, true, 0, &p);
	ASSERT_TRUE(storm_placement_split(&p));
	ASSERT_EQ(2u, p.nserver);
	ASSERT_EQ(3u, p.nclient);
	EXPECT_EQ(5, p.server[1]);
	EXPECT_EQ(7, storm_placement_client_cpu(&p, 0));
	EXPECT_EQ(11, storm_placement_client_cpu(&p, 2));
	EXPECT_EQ(7, storm_placement_client_cpu(&p, 3));
	char buf[128];
	storm_placement_format(&p, buf, sizeof(buf));
	EXPECT_STREQ("server on CPUs 2,5, clients on CPUs 7,9,11", buf);

	storm_placement_plan(gaps, 5, true, 4, &p); // --shards 4
	ASSERT_TRUE(storm_placement_split(&p));
	EXPECT_EQ(4u, p.nserver);
	EXPECT_EQ(1u, p.nclient);
	EXPECT_EQ(11, storm_placement_client_cpu(&p, 1));
}

TEST(StormPlacement, NoSplitWhenSharedOrNothingLeft)
{
	storm_placement p;
	const int two[] = {0, 1};
	char buf[128];

	storm_placement_plan(two, 2, false, 0, &p); // --share-cpus, two nodes
	EXPECT_FALSE(storm_placement_split(&p));
	EXPECT_EQ(-1, storm_placement_client_cpu(&p, 0));
	storm_placement_format(&p, buf, sizeof(buf));
	EXPECT_STREQ("every process on every CPU", buf);
	storm_placement_plan(two, 2, true, 2, &p); // --shards = CPUs
	EXPECT_FALSE(storm_placement_split(&p));
	storm_placement_plan(two, 1, true, 0, &p); // one CPU
	EXPECT_FALSE(storm_placement_split(&p));
	EXPECT_EQ(0u, p.nserver + p.nclient);
}
