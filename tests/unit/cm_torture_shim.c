/*
 * tests/unit/cm_torture_shim.c - see cm_torture_shim.h.
 *
 * Every shard runs the cm's own per-shard poller (which publishes the
 * shard's RCU reads before each quiescent state) and, added after it so
 * that it runs before it in each loop iteration, a churn poller: it
 * publishes new connections (wcm_conn_setup: id, timer, table entries),
 * retires random ones the way wharf_conn_destroy() does (dead flag, then
 * the last reference withdraws the entries and frees after a grace
 * period), and looks up random ids of every shard, by id and by QP.  An
 * application thread registered with wcm_rcu does the same lookups.  A
 * reader checks that whatever it found carries the contents written
 * before publication; ThreadSanitizer checks that no reader access races
 * with a free or a reuse of the memory.
 */
#include "tests/unit/cm_torture_shim.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cm/conn_rcu.h"
#include "cm/rt.h"

#define LIVE_MAX	  64u
#define LOOKUPS_PER_ROUND 4u

struct tshard {
	struct wcm_shard *sh;
	struct wharf_poller *poller;
	struct wharf_conn *live[LIVE_MAX];
	unsigned nlive;
	unsigned ops;
	uint32_t rnd;
	bool done;
};

struct torture {
	struct wharf_ctx *ctx;
	struct wharf_cm cm;
	unsigned n;
	unsigned ops;
	struct tshard *ts;
	_Atomic unsigned shards_done;
	_Atomic uint64_t created, destroyed, lookups, hits, app_lookups, bad;
};

