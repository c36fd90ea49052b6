/*
 * initiators/ublk/ublk_main.c - wharf-ublk: one namespace of an NVMe-oF
 * controller, connected with <wharf/nvmf_host.h>, as /dev/ublkbN (the
 * kernel's ublk driver); `add`, `recover`, `del` and `list` (ublk_args.c
 * has the options, `--help` the text, ublk_queue.c the data path).
 *
 * The main thread owns the control device and the set-up and teardown;
 * otherwise it sleeps in poll(2) on a self-pipe the signal handler
 * writes (SIGINT / SIGTERM: stop; SIGUSR1: the stats line) and the
 * queues' done eventfd, and once a second asks the driver for the
 * device's state (a `del` from elsewhere ends the device under us).
 * START_DEV and END_USER_RECOVERY block until every queue fetched its
 * tags, STOP_DEV until the block layer's I/O drained: both run on the
 * main thread while the shards serve.  Every wait of the teardown has a
 * deadline.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/nvmf_host.h>

#include "cli/cli.h"
#include "initiators/common/host_stats.h"
#include "initiators/common/sig_pipe.h"
#include "initiators/ublk/ublk.h"
#include "initiators/ublk/ublk_args.h"

#define DEFAULT_DEPTH	 128u
#define QUIESCE_WAIT_MS	 30000u /* a dead server's device to quiesce */
#define CDEV_WAIT_MS	 5000u
#define QUEUE_STEP_MS	 10000u
#define DRAIN_TIMEOUT_MS 40000u /* above the I/O timeout (30 s) */
#define ABORT_WAIT_MS	 3000u
#define STOP_TIMEOUT_MS	 20000u /* then held commands are failed */

static const char *prog = "wharf-ublk";
static struct ublk_dev dev = {.cdev = -1, .done_efd = -1};

static const char *state_name(unsigned s)
{
	switch (s) {
	case UBLK_S_DEV_DEAD:
		return "dead";
	case UBLK_S_DEV_LIVE:
		return "live";
	case UBLK_S_DEV_QUIESCED:
		return "quiesced";
	default:
		return "unknown";
	}
}

static struct host_stats ctrl_stats;

