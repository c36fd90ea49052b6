/*
 * targets/nvmf/rpc_server.c - the management socket (rpc.h): one thread
 * that polls a listening Unix socket, at most NVMF_RPC_MAX_CONNS
 * connections and an eventfd that stops it. Requests arrive back to back
 * on a connection: a scan of brackets outside strings finds where each
 * object closes (until it does, wait for more); jansson then parses
 * exactly that much, and a parse error is answered and the connection
 * closed (there is no way to find where the next request starts). A
 * request over NVMF_RPC_MAX_REQUEST is refused the same way. A response
 * must be taken within NVMF_RPC_SEND_MS, or the connection is closed: a
 * client that stops reading cannot hold the server.
 */
#include "targets/nvmf/rpc.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#define NVMF_RPC_MAX_CONNS 16
#define NVMF_RPC_SEND_MS   5000

struct rpc_conn {
	int fd; /* -1: free */
	char *buf;
	size_t len, cap;
};

struct nvmf_rpc_server {
	const struct nvmf_rpc_env *env;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd, stop_fd;
	pthread_t thread;
	struct rpc_conn conns[NVMF_RPC_MAX_CONNS];
};

static void conn_close(struct rpc_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Send @text and a newline; false if the client is gone or stuck. */
static bool send_line(struct rpc_conn *c, const char *text)
{
	size_t len = strlen(text), off = 0;
	char *line = malloc(len + 1);
	struct timespec t0, t;
	bool ok = true;

	if (!line)
		return false;
	memcpy(line, text, len);
	line[len++] = '\n';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ok && off < len) {
		/* SO_SNDTIMEO bounds each call; this, the whole line. */
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
			    (t.tv_nsec - t0.tv_nsec) / 1000000 >
		    NVMF_RPC_SEND_MS) {
			ok = false;
			break;
		}
		ssize_t w = send(c->fd, line + off, len - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		ok = w > 0;
		if (ok)
			off += (size_t)w;
	}
	free(line);
	return ok;
}

/* A parse error for what @c sent, then close it. */
static void refuse(struct rpc_conn *c, const char *why)
{
	json_t *r =
		json_pack("{s:s, s:{s:i, s:s}, s:n}", "jsonrpc", "2.0", "error",
			  "code", NVMF_RPC_PARSE_ERROR, "message", why, "id");
	char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;

	if (text)
		send_line(c, text);
	free(text);
	json_decref(r);
	conn_close(c);
}

/*
 * Where the JSON value at the start of @b ends: its length once its
 * closing bracket arrived, 0 while it has not. Strings (with escapes) are
 * skipped, so brackets inside them do not count. Anything but an object
 * or an array ends at its first byte: jansson then says what is wrong.
 */
static size_t value_end(const char *b, size_t len)
{
	size_t depth = 0;
	bool str = false, esc = false;

	if (len && b[0] != '{' && b[0] != '[')
		return 1;
	for (size_t i = 0; i < len; i++) {
		char ch = b[i];

		if (str) {
			if (esc)
				esc = false;
			else if (ch == '\\')
				esc = true;
			else if (ch == '"')
				str = false;
		} else if (ch == '"') {
			str = true;
		} else if (ch == '{' || ch == '[') {
			depth++;
		} else if ((ch == '}' || ch == ']') && --depth == 0) {
			return i + 1;
		}
	}
	return 0;
}

/* Answer every whole request in @c's buffer. */
static void serve(struct nvmf_rpc_server *srv, struct rpc_conn *c)
{
	for (;;) {
		size_t skip = 0, used;
		bool bad;
		char *out;

		while (skip < c->len && c->buf[skip] &&
		       strchr(" \t\r\n", c->buf[skip]))
			skip++;
		memmove(c->buf, c->buf + skip, c->len - skip);
		c->len -= skip;
		if (!c->len)
			return;
		used = value_end(c->buf, c->len);
		if (!used) {
			if (c->len > NVMF_RPC_MAX_REQUEST) {
				char why[64];

				snprintf(why, sizeof(why),
					 "request larger than %u bytes",
					 NVMF_RPC_MAX_REQUEST);
				refuse(c, why);
			}
			return; /* wait for the rest */
		}
		if (used == 1 && c->buf[0] != '{' && c->buf[0] != '[') {
			refuse(c, "parse error: a request is a JSON object");
			return;
		}
		out = nvmf_rpc_handle(srv->env, c->buf, used);
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
		/* Not JSON: no way to find where the next request starts. */
		bad = out && strstr(out, "\"code\":-32700");
		if (out && !send_line(c, out))
			bad = true;
		free(out);
		if (bad) {
			conn_close(c);
			return;
		}
	}
}

