/*
 * nvmf_host/host.c - the controller's life as the application
 * thread sees it: options, connect (start the admin queue, wait for the
 * bring-up on the shards), disconnect (DELETE on the admin shard, which
 * closes the I/O queues; shut the controller down when it was LIVE;
 * close the admin queue; wait; free), accessors and counters.
 */
#include <errno.h>
#include <stddef.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/opts.h"
#include "nvmf_host/host_int.h"
#include "nvmf_host/subq.h"
#include "proto/nvme/auth.h"
#include "proto/nvme/hostid.h"

#define CONNECT_TIMEOUT_MS 30000u
#define HOSTNQN_FILE	   "/etc/nvme/hostnqn"
#define HOSTID_FILE	   "/etc/nvme/hostid"

void wnh_fail(struct wharf_nvmf_host *h, int err, const char *fmt, ...)
{
	va_list ap;

	bool was_done;
	char msg[256];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&h->lock);
	was_done = h->done;
	if (!h->done) {
		h->done = true;
		h->result = err;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	/* The first failure is the bring-up's result: the reason the
	 * connect or discover call returns -errno for. */
	wharf_ctx_log(h->ctx, was_done ? WHARF_LOG_WARN : WHARF_LOG_ERROR,
		      "nvmf host: %s: %s", h->subnqn, msg);
}

/*
 * Every control message about a host is counted from its post to the end
 * of its run, and disconnect frees the host only when none is left.
 * Order cannot promise that: messages keep their order per sender only,
 * so a barrier sent by the disconnecting thread may run before a queue
 * shard's last DOWN, and a RESET the admin shard sent may reach a queue
 * after the queue is gone.  A message posted by a handler is counted
 * before its poster's count drops, so the count never passes 0 while a
 * chain of them runs.
 */
struct wnh_msg {
	wharf_msg_fn fn;
	void *arg;
	struct wharf_nvmf_host *h;
};

static void msg_run(struct wharf_shard *shard, void *arg)
{
	struct wnh_msg m = *(struct wnh_msg *)arg;

	free(arg);
	m.fn(shard, m.arg);
	atomic_fetch_sub(&m.h->msgs, 1); /* the last touch of the host */
}

int wnh_post(struct wharf_nvmf_host *h, struct wharf_shard *shard,
	     wharf_msg_fn fn, void *arg)
{
	struct wnh_msg *m = malloc(sizeof(*m));
	int rc;

	if (!m)
		return -ENOMEM;
	*m = (struct wnh_msg){.fn = fn, .arg = arg, .h = h};
	atomic_fetch_add(&h->msgs, 1);
	while ((rc = wharf_shard_send(shard, msg_run, m)) == -EAGAIN)
		sched_yield();
	if (rc) {
		atomic_fetch_sub(&h->msgs, 1);
		free(m);
	}
	return rc;
}

void wharf_nvmf_host_opts_init(struct wharf_nvmf_host_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
}

/* ------------------------------------------------------------------ */
/* Waiting for the shards                                              */
/* ------------------------------------------------------------------ */

/* Waits (on h->lock) until @pred holds or @deadline passes; 0 or
 * -ETIMEDOUT.  deadline 0: no limit. */
