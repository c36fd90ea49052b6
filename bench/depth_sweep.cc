/*
 * depth_sweep: RDMA READ throughput and latency against the initiator
 * depth (max_rd_atomic), on the actual device, through wharf's QPs.
 *
 * For each depth 1, 2, 4, ... up to the device's max_qp_init_rd_atom (or
 * --max-depth), one loopback connection is set up with that initiator
 * depth negotiated (responder resources granted to match) and a closed
 * loop keeps exactly `depth` READs of --bytes in flight for --seconds: each
 * completion posts the next READ, so no READ waits in wharf's queue and
 * the latency is the device's, post to completion.  The knee is the
 * smallest depth reaching --knee percent of the best throughput; it is
 * the recommended initiator depth (deeper only adds responder resources).
 *
 * Needs an RDMA device with 198.18.0.1 (the soft-RoCE guest) -- run it
 * with ./wharf vm -- bazel-bin/bench/depth_sweep.  Progress goes to
 * stderr, the table to stdout.
 */
#include <getopt.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <wharf/core.h>

#include "cli/cli.h"
#include "cli/json.h"

#include "tests/guest/qp_loopback.h"

namespace
{

using qpl::Env;
using qpl::kCli;
using qpl::Peer;

constexpr uint32_t kTag = 0x53574550; /* 'SWEP' */

struct Cfg {
	uint32_t bytes = 4096;
	double seconds = 3.0;
	unsigned max_depth = 0; /* 0 = device max */
	double knee = 90.0;
	const char *json = nullptr; /* --json FILE */
};

struct Rd {
	wharf_wr wr;
	unsigned slot;
	uint64_t t0;
};

/* Keeps `depth` READs in flight until told to stop. */
class Loop : public Peer
{
      public:
	void post(Rd *r)
	{
		ibv_sge sge = {(uintptr_t)dst->at((size_t)r->slot * bytes),
			       bytes, dst->mr->lkey};
		wharf_wr_init(&r->wr, kTag);
		r->t0 = wharf_now_ns();
		if (wharf_qp_post_read(
			    qp, &r->wr, &sge, 1,
			    (uintptr_t)src->at((size_t)r->slot * bytes),
			    src->mr->rkey))
			bad++;
	}
	void start()
	{
		t_start = wharf_now_ns();
		for (auto &r : rds)
			post(&r);
	}
	void send_done(wharf_wr *wr) override
	{
		Rd *r = wharf_wr_entry(wr, Rd, wr, kTag);
		if (!r || wr->status != IBV_WC_SUCCESS) {
			bad++;
			return;
		}
		uint64_t t = wharf_now_ns();
		if (measuring)
			lat.push_back(t - r->t0);
		ops += measuring;
		if (stop) {
			if (++stopped == rds.size())
				idle = true;
			return;
		}
		post(r);
	}
	std::vector<Rd> rds;
	qpl::Mr *src = nullptr, *dst = nullptr;
	uint32_t bytes = 0;
	bool measuring = false, stop = false;
	size_t stopped = 0;
	uint64_t t_start = 0, ops = 0;
	std::vector<uint64_t> lat;
	std::atomic<bool> idle{false};
	std::atomic<unsigned> bad{0};
};

struct Row {
	unsigned depth;
	double mops, mbps, mean_us, p50_us, p99_us;
	unsigned applied;
	long long retries; /* rxe completer retries (timeouts), -1: n/a */
};

struct Doc {
	const Cfg *cfg;
	const std::vector<Row> *rows;
	unsigned knee;
	double best_mops;
	const char *device;
};

void json_doc(cli_json *j, const void *arg)
{
	const Doc *d = static_cast<const Doc *>(arg);
	cli_json_obj(j, nullptr);
	cli_json_str(j, "tool", "depth_sweep");
	cli_json_str(j, "device", d->device);
	cli_json_u64(j, "read_bytes", d->cfg->bytes);
	cli_json_num(j, "seconds_per_depth", d->cfg->seconds);
	cli_json_arr(j, "depths");
	for (const Row &r : *d->rows) {
		cli_json_obj(j, nullptr);
		cli_json_u64(j, "depth", r.depth);
		cli_json_u64(j, "applied", r.applied);
		cli_json_num(j, "kops_s", r.mops * 1e3);
		cli_json_num(j, "mb_s", r.mbps);
		cli_json_num(j, "mean_us", r.mean_us);
		cli_json_num(j, "p50_us", r.p50_us);
		cli_json_num(j, "p99_us", r.p99_us);
		if (r.retries >= 0)
			cli_json_i64(j, "retries", r.retries);
		else
			cli_json_str(j, "retries", nullptr);
		cli_json_end(j);
	}
	cli_json_end(j);
	cli_json_num(j, "knee_percent", d->cfg->knee);
	cli_json_u64(j, "knee_depth", d->knee);
	cli_json_num(j, "best_kops_s", d->best_mops * 1e3);
	cli_json_end(j);
}

void usage(const char *argv0)
{
	printf("usage: %s [--bytes N] [--seconds S] [--max-depth D] "
	       "[--knee PCT] [--json FILE]\n"
	       "  RDMA READ throughput/latency vs initiator depth on rxe0 "
	       "(198.18.0.1).\n"
	       "  --bytes      READ size (default 4096)\n"
	       "  --seconds    measuring time per depth (default 3)\n"
	       "  --max-depth  largest depth (default: max_qp_init_rd_atom)\n"
	       "  --knee       percent of the best throughput that counts "
	       "as saturated (default 90)\n"
	       "  --json       also write the results as JSON (- = stdout)\n",
	       argv0);
}

// A positive decimal such as "2.5", nothing after it.
bool real_arg(const char *s, double *out)
{
	char *end = nullptr;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0))
		return false;
	*out = v;
	return true;
}

