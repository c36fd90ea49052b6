/*
 * msg_bench: cross-shard message throughput and one-way latency of
 * wharf_shard_send() against a mutex + condition-variable queue, in the
 * same run, same producers, same consumer CPUs, same queue depth.
 *
 * Throughput: P producer threads send to K consumers round-robin, either a
 * fixed number of messages each or for a fixed duration; the clock stops
 * when the consumers have run every message sent.  A full queue makes a
 * wharf producer back off and retry (see wharf_send) and a baseline
 * producer wait on its "not full" condition.
 *
 * Latency: one producer sends a timestamped message to consumer 0 and waits
 * for it to run before sending the next; the consumer records now - stamp
 * (CLOCK_MONOTONIC is the same clock on every CPU).  This is the cost of a
 * hand-off including the consumer's wake-up, without queueing delay.
 *
 * The baseline consumer is a thread pinned to the CPU of the matching shard;
 * by default it takes one message per lock hold, the textbook queue;
 * --baseline-batch lets it take up to N (kinder to the baseline).
 * Producers are pinned to the CPUs no consumer uses, when there are any.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wharf/core.h>

#include "cli/cli.h"
#include "cli/json.h"

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() atomic_signal_fence(memory_order_seq_cst)
#endif

#define MAX_CONSUMERS  64
#define MAX_PRODUCERS  64
#define MAX_BASE_BATCH 256
#define MAX_ROUNDS     100

struct config {
	unsigned producers;
	unsigned consumers;
	uint64_t messages;    /* per producer; 0 = run for `duration` */
	double duration;      /* seconds */
	unsigned samples;     /* latency samples */
	unsigned gap_us;      /* pause between latency samples */
	unsigned queue_depth; /* both queues */
	unsigned rounds;      /* alternating throughput rounds */
	unsigned base_batch;  /* messages a baseline consumer takes per lock */
	unsigned batch;	      /* lane producers publish every `batch` */
	bool grid; /* P x K for P, K in 1, 2, 4, ... up to the CPUs */
	enum wharf_poll_mode mode;
	const char *mode_name;
	const char *json; /* --json FILE, or NULL */
};

/* ---- what every consumer does with a message -------------------------- */

struct sink {
	alignas(64) _Atomic uint64_t ran; /* written by its consumer only */
};

static struct sink sinks[MAX_CONSUMERS];
static uint64_t *lat_samples;
static _Atomic uint64_t lat_acked;

static void count_msg(unsigned consumer)
{
	_Atomic uint64_t *ran = &sinks[consumer].ran;

	atomic_store_explicit(
		ran, atomic_load_explicit(ran, memory_order_relaxed) + 1,
		memory_order_relaxed);
}

static void latency_msg(uint64_t stamp)
{
	uint64_t i = atomic_load_explicit(&lat_acked, memory_order_relaxed);

	lat_samples[i] = wharf_now_ns() - stamp;
	atomic_store_explicit(&lat_acked, i + 1, memory_order_release);
}

static uint64_t total_ran(unsigned consumers)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < consumers; i++)
		n += atomic_load_explicit(&sinks[i].ran, memory_order_relaxed);
	return n;
}

static void pin_self(int cpu);

/* ---- the two queues behind one interface ------------------------------ */

struct queue_ops {
	const char *name;
	/* Per producer thread: its own state (NULL hooks: none). */
	int (*open)(void *impl, const struct config *cfg, void **local);
	/* Publishes what the producer holds and frees its state. */
	void (*close)(void *local);
	/* Sends message kind `latency` (arg = stamp) or a counted one. */
	void (*send)(void *impl, void *local, unsigned consumer, bool latency,
		     uint64_t arg);
};

/* wharf */

static void wharf_count_fn(struct wharf_shard *shard, void *arg)
{
	(void)arg;
	count_msg(wharf_shard_index(shard));
}

static void wharf_latency_fn(struct wharf_shard *shard, void *arg)
{
	(void)shard;
	latency_msg((uint64_t)(uintptr_t)arg);
}

/*
 * Back-pressure: a full queue means the consumer is behind, and retrying at
 * once only steals its cache lines (and, on a shared CPU, its time).  Back
 * off exponentially with pause instructions, then yield the CPU, the way
 * an application would; the baseline's producers sleep on "not full".
 */