static int wait_until(struct wharf_nvmf_host *h,
		      bool (*pred)(struct wharf_nvmf_host *), uint64_t deadline)
{
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	while (!pred(h) && !rc) {
		struct timespec ts;
		uint64_t ms;

		if (!deadline) {
			pthread_cond_wait(&h->cond, &h->lock);
			continue;
		}
		if (wharf_now_ms() >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ms = deadline - wharf_now_ms() + 1;
		if (ms > 100)
			ms = 100;
		ts.tv_nsec += (long)(ms * 1000000);
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&h->cond, &h->lock, &ts);
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

/* Waits until @pred holds, looking every 10 ms: for counts that drop
 * without a wake-up (io.c hop_put, msg_run above). */
static void wait_polled(struct wharf_nvmf_host *h,
			bool (*pred)(struct wharf_nvmf_host *))
{
	while (wait_until(h, pred, wharf_now_ms() + 10))
		;
}

static bool is_done(struct wharf_nvmf_host *h)
{
	return h->done;
}

static bool calls_done(struct wharf_nvmf_host *h)
{
	return h->calls_left == 0;
}

static bool io_gone(struct wharf_nvmf_host *h)
{
	for (unsigned i = 0; i < h->want_queues; i++)
		if (!h->io[i].gone)
			return false;
	return true;
}

static bool admin_gone(struct wharf_nvmf_host *h)
{
	return h->admin.gone;
}

/* Every off-shard I/O call has run on its shard (io.c). */
static bool hops_done(struct wharf_nvmf_host *h)
{
	return atomic_load(&h->hops) == 0;
}

/* Every control message about @h has run (wnh_post()). */
static bool msgs_done(struct wharf_nvmf_host *h)
{
	return atomic_load(&h->msgs) == 0;
}

static bool is_shut_down(struct wharf_nvmf_host *h)
{
	return h->shut_down;
}

struct admin_call {
	struct wharf_nvmf_host *h;
	void (*fn)(struct wharf_nvmf_host *h);
};

void wnh_call_done(struct wharf_nvmf_host *h)
{
	pthread_mutex_lock(&h->lock);
	h->calls_left--;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static void admin_call_fn(struct wharf_shard *shard, void *arg)
{
	struct admin_call *c = arg;
	struct wharf_nvmf_host *h = c->h;

	(void)shard;
	c->fn(h);
	wnh_call_done(h);
}

/* Runs @fn on the admin shard and waits for it. */
static void on_admin(struct wharf_nvmf_host *h,
		     void (*fn)(struct wharf_nvmf_host *h))
{
	struct admin_call c = {.h = h, .fn = fn};

	pthread_mutex_lock(&h->lock);
	h->calls_left = 1;
	pthread_mutex_unlock(&h->lock);
	if (wnh_post(h, h->admin.shard, admin_call_fn, &c))
		return; /* the context is shutting down */
	wait_until(h, calls_done, 0);
}

/* ------------------------------------------------------------------ */
/* Teardown                                                            */
/* ------------------------------------------------------------------ */

static void close_admin(struct wharf_nvmf_host *h)
{
	if (wnh_post(h, h->admin.shard, wnh_q_close, &h->admin)) {
		pthread_mutex_lock(&h->lock); /* nothing will run */
		h->admin.gone = true;
		pthread_mutex_unlock(&h->lock);
	}
}

/* The same for the submission rings: their commands run (and fail),
 * then each owner lets go of them (subq.c). */
static void retire_subqs(struct wharf_nvmf_host *h)
{
	pthread_mutex_lock(&h->lock);
	h->calls_left = h->want_queues;
	pthread_mutex_unlock(&h->lock);
	for (unsigned i = 0; i < h->want_queues; i++)
		if (wnh_post(h, h->io[i].shard, wnh_subq_retire, &h->io[i]))
			wnh_call_done(h); /* the context is shutting down */
	wait_until(h, calls_done, 0);
}

static void teardown(struct wharf_nvmf_host *h, bool shutdown)
{
	on_admin(h, wnh_ctrl_delete);
	wait_until(h, io_gone, 0);
	/* I/O calls sent from other threads before disconnect still run
	 * (and fail: the queues are closed) before the queues are freed. */
	atomic_store(&h->draining, true);
	wait_polled(h, hops_done);
	retire_subqs(h);
	if (shutdown) {
		on_admin(h, wnh_admin_shutdown);
		wait_until(h, is_shut_down,
			   wharf_now_ms() + h->admin_timeout_ms + 1000);
	}
	on_admin(h, wnh_admin_free);
	close_admin(h);
	wait_until(h, admin_gone, 0);
	/* No message about @h may outlive it (wnh_post()). */
	wait_polled(h, msgs_done);
	for (unsigned i = 0; i < h->want_queues; i++)
		wnh_queue_free(&h->io[i]);
	wnh_queue_free(&h->admin);
	free(h->io);
	free(h->disc_log);
	wnh_ns_free(h);
	nvme_auth_key_clear(&h->auth_key);
	nvme_auth_key_clear(&h->auth_ctrl_key);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

int wharf_nvmf_host_disconnect(struct wharf_nvmf_host *host)
{
	if (!host)
		return 0;
	if (wharf_shard_current())
		return -EDEADLK;
	teardown(host, true);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Connect                                                             */
/* ------------------------------------------------------------------ */

/* The first line of @path without its line end, into @buf; false when
 * the file cannot be read, or its first line is empty or does not fit. */
static bool first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok = false;

	if (!f)
		return false;
	if (fgets(buf, (int)len, f)) {
		size_t n = strcspn(buf, "\r\n");

		ok = n > 0 && (buf[n] || feof(f));
		buf[n] = '\0';
	}
	fclose(f);
	return ok;
}

/*
 * Who the host says it is, as nvme-cli decides it: the host NQN given,
 * else /etc/nvme/hostnqn; the host ID given, else nvme_hostid_default()'s
 * choice, else random.  With neither NQN, the NQN is the UUID form of the
 * host ID.
 */
static void host_identity(struct wharf_nvmf_host *h,
			  const struct wharf_nvmf_host_opts *o)
{
	char nqn[NVME_NQN_MAX + 2], id[64];
	bool have_nqn = first_line(HOSTNQN_FILE, nqn, sizeof(nqn)) &&
			strlen(nqn) <= NVME_NQN_MAX;
	bool have_id = first_line(HOSTID_FILE, id, sizeof(id));
	const uint8_t *u = h->hostid;

	if (o->hostnqn)
		strcpy(h->hostnqn, o->hostnqn);
	else if (have_nqn)
		strcpy(h->hostnqn, nqn);
	if (o->hostid)
		memcpy(h->hostid, o->hostid, sizeof(h->hostid));
	else if (nvme_hostid_default(o->hostnqn, have_id ? id : NULL,
				     have_nqn ? nqn : NULL, h->hostid) &&
		 getrandom(h->hostid, sizeof(h->hostid), 0) !=
			 (ssize_t)sizeof(h->hostid))
		memset(h->hostid, 0x5a, sizeof(h->hostid));
	if (h->hostnqn[0])
		return;
	snprintf(h->hostnqn, sizeof(h->hostnqn),
		 NVME_NQN_UUID_PREFIX
		 "%02x%02x%02x%02x-%02x%02x-"
		 "%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* @in (the caller's size) into @out (the full struct), by the rule of
 * every module's options (base/opts.h); -EINVAL for a NULL @in. */
static int opts_copy(const struct wharf_nvmf_host_opts *in,
		     struct wharf_nvmf_host_opts *out)
{
	if (!in) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return wbase_opts_copy(out, sizeof(*out), in);
}

/* A recovery timeout option as the timers take it: 0 the default, AT_ONCE
 * a timer of 0 ms, INFINITE left as it is (no timer). */
static uint32_t tmo_ms(uint32_t opt, uint32_t def)
{
	if (!opt)
		return def;
	return opt == WHARF_NVMF_HOST_TMO_AT_ONCE ? 0 : opt;
}

static int check_opts(const struct wharf_nvmf_host_opts *o)
{
	size_t n;

	if (!o || o->size != sizeof(*o) || !o->cm || !o->dst || !o->subnqn)
		return -EINVAL;
	if (o->dst->sa_family != AF_INET && o->dst->sa_family != AF_INET6)
		return -EINVAL;
	n = strnlen(o->subnqn, NVME_NQN_MAX + 1);
	if (n == 0 || n > NVME_NQN_MAX)
		return -EINVAL;
	if (o->hostnqn) {
		n = strnlen(o->hostnqn, NVME_NQN_MAX + 1);
		if (n == 0 || n > NVME_NQN_MAX)
			return -EINVAL;
	}
	if (o->queue_size == 1)
		return -EINVAL;
	if (o->dhchap_ctrl_secret && !o->dhchap_secret)
		return -EINVAL;
	if ((o->dhchap_secret && !nvme_auth_key_valid(o->dhchap_secret)) ||
	    (o->dhchap_ctrl_secret &&
	     !nvme_auth_key_valid(o->dhchap_ctrl_secret)))
		return -EINVAL;
	return 0;
}

/* The DH-HMAC-CHAP secrets of @o into @h (a NULL one: none); -EINVAL
 * for a malformed one. */
static int auth_keys(struct wharf_nvmf_host *h,
		     const struct wharf_nvmf_host_opts *o)
{
	if (o->dhchap_secret &&
	    nvme_auth_key_parse(o->dhchap_secret, &h->auth_key))
		return -EINVAL;
	if (o->dhchap_ctrl_secret &&
	    nvme_auth_key_parse(o->dhchap_ctrl_secret, &h->auth_ctrl_key))
		return -EINVAL;
	h->has_auth_key = o->dhchap_secret != NULL;
	h->has_auth_ctrl_key = o->dhchap_ctrl_secret != NULL;
	return 0;
}

static void init_queue(struct wharf_nvmf_host *h,
		       struct wharf_nvmf_host_queue *q, uint16_t qid,
		       unsigned shard_index)
{
	q->h = h;
	q->qid = qid;
	q->shard_index = shard_index;
	q->shard = wharf_ctx_shard(h->ctx, shard_index);
	q->state = NHQ_DOWN;
	q->link = NHL_NONE;
	q->gone = true; /* no connection yet */
	q->gen = wnh_subq_gen();
}

static struct wharf_nvmf_host *host_new(const struct wharf_nvmf_host_opts *o)
{
	struct wharf_nvmf_host *h = calloc(1, sizeof(*h));
	pthread_condattr_t ca;

	if (!h)
		return NULL;
	h->cm = o->cm;
	h->ctx = wharf_cm_ctx(o->cm);
	h->nshards = wharf_ctx_shard_count(h->ctx);
	memcpy(&h->dst, o->dst,
	       o->dst->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					     : sizeof(struct sockaddr_in));
	strcpy(h->subnqn, o->subnqn);
	host_identity(h, o);
	h->want_queues = o->nr_io_queues ? o->nr_io_queues : h->nshards;
	if (h->want_queues > 0xFFFE)
		h->want_queues = 0xFFFE;
	h->want_entries =
		o->queue_size ? o->queue_size : WHARF_NVMF_HOST_QUEUE_SIZE;
	h->want_io =
		o->max_io_size ? o->max_io_size : WHARF_NVMF_HOST_MAX_IO_SIZE;
	h->kato_ms = o->no_keep_alive ? 0
		     : o->kato_ms     ? o->kato_ms
				      : WHARF_NVMF_HOST_KATO_MS;
	h->io_timeout_ms = o->io_timeout_ms ? o->io_timeout_ms
					    : WHARF_NVMF_HOST_IO_TIMEOUT_MS;
	h->admin_timeout_ms = o->admin_timeout_ms
				      ? o->admin_timeout_ms
				      : WHARF_NVMF_HOST_ADMIN_TIMEOUT_MS;
	h->connect_timeout_ms = o->connect_timeout_ms ? o->connect_timeout_ms
						      : CONNECT_TIMEOUT_MS;
	h->no_in_capsule = o->no_in_capsule;
	h->reconnect_delay_ms = o->reconnect_delay_ms
					? o->reconnect_delay_ms
					: WHARF_NVMF_HOST_RECONNECT_DELAY_MS;
	h->ctrl_loss_tmo_ms =
		tmo_ms(o->ctrl_loss_tmo_ms, WHARF_NVMF_HOST_CTRL_LOSS_TMO_MS);
	h->fast_io_fail_tmo_ms =
		tmo_ms(o->fast_io_fail_tmo_ms, WHARF_NVMF_HOST_TMO_INFINITE);
	h->on_state = o->on_state;
	h->state_arg = o->state_arg;
	h->on_event = o->on_event;
	h->event_arg = o->event_arg;
	atomic_init(&h->cstate, WHARF_NVMF_HOST_NEW);
	h->info.size = sizeof(h->info);
	h->info.kato_ms = h->kato_ms;
	pthread_mutex_init(&h->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cond, &ca);
	pthread_condattr_destroy(&ca);
	h->io = calloc(h->want_queues, sizeof(*h->io));
	if (!h->io || auth_keys(h, o)) {
		free(h->io);
		nvme_auth_key_clear(&h->auth_key);
		nvme_auth_key_clear(&h->auth_ctrl_key);
		pthread_cond_destroy(&h->cond);
		pthread_mutex_destroy(&h->lock);
		free(h);
		return NULL;
	}
	/* Admin on shard 0; I/O queue i on shard i % shards. */
	init_queue(h, &h->admin, 0, 0);
	h->admin.entries = NH_ADMIN_ENTRIES;
	h->admin.bounce_size = NH_ADMIN_BOUNCE;
	h->admin.timeout_ms = h->admin_timeout_ms;
	for (unsigned i = 0; i < h->want_queues; i++)
		init_queue(h, &h->io[i], (uint16_t)(i + 1), i % h->nshards);
	return h;
}

/* Starts the admin queue and waits for the bring-up (the connect's or
 * the discovery's) to end: its result (wnh_fail() logged why). */
static int bring_up(struct wharf_nvmf_host *h)
{
	int rc = wnh_admin_start(h);

	if (rc) {
		wharf_ctx_log(h->ctx, WHARF_LOG_ERROR,
			      "nvmf host: %s: admin queue: connect: %s",
			      h->subnqn, strerror(-rc));
		return rc;
	}
	if (wait_until(h, is_done, wharf_now_ms() + h->connect_timeout_ms)) {
		wnh_fail(h, -ETIMEDOUT, "bring-up not finished within %u ms",
			 h->connect_timeout_ms);
		return -ETIMEDOUT;
	}
	return h->result;
}

/* Checks @o, creates the controller (@disc: a discovery controller) and
 * brings it up; on failure the context's log says why and nothing is
 * left. */
static int host_open(const struct wharf_nvmf_host_opts *o, bool disc,
		     struct wharf_nvmf_host **out)
{
	struct wharf_nvmf_host *h;
	int rc;

	if (check_opts(o)) {
		if (o->cm)
			wharf_ctx_log(
				wharf_cm_ctx(o->cm), WHARF_LOG_ERROR,
				"nvmf host: invalid options (dst, subnqn, "
				"hostnqn, queue_size or a DH-HMAC-CHAP "
				"secret not in the DHHC-1:XX:<base64>: "
				"form)");
		return -EINVAL;
	}
	if (wharf_shard_current())
		return -EDEADLK;
	h = host_new(o);
	if (!h)
		return -ENOMEM;
	h->disc = disc;
	rc = bring_up(h);
	if (rc) {
		teardown(h, false);
		return rc;
	}
	*out = h;
	return 0;
}

int wharf_nvmf_host_connect(const struct wharf_nvmf_host_opts *opts,
			    struct wharf_nvmf_host **out)
{
	struct wharf_nvmf_host_opts o;

	if (opts_copy(opts, &o) || !out)
		return -EINVAL;
	return host_open(&o, false, out);
}

/* ------------------------------------------------------------------ */
/* Discovery                                                           */
/* ------------------------------------------------------------------ */

void wnh_disc_done(struct wharf_nvmf_host *h)
{
	pthread_mutex_lock(&h->lock);
	if (!h->done) {
		h->done = true;
		h->result = 0;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
}

/* The log the shard read (complete: wnh_disc_done) into a new array. */
static int disc_copy(const struct wharf_nvmf_host *h,
		     struct wharf_nvmf_host_disc_entry **out, size_t *nr)
{
	const size_t esz = sizeof(struct nvme_disc_entry);
	size_t n = h->disc_len / esz - 1;
	struct wharf_nvmf_host_disc_entry *e;

	*out = NULL;
	*nr = 0;
	if (!n)
		return 0;
	e = calloc(n, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		wnh_disc_entry_parse(h->disc_log + (i + 1) * esz, esz, &e[i]);
	*out = e;
	*nr = n;
	return 0;
}

int wharf_nvmf_host_discover(const struct wharf_nvmf_host_opts *opts,
			     struct wharf_nvmf_host_disc_entry **out,
			     size_t *nr)
{
	struct wharf_nvmf_host_opts o;
	struct wharf_nvmf_host *h;
	int rc;

	if (opts_copy(opts, &o) || !out || !nr)
		return -EINVAL;
	*out = NULL;
	*nr = 0;
	if (!o.subnqn)
		o.subnqn = NVME_DISC_NQN;
	o.nr_io_queues = 1; /* never connected */
	o.no_keep_alive = true;
	o.on_event = NULL; /* no AER on a discovery controller here */
	rc = host_open(&o, true, &h);
	if (rc)
		return rc;
	rc = disc_copy(h, out, nr);
	teardown(h, false);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Accessors                                                           */
/* ------------------------------------------------------------------ */

int wharf_nvmf_host_info(const struct wharf_nvmf_host *host,
			 struct wharf_nvmf_host_info *out)
{
	struct wharf_nvmf_host *h = (struct wharf_nvmf_host *)host;
	struct wharf_nvmf_host_info in;

	if (!host || !out)
		return -EINVAL;
	pthread_mutex_lock(&h->lock); /* cntlid, nr_ns change at run time */
	in = host->info;
	pthread_mutex_unlock(&h->lock);
	return wbase_out_copy(out, &in, sizeof(in));
}

int wharf_nvmf_host_ns(const struct wharf_nvmf_host *host, unsigned index,
		       struct wharf_nvmf_host_ns *out)
{
	struct wharf_nvmf_host *h = (struct wharf_nvmf_host *)host;
	int rc = 0;

	if (!host || !out || out->size != sizeof(*out))
		return -EINVAL;
	pthread_mutex_lock(&h->lock); /* a rescan may change the list */
	if (index >= host->info.nr_ns)
		rc = -ENOENT;
	else
		*out = host->ns[index];
	pthread_mutex_unlock(&h->lock);
	return rc;
}

struct wharf_nvmf_host_queue *
wharf_nvmf_host_queue(const struct wharf_nvmf_host *host, unsigned index)
{
	if (!host || index >= host->nio)
		return NULL;
	return &host->io[index];
}

struct wharf_shard *
wharf_nvmf_host_queue_shard(const struct wharf_nvmf_host_queue *q)
{
	return q ? q->shard : NULL;
}

int wharf_nvmf_host_queue_stats(const struct wharf_nvmf_host_queue *q,
				struct wharf_nvmf_host_queue_stats *out)
{
	if (!q || !out || out->size != sizeof(*out))
		return -EINVAL;
	out->submitted = atomic_load(&q->n.submitted);
	out->completed = atomic_load(&q->n.completed);
	out->in_capsule = atomic_load(&q->n.in_capsule);
	out->keyed = atomic_load(&q->n.keyed);
	out->nvme_errors = atomic_load(&q->n.nvme_errors);
	out->timeouts = atomic_load(&q->n.timeouts);
	out->bad_responses = atomic_load(&q->n.bad_responses);
	out->outstanding = (uint32_t)atomic_load(&q->n.outstanding);
	out->error = atomic_load(&q->n.error);
	out->retried = atomic_load(&q->n.retried);
	out->failed_held = atomic_load(&q->n.failed_held);
	return 0;
}

int wharf_nvmf_host_stats(const struct wharf_nvmf_host *host,
			  struct wharf_nvmf_host_stats *out)
{
	struct wharf_nvmf_host_stats st = {.size = sizeof(st)};

	if (!host || !out)
		return -EINVAL;
	st.state = (enum wharf_nvmf_host_state)atomic_load(&host->cstate);
	st.losses = atomic_load(&host->losses);
	st.reconnect_attempts = atomic_load(&host->attempts);
	st.reconnects = atomic_load(&host->reconnects);
	st.last_error = atomic_load(&host->last_error);
	for (unsigned i = 0; i < host->nio; i++) {
		st.retried += atomic_load(&host->io[i].n.retried);
		st.failed_held += atomic_load(&host->io[i].n.failed_held);
	}
	st.events = atomic_load(&host->events);
	st.ns_rescans = atomic_load(&host->ns_rescans);
	return wbase_out_copy(out, &st, sizeof(st));
}
