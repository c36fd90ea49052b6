/*
 * bench/storm/cmtime_run.c - the stock cmtime variant: `cmtime -b ADDR -c N
 * -p PORT` as the server, `cmtime -s ADDR -c N -p PORT` as the client, the
 * client's table parsed.  The server waits for every DREQ and at about a
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
#include <sys/wait.h>
#include <unistd.h>

#include "bench/storm/rdma.h"

#define SERVER_GRACE_MS 3000

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
	fprintf(stderr, "storm: %s: %s -b %s -c %u -p %u and -s\n", r->name,
		o->cmtime, o->addr, o->conns, port);
	spid = spawn(o->cmtime, "-b", o->addr, o->conns, port, sout);
	if (spid > 0) {
		usleep(500000); /* the server binds and listens */
		cpid = spawn(o->cmtime, "-s", o->addr, o->conns, port, pc[1]);
	}
	close(pc[1]);
	close(sout);
	if (spid <= 0 || cpid <= 0) {
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
	reap_by(cpid, deadline, &cru, &ckilled);
	reap_by(spid, wharf_now_ns() + SERVER_GRACE_MS * 1000000ull, &sru,
		&skilled);
	r->ran = true;
	r->client.cpu_s = ru_cpu(&cru);
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
