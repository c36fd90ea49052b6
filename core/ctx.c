/*
 * Context life cycle: options, placement, arenas, shard set-up, thread
 * start-up and the shutdown protocol.
 *
 * Shutdown: `closing` makes every later send fail; each shard thread, told
 * to stop, runs what is left in its ring and lanes and exits.  A shard may still have
 * accepted a message from another shard after its last drain, so once every
 * thread is joined the destroying thread drains each ring one final time:
 * every accepted message runs exactly once.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/opts.h"
#include "core/shard.h"

#define DEFAULT_QUEUE_DEPTH 4096
#define MAX_QUEUE_DEPTH	    (1u << 24)
#define DEFAULT_LANE_DEPTH  1024
#define DEFAULT_SPIN_US	    50

void wharf_ctx_opts_init(struct wharf_ctx_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
}

static int check_opts(struct wharf_ctx_opts *opts)
{
	unsigned depth = opts->queue_depth;

	if (!depth)
		opts->queue_depth = depth = DEFAULT_QUEUE_DEPTH;
	if (depth < 2 || depth > MAX_QUEUE_DEPTH || (depth & (depth - 1)))
		return -EINVAL;
	depth = opts->lane_depth;
	if (!depth)
		opts->lane_depth = depth = DEFAULT_LANE_DEPTH;
	if (depth < 2 || depth > MAX_QUEUE_DEPTH || (depth & (depth - 1)))
		return -EINVAL;
	if (!opts->adaptive_spin_us)
		opts->adaptive_spin_us = DEFAULT_SPIN_US;
	switch (opts->poll_mode) {
	case WHARF_POLL_EVENT:
	case WHARF_POLL_BUSY:
	case WHARF_POLL_ADAPTIVE:
		break;
	default:
		return -EINVAL;
	}
	if ((unsigned)opts->log_level > WHARF_LOG_DEBUG)
		return -EINVAL;
	if (opts->cpus &&
	    (!opts->ncpus || (opts->nshards && opts->nshards != opts->ncpus)))
		return -EINVAL;
	if (!opts->cpus && opts->ncpus)
		return -EINVAL;
	return 0;
}

/* Fills ctx->nshards and returns the CPU of each shard (caller frees). */
static int plan_cpus(struct wharf_ctx *ctx, const struct wharf_ctx_opts *opts,
		     int **cpus_out)
{
	uint64_t local = 0;
	int *cpus;
	int err;

	if (opts->cpus) {
		for (unsigned i = 0; i < opts->ncpus; i++)
			if (wharf_numa_cpu_node(ctx->numa, opts->cpus[i]) < 0)
				return -EINVAL;
		ctx->nshards = opts->ncpus;
	} else {
		if (opts->device) {
			err = wharf_numa_device_nodes(ctx->numa, opts->device,
						      &local);
			if (err)
				return err;
			if (local == wharf_numa_all_nodes(ctx->numa))
				local = 0;
		}
		ctx->nshards =
			opts->nshards
				? opts->nshards
				: wharf_numa_default_shards(ctx->numa, local);
	}
	cpus = calloc(ctx->nshards, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	if (opts->cpus) {
		for (unsigned i = 0; i < ctx->nshards; i++)
			cpus[i] = opts->cpus[i];
	} else {
		err = wharf_numa_place_shards(ctx->numa, local, ctx->nshards,
					      cpus);
		if (err) {
			free(cpus);
			return err;
		}
	}
	*cpus_out = cpus;
	return 0;
}

static int shard_create(struct wharf_ctx *ctx, unsigned index, int cpu)
{
	unsigned node = (unsigned)wharf_numa_cpu_node(ctx->numa, cpu);
	struct wharf_numa_arena *arena;
	struct wharf_shard *shard;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	void *slots;
	int err;

	if (!ctx->arenas[node]) {
		err = wharf_numa_arena_create(ctx->numa, node,
					      &ctx->arenas[node]);
		if (err)
			return err;
	}
	arena = ctx->arenas[node];
	shard = wharf_numa_alloc(arena, sizeof(*shard), 64, true);
	if (!shard)
		return -ENOMEM;
	slots = wharf_numa_alloc(
		arena, wcore_ring_slots_size(ctx->opts.queue_depth), 64, false);
	if (!slots) {
		wharf_numa_free(arena, shard);
		return -ENOMEM;
	}
	wcore_ring_init(&shard->ring, slots, ctx->opts.queue_depth);
	atomic_init(&shard->adopt, NULL);
	shard->ctx = ctx;
	shard->never_sleeps =
		!ctx->opts.app_driven && ctx->opts.poll_mode == WHARF_POLL_BUSY;
	shard->index = index;
	shard->cpu = cpu;
	shard->node = node;
	shard->arena = arena;
	shard->state = WHARF_SHARD_NEW;
	shard->epfd = -1;
	shard->evfd = -1;
	wcore_heap_init(&shard->timers);
	wcore_list_init(&shard->timer_list);
	ctx->shards[index] = shard;

	err = wcore_outbox_init(&shard->out, ctx->nshards);
	if (err)
		return err;
	shard->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (shard->epfd < 0)
		return -errno;
	shard->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (shard->evfd < 0)
		return -errno;
	if (epoll_ctl(shard->epfd, EPOLL_CTL_ADD, shard->evfd, &ev))
		return -errno;
	if (ctx->opts.app_driven)
		shard->state = WHARF_SHARD_RUNNING;
	return 0;
}

static void shard_free(struct wharf_shard *shard)
{
	struct wharf_numa_arena *arena = shard->arena;

	wcore_shard_free_timers(shard);
	wcore_shard_free_watches(shard);
	wcore_shard_free_lanes(shard);
	if (shard->evfd >= 0)
		close(shard->evfd);
	if (shard->epfd >= 0)
		close(shard->epfd);
	wharf_numa_free(arena, shard->ring.slots);
	wharf_numa_free(arena, shard);
}

static int start_threads(struct wharf_ctx *ctx)
{
	int err = 0;

	pthread_mutex_lock(&ctx->start_lock);
	for (unsigned i = 0; i < ctx->nshards; i++) {
		struct wharf_shard *shard = ctx->shards[i];

		err = -pthread_create(&shard->thread, NULL, wcore_shard_thread,
				      shard);
		if (err)
			break;
		shard->state = WHARF_SHARD_FAILED; /* until it reports */
		ctx->start_pending++;
	}
	while (ctx->start_pending)
		pthread_cond_wait(&ctx->start_cond, &ctx->start_lock);
	for (unsigned i = 0; i < ctx->nshards && !err; i++)
		err = ctx->shards[i]->start_err;
	pthread_mutex_unlock(&ctx->start_lock);
	return err;
}

int wharf_ctx_create(const struct wharf_ctx_opts *opts_in,
		     struct wharf_ctx **out)
{
	struct wharf_ctx_opts opts;
	struct wharf_ctx *ctx;
	int *cpus = NULL;
	int err;

	if (!out)
		return -EINVAL;
	if (wharf_shard_current())
		return -EDEADLK;
	err = wbase_opts_copy(&opts, sizeof(opts), opts_in);
	if (err)
		return err;
	err = check_opts(&opts);
	if (err)
		return err;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->opts = opts;
	ctx->opts.cpus = NULL;
	ctx->opts.device = NULL;
	pthread_mutex_init(&ctx->start_lock, NULL);
	pthread_cond_init(&ctx->start_cond, NULL);

	err = wharf_numa_open(NULL, &ctx->numa);
	if (err)
		goto fail;
	err = plan_cpus(ctx, &opts, &cpus);
	if (err)
		goto fail;
	ctx->arenas =
		calloc(wharf_numa_node_count(ctx->numa), sizeof(*ctx->arenas));
	ctx->shards = calloc(ctx->nshards, sizeof(*ctx->shards));
	if (!ctx->arenas || !ctx->shards) {
		err = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < ctx->nshards && !err; i++)
		err = shard_create(ctx, i, cpus[i]);
	if (!err && !opts.app_driven)
		err = start_threads(ctx);
	if (err)
		goto fail;
	free(cpus);
	wharf_ctx_log(ctx, WHARF_LOG_INFO, "%u shards, %s", ctx->nshards,
		      opts.app_driven ? "app-driven" : "threaded");
	*out = ctx;
	return 0;
fail:
	free(cpus);
	wharf_ctx_log(ctx, WHARF_LOG_ERROR, "context creation failed: %d", err);
	wharf_ctx_destroy(ctx);
	return err;
}

static void stop_and_join(struct wharf_ctx *ctx)
{
	for (unsigned i = 0; i < ctx->nshards; i++) {
		struct wharf_shard *shard = ctx->shards[i];

		if (!shard || shard->state == WHARF_SHARD_NEW)
			continue;
		atomic_store_explicit(&shard->stop, true, memory_order_seq_cst);
		wcore_shard_kick(shard);
	}
	for (unsigned i = 0; i < ctx->nshards; i++) {
		struct wharf_shard *shard = ctx->shards[i];

		if (!shard || shard->state == WHARF_SHARD_NEW)
			continue;
		pthread_join(shard->thread, NULL);
		shard->state = WHARF_SHARD_EXITED;
	}
}

static void final_drain(struct wharf_shard *shard)
{
	wcore_shard_set_current(shard);
	while (wcore_shard_run_msgs(shard, WHARF_LOOP_BUDGET))
		;
	wcore_shard_sweep(shard);
	wcore_shard_set_current(NULL);
}

int wharf_ctx_destroy(struct wharf_ctx *ctx)
{
	struct wharf_shard *current = wharf_shard_current();

	if (!ctx)
		return 0;
	if (current && current->ctx == ctx)
		return -EDEADLK;
	if (atomic_load_explicit(&ctx->senders, memory_order_acquire)) {
		wharf_ctx_log(ctx, WHARF_LOG_ERROR,
			      "destroy refused: %u senders still registered",
			      atomic_load_explicit(&ctx->senders,
						   memory_order_relaxed));
		return -EBUSY;
	}
	atomic_store_explicit(&ctx->closing, true, memory_order_seq_cst);
	if (!ctx->opts.app_driven)
		stop_and_join(ctx);
	for (unsigned i = 0; i < ctx->nshards; i++)
		if (ctx->shards && ctx->shards[i])
			final_drain(ctx->shards[i]);
	for (unsigned i = 0; i < ctx->nshards; i++)
		if (ctx->shards && ctx->shards[i])
			shard_free(ctx->shards[i]);
	for (unsigned n = 0;
	     ctx->arenas && n < wharf_numa_node_count(ctx->numa); n++) {
		size_t live;

		if (!ctx->arenas[n])
			continue;
		live = wharf_numa_arena_live(ctx->arenas[n]);
		if (live)
			wharf_ctx_log(ctx, WHARF_LOG_ERROR,
				      "node %u arena: %zu objects leaked", n,
				      live);
		wharf_numa_arena_destroy(ctx->arenas[n]);
	}
	free(ctx->arenas);
	free(ctx->shards);
	wharf_numa_close(ctx->numa);
	pthread_cond_destroy(&ctx->start_cond);
	pthread_mutex_destroy(&ctx->start_lock);
	free(ctx);
	return 0;
}

unsigned wharf_ctx_shard_count(const struct wharf_ctx *ctx)
{
	return ctx->nshards;
}

struct wharf_shard *wharf_ctx_shard(const struct wharf_ctx *ctx, unsigned index)
{
	return index < ctx->nshards ? ctx->shards[index] : NULL;
}

struct wharf_numa *wharf_ctx_numa(const struct wharf_ctx *ctx)
{
	return ctx->numa;
}

struct wharf_ctx *wharf_shard_ctx(const struct wharf_shard *shard)
{
	return shard->ctx;
}

unsigned wharf_shard_index(const struct wharf_shard *shard)
{
	return shard->index;
}

int wharf_shard_cpu(const struct wharf_shard *shard)
{
	return shard->cpu;
}

unsigned wharf_shard_node(const struct wharf_shard *shard)
{
	return shard->node;
}

struct wharf_numa_arena *wharf_shard_arena(const struct wharf_shard *shard)
{
	return shard->arena;
}