static void backoff(unsigned *spins)
{
	if (*spins > 4096) {
		sched_yield();
		return;
	}
	for (unsigned i = 0; i < *spins; i++)
		cpu_relax();
	*spins *= 2;
}

/* wharf_shard_send from a plain thread: the shard's shared MPSC queue. */
static void wharf_send(void *impl, void *local, unsigned consumer, bool latency,
		       uint64_t arg)
{
	struct wharf_shard *shard = wharf_ctx_shard(impl, consumer);
	wharf_msg_fn fn = latency ? wharf_latency_fn : wharf_count_fn;
	unsigned spins = 16;

	(void)local;
	while (wharf_shard_send(shard, fn, (void *)(uintptr_t)arg) == -EAGAIN)
		backoff(&spins);
}

static const struct queue_ops wharf_ops = {"wharf-shared", NULL, NULL,
					   wharf_send};

/*
 * A registered sender: the producer's own lane to each shard, published
 * every `batch` messages (WHARF_SEND_MORE in between) and when it stops.
 */
struct lane_producer {
	struct wharf_sender *sender;
	unsigned batch, held;
};

static int lane_open(void *impl, const struct config *cfg, void **local)
{
	struct lane_producer *lp = calloc(1, sizeof(*lp));
	int err;

	if (!lp)
		return -ENOMEM;
	err = wharf_sender_create(impl, &lp->sender);
	if (err) {
		free(lp);
		return err;
	}
	lp->batch = cfg->batch;
	*local = lp;
	return 0;
}

static void lane_close(void *local)
{
	struct lane_producer *lp = local;

	wharf_sender_destroy(lp->sender);
	free(lp);
}

static void lane_send(void *impl, void *local, unsigned consumer, bool latency,
		      uint64_t arg)
{
	struct lane_producer *lp = local;
	struct wharf_shard *shard = wharf_ctx_shard(impl, consumer);
	wharf_msg_fn fn = latency ? wharf_latency_fn : wharf_count_fn;
	/* A latency sample is never held back. */
	unsigned flags =
		!latency && ++lp->held < lp->batch ? WHARF_SEND_MORE : 0;
	unsigned spins = 16;

	while (wharf_sender_send(lp->sender, shard, fn, (void *)(uintptr_t)arg,
				 flags) == -EAGAIN)
		backoff(&spins);
	if (!flags)
		lp->held = 0;
}

static const struct queue_ops lane_ops = {"wharf-lane", lane_open, lane_close,
					  lane_send};

/* mutex + condition variable */

struct base_msg {
	bool latency;
	uint64_t arg;
};

struct base_queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
	struct base_msg *slots;
	unsigned depth, head, len;
	unsigned batch;
	bool stop;
	unsigned index;
	int cpu;
	pthread_t thread;
};

struct baseline {
	struct base_queue q[MAX_CONSUMERS];
	unsigned n;
};

static void *base_consumer(void *arg)
{
	struct base_queue *q = arg;
	struct base_msg batch[MAX_BASE_BATCH];

	pin_self(q->cpu);
	for (;;) {
		unsigned n = 0;

		pthread_mutex_lock(&q->lock);
		while (!q->len && !q->stop)
			pthread_cond_wait(&q->not_empty, &q->lock);
		if (!q->len && q->stop) {
			pthread_mutex_unlock(&q->lock);
			return NULL;
		}
		while (q->len && n < q->batch) {
			batch[n++] = q->slots[q->head];
			q->head = (q->head + 1) % q->depth;
			q->len--;
		}
		pthread_cond_broadcast(&q->not_full);
		pthread_mutex_unlock(&q->lock);
		for (unsigned i = 0; i < n; i++) {
			if (batch[i].latency)
				latency_msg(batch[i].arg);
			else
				count_msg(q->index);
		}
	}
}

