/*
 * initiators/nbd/nbd_main.c - wharf-nbd: connect one controller with
 * <wharf/nvmf_host.h> and serve one of its namespaces over NBD, to the
 * kernel's driver (/dev/nbdN) or on a Unix socket (nbd.h has the
 * options, `--help` the text, nbd_conn.c the data path).
 *
 * The main thread owns the setup and the teardown and otherwise sleeps
 * in poll(2) on a self-pipe the signal handler writes (SIGINT / SIGTERM:
 * stop; SIGUSR1: the stats line) and, by mode, the kernel thread's done
 * eventfd or the listening socket.  The signals are blocked in every
 * thread but the main one (a signal in NBD_DO_IT's thread would make the
 * driver drop the device); should a library thread leave them unblocked,
 * the handler still only writes to the pipe.  Every wait of the teardown
 * has a deadline.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/nvmf_host.h>

#include "cli/cli.h"
#include "initiators/common/host_stats.h"
#include "initiators/common/sig_pipe.h"
#include "initiators/nbd/nbd.h"

#define MAX_PAYLOAD	 (32u << 20) /* the kernel driver's largest */
#define HANDSHAKE_MS	 10000u
#define DRAIN_TIMEOUT_MS 40000u /* above the I/O timeout (30 s) */
#define KDEV_TIMEOUT_MS	 30000u

static struct nbd_srv srv;
static const char *prog = "wharf-nbd";

struct conns {
	struct nbd_conn **v;
	unsigned n, cap;
};

