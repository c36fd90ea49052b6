/*
 * targets/echo/echo.h - wharf-echo: the exchange of rdmacm-utils' ucmatose
 * (RC) and udaddy (UD), in both roles, on wharf's public API.
 *
 * RC (ucmatose):
 *   server: listen; accept every request with NULL parameters (receives
 *     are already posted: the shard's SRQ).  When all -c connections are
 *     ESTABLISHED, post -C signaled sends of -S bytes on each, reap them
 *     and -C receives (the replies), then disconnect.
 *   client: connect -c times (responder_resources 1, initiator_depth 1,
 *     retry_count 5, rnr_retry_count 0, like ucmatose); once all are
 *     established, reap -C receives per connection, then send -C replies;
 *     the library answers the server's DREQ.
 *   Both wait for every DISCONNECTED.
 * UD (udaddy):
 *   server: on each request create a UD QP, post -C receives of -S + 40
 *     (GRH) bytes, accept with its QP number; reap -C receives per
 *     connection, build the reply address handle from the first (GRH) and
 *     take the peer's QPN from the immediate data, then post -C signaled
 *     SEND_WITH_IMM replies and reap them.
 *   client: connect -c times (SIDR lookup); on ESTABLISHED take the remote
 *     QPN, Q_Key and address handle, create a UD QP, post -C receives,
 *     send -C SEND_WITH_IMM (immediate: our QPN, big-endian), reap the -C
 *     replies.
 * Exit status 0 when every connection completed its exchange.
 */
#ifndef WHARF_ECHO_H
#define WHARF_ECHO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/qp.h>

#define ECHO_RC_PORT "7471"
#define ECHO_UD_PORT "7174"
#define ECHO_GRH     40u
#define ECHO_WR_TAG  0x4543484fu /* "ECHO" */

struct echo_args {
	const char *dst;  /* -s: client role */
	const char *bind; /* -b */
	const char *port; /* -p */
	unsigned conns;	  /* -c */
	unsigned count;	  /* -C */
	unsigned size;	  /* -S */
	unsigned shards;  /* -T, 0 = library default */
	unsigned timeout_s;
	unsigned handshake_cap; /* --handshake-cap, 0 = library default */
	unsigned hold_ms;	/* --hold-ms: server, RC */
	unsigned disconnect_ms; /* --disconnect-ms: RC, 0 = the library's */
	bool ud;
	bool verbose;
};

struct echo;

/* First field of struct echo and struct echo_conn: a callback's arg is
 * the program until the connection's first callback makes it its own. */
enum echo_kind { ECHO_KIND_PROGRAM = 1, ECHO_KIND_CONN = 2 };

/* One connection's exchange (owned by its shard). */
struct echo_conn {
	enum echo_kind kind;
	struct echo *e;
	struct wharf_conn *conn;
	uint64_t id;
	struct echo_conn *next; /* the shard's list */
	unsigned shard;
	unsigned recvs, sends_done, sends_posted, completions;
	bool established, replied, done, disconnected;
	bool zombie; /* destroyed; freed with its last send completion */
	/* RC */
	struct ibv_mr *mr;
	void *buf;
	struct echo_wr *wrs;
	struct wharf_timer *hold; /* --hold-ms: the disconnect's delay */
	/* UD */
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;	/* server: from the first receive */
	struct ibv_ah *peer_ah; /* client: the connection's */
	uint32_t remote_qpn, remote_qkey;
	bool closed; /* UD: send completions all reaped */
};

struct echo_wr {
	struct wharf_wr wr;
	struct echo_conn *ec;
};

struct echo_shard {
	struct echo_conn *conns;
	struct wharf_poller *poller; /* UD: polls the connections' CQs */
	struct ibv_comp_channel *cc; /* UD: their events wake the shard */
	struct wharf_watch *ccw;
	bool go_done;
};

struct echo {
	enum echo_kind kind;
	struct echo_args a;
	struct wharf_ctx *ctx;
	struct wharf_cm *cm;
	struct wharf_listener *listener;
	struct echo_shard *shards;
	unsigned nshards;
	struct sockaddr_storage dst, src;
	bool has_src;
	atomic_uint established; /* connections established */
	atomic_uint finished;	 /* connections whose exchange ended */
	atomic_uint failed;
	atomic_bool go; /* every connection is established */
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/* args.c */
int echo_args_parse(struct echo_args *a, int argc, char **argv);
void echo_usage(FILE *f);
int echo_resolve(const char *host, const char *port, bool passive,
		 struct sockaddr_storage *out);

/* main.c */
void echo_finished(struct echo *e, struct echo_conn *ec, bool ok);
void echo_fail(struct echo *e, const char *what, int err);
void echo_log(struct echo *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct echo_conn *echo_conn_of(struct wharf_conn *conn, void *arg);
void echo_conn_failed(struct wharf_conn *conn, void *arg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void echo_all_established(struct echo *e, void (*fn)(struct echo_conn *));

/* rc.c / ud.c */
extern const struct wharf_conn_ops echo_rc_ops;
extern const struct wharf_conn_ops echo_ud_ops;
int echo_ud_poller_ensure(struct echo *e, unsigned shard,
			  struct ibv_context *verbs);
void echo_ud_shard_stop(struct echo_shard *sh);
void echo_conn_release(struct echo_conn *ec);

#endif
