/*
 * bench/storm/server.c - one wharf variant: the server in this process, the
 * clients as child processes (client.c, driven through children.c).
 *
 * The server accepts every request but those storm_should_reject() picks
 * (REJ with STORM_REJ_TEXT), destroys every connection when it ends, and
 * counts nothing itself: the outcomes come from the clients, the server's
 * state from wharf_cm_stats() and the QP resources' stats.
 *
 * Before the storm, one connection from each server shard to the listener
 * creates that shard's QP resources (CQ, SRQ, the pool filled), as a
 * running server would have them; its counters are subtracted.
 *
 * Then: spawn the clients, wait until all are ready, start them at once,
 * kill the --kill victims once they are mid-storm, sample memory when every
 * live client's handshakes have ended, let them disconnect, and check that
 * the server comes back to zero: no connection, no handshake, no active
 * QP, every request ended (bounded wait, reported).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/qp.h>

#include "bench/storm/children.h"
#include "bench/storm/rdma.h"

#define MAX_SHARDS     256
#define RECLAIM_WAIT_S 60

struct srv {
	struct wharf_ctx *ctx;
	struct wharf_cm *cm;
	struct wharf_listener *l;
	double reject;
	unsigned nshards;
	_Atomic(struct wharf_qp_res *) res[MAX_SHARDS];
	_Atomic unsigned warm_est;
	/* The passive side of each storm connection, by its index. */
	struct storm_conn *passive;
	unsigned nconns;
	/* --msg: the answer's WR per connection index, and its buffer,
	 * registered once on the device's PD (shared by the shards: it is
	 * only read). */
	struct wharf_wr *wrs;
	uint32_t answer[2];
	struct ibv_mr *mr;
	pthread_mutex_t mr_lock;
};

#define STORM_ANSWER_TAG 0x53544d32u /* "STM2" */

/* ---------------------------------------------------------------- */
/* Server callbacks                                                  */
/* ---------------------------------------------------------------- */

static void capture_res(struct srv *s, struct wharf_conn *conn)
{
	struct wharf_qp *qp = wharf_conn_qp(conn);
	unsigned i = wharf_shard_index(wharf_conn_shard(conn));

	if (qp && i < MAX_SHARDS)
		atomic_store(&s->res[i], wharf_qp_res_of(qp));
}

/* The storm index in a request's private data, or -1. */
static int64_t storm_index(const struct wharf_conn_request *req)
{
	const uint8_t *pd = req ? req->private_data : NULL;
	uint32_t g = 0;

	if (!pd || req->private_data_len < STORM_PDATA_LEN ||
	    memcmp(pd, STORM_MAGIC, 4))
		return -1;
	for (int b = 0; b < 4; b++)
		g |= (uint32_t)pd[4 + b] << (8 * b);
	return g;
}

static void srv_request(struct wharf_conn *conn,
			const struct wharf_conn_request *req, void *arg)
{
	struct srv *s = arg;
	int64_t g = storm_index(req);

	if (g >= 0 && storm_should_reject((uint32_t)g, s->reject)) {
		wharf_reject(conn, STORM_REJ_TEXT, sizeof(STORM_REJ_TEXT));
		wharf_conn_destroy(conn);
		return;
	}
	if (wharf_accept(conn, NULL) == -EINVAL) {
		wharf_reject(conn, NULL, 0);
		wharf_conn_destroy(conn);
	}
}

static void srv_established(struct wharf_conn *conn,
			    const struct wharf_conn_info *info, void *arg)
{
	struct srv *s = arg;
	int64_t g = storm_index(wharf_conn_get_request(conn));

	(void)info;
	capture_res(s, conn);
	if (g >= 0 && (uint64_t)g < s->nconns) {
		struct storm_conn *p = &s->passive[g];

		p->t[STORM_T_START] =
			wharf_conn_step_ns(conn, WHARF_STEP_ADOPTED);
		p->t[STORM_T_QP] =
			wharf_conn_step_ns(conn, WHARF_STEP_QP_READY);
		p->t[STORM_T_SENT] = wharf_conn_step_ns(conn, WHARF_STEP_SENT);
		p->t[STORM_T_EST] =
			wharf_conn_step_ns(conn, WHARF_STEP_ESTABLISHED);
	}
}