static void base_send(void *impl, void *local, unsigned consumer, bool latency,
		      uint64_t arg)
{
	struct base_queue *q = &((struct baseline *)impl)->q[consumer];

	(void)local;
	pthread_mutex_lock(&q->lock);
	while (q->len == q->depth)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->slots[(q->head + q->len) % q->depth] =
		(struct base_msg){latency, arg};
	q->len++;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

static const struct queue_ops base_ops = {"mutex+condvar", NULL, NULL,
					  base_send};

static int baseline_start(struct baseline *b, const struct config *cfg,
			  const int *cpus)
{
	b->n = cfg->consumers;
	for (unsigned i = 0; i < b->n; i++) {
		struct base_queue *q = &b->q[i];

		*q = (struct base_queue){0}; /* reused from the last round */
		pthread_mutex_init(&q->lock, NULL);
		pthread_cond_init(&q->not_empty, NULL);
		pthread_cond_init(&q->not_full, NULL);
		q->slots = calloc(cfg->queue_depth, sizeof(*q->slots));
		if (!q->slots)
			return -ENOMEM;
		q->depth = cfg->queue_depth;
		q->batch = cfg->base_batch;
		q->index = i;
		q->cpu = cpus[i];
		if (pthread_create(&q->thread, NULL, base_consumer, q))
			return -EAGAIN;
	}
	return 0;
}

static void baseline_stop(struct baseline *b)
{
	for (unsigned i = 0; i < b->n; i++) {
		struct base_queue *q = &b->q[i];

		pthread_mutex_lock(&q->lock);
		q->stop = true;
		pthread_cond_signal(&q->not_empty);
		pthread_mutex_unlock(&q->lock);
		pthread_join(q->thread, NULL);
		free(q->slots);
		pthread_cond_destroy(&q->not_full);
		pthread_cond_destroy(&q->not_empty);
		pthread_mutex_destroy(&q->lock);
	}
}

/* ---- measurements ------------------------------------------------------ */

struct producer {
	const struct queue_ops *ops;
	void *impl;
	const struct config *cfg;
	unsigned id;
	int cpu; /* -1: not pinned */
	uint64_t deadline;
	uint64_t sent;
	int err; /* the queue refused the producer (open) */
	pthread_t thread;
};

/*
 * CPUs for producers: those no consumer uses, round-robin, so that
 * producers never preempt a consumer; none left = not pinned.
 */
static int producer_cpus[MAX_PRODUCERS];

static void plan_producer_cpus(const struct config *cfg, const int *cons)
{
	int free_cpus[CPU_SETSIZE], nfree = 0;
	cpu_set_t allowed;

	sched_getaffinity(0, sizeof(allowed), &allowed);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		bool used = false;

		for (unsigned i = 0; i < cfg->consumers; i++)
			used |= cons[i] == c;
		if (CPU_ISSET(c, &allowed) && !used)
			free_cpus[nfree++] = c;
	}
	for (unsigned i = 0; i < cfg->producers; i++)
		producer_cpus[i] = nfree ? free_cpus[i % nfree] : -1;
}

static void pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static _Atomic bool go;

static void *produce(void *arg)
{
	struct producer *p = arg;
	unsigned consumer = p->id % p->cfg->consumers;
	void *local = NULL;

	pin_self(p->cpu);
	if (p->ops->open)
		p->err = p->ops->open(p->impl, p->cfg, &local);
	while (!atomic_load_explicit(&go, memory_order_acquire))
		sched_yield();
	for (; !p->err;) {
		if (p->cfg->messages ? p->sent == p->cfg->messages
				     : (p->sent % 1024 == 0 &&
					wharf_now_ns() >= p->deadline))
			break;
		p->ops->send(p->impl, local, consumer, false, 0);
		p->sent++;
		if (++consumer == p->cfg->consumers)
			consumer = 0;
	}
	if (p->ops->close && !p->err)
		p->ops->close(local);
	return NULL;
}