static uint32_t xs(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static uint32_t magic(uint64_t id)
{
	return (uint32_t)(id * 2654435761u) ^ (uint32_t)(id >> 32);
}

static uint32_t qpn_of(uint64_t id)
{
	return (uint32_t)((wcm_conn_id_shard(id) << 20) ^ wcm_conn_id_seq(id)) &
	       WCM_QP_NUM_MAX;
}

static void check(struct torture *t, const struct wharf_conn *c, uint64_t id)
{
	if (c->id != id || c->cfg->addr_ms != magic(id) ||
	    c->cfg->route_ms != ~magic(id))
		atomic_fetch_add(&t->bad, 1);
}

/* One lookup by id and one by QP of a random id of a random shard. */
static void lookup(struct torture *t, uint32_t *rnd, _Atomic uint64_t *ctr)
{
	unsigned s = xs(rnd) % t->n;
	uint64_t next = atomic_load_explicit(&t->cm.shards[s]->next_seq,
					     memory_order_relaxed);
	uint64_t seq = 1 + xs(rnd) % (next > 1 ? next - 1 : 1);
	uint64_t id;
	struct wharf_conn *c;
	struct wcm_conn_entry *e;

	if (wcm_conn_id_make(s, seq, &id))
		return;
	atomic_fetch_add_explicit(ctr, 1, memory_order_relaxed);
	c = wharf_conn_lookup(&t->cm, id);
	if (c) {
		atomic_fetch_add_explicit(&t->hits, 1, memory_order_relaxed);
		check(t, c, id);
	}
	e = wcm_conn_table_lookup_qp(t->cm.table, 0, qpn_of(id));
	if (e) {
		c = (struct wharf_conn *)((char *)e -
					  offsetof(struct wharf_conn, entry));
		check(t, c, c->id);
	}
}

static void create(struct torture *t, struct tshard *ts)
{
	struct wharf_conn *c =
		wcm_conn_alloc(ts->sh, WCM_PS_RC, WCM_SIDE_ACTIVE, 0);
	uint64_t seq;

	if (!c)
		return;
	seq = atomic_fetch_add_explicit(&ts->sh->next_seq, 1,
					memory_order_relaxed);
	if (wcm_conn_id_make(ts->sh->index, seq, &c->id))
		goto drop;
	/* Written before publication, never again: what readers check. */
	c->act->cfg.addr_ms = magic(c->id);
	c->act->cfg.route_ms = ~magic(c->id);
	c->cfg = &c->act->cfg;
	if (wcm_conn_setup(c))
		goto drop;
	c->app_ref = true;
	(void)wcm_conn_table_bind_qp(t->cm.table, &c->entry, 0, qpn_of(c->id));
	ts->live[ts->nlive++] = c;
	atomic_fetch_add(&t->created, 1);
	return;
drop:
	wcm_conn_free_unpublished(c);
}

static void retire(struct torture *t, struct tshard *ts, unsigned i)
{
	struct wharf_conn *c = ts->live[i];

	ts->live[i] = ts->live[--ts->nlive];
	atomic_store_explicit(&c->dead, 1, memory_order_release);
	c->app_ref = false;
	wcm_conn_put(c);
	atomic_fetch_add(&t->destroyed, 1);
}

static int churn(struct wharf_shard *shard, void *arg)
{
	struct torture *t = arg;
	struct tshard *ts = &t->ts[wharf_shard_index(shard)];

	if (ts->done)
		return 0;
	for (unsigned k = 0; k < 4 && ts->ops < t->ops; k++, ts->ops++) {
		if (ts->nlive < LIVE_MAX && (ts->nlive < 8 || xs(&ts->rnd) & 1))
			create(t, ts);
		else if (ts->nlive)
			retire(t, ts, xs(&ts->rnd) % ts->nlive);
	}
	for (unsigned k = 0; k < LOOKUPS_PER_ROUND; k++)
		lookup(t, &ts->rnd, &t->lookups);
	if (ts->ops >= t->ops) {
		while (ts->nlive)
			retire(t, ts, 0);
		ts->done = true;
		atomic_fetch_add(&t->shards_done, 1);
	}
	return 1;
}

struct on_shard {
	struct torture *t;
	unsigned i;
	int err;
	_Atomic int done;
	bool stop;
};

static void setup_fn(struct wharf_shard *shard, void *arg)
{
	struct on_shard *m = arg;
	struct tshard *ts = &m->t->ts[m->i];

	(void)shard;
	if (m->stop) {
		wharf_poller_remove(ts->poller);
		wharf_poller_remove(ts->sh->poller);
		ts->sh->poller = NULL;
		wcm_rcu_publish();
		wcm_rcu_detach_thread();
	} else {
		/* The cm's poller first: it then runs after ours. */
		m->err = wcm_shard_poller_start(ts->sh);
		if (!m->err)
			m->err = wharf_shard_poller_add(
				ts->sh->shard, churn, NULL, m->t, &ts->poller);
	}
	atomic_store(&m->done, 1);
}

static int on_each_shard(struct torture *t, bool stop)
{
	int err = 0;

	for (unsigned i = 0; i < t->n; i++) {
		struct on_shard m = {.t = t, .i = i, .stop = stop};

		atomic_init(&m.done, 0);
		if (wharf_shard_send(t->ts[i].sh->shard, setup_fn, &m))
			return -EAGAIN;
		while (!atomic_load(&m.done))
			sched_yield();
		if (m.err && !err)
			err = m.err;
	}
	return err;
}

static void *app_thread(void *arg)
{
	struct torture *t = arg;
	uint32_t rnd = 0x2545F491u;
	unsigned k = 0;

	wcm_rcu_register_thread();
	while (atomic_load(&t->shards_done) < t->n) {
		urcu_qsbr_read_lock();
		lookup(t, &rnd, &t->app_lookups);
		urcu_qsbr_read_unlock();
		if (++k % 16 == 0)
			wcm_rcu_quiescent_state();
		if (k % 1024 == 0) {
			wcm_rcu_thread_offline();
			sched_yield();
			wcm_rcu_thread_online();
		}
	}
	wcm_rcu_unregister_thread();
	return NULL;
}

void cm_torture_run(unsigned nshards, unsigned ops,
		    struct cm_torture_result *out)
{
	struct wharf_ctx_opts co;
	struct torture *t = calloc(1, sizeof(*t));
	pthread_t app;
	int err;

	memset(out, 0, sizeof(*out));
	if (!t) {
		out->err = -ENOMEM;
		return;
	}
	wharf_ctx_opts_init(&co);
	co.nshards = nshards;
	err = wharf_ctx_create(&co, &t->ctx);
	if (err)
		goto out;
	t->n = nshards;
	t->ops = ops;
	t->cm.ctx = t->ctx;
	t->cm.nshards = nshards;
	t->cm.numa = wharf_ctx_numa(t->ctx);
	t->cm.shards = calloc(nshards, sizeof(*t->cm.shards));
	t->ts = calloc(nshards, sizeof(*t->ts));
	err = (!t->cm.shards || !t->ts) ? -ENOMEM : 0;
	if (!err)
		err = wcm_conn_table_create(64, &t->cm.table);
	for (unsigned i = 0; !err && i < nshards; i++) {
		err = wcm_shard_alloc(&t->cm, i);
		t->ts[i].sh = t->cm.shards[i];
		t->ts[i].rnd = 0x9E3779B9u * (i + 1);
	}
	if (!err)
		err = pthread_create(&app, NULL, app_thread, t) ? -EAGAIN : 0;
	if (err)
		goto out;
	err = on_each_shard(t, false);
	while (!err && atomic_load(&t->shards_done) < t->n)
		sched_yield();
	pthread_join(app, NULL);
	if (!err)
		err = on_each_shard(t, true);
	wcm_rcu_barrier();
	out->created = atomic_load(&t->created);
	out->destroyed = atomic_load(&t->destroyed);
	out->lookups = atomic_load(&t->lookups) + atomic_load(&t->app_lookups);
	out->app_lookups = atomic_load(&t->app_lookups);
	out->hits = atomic_load(&t->hits);
	out->bad = atomic_load(&t->bad);
	for (unsigned i = 0; i < nshards; i++)
		if (t->cm.shards[i] &&
		    !wcore_list_empty(&t->cm.shards[i]->conns))
			out->left_in_table++;
	if (wcm_conn_table_destroy(t->cm.table) == -EBUSY)
		out->left_in_table++;
out:
	out->err = err;
	for (unsigned i = 0; t->cm.shards && i < nshards; i++) {
		if (t->cm.shards[i])
			free(t->cm.shards[i]->res);
		free(t->cm.shards[i]);
	}
	free(t->cm.shards);
	free(t->ts);
	wharf_ctx_destroy(t->ctx);
	free(t);
}
