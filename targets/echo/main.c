/*
 * targets/echo/main.c - wharf-echo's driver: options, the context and cm,
 * listening or connecting, waiting (bounded) for every exchange, teardown.
 * The exchange itself is in rc.c and ud.c (see echo.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets/echo/echo.h"

/* -v: each line stamped with the library's clock (CLOCK_MONOTONIC, the
 * guest's uptime), in seconds, so that the fault suite times steps
 * without a reader's lag. */
void echo_log(struct echo *e, const char *fmt, ...)
{
	uint64_t ms;
	va_list ap;

	if (!e->a.verbose)
		return;
	ms = wharf_now_ms();
	va_start(ap, fmt);
	fprintf(stderr, "wharf-echo: %llu.%03llu ",
		(unsigned long long)(ms / 1000),
		(unsigned long long)(ms % 1000));
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void wake(struct echo *e)
{
	pthread_mutex_lock(&e->lock);
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

void echo_fail(struct echo *e, const char *what, int err)
{
	fprintf(stderr, "wharf-echo: %s: %s (%d)\n", what, strerror(-err), err);
	atomic_fetch_add(&e->failed, 1);
	wake(e);
}

void echo_finished(struct echo *e, struct echo_conn *ec, bool ok)
{
	if (ec->done)
		return;
	ec->done = true;
	if (ok)
		atomic_fetch_add(&e->finished, 1);
	else
		atomic_fetch_add(&e->failed, 1);
	wake(e);
}

/* The connection's own state, created at its first callback. */
struct echo_conn *echo_conn_of(struct wharf_conn *conn, void *arg)
{
	struct echo *e = arg;
	struct echo_conn *ec;
	struct echo_shard *sh;

	if (*(enum echo_kind *)arg == ECHO_KIND_CONN)
		return arg;
	ec = calloc(1, sizeof(*ec));
	if (!ec) {
		echo_fail(e, "connection state", -ENOMEM);
		return NULL;
	}
	ec->kind = ECHO_KIND_CONN;
	ec->e = e;
	ec->conn = conn;
	ec->id = wharf_conn_id(conn);
	ec->shard = wharf_shard_index(wharf_conn_shard(conn));
	sh = &e->shards[ec->shard];
	ec->next = sh->conns;
	sh->conns = ec;
	wharf_conn_set_arg(conn, ec);
	return ec;
}

struct go_msg {
	struct echo *e;
	void (*fn)(struct echo_conn *);
};

static void go_fn(struct wharf_shard *shard, void *arg)
{
	struct go_msg *m = arg;
	struct echo_shard *sh = &m->e->shards[wharf_shard_index(shard)];

	for (struct echo_conn *ec = sh->conns; ec; ec = ec->next)
		if (ec->established && !ec->done)
			m->fn(ec);
	free(m);
}

/* Called on the shard of the last connection to be established. */
/*
 * A connection that will not carry echoes (rejected, or an error): prints
 * "wharf-echo: " and the message on stderr and finishes it as failed.
 */
void echo_conn_failed(struct wharf_conn *conn, void *arg, const char *fmt, ...)
{
	struct echo_conn *ec = echo_conn_of(conn, arg);
	va_list ap;

	fputs("wharf-echo: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (ec)
		echo_finished(ec->e, ec, false);
}

void echo_all_established(struct echo *e, void (*fn)(struct echo_conn *))
{
	atomic_store(&e->go, true);
	echo_log(e, "all %u connections established", e->a.conns);
	for (unsigned i = 0; i < e->nshards; i++) {
		struct go_msg *m = malloc(sizeof(*m));
		int err;

		if (!m) {
			echo_fail(e, "go message", -ENOMEM);
			return;
		}
		m->e = e;
		m->fn = fn;
		while ((err = wharf_shard_send(wharf_ctx_shard(e->ctx, i),
					       go_fn, m)) == -EAGAIN)
			;
		if (err) {
			free(m);
			echo_fail(e, "go message", err);
		}
	}
}

/* ---------------------------------------------------------------- */
/* Teardown: every shard frees its connections, then the cm goes.   */
/* ---------------------------------------------------------------- */

struct cleanup {
	struct echo *e;
	atomic_uint left;
};

static void cleanup_fn(struct wharf_shard *shard, void *arg)
{
	struct cleanup *cl = arg;
	struct echo *e = cl->e;
	struct echo_shard *sh = &e->shards[wharf_shard_index(shard)];
	struct echo_conn *ec, *next;

	if (sh->poller)
		wharf_poller_remove(sh->poller);
	sh->poller = NULL;
	for (ec = sh->conns; ec; ec = next) {
		next = ec->next;
		wharf_timer_destroy(ec->hold); /* before its connection */
		ec->hold = NULL;
		if (ec->conn)
			wharf_conn_destroy(ec->conn);
		ec->conn = NULL;
		ec->zombie = true;
		if (ec->completions == ec->sends_posted) {
			echo_conn_release(ec);
			free(ec);
		} /* else freed by its last send completion (rc.c) */
	}
	sh->conns = NULL;
	echo_ud_shard_stop(sh);
	atomic_fetch_sub(&cl->left, 1);
	wake(e);
}

static void cleanup_all(struct echo *e)
{
	struct cleanup cl = {.e = e};

	atomic_store(&cl.left, e->nshards);
	for (unsigned i = 0; i < e->nshards; i++)
		while (wharf_shard_send(wharf_ctx_shard(e->ctx, i), cleanup_fn,
					&cl) == -EAGAIN)
			;
	pthread_mutex_lock(&e->lock);
	while (atomic_load(&cl.left))
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

static bool wait_done(struct echo *e)
{
	struct timespec dl;
	bool timed_out = false;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += e->a.timeout_s;
	pthread_mutex_lock(&e->lock);
	while (atomic_load(&e->finished) + atomic_load(&e->failed) <
	       e->a.conns) {
		if (pthread_cond_timedwait(&e->cond, &e->lock, &dl) ==
		    ETIMEDOUT) {
			timed_out = true;
			break;
		}
	}
	pthread_mutex_unlock(&e->lock);
	if (timed_out)
		fprintf(stderr,
			"wharf-echo: timed out after %u s: %u of %u "
			"connections finished, %u failed, %u "
			"established\n",
			e->a.timeout_s, atomic_load(&e->finished), e->a.conns,
			atomic_load(&e->failed), atomic_load(&e->established));
	return !timed_out && !atomic_load(&e->failed);
}

/* ---------------------------------------------------------------- */
/* Roles                                                             */
/* ---------------------------------------------------------------- */

static int serve(struct echo *e)
{
	struct wharf_listen_opts lo;
	struct sockaddr_storage addr;
	int err;

	err = echo_resolve(e->a.bind, e->a.port, true, &addr);
	if (err)
		return err;
	wharf_listen_opts_init(&lo);
	lo.addr = (struct sockaddr *)&addr;
	lo.ps = e->a.ud ? WHARF_PS_UD : WHARF_PS_RC;
	lo.ops = e->a.ud ? &echo_ud_ops : &echo_rc_ops;
	lo.arg = e;
	lo.qp.recv_credits = e->a.count ? e->a.count : 1;
	lo.disconnect_timeout_ms = e->a.disconnect_ms;
	err = wharf_listen(e->cm, &lo, &e->listener);
	if (err)
		return err;
	printf("wharf-echo: %s server listening on port %u\n",
	       e->a.ud ? "UD" : "RC", wharf_listener_port(e->listener));
	fflush(stdout);
	return 0;
}

static int connect_all(struct echo *e)
{
	struct wharf_conn_param p = {.size = sizeof(p)};
	struct wharf_connect_opts co;
	int err;

	err = echo_resolve(e->a.dst, e->a.port, false, &e->dst);
	if (!err && e->a.bind) {
		err = echo_resolve(e->a.bind, "0", true, &e->src);
		e->has_src = !err;
	}
	if (err)
		return err;
	/* ucmatose's connect parameters (UD: none). */
	p.responder_resources = 1;
	p.initiator_depth = 1;
	p.retry_count = 5;
	p.rnr_retry_count = 0;
	for (unsigned i = 0; i < e->a.conns; i++) {
		wharf_connect_opts_init(&co);
		co.dst = (struct sockaddr *)&e->dst;
		co.src = e->has_src ? (struct sockaddr *)&e->src : NULL;
		co.ps = e->a.ud ? WHARF_PS_UD : WHARF_PS_RC;
		co.param = e->a.ud ? NULL : &p;
		co.ops = e->a.ud ? &echo_ud_ops : &echo_rc_ops;
		co.arg = e;
		co.shard = (int)(i % e->nshards);
		co.qp.recv_credits = e->a.count ? e->a.count : 1;
		co.disconnect_timeout_ms = e->a.disconnect_ms;
		err = wharf_connect(e->cm, &co, NULL);
		if (err)
			return err;
	}
	printf("wharf-echo: %s client: %u connections to %s port %s\n",
	       e->a.ud ? "UD" : "RC", e->a.conns, e->a.dst, e->a.port);
	fflush(stdout);
	return 0;
}

static int setup(struct echo *e)
{
	struct wharf_ctx_opts copts;
	struct wharf_qp_res_opts ropts = {.size = sizeof(ropts)};
	struct wharf_cm_opts mopts = {.size = sizeof(mopts)};
	uint64_t need = (uint64_t)e->a.conns * (e->a.count ? e->a.count : 1);
	int err;

	wharf_ctx_opts_init(&copts);
	copts.nshards = e->a.shards;
	err = wharf_ctx_create(&copts, &e->ctx);
	if (err)
		return err;
	e->nshards = wharf_ctx_shard_count(e->ctx);
	e->shards = calloc(e->nshards, sizeof(*e->shards));
	if (!e->shards)
		return -ENOMEM;
	/* Every receive of every connection fits one shard's SRQ twice. */
	need = need * 2 + 64;
	ropts.srq_depth = need > 1024 ? (uint32_t)need : 1024;
	ropts.recv_buf_size = e->a.size > 4096 ? e->a.size : 4096;
	ropts.recv_credits = e->a.count ? e->a.count : 1;
	mopts.res_opts = &ropts;
	mopts.handshake_cap = e->a.handshake_cap;
	return wharf_cm_create(e->ctx, &mopts, &e->cm);
}

/*
 * Once every connection is gone: the server's requests and deferrals, then
 * (both roles) every attempt's outcome and the gauges, which must read 0:
 * the line the fault suite (tests/faults) checks.
 */
static void print_stats(struct echo *e)
{
	struct wharf_cm_stats st = {.size = sizeof(st)};

	if (wharf_cm_stats(e->cm, &st))
		return;
	if (!e->a.dst)
		printf("wharf-echo: requests %llu, deferred %llu (accepted "
		       "after the wait %llu, timed out %llu), refused %llu\n",
		       (unsigned long long)st.requests,
		       (unsigned long long)st.deferred_total,
		       (unsigned long long)st.deferred_accepted,
		       (unsigned long long)st.deferred_timed_out,
		       (unsigned long long)(st.rejected_busy +
					    st.rejected_app));
	printf("wharf-echo: outcomes: connects %llu requests %llu "
	       "accepted %llu connected %llu rejected %llu timed_out %llu "
	       "unreachable %llu failed %llu aborted %llu disconnected %llu "
	       "forced_teardowns %llu; left: connections %llu handshakes "
	       "%llu waiting %llu\n",
	       (unsigned long long)st.connects, (unsigned long long)st.requests,
	       (unsigned long long)st.accepted,
	       (unsigned long long)st.connected,
	       (unsigned long long)(st.rejected_app + st.rejected_busy +
				    st.rejected_by_peer),
	       (unsigned long long)st.timed_out,
	       (unsigned long long)st.unreachable,
	       (unsigned long long)st.failed, (unsigned long long)st.aborted,
	       (unsigned long long)st.disconnected,
	       (unsigned long long)st.forced_teardowns,
	       (unsigned long long)st.connections,
	       (unsigned long long)st.handshakes,
	       (unsigned long long)st.deferred);
}

int main(int argc, char **argv)
{
	struct echo *e = calloc(1, sizeof(*e));
	bool ok = false;
	int err;

	if (!e)
		return 1;
	e->kind = ECHO_KIND_PROGRAM;
	err = echo_args_parse(&e->a, argc, argv);
	if (err) {
		free(e);
		return err > 0 ? 0 : 2;
	}
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	err = setup(e);
	if (!err)
		err = e->a.dst ? connect_all(e) : serve(e);
	if (err)
		echo_fail(e, e->cm ? "start" : "setup", err);
	else
		ok = wait_done(e);
	if (e->cm) {
		cleanup_all(e);
		print_stats(e);
		wharf_listener_destroy(e->listener);
		wharf_cm_destroy(e->cm);
	}
	wharf_ctx_destroy(e->ctx);
	printf("wharf-echo: %s: %u of %u connections completed %u "
	       "messages each\n",
	       ok ? "success" : "FAILED", atomic_load(&e->finished), e->a.conns,
	       e->a.count);
	free(e->shards);
	free(e);
	return ok ? 0 : 1;
}
