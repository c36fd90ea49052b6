/*
 * initiators/nbd/nbd.h - wharf-nbd (C only): the NBD server over an
 * NVMe-oF controller (nbd_conn.c), the kernel device (nbd_kernel.c), the
 * Unix socket (nbd_sock.c) and the program (nbd_main.c).
 */
#ifndef WHARF_INITIATORS_NBD_H
#define WHARF_INITIATORS_NBD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "initiators/nbd/nbd_args.h"
#include "initiators/nbd/nbd_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* The server: NBD connections, each served on one I/O queue's shard.  */
/* ------------------------------------------------------------------ */

struct wharf_nvmf_host;
struct wharf_nvmf_host_queue;

/* Request kinds counted (index of nbd_stats.reqs). */
enum nbd_kind {
	NBDK_READ = 0,
	NBDK_WRITE,
	NBDK_FLUSH,
	NBDK_TRIM,
	NBDK_WRITE_ZEROES,
	NBDK_DISC,
	NBDK_OTHER, /* unknown commands */
	NBDK_N,
};

/* Counted with relaxed atomic adds by every shard. */
struct nbd_stats {
	atomic_uint_fast64_t reqs[NBDK_N];
	atomic_uint_fast64_t errors;	  /* replies with an error */
	atomic_uint_fast64_t nvme_cmds;	  /* commands submitted */
	atomic_uint_fast64_t nvme_errors; /* commands that failed */
	atomic_uint_fast64_t bytes_read, bytes_written, bytes_trimmed,
		bytes_zeroed;
	atomic_uint_fast64_t conns; /* connections served */
};

struct nbd_srv {
	struct wharf_nvmf_host *host;
	uint32_t nsid;
	uint32_t block;	 /* namespace block size */
	uint32_t max_io; /* largest NVMe transfer */
	struct nbd_export exp;
	bool null_io;
	struct nbd_stats st;
	atomic_uint live; /* connections not yet gone */
};

struct nbd_conn;

/*
 * nbd_conn_start - serve the NBD transmission phase on @fd (a connected
 * stream socket, taken over and closed by the connection) with I/O queue
 * @q, on @q's shard.  Return: 0 and *@out (freed by nbd_conn_free()
 * once the context's shards have stopped); -ENOMEM; -errno of
 * wharf_shard_send().
 * Context: any thread but @q's shard.
 */
int nbd_conn_start(struct nbd_srv *s, struct wharf_nvmf_host_queue *q, int fd,
		   struct nbd_conn **out);
/* Ask @c to stop: it stops reading, lets its commands complete, closes
 * its socket.  Context: any thread; non-blocking. */
void nbd_conn_stop(struct nbd_conn *c);
/* Whether @c is finished (socket closed, nothing in flight). */
bool nbd_conn_gone(const struct nbd_conn *c);
/* Free a connection once the shards have stopped (wharf_ctx_destroy()). */
void nbd_conn_free(struct nbd_conn *c);

/* The stats as one line ("reads=... writes=..."), into @buf. */
void nbd_stats_line(struct nbd_stats *st, char *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Kernel mode (nbd_kernel.c)                                          */
/* ------------------------------------------------------------------ */

struct nbd_kdev;

/*
 * nbd_kdev_start - set up @path (/dev/nbdN) with @nconn socket pairs,
 * @s's export, and run NBD_DO_IT on a thread; *@fds receive the server
 * ends (nconn of them).  When the device disconnects, the thread writes
 * to @done_efd (an eventfd).  Return: 0; -errno with a reason in @err
 * (nbd not loaded, device busy, ...).
 * Context: the main thread; blocks during the setup only.
 */
int nbd_kdev_start(const char *path, const struct nbd_srv *s, unsigned nconn,
		   unsigned timeout_s, int done_efd, int *fds, char *err,
		   size_t errlen, struct nbd_kdev **out);
/* NBD_DISCONNECT: the kernel sends NBD_CMD_DISC on every connection. */
void nbd_kdev_disconnect(struct nbd_kdev *k);
/* Waits (at most @timeout_ms) for the thread, NBD_CLEAR_SOCK, closes,
 * frees.  Return: 0, -ETIMEDOUT (the thread is left behind). */
int nbd_kdev_stop(struct nbd_kdev *k, unsigned timeout_ms);

/* ------------------------------------------------------------------ */
/* Socket mode (nbd_sock.c)                                            */
/* ------------------------------------------------------------------ */

/* A listening Unix stream socket at @path (an old socket file is
 * replaced).  Return: the fd, or -errno. */
int nbd_sock_listen(const char *path);
/*
 * nbd_sock_handshake - run the fixed newstyle negotiation on a blocking
 * @fd, each read and write bounded by @timeout_ms.  Return: 1 when the
 * client entered transmission, 0 when it went away or aborted, -errno
 * on a protocol error or timeout.
 */
int nbd_sock_handshake(int fd, const struct nbd_export *exp,
		       unsigned timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_NBD_H */
