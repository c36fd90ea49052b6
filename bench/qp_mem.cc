/*
 * qp_mem: what a connection costs in memory and on the accept path.
 *
 * For each configuration, in one process and one run, N loopback
 * connections are established in steps (N/4, N/2, 3N/4, N) and measured:
 *
 *  - userspace heap bytes per connection: jemalloc's stats.allocated
 *    (wharf links jemalloc, which then serves every malloc of the process,
 *    librdmacm's and the verbs provider's included) before and after,
 *    minus the registered receive buffers (reported on their own), divided
 *    by the connections; both ends of each connection live in this process,
 *    so the table shows per connection (both ends) and per end (half);
 *  - registered receive bytes of both ends (wharf_qp_res_stats.recv_bytes);
 *  - accept path: on the passive shard, wharf_qp_take() +
 *    wharf_qp_cm_accept_ready(), and separately rdma_accept(), per request.
 *
 * Configurations: SRQ with the QP pool pre-filled, SRQ without a pool
 * (every take creates the QP), private receive queues per QP (no pool).
 *
 * Needs rxe0 at 198.18.0.1 (the soft-RoCE guest): ./wharf vm --
 * bazel-bin/bench/qp_mem.  Progress on stderr, table on stdout.
 */
#include <getopt.h>
#include <jemalloc/jemalloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/json.h"
#include "tests/guest/qp_loopback.h"

namespace
{

using qpl::Env;
using qpl::kCli;
using qpl::kSrv;
using qpl::Peer;

struct Cfg {
	unsigned conns = 1000;
	unsigned srq_depth = 4096;
	unsigned credits = 2;
	unsigned rq_depth = 16;
	unsigned sq_depth = 8;
	bool srq = true, rq = true;
	const char *json = nullptr; /* --json FILE */
};

enum Mode { SRQ_POOL, SRQ_NOPOOL, PRIVATE_RQ };

const char *mode_name(Mode m)
{
	switch (m) {
	case SRQ_POOL:
		return "srq+pool";
	case SRQ_NOPOOL:
		return "srq,no-pool";
	case PRIVATE_RQ:
		return "per-qp-rq";
	}
	return "?";
}

bool heap_bytes(uint64_t *out)
{
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch);
	size_t allocated = 0;
	if (mallctl("epoch", &epoch, &sz, &epoch, sz))
		return false;
	sz = sizeof(allocated);
	if (mallctl("stats.allocated", &allocated, &sz, nullptr, 0))
		return false;
	*out = allocated;
	return true;
}

/* Whether plain malloc() is served by jemalloc (so the counter sees it). */
bool malloc_is_jemalloc()
{
	uint64_t a = 0, b = 0;
	if (!heap_bytes(&a))
		return false;
	void *volatile p = malloc(8 << 20);
	bool ok = heap_bytes(&b) && b >= a + (8 << 20);
	free(p);
	return ok;
}

double pct_us(std::vector<uint64_t> v, double p)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	size_t i = std::min(v.size() - 1, (size_t)(p / 100.0 * v.size()));
	return v[i] / 1000.0;
}

double mean_us(const std::vector<uint64_t> &v)
{
	double s = 0;
	for (uint64_t x : v)
		s += x;
	return v.empty() ? 0 : s / v.size() / 1000.0;
}

struct Step {
	unsigned conns;
	double heap_per_conn; /* both ends */
	uint64_t recv_bytes;  /* both ends */
};

struct Result {
	Mode mode;
	std::vector<Step> steps;
	std::vector<uint64_t> take_ns, modify_ns, cm_ns;
	uint64_t pool_empty = 0;
};

