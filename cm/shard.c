/*
 * cm/shard.c - a cm's state on each shard: the shard's rdma_cm event
 * channel and its watch, the inbox through which other threads hand
 * connections over, and the poller that drains the inbox and publishes the
 * shard's RCU reads (conn_rcu.h) once per loop iteration.
 *
 * The inbox is a lock-free stack (push with CAS, take everything with an
 * exchange).  A push onto an empty stack also sends the shard a message to
 * wake it; should that fail (queue full), the shard is busy anyway and its
 * poller takes the inbox on the next iteration, and the poller's arm
 * function keeps the shard from sleeping while the inbox is not empty.  So
 * a hand-over can never be lost, and the listener never has to undo a
 * migrated rdma_cm_id.
 *
 * The core announces quiescent states itself (urcu_qsbr directly); the
 * poller is added when the cm starts, so it runs after the pollers added
 * later (qp's), and publishes what every callback of the iteration did
 * before the quiescent state that ends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>

#include "cm/conn_rcu.h"
#include "cm/rt.h"

int wcm_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int wcm_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

struct wcm_shard *wcm_shard_cur(struct wharf_cm *cm)
{
	struct wharf_shard *s = wharf_shard_current();

	if (!s || wharf_shard_ctx(s) != cm->ctx)
		return NULL;
	return cm->shards[wharf_shard_index(s)];
}

uint32_t wcm_rand(struct wcm_shard *sh)
{
	uint64_t x = sh->rnd;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	sh->rnd = x;
	return (uint32_t)(x >> 32);
}

/*
 * Moves what was pushed since the last call (a LIFO stack) to the end of
 * the pending FIFO, then runs up to @max items from its head.  Items left
 * pending keep the poller reporting work (and shard_arm() refuses to let
 * the shard sleep) until they have run.
 */
unsigned wcm_inbox_drain_max(struct wcm_shard *sh, unsigned max)
{
	struct wcm_inbox_item *list, *fifo = NULL, *tail = NULL;
	unsigned n = 0;

	list = atomic_exchange_explicit(&sh->inbox, NULL, memory_order_acquire);
	while (list) { /* LIFO -> FIFO */
		struct wcm_inbox_item *next = list->next;

		if (!tail)
			tail = list;
		list->next = fifo;
		fifo = list;
		list = next;
	}
	if (fifo) {
		if (sh->pend_tail)
			sh->pend_tail->next = fifo;
		else
			sh->pend_head = fifo;
		sh->pend_tail = tail;
	}
	while (sh->pend_head && n < max) {
		struct wcm_inbox_item *it = sh->pend_head;

		sh->pend_head = it->next;
		if (!sh->pend_head)
			sh->pend_tail = NULL;
		it->fn(it);
		n++;
	}
	return n;
}

unsigned wcm_inbox_drain(struct wcm_shard *sh)
{
	return wcm_inbox_drain_max(sh, ~0u);
}

static void inbox_kick(struct wharf_shard *shard, void *arg)
{
	(void)shard;
	wcm_inbox_drain_max(arg, WCM_INBOX_BATCH);
}

void wcm_inbox_push(struct wcm_shard *sh, struct wcm_inbox_item *item)
{
	struct wcm_inbox_item *head =
		atomic_load_explicit(&sh->inbox, memory_order_relaxed);

	do {
		item->next = head;
	} while (!atomic_compare_exchange_weak_explicit(&sh->inbox, &head, item,
							memory_order_release,
							memory_order_relaxed));
	if (!head)
		(void)wharf_shard_send(sh->shard, inbox_kick, sh);
}

static int shard_poll(struct wharf_shard *shard, void *arg)
{
	struct wcm_shard *sh = arg;
	int work;

	(void)shard;
	if (!sh->rcu_attached) {
		(void)wcm_rcu_attach_thread();
		sh->rcu_attached = true;
	}
	work = (int)wcm_inbox_drain_max(sh, WCM_INBOX_BATCH);
	work += (int)wcm_window_admit(sh, WCM_INBOX_BATCH);
	work += (int)wcm_dwin_admit(sh, WCM_INBOX_BATCH);
	work += (int)wcm_defer_admit(sh, WCM_INBOX_BATCH);
	work += (int)wcm_dead_ids_flush(sh, false);
	wcm_rcu_publish();
	return work;
}

