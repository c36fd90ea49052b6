/*
 * bench/storm/client.c - one client process of a storm.
 *
 *   storm client ADDR PORT FIRST COUNT RATE TIMEOUT_MS MSG WINDOW
 *
 * Connections FIRST .. FIRST+COUNT-1 (the index travels in the REQ's
 * private data) from a context with one shard, RATE per second (0: all at
 * once), busy REJs retried after the server's hint, address and route
 * resolution timeouts TIMEOUT_MS (0: wharf's defaults), connect window
 * WINDOW (0: wharf's default; "none": no window).  With MSG 1, a
 * handshake ends when the server has answered one SEND (both on the
 * client's single shard, so the send buffer needs no lock).  Protocol with the
 * parent, one line each way:
 *
 *   -> "ready"                   cm up
 *   <- 'g'                       start connecting
 *   -> "p N"                     N handshakes ended (about every 200 ms)
 *   -> "handshakes N"            every handshake ended
 *   <- 'd'                       disconnect every established connection
 *   -> "c G OUT REASON FLAGS T0 .. T11"   one line per connection
 *   -> "stats BUSY_RETRIED CPU_S HEAP_BYTES WINDOW GROWS SHRINKS TEARDOWN_CPU_S
 *            DISCONNECTED FORCED"    (FORCED: disconnects that ended on
 *                                     wharf's timer, no DREP seen)
 *   -> "end"
 *
 * Every wait is bounded; a connection that never ends its handshake is
 * reported without outcome, and the parent's accounting then fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <wharf/cm.h>
#include <wharf/core.h>

#include "bench/storm/rdma.h"

/* The parent's --timeout bounds a variant (it kills its clients); this only
 * keeps an orphaned client from waiting forever. */
#define WAIT_S 3600

#define STORM_WR_TAG 0x53544d31u /* "STM1" */

struct cconn {
	struct wharf_wr wr; /* --msg: the SEND */
	uint32_t msg[2];    /* ... and what it carries */
	struct storm_conn rec;
	uint64_t id;
	uint32_t g;
	bool established;
	_Atomic bool ended, down;
};

static _Atomic unsigned n_ended, n_down;
static bool with_msg;
/* --msg: the connections' array (their msg fields are the send buffers),
 * registered once on their PD (one device). */
static struct cconn *all;
static unsigned nall;
static struct ibv_mr *msg_mr;