static void srv_error(struct wharf_conn *conn, enum wharf_conn_error e, int err,
		      void *arg)
{
	(void)e;
	(void)err;
	(void)arg;
	wharf_conn_destroy(conn);
}

static void srv_disconnected(struct wharf_conn *conn, void *arg)
{
	(void)arg;
	wharf_conn_destroy(conn);
}

/* --msg: answers a client's SEND with one SEND. */
static int srv_recv(struct wharf_conn *conn, void *buf,
		    const struct wharf_qp_recv *rx, void *arg)
{
	struct srv *s = arg;
	uint32_t g;
	struct ibv_sge sge;
	struct ibv_mr *mr;

	if (rx->len < sizeof(s->answer) || !s->wrs)
		return 0;
	memcpy(&g, (const char *)buf + sizeof(uint32_t), sizeof(g));
	if (g >= s->nconns)
		return 0;
	pthread_mutex_lock(&s->mr_lock);
	if (!s->mr)
		s->mr = ibv_reg_mr(wharf_conn_pd(conn), s->answer,
				   sizeof(s->answer), IBV_ACCESS_LOCAL_WRITE);
	mr = s->mr;
	pthread_mutex_unlock(&s->mr_lock);
	if (!mr)
		return 0;
	sge.addr = (uintptr_t)s->answer;
	sge.length = sizeof(s->answer);
	sge.lkey = mr->lkey;
	wharf_wr_init(&s->wrs[g], STORM_ANSWER_TAG);
	wharf_qp_post_send(wharf_conn_qp(conn), &s->wrs[g], &sge, 1, false, 0);
	return 0;
}

static const struct wharf_conn_ops srv_ops = {
	.size = sizeof(srv_ops),
	.on_request = srv_request,
	.on_established = srv_established,
	.on_error = srv_error,
	.on_disconnected = srv_disconnected,
	.on_recv = srv_recv,
};

/* The warm-up connections' active side. */
static void warm_established(struct wharf_conn *conn,
			     const struct wharf_conn_info *info, void *arg)
{
	struct srv *s = arg;

	(void)info;
	capture_res(s, conn);
	wharf_disconnect(conn);
}

static void warm_end(struct wharf_conn *conn, void *arg)
{
	struct srv *s = arg;

	wharf_conn_destroy(conn);
	atomic_fetch_add(&s->warm_est, 1);
}

static void warm_error(struct wharf_conn *conn, enum wharf_conn_error e,
		       int err, void *arg)
{
	(void)e;
	(void)err;
	warm_end(conn, arg);
}

static void warm_rejected(struct wharf_conn *conn,
			  const struct wharf_conn_reject *rej, void *arg)
{
	(void)rej;
	warm_end(conn, arg);
}

static const struct wharf_conn_ops warm_ops = {
	.size = sizeof(warm_ops),
	.on_established = warm_established,
	.on_rejected = warm_rejected,
	.on_error = warm_error,
	.on_disconnected = warm_end,
};

/* ---------------------------------------------------------------- */
/* Server state                                                      */
/* ---------------------------------------------------------------- */

struct res_query {
	struct wharf_qp_res *res;
	struct wharf_qp_res_stats st;
	int err;
	sem_t done;
};

static void res_query_fn(struct wharf_shard *shard, void *arg)
{
	struct res_query *q = arg;

	(void)shard;
	q->st.size = sizeof(q->st);
	q->err = wharf_qp_res_stats(q->res, &q->st);
	sem_post(&q->done);
}

