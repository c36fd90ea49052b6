/*
 * initiators/nbd/nbd_kernel.c - wharf-nbd's kernel mode: /dev/nbdN
 * through the kernel NBD driver's ioctl interface.
 *
 * Why ioctls, not the netlink interface: the netlink one needs a generic
 * netlink family lookup and nested attributes (libnl, or a few hundred
 * lines of our own), and buys device allocation on demand and
 * reconnection, neither of which wharf-nbd uses.  The ioctls of Linux
 * 6.1 take several connections (one NBD_SET_SOCK each) just as well.
 *
 * The driver requires every NBD_SET_SOCK to come from the task (thread)
 * that set the device up, and NBD_DO_IT blocks until the device
 * disconnects, so one thread does all of it: open, a socketpair and
 * NBD_SET_SOCK per connection (the first one fails with EBUSY on a device
 * another task owns: nothing else is touched then, and above all no
 * NBD_CLEAR_SOCK, which would disconnect it), NBD_SET_BLKSIZE,
 * NBD_SET_SIZE_BLOCKS, NBD_SET_TIMEOUT, NBD_SET_FLAGS, report to the main
 * thread, NBD_DO_IT, then NBD_CLEAR_SOCK and a write to the done eventfd.  The main thread
 * ends it with NBD_DISCONNECT (the driver sends NBD_CMD_DISC on every
 * connection; the server closes its ends; NBD_DO_IT returns).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nbd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "initiators/nbd/nbd.h"

#define SETUP_TIMEOUT_S 30

struct nbd_kdev {
	char path[128];
	int fd;
	unsigned nconn;
	int *kfds; /* the kernel's ends */
	int *sfds; /* the server's, until handed over */
	uint32_t block;
	uint64_t nblocks;
	uint16_t tflags;
	unsigned timeout_s;
	int done_efd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool owned; /* an NBD_SET_SOCK succeeded: clear it on failure */
	bool reported, finished;
	int rc;
	char err[512];
};

static void report(struct nbd_kdev *k, int rc)
{
	pthread_mutex_lock(&k->lock);
	k->rc = rc;
	k->reported = true;
	pthread_cond_broadcast(&k->cond);
	pthread_mutex_unlock(&k->lock);
}

/* The device's sysfs name ("nbd0" of "/dev/nbd0"). */
static const char *dev_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static int setup(struct nbd_kdev *k, int *sfds)
{
	char pid_path[200];
	unsigned i;

	k->fd = open(k->path, O_RDWR | O_CLOEXEC);
	if (k->fd < 0) {
		int e = errno;

		snprintf(k->err, sizeof(k->err), "%s: %s%s", k->path,
			 strerror(e),
			 e == ENOENT ? " (is the nbd module loaded? "
				       "modprobe nbd)"
				     : "");
		return -e;
	}
	snprintf(pid_path, sizeof(pid_path), "/sys/block/%s/pid",
		 dev_name(k->path));
	if (access(pid_path, F_OK) == 0) {
		snprintf(k->err, sizeof(k->err),
			 "%s is busy: connected already (%s)", k->path,
			 pid_path);
		return -EBUSY;
	}
	/* The sockets first: the first NBD_SET_SOCK fails with EBUSY on a
	 * device another task set up, before we changed anything. */
	for (i = 0; i < k->nconn; i++) {
		int sk[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk)) {
			int e = errno;

			snprintf(k->err, sizeof(k->err), "socketpair: %s",
				 strerror(e));
			return -e;
		}
		k->kfds[i] = sk[0];
		sfds[i] = sk[1];
		if (ioctl(k->fd, NBD_SET_SOCK, (unsigned long)sk[0]) < 0) {
			int e = errno;

			snprintf(k->err, sizeof(k->err),
				 "%s: NBD_SET_SOCK: %s%s", k->path, strerror(e),
				 e == EBUSY ? " (the device is busy: another "
					      "process set it up)"
					    : "");
			return -e;
		}
		/* The driver's setup task is now this thread: ours to
		 * clear on failure. */
		k->owned = true;
	}
	if (ioctl(k->fd, NBD_SET_BLKSIZE, (unsigned long)k->block) < 0 ||
	    ioctl(k->fd, NBD_SET_SIZE_BLOCKS, (unsigned long)k->nblocks) < 0 ||
	    (k->timeout_s &&
	     ioctl(k->fd, NBD_SET_TIMEOUT, (unsigned long)k->timeout_s) < 0) ||
	    ioctl(k->fd, NBD_SET_FLAGS, (unsigned long)k->tflags) < 0) {
		int e = errno;

		snprintf(k->err, sizeof(k->err), "%s: setting the size: %s%s",
			 k->path, strerror(e),
			 e == EBUSY ? " (the device is in use)" : "");
		return -e;
	}
	return 0;
}