static void print_stats(const char *when)
{
	struct rusage ru;
	char line[512], ctrl[192];

	ublk_stats_line(&dev.st, line, sizeof(line));
	host_stats_line(&ctrl_stats, ctrl, sizeof(ctrl));
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr,
		"%s: stats%s: ublkb%u %s %s cpu_user_s=%.3f cpu_sys_s=%.3f\n",
		prog, when, dev.id, line, ctrl,
		(double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

/* SIGUSR1: the stats line. */
static void stats_now(void)
{
	print_stats("");
}

/* ------------------------------------------------------------------ */
/* list and del                                                        */
/* ------------------------------------------------------------------ */

/* The device numbers of /dev/ublkcN, sorted; their count or -errno. */
static int list_ids(uint32_t *ids, int max)
{
	DIR *dir = opendir("/dev");
	struct dirent *e;
	int n = 0;

	if (!dir)
		return -errno;
	while ((e = readdir(dir)) && n < max) {
		char *end;
		unsigned long v;

		if (strncmp(e->d_name, "ublkc", 5))
			continue;
		v = strtoul(e->d_name + 5, &end, 10);
		if (*end || end == e->d_name + 5)
			continue;
		ids[n++] = (uint32_t)v;
	}
	closedir(dir);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			uint32_t t = ids[j];

			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	return n;
}

static int do_list(struct ublk_ctrl *c, const struct ublk_args *a)
{
	uint32_t ids[1024];
	int n = a->number >= 0 ? 1 : list_ids(ids, 1024), shown = 0;

	if (a->number >= 0)
		ids[0] = (uint32_t)a->number;
	if (n < 0) {
		fprintf(stderr, "%s: /dev: %s\n", prog, strerror(-n));
		return 1;
	}
	if (a->json)
		printf("[");
	for (int i = 0; i < n; i++) {
		struct ublksrv_ctrl_dev_info in;
		struct ublk_params p;
		int rc = ublk_ctrl_get_info(c, ids[i], &in);

		if (rc) {
			if (a->number >= 0) {
				fprintf(stderr, "%s: device %u: %s\n", prog,
					ids[i], strerror(-rc));
				if (a->json)
					printf("]\n");
				return 1;
			}
			continue;
		}
		if (ublk_ctrl_get_params(c, ids[i], &p))
			memset(&p, 0, sizeof(p));
		if (a->json)
			printf("%s\n {\"dev_id\": %u, \"state\": \"%s\", "
			       "\"nr_queues\": %u, \"queue_depth\": %u, "
			       "\"max_io_buf_bytes\": %u, \"pid\": %d, "
			       "\"flags\": %llu, \"size_bytes\": %llu, "
			       "\"logical_block\": %u}",
			       shown ? "," : "", in.dev_id,
			       state_name(in.state), in.nr_hw_queues,
			       in.queue_depth, in.max_io_buf_bytes,
			       in.ublksrv_pid, (unsigned long long)in.flags,
			       (unsigned long long)p.basic.dev_sectors << 9,
			       p.basic.logical_bs_shift
				       ? 1u << p.basic.logical_bs_shift
				       : 0);
		else
			printf("ublkb%u: state %s, %u queue(s) of depth %u, "
			       "max I/O %u, %llu bytes, block %u, pid %d, "
			       "flags 0x%llx\n",
			       in.dev_id, state_name(in.state), in.nr_hw_queues,
			       in.queue_depth, in.max_io_buf_bytes,
			       (unsigned long long)p.basic.dev_sectors << 9,
			       p.basic.logical_bs_shift
				       ? 1u << p.basic.logical_bs_shift
				       : 0,
			       in.ublksrv_pid, (unsigned long long)in.flags);
		shown++;
	}
	if (a->json)
		printf("%s]\n", shown ? "\n" : "");
	return 0;
}

/* STOP_DEV then DEL_DEV (which waits until the server closed its
 * character device). */
static int del_one(struct ublk_ctrl *c, uint32_t id, bool quiet)
{
	int rc = ublk_ctrl_stop(c, id, STOP_TIMEOUT_MS);

	if (!rc)
		rc = ublk_ctrl_del(c, id);
	if (rc) {
		fprintf(stderr, "%s: device %u: %s\n", prog, id, strerror(-rc));
		return 1;
	}
	if (!quiet)
		fprintf(stderr, "%s: removed /dev/ublkb%u\n", prog, id);
	return 0;
}

static int do_del(struct ublk_ctrl *c, const struct ublk_args *a)
{
	uint32_t ids[1024];
	int n, rc = 0;

	if (!a->all)
		return del_one(c, (uint32_t)a->number, a->quiet);
	n = list_ids(ids, 1024);
	if (n < 0) {
		fprintf(stderr, "%s: /dev: %s\n", prog, strerror(-n));
		return 1;
	}
	for (int i = 0; i < n; i++)
		rc |= del_one(c, ids[i], a->quiet);
	return rc;
}

/* ------------------------------------------------------------------ */
/* add and recover                                                     */
/* ------------------------------------------------------------------ */

/* The namespace's geometry; 0 or -ENOENT. */
static int geom_of(struct wharf_nvmf_host *host, uint32_t nsid,
		   struct ublk_geom *g)
{
	struct wharf_nvmf_host_info in = {.size = sizeof(in)};
	struct wharf_nvmf_host_ns ns = {.size = sizeof(ns)};
	unsigned i;

	wharf_nvmf_host_info(host, &in);
	for (i = 0; i < in.nr_ns; i++)
		if (!wharf_nvmf_host_ns(host, i, &ns) && ns.nsid == nsid)
			break;
	if (i == in.nr_ns || !ns.block_size || !ns.nblocks)
		return -ENOENT;
	memset(g, 0, sizeof(*g));
	g->block = ns.block_size;
	g->nblocks = ns.nblocks;
	g->max_io = in.max_io_size;
	g->dsm = in.oncs & WHARF_NVMF_HOST_ONCS_DSM;
	g->wzeroes = in.oncs & WHARF_NVMF_HOST_ONCS_WRITE_ZEROES;
	g->wzsl = in.wzsl;
	g->dmrsl = in.dmrsl;
	g->dmsl = in.dmsl;
	return 0;
}

/* A dead server's device: wait until the driver quiesced it. */
static int wait_quiesced(struct ublk_ctrl *c, uint32_t id,
			 struct ublksrv_ctrl_dev_info *in)
{
	uint64_t end = wharf_now_ms() + QUIESCE_WAIT_MS;
	int rc;

	for (;;) {
		rc = ublk_ctrl_get_info(c, id, in);
		if (rc) {
			fprintf(stderr, "%s: device %u: %s\n", prog, id,
				strerror(-rc));
			return rc;
		}
		if (!(in->flags & UBLK_F_USER_RECOVERY)) {
			fprintf(stderr,
				"%s: device %u was not created with user "
				"recovery\n",
				prog, id);
			return -EINVAL;
		}
		if (in->state == UBLK_S_DEV_QUIESCED)
			return 0;
		if (in->state == UBLK_S_DEV_DEAD) {
			fprintf(stderr, "%s: device %u is stopped\n", prog, id);
			return -ENODEV;
		}
		if (wharf_now_ms() > end) {
			fprintf(stderr,
				"%s: device %u is %s (server pid %d): not "
				"waiting for a new server\n",
				prog, id, state_name(in->state),
				in->ublksrv_pid);
			return -EBUSY;
		}
		usleep(100000);
	}
}

/* /dev/ublkcN, once it exists and its last server closed it. */
static int open_cdev(uint32_t id)
{
	char path[64];
	uint64_t end = wharf_now_ms() + CDEV_WAIT_MS;
	int fd;

	snprintf(path, sizeof(path), "/dev/ublkc%u", id);
	for (;;) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		if ((errno != ENOENT && errno != EBUSY) ||
		    wharf_now_ms() > end) {
			int rc = -errno;

			fprintf(stderr, "%s: %s: %s\n", prog, path,
				strerror(-rc));
			return rc;
		}
		usleep(20000);
	}
}

struct server {
	struct ublk_queue **qs;
	unsigned nq;
	bool added;	/* ADD_DEV done: the device is ours to delete */
	bool started;	/* START_DEV / END_USER_RECOVERY done */
	bool host_gone; /* the controller is disconnected already */
};

/* Disconnects the controller now: what it holds or has outstanding
 * fails (-ECONNABORTED) and is committed as an error, which ends a drain
 * that waits for it. */
static void host_gone_now(struct server *s)
{
	if (s->host_gone || !dev.host)
		return;
	host_stats_detach(&ctrl_stats);
	wharf_nvmf_host_disconnect(dev.host);
	s->host_gone = true;
}

/* Ends the queues (@force: done or not, once no NVMe command is left).
 * Return: 0, or the first queue's -errno. */
static int stop_queues(struct server *s, bool force)
{
	uint64_t end = wharf_now_ms() + DRAIN_TIMEOUT_MS;
	int rc = 0;

	for (unsigned i = 0; i < s->nq; i++) {
		int r;

		while ((r = ublk_queue_stop(s->qs[i], force, QUEUE_STEP_MS)) ==
			       -EBUSY &&
		       wharf_now_ms() < end)
			usleep(2000);
		if (r && !rc)
			rc = r;
	}
	return rc;
}

static bool all_done(const struct server *s)
{
	for (unsigned i = 0; i < s->nq; i++)
		if (!ublk_queue_done(s->qs[i]))
			return false;
	return true;
}

/* Whether the controller still lists our namespace (a namespace
 * attribute notice or a reconnect may have taken it away). */
static bool ns_present(void)
{
	struct wharf_nvmf_host_ns ns = {.size = sizeof(ns)};

	for (unsigned i = 0; !wharf_nvmf_host_ns(dev.host, i, &ns); i++)
		if (ns.nsid == dev.nsid)
			return true;
	return false;
}

/* on_event (shard 0): wake the main loop, which looks at the namespace
 * list again. */
static void on_event(const struct wharf_nvmf_host_event *ev, void *arg)
{
	uint64_t one = 1;

	(void)arg;
	if (ev->nr_changed && write(dev.done_efd, &one, sizeof(one)) < 0) {
		/* the counter is full: the loop is awake anyway */
	}
}

/* Serves until a signal, the device's end or its namespace's, then stops
 * the device; returns 0, or 1 when the namespace went away. */
static int serve(struct ublk_ctrl *c, struct server *s, int sfd,
		 const struct ublk_args *a)
{
	bool gone = false; /* stopped by someone else */
	int rc = 0;

	for (;;) {
		struct pollfd p[2] = {{.fd = sfd, .events = POLLIN},
				      {.fd = dev.done_efd, .events = POLLIN}};
		struct ublksrv_ctrl_dev_info in;
		uint64_t v;

		if (poll(p, 2, 1000) < 0 && errno != EINTR)
			break;
		if (p[0].revents && sig_pipe_take(sfd, stats_now))
			break;
		if (p[1].revents && read(dev.done_efd, &v, sizeof(v)) < 0) {
			/* a wake-up only */
		}
		if (all_done(s) || (!ublk_ctrl_get_info(c, dev.id, &in) &&
				    in.state == UBLK_S_DEV_DEAD)) {
			gone = true;
			break;
		}
		if (!ns_present()) {
			fprintf(stderr,
				"%s: namespace %u is gone from %s: removing "
				"/dev/ublkb%u\n",
				prog, dev.nsid, a->host.subnqn, dev.id);
			rc = 1;
			break;
		}
	}
	if (!gone) {
		int r = ublk_ctrl_stop(c, dev.id, STOP_TIMEOUT_MS);

		if (r == -ETIMEDOUT) {
			/* The drain waits for commands the controller holds
			 * (it is reconnecting): fail them. */
			fprintf(stderr,
				"%s: the device's I/O did not drain in %u ms: "
				"disconnecting the controller\n",
				prog, STOP_TIMEOUT_MS);
			host_gone_now(s);
			r = ublk_ctrl_wait(c, DRAIN_TIMEOUT_MS);
		}
		if (r && r != -ENODEV) {
			fprintf(stderr, "%s: stop: %s\n", prog, strerror(-r));
			rc = 1;
		}
	} else if (!a->quiet) {
		fprintf(stderr, "%s: /dev/ublkb%u was stopped elsewhere\n",
			prog, dev.id);
	}
	/* The block layer drained: the driver aborts each tag's fetch;
	 * whatever it has not aborted yet, closing the ring cancels. */
	for (uint64_t end = wharf_now_ms() + ABORT_WAIT_MS;
	     !all_done(s) && wharf_now_ms() < end;)
		usleep(2000);
	s->added = !gone; /* a `del` elsewhere deletes it */
	return rc;
}

static int do_serve(const struct ublk_args *a)
{
	struct ublk_ctrl c = {.fd = -1};
	struct wharf_ctx_opts co;
	struct wharf_nvmf_host_opts ho;
	struct wharf_ctx *ctx = NULL;
	struct wharf_cm *cm = NULL;
	struct wharf_nvmf_host *host = NULL;
	struct wharf_nvmf_host_info hin = {.size = sizeof(hin)};
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST}, *ai = NULL;
	struct ublksrv_ctrl_dev_info info;
	struct ublk_params params;
	struct server s = {0};
	bool recover = a->verb == UBLK_VERB_RECOVER;
	bool torn = true; /* every queue freed */
	sigset_t set;
	char err[256];
	int rc, sfd;

	if (getaddrinfo(a->host.traddr, a->host.trsvcid, &hints, &ai)) {
		fprintf(stderr, "%s: bad address %s port %s\n", prog,
			a->host.traddr, a->host.trsvcid);
		return 2;
	}
	if (ublk_ctrl_open(&c, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		freeaddrinfo(ai);
		return 2;
	}
	if (recover) {
		rc = wait_quiesced(&c, (uint32_t)a->number, &info);
		if (rc) {
			rc = 2;
			goto out;
		}
	}
	dev.done_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sfd = sig_pipe_setup(&set);
	rc = sfd < 0 ? sfd : 0;
	wharf_ctx_opts_init(&co);
	co.nshards = a->host.shards;
	co.cpus = a->ncpus ? a->cpus : NULL;
	co.ncpus = a->ncpus;
	co.poll_mode = (enum wharf_poll_mode)a->poll;
	if (!rc && dev.done_efd < 0)
		rc = -errno;
	if (!rc)
		rc = wharf_ctx_create(&co, &ctx);
	if (!rc)
		rc = wharf_cm_create(ctx, NULL, &cm);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (rc) {
		fprintf(stderr, "%s: context: %s\n", prog, strerror(-rc));
		rc = 2;
		goto out;
	}
	wharf_nvmf_host_opts_init(&ho);
	ho.cm = cm;
	ho.dst = ai->ai_addr;
	host_args_apply(&a->host, &ho);
	if (recover)
		ho.nr_io_queues = info.nr_hw_queues;
	ho.queue_size = recover ? info.queue_depth : a->queue_depth;
	ho.max_io_size = recover ? info.max_io_buf_bytes : a->max_io_size;
	ho.on_event = on_event;
	rc = wharf_nvmf_host_connect(&ho, &host);
	if (rc) {
		fprintf(stderr, "%s: connect: %s\n", prog, strerror(-rc));
		rc = 2;
		goto out;
	}
	wharf_nvmf_host_info(host, &hin);
	dev.host = host;
	host_stats_attach(&ctrl_stats, host);
	dev.nsid = a->host.nsid;
	if (geom_of(host, a->host.nsid, &dev.geom) ||
	    ublk_params_from_geom(&dev.geom, &params)) {
		fprintf(stderr, "%s: no usable namespace %u\n", prog,
			a->host.nsid);
		rc = 2;
		goto out;
	}
	if (recover) {
		struct ublk_params old;

		rc = ublk_ctrl_get_params(&c, info.dev_id, &old);
		if (!rc && (old.basic.dev_sectors != params.basic.dev_sectors ||
			    old.basic.logical_bs_shift !=
				    params.basic.logical_bs_shift)) {
			fprintf(stderr,
				"%s: device %u has %llu sectors of %u bytes, "
				"namespace %u %llu of %u: not the same "
				"storage\n",
				prog, info.dev_id,
				(unsigned long long)old.basic.dev_sectors,
				1u << old.basic.logical_bs_shift, a->host.nsid,
				(unsigned long long)params.basic.dev_sectors,
				1u << params.basic.logical_bs_shift);
			rc = 2;
			goto out;
		}
		if (hin.nr_io_queues < 1 || hin.queue_size < info.queue_depth ||
		    hin.max_io_size < info.max_io_buf_bytes) {
			fprintf(stderr,
				"%s: the controller gave %u queue(s) of %u, "
				"max I/O %u; device %u needs depth %u, max "
				"I/O %u\n",
				prog, hin.nr_io_queues, hin.queue_size,
				hin.max_io_size, info.dev_id, info.queue_depth,
				info.max_io_buf_bytes);
			rc = 2;
			goto out;
		}
		/* -EBUSY while the dead server's files are not all closed
		 * yet (the device may be quiesced before). */
		for (uint64_t end = wharf_now_ms() + QUIESCE_WAIT_MS;
		     (rc = ublk_ctrl_start_recovery(&c, info.dev_id)) ==
			     -EBUSY &&
		     wharf_now_ms() < end;)
			usleep(100000);
		if (rc) {
			fprintf(stderr, "%s: start recovery: %s\n", prog,
				strerror(-rc));
			rc = 2;
			goto out;
		}
	} else {
		unsigned depth =
			a->queue_depth ? a->queue_depth : DEFAULT_DEPTH;

		if (depth > hin.queue_size)
			depth = hin.queue_size;
		memset(&info, 0, sizeof(info));
		info.nr_hw_queues = (uint16_t)hin.nr_io_queues;
		info.queue_depth = (uint16_t)depth;
		info.max_io_buf_bytes = params.basic.max_sectors << 9;
		info.dev_id = a->number < 0 ? UINT32_MAX : (uint32_t)a->number;
		info.flags =
			UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE;
		rc = ublk_ctrl_add(&c, &info);
		if (rc) {
			fprintf(stderr, "%s: add: %s%s\n", prog, strerror(-rc),
				rc == -EEXIST ? " (the number is taken)" : "");
			rc = 2;
			goto out;
		}
		s.added = true;
		rc = ublk_ctrl_set_params(&c, info.dev_id, &params);
		if (rc) {
			fprintf(stderr, "%s: set params: %s\n", prog,
				strerror(-rc));
			rc = 2;
			goto out;
		}
	}
	dev.id = info.dev_id;
	dev.nr_queues = info.nr_hw_queues;
	dev.depth = info.queue_depth;
	dev.max_io = info.max_io_buf_bytes;
	dev.cdev = open_cdev(dev.id);
	if (dev.cdev < 0) {
		rc = 2;
		goto out;
	}
	s.qs = calloc(dev.nr_queues, sizeof(*s.qs));
	if (!s.qs) {
		rc = 2;
		goto out;
	}
	for (unsigned i = 0; i < dev.nr_queues; i++) {
		rc = ublk_queue_start(
			&dev, (uint16_t)i,
			wharf_nvmf_host_queue(host, i % hin.nr_io_queues),
			&s.qs[i]);
		if (rc) {
			fprintf(stderr, "%s: queue %u: %s\n", prog, i,
				strerror(-rc));
			rc = 2;
			goto out;
		}
		s.nq++;
	}
	rc = recover ? ublk_ctrl_end_recovery(&c, dev.id, getpid())
		     : ublk_ctrl_start(&c, dev.id, getpid());
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", prog,
			recover ? "end recovery" : "start", strerror(-rc));
		rc = 2;
		goto out;
	}
	s.started = true;
	if (!a->quiet)
		fprintf(stderr,
			"%s: %s /dev/ublkb%u: %llu bytes, block %u, %u "
			"queue(s) of depth %u, max I/O %u, on %u NVMe "
			"queue(s)\n",
			prog, recover ? "recovered" : "serving", dev.id,
			(unsigned long long)params.basic.dev_sectors << 9,
			dev.geom.block, dev.nr_queues, dev.depth, dev.max_io,
			hin.nr_io_queues);
	rc = serve(&c, &s, sfd, a);
