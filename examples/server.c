/*
 * A minimal wharf server: accepts connections, answers every message with
 * one of its own, and exits after the first connection ends.
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

#define TAG    0x73727672u /* our type tag for struct wharf_wr */
#define NSLOTS 16

static struct slot {
	struct wharf_wr wr;
	char buf[64];
} slots[NSLOTS];
static struct ibv_mr *mr; /* covers slots[], on the connection's PD */
static int inflight, ended, status = 1;
static sem_t done;

static void finish_if_idle(void)
{
	if (ended && !inflight)
		sem_post(&done);
}

static void on_established(struct wharf_conn *c,
			   const struct wharf_conn_info *info, void *arg)
{
	printf("server: connection established (QP %u)\n", info->qp_num);
	mr = ibv_reg_mr(wharf_conn_pd(c), slots, sizeof(slots),
			IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		wharf_disconnect(c);
}

static int on_recv(struct wharf_conn *c, void *buf,
		   const struct wharf_qp_recv *rx, void *arg)
{
	printf("server: received \"%.*s\"\n", (int)strnlen(buf, rx->len),
	       (char *)buf);
	for (int i = 0; i < NSLOTS && mr; i++) {
		struct slot *s = &slots[i];
		if (s->wr.magic == WHARF_WR_MAGIC_BUSY)
			continue;
		int n = snprintf(s->buf, sizeof(s->buf), "hello from wharf");
		struct ibv_sge sge = {(uintptr_t)s->buf, n + 1, mr->lkey};
		wharf_wr_init(&s->wr, TAG);
		if (wharf_qp_post_send(wharf_conn_qp(c), &s->wr, &sge, 1, false,
				       0) == 0)
			inflight++;
		break;
	}
	return 0; /* the library reposts the receive buffer */
}

static void on_send_done(struct wharf_conn *c, struct wharf_wr *wr, void *arg)
{
	inflight--;
	finish_if_idle();
}

static void on_disconnected(struct wharf_conn *c, void *arg)
{
	printf("server: disconnected\n");
	status = 0;
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
	struct wharf_ctx *ctx;
	struct wharf_cm *cm;
	struct wharf_listener *l;
	struct wharf_listen_opts lo;
	int err;

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
	lo.ops = &ops;
	err = wharf_listen(cm, &lo, &l);
	if (err) {
		fprintf(stderr, "server: listen: %s\n", strerror(-err));
	} else {
		printf("server: listening on port %u\n",
		       wharf_listener_port(l));
		fflush(stdout);
		sem_wait(&done);
		wharf_listener_destroy(l);
	}
	if (mr)
		ibv_dereg_mr(mr);
	wharf_cm_destroy(cm);
	wharf_ctx_destroy(ctx);
	return err ? 1 : status;
}
