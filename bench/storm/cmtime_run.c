/*
 * bench/storm/cmtime_run.c - the stock cmtime variant: `cmtime -b ADDR -c N
 * -p PORT` as the server, `cmtime -s ADDR -c N -p PORT` as the client, the
 * client's table parsed.  With --clients-at the client runs on the relay's
 * machine (`storm cmtime-client`, below): its output comes back over the
 * relay's socket, followed by one line with its CPU time.  The server waits for every DREQ and at about a
 * thousand connections in the soft-RoCE guest never finishes its
 * disconnect phase, so it is killed a few seconds after the client ended;
 * both are killed at the timeout.  CPU time of both from wait4().
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/storm/children.h"
#include "bench/storm/rdma.h"

#define SERVER_GRACE_MS 3000
#define CLIENT_CPU_LINE "storm: cmtime client cpu "

static pid_t spawn(const char *bin, const char *role, const char *addr,
		   unsigned conns, unsigned port, int out_fd)
{
	char c[16], p[16];
	pid_t pid;

	snprintf(c, sizeof(c), "%u", conns);
	snprintf(p, sizeof(p), "%u", port);
	fflush(NULL);
	/* posix_spawn, not fork: see storm_child_spawn(). */
	posix_spawn_file_actions_t fa;
	char *argv[] = {(char *)bin, (char *)role, (char *)addr, "-c", c, "-p",
			p,	     NULL};
	int err = posix_spawn_file_actions_init(&fa);

	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
	if (!err)
		err = posix_spawnp(&pid, bin, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		fprintf(stderr, "storm: cannot run %s: %s\n", bin,
			strerror(err));
		return -1;
	}
	return pid;
}