static void stamp_steps(struct cconn *c, struct wharf_conn *conn)
{
	static const int map[][2] = {
		{WHARF_STEP_ADMITTED, STORM_T_ADMIT},
		{WHARF_STEP_ID_CREATED, STORM_T_ID},
		{WHARF_STEP_ADDR_RESOLVED, STORM_T_ADDR},
		{WHARF_STEP_ROUTE_RESOLVED, STORM_T_ROUTE},
		{WHARF_STEP_QP_READY, STORM_T_QP},
		{WHARF_STEP_SENT, STORM_T_SENT},
		{WHARF_STEP_REPLY, STORM_T_REPLY},
		{WHARF_STEP_ESTABLISHED, STORM_T_EST},
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		c->rec.t[map[i][1]] = wharf_conn_step_ns(
			conn, (enum wharf_conn_step)map[i][0]);
}

static void end_handshake(struct cconn *c, enum storm_outcome o)
{
	if (atomic_load(&c->ended))
		return;
	c->rec.outcome = (uint8_t)o;
	atomic_store(&c->ended, true);
	atomic_fetch_add(&n_ended, 1);
}

static void mark_down(struct cconn *c)
{
	if (!atomic_exchange(&c->down, true))
		atomic_fetch_add(&n_down, 1);
}

/* Posts the SEND of --msg; 0 or -errno (then no answer is awaited). */
static int send_msg(struct cconn *c, struct wharf_conn *conn)
{
	struct ibv_sge sge;

	if (!msg_mr) {
		msg_mr =
			ibv_reg_mr(wharf_conn_pd(conn), all,
				   nall * sizeof(*all), IBV_ACCESS_LOCAL_WRITE);
		if (!msg_mr)
			return -errno;
	}
	c->msg[0] = 0x5354524d;
	c->msg[1] = c->g;
	sge.addr = (uintptr_t)c->msg;
	sge.length = sizeof(c->msg);
	sge.lkey = msg_mr->lkey;
	wharf_wr_init(&c->wr, STORM_WR_TAG);
	return wharf_qp_post_send(wharf_conn_qp(conn), &c->wr, &sge, 1, false,
				  0);
}

static void on_established(struct wharf_conn *conn,
			   const struct wharf_conn_info *info, void *arg)
{
	struct cconn *c = arg;

	(void)info;
	stamp_steps(c, conn);
	c->established = true;
	if (!with_msg || send_msg(c, conn))
		end_handshake(c, STORM_OUT_ESTABLISHED);
}

static int on_recv(struct wharf_conn *conn, void *buf,
		   const struct wharf_qp_recv *rx, void *arg)
{
	struct cconn *c = arg;

	(void)conn;
	(void)buf;
	(void)rx;
	c->rec.t[STORM_T_MSG] = wharf_now_ns();
	end_handshake(c, STORM_OUT_ESTABLISHED);
	return 0;
}

static void on_rejected(struct wharf_conn *conn,
			const struct wharf_conn_reject *rej, void *arg)
{
	struct cconn *c = arg;
	size_t tl = strlen(STORM_REJ_TEXT);

	stamp_steps(c, conn);
	c->rec.rej_reason = (uint8_t)(rej->reason & 0xff);
	c->rec.rej_busy = rej->busy;
	c->rec.rej_app = rej->private_data_len >= tl &&
			 !memcmp(rej->private_data, STORM_REJ_TEXT, tl);
	wharf_conn_destroy(conn);
	end_handshake(c, STORM_OUT_REJECTED);
	mark_down(c);
}

_Static_assert(WHARF_CONN_ERR_ADDRESS == 1 && WHARF_CONN_ERR_ROUTE == 2 &&
		       WHARF_CONN_ERR_CONNECT == 3 &&
		       WHARF_CONN_ERR_UNREACHABLE == 4 &&
		       WHARF_CONN_ERR_TIMEOUT == 5 &&
		       WHARF_CONN_ERR_DEVICE == 6,
	       "storm_fail_kind_name() names these values");

static void on_error(struct wharf_conn *conn, enum wharf_conn_error e, int err,
		     void *arg)
{
	struct cconn *c = arg;

	c->rec.fail_kind = (uint8_t)e;
	c->rec.fail_err = err;
	stamp_steps(c, conn);
	wharf_conn_destroy(conn);
	end_handshake(c, e == WHARF_CONN_ERR_TIMEOUT ? STORM_OUT_TIMED_OUT
			 : e == WHARF_CONN_ERR_UNREACHABLE
				 ? STORM_OUT_UNREACHABLE
				 : STORM_OUT_FAILED);
	mark_down(c);
}

static void on_disconnected(struct wharf_conn *conn, void *arg)
{
	struct cconn *c = arg;

	/* Established, and its answer will not come any more. */
	end_handshake(c, STORM_OUT_ESTABLISHED);
	c->rec.t[STORM_T_DISC1] = wharf_now_ns();
	c->rec.t[STORM_T_DESTROY0] = wharf_now_ns();
	wharf_conn_destroy(conn);
	c->rec.t[STORM_T_DESTROY1] = wharf_now_ns();
	mark_down(c);
}

static const struct wharf_conn_ops ops = {
	.size = sizeof(ops),
	.on_established = on_established,
	.on_rejected = on_rejected,
	.on_error = on_error,
	.on_disconnected = on_disconnected,
	.on_recv = on_recv,
};

static void disconnect_fn(struct wharf_conn *conn, void *arg)
{
	struct cconn *c = arg;

	if (!conn) { /* already gone (the server ended it) */
		mark_down(c);
		return;
	}
	c->rec.t[STORM_T_DISC0] = wharf_now_ns();
	if (wharf_disconnect(conn) < 0 && !atomic_load(&c->down)) {
		c->rec.t[STORM_T_DESTROY0] = wharf_now_ns();
		wharf_conn_destroy(conn);
		c->rec.t[STORM_T_DESTROY1] = wharf_now_ns();
		mark_down(c);
	}
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u),
			      (long)(ns % 1000000000u)};

	nanosleep(&ts, NULL);
}