static int shard_arm(struct wharf_shard *shard, void *arg)
{
	struct wcm_shard *sh = arg;

	(void)shard;
	wcm_rcu_publish();
	return sh->pend_head || sh->ndead || wcm_window_ready(sh) ||
	       wcm_dwin_ready(sh) || wcm_defer_ready(sh) ||
	       atomic_load_explicit(&sh->inbox, memory_order_relaxed) != NULL;
}

int wcm_shard_poller_start(struct wcm_shard *sh)
{
	return wharf_shard_poller_add(sh->shard, shard_poll, shard_arm, sh,
				      &sh->poller);
}

/* Runs on the shard (or, app-driven, on the creating thread). */
static int shard_setup(struct wcm_shard *sh)
{
	int err;

	err = wcm_shard_poller_start(sh);
	if (err)
		return err; /* -EPERM: not our thread; nothing done */
	sh->chan = rdma_create_event_channel();
	if (!sh->chan) {
		err = wcm_errno();
		goto fail;
	}
	err = wcm_set_nonblock(sh->chan->fd);
	if (!err)
		err = wharf_shard_watch(sh->shard, sh->chan->fd, WHARF_WATCH_IN,
					wcm_shard_chan_ready, sh, &sh->watch);
	if (!err)
		return 0;
	rdma_destroy_event_channel(sh->chan);
	sh->chan = NULL;
fail:
	wharf_poller_remove(sh->poller);
	sh->poller = NULL;
	return err;
}

struct setup_msg {
	struct wcm_shard *sh;
	struct wcm_sync *sync;
};

static void setup_msg_fn(struct wharf_shard *shard, void *arg)
{
	struct setup_msg *m = arg;

	(void)shard;
	wcm_sync_done(m->sync, shard_setup(m->sh));
	free(m);
}

int wcm_shard_alloc(struct wharf_cm *cm, unsigned i)
{
	struct wcm_shard *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return -ENOMEM;
	sh->cm = cm;
	sh->index = i;
	sh->shard = wharf_ctx_shard(cm->ctx, i);
	sh->node = wharf_shard_node(sh->shard);
	wcore_list_init(&sh->conns);
	wcm_window_init(sh);
	wcm_dwin_init(sh);
	wcore_list_init(&sh->defer_queue);
	atomic_init(&sh->next_seq, 1);
	sh->rnd = 0x9E3779B97F4A7C15ull ^ ((uint64_t)i << 32) ^
		  (uint64_t)time(NULL);
	if (!sh->rnd)
		sh->rnd = 1;
	sh->res = calloc((cm->ndev ? cm->ndev : 1) * cm->res_per_dev,
			 sizeof(*sh->res));
	if (!sh->res) {
		free(sh);
		return -ENOMEM;
	}
	cm->shards[i] = sh;
	return 0;
}

int wcm_shards_start(struct wharf_cm *cm)
{
	struct wcm_sync *sync;
	unsigned queued = 0;
	int err = 0;

	cm->shards = calloc(cm->nshards, sizeof(*cm->shards));
	if (!cm->shards)
		return -ENOMEM;
	for (unsigned i = 0; i < cm->nshards; i++) {
		err = wcm_shard_alloc(cm, i);
		if (err)
			return err;
	}
	sync = wcm_sync_new(cm->nshards);
	if (!sync)
		return -ENOMEM;
	for (unsigned i = 0; i < cm->nshards; i++) {
		struct wcm_shard *sh = cm->shards[i];
		struct setup_msg *m;
		int e = shard_setup(sh); /* app-driven: allowed here */

		if (e != -EPERM) {
			wcm_sync_done(sync, e);
			continue;
		}
		m = malloc(sizeof(*m));
		e = m ? 0 : -ENOMEM;
		if (m) {
			m->sh = sh;
			m->sync = sync;
			e = wharf_shard_send(sh->shard, setup_msg_fn, m);
			if (e)
				free(m);
		}
		if (e)
			wcm_sync_done(sync, e);
		else
			queued++;
	}
	(void)queued;
	return wcm_sync_wait(sync);
}

