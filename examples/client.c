/*
 * A minimal wharf client, in the order of rdmacm-utils' ucmatose: connects,
 * waits for the server's message, answers it, and exits once the server
 * has disconnected.
 *
 *   cc client.c -o client $(pkg-config --cflags --libs wharf)
 *   ./client ADDR [PORT]            (default port 7471, ucmatose's)
 */
#include <arpa/inet.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wharf/cm.h>

#define TAG 0x636c6e74u /* our type tag for struct wharf_wr */

static struct wharf_wr wr;
static char msg[64] = "hello from the wharf client";
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
	printf("client: connection established (QP %u)\n", info->qp_num);
	mr = ibv_reg_mr(wharf_conn_pd(c), msg, sizeof(msg),
			IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		wharf_disconnect(c);
}

static int on_recv(struct wharf_conn *c, void *buf,
		   const struct wharf_qp_recv *rx, void *arg)
{
	struct ibv_sge sge = {(uintptr_t)msg, strlen(msg) + 1, mr->lkey};

	if (received++)
		return 0;
	printf("client: received \"%.*s\"\n", (int)strnlen(buf, rx->len),
	       (char *)buf);
	wharf_wr_init(&wr, TAG);
	if (wharf_qp_post_send(wharf_conn_qp(c), &wr, &sge, 1, false, 0) == 0)
		sending = 1; /* the answer; the server disconnects then */
	else
		wharf_disconnect(c);
	return 0; /* the library reposts the receive buffer */
}

static void on_send_done(struct wharf_conn *c, struct wharf_wr *w, void *arg)
{
	sending = 0;
	sent_ok = w->status == IBV_WC_SUCCESS;
	finish_if_idle();
}

static void on_disconnected(struct wharf_conn *c, void *arg)
{
	printf("client: disconnected\n");
	wharf_conn_destroy(c);
	ended = 1;
	finish_if_idle();
}

static void on_failed(struct wharf_conn *c, const char *why)
{
	fprintf(stderr, "client: %s\n", why);
	wharf_conn_destroy(c);
	ended = 1;
	finish_if_idle();
}

static void on_rejected(struct wharf_conn *c,
			const struct wharf_conn_reject *rej, void *arg)
{
	on_failed(c, "rejected");
}

static void on_error(struct wharf_conn *c, enum wharf_conn_error e, int err,
		     void *arg)
{
	on_failed(c, strerror(-err));
}

int main(int argc, char **argv)
{
	struct sockaddr_in dst = {.sin_family = AF_INET};
	struct wharf_conn_ops ops = {
		.size = sizeof(ops),
		.on_established = on_established,
		.on_rejected = on_rejected,
		.on_error = on_error,
		.on_disconnected = on_disconnected,
		.on_recv = on_recv,
		.on_send_done = on_send_done,
	};
	struct wharf_connect_opts co;
	struct wharf_ctx *ctx;
	struct wharf_cm *cm;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2 || inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1) {
		fprintf(stderr, "usage: client IPV4-ADDR [PORT]\n");
		return 2;
	}
	dst.sin_port = htons(argc > 2 ? atoi(argv[2]) : 7471);
	sem_init(&done, 0, 0);
	err = wharf_ctx_create(NULL, &ctx);
	if (!err && (err = wharf_cm_create(ctx, NULL, &cm)))
		wharf_ctx_destroy(ctx);
	if (err) {
		fprintf(stderr, "client: %s\n", strerror(-err));
		return 1;
	}
	wharf_connect_opts_init(&co);
	co.dst = (struct sockaddr *)&dst;
	co.ops = &ops;
	err = wharf_connect(cm, &co, NULL);
	if (err)
		fprintf(stderr, "client: connect: %s\n", strerror(-err));
	else
		sem_wait(&done);
	if (mr)
		ibv_dereg_mr(mr);
	wharf_cm_destroy(cm);
	wharf_ctx_destroy(ctx);
	return !err && received && sent_ok ? 0 : 1;
}