/* Waits until *@ctr reaches @n or WAIT_S, printing "p N" lines when
 * @progress.  Returns whether it got there. */
static bool wait_for(_Atomic unsigned *ctr, unsigned n, bool progress)
{
	uint64_t end = wharf_now_ns() + (uint64_t)WAIT_S * 1000000000u;
	unsigned last = ~0u;

	while (atomic_load(ctr) < n && wharf_now_ns() < end) {
		unsigned v = atomic_load(ctr);

		if (progress && v != last) {
			printf("p %u\n", v);
			fflush(stdout);
			last = v;
		}
		sleep_ns(200 * 1000000u);
	}
	return atomic_load(ctr) >= n;
}

static int wait_byte(char want)
{
	char ch;

	for (;;) {
		ssize_t k = read(0, &ch, 1);

		if (k == 1 && ch == want)
			return 0;
		if (k == 0)
			return -EPIPE;
		if (k < 0 && errno != EINTR)
			return -errno;
	}
}

static int start_all(struct wharf_cm *cm, struct cconn *cs, unsigned count,
		     const struct sockaddr_in *dst, double rate,
		     uint32_t timeout_ms)
{
	uint64_t t0 = wharf_now_ns(), next_report = t0;

	for (unsigned i = 0; i < count; i++) {
		struct cconn *c = &cs[i];
		uint8_t pd[STORM_PDATA_LEN];
		struct wharf_conn_param p = {.size = sizeof(p)};
		struct wharf_connect_opts o;
		int err;

		if (rate > 0) {
			uint64_t at = t0 + (uint64_t)(i * 1e9 / rate);
			uint64_t now = wharf_now_ns();

			if (at > now)
				sleep_ns(at - now);
			if (now >= next_report) { /* progress during a ramp */
				printf("p %u\n", atomic_load(&n_ended));
				fflush(stdout);
				next_report = now + 200 * 1000000u;
			}
		}
		memcpy(pd, STORM_MAGIC, 4);
		for (int b = 0; b < 4; b++)
			pd[4 + b] = (uint8_t)(c->g >> (8 * b));
		p.private_data = pd;
		p.private_data_len = sizeof(pd);
		p.responder_resources = WHARF_RD_ATOM_DEV_MAX;
		p.initiator_depth = WHARF_RD_ATOM_DEV_MAX;
		p.retry_count = 7;
		p.rnr_retry_count = 7;
		wharf_connect_opts_init(&o);
		o.dst = (const struct sockaddr *)dst;
		o.param = &p;
		o.ops = &ops;
		o.arg = c;
		o.busy_retry = true;
		o.resolve_addr_timeout_ms = timeout_ms;
		o.resolve_route_timeout_ms = timeout_ms;
		c->rec.t[STORM_T_START] = wharf_now_ns();
		err = wharf_connect(cm, &o, &c->id);
		if (err) {
			fprintf(stderr, "storm client: wharf_connect: %s\n",
				strerror(-err));
			c->rec.fail_err = err; /* fail_kind 0: the call */
			end_handshake(c, STORM_OUT_FAILED);
			mark_down(c);
		}
	}
	return 0;
}

static void disconnect_all(struct wharf_cm *cm, struct cconn *cs,
			   unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		struct cconn *c = &cs[i];

		if (atomic_load(&c->down))
			continue;
		if (!atomic_load(&c->ended)) { /* never ended: give it up */
			continue;
		}
		while (wharf_conn_call(cm, c->id, disconnect_fn, c) == -EAGAIN)
			sleep_ns(1000000);
	}
}

static void report(struct cconn *cs, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		const struct storm_conn *r = &cs[i].rec;

		printf("c %" PRIu32 " %u %u %u", cs[i].g, r->outcome,
		       r->rej_reason,
		       (r->rej_app ? 1u : 0) | (r->rej_busy ? 2u : 0));
		for (int s = 0; s < STORM_T_COUNT; s++)
			printf(" %" PRIu64, r->t[s]);
		printf(" %u %d\n", r->fail_kind, (int)r->fail_err);
	}
}