/* ---------------------------------------------------------------- */
/* Teardown                                                          */
/* ---------------------------------------------------------------- */

static void teardown_try(struct wharf_timer *t, void *arg)
{
	struct wcm_shard *sh = arg;

	(void)t;
	wcm_inbox_drain(sh); /* late hand-overs are refused: cm closing */
	if (!wcore_list_empty(&sh->conns))
		goto again;
	for (unsigned i = 0; i < sh->cm->ndev * sh->cm->res_per_dev; i++) {
		if (sh->res[i] && wharf_qp_res_destroy(sh->res[i]) == -EBUSY)
			goto again;
		sh->res[i] = NULL;
	}
	(void)wcm_dead_ids_flush(sh, true);
	if (sh->watch)
		wharf_watch_remove(sh->watch);
	sh->watch = NULL;
	if (sh->chan)
		rdma_destroy_event_channel(sh->chan);
	sh->chan = NULL;
	if (sh->poller)
		wharf_poller_remove(sh->poller);
	sh->poller = NULL;
	wharf_timer_destroy(sh->teardown_timer);
	sh->teardown_timer = NULL;
	wcm_rcu_publish();
	wcm_rcu_detach_thread();
	sh->rcu_attached = false;
	wcm_sync_done(sh->teardown_sync, 0);
	return;
again:
	wharf_timer_arm(sh->teardown_timer, WCM_TEARDOWN_POLL_NS);
}

static void teardown_msg(struct wharf_shard *shard, void *arg)
{
	struct wcm_shard *sh = arg;
	struct wcore_list *n, *next;
	int err;

	(void)shard;
	sh->closing = true;
	wcm_inbox_drain(sh);
	wcm_defer_drain(sh); /* never shown: the library refuses them */
	for (n = sh->conns.next; n != &sh->conns; n = next) {
		struct wharf_conn *c =
			wcore_list_entry(n, struct wharf_conn, shard_link);

		next = n->next;
		if (c->app_ref) {
			c->quiet = true;
			c->refs++;
			wharf_conn_destroy(c);
			next = n->next; /* c is still linked: we hold a ref */
			wcm_conn_unref(c);
		}
	}
	err = wharf_timer_create(sh->shard, teardown_try, sh,
				 &sh->teardown_timer);
	if (err) {
		wcm_sync_done(sh->teardown_sync, err);
		return;
	}
	teardown_try(sh->teardown_timer, sh);
}

void wcm_shards_stop(struct wharf_cm *cm)
{
	struct wcm_sync *sync;

	if (!cm->shards)
		return;
	sync = wcm_sync_new(cm->nshards);
	for (unsigned i = 0; i < cm->nshards; i++) {
		struct wcm_shard *sh = cm->shards[i];

		if (!sh)
			continue;
		if (!sh->poller || !sync) { /* never set up */
			if (sync)
				wcm_sync_done(sync, 0);
			continue;
		}
		sh->teardown_sync = sync;
		while (wharf_shard_send(sh->shard, teardown_msg, sh) ==
		       -EAGAIN) {
			struct timespec ts = {0, 1000000};

			nanosleep(&ts, NULL);
		}
	}
	if (sync)
		(void)wcm_sync_wait(sync);
	for (unsigned i = 0; i < cm->nshards; i++) {
		if (!cm->shards[i])
			continue;
		free(cm->shards[i]->res);
		free(cm->shards[i]->dead_ids);
		free(cm->shards[i]);
	}
	free(cm->shards);
	cm->shards = NULL;
}
