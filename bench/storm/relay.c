/*
 * bench/storm/relay.c - storm's clients on another machine.
 *
 *   storm relay PORT TIMEOUT_S     (on the client machine)
 *   storm --clients-at HOST:PORT   (on the server machine)
 *
 * The relay listens on TCP PORT; each connection carries one line, the
 * arguments of `storm client` (client.c), and then that client's protocol:
 * the relay spawns `storm client ARGS` with the socket as its stdin and
 * stdout, so the server's side (children.c) talks to it as to a local
 * child.  `storm cmtime-client ARGS` is the cmtime variant's client
 * (cmtime_run.c), spawned the same way.  The relay exits after TIMEOUT_S, killing what still runs, or
 * once a connection says "quit".  Plain TCP on the machines' own network
 * (in `./wharf storm --nodes 2`, the wire between the two guests).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "bench/storm/children.h"
#include "bench/storm/rdma.h"

#define RELAY_MAX_CHILDREN 256
#define RELAY_ARGS	   16

/* Reads one line (at most @len - 1 bytes) from @fd, byte by byte so that
 * nothing after it is consumed; 0 or -errno. */
static int read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t k = read(fd, buf + n, 1);

		if (k == 0)
			return -EPIPE;
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return 0;
		}
		n++;
	}
	return -E2BIG;
}

/* `storm client` with @fd as stdin and stdout; its pid or -errno. */
static pid_t spawn_client(int fd, char *line)
{
	char *argv[RELAY_ARGS + 2], *save = NULL, *tok;
	posix_spawn_file_actions_t fa;
	int argc = 0, err;
	pid_t pid;

	argv[argc++] = "storm";
	for (tok = strtok_r(line, " ", &save); tok && argc <= RELAY_ARGS;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (argc < 2 ||
	    (strcmp(argv[1], "client") && strcmp(argv[1], "cmtime-client")))
		return -EINVAL;
	err = posix_spawn_file_actions_init(&fa);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, fd, 0);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, fd, 1);
	if (!err)
		err = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv,
				  environ);
	posix_spawn_file_actions_destroy(&fa);
	return err ? -err : pid;
}

int storm_relay_main(int argc, char **argv)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	pid_t kids[RELAY_MAX_CHILDREN];
	unsigned nkids = 0, port, timeout_s;
	int one = 1, lfd, rc = 0;
	uint64_t end;

	if (argc != 3 || sscanf(argv[1], "%u", &port) != 1 || !port ||
	    port > 65535 || sscanf(argv[2], "%u", &timeout_s) != 1 ||
	    !timeout_s) {
		fprintf(stderr, "usage: storm relay PORT TIMEOUT_S\n");
		return 2;
	}
	end = wharf_now_ns() + (uint64_t)timeout_s * 1000000000u;
	a.sin_port = htons((uint16_t)port);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 64)) {
		perror("storm: relay");
		return 1;
	}
	printf("storm: relay listening on port %u\n", port);
	fflush(stdout);
	for (;;) {
		struct pollfd pf = {lfd, POLLIN, 0};
		char line[512];
		uint64_t now = wharf_now_ns();
		int fd;
		pid_t pid;

		/* Children that ended (the rest are killed at the end). */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (now >= end) {
			fprintf(stderr, "storm: relay: %u s are over\n",
				timeout_s);
			rc = 1;
			break;
		}
		if (poll(&pf, 1, 200) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (read_line(fd, line, sizeof(line))) {
			close(fd);
			continue;
		}
		if (!strcmp(line, "quit")) {
			close(fd);
			break;
		}
		pid = nkids < RELAY_MAX_CHILDREN ? spawn_client(fd, line)
						 : -EMFILE;
		if (pid < 0)
			fprintf(stderr, "storm: relay: spawn: %s\n",
				strerror((int)-pid));
		else
			kids[nkids++] = pid;
		close(fd); /* the child has it */
	}
	for (unsigned i = 0; i < nkids; i++)
		kill(kids[i], SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
	close(lfd);
	return rc;
}

/* A TCP connection to the relay at @hostport; the fd or -errno. */
static int relay_connect(const char *hostport)
{
	char host[256], *colon;
	struct addrinfo hints = {.ai_family = AF_INET,
				 .ai_socktype = SOCK_STREAM};
	struct addrinfo *ai;
	int fd, one = 1, err;

	snprintf(host, sizeof(host), "%s", hostport);
	colon = strrchr(host, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &ai))
		return -EHOSTUNREACH;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
	} else if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		err = -errno;
		close(fd);
	} else {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		err = fd;
	}
	freeaddrinfo(ai);
	return err;
}

int storm_child_spawn_remote(struct child *c, const char *hostport,
			     char *const argv[])
{
	char line[512];
	size_t n = 0;
	int fd;

	for (int i = 1; argv[i]; i++) /* argv[0] is "storm" */
		n += (size_t)snprintf(line + n,
				      n < sizeof(line) ? sizeof(line) - n : 0,
				      "%s%s", i > 1 ? " " : "", argv[i]);
	if (n + 1 >= sizeof(line))
		return -E2BIG;
	line[n++] = '\n';
	fd = relay_connect(hostport);
	if (fd < 0)
		return fd;
	if (write(fd, line, n) != (ssize_t)n) {
		close(fd);
		return -EIO;
	}
	c->pid = -1; /* the relay's child: ends with its socket */
	c->in = fd;
	c->out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (c->out < 0) {
		close(fd);
		c->in = -1;
		return -EMFILE;
	}
	return 0;
}

int storm_relay_quit(const char *hostport)
{
	int fd = relay_connect(hostport);

	if (fd < 0)
		return fd;
	if (write(fd, "quit\n", 5) != 5) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}