/* Sums the QP resources' stats over the shards (on each shard). */
static void res_sum(struct srv *s, struct wharf_qp_res_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < s->nshards && i < MAX_SHARDS; i++) {
		struct res_query q = {.res = atomic_load(&s->res[i])};

		if (!q.res)
			continue;
		sem_init(&q.done, 0, 0);
		if (wharf_shard_send(wharf_ctx_shard(s->ctx, i), res_query_fn,
				     &q)) {
			sem_destroy(&q.done);
			continue;
		}
		sem_wait(&q.done);
		sem_destroy(&q.done);
		if (q.err)
			continue;
		sum->recv_bytes += q.st.recv_bytes;
		sum->qps_active += q.st.qps_active;
		sum->pool_empty += q.st.pool_empty;
		sum->pool_free += q.st.pool_free;
		sum->pool_created += q.st.pool_created;
		sum->pool_recycled += q.st.pool_recycled;
		sum->pool_quarantined += q.st.pool_quarantined;
	}
}

static struct wharf_cm_stats cm_stats(struct srv *s)
{
	struct wharf_cm_stats st = {.size = sizeof(st)};

	wharf_cm_stats(s->cm, &st);
	return st;
}

static uint64_t finals(const struct wharf_cm_stats *st)
{
	return st->rejected_app + st->rejected_busy + st->rejected_by_peer +
	       st->timed_out + st->unreachable + st->failed + st->disconnected +
	       st->aborted + st->deferred_timed_out + st->deferred_lost;
}

static void sleep_ms(unsigned ms)
{
	usleep(ms * 1000u);
}

static int srv_start(struct srv *s, const struct storm_opts *o, unsigned shards,
		     bool pool, uint16_t *port)
{
	struct wharf_ctx_opts co;
	struct wharf_qp_res_opts ro = {.size = sizeof(ro)};
	struct wharf_cm_opts mo = {.size = sizeof(mo)};
	struct wharf_listen_opts lo;
	struct sockaddr_in a = {.sin_family = AF_INET};
	int err;

	if (inet_pton(AF_INET, o->addr, &a.sin_addr) != 1)
		return -EINVAL;
	wharf_ctx_opts_init(&co);
	co.nshards = shards;
	if (storm_placement_split(&o->place) && shards <= o->place.nserver) {
		co.cpus = o->place.server;
		co.ncpus = shards;
	}
	err = wharf_ctx_create(&co, &s->ctx);
	if (err)
		return err;
	s->nshards = wharf_ctx_shard_count(s->ctx);
	/* One receive credit per connection, small buffers: an SRQ per
	 * shard that starts at its share of the connections and may grow
	 * (in chunks of that share) to hold all of them, as far as the
	 * device allows (cm_create clamps srq_max and says so). */
	ro.recv_credits = 1;
	ro.recv_buf_size = 256;
	ro.srq_depth = o->conns / s->nshards + o->conns / (8 * s->nshards) + 64;
	if (ro.srq_depth > STORM_SRQ_CHUNK_MAX)
		ro.srq_depth = STORM_SRQ_CHUNK_MAX;
	ro.srq_max = o->conns + o->conns / 8 + 64;
	if (ro.srq_max < ro.srq_depth)
		ro.srq_max = ro.srq_depth;
	ro.no_quarantine_delay = true;
	storm_res_shape(&ro, o->conns);
	ro.no_pool = !pool;
	if (pool) {
		ro.pool_size = o->conns / s->nshards + 16;
		if (ro.pool_size > 1024)
			ro.pool_size = 1024;
		ro.pool_batch = 32;
	}
	mo.res_opts = &ro;
	/* Past what one SRQ or CQ of the device holds (32,767 on rxe), a
	 * shard makes another set rather than deferring. */
	mo.res_per_device = 4;
	mo.handshake_cap = o->conns + 16;
	err = wharf_cm_create(s->ctx, &mo, &s->cm);
	if (err)
		return err;
	wharf_listen_opts_init(&lo);
	lo.addr = (struct sockaddr *)&a;
	lo.ops = &srv_ops;
	lo.arg = s;
	err = wharf_listen(s->cm, &lo, &s->l);
	if (err)
		return err;
	*port = wharf_listener_port(s->l);
	return 0;
}