out:
	if (s.nq && stop_queues(&s, true)) {
		/* NVMe commands still outstanding or held: fail them, then
		 * the queues can go. */
		host_gone_now(&s);
		if (stop_queues(&s, true))
			rc = rc ? rc : 1;
	}
	for (unsigned i = 0; i < s.nq; i++)
		if (!ublk_queue_free(s.qs[i], s.host_gone))
			torn = false;
	if (torn)
		free(s.qs);
	if (dev.cdev >= 0)
		close(dev.cdev);
	/* The character device is closed: DEL_DEV can finish.  Not while a
	 * queue's ring is open: it holds the device, DEL_DEV would wait. */
	if (s.added && !torn) {
		fprintf(stderr,
			"%s: /dev/ublkb%u left in place: a queue could not be "
			"torn down (wharf-ublk del --number %u)\n",
			prog, dev.id, dev.id);
		rc = rc ? rc : 1;
	} else if (s.added) {
		int r = 0;

		if (!s.started)
			r = ublk_ctrl_stop(&c, dev.id, STOP_TIMEOUT_MS);
		if (!r || r == -ENODEV)
			r = ublk_ctrl_del(&c, dev.id);
		if (r && r != -ENODEV) {
			fprintf(stderr, "%s: del: %s\n", prog, strerror(-r));
			rc = rc ? rc : 1;
		}
	}
	if (host) {
		host_gone_now(&s);
		if (s.started)
			print_stats(" at exit");
	}
	if (cm)
		wharf_cm_destroy(cm);
	if (ctx)
		wharf_ctx_destroy(ctx);
	if (dev.done_efd >= 0)
		close(dev.done_efd);
	ublk_ctrl_close(&c);
	freeaddrinfo(ai);
	return rc;
}

int main(int argc, char **argv)
{
	struct ublk_args a;
	struct ublk_ctrl c = {.fd = -1};
	char err[256];
	int rc;

	if (ublk_parse(argc, argv, &a, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n\n%s", prog, err, ublk_usage);
		return 2;
	}
	if (a.help) {
		fputs(ublk_usage, stdout);
		return 0;
	}
	if (a.version) {
		cli_version(stdout, prog);
		return 0;
	}
	if (a.verb == UBLK_VERB_ADD || a.verb == UBLK_VERB_RECOVER)
		return do_serve(&a);
	if (ublk_ctrl_open(&c, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 2;
	}
	rc = a.verb == UBLK_VERB_LIST ? do_list(&c, &a) : do_del(&c, &a);
	ublk_ctrl_close(&c);
	return rc;
}