int storm_client_main(int argc, char **argv)
{
	struct wharf_ctx_opts co;
	struct wharf_qp_res_opts ro = {.size = sizeof(ro)};
	struct wharf_cm_opts mo = {.size = sizeof(mo)};
	struct wharf_cm_stats st = {.size = sizeof(st)};
	struct wharf_ctx *ctx = NULL;
	struct wharf_cm *cm = NULL;
	struct sockaddr_in dst = {.sin_family = AF_INET};
	struct cconn *cs;
	unsigned first, count, port, timeout_ms;
	double rate, cpu0, cpu_d, heap0, heap1;
	int err, cpu;

	if (argc != 10 || inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1) {
		fprintf(stderr,
			"usage: storm client ADDR PORT FIRST COUNT RATE "
			"TIMEOUT_MS MSG WINDOW CPU|-\n");
		return 2;
	}
	port = (unsigned)strtoul(argv[2], NULL, 10);
	first = (unsigned)strtoul(argv[3], NULL, 10);
	count = (unsigned)strtoul(argv[4], NULL, 10);
	rate = strtod(argv[5], NULL);
	timeout_ms = (unsigned)strtoul(argv[6], NULL, 10);
	with_msg = !strcmp(argv[7], "1");
	mo.connect_window = !strcmp(argv[8], "none")
				    ? WHARF_CONNECT_WINDOW_NONE
				    : (unsigned)strtoul(argv[8], NULL, 10);
	if (!port || port > 65535 || !count) {
		fprintf(stderr, "storm client: bad PORT or COUNT\n");
		return 2;
	}
	dst.sin_port = htons((uint16_t)port);
	cs = calloc(count, sizeof(*cs));
	if (!cs)
		return 1;
	for (unsigned i = 0; i < count; i++)
		cs[i].g = first + i;
	all = cs;
	nall = count;
	wharf_ctx_opts_init(&co);
	co.nshards = 1;
	/* A CPU of its own on one node (placement.c): the shard there, and
	 * this thread too. */
	if (strcmp(argv[9], "-")) {
		cpu = (int)strtol(argv[9], NULL, 10);
		err = storm_cpus_bind(&cpu, 1);
		if (err) {
			fprintf(stderr, "storm client: CPU %s: %s\n", argv[9],
				strerror(-err));
			return 2;
		}
		co.cpus = &cpu;
		co.ncpus = 1;
	}
	/* The clients create a QP per connection, as cmtime's client does;
	 * the variants differ on the server only. */
	ro.no_pool = true;
	ro.recv_credits = 1;
	ro.recv_buf_size = 256;
	ro.srq_depth = 2 * count + 64;
	ro.no_quarantine_delay = true;
	storm_res_shape(&ro, count);
	mo.res_opts = &ro;
	mo.handshake_cap = count + 1;
	err = wharf_ctx_create(&co, &ctx);
	if (!err)
		err = wharf_cm_create(ctx, &mo, &cm);
	if (err) {
		fprintf(stderr, "storm client: cannot start the cm: %s\n",
			strerror(-err));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	if (wait_byte('g'))
		return 1;
	cpu0 = storm_cpu_s();
	heap0 = storm_heap_bytes();
	start_all(cm, cs, count, &dst, rate, timeout_ms);
	wait_for(&n_ended, count, true);
	heap1 = storm_heap_bytes();
	printf("handshakes %u\n", atomic_load(&n_ended));
	fflush(stdout);
	if (wait_byte('d'))
		return 1;
	cpu_d = storm_cpu_s();
	disconnect_all(cm, cs, count);
	wait_for(&n_down, count, false);
	wharf_cm_stats(cm, &st);
	report(cs, count);
	printf("stats %" PRIu64 " %.6f %.0f %" PRIu64 " %" PRIu64 " %" PRIu64
	       " %.6f %" PRIu64 " %" PRIu64 "\n",
	       st.busy_retried, storm_cpu_s() - cpu0,
	       heap0 >= 0 && heap1 >= 0 ? heap1 - heap0 : -1.0,
	       st.connect_window, st.window_grows, st.window_shrinks,
	       storm_cpu_s() - cpu_d, st.disconnected, st.forced_teardowns);
	printf("end\n");
	fflush(stdout);
	/* Memory on the cm's PD goes before the cm (every connection is
	 * down or given up by now). */
	if (msg_mr)
		ibv_dereg_mr(msg_mr);
	wharf_cm_destroy(cm);
	wharf_ctx_destroy(ctx);
	free(cs);
	return 0;
}