bool run(const Cfg &c, Mode m, Result *r)
{
	Env env;
	wharf_qp_res_opts o{};
	o.size = sizeof(o);
	o.sq_depth = c.sq_depth;
	o.srq_depth = c.srq_depth;
	o.recv_credits = m == PRIVATE_RQ ? c.rq_depth : c.credits;
	o.no_srq = m == PRIVATE_RQ;
	o.no_pool = m != SRQ_POOL;
	o.pool_size = c.conns;
	o.pool_batch = 64;
	o.cq_size =
		c.conns * (c.sq_depth + (m == PRIVATE_RQ ? c.rq_depth : 0)) +
		(m == PRIVATE_RQ ? 0 : c.srq_depth);
	std::string e = env.start(&o, &o);
	if (!e.empty()) {
		fprintf(stderr, "%s: setup: %s\n", mode_name(m), e.c_str());
		return false;
	}
	r->mode = m;
	if (m == SRQ_POOL) {
		fprintf(stderr, "%s: filling the pools (%u QPs each)\n",
			mode_name(m), c.conns);
		if (!env.pump(
			    [&] {
				    return env.stats(kSrv).pool_free ==
						   c.conns &&
					   env.stats(kCli).pool_free == c.conns;
			    },
			    600)) {
			fprintf(stderr, "pool fill timed out\n");
			return false;
		}
	}
	env.time_accepts = true;
	uint64_t heap0 = 0, heap1 = 0;
	uint64_t recv0 =
		env.stats(kSrv).recv_bytes + env.stats(kCli).recv_bytes;
	heap_bytes(&heap0);
	unsigned done = 0;
	for (unsigned step = 1; step <= 4; step++) {
		unsigned upto = c.conns * step / 4;
		std::vector<Peer *> batch;
		for (unsigned i = done; i < upto; i++) {
			auto p = std::make_unique<Peer>();
			p->index = i;
			batch.push_back(env.add(std::move(p)));
		}
		if (!env.connect_all(batch, 600)) {
			fprintf(stderr, "%s: connect timed out\n",
				mode_name(m));
			return false;
		}
		for (Peer *p : batch)
			if (p->state != qpl::P_ESTABLISHED) {
				fprintf(stderr,
					"%s: connection %u: err %d rej %d\n",
					mode_name(m), p->index, (int)p->cm_err,
					(int)p->reject_status);
				return false;
			}
		done = upto;
		uint64_t recv =
			env.stats(kSrv).recv_bytes + env.stats(kCli).recv_bytes;
		heap_bytes(&heap1);
		double heap = (double)(int64_t)(heap1 - heap0) -
			      (double)(int64_t)(recv - recv0);
		r->steps.push_back({done, heap / done, recv});
		fprintf(stderr, "%s: %u established\n", mode_name(m), done);
	}
	r->take_ns = env.accept_take_ns;
	r->modify_ns = env.accept_modify_ns;
	r->cm_ns = env.accept_cm_ns;
	r->pool_empty = env.stats(kSrv).pool_empty;
	std::vector<Peer *> clients;
	for (auto &p : env.peers)
		if (p->side == kCli)
			clients.push_back(p.get());
	env.disconnect_all(clients, false, false, 600);
	e = env.stop();
	if (!e.empty())
		fprintf(stderr, "%s: teardown: %s\n", mode_name(m), e.c_str());
	return true;
}

struct Doc {
	const Cfg *cfg;
	const std::vector<Result> *res;
};

void json_lat(cli_json *j, const char *key, const std::vector<uint64_t> &v)
{
	cli_json_obj(j, key);
	cli_json_num(j, "mean", mean_us(v));
	cli_json_num(j, "p50", pct_us(v, 50));
	cli_json_num(j, "p99", pct_us(v, 99));
	cli_json_end(j);
}

void json_doc(cli_json *j, const void *arg)
{
	const Doc *d = static_cast<const Doc *>(arg);
	cli_json_obj(j, nullptr);
	cli_json_str(j, "tool", "qp_mem");
	cli_json_u64(j, "conns", d->cfg->conns);
	cli_json_u64(j, "srq_depth", d->cfg->srq_depth);
	cli_json_u64(j, "recv_size", WHARF_QP_DEFAULT_RECV_SIZE);
	cli_json_u64(j, "credits", d->cfg->credits);
	cli_json_u64(j, "rq_depth", d->cfg->rq_depth);
	cli_json_u64(j, "sq_depth", d->cfg->sq_depth);
	cli_json_arr(j, "modes");
	for (const Result &r : *d->res) {
		cli_json_obj(j, nullptr);
		cli_json_str(j, "mode", mode_name(r.mode));
		cli_json_arr(j, "steps");
		for (const Step &s : r.steps) {
			cli_json_obj(j, nullptr);
			cli_json_u64(j, "conns", s.conns);
			cli_json_num(j, "heap_bytes_per_conn", s.heap_per_conn);
			cli_json_u64(j, "recv_bytes", s.recv_bytes);
			cli_json_end(j);
		}
		cli_json_end(j);
		cli_json_obj(j, "accept_us");
		json_lat(j, "take", r.take_ns);
		json_lat(j, "modify", r.modify_ns);
		json_lat(j, "rdma_accept", r.cm_ns);
		cli_json_end(j);
		if (r.mode == SRQ_POOL)
			cli_json_u64(j, "pool_empty", r.pool_empty);
		cli_json_end(j);
	}
	cli_json_end(j);
	cli_json_end(j);
}

void usage(const char *argv0)
{
	printf("usage: %s [--conns N] [--srq-depth D] [--credits C] "
	       "[--rq-depth R] [--sq-depth S] [--mode srq|rq|both] "
	       "[--json FILE]\n"
	       "  heap and registered receive bytes per connection, SRQ vs "
	       "per-QP receive queues,\n"
	       "  and accept-path latency with and without the QP pool, on "
	       "rxe0 (198.18.0.1).\n"
	       "  --conns      connections (default 1000)\n"
	       "  --srq-depth  SRQ buffers per shard (default 4096)\n"
	       "  --credits    SRQ receive credits per connection "
	       "(default 2)\n"
	       "  --rq-depth   private receive queue depth (default 16)\n"
	       "  --sq-depth   send queue depth (default 8)\n"
	       "  --mode       receive queues measured (default both)\n"
	       "  --json       also write the results as JSON (- = stdout)\n",
	       argv0);
}