/* Read what @c sent; false once it is closed. */
static bool conn_read(struct nvmf_rpc_server *srv, struct rpc_conn *c)
{
	ssize_t n;

	if (c->cap - c->len < 4096) {
		size_t cap = c->cap ? c->cap * 2 : 8192;
		char *b;

		if (cap > NVMF_RPC_MAX_REQUEST + 8192)
			cap = NVMF_RPC_MAX_REQUEST + 8192;
		if (cap <= c->len) { /* full and still no whole request */
			refuse(c, "request too large");
			return false;
		}
		b = realloc(c->buf, cap);
		if (!b) {
			refuse(c, "out of memory");
			return false;
		}
		c->buf = b;
		c->cap = cap;
	}
	n = read(c->fd, c->buf + c->len, c->cap - c->len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) { /* gone, possibly mid-request: nothing to answer */
		conn_close(c);
		return false;
	}
	c->len += (size_t)n;
	serve(srv, c);
	return c->fd >= 0;
}

static void conn_accept(struct nvmf_rpc_server *srv)
{
	struct timeval tv = {NVMF_RPC_SEND_MS / 1000,
			     (NVMF_RPC_SEND_MS % 1000) * 1000};
	int fd = accept4(srv->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	for (size_t i = 0; i < NVMF_RPC_MAX_CONNS; i++) {
		if (srv->conns[i].fd >= 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		srv->conns[i].fd = fd;
		return;
	}
	close(fd); /* full: the client sees EOF at once */
}

static void *server_main(void *arg)
{
	struct nvmf_rpc_server *srv = arg;
	struct pollfd pfd[NVMF_RPC_MAX_CONNS + 2];

	for (;;) {
		size_t n = 0, map[NVMF_RPC_MAX_CONNS];

		pfd[n++] =
			(struct pollfd){.fd = srv->stop_fd, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = srv->lfd, .events = POLLIN};
		for (size_t i = 0; i < NVMF_RPC_MAX_CONNS; i++) {
			if (srv->conns[i].fd < 0)
				continue;
			map[n - 2] = i;
			pfd[n++] = (struct pollfd){.fd = srv->conns[i].fd,
						   .events = POLLIN};
		}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents)
			break;
		for (size_t k = 2; k < n; k++)
			if (pfd[k].revents)
				conn_read(srv, &srv->conns[map[k - 2]]);
		if (pfd[1].revents & POLLIN)
			conn_accept(srv);
	}
	return NULL;
}

int nvmf_rpc_server_start(const char *path, const struct nvmf_rpc_env *env,
			  struct nvmf_rpc_server **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct nvmf_rpc_server *srv;
	struct stat st;
	int rc;

	if (!path || !env || !env->tgt || !out)
		return -EINVAL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		int probe;

		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		/* Someone answers there: not ours to take. */
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 &&
		    !connect(probe, (struct sockaddr *)&sa, sizeof(sa))) {
			close(probe);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		unlink(path); /* a stale socket (a target that died) */
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->env = env;
	snprintf(srv->path, sizeof(srv->path), "%s", path);
	for (size_t i = 0; i < NVMF_RPC_MAX_CONNS; i++)
		srv->conns[i].fd = -1;
	srv->stop_fd = eventfd(0, EFD_CLOEXEC);
	srv->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (srv->stop_fd < 0 || srv->lfd < 0) {
		rc = -errno;
		goto fail;
	}
	if (bind(srv->lfd, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		goto fail;
	}
	/* Before listen(): until then nobody can connect. */
	if (chmod(path, 0600) || listen(srv->lfd, 16)) {
		rc = -errno;
		unlink(path);
		goto fail;
	}
	rc = -pthread_create(&srv->thread, NULL, server_main, srv);
	if (rc) {
		unlink(path);
		goto fail;
	}
	*out = srv;
	return 0;
fail:
	if (srv->lfd >= 0)
		close(srv->lfd);
	if (srv->stop_fd >= 0)
		close(srv->stop_fd);
	free(srv);
	return rc;
}

void nvmf_rpc_server_stop(struct nvmf_rpc_server *srv)
{
	uint64_t one = 1;

	if (!srv)
		return;
	if (write(srv->stop_fd, &one, sizeof(one)) != sizeof(one))
		perror("wharf-nvmf-tgt: rpc stop");
	pthread_join(srv->thread, NULL);
	for (size_t i = 0; i < NVMF_RPC_MAX_CONNS; i++)
		conn_close(&srv->conns[i]);
	close(srv->lfd);
	close(srv->stop_fd);
	unlink(srv->path);
	free(srv);
}
