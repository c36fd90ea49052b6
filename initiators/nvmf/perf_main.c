/*
 * initiators/nvmf/perf_main.c - wharf-nvmf-perf: connect one controller
 * with <wharf/nvmf_host.h>, keep QD commands outstanding on every I/O
 * queue for the given time, report IOPS, MiB/s and latency (perf.h has
 * the options, `--help` the text).
 *
 * One job per I/O queue, run on the queue's owner shard: it is started
 * by a message, resubmits from its completion callbacks and counts with
 * single-writer atomics the main thread reads for progress.  With
 * --submit-thread the callbacks (still on the shard) only hand each slot
 * to one application thread through a single-producer single-consumer
 * ring per job, and that thread makes every submission call (which the
 * library hands to the queue's shard), each pass's calls in one batch
 * (wharf_nvmf_host_batch_begin/end: one wake-up of the shard per pass).
 * The thread sleeps on an eventfd when every ring is empty; a poller on
 * each job's shard writes it once per loop pass that handed it slots,
 * and only when the thread said it sleeps (`armed`).  With --zero-copy each job's
 * buffers are one region registered once on its queue
 * (wharf_nvmf_host_mem_reg()) and the commands use it in place.
 * The main thread raises `stop` when the time is up or SIGINT/SIGTERM
 * came (both blocked in every other thread); each job lets its commands
 * drain and says `done`.  The namespace is split evenly between the jobs, and in
 * --verify mode each command slot of a job owns its own blocks, so no two
 * commands in flight ever touch the same block: a slot writes a pattern
 * derived from (LBA, slot sequence number), reads it back and compares;
 * a write counts as acknowledged only when it completed with success, and
 * at the end every slot's last acknowledged write is read once more (so
 * data written before a target restart is checked after it).
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/nvmf_host.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "initiators/nvmf/perf.h"
#include "initiators/nvmf/perf_hist.h"

struct job;

/* What the submitting side does with a slot after its completion. */
enum act {
	ACT_NEXT = 0, /* the slot's next command, or its end */
	ACT_READBACK, /* verify: read back what it wrote */
};

struct slot {
	struct job *j;
	uint8_t *buf;
	uint64_t lba;  /* of the command in flight */
	uint64_t base; /* verify: the slot's own blocks */
	uint64_t seq;  /* verify: the pattern's generation */
	uint64_t t0;   /* submission, ns */
	bool reading;  /* verify: the read-back is in flight */
	bool acked;    /* verify: a write of this slot completed with success */
	uint64_t acked_lba, acked_seq;
	enum act act; /* --submit-thread: what the thread does next */
};

/* --submit-thread: the thread and how the shards wake it. */
struct submitter {
	struct job *jobs;
	unsigned n;
	int efd;	  /* eventfd the thread sleeps on */
	atomic_int armed; /* 1: the thread may sleep; wake it */
};

struct job {
	struct wharf_nvmf_host_queue *q;
	const struct perf_args *a;
	uint32_t nsid, bs, nblk; /* block size, blocks per command */
	uint64_t base, span;	 /* the job's blocks */
	uint64_t slot_span;	 /* verify: blocks per slot */
	uint64_t cursor, rng;
	struct slot *slots;
	uint8_t *region;		 /* the slots' buffers */
	struct wharf_nvmf_host_mem *mem; /* --zero-copy: region registered */
	struct slot **ring;		 /* --submit-thread: shard -> thread */
	atomic_ullong ring_head, ring_tail; /* 64-bit: never wrap */
	struct submitter *sub;		    /* --submit-thread */
	struct wharf_poller *poller;	    /* --submit-thread, on the shard */
	bool wake_due;	   /* shard: slots pushed since the last wake */
	atomic_int hooked; /* the poller: 1 added, 0 removed, <0 -errno */
	atomic_uint inflight;
	struct perf_hist hist;
	atomic_uint_fast64_t ios, errors, verify_errors, rechecked;
	atomic_int first_error;
	atomic_bool done;
};

static atomic_bool stop;
/* SIGINT or SIGTERM during the run: it ends as if its time were up. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Blocks SIGINT and SIGTERM (@block) in the calling thread, which every
 * thread it starts inherits, or takes them in on_interrupt(). */