static int conns_add(struct conns *cs, struct nbd_conn *c)
{
	if (cs->n == cs->cap) {
		unsigned cap = cs->cap ? cs->cap * 2 : 16;
		struct nbd_conn **v = realloc(cs->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		cs->v = v;
		cs->cap = cap;
	}
	cs->v[cs->n++] = c;
	return 0;
}

static struct host_stats ctrl_stats;

static void print_stats(const char *when)
{
	struct rusage ru;
	char line[768], ctrl[192];

	nbd_stats_line(&srv.st, line, sizeof(line));
	host_stats_line(&ctrl_stats, ctrl, sizeof(ctrl));
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "%s: stats%s: %s %s cpu_user_s=%.3f cpu_sys_s=%.3f\n",
		prog, when, line, ctrl,
		(double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

/* SIGUSR1: the stats line. */
static void stats_now(void)
{
	print_stats("");
}

/* Stops every connection and waits (bounded) until all are gone. */
static int drain_conns(struct conns *cs)
{
	uint64_t end = wharf_now_ms() + DRAIN_TIMEOUT_MS;

	for (unsigned i = 0; i < cs->n; i++)
		nbd_conn_stop(cs->v[i]);
	while (atomic_load(&srv.live) && wharf_now_ms() < end)
		usleep(2000);
	if (atomic_load(&srv.live)) {
		fprintf(stderr,
			"%s: %u connection(s) did not finish in %u ms\n", prog,
			atomic_load(&srv.live), DRAIN_TIMEOUT_MS);
		return -ETIMEDOUT;
	}
	return 0;
}

static int run_kernel(const struct nbd_args *a, unsigned nio, int sfd,
		      struct conns *cs)
{
	unsigned nconn = a->connections ? a->connections : nio;
	int *fds = calloc(nconn, sizeof(int));
	int efd = eventfd(0, EFD_CLOEXEC);
	struct nbd_kdev *k = NULL;
	bool stopping = false;
	uint64_t stop_by = 0;
	char err[512];
	int rc;

	if (!fds || efd < 0) {
		fprintf(stderr, "%s: out of memory or fds\n", prog);
		rc = -ENOMEM;
		goto out;
	}
	rc = nbd_kdev_start(a->device, &srv, nconn, a->timeout_s, efd, fds, err,
			    sizeof(err), &k);
	if (rc) {
		fprintf(stderr, "%s: %s\n", prog, err);
		goto out;
	}
	for (unsigned i = 0; i < nconn; i++) {
		struct nbd_conn *c = NULL;
		int r = nbd_conn_start(&srv,
				       wharf_nvmf_host_queue(srv.host, i % nio),
				       fds[i], &c);

		if (!r)
			r = conns_add(cs, c);
		if (r) {
			fprintf(stderr, "%s: connection %u: %s\n", prog, i,
				strerror(-r));
			if (!c)
				close(fds[i]);
			rc = r;
		}
	}
	if (!a->quiet)
		fprintf(stderr,
			"%s: serving %s: %llu bytes, block %u, %u "
			"connection(s) on %u queue(s), flags 0x%x%s\n",
			prog, a->device, (unsigned long long)srv.exp.size,
			srv.block, nconn, nio, srv.exp.tflags,
			srv.null_io ? " (--null-io)" : "");
	if (rc) {
		stopping = true;
		stop_by = wharf_now_ms() + KDEV_TIMEOUT_MS;
		nbd_kdev_disconnect(k);
	}
	for (;;) {
		struct pollfd p[2] = {{.fd = sfd, .events = POLLIN},
				      {.fd = efd, .events = POLLIN}};

		if (poll(p, 2, 1000) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break; /* NBD_DO_IT returned */
		if ((p[0].revents && sig_pipe_take(sfd, stats_now)) &&
		    !stopping) {
			stopping = true;
			stop_by = wharf_now_ms() + KDEV_TIMEOUT_MS;
			nbd_kdev_disconnect(k);
		}
		if (stopping && wharf_now_ms() > stop_by) {
			fprintf(stderr,
				"%s: the driver did not disconnect in %u ms\n",
				prog, KDEV_TIMEOUT_MS);
			rc = rc ? rc : -ETIMEDOUT;
			break;
		}
	}
	/* The driver sent NBD_CMD_DISC and closed its ends, or we give up
	 * waiting: either way our ends go now, which ends NBD_DO_IT. */
	if (drain_conns(cs) && !rc)
		rc = -ETIMEDOUT;
	if (nbd_kdev_stop(k, KDEV_TIMEOUT_MS)) {
		fprintf(stderr, "%s: NBD_DO_IT did not return\n", prog);
		rc = rc ? rc : -ETIMEDOUT;
	}
out:
	if (efd >= 0)
		close(efd);
	free(fds);
	return rc;
}

static int run_socket(const struct nbd_args *a, unsigned nio, int sfd,
		      struct conns *cs)
{
	int lfd = nbd_sock_listen(a->socket);
	unsigned next = 0;
	int rc = 0;

	if (lfd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, a->socket,
			strerror(-lfd));
		return lfd;
	}
	if (!a->quiet)
		fprintf(stderr,
			"%s: serving %s on %s: %llu bytes, block %u, %u "
			"queue(s), flags 0x%x%s\n",
			prog, a->export_name, a->socket,
			(unsigned long long)srv.exp.size, srv.block, nio,
			srv.exp.tflags, srv.null_io ? " (--null-io)" : "");
	for (;;) {
		struct pollfd p[2] = {{.fd = sfd, .events = POLLIN},
				      {.fd = lfd, .events = POLLIN}};
		struct nbd_conn *c = NULL;
		int fd, r;

		if (poll(p, 2, 1000) < 0 && errno != EINTR)
			break;
		if (p[0].revents && sig_pipe_take(sfd, stats_now))
			break;
		if (!p[1].revents)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		r = nbd_sock_handshake(fd, &srv.exp, HANDSHAKE_MS);
		if (r != 1) {
			if (r < 0 && !a->quiet)
				fprintf(stderr, "%s: handshake: %s\n", prog,
					strerror(-r));
			close(fd);
			continue;
		}
		r = nbd_conn_start(
			&srv, wharf_nvmf_host_queue(srv.host, next++ % nio), fd,
			&c);
		if (!r)
			r = conns_add(cs, c);
		if (r) {
			fprintf(stderr, "%s: client: %s\n", prog, strerror(-r));
			if (!c)
				close(fd);
			else
				nbd_conn_stop(c);
		}
	}
	close(lfd);
	unlink(a->socket);
	if (drain_conns(cs))
		rc = -ETIMEDOUT;
	return rc;
}

/* The namespace, the export and its transmission flags. */
static int setup_srv(const struct nbd_args *a, struct wharf_nvmf_host *host)
{
	struct wharf_nvmf_host_info in = {.size = sizeof(in)};
	struct wharf_nvmf_host_ns ns = {.size = sizeof(ns)};
	unsigned i;

	wharf_nvmf_host_info(host, &in);
	for (i = 0; i < in.nr_ns; i++)
		if (!wharf_nvmf_host_ns(host, i, &ns) &&
		    ns.nsid == a->host.nsid)
			break;
	if (i == in.nr_ns || !ns.block_size || !ns.nblocks) {
		fprintf(stderr, "%s: no usable namespace %u\n", prog,
			a->host.nsid);
		return -ENOENT;
	}
	srv.host = host;
	host_stats_attach(&ctrl_stats, host);
	srv.nsid = a->host.nsid;
	srv.block = ns.block_size;
	srv.max_io = in.max_io_size - in.max_io_size % ns.block_size;
	srv.null_io = a->null_io;
	srv.exp.name = a->export_name;
	srv.exp.size = ns.nblocks * ns.block_size;
	srv.exp.block = ns.block_size;
	srv.exp.max_payload = MAX_PAYLOAD;
	/* NVMe keeps every queue coherent: several connections are safe. */
	srv.exp.tflags = NBDP_TFLAG_HAS_FLAGS | NBDP_TFLAG_SEND_FLUSH |
			 NBDP_TFLAG_CAN_MULTI_CONN;
	if (in.oncs & WHARF_NVMF_HOST_ONCS_DSM)
		srv.exp.tflags |= NBDP_TFLAG_SEND_TRIM;
	if (in.oncs & WHARF_NVMF_HOST_ONCS_WRITE_ZEROES)
		srv.exp.tflags |= NBDP_TFLAG_SEND_WRITE_ZEROES;
	if (srv.max_io < ns.block_size) {
		fprintf(stderr, "%s: max I/O size %u below the block size %u\n",
			prog, in.max_io_size, ns.block_size);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct nbd_args a;
	struct wharf_ctx_opts co;
	struct wharf_nvmf_host_opts ho;
	struct wharf_ctx *ctx = NULL;
	struct wharf_cm *cm = NULL;
	struct wharf_nvmf_host *host = NULL;
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST}, *ai = NULL;
	struct conns cs = {0};
	sigset_t set;
	char err[256];
	int rc, sfd = -1;

	if (nbd_parse(argc, argv, &a, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n\n%s", prog, err, nbd_usage);
		return 2;
	}
	if (a.help) {
		fputs(nbd_usage, stdout);
		return 0;
	}
	if (a.version) {
		cli_version(stdout, prog);
		return 0;
	}
	if (getaddrinfo(a.host.traddr, a.host.trsvcid, &hints, &ai)) {
		fprintf(stderr, "%s: bad address %s port %s\n", prog,
			a.host.traddr, a.host.trsvcid);
		return 2;
	}
	/* Before any thread exists: every thread inherits the mask. */
	sfd = sig_pipe_setup(&set);
	rc = sfd < 0 ? sfd : 0;
	wharf_ctx_opts_init(&co);
	co.nshards = a.host.shards;
	if (!rc)
		rc = wharf_ctx_create(&co, &ctx);
	if (!rc)
		rc = wharf_cm_create(ctx, NULL, &cm);
	/* The shards exist; the kernel thread blocks everything itself. */
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (rc) {
		fprintf(stderr, "%s: context: %s\n", prog, strerror(-rc));
		rc = 2;
		goto out;
	}
	wharf_nvmf_host_opts_init(&ho);
	ho.cm = cm;
	ho.dst = ai->ai_addr;
	host_args_apply(&a.host, &ho);
	ho.queue_size = a.queue_size;
	ho.max_io_size = a.max_io_size;
	rc = wharf_nvmf_host_connect(&ho, &host);
	if (rc) { /* the reason went to the log (stderr) */
		fprintf(stderr, "%s: connect: %s\n", prog, strerror(-rc));
		rc = 2;
		goto out;
	}
	rc = setup_srv(&a, host);
	if (!rc) {
		struct wharf_nvmf_host_info in = {.size = sizeof(in)};

		wharf_nvmf_host_info(host, &in);
		rc = a.device ? run_kernel(&a, in.nr_io_queues, sfd, &cs)
			      : run_socket(&a, in.nr_io_queues, sfd, &cs);
		rc = rc ? 1 : 0;
	} else {
		rc = 2;
	}
	host_stats_detach(&ctrl_stats);
	wharf_nvmf_host_disconnect(host);
	print_stats(" at exit");
out:
	if (cm)
		wharf_cm_destroy(cm);
	if (ctx)
		wharf_ctx_destroy(ctx);
	for (unsigned i = 0; i < cs.n; i++)
		nbd_conn_free(cs.v[i]);
	free(cs.v);
	freeaddrinfo(ai);
	return rc;
}