/* One connection from every server shard to the listener, then gone. */
static int srv_warm(struct srv *s, const struct storm_opts *o, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	uint64_t end = wharf_now_ns() + 60ull * 1000000000u;

	inet_pton(AF_INET, o->addr, &a.sin_addr);
	for (unsigned i = 0; i < s->nshards; i++) {
		struct wharf_connect_opts co;
		int err;

		wharf_connect_opts_init(&co);
		co.dst = (struct sockaddr *)&a;
		co.ops = &warm_ops;
		co.arg = s;
		co.shard = (int)i;
		err = wharf_connect(s->cm, &co, NULL);
		if (err)
			return err;
	}
	while (atomic_load(&s->warm_est) < s->nshards) {
		if (wharf_now_ns() > end)
			return -ETIMEDOUT;
		sleep_ms(10);
	}
	for (;;) {
		struct wharf_cm_stats st = cm_stats(s);

		if (!st.connections && !st.handshakes)
			return 0;
		if (wharf_now_ns() > end)
			return -ETIMEDOUT;
		sleep_ms(10);
	}
}

static void srv_stop(struct srv *s)
{
	if (s->l)
		wharf_listener_destroy(s->l);
	/* Memory on the cm's PD goes before the cm; every connection has
	 * ended by now (the reclaim check waited for it). */
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cm)
		wharf_cm_destroy(s->cm);
	if (s->ctx)
		wharf_ctx_destroy(s->ctx);
}

/* ---------------------------------------------------------------- */
/* The variant                                                       */
/* ---------------------------------------------------------------- */

static void reclaim_check(struct srv *s, const struct wharf_cm_stats *base,
			  struct storm_result *r)
{
	uint64_t t0 = wharf_now_ns();
	uint64_t end = t0 + (uint64_t)RECLAIM_WAIT_S * 1000000000u;
	struct wharf_cm_stats st;
	struct wharf_qp_res_stats q;
	uint64_t req, fin;

	for (;;) {
		st = cm_stats(s);
		res_sum(s, &q);
		req = st.requests + st.connects - base->requests -
		      base->connects;
		fin = finals(&st) - finals(base);
		if ((!st.connections && !st.handshakes && !q.qps_active &&
		     req == fin) ||
		    wharf_now_ns() > end)
			break;
		sleep_ms(20);
	}
	r->has_reclaim = true;
	r->reclaimed = !st.connections && !st.handshakes && !q.qps_active &&
		       req == fin;
	r->reclaim_s = (wharf_now_ns() - t0) / 1e9;
	snprintf(r->reclaim_what, sizeof(r->reclaim_what),
		 "%" PRIu64 " connections, %" PRIu64
		 " handshakes, %u QPs active, %u in the pool; %" PRIu64
		 " requests, %" PRIu64 " ended",
		 st.connections, st.handshakes, q.qps_active, q.pool_free, req,
		 fin);
}

static void server_counts(struct srv *s, const struct wharf_cm_stats *b,
			  struct storm_result *r)
{
	struct wharf_cm_stats st = cm_stats(s);

	r->has_server_counts = true;
	r->srv_requests = st.requests - b->requests;
	r->srv_accepted = st.accepted - b->accepted;
	r->srv_rejected_app = st.rejected_app - b->rejected_app;
	r->srv_rejected_busy = st.rejected_busy - b->rejected_busy;
	r->srv_timed_out = st.timed_out - b->timed_out;
	r->srv_failed = st.failed - b->failed;
	r->srv_aborted = st.aborted - b->aborted;
	r->srv_disconnected = st.disconnected - b->disconnected;
	r->srv_forced = st.forced_teardowns - b->forced_teardowns;
}