static void interrupt_signals(bool block)
{
	struct sigaction sa = {.sa_handler = on_interrupt};
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (!block) {
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

static void inc(atomic_uint_fast64_t *c)
{
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static void fill(const struct slot *s, uint8_t *dst, size_t len)
{
	for (size_t i = 0; i < len / 8; i++) {
		uint64_t w = mix(s->lba << 24 ^ s->seq << 44 ^ i);

		memcpy(dst + i * 8, &w, 8);
	}
}

static bool is_write(const struct job *j)
{
	return j->a->pattern == PERF_WRITE || j->a->pattern == PERF_RANDWRITE;
}

static bool is_rand(const struct job *j)
{
	return j->a->pattern == PERF_RANDREAD ||
	       j->a->pattern == PERF_RANDWRITE;
}

/* The next command's first block within @base/@span. */
static uint64_t pick(struct job *j, uint64_t base, uint64_t span,
		     uint64_t *cursor)
{
	uint64_t slots = span / j->nblk, k;

	if (is_rand(j)) {
		k = rnd(&j->rng) % slots;
	} else {
		k = *cursor % slots;
		(*cursor)++;
	}
	return base + k * j->nblk;
}

static void on_done(int status, uint16_t nvme_status, void *arg);

/* The slot's command, from its buffer in place (--zero-copy) or through
 * the library's bounce buffers. */
static int io(struct slot *s, bool write, wharf_nvmf_host_cb cb)
{
	struct job *j = s->j;

	if (j->mem && write)
		return wharf_nvmf_host_write_mem(j->q, j->mem, j->nsid, s->lba,
						 j->nblk, s->buf, cb, s);
	if (j->mem)
		return wharf_nvmf_host_read_mem(j->q, j->mem, j->nsid, s->lba,
						j->nblk, s->buf, cb, s);
	if (write)
		return wharf_nvmf_host_write(j->q, j->nsid, s->lba, j->nblk,
					     s->buf, cb, s);
	return wharf_nvmf_host_read(j->q, j->nsid, s->lba, j->nblk, s->buf, cb,
				    s);
}

static int submit(struct slot *s, bool write)
{
	s->t0 = wharf_now_ns();
	return io(s, write, on_done);
}

/* Starts the slot's next command; false when it stops. */
static bool next(struct slot *s)
{
	struct job *j = s->j;
	int rc;

	if (atomic_load_explicit(&stop, memory_order_relaxed))
		return false;
	if (j->a->verify) {
		uint64_t c = s->seq;

		s->seq++;
		s->lba = pick(j, s->base, j->slot_span, &c);
		s->reading = false;
		fill(s, s->buf, (size_t)j->nblk * j->bs);
		rc = submit(s, true);
	} else {
		s->lba = pick(j, j->base, j->span, &j->cursor);
		rc = submit(s, is_write(j));
	}
	if (rc) {
		inc(&j->errors);
		atomic_store(&j->first_error, rc);
		return false;
	}
	return true;
}

static void slot_end(struct job *j)
{
	if (atomic_fetch_sub(&j->inflight, 1) == 1)
		atomic_store_explicit(&j->done, true, memory_order_release);
}

/* --submit-thread: the job's shard hands @s to the thread (at most qd
 * slots are ever in the ring). */
static void ring_push(struct job *j, struct slot *s)
{
	unsigned long long t =
		atomic_load_explicit(&j->ring_tail, memory_order_relaxed);

	j->ring[t % j->a->qd] = s;
	/* seq_cst: the wake-up protocol (submitter_wake, submit_thread). */
	atomic_store_explicit(&j->ring_tail, t + 1, memory_order_seq_cst);
	j->wake_due = true;
}

/* On the shard, once per loop pass: wake the thread if it sleeps and
 * this pass handed it slots. */
static void submitter_wake(struct job *j)
{
	struct submitter *t = j->sub;
	uint64_t one = 1;

	if (!j->wake_due)
		return;
	j->wake_due = false;
	if (atomic_load_explicit(&t->armed, memory_order_seq_cst) &&
	    atomic_exchange_explicit(&t->armed, 0, memory_order_relaxed) &&
	    write(t->efd, &one, sizeof(one)) != sizeof(one))
		perror("wharf-nvmf-perf: eventfd"); /* its 100 ms poll saves it */
}

/* The job's poller, every loop pass and before the shard blocks alike. */
static int wake_hook(struct wharf_shard *shard, void *arg)
{
	(void)shard;
	submitter_wake(arg);
	return 0; /* no work of its own; never keeps the shard awake */
}

static void hook(struct wharf_shard *shard, void *arg)
{
	struct job *j = arg;
	int rc = wharf_shard_poller_add(shard, wake_hook, wake_hook, j,
					&j->poller);

	atomic_store(&j->hooked, rc ? rc : 1);
}

static void unhook(struct wharf_shard *shard, void *arg)
{
	struct job *j = arg;

	(void)shard;
	submitter_wake(j);
	wharf_poller_remove(j->poller);
	j->poller = NULL;
	atomic_store(&j->hooked, 0);
}

/* From the main thread (never a shard: it sleeps while it waits): run
 * @fn on @j's shard and wait until it moved `hooked` away from @from;
 * its final value. */
static int job_hook_call(struct job *j, wharf_msg_fn fn, int from)
{
	while (wharf_shard_send(wharf_nvmf_host_queue_shard(j->q), fn, j) ==
	       -EAGAIN)
		usleep(1000);
	while (atomic_load(&j->hooked) == from)
		usleep(100);
	return atomic_load(&j->hooked);
}

static struct slot *ring_pop(struct job *j)
{
	unsigned long long h =
		atomic_load_explicit(&j->ring_head, memory_order_relaxed);
	struct slot *s;

	if (h == atomic_load_explicit(&j->ring_tail, memory_order_seq_cst))
		return NULL;
	s = j->ring[h % j->a->qd];
	atomic_store_explicit(&j->ring_head, h + 1, memory_order_release);
	return s;
}

static void act(struct slot *s, enum act a)
{
	struct job *j = s->j;

	if (a == ACT_READBACK) {
		if (submit(s, false)) {
			inc(&j->errors);
			slot_end(j);
		}
		return;
	}
	if (!next(s))
		slot_end(j);
}

/* After a completion: at once on the shard, or by the submit thread. */
static void later(struct slot *s, enum act a)
{
	if (s->j->a->submit_thread) {
		s->act = a;
		ring_push(s->j, s);
		return;
	}
	act(s, a);
}

static void check(struct slot *s)
{
	struct job *j = s->j;
	size_t len = (size_t)j->nblk * j->bs;
	uint8_t *want = malloc(len);

	if (!want)
		return;
	fill(s, want, len);
	if (memcmp(want, s->buf, len)) {
		if (!atomic_load(&j->verify_errors))
			fprintf(stderr,
				"wharf-nvmf-perf: verify: LBA %llu "
				"(generation %llu) read back different data\n",
				(unsigned long long)s->lba,
				(unsigned long long)s->seq);
		inc(&j->verify_errors);
	}
	free(want);
}

static void on_done(int status, uint16_t nvme_status, void *arg)
{
	struct slot *s = arg;
	struct job *j = s->j;

	ph_add(&j->hist, wharf_now_ns() - s->t0);
	inc(&j->ios);
	if (status) {
		if (!atomic_load(&j->errors))
			fprintf(stderr,
				"wharf-nvmf-perf: queue command failed: %s "
				"(NVMe status 0x%x)\n",
				strerror(-status), nvme_status);
		inc(&j->errors);
		atomic_store(&j->first_error, status);
		slot_end(j);
		return;
	}
	if (j->a->verify && !s->reading) {
		s->acked = true;
		s->acked_lba = s->lba;
		s->acked_seq = s->seq;
		s->reading = true;
		memset(s->buf, 0xEE, (size_t)j->nblk * j->bs);
		later(s, ACT_READBACK);
		return;
	}
	if (j->a->verify)
		check(s);
	later(s, ACT_NEXT);
}

/* The final pass of --verify: each slot's last acknowledged write. */
static void recheck_done(int status, uint16_t nvme_status, void *arg)
{
	struct slot *s = arg;
	struct job *j = s->j;

	if (status) {
		fprintf(stderr,
			"wharf-nvmf-perf: verify: reading LBA %llu again: %s "
			"(NVMe status 0x%x)\n",
			(unsigned long long)s->lba, strerror(-status),
			nvme_status);
		inc(&j->errors);
		atomic_store(&j->first_error, status);
	} else {
		check(s);
		inc(&j->rechecked);
	}
	slot_end(j);
}

static void recheck_start(struct wharf_shard *shard, void *arg)
{
	struct job *j = arg;
	unsigned n = 0;

	(void)shard;
	for (unsigned i = 0; i < j->a->qd; i++)
		n += j->slots[i].acked;
	atomic_store(&j->inflight, n);
	if (!n)
		atomic_store_explicit(&j->done, true, memory_order_release);
	for (unsigned i = 0; i < j->a->qd; i++) {
		struct slot *s = &j->slots[i];
		int rc;

		if (!s->acked)
			continue;
		s->lba = s->acked_lba;
		s->seq = s->acked_seq;
		memset(s->buf, 0xEE, (size_t)j->nblk * j->bs);
		rc = io(s, false, recheck_done);
		if (rc) {
			inc(&j->errors);
			atomic_store(&j->first_error, rc);
			slot_end(j);
		}
	}
}

static void job_start(struct wharf_shard *shard, void *arg)
{
	struct job *j = arg;

	(void)shard;
	for (unsigned i = 0; i < j->a->qd; i++)
		act(&j->slots[i], ACT_NEXT);
}

static bool rings_empty(const struct submitter *t)
{
	for (unsigned i = 0; i < t->n; i++) {
		const struct job *j = &t->jobs[i];

		if (atomic_load_explicit(&j->ring_head, memory_order_relaxed) !=
		    atomic_load_explicit(&j->ring_tail, memory_order_seq_cst))
			return false;
	}
	return true;
}

/* Every ring empty: sleep until a shard hands over a slot (or 100 ms, a
 * bound should a wake-up ever be missed). */
static void submitter_sleep(struct submitter *t)
{
	struct pollfd pfd = {.fd = t->efd, .events = POLLIN};
	uint64_t v;

	atomic_store_explicit(&t->armed, 1, memory_order_seq_cst);
	if (rings_empty(t) && poll(&pfd, 1, 100) > 0 &&
	    read(t->efd, &v, sizeof(v)) < 0)
		perror("wharf-nvmf-perf: eventfd");
	atomic_store_explicit(&t->armed, 0, memory_order_relaxed);
}

/* --submit-thread: start every slot, then make the calls the shards hand
 * over, until every job is done: each pass's calls in one batch. */
static void *submit_thread(void *arg)
{
	struct submitter *t = arg;
	bool all_done;

	wharf_nvmf_host_batch_begin();
	for (unsigned i = 0; i < t->n; i++)
		job_start(NULL, &t->jobs[i]);
	wharf_nvmf_host_batch_end();
	do {
		bool idle = true;

		all_done = true;
		wharf_nvmf_host_batch_begin();
		for (unsigned i = 0; i < t->n; i++) {
			struct job *j = &t->jobs[i];
			struct slot *s;

			while ((s = ring_pop(j))) {
				act(s, s->act);
				idle = false;
			}
			if (!atomic_load_explicit(&j->done,
						  memory_order_acquire))
				all_done = false;
		}
		wharf_nvmf_host_batch_end();
		if (idle && !all_done)
			submitter_sleep(t);
	} while (!all_done);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Setup and report                                                    */
/* ------------------------------------------------------------------ */

static int job_init(struct job *j, const struct perf_args *a,
		    struct wharf_nvmf_host_queue *q, unsigned index,
		    unsigned njobs, const struct wharf_nvmf_host_ns *ns)
{
	uint64_t per = ns->nblocks / njobs;

	memset(j, 0, sizeof(*j));
	j->q = q;
	j->a = a;
	j->nsid = ns->nsid;
	j->bs = ns->block_size;
	j->nblk = a->io_size / ns->block_size;
	j->base = per * index;
	j->span = per;
	j->rng = 0x9E3779B97F4A7C15ull * (index + 1);
	j->slot_span = per / a->qd;
	ph_init(&j->hist);
	if (j->span < j->nblk || (a->verify && j->slot_span < j->nblk))
		return -ENOSPC;
	j->slots = calloc(a->qd, sizeof(*j->slots));
	j->ring = calloc(a->qd, sizeof(*j->ring));
	if (!j->slots || !j->ring ||
	    posix_memalign((void **)&j->region, 4096,
			   (size_t)a->qd * a->io_size))
		return -ENOMEM;
	memset(j->region, 0xA5, (size_t)a->qd * a->io_size);
	for (unsigned i = 0; i < a->qd; i++) {
		struct slot *s = &j->slots[i];

		s->j = j;
		s->base = j->base + (uint64_t)i * j->slot_span;
		s->buf = j->region + (size_t)i * a->io_size;
	}
	if (a->zero_copy)
		return wharf_nvmf_host_mem_reg(
			q, j->region, (size_t)a->qd * a->io_size, &j->mem);
	return 0;
}

static void job_free(struct job *j)
{
	if (j->mem)
		wharf_nvmf_host_mem_dereg(j->mem);
	free(j->region);
	free(j->ring);
	free(j->slots);
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

struct result {
	uint64_t ios, errors, verify_errors, rechecked;
	uint64_t reconnects, retried;
	double connect_ms; /* wharf_nvmf_host_connect(), authentication too */
	double secs, iops, mib_s, cpu_us_per_io;
	double avg_us, p50_us, p99_us, p999_us, max_us;
};

static void report(const struct perf_args *a,
		   const struct wharf_nvmf_host_info *in,
		   const struct result *r)
{
	if (a->json) {
		struct cli_json j;

		cli_json_init(&j, stdout, CLI_JSON_COMPACT);
		cli_json_obj(&j, NULL);
		cli_json_str(&j, "tool", "wharf-nvmf-perf");
		cli_json_str(&j, "traddr", a->host.traddr);
		cli_json_str(&j, "trsvcid", a->host.trsvcid);
		cli_json_str(&j, "subnqn", a->host.subnqn);
		cli_json_u64(&j, "nsid", a->host.nsid);
		cli_json_str(&j, "pattern", perf_pattern_name(a->pattern));
		cli_json_bool(&j, "dhchap", a->host.dhchap_secret != NULL);
		cli_json_bool(&j, "dhchap_bidi",
			      a->host.dhchap_ctrl_secret != NULL);
		cli_json_num(&j, "connect_ms", r->connect_ms);
		cli_json_u64(&j, "io_size", a->io_size);
		cli_json_u64(&j, "qd", a->qd);
		cli_json_u64(&j, "queues", in->nr_io_queues);
		cli_json_bool(&j, "verify", a->verify);
		cli_json_bool(&j, "zero_copy", a->zero_copy);
		cli_json_bool(&j, "submit_thread", a->submit_thread);
		cli_json_num(&j, "time_s", r->secs);
		cli_json_u64(&j, "ios", r->ios);
		cli_json_num(&j, "iops", r->iops);
		cli_json_num(&j, "mib_s", r->mib_s);
		cli_json_obj(&j, "lat_us");
		cli_json_num(&j, "avg", r->avg_us);
		cli_json_num(&j, "p50", r->p50_us);
		cli_json_num(&j, "p99", r->p99_us);
		cli_json_num(&j, "p99_9", r->p999_us);
		cli_json_num(&j, "max", r->max_us);
		cli_json_end(&j);
		cli_json_num(&j, "cpu_us_per_io", r->cpu_us_per_io);
		cli_json_u64(&j, "errors", r->errors);
		cli_json_u64(&j, "verify_errors", r->verify_errors);
		cli_json_u64(&j, "rechecked", r->rechecked);
		cli_json_u64(&j, "reconnects", r->reconnects);
		cli_json_u64(&j, "retried", r->retried);
		cli_json_u64(&j, "in_capsule_size", in->in_capsule_size);
		cli_json_u64(&j, "max_io_size", in->max_io_size);
		cli_json_end(&j);
		if (cli_json_finish(&j))
			fprintf(stderr, "wharf-nvmf-perf: the JSON result was "
					"not written\n");
		return;
	}
	printf("%-10s %7s %4s %6s %10s %9s %9s %9s %9s %9s %8s\n", "pattern",
	       "io_size", "qd", "queues", "IOPS", "MiB/s", "avg_us", "p50_us",
	       "p99_us", "p99.9_us", "cpu_us/io");
	printf("%-10s %7u %4u %6u %10.0f %9.2f %9.2f %9.2f %9.2f %9.2f "
	       "%8.2f\n",
	       perf_pattern_name(a->pattern), a->io_size, a->qd,
	       in->nr_io_queues, r->iops, r->mib_s, r->avg_us, r->p50_us,
	       r->p99_us, r->p999_us, r->cpu_us_per_io);
	printf("wharf-nvmf-perf: connected in %.1f ms%s; %llu I/Os in %.2f s, "
	       "%llu reconnects, %llu retried, %llu errors%s",
	       r->connect_ms,
	       a->host.dhchap_ctrl_secret ? " (DH-HMAC-CHAP, bidirectional)"
	       : a->host.dhchap_secret	  ? " (DH-HMAC-CHAP)"
					  : "",
	       (unsigned long long)r->ios, r->secs,
	       (unsigned long long)r->reconnects,
	       (unsigned long long)r->retried, (unsigned long long)r->errors,
	       a->verify ? ", " : "\n");
	if (a->verify)
		printf("%llu verify mismatches (%llu acknowledged writes read "
		       "again at the end)\n",
		       (unsigned long long)r->verify_errors,
		       (unsigned long long)r->rechecked);
}

static int run(const struct perf_args *a, struct wharf_nvmf_host *host,
	       double connect_ms)
{
	struct wharf_nvmf_host_info in = {.size = sizeof(in)};
	struct wharf_nvmf_host_ns ns = {.size = sizeof(ns)};
	struct wharf_nvmf_host_stats hs = {.size = sizeof(hs)};
	struct perf_hist all;
	struct result r = {0};
	struct job *jobs;
	struct submitter sub;
	pthread_t thread = 0;
	uint64_t t0, tend, last = 0, lastn = 0;
	double c0, c1;
	unsigned n, i;
	int rc = 0;

	wharf_nvmf_host_info(host, &in);
	for (i = 0; i < in.nr_ns; i++)
		if (!wharf_nvmf_host_ns(host, i, &ns) &&
		    ns.nsid == a->host.nsid)
			break;
	if (i == in.nr_ns || !ns.block_size) {
		fprintf(stderr, "wharf-nvmf-perf: no namespace %u\n",
			a->host.nsid);
		return 2;
	}
	if (a->io_size % ns.block_size || a->io_size > in.max_io_size) {
		fprintf(stderr,
			"wharf-nvmf-perf: --io-size %u: not a multiple of "
			"the block size %u or above the transfer limit %u\n",
			a->io_size, ns.block_size, in.max_io_size);
		return 2;
	}
	if (a->qd > in.queue_size) {
		fprintf(stderr,
			"wharf-nvmf-perf: --qd %u above the queue size %u "
			"the controller granted\n",
			a->qd, in.queue_size);
		return 2;
	}
	n = in.nr_io_queues;
	jobs = calloc(n, sizeof(*jobs));
	if (!jobs)
		return 2;
	sub.jobs = jobs;
	sub.n = n;
	sub.efd = -1;
	atomic_init(&sub.armed, 0);
	for (i = 0; i < n && !rc; i++)
		rc = job_init(&jobs[i], a, wharf_nvmf_host_queue(host, i), i, n,
			      &ns);
	if (rc) {
		fprintf(stderr, "wharf-nvmf-perf: setting up jobs: %s\n",
			rc == -ENOSPC ? "namespace too small" : strerror(-rc));
		goto out;
	}
	if (!a->quiet)
		fprintf(stderr,
			"wharf-nvmf-perf: %s %s: %u queue(s), qd %u, %s %u "
			"bytes, %u s (cntlid %u, in-capsule %u, max I/O %u)\n",
			a->host.traddr, a->host.subnqn, n, a->qd,
			perf_pattern_name(a->pattern), a->io_size, a->time_s,
			in.cntlid, in.in_capsule_size, in.max_io_size);
	c0 = cpu_s();
	t0 = wharf_now_ns();
	for (i = 0; i < n; i++)
		atomic_store(&jobs[i].inflight, a->qd);
	if (a->submit_thread) {
		sub.efd = eventfd(0, EFD_CLOEXEC);
		if (sub.efd < 0) {
			perror("wharf-nvmf-perf: eventfd");
			rc = 2;
			goto out;
		}
		for (i = 0; i < n; i++) {
			jobs[i].sub = &sub;
			rc = job_hook_call(&jobs[i], hook, 0);
			if (rc < 0) {
				fprintf(stderr,
					"wharf-nvmf-perf: poller on the "
					"shard: %s\n",
					strerror(-rc));
				rc = 2;
				goto out;
			}
		}
		rc = pthread_create(&thread, NULL, submit_thread, &sub);
		if (rc) {
			fprintf(stderr, "wharf-nvmf-perf: submit thread: %s\n",
				strerror(rc));
			rc = 2;
			goto out;
		}
		rc = 0;
	}
	for (i = 0; i < n && !a->submit_thread; i++)
		while (wharf_shard_send(wharf_nvmf_host_queue_shard(jobs[i].q),
					job_start, &jobs[i]) == -EAGAIN)
			usleep(1000);
	tend = t0 + (uint64_t)a->time_s * 1000000000ull;
	/* Every other thread runs with them blocked: a signal that came
	 * while connecting is taken here and ends the run at once. */
	interrupt_signals(false);
	while (wharf_now_ns() < tend && !interrupted) {
		uint64_t sum = 0, t;

		usleep(100000);
		t = wharf_now_ns();
		if (t - last < 1000000000ull)
			continue;
		for (i = 0; i < n; i++)
			sum += atomic_load(&jobs[i].ios);
		if (!a->quiet && last)
			fprintf(stderr, "[%3.0fs] %10.0f IOPS %9.2f MiB/s\n",
				(double)(t - t0) / 1e9,
				(double)(sum - lastn) * 1e9 /
					(double)(t - last),
				(double)(sum - lastn) * a->io_size / 1048576.0 *
					1e9 / (double)(t - last));
		last = t;
		lastn = sum;
	}
	atomic_store(&stop, true);
	if (interrupted)
		fprintf(stderr, "wharf-nvmf-perf: interrupted at %.1f s\n",
			(double)(wharf_now_ns() - t0) / 1e9);
	for (i = 0; i < n; i++)
		while (!atomic_load_explicit(&jobs[i].done,
					     memory_order_acquire))
			usleep(1000);
	if (a->submit_thread)
		pthread_join(thread, NULL);
	r.secs = (double)(wharf_now_ns() - t0) / 1e9;
	c1 = cpu_s();
	if (a->verify) {
		for (i = 0; i < n; i++) {
			atomic_store(&jobs[i].done, false);
			while (wharf_shard_send(
				       wharf_nvmf_host_queue_shard(jobs[i].q),
				       recheck_start, &jobs[i]) == -EAGAIN)
				usleep(1000);
		}
		for (i = 0; i < n; i++)
			while (!atomic_load_explicit(&jobs[i].done,
						     memory_order_acquire))
				usleep(1000);
	}
	ph_init(&all);
	for (i = 0; i < n; i++) {
		ph_merge(&all, &jobs[i].hist);
		r.errors += atomic_load(&jobs[i].errors);
		r.verify_errors += atomic_load(&jobs[i].verify_errors);
		r.rechecked += atomic_load(&jobs[i].rechecked);
	}
	wharf_nvmf_host_stats(host, &hs);
	r.reconnects = hs.reconnects;
	r.connect_ms = connect_ms;
	r.retried = hs.retried;
	r.ios = all.count;
	r.iops = (double)r.ios / r.secs;
	r.mib_s = r.iops * a->io_size / 1048576.0;
	r.cpu_us_per_io = r.ios ? (c1 - c0) * 1e6 / (double)r.ios : 0;
	r.avg_us = all.count ? (double)all.sum / (double)all.count / 1e3 : 0;
	r.p50_us = (double)ph_percentile(&all, 0.50) / 1e3;
	r.p99_us = (double)ph_percentile(&all, 0.99) / 1e3;
	r.p999_us = (double)ph_percentile(&all, 0.999) / 1e3;
	r.max_us = all.count ? (double)all.max / 1e3 : 0;
	report(a, &in, &r);
	rc = r.errors || r.verify_errors || !r.ios ? 1 : 0;
out:
	for (i = 0; i < n; i++)
		if (atomic_load(&jobs[i].hooked) == 1)
			job_hook_call(&jobs[i], unhook, 1);
	if (sub.efd >= 0)
		close(sub.efd);
	for (i = 0; i < n; i++)
		job_free(&jobs[i]);
	free(jobs);
	return rc;
}

/* --discover: one line per Discovery Log Page entry; 0, or 2. */
static int discover(struct wharf_nvmf_host_opts *ho)
{
	struct wharf_nvmf_host_disc_entry *e;
	size_t n;
	int rc = wharf_nvmf_host_discover(ho, &e, &n);

	if (rc) { /* the reason went to the log (stderr) */
		fprintf(stderr, "wharf-nvmf-perf: discover: %s\n",
			strerror(-rc));
		return 2;
	}
	printf("%zu entries\n", n);
	for (size_t i = 0; i < n; i++)
		printf("trtype %u adrfam %u subtype %u treq %u portid %u "
		       "cntlid 0x%04x asqsz %u traddr %s trsvcid %s subnqn %s"
		       " rdma_qptype %u rdma_prtype %u rdma_cms %u "
		       "rdma_pkey 0x%04x\n",
		       e[i].trtype, e[i].adrfam, e[i].subtype, e[i].treq,
		       e[i].portid, e[i].cntlid, e[i].asqsz, e[i].traddr,
		       e[i].trsvcid, e[i].subnqn, e[i].rdma_qptype,
		       e[i].rdma_prtype, e[i].rdma_cms, e[i].rdma_pkey);
	free(e);
	return 0;
}

int main(int argc, char **argv)
{
	struct perf_args a;
	struct wharf_ctx_opts co;
	struct wharf_nvmf_host_opts ho;
	struct wharf_ctx *ctx = NULL;
	struct wharf_cm *cm = NULL;
	struct wharf_nvmf_host *host = NULL;
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST}, *ai = NULL;
	char err[256];
	uint64_t t0;
	int rc;

	if (perf_parse(argc, argv, &a, err, sizeof(err))) {
		fprintf(stderr, "wharf-nvmf-perf: %s\n\n%s", err, perf_usage);
		return 2;
	}
	if (a.help) {
		fputs(perf_usage, stdout);
		return 0;
	}
	if (a.version) {
		cli_version(stdout, "wharf-nvmf-perf");
		return 0;
	}
	if (getaddrinfo(a.host.traddr, a.host.trsvcid, &hints, &ai)) {
		fprintf(stderr, "wharf-nvmf-perf: bad address %s port %s\n",
			a.host.traddr, a.host.trsvcid);
		return 2;
	}
	wharf_ctx_opts_init(&co);
	co.nshards = a.ncpus ? 0 : a.host.shards;
	co.cpus = a.ncpus ? a.cpus : NULL;
	co.ncpus = a.ncpus;
	co.poll_mode = (enum wharf_poll_mode)a.poll;
	interrupt_signals(true);
	rc = wharf_ctx_create(&co, &ctx);
	if (!rc)
		rc = wharf_cm_create(ctx, NULL, &cm);
	if (rc) {
		fprintf(stderr, "wharf-nvmf-perf: context: %s\n",
			strerror(-rc));
		rc = 2;
		goto out;
	}
	wharf_nvmf_host_opts_init(&ho);
	ho.cm = cm;
	ho.dst = ai->ai_addr;
	host_args_apply(&a.host, &ho);
	/* A slot per command (one spare entry), each with a bounce buffer
	 * of exactly one command's data. */
	ho.queue_size = a.qd + 1;
	ho.max_io_size = a.io_size;
	if (a.discover) {
		rc = discover(&ho);
		goto out;
	}
	t0 = wharf_now_ns();
	rc = wharf_nvmf_host_connect(&ho, &host);
	if (rc) { /* the reason went to the log (stderr) */
		fprintf(stderr, "wharf-nvmf-perf: connect: %s\n",
			strerror(-rc));
		rc = 2;
		goto out;
	}
	rc = run(&a, host, (double)(wharf_now_ns() - t0) / 1e6);
	wharf_nvmf_host_disconnect(host);
out:
	if (cm)
		wharf_cm_destroy(cm);
	if (ctx)
		wharf_ctx_destroy(ctx);
	freeaddrinfo(ai);
	return rc;
}