struct result {
	uint64_t msgs;
	double secs;
	double p50_us, p99_us;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int measure_throughput(const struct queue_ops *ops, void *impl,
			      const struct config *cfg, struct result *res)
{
	struct producer prod[MAX_PRODUCERS];
	uint64_t start, sent = 0, last_report;
	uint64_t base = total_ran(cfg->consumers);

	atomic_store(&go, false);
	start = wharf_now_ns();
	for (unsigned i = 0; i < cfg->producers; i++) {
		prod[i] = (struct producer){
			.ops = ops,
			.impl = impl,
			.cfg = cfg,
			.id = i,
			.cpu = producer_cpus[i],
			.deadline = start + (uint64_t)(cfg->duration * 1e9),
		};
		pthread_create(&prod[i].thread, NULL, produce, &prod[i]);
	}
	start = wharf_now_ns();
	atomic_store_explicit(&go, true, memory_order_release);
	for (unsigned i = 0; i < cfg->producers; i++) {
		pthread_join(prod[i].thread, NULL);
		sent += prod[i].sent;
	}
	for (unsigned i = 0; i < cfg->producers; i++)
		if (prod[i].err) {
			fprintf(stderr, "%s: producer %u: %s\n", ops->name, i,
				strerror(-prod[i].err));
			return prod[i].err;
		}
	last_report = wharf_now_ns();
	while (total_ran(cfg->consumers) - base < sent) {
		sched_yield();
		if (wharf_now_ns() - last_report > 1000000000u) {
			last_report = wharf_now_ns();
			fprintf(stderr, "  %s: draining, %llu of %llu run\n",
				ops->name,
				(unsigned long long)(total_ran(cfg->consumers) -
						     base),
				(unsigned long long)sent);
		}
	}
	res->secs = (double)(wharf_now_ns() - start) / 1e9;
	res->msgs = sent;
	return 0;
}

static int measure_latency(const struct queue_ops *ops, void *impl,
			   const struct config *cfg, struct result *res)
{
	struct timespec gap = {0, (long)cfg->gap_us * 1000};
	void *local = NULL;
	int err;

	/* The sender runs where producers run: off the consumers' CPUs. */
	pin_self(producer_cpus[0]);
	if (ops->open) {
		err = ops->open(impl, cfg, &local);
		if (err)
			return err;
	}
	atomic_store(&lat_acked, 0);
	for (uint64_t i = 0; i < cfg->samples; i++) {
		/* Give the consumer time to fall asleep. */
		if (cfg->gap_us)
			nanosleep(&gap, NULL);
		ops->send(impl, local, 0, true, wharf_now_ns());
		/* Spin, yielding now and then to a consumer on our CPU. */
		for (unsigned spin = 1;
		     atomic_load_explicit(&lat_acked, memory_order_acquire) <=
		     i;
		     spin++)
			if (spin % 1024 == 0)
				sched_yield();
			else
				cpu_relax();
	}
	if (ops->close)
		ops->close(local);
	qsort(lat_samples, cfg->samples, sizeof(*lat_samples), cmp_u64);
	res->p50_us = (double)lat_samples[cfg->samples / 2] / 1e3;
	res->p99_us = (double)lat_samples[cfg->samples * 99 / 100] / 1e3;
	return 0;
}

static double median(double *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- command line ------------------------------------------------------ */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: msg_bench [options]\n"
		"Cross-shard message throughput and one-way latency of three "
		"queues,\n"
		"alternating rounds in one run: wharf-lane (each producer "
		"a registered\n"
		"wharf_sender: a lane of its own to every shard), "
		"wharf-shared\n"
		"(wharf_shard_send from a plain thread: the shard's shared "
		"queue) and a\n"
		"mutex + condition-variable queue.\n\n"
		"  -p, --producers N       producer threads (default 2)\n"
		"  -c, --consumers N       shards / baseline consumers "
		"(default 1)\n"
		"  -n, --messages N        messages per producer per round "
		"(default: run\n"
		"                          for --duration)\n"
		"  -d, --duration SECS     length of a throughput round "
		"(default 1)\n"
		"  -r, --rounds N          throughput rounds per queue, "
		"alternating; medians\n"
		"                          are compared (default 5)\n"
		"  -s, --samples N         latency samples (default 20000)\n"
		"  -g, --gap-us N          pause before each latency sample, "
		"so that the\n"
		"                          consumer sleeps and must be woken "
		"(default 0)\n"
		"  -q, --queue-depth N     slots per queue, power of two "
		"(default 4096)\n"
		"  -b, --baseline-batch N  messages the baseline consumer "
		"takes per lock\n"
		"                          hold, 1..256 (default 1: the "
		"textbook queue)\n"
		"  -B, --batch N           a lane producer publishes every N "
		"messages\n"
		"                          (WHARF_SEND_MORE between), 1..4096 "
		"(default 16)\n"
		"  -m, --mode MODE         shard poll mode: event, busy, "
		"adaptive\n"
		"                          (default event)\n"
		"      --grid              P x K for P and K in 1, 2, 4, ... "
		"up "
		"to the CPU\n"
		"                          count: throughput only, with the "
		"lane's scaling\n"
		"                          (aggregate / its 1 x 1 figure); "
		"-p and -c ignored\n"
		"      --json FILE         also write the results as JSON "
		"(- = stdout)\n"
		"  -h, --help              this text\n\n"
		"Progress goes to stderr; a table and a summary line to "
		"stdout.\n"
		"On a busy machine, `chrt -f 10 msg_bench ...` keeps other "
		"work from\n"
		"preempting the measured threads.\n");
}