int storm_run_wharf(const struct storm_opts *o, unsigned shards, bool pool,
		    struct storm_result *r)
{
	struct srv s = {.reject = o->reject, .nconns = o->conns};
	struct storm_conn *conns = calloc(o->conns, sizeof(*conns));
	uint64_t *scratch = calloc(o->conns, sizeof(*scratch));
	struct child *cs = calloc(o->clients, sizeof(*cs));
	struct wharf_cm_stats base;
	struct wharf_qp_res_stats q0, q1;
	struct storm_tick_arg ta = {.name = r->name, .total = o->conns};
	unsigned nkill = storm_kill_count(o->clients, o->kill), first = 0;
	double cpu0, cpu_d, heap0, heap1;
	static struct storm_heap_classes hc0, hc1;
	struct storm_cm_mads mads0 = {0}, mads1;
	uint64_t deadline;
	uint16_t port = 0;
	int err;

	r->conns = o->conns;
	r->clients = o->clients;
	s.passive = calloc(o->conns, sizeof(*s.passive));
	pthread_mutex_init(&s.mr_lock, NULL);
	s.answer[0] = 0x53524d41;
	if (o->msg && !(s.wrs = calloc(o->conns, sizeof(*s.wrs)))) {
		err = -ENOMEM;
		goto out;
	}
	if (!conns || !scratch || !cs || !s.passive) {
		err = -ENOMEM;
		goto out;
	}
	err = srv_start(&s, o, shards, pool, &port);
	if (!err)
		err = srv_warm(&s, o, port);
	if (err) {
		snprintf(r->error, sizeof(r->error), "server setup: %s",
			 strerror(-err));
		goto out;
	}
	r->shards = s.nshards;
	r->ran = true;
	fprintf(stderr, "storm: %s: server on %s:%u, %u shards; %u clients\n",
		r->name, o->addr, port, s.nshards, o->clients);
	for (unsigned i = 0; i < o->clients; i++)
		cs[i].in = cs[i].out = -1;
	for (unsigned i = 0; i < o->clients; i++) {
		struct child *c = &cs[i];

		c->first = first;
		c->count = o->conns / o->clients +
			   (i < o->conns % o->clients ? 1 : 0);
		first += c->count;
		/* The victims are the last clients. */
		c->victim = i >= o->clients - nkill;
		err = storm_child_spawn(
			c, o, port, o->ramp / o->clients,
			storm_placement_client_cpu(&o->place, i));
		if (err) {
			snprintf(r->error, sizeof(r->error), "fork: %s",
				 strerror(-err));
			goto out_children;
		}
	}
	deadline = wharf_now_ns() + (uint64_t)o->timeout_s * 1000000000u;
	if (!storm_children_pump(cs, o->clients, conns, storm_children_ready,
				 deadline, NULL, NULL)) {
		snprintf(r->error, sizeof(r->error),
			 "clients not ready in %u s", o->timeout_s);
		goto out_children;
	}
	base = cm_stats(&s);
	(void)storm_cm_mads_read(STORM_SYSFS_IB, &mads0);
	res_sum(&s, &q0);
	cpu0 = storm_cpu_s();
	storm_heap_classes(&hc0);
	storm_heap_prof_dump("before");
	heap0 = storm_heap_bytes();
	ta.go = wharf_now_ns();
	for (unsigned i = 0; i < o->clients; i++)
		storm_child_tell(&cs[i], 'g');
	if (!storm_children_pump(cs, o->clients, conns,
				 storm_children_handshakes, deadline,
				 storm_children_tick, &ta))
		snprintf(r->error, sizeof(r->error),
			 "handshakes not over in %u s", o->timeout_s);
	heap1 = storm_heap_bytes();
	storm_heap_classes(&hc1);
	storm_heap_prof_dump("established");
	storm_heap_classes_print(stderr, &hc0, &hc1, o->conns);
	res_sum(&s, &q1);
	cpu_d = storm_cpu_s();
	for (unsigned i = 0; i < o->clients; i++)
		storm_child_tell(&cs[i], 'd');
	if (!storm_children_pump(cs, o->clients, conns, storm_children_ended,
				 deadline, NULL, NULL) &&
	    !r->error[0])
		snprintf(r->error, sizeof(r->error), "clients not done in %u s",
			 o->timeout_s);
	storm_children_reap(cs, o->clients);
	reclaim_check(&s, &base, r);
	if (!storm_cm_mads_read(STORM_SYSFS_IB, &mads1))
		storm_cm_mads_delta(&r->mads, &mads0, &mads1);
	r->server.cpu_s = storm_cpu_s() - cpu0;
	/* Disconnects and reclaim: until the server is back to zero. */
	r->server.teardown_cpu_s = storm_cpu_s() - cpu_d;
	/* Receive buffers of a chunk the SRQ grew by come from the shard's
	 * arena, which is jemalloc's: they are registered memory, counted
	 * in reg_bytes, so not in the heap as well. */
	r->server.heap_bytes =
		heap0 >= 0 && heap1 >= 0
			? heap1 - heap0 -
				  (double)(q1.recv_bytes - q0.recv_bytes)
			: -1.0;
	r->server.reg_bytes = (double)q1.recv_bytes;
	r->server.pool_misses = q1.pool_empty - q0.pool_empty;
	{
		struct wharf_cm_stats st = cm_stats(&s);
		uint64_t takes = st.accepted - base.accepted;

		r->server.pool_hits = pool && takes >= r->server.pool_misses
					      ? takes - r->server.pool_misses
					      : 0;
		if (!pool)
			r->server.pool_misses = takes;
	}
	r->client.heap_bytes = 0;
	r->client.reg_bytes = -1;
	r->client.teardown_cpu_s = 0;
	for (unsigned i = 0; i < o->clients; i++) {
		struct child *c = &cs[i];

		if (c->killed) {
			r->killed++;
			for (unsigned g = c->first; g < c->first + c->count;
			     g++)
				conns[g].outcome = STORM_OUT_KILLED;
			continue;
		}
		r->client.cpu_s += c->cpu_s;
		r->client.teardown_cpu_s += c->teardown_cpu_s;
		if (c->heap >= 0 && r->client.heap_bytes >= 0)
			r->client.heap_bytes += c->heap;
		else
			r->client.heap_bytes = -1;
		r->out.busy_retried += c->busy_retried;
		if (!r->has_window || c->window < r->window_lo)
			r->window_lo = c->window;
		if (!r->has_window || c->window > r->window_hi)
			r->window_hi = c->window;
		r->window_grows += c->window_grows;
		r->window_shrinks += c->window_shrinks;
		r->cli_disconnected += c->disconnected;
		r->cli_forced += c->forced;
		r->has_window = true;
	}
	r->has_outcomes = true;
	storm_outcomes_add(&r->out, conns, o->conns);
	storm_result_from_conns(r, conns, o->conns, scratch);
	storm_result_add_server_rows(r, s.passive, o->conns);
	server_counts(&s, &base, r);
	{
		char why[160];

		if ((storm_outcomes_check(&r->out, why, sizeof(why)) ||
		     storm_outcomes_expected(&r->out, why, sizeof(why))) &&
		    !r->error[0])
			snprintf(r->error, sizeof(r->error), "%s", why);
	}
	if (!r->reclaimed && !r->error[0])
		snprintf(r->error, sizeof(r->error),
			 "the server did not come back to zero");
	goto out;
out_children:
	storm_children_reap(cs, o->clients);
out:
	srv_stop(&s);
	free(conns);
	free(scratch);
	free(cs);
	free(s.passive);
	free(s.wrs);
	pthread_mutex_destroy(&s.mr_lock);
	return err;
}