bool parse(int argc, char **argv, Cfg *c)
{
	static const option opts[] = {
		{"bytes", 1, nullptr, 'b'},	{"seconds", 1, nullptr, 's'},
		{"max-depth", 1, nullptr, 'd'}, {"knee", 1, nullptr, 'k'},
		{"json", 1, nullptr, 'J'},	{"help", 0, nullptr, 'h'},
		{"version", 0, nullptr, 'V'},	{nullptr, 0, nullptr, 0}};
	uint64_t bytes;
	int o;
	while ((o = getopt_long(argc, argv, "b:s:d:k:h", opts, nullptr)) !=
	       -1) {
		switch (o) {
		case 'b':
			if (cli_size(optarg, 1, UINT32_MAX, &bytes))
				return false;
			c->bytes = (uint32_t)bytes;
			break;
		case 's':
			if (!real_arg(optarg, &c->seconds))
				return false;
			break;
		case 'd':
			if (cli_u32(optarg, 0, 255, &c->max_depth))
				return false;
			break;
		case 'k':
			if (!real_arg(optarg, &c->knee))
				return false;
			break;
		case 'J':
			c->json = optarg;
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		case 'V':
			cli_version(stdout, "depth_sweep");
			exit(0);
		default:
			usage(argv[0]);
			return false;
		}
	}
	return c->bytes > 0 && c->seconds > 0 && c->knee > 0 && c->knee <= 100;
}

double pct(std::vector<uint64_t> &v, double p)
{
	if (v.empty())
		return 0;
	size_t i = std::min(v.size() - 1, (size_t)(p / 100.0 * v.size()));
	std::nth_element(v.begin(), v.begin() + i, v.end());
	return v[i] / 1000.0;
}

bool run_depth(Env &env, const Cfg &c, unsigned depth, qpl::Mr &src,
	       qpl::Mr &dst, Row *row)
{
	env.server_factory = [depth](const wcm_conn_param &, unsigned) {
		auto p = std::make_unique<Peer>();
		p->custom_param = true;
		p->param.responder_resources = (uint8_t)depth;
		p->param.rnr_retry_count = 7;
		return p;
	};
	auto l = std::make_unique<Loop>();
	Loop *lp = l.get();
	lp->index = depth;
	lp->custom_param = true;
	lp->param.initiator_depth = (uint8_t)depth;
	lp->param.retry_count = 7;
	lp->param.rnr_retry_count = 7;
	lp->qopts.sq_depth = std::max(16u, depth);
	lp->rds.resize(depth);
	for (unsigned i = 0; i < depth; i++)
		lp->rds[i].slot = i;
	lp->src = &src;
	lp->dst = &dst;
	lp->bytes = c.bytes;
	Peer *p = env.add(std::move(l));
	if (!env.connect_all({p}) || p->state != qpl::P_ESTABLISHED) {
		fprintf(stderr, "depth %u: connect failed (%d, rej %d)\n",
			depth, (int)p->cm_err, (int)p->reject_status);
		return false;
	}
	row->applied = p->init;
	env.on(kCli, [&] { lp->start(); });
	/* Warm up a tenth of the time, then measure. */
	auto warm = std::chrono::duration<double>(c.seconds / 10);
	std::this_thread::sleep_for(warm);
	uint64_t t0 = 0, t1 = 0, ops = 0;
	long long r0 = qpl::hw_counter("completer_retry_err");
	env.on(kCli, [&] {
		lp->measuring = true;
		t0 = wharf_now_ns();
	});
	std::this_thread::sleep_for(std::chrono::duration<double>(c.seconds));
	env.on(kCli, [&] {
		lp->measuring = false;
		lp->stop = true;
		t1 = wharf_now_ns();
		ops = lp->ops;
	});
	env.pump([&] { return lp->idle || lp->bad; }, 60);
	long long r1 = qpl::hw_counter("completer_retry_err");
	row->retries = r0 >= 0 && r1 >= 0 ? r1 - r0 : -1;
	double s = (t1 - t0) / 1e9;
	row->depth = depth;
	row->mops = ops / s / 1e6;
	row->mbps = ops * (double)c.bytes / s / 1e6;
	double sum = 0;
	std::vector<uint64_t> lat;
	env.on(kCli, [&] { lat.swap(lp->lat); });
	for (uint64_t x : lat)
		sum += x;
	row->mean_us = lat.empty() ? 0 : sum / lat.size() / 1000.0;
	row->p50_us = pct(lat, 50);
	row->p99_us = pct(lat, 99);
	env.disconnect_all({p}, false);
	return lp->bad == 0;
}

} // namespace