/* A duration in seconds, (0, 3600]: 0, or -1 for anything else. */
static int parse_secs(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0 && v <= 3600))
		return -1;
	*out = v;
	return 0;
}

static int parse(int argc, char **argv, struct config *cfg)
{
	static const struct option longopts[] = {
		{"producers", required_argument, NULL, 'p'},
		{"consumers", required_argument, NULL, 'c'},
		{"messages", required_argument, NULL, 'n'},
		{"duration", required_argument, NULL, 'd'},
		{"samples", required_argument, NULL, 's'},
		{"gap-us", required_argument, NULL, 'g'},
		{"rounds", required_argument, NULL, 'r'},
		{"baseline-batch", required_argument, NULL, 'b'},
		{"queue-depth", required_argument, NULL, 'q'},
		{"mode", required_argument, NULL, 'm'},
		{"batch", required_argument, NULL, 'B'},
		{"grid", no_argument, NULL, 'G'},
		{"json", required_argument, NULL, 'J'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;

	*cfg = (struct config){
		.producers = 2,
		.consumers = 1,
		.duration = 1.0,
		.samples = 20000,
		.queue_depth = 4096,
		.rounds = 5,
		.base_batch = 1,
		.batch = 16,
		.mode = WHARF_POLL_EVENT,
		.mode_name = "event",
	};
	while ((c = getopt_long(argc, argv, "p:c:n:d:s:g:r:b:q:m:B:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_u32(optarg, 0, UINT32_MAX, &cfg->producers))
				return -1;
			break;
		case 'c':
			if (cli_u32(optarg, 0, UINT32_MAX, &cfg->consumers))
				return -1;
			break;
		case 'n':
			if (cli_u64(optarg, 0, UINT64_MAX, &v))
				return -1;
			cfg->messages = v;
			break;
		case 'd':
			if (parse_secs(optarg, &cfg->duration))
				return -1;
			break;
		case 's':
			if (cli_u32(optarg, 0, UINT32_MAX, &cfg->samples))
				return -1;
			break;
		case 'g':
			if (cli_u32(optarg, 0, UINT32_MAX, &cfg->gap_us))
				return -1;
			break;
		case 'r':
			if (cli_u32(optarg, 0, UINT32_MAX, &cfg->rounds))
				return -1;
			break;
		case 'b':
			if (cli_u32(optarg, 0, UINT32_MAX, &cfg->base_batch))
				return -1;
			break;
		case 'q':
			if (cli_u32(optarg, 0, UINT32_MAX, &cfg->queue_depth))
				return -1;
			break;
		case 'm':
			cfg->mode_name = optarg;
			if (!strcmp(optarg, "event"))
				cfg->mode = WHARF_POLL_EVENT;
			else if (!strcmp(optarg, "busy"))
				cfg->mode = WHARF_POLL_BUSY;
			else if (!strcmp(optarg, "adaptive"))
				cfg->mode = WHARF_POLL_ADAPTIVE;
			else
				return -1;
			break;
		case 'B':
			if (cli_u32(optarg, 1, 4096, &cfg->batch))
				return -1;
			break;
		case 'G':
			cfg->grid = true;
			break;
		case 'J':
			cfg->json = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			cli_version(stdout, "msg_bench");
			exit(0);
		default:
			return -1;
		}
	}
	if (optind != argc || !cfg->producers ||
	    cfg->producers > MAX_PRODUCERS || !cfg->consumers ||
	    cfg->consumers > MAX_CONSUMERS || cfg->duration <= 0 ||
	    !cfg->samples || !cfg->rounds || cfg->rounds > MAX_ROUNDS ||
	    !cfg->base_batch || cfg->base_batch > MAX_BASE_BATCH)
		return -1;
	return 0;
}

static int wharf_open(const struct config *cfg, struct wharf_ctx **ctx)
{
	struct wharf_ctx_opts opts;
	int err;

	wharf_ctx_opts_init(&opts);
	opts.nshards = cfg->consumers;
	opts.poll_mode = cfg->mode;
	opts.queue_depth = cfg->queue_depth;
	opts.lane_depth = cfg->queue_depth;
	err = wharf_ctx_create(&opts, ctx);
	if (err)
		fprintf(stderr, "wharf_ctx_create: %s\n", strerror(-err));
	return err;
}

static void wharf_report(struct wharf_ctx *ctx, const struct config *cfg,
			 const char *name)
{
	for (unsigned i = 0; i < cfg->consumers; i++) {
		struct wharf_shard_stats st = {.size = sizeof(st)};

		wharf_shard_stats(wharf_ctx_shard(ctx, i), &st);
		fprintf(stderr,
			"  %s shard %u: %llu loops, %llu sleeps, %llu "
			"wake-ups, %llu full refusals\n",
			name, i, (unsigned long long)st.loops,
			(unsigned long long)st.sleeps,
			(unsigned long long)st.wakeups,
			(unsigned long long)st.send_full);
	}
}

enum { Q_LANE, Q_SHARED, Q_BASE, NQUEUES };

struct summary {
	double mps[MAX_ROUNDS]; /* Mmsg/s per round */
	double median, min, max;
	struct result lat;
};

static void summarize(struct summary *s, unsigned rounds)
{
	s->min = s->max = s->mps[0];
	for (unsigned i = 1; i < rounds; i++) {
		s->min = s->mps[i] < s->min ? s->mps[i] : s->min;
		s->max = s->mps[i] > s->max ? s->mps[i] : s->max;
	}
	s->median = median(s->mps, rounds);
}

static const struct queue_ops *const queues[NQUEUES] = {
	[Q_LANE] = &lane_ops,
	[Q_SHARED] = &wharf_ops,
	[Q_BASE] = &base_ops,
};

/* One throughput round of queue @q with @cfg's producers and consumers. */
static int run_round(unsigned q, const struct config *cfg, double *mps)
{
	static struct baseline base;
	struct wharf_ctx *ctx = NULL;
	int cpus[MAX_CONSUMERS];
	struct result r;
	int err;

	if (wharf_open(cfg, &ctx))
		return -1;
	for (unsigned i = 0; i < cfg->consumers; i++)
		cpus[i] = wharf_shard_cpu(wharf_ctx_shard(ctx, i));
	plan_producer_cpus(cfg, cpus);
	if (q == Q_BASE) {
		/* Same CPUs as the shards would have had. */
		wharf_ctx_destroy(ctx);
		if (baseline_start(&base, cfg, cpus))
			return -1;
		err = measure_throughput(&base_ops, &base, cfg, &r);
		baseline_stop(&base);
	} else {
		err = measure_throughput(queues[q], ctx, cfg, &r);
		if (!cfg->grid)
			wharf_report(ctx, cfg, queues[q]->name);
		wharf_ctx_destroy(ctx);
	}
	if (err)
		return -1;
	*mps = (double)r.msgs / r.secs / 1e6;
	return 0;
}

/* Rounds of every queue, alternating so that noise hits all alike. */
static int run_rounds(const struct config *cfg, struct summary *sum)
{
	for (unsigned round = 0; round < cfg->rounds; round++)
		for (unsigned q = 0; q < NQUEUES; q++) {
			if (run_round(q, cfg, &sum[q].mps[round]))
				return -1;
			fprintf(stderr, "%ux%u round %u: %s %.2f Mmsg/s\n",
				cfg->producers, cfg->consumers, round + 1,
				queues[q]->name, sum[q].mps[round]);
		}
	for (unsigned q = 0; q < NQUEUES; q++)
		summarize(&sum[q], cfg->rounds);
	return 0;
}

static int run_latency(const struct config *cfg, struct summary *sum)
{
	static struct baseline base;
	struct wharf_ctx *ctx;
	int cpus[MAX_CONSUMERS];

	fprintf(stderr, "latency: %u samples each...\n", cfg->samples);
	for (unsigned q = Q_LANE; q <= Q_SHARED; q++) {
		if (wharf_open(cfg, &ctx))
			return -1;
		for (unsigned i = 0; i < cfg->consumers; i++)
			cpus[i] = wharf_shard_cpu(wharf_ctx_shard(ctx, i));
		plan_producer_cpus(cfg, cpus);
		if (measure_latency(queues[q], ctx, cfg, &sum[q].lat))
			return -1;
		wharf_ctx_destroy(ctx);
	}
	if (baseline_start(&base, cfg, cpus))
		return -1;
	measure_latency(&base_ops, &base, cfg, &sum[Q_BASE].lat);
	baseline_stop(&base);
	return 0;
}

static void row(const char *name, const char *mode, const struct config *cfg,
		const struct summary *s)
{
	printf("%-16s %-9s %9u %9u %6u %10.2f %8.2f %8.2f %9.2f %9.2f\n", name,
	       mode, cfg->producers, cfg->consumers, cfg->rounds, s->median,
	       s->min, s->max, s->lat.p50_us, s->lat.p99_us);
}

/* ---- the grid ----------------------------------------------------------- */

#define MAX_GRID 64

struct grid_cell {
	unsigned p, k;
	struct summary sum[NQUEUES];
};

struct grid {
	struct grid_cell cells[MAX_GRID];
	unsigned n;
	double base_1x1; /* the lane's 1 x 1 median */
};

/* 1, 2, 4, ... below @max, then @max itself. */
static unsigned grid_axis(unsigned max, unsigned *v)
{
	unsigned n = 0;

	for (unsigned x = 1; x < max && n < 16; x *= 2)
		v[n++] = x;
	v[n++] = max;
	return n;
}

static unsigned cpu_count(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return (unsigned)CPU_COUNT(&set);
}

static int run_grid(const struct config *base_cfg, struct grid *g)
{
	unsigned max = cpu_count(), axis[17], n;

	if (max > MAX_PRODUCERS)
		max = MAX_PRODUCERS;
	if (max > MAX_CONSUMERS)
		max = MAX_CONSUMERS;
	n = grid_axis(max, axis);

	g->n = 0;
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < n && g->n < MAX_GRID; j++) {
			struct config cfg = *base_cfg;
			struct grid_cell *c = &g->cells[g->n];

			cfg.producers = axis[i];
			cfg.consumers = axis[j];
			c->p = axis[i];
			c->k = axis[j];
			if (run_rounds(&cfg, c->sum))
				return -1;
			g->n++;
		}
	g->base_1x1 = g->cells[0].sum[Q_LANE].median;
	return 0;
}

static void print_grid(const struct grid *g)
{
	printf("%-8s %11s %13s %14s %13s %8s\n", "P x K", "lane Mmsg/s",
	       "shared Mmsg/s", "mutex+condvar", "lane/consumer", "scaling");
	for (unsigned i = 0; i < g->n; i++) {
		const struct grid_cell *c = &g->cells[i];
		char pk[16];

		snprintf(pk, sizeof(pk), "%u x %u", c->p, c->k);
		printf("%-8s %11.2f %13.2f %14.2f %13.2f %7.2fx\n", pk,
		       c->sum[Q_LANE].median, c->sum[Q_SHARED].median,
		       c->sum[Q_BASE].median, c->sum[Q_LANE].median / c->k,
		       c->sum[Q_LANE].median / g->base_1x1);
	}
}

/* ---- JSON ---------------------------------------------------------------- */

struct doc {
	const struct config *cfg;
	const struct summary *sum; /* [NQUEUES], or NULL for a grid */
	const struct grid *grid;
	const char *base_name;
};

static void json_rounds(struct cli_json *j, const struct config *cfg,
			const struct summary *s)
{
	cli_json_arr(j, "mmsg_s_rounds");
	for (unsigned i = 0; i < cfg->rounds; i++)
		cli_json_num(j, NULL, s->mps[i]);
	cli_json_end(j);
	cli_json_num(j, "mmsg_s_median", s->median);
	cli_json_num(j, "mmsg_s_min", s->min);
	cli_json_num(j, "mmsg_s_max", s->max);
}

static void json_queue(struct cli_json *j, const char *name, const char *mode,
		       const struct config *cfg, const struct summary *s)
{
	cli_json_obj(j, NULL);
	cli_json_str(j, "queue", name);
	cli_json_str(j, "mode", mode);
	json_rounds(j, cfg, s);
	cli_json_num(j, "latency_p50_us", s->lat.p50_us);
	cli_json_num(j, "latency_p99_us", s->lat.p99_us);
	cli_json_end(j);
}

static void json_grid(struct cli_json *j, const struct doc *d)
{
	cli_json_arr(j, "grid");
	for (unsigned i = 0; i < d->grid->n; i++) {
		const struct grid_cell *c = &d->grid->cells[i];

		cli_json_obj(j, NULL);
		cli_json_u64(j, "producers", c->p);
		cli_json_u64(j, "consumers", c->k);
		for (unsigned q = 0; q < NQUEUES; q++) {
			cli_json_obj(j, queues[q]->name);
			json_rounds(j, d->cfg, &c->sum[q]);
			cli_json_end(j);
		}
		cli_json_num(j, "lane_per_consumer",
			     c->sum[Q_LANE].median / c->k);
		cli_json_num(j, "lane_scaling",
			     c->sum[Q_LANE].median / d->grid->base_1x1);
		cli_json_end(j);
	}
	cli_json_end(j);
}

static void json_doc(struct cli_json *j, const void *arg)
{
	const struct doc *d = arg;

	cli_json_obj(j, NULL);
	cli_json_str(j, "tool", "msg_bench");
	cli_json_str(j, "mode", d->cfg->mode_name);
	cli_json_u64(j, "rounds", d->cfg->rounds);
	cli_json_u64(j, "messages", d->cfg->messages);
	cli_json_num(j, "duration_s", d->cfg->duration);
	cli_json_u64(j, "queue_depth", d->cfg->queue_depth);
	cli_json_u64(j, "lane_batch", d->cfg->batch);
	cli_json_u64(j, "cpus", cpu_count());
	if (d->grid) {
		json_grid(j, d);
	} else {
		cli_json_u64(j, "producers", d->cfg->producers);
		cli_json_u64(j, "consumers", d->cfg->consumers);
		cli_json_u64(j, "samples", d->cfg->samples);
		cli_json_arr(j, "queues");
		json_queue(j, lane_ops.name, d->cfg->mode_name, d->cfg,
			   &d->sum[Q_LANE]);
		json_queue(j, wharf_ops.name, d->cfg->mode_name, d->cfg,
			   &d->sum[Q_SHARED]);
		json_queue(j, d->base_name, "condvar", d->cfg, &d->sum[Q_BASE]);
		cli_json_end(j);
		cli_json_num(j, "lane_vs_shared",
			     d->sum[Q_LANE].median / d->sum[Q_SHARED].median);
		cli_json_num(j, "throughput_ratio",
			     d->sum[Q_LANE].median / d->sum[Q_BASE].median);
	}
	cli_json_end(j);
}

int main(int argc, char **argv)
{
	static struct summary sum[NQUEUES];
	static struct grid grid;
	struct config cfg;
	char base_name[32];
	struct doc d;

	if (parse(argc, argv, &cfg)) {
		usage(stderr);
		return 2;
	}
	lat_samples = calloc(cfg.samples, sizeof(*lat_samples));
	if (!lat_samples)
		return 1;
	snprintf(base_name, sizeof(base_name), "mutex+condvar/%u",
		 cfg.base_batch);
	d = (struct doc){&cfg, sum, NULL, base_name};

	if (cfg.grid) {
		if (run_grid(&cfg, &grid))
			return 1;
		print_grid(&grid);
		d.sum = NULL;
		d.grid = &grid;
	} else {
		if (run_rounds(&cfg, sum) || run_latency(&cfg, sum))
			return 1;
		printf("%-16s %-9s %9s %9s %6s %10s %8s %8s %9s %9s\n", "queue",
		       "mode", "producers", "consumers", "rounds", "Mmsg/s_med",
		       "min", "max", "p50_us", "p99_us");
		row(lane_ops.name, cfg.mode_name, &cfg, &sum[Q_LANE]);
		row(wharf_ops.name, cfg.mode_name, &cfg, &sum[Q_SHARED]);
		row(base_name, "condvar", &cfg, &sum[Q_BASE]);
		printf("summary: wharf-lane %.2f Mmsg/s, wharf-shared %.2f "
		       "Mmsg/s (lane %.2fx), %s %.2f Mmsg/s (lane %.2fx); "
		       "medians of %u rounds; one-way latency p50 %.2f / "
		       "%.2f / %.2f us\n",
		       sum[Q_LANE].median, sum[Q_SHARED].median,
		       sum[Q_LANE].median / sum[Q_SHARED].median, base_name,
		       sum[Q_BASE].median,
		       sum[Q_LANE].median / sum[Q_BASE].median, cfg.rounds,
		       sum[Q_LANE].lat.p50_us, sum[Q_SHARED].lat.p50_us,
		       sum[Q_BASE].lat.p50_us);
	}
	free(lat_samples);
	if (cfg.json) {
		int err =
			cli_json_write(cfg.json, CLI_JSON_PRETTY, json_doc, &d);

		if (err) {
			fprintf(stderr, "msg_bench: %s: %s\n", cfg.json,
				strerror(-err));
			return 1;
		}
	}
	return 0;
}
