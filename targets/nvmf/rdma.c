/*
 * targets/nvmf/rdma.c - the RDMA binding's setup and teardown: context,
 * cm, core target, listeners, per-shard state (sweep / keep-alive timer,
 * data buffer pool), counters. Teardown order: listeners, every queue
 * ended on its shard, wait for their work requests, per-shard resources,
 * cm, target, context.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "targets/nvmf/rdma_int.h"
#include "targets/nvmf/rdma_place.h"

#define DRAIN_WAIT_MS 30000

static uint64_t ops_now_ms(void *arg)
{
	(void)arg;
	return wharf_now_ms();
}

void nr_log(const struct nvmf_rdma *r, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!r->opts.verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "wharf-nvmf-tgt: %s\n", line);
}

/* ------------------------------------------------------------------ */
/* Running a function on every shard and waiting for all of them       */
/* ------------------------------------------------------------------ */

struct on_shards_msg {
	struct nvmf_rdma *r;
	void (*fn)(struct nr_shard *sh);
};

static void on_shard_fn(struct wharf_shard *shard, void *arg)
{
	struct on_shards_msg *m = arg;
	struct nvmf_rdma *r = m->r;

	m->fn(&r->shards[wharf_shard_index(shard)]);
	pthread_mutex_lock(&r->lock);
	if (--r->left == 0)
		pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

void nr_on_shards(struct nvmf_rdma *r, void (*fn)(struct nr_shard *sh))
{
	struct on_shards_msg m = {.r = r, .fn = fn};

	pthread_mutex_lock(&r->lock);
	r->left = r->nshards;
	pthread_mutex_unlock(&r->lock);
	for (unsigned i = 0; i < r->nshards; i++)
		while (wharf_shard_send(r->shards[i].shard, on_shard_fn, &m) ==
		       -EAGAIN)
			usleep(1000);
	pthread_mutex_lock(&r->lock);
	while (r->left)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
}

/* ------------------------------------------------------------------ */
/* Per-shard state                                                     */
/* ------------------------------------------------------------------ */

static void sweep_fn(struct wharf_timer *t, void *arg)
{
	struct nr_shard *sh = arg;

	nr_shard_sweep(sh);
	if (sh->index == 0 && ++sh->sweeps % NR_KATO_EVERY == 0) {
		int n = nvmf_tgt_kato_scan(sh->r->tgt, wharf_now_ms());

		if (n > 0)
			fprintf(stderr,
				"wharf-nvmf-tgt: keep-alive timeout: %d "
				"controller(s) torn down\n",
				n);
	}
	wharf_timer_arm(t, NR_SWEEP_NS);
}

static void shard_start(struct nr_shard *sh)
{
	if (!wharf_timer_create(sh->shard, sweep_fn, sh, &sh->sweep))
		wharf_timer_arm(sh->sweep, NR_SWEEP_NS);
	sh->aio_err = nvmf_aio_create(sh->shard, NR_AIO_DEPTH, nr_aio_done, sh,
				      &sh->aio);
}

static void shard_end_queues(struct nr_shard *sh)
{
	struct nr_queue *nq, *next;

	wharf_timer_destroy(sh->sweep);
	sh->sweep = NULL;
	for (nq = sh->queues; nq; nq = next) {
		next = nq->next;
		nr_queue_end(nq);
	}
}

static void shard_free(struct nr_shard *sh)
{
	/* Every queue is gone, and with it every backend operation (they
	 * hold their queue): this only closes the ring. */
	if (nvmf_aio_destroy(sh->aio, NR_AIO_DRAIN_MS)) {
		/* The kernel may still write into the buffers: keep them. */
		fprintf(stderr,
			"wharf-nvmf-tgt: shard %u: backend I/O did not drain "
			"in "
			"%u ms; its data buffers are left allocated\n",
			sh->index, NR_AIO_DRAIN_MS);
		sh->aio = NULL;
		sh->bufs = NULL;
		return;
	}
	sh->aio = NULL;
	wharf_buf_pool_destroy(sh->bufs);
	sh->bufs = NULL;
}

/* ------------------------------------------------------------------ */
/* Create / destroy                                                    */
/* ------------------------------------------------------------------ */

/* The cm's own refusals speak the transport binding: {recfmt 0, NO_RSC}. */
static size_t nr_refusal(const struct wharf_conn_request *req,
			 enum wharf_refusal why, void *buf, size_t max,
			 void *arg)
{
	struct nvme_rdma_cm_rej rej;

	(void)req;
	(void)why;
	(void)arg;
	if (max < sizeof(rej) || nvme_rdma_rej_build(NVME_RDMA_CM_NO_RSC, &rej))
		return 0;
	memcpy(buf, &rej, sizeof(rej));
	return sizeof(rej);
}

/* Listen on @l as slot @slot (1-based). Management or main thread. */
static int listen_one(struct nvmf_rdma *r, const struct nvmf_cfg_listen *l,
		      uint16_t slot)
{
	struct sockaddr_storage ss = {0};
	struct wharf_listen_opts lo;

	if (l->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(l->port);
		if (inet_pton(AF_INET6, l->addr, &s6->sin6_addr) != 1)
			return -EINVAL;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(l->port);
		if (inet_pton(AF_INET, l->addr, &s4->sin_addr) != 1)
			return -EINVAL;
	}
	wharf_listen_opts_init(&lo);
	lo.addr = (struct sockaddr *)&ss;
	lo.ps = WHARF_PS_RC;
	lo.ops = &nr_conn_ops;
	lo.arg = r;
	lo.pick_shard = nvmf_rdma_pick_shard;
	lo.qp.recv_credits = 16;
	lo.overload = WHARF_OVERLOAD_DEFER;
	lo.defer_max_ms = r->opts.defer_max_ms;
	lo.defer_max = r->opts.defer_max;
	lo.refusal = nr_refusal;
	lo.disconnect_timeout_ms = NVME_RDMA_DISCONNECT_MS;
	return wharf_listen(r->cm, &lo, &r->listeners[slot - 1]);
}

static int listen_all(struct nvmf_rdma *r, const struct nvmf_config *cfg,
		      char *err, size_t errlen)
{
	for (size_t i = 0; i < cfg->nlisten; i++) {
		const struct nvmf_cfg_listen *l = &cfg->listen[i];
		int rc = listen_one(r, l, (uint16_t)(i + 1));

		if (rc) {
			snprintf(err, errlen, "%s:%u: listen %s %u: %s",
				 cfg->source, l->line, l->addr, l->port,
				 strerror(-rc));
			return rc;
		}
	}
	return 0;
}

int nvmf_rdma_listen(struct nvmf_rdma *r, const struct nvmf_cfg_listen *l,
		     uint16_t *listener)
{
	uint16_t slot;
	int rc = nvmf_tgt_listener_add(r->tgt, l, &slot);

	if (rc == -EEXIST)
		*listener = slot;
	if (rc)
		return rc;
	/* The slot is reserved, not live: nothing lists it before the
	 * listener is up, and nothing is left behind if it fails. */
	rc = listen_one(r, l, slot);
	nvmf_tgt_listener_commit(r->tgt, slot, rc == 0);
	if (rc)
		return rc;
	*listener = slot;
	return 0;
}

int nvmf_rdma_unlisten(struct nvmf_rdma *r, uint16_t listener,
		       unsigned *disconnected)
{
	if (!listener || listener > NVMF_CFG_MAX_LISTEN ||
	    !r->listeners[listener - 1])
		return -ENOENT;
	if (nvmf_tgt_listener_used(r->tgt, listener))
		return -EBUSY;
	/* No new connection first; then the slot goes (it cannot fail:
	 * this thread alone changes exports, and nothing is served there). */
	wharf_listener_destroy(r->listeners[listener - 1]);
	r->listeners[listener - 1] = NULL;
	return nvmf_tgt_listener_remove(r->tgt, listener, disconnected);
}

static int setup(struct nvmf_rdma *r, const struct nvmf_config *cfg, char *err,
		 size_t errlen)
{
	struct nvmf_tgt_ops ops = {.size = sizeof(ops)};
	struct wharf_ctx_opts co;
	struct wharf_qp_res_opts ro = {.size = sizeof(ro)};
	struct wharf_cm_opts mo = {.size = sizeof(mo)};
	uint32_t icd;
	int rc;

	ops.now_ms = ops_now_ms;
	ops.held_ready = nr_ops_held_ready;
	ops.kill = nr_ops_kill;
	ops.connect_audit = nr_ops_connect_audit;
	rc = nvmf_tgt_create(cfg, &ops, r, &r->tgt, err, errlen);
	if (rc)
		return rc;
	r->max_xfer = nvmf_tgt_max_xfer(r->tgt);
	wharf_ctx_opts_init(&co);
	co.nshards = cfg->shards;
	co.cpus = cfg->ncpus ? cfg->cpus : NULL; /* not retained */
	co.ncpus = cfg->ncpus;
	co.poll_mode = r->opts.poll_mode;
	co.adaptive_spin_us = r->opts.adaptive_spin_us
				      ? r->opts.adaptive_spin_us
				      : NVMF_RDMA_SPIN_US_DEFAULT;
	rc = wharf_ctx_create(&co, &r->ctx);
	if (rc) {
		snprintf(err, errlen, "shards%s: %s", cfg->ncpus ? "/cpus" : "",
			 strerror(-rc));
		return rc;
	}
	r->nshards = wharf_ctx_shard_count(r->ctx);
	r->shards = calloc(r->nshards, sizeof(*r->shards));
	if (!r->shards)
		return -ENOMEM;
	for (unsigned i = 0; i < r->nshards; i++) {
		r->shards[i].r = r;
		r->shards[i].index = i;
		r->shards[i].shard = wharf_ctx_shard(r->ctx, i);
		nvmf_audit_limit_init(&r->shards[i].audit, NVMF_AUDIT_PER_SEC);
	}
	/* Receive buffers: the SQE plus the largest in-capsule data. */
	icd = nvmf_tgt_icd_size(r->tgt, 0);
	if (nvmf_tgt_icd_size(r->tgt, 1) > icd)
		icd = nvmf_tgt_icd_size(r->tgt, 1);
	ro.srq_depth = r->opts.srq_depth ? r->opts.srq_depth : 1024;
	ro.srq_max = r->opts.srq_max;
	if (!ro.srq_max)
		ro.srq_max = ro.srq_depth > NVMF_RDMA_SRQ_MAX_DEFAULT
				     ? ro.srq_depth
				     : NVMF_RDMA_SRQ_MAX_DEFAULT;
	ro.recv_buf_size = NVME_SQE_SIZE + icd;
	/* A data WR and a response per request of the deepest queue. */
	ro.sq_depth = 2 * (cfg->queue_depth > 32 ? cfg->queue_depth : 32) + 8;
	/* Completions go inline: the HCA reads no memory for them. */
	ro.max_inline_data = sizeof(struct nvme_cqe);
	mo.res_opts = &ro;
	mo.handshake_cap = r->opts.handshake_cap;
	rc = wharf_cm_create(r->ctx, &mo, &r->cm);
	if (rc) {
		snprintf(err, errlen, "RDMA: %s", strerror(-rc));
		return rc;
	}
	nr_on_shards(r, shard_start);
	for (unsigned i = 0; i < r->nshards; i++) {
		rc = r->shards[i].aio_err;
		if (!rc)
			continue;
		if (nvmf_tgt_needs_aio(r->tgt)) {
			snprintf(err, errlen,
				 "io_uring for shard %u: %s (file and block "
				 "device namespaces need it)",
				 i, strerror(-rc));
			return rc;
		}
		fprintf(stderr,
			"wharf-nvmf-tgt: io_uring unavailable (%s): only RAM "
			"and null namespaces can be served\n",
			strerror(-rc));
		break;
	}
	return listen_all(r, cfg, err, errlen);
}

int nvmf_rdma_create(const struct nvmf_config *cfg,
		     const struct nvmf_rdma_opts *opts, struct nvmf_rdma **out,
		     char *err, size_t errlen)
{
	struct nvmf_rdma *r;
	int rc;

	if (!cfg || !out || (opts && opts->size != sizeof(*opts)))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (opts)
		r->opts = *opts;
	r->opts.size = sizeof(r->opts);
	if (!r->opts.data_buffers)
		r->opts.data_buffers = 256;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	atomic_init(&r->nq_alive, 0);
	rc = setup(r, cfg, err, errlen);
	if (rc) {
		nvmf_rdma_destroy(r);
		return rc;
	}
	*out = r;
	return 0;
}

int nvmf_rdma_destroy(struct nvmf_rdma *r)
{
	uint64_t deadline = wharf_now_ms() + DRAIN_WAIT_MS;

	if (!r)
		return 0;
	for (size_t i = 0; i < NVMF_CFG_MAX_LISTEN; i++)
		if (r->listeners[i])
			wharf_listener_destroy(r->listeners[i]);
	if (r->cm) {
		nr_on_shards(r, shard_end_queues);
		while (atomic_load(&r->nq_alive) && wharf_now_ms() < deadline)
			usleep(10000);
		if (atomic_load(&r->nq_alive)) {
			fprintf(stderr,
				"wharf-nvmf-tgt: %llu queue(s) did not drain\n",
				(unsigned long long)atomic_load(&r->nq_alive));
			return -ETIMEDOUT;
		}
		nr_on_shards(r, shard_free);
		wharf_cm_destroy(r->cm);
	}
	wharf_ctx_destroy(r->ctx);
	nvmf_tgt_destroy(r->tgt);
	free(r->shards);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
	return 0;
}

void nvmf_rdma_get_stats(const struct nvmf_rdma *r, struct nvmf_rdma_stats *out,
			 struct nvmf_tgt_stats *tgt)
{
	struct nvmf_rdma_stats s = {.size = sizeof(s)};
	struct wharf_cm_stats cs = {.size = sizeof(cs)};

	if (r->cm && !wharf_cm_stats(r->cm, &cs)) {
		s.cm_requests = cs.requests;
		s.deferred = cs.deferred;
		s.deferred_total = cs.deferred_total;
		s.deferred_accepted = cs.deferred_accepted;
		s.deferred_timed_out = cs.deferred_timed_out;
		s.rejected_busy = cs.rejected_busy;
		s.cm_failed = cs.failed;
	}
	for (unsigned i = 0; i < r->nshards; i++) {
		const struct nr_counters *n = &r->shards[i].n;

		s.queues += atomic_load(&n->queues);
		s.bufs_in_use += atomic_load(&n->bufs_in_use);
		s.accepted += atomic_load(&n->accepted);
		s.rejected += atomic_load(&n->rejected);
		s.capsules += atomic_load(&n->capsules);
		s.rdma_reads += atomic_load(&n->rdma_reads);
		s.rdma_writes += atomic_load(&n->rdma_writes);
		s.responses += atomic_load(&n->responses);
		s.buf_waits += atomic_load(&n->buf_waits);
		s.wc_errors += atomic_load(&n->wc_errors);
		s.kills += atomic_load(&n->kills);
		s.handoff_retries += atomic_load(&n->handoff_retries);
		s.responses_inv += atomic_load(&n->responses_inv);
		s.bounces += atomic_load(&n->bounces);
		s.audit_held += atomic_load(&n->audit_held);
		if (r->shards[i].aio) {
			struct nvmf_aio_stats as;

			nvmf_aio_get_stats(r->shards[i].aio, &as);
			s.backend_ops += as.completed;
			s.backend_errors += as.errors;
			s.backend_waits += as.waited;
			s.backend_fixed += as.fixed;
			s.backend_inflight += as.inflight;
		}
	}
	if (out && out->size >= sizeof(s))
		*out = s;
	if (tgt)
		nvmf_tgt_get_stats(r->tgt, tgt);
}

uint16_t nvmf_rdma_listen_port(const struct nvmf_rdma *r, size_t i)
{
	return i < NVMF_CFG_MAX_LISTEN && r->listeners[i]
		       ? wharf_listener_port(r->listeners[i])
		       : 0;
}

struct nvmf_tgt *nvmf_rdma_target(const struct nvmf_rdma *r)
{
	return r->tgt;
}

bool nvmf_rdma_file_ns(const struct nvmf_rdma *r)
{
	for (unsigned i = 0; i < r->nshards; i++)
		if (!r->shards[i].aio)
			return false;
	return r->nshards > 0;
}