int main(int argc, char **argv)
{
	Cfg c;
	if (!parse(argc, argv, &c))
		return 2;
	Env env;
	wharf_qp_res_opts o{};
	o.size = sizeof(o);
	o.srq_depth = 256;
	o.recv_credits = 8;
	o.pool_size = 4;
	o.sq_depth = 16;
	std::string e = env.start(&o, &o);
	if (!e.empty()) {
		fprintf(stderr, "setup: %s\n", e.c_str());
		return 1;
	}
	unsigned dev_max = (unsigned)env.attr()->max_qp_init_rd_atom;
	unsigned dev_resp = (unsigned)env.attr()->max_qp_rd_atom;
	unsigned max = c.max_depth ? std::min(c.max_depth, dev_max) : dev_max;
	max = std::min(max, dev_resp);
	qpl::Mr src, dst;
	ibv_pd *pd = wharf_qp_dev_pd(env.dev);
	size_t len = (size_t)max * c.bytes;
	if (!src.reg(pd, len,
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ) ||
	    !dst.reg(pd, len, IBV_ACCESS_LOCAL_WRITE)) {
		fprintf(stderr, "cannot register %zu bytes\n", len);
		return 1;
	}
	fprintf(stderr,
		"device %s: max_qp_init_rd_atom %u, max_qp_rd_atom %u; "
		"READ %u B, %.1f s per depth\n",
		ibv_get_device_name(wharf_qp_dev_verbs(env.dev)->device),
		dev_max, dev_resp, c.bytes, c.seconds);
	std::vector<Row> rows;
	for (unsigned d = 1; d <= max;
	     d = d * 2 > max && d < max ? max : d * 2) {
		Row r{};
		fprintf(stderr, "depth %u ...\n", d);
		if (!run_depth(env, c, d, src, dst, &r)) {
			fprintf(stderr, "depth %u failed\n", d);
			return 1;
		}
		rows.push_back(r);
		env.reap_peers();
		if (d == max)
			break;
	}
	double best = 0;
	for (auto &r : rows)
		best = std::max(best, r.mops);
	unsigned knee = rows.back().depth;
	for (auto &r : rows)
		if (r.mops >= best * c.knee / 100.0) {
			knee = r.depth;
			break;
		}
	printf("# RDMA READ %u B, closed loop of `depth` READs, %s\n", c.bytes,
	       ibv_get_device_name(wharf_qp_dev_verbs(env.dev)->device));
	printf("# retries: the device's requester retransmissions (rxe "
	       "completer_retry_err) while measuring\n");
	printf("%6s %8s %10s %10s %10s %10s %10s %8s\n", "depth", "applied",
	       "kops/s", "MB/s", "mean_us", "p50_us", "p99_us", "retries");
	for (auto &r : rows)
		printf("%6u %8u %10.1f %10.1f %10.1f %10.1f %10.1f %8lld\n",
		       r.depth, r.applied, r.mops * 1e3, r.mbps, r.mean_us,
		       r.p50_us, r.p99_us, r.retries);
	printf("knee: depth %u reaches %.0f%% of the best %.1f kops/s\n", knee,
	       c.knee, best * 1e3);
	printf("recommended initiator_depth: %u\n", knee);
	if (c.json) {
		Doc d{&c, &rows, knee, best,
		      ibv_get_device_name(wharf_qp_dev_verbs(env.dev)->device)};
		int err = cli_json_write(c.json, CLI_JSON_PRETTY, json_doc, &d);
		if (err) {
			fprintf(stderr, "depth_sweep: %s: %s\n", c.json,
				strerror(-err));
			return 1;
		}
	}
	src.reset();
	dst.reset();
	e = env.stop();
	if (!e.empty()) {
		fprintf(stderr, "teardown: %s\n", e.c_str());
		return 1;
	}
	return 0;
}