static void close_all(struct nbd_kdev *k, int *sfds)
{
	for (unsigned i = 0; i < k->nconn; i++) {
		if (k->kfds[i] >= 0)
			close(k->kfds[i]);
		k->kfds[i] = -1;
		if (sfds && sfds[i] >= 0) {
			close(sfds[i]);
			sfds[i] = -1;
		}
	}
}

static void *kthread(void *arg)
{
	struct nbd_kdev *k = arg;
	uint64_t one = 1;
	int rc = setup(k, k->sfds);

	if (rc) {
		if (k->fd >= 0) {
			/* Never NBD_CLEAR_SOCK a device someone else set up:
			 * that would disconnect it. */
			if (k->owned)
				ioctl(k->fd, NBD_CLEAR_SOCK);
			close(k->fd);
			k->fd = -1;
		}
		close_all(k, k->sfds);
		report(k, rc);
		return NULL;
	}
	report(k, 0);
	if (ioctl(k->fd, NBD_DO_IT) < 0 && errno != EINTR)
		k->rc = -errno;
	ioctl(k->fd, NBD_CLEAR_SOCK);
	close_all(k, NULL);
	pthread_mutex_lock(&k->lock);
	k->finished = true;
	pthread_cond_broadcast(&k->cond);
	pthread_mutex_unlock(&k->lock);
	if (write(k->done_efd, &one, sizeof(one)) < 0)
		return NULL;
	return NULL;
}

static void deadline(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void kdev_free(struct nbd_kdev *k)
{
	pthread_mutex_destroy(&k->lock);
	pthread_cond_destroy(&k->cond);
	free(k->kfds);
	free(k->sfds);
	free(k);
}

int nbd_kdev_start(const char *path, const struct nbd_srv *s, unsigned nconn,
		   unsigned timeout_s, int done_efd, int *fds, char *err,
		   size_t errlen, struct nbd_kdev **out)
{
	struct nbd_kdev *k = calloc(1, sizeof(*k));
	pthread_condattr_t ca;
	sigset_t all, old;
	struct timespec ts;
	int rc;

	if (strlen(path) >= sizeof(k->path)) {
		snprintf(err, errlen, "%s: path too long", path);
		free(k);
		return -ENAMETOOLONG;
	}
	if (!k || !(k->kfds = calloc(nconn, sizeof(int))) ||
	    !(k->sfds = calloc(nconn, sizeof(int)))) {
		if (k)
			free(k->kfds);
		free(k);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(k->path, sizeof(k->path), "%s", path);
	k->fd = -1;
	k->nconn = nconn;
	for (unsigned i = 0; i < nconn; i++)
		k->kfds[i] = k->sfds[i] = -1;
	k->block = s->block;
	k->nblocks = s->exp.size / s->block;
	k->tflags = s->exp.tflags;
	k->timeout_s = timeout_s;
	k->done_efd = done_efd;
	pthread_mutex_init(&k->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* No signal may reach NBD_DO_IT: the driver would drop the
	 * device. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&k->thread, NULL, kthread, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		snprintf(err, errlen, "pthread_create failed");
		kdev_free(k);
		return -EAGAIN;
	}
	deadline(&ts, SETUP_TIMEOUT_S * 1000);
	pthread_mutex_lock(&k->lock);
	while (!k->reported && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&k->cond, &k->lock, &ts);
	pthread_mutex_unlock(&k->lock);
	if (!k->reported) {
		/* The thread is stuck in the driver: leave it (and k). */
		snprintf(err, errlen, "%s: the setup did not finish in %d s",
			 path, SETUP_TIMEOUT_S);
		return -ETIMEDOUT;
	}
	if (k->rc) {
		rc = k->rc;
		snprintf(err, errlen, "%s", k->err);
		pthread_join(k->thread, NULL);
		kdev_free(k);
		return rc;
	}
	memcpy(fds, k->sfds, nconn * sizeof(int));
	*out = k;
	return 0;
}

void nbd_kdev_disconnect(struct nbd_kdev *k)
{
	ioctl(k->fd, NBD_DISCONNECT);
}

int nbd_kdev_stop(struct nbd_kdev *k, unsigned timeout_ms)
{
	struct timespec ts;
	int rc = 0;

	deadline(&ts, timeout_ms);
	pthread_mutex_lock(&k->lock);
	while (!k->finished && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&k->cond, &k->lock, &ts);
	pthread_mutex_unlock(&k->lock);
	if (!k->finished)
		return -ETIMEDOUT;
	pthread_join(k->thread, NULL);
	close(k->fd);
	kdev_free(k);
	return 0;
}
