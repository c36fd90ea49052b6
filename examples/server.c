/*
 * A minimal wharf server, in the order of rdmacm-utils' ucmatose: greets
 * each connection with one message, waits for the reply, disconnects, and
 * exits once the first connection has ended.
 *
 *   cc server.c -o server $(pkg-config --cflags --libs wharf)
 *   ./server [ADDR [PORT]]          (default 0.0.0.0 7471, ucmatose's port)
 */
#include <arpa/inet.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wharf/cm.h>

#define TAG 0x73727672u /* our type tag for struct wharf_wr */

static struct wharf_wr wr;
static char msg[64] = "hello from wharf";
static struct ibv_mr *mr; /* covers msg, on the connection's PD */
static int sending, sent_ok, received, ended;
static sem_t done;

static void finish_if_idle(void)
{
	if (ended && !sending)
		sem_post(&done);
}

static void on_established(struct wharf_conn *c,
			   const struct wharf_conn_info *info, void *arg)
{
	printf("server: connection established (QP %u)\n", info->qp_num);
	if (!mr)
		mr = ibv_reg_mr(wharf_conn_pd(c), msg, sizeof(msg),
				IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = {(uintptr_t)msg, strlen(msg) + 1,
			      mr ? mr->lkey : 0};
	wharf_wr_init(&wr, TAG);
	if (mr &&
	    wharf_qp_post_send(wharf_conn_qp(c), &wr, &sge, 1, false, 0) == 0)
		sending = 1;
	else
		wharf_disconnect(c);
}

/* Our message out and the reply in: the exchange is over. */
static void disconnect_if_done(struct wharf_conn *c)
{
	if (received && !sending && !ended)
		wharf_disconnect(c);
}

static int on_recv(struct wharf_conn *c, void *buf,
		   const struct wharf_qp_recv *rx, void *arg)
{
	if (!received++)
		printf("server: received \"%.*s\"\n",
		       (int)strnlen(buf, rx->len), (char *)buf);
	disconnect_if_done(c);
	return 0; /* the library reposts the receive buffer */
}

static void on_send_done(struct wharf_conn *c, struct wharf_wr *w, void *arg)
{
	sending = 0;
	sent_ok = w->status == IBV_WC_SUCCESS;
	disconnect_if_done(c);
	finish_if_idle();
}

static void on_disconnected(struct wharf_conn *c, void *arg)
{
	printf("server: disconnected\n");
	wharf_conn_destroy(c);
	ended = 1;
	finish_if_idle();
}

static void on_error(struct wharf_conn *c, enum wharf_conn_error e, int err,
		     void *arg)
{
	fprintf(stderr, "server: connection failed: %s\n", strerror(-err));
	wharf_conn_destroy(c);
	ended = 1;
	finish_if_idle();
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	struct wharf_conn_ops ops = {
		.size = sizeof(ops),
		.on_established = on_established,
		.on_recv = on_recv,
		.on_send_done = on_send_done,
		.on_disconnected = on_disconnected,
		.on_error = on_error,
	};
	struct wharf_listen_opts lo;
	struct wharf_listener *l;
	struct wharf_ctx *ctx;
	struct wharf_cm *cm;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	inet_pton(AF_INET, argc > 1 ? argv[1] : "0.0.0.0", &addr.sin_addr);
	addr.sin_port = htons(argc > 2 ? atoi(argv[2]) : 7471);
	sem_init(&done, 0, 0);
	err = wharf_ctx_create(NULL, &ctx);
	if (!err && (err = wharf_cm_create(ctx, NULL, &cm)))
		wharf_ctx_destroy(ctx);
	if (err) {
		fprintf(stderr, "server: %s\n", strerror(-err));
		return 1;
	}
	wharf_listen_opts_init(&lo);
	lo.addr = (struct sockaddr *)&addr;
	lo.ops = &ops; /* no on_request: every request is accepted */
	err = wharf_listen(cm, &lo, &l);
	if (err) {
		fprintf(stderr, "server: listen: %s\n", strerror(-err));
	} else {
		printf("server: listening on port %u\n",
		       wharf_listener_port(l));
		sem_wait(&done);
		wharf_listener_destroy(l);
	}
	if (mr)
		ibv_dereg_mr(mr);
	wharf_cm_destroy(cm);
	wharf_ctx_destroy(ctx);
	return !err && received && sent_ok ? 0 : 1;
}