static double ru_cpu(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

/* Waits for @pid until @deadline (ns), then kills it; returns its status
 * and fills @ru. */
static int reap_by(pid_t pid, uint64_t deadline, struct rusage *ru,
		   bool *killed)
{
	int st = 0;

	*killed = false;
	for (;;) {
		pid_t w = wait4(pid, &st, WNOHANG, ru);

		if (w == pid)
			return st;
		if (w < 0)
			return -1;
		if (wharf_now_ns() > deadline) {
			kill(pid, SIGKILL);
			*killed = true;
			wait4(pid, &st, 0, ru);
			return st;
		}
		usleep(20000);
	}
}

int storm_cmtime_client_main(int argc, char **argv)
{
	unsigned conns, port, timeout_s;
	struct rusage ru = {0};
	bool killed;
	pid_t pid;
	int st;

	if (argc != 6 || sscanf(argv[3], "%u", &conns) != 1 || !conns ||
	    sscanf(argv[4], "%u", &port) != 1 || !port || port > 65535 ||
	    sscanf(argv[5], "%u", &timeout_s) != 1 || !timeout_s) {
		fprintf(stderr, "usage: storm cmtime-client CMTIME ADDR CONNS "
				"PORT TIMEOUT_S\n");
		return 2;
	}
	pid = spawn(argv[1], "-s", argv[2], conns, port, 1);
	if (pid < 0)
		return 1;
	st = reap_by(pid, wharf_now_ns() + (uint64_t)timeout_s * 1000000000u,
		     &ru, &killed);
	printf("\n" CLIENT_CPU_LINE "%.6f%s\n", ru_cpu(&ru),
	       killed ? " (killed at the timeout)" : "");
	fflush(stdout);
	return st == 0 ? 0 : 1;
}

/* The cmtime client on the relay's machine; the socket to read its output
 * from, or -errno. */
static int remote_client(const struct storm_opts *o, unsigned port)
{
	char c[16], p[16], t[16];
	char *argv[] = {"storm",
			"cmtime-client",
			(char *)o->cmtime,
			(char *)o->addr,
			c,
			p,
			t,
			NULL};
	struct child ch = {0};
	int err;

	snprintf(c, sizeof(c), "%u", o->conns);
	snprintf(p, sizeof(p), "%u", port);
	snprintf(t, sizeof(t), "%u", o->timeout_s);
	err = storm_child_spawn_remote(&ch, o->clients_at, argv);
	if (err)
		return err;
	shutdown(ch.in, SHUT_WR);
	close(ch.in);
	return ch.out;
}

int storm_run_cmtime(const struct storm_opts *o, struct storm_result *r)
{
	unsigned port = 20000 + (unsigned)(getpid() % 20000);
	int sout = open("/dev/null", O_WRONLY | O_CLOEXEC), pc[2];
	size_t cap = 1 << 16, len = 0;
	char *text = malloc(cap);
	struct rusage sru = {0}, cru = {0};
	uint64_t deadline =
		wharf_now_ns() + (uint64_t)o->timeout_s * 1000000000u;
	struct storm_cmtime t;
	pid_t spid, cpid = -1;
	bool skilled, ckilled;
	int err;

	r->conns = o->conns;
	r->clients = 1;
	r->shards = 1;
	if (!text || sout < 0 || pipe2(pc, O_CLOEXEC)) {
		snprintf(r->error, sizeof(r->error), "setup: %s",
			 strerror(errno));
		free(text);
		return -ENOMEM;
	}
	fprintf(stderr, "storm: %s: %s -b %s -c %u -p %u and -s%s%s\n", r->name,
		o->cmtime, o->addr, o->conns, port,
		o->clients_at ? " at the relay " : "",
		o->clients_at ? o->clients_at : "");
	spid = spawn(o->cmtime, "-b", o->addr, o->conns, port, sout);
	if (spid > 0) {
		usleep(500000); /* the server binds and listens */
		if (o->clients_at) {
			int fd = remote_client(o, port);

			if (fd >= 0) {
				close(pc[0]);
				pc[0] = fd;
				cpid = 0;
			}
		} else {
			/* The server inherited this thread's CPUs (main.c);
			 * the client gets the clients' (placement.c). */
			if (storm_placement_split(&o->place))
				(void)storm_cpus_bind(o->place.client,
						      o->place.nclient);
			cpid = spawn(o->cmtime, "-s", o->addr, o->conns, port,
				     pc[1]);
			if (storm_placement_split(&o->place))
				(void)storm_cpus_bind(o->place.server,
						      o->place.nserver);
		}
	}
	close(pc[1]);
	close(sout);
	if (spid <= 0 || cpid < 0) {
		if (spid > 0) {
			kill(spid, SIGKILL);
			waitpid(spid, NULL, 0);
		}
		close(pc[0]);
		free(text);
		return -ENOENT;
	}
	for (;;) {
		struct pollfd pf = {pc[0], POLLIN, 0};
		ssize_t k;

		if (wharf_now_ns() > deadline)
			break;
		if (poll(&pf, 1, 1000) <= 0)
			continue;
		if (len + 1 >= cap) {
			char *n = realloc(text, cap * 2);

			if (!n)
				break;
			text = n;
			cap *= 2;
		}
		k = read(pc[0], text + len, cap - 1 - len);
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	text[len] = '\0';
	close(pc[0]);
	if (cpid > 0) {
		reap_by(cpid, deadline, &cru, &ckilled);
		r->client.cpu_s = ru_cpu(&cru);
	} else {
		const char *cl = strstr(text, CLIENT_CPU_LINE);

		r->client.cpu_s =
			cl ? strtod(cl + strlen(CLIENT_CPU_LINE), NULL) : 0;
		ckilled = !cl || strstr(cl, "killed");
	}
	reap_by(spid, wharf_now_ns() + SERVER_GRACE_MS * 1000000ull, &sru,
		&skilled);
	r->ran = true;
	r->server.cpu_s = ru_cpu(&sru);
	r->client.heap_bytes = r->server.heap_bytes = -1;
	r->client.reg_bytes = r->server.reg_bytes = -1;
	err = storm_cmtime_parse(text, o->conns, &t);
	if (err) {
		snprintf(r->error, sizeof(r->error),
			 "no table from cmtime%s: %.100s",
			 ckilled ? " (killed at the timeout)" : "", text);
	} else {
		storm_result_from_cmtime(r, &t);
		if (skilled)
			fprintf(stderr,
				"storm: %s: the cmtime server was still in its "
				"disconnect phase %d ms after the client "
				"ended: killed\n",
				r->name, SERVER_GRACE_MS);
	}
	free(text);
	return err;
}
