/*
 * initiators/nbd/nbd_sock.c - wharf-nbd's socket mode: a Unix stream
 * socket and the fixed newstyle handshake on each accepted client.  The
 * handshake is blocking I/O with a deadline on every read and write (it
 * is a handful of small messages); the decisions are nbd_neg_option()'s
 * (nbd_proto.c, pure).  Transmission then belongs to nbd_conn.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "initiators/nbd/nbd.h"

int nbd_sock_listen(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64)) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* Moves @len bytes in direction @out (1: write) within @timeout_ms each
 * wait.  0; -ECONNRESET at EOF; -ETIMEDOUT; -errno. */
static int xfer(int fd, void *buf, size_t len, int out, unsigned timeout_ms)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = {.fd = fd,
				     .events = out ? POLLOUT : POLLIN};
		ssize_t n;
		int r = poll(&pfd, 1, (int)timeout_ms);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int nbd_sock_handshake(int fd, const struct nbd_export *exp,
		       unsigned timeout_ms)
{
	uint8_t g[NBDP_GREETING_LEN], cf[4], oh[NBDP_OPT_HDR_LEN];
	uint8_t out[NBD_NEG_OUT_MAX];
	uint8_t *payload = malloc(NBDP_OPT_MAX);
	struct nbd_neg n;
	int rc;

	if (!payload)
		return -ENOMEM;
	nbd_neg_greeting(g);
	rc = xfer(fd, g, sizeof(g), 1, timeout_ms);
	if (!rc)
		rc = xfer(fd, cf, sizeof(cf), 0, timeout_ms);
	if (!rc)
		rc = nbd_neg_client_flags(&n, exp, cf);
	while (!rc) {
		struct nbd_opt o;
		enum nbd_neg_result res;
		size_t olen;

		rc = xfer(fd, oh, sizeof(oh), 0, timeout_ms);
		if (!rc)
			rc = nbd_opt_parse(oh, &o);
		if (!rc)
			rc = xfer(fd, payload, o.len, 0, timeout_ms);
		if (rc)
			break;
		res = nbd_neg_option(&n, &o, payload, out, sizeof(out), &olen);
		if (olen)
			rc = xfer(fd, out, olen, 1, timeout_ms);
		if (!rc && res == NBD_NEG_TRANSMIT)
			rc = 1;
		else if (!rc && res == NBD_NEG_CLOSE)
			break;
	}
	free(payload);
	return rc == -ECONNRESET ? 0 : rc;
}