// The count option -@o sets.
unsigned *count_opt(Cfg *c, int o)
{
	switch (o) {
	case 'n':
		return &c->conns;
	case 'd':
		return &c->srq_depth;
	case 'c':
		return &c->credits;
	case 'r':
		return &c->rq_depth;
	default:
		return &c->sq_depth;
	}
}

} // namespace

int main(int argc, char **argv)
{
	static const option opts[] = {
		{"conns", 1, nullptr, 'n'},    {"srq-depth", 1, nullptr, 'd'},
		{"credits", 1, nullptr, 'c'},  {"rq-depth", 1, nullptr, 'r'},
		{"sq-depth", 1, nullptr, 's'}, {"mode", 1, nullptr, 'm'},
		{"json", 1, nullptr, 'J'},     {"help", 0, nullptr, 'h'},
		{"version", 0, nullptr, 'V'},  {nullptr, 0, nullptr, 0}};
	Cfg c;
	int o;
	while ((o = getopt_long(argc, argv, "n:d:c:r:s:m:h", opts, nullptr)) !=
	       -1) {
		switch (o) {
		case 'n':
		case 'd':
		case 'c':
		case 'r':
		case 's':
			if (cli_u32(optarg, 0, 1u << 24, count_opt(&c, o))) {
				usage(argv[0]);
				return 2;
			}
			break;
		case 'm':
			if (strcmp(optarg, "srq") && strcmp(optarg, "rq") &&
			    strcmp(optarg, "both")) {
				usage(argv[0]);
				return 2;
			}
			c.srq = strcmp(optarg, "rq") != 0;
			c.rq = strcmp(optarg, "srq") != 0;
			break;
		case 'J':
			c.json = optarg;
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		case 'V':
			cli_version(stdout, "qp_mem");
			return 0;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (c.conns < 4) {
		usage(argv[0]);
		return 2;
	}
	if (!malloc_is_jemalloc()) {
		fprintf(stderr, "malloc is not jemalloc: heap numbers would "
				"miss allocations\n");
		return 1;
	}
	std::vector<Mode> modes;
	if (c.srq) {
		modes.push_back(SRQ_POOL);
		modes.push_back(SRQ_NOPOOL);
	}
	if (c.rq)
		modes.push_back(PRIVATE_RQ);
	std::vector<Result> res;
	for (Mode m : modes) {
		Result r;
		fprintf(stderr, "== %s, %u connections\n", mode_name(m),
			c.conns);
		if (!run(c, m, &r))
			return 1;
		res.push_back(r);
	}
	printf("# %u loopback connections on rxe0; heap = jemalloc "
	       "stats.allocated delta minus registered receive buffers\n",
	       c.conns);
	printf("# srq depth %u x %u B per end, %u credits/conn; per-QP rq "
	       "depth %u; sq depth %u\n",
	       c.srq_depth, WHARF_QP_DEFAULT_RECV_SIZE, c.credits, c.rq_depth,
	       c.sq_depth);
	printf("%-12s %6s %14s %14s %16s\n", "mode", "conns", "heap B/conn",
	       "heap B/end", "recv MiB (both)");
	for (auto &r : res)
		for (auto &s : r.steps)
			printf("%-12s %6u %14.0f %14.0f %16.1f\n",
			       mode_name(r.mode), s.conns, s.heap_per_conn,
			       s.heap_per_conn / 2, s.recv_bytes / 1048576.0);
	printf("\n# accept path per request, microseconds (mean / p50 / p99): "
	       "take = wharf_qp_take(),\n# modify = "
	       "wharf_qp_cm_accept_ready() (INIT/RTR/RTS), rdma_accept = the "
	       "CM call\n");
	printf("%-12s %8s %22s %22s %22s\n", "mode", "inline", "take", "modify",
	       "rdma_accept");
	for (auto &r : res) {
		char t[3][64];
		const std::vector<uint64_t> *v[3] = {&r.take_ns, &r.modify_ns,
						     &r.cm_ns};
		for (int i = 0; i < 3; i++)
			snprintf(t[i], sizeof(t[i]), "%.1f / %.1f / %.1f",
				 mean_us(*v[i]), pct_us(*v[i], 50),
				 pct_us(*v[i], 99));
		printf("%-12s %8s %22s %22s %22s\n", mode_name(r.mode),
		       r.mode == SRQ_POOL ? std::to_string(r.pool_empty).c_str()
					  : "all",
		       t[0], t[1], t[2]);
	}
	if (c.json) {
		Doc d{&c, &res};
		int err = cli_json_write(c.json, CLI_JSON_PRETTY, json_doc, &d);
		if (err) {
			fprintf(stderr, "qp_mem: %s: %s\n", c.json,
				strerror(-err));
			return 1;
		}
	}
	return 0;
}
