/*
 * cm/conn.c - a connection's memory, references, table entries, lookups
 * and accessors.
 *
 * An active connection is one allocation: the shared part, then its side's
 * (struct wcm_active).  A passive one is the shared part, with its side's
 * (struct wcm_passive: the request, the admission link, the accept's
 * options) in an allocation of its own that goes once the handshake is
 * over (wcm_conn_trim), with its idle timer: a server's thousands of
 * established connections keep 512 bytes each (docs/bench/storm.md).
 *
 * A connection is allocated on its owner shard's NUMA arena, published in
 * the RCU tables when its owner adopts it, and withdrawn when its last
 * reference goes (see rt.h); the memory is freed by liburcu's call_rcu
 * thread after a grace period, so that a reader that found it by lookup can
 * finish.  wharf_conn_destroy() marks it dead at once, so lookups stop
 * returning it even while its QP still drains.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include <infiniband/ib.h>

#include "cm/rt.h"

#define conn_of(e)                                                             \
	((struct wharf_conn *)((char *)(e)-offsetof(struct wharf_conn, entry)))

/* The side's part follows the shared one, aligned for its members. */
#define SIDE_OFFSET                                                            \
	((sizeof(struct wharf_conn) + _Alignof(max_align_t) - 1) /             \
	 _Alignof(max_align_t) * _Alignof(max_align_t))

/* A server holds thousands of established passive connections: the
 * shared part alone, in the allocator's 512-byte size class
 * (docs/bench/storm.md, heap per connection).  Growing past it costs 128
 * bytes more per connection. */
_Static_assert(sizeof(struct wharf_conn) <= 512,
	       "a connection's shared part outgrew 512 bytes");

struct wharf_conn *wcm_conn_alloc(struct wcm_shard *sh, enum wcm_ps ps,
				  enum wcm_side side, size_t pdata_len)
{
	struct wharf_numa_arena *arena = wharf_shard_arena(sh->shard);
	size_t size = side == WCM_SIDE_ACTIVE
			      ? SIDE_OFFSET + sizeof(struct wcm_active)
			      : sizeof(struct wharf_conn);
	struct wharf_conn *c;

	if (pdata_len > WCM_PDATA_RX_MAX)
		return NULL;
	c = wharf_numa_alloc(arena, size, 64, true);
	if (!c)
		return NULL;
	if (side == WCM_SIDE_PASSIVE) {
		c->pas = wharf_numa_alloc(
			arena, sizeof(struct wcm_passive) + pdata_len, 0, true);
		if (!c->pas) {
			wharf_numa_free(arena, c);
			return NULL;
		}
		c->pas->conn = c;
		c->pas->arena = arena;
		c->pas->req_pdata_len = (uint8_t)pdata_len;
		wcore_list_init(&c->pas->defer_link);
	} else {
		c->act = (struct wcm_active *)((char *)c + SIDE_OFFSET);
		c->act->conn = c;
		wcore_list_init(&c->act->win_link);
		c->ops = &c->act->ops;
	}
	c->arena = arena;
	c->cm = sh->cm;
	c->sh = sh;
	c->ps = ps;
	wcore_list_init(&c->shard_link);
	atomic_init(&c->dead, 0);
	return c;
}

struct wharf_conn *wcm_conn_move(struct wharf_conn *c, struct wcm_shard *sh)
{
	struct wharf_numa_arena *arena = wharf_shard_arena(sh->shard);
	struct wharf_conn *o;

	o = wharf_numa_alloc(arena, sizeof(*o), 64, false);
	if (!o)
		return NULL;
	memcpy(o, c, sizeof(*o));
	o->arena = arena;
	/* The passive part stays where it is (it lives as long as the
	 * handshake) and follows its connection. */
	o->pas->conn = o;
	/* Nothing links or points into @c yet but its own fields. */
	wcore_list_init(&o->shard_link);
	c->listener = NULL;
	c->pas = NULL;
	wcm_conn_free_unpublished(c);
	return o;
}

static void passive_free(struct wharf_conn *c)
{
	if (!c->pas)
		return;
	free(c->pas->rej_pdata);
	wharf_numa_free(c->pas->arena, c->pas);
	c->pas = NULL;
}

static void side_free(struct wharf_conn *c)
{
	passive_free(c);
	if (c->act && c->act->ud_ah) {
		ibv_destroy_ah(c->act->ud_ah);
		c->act->ud_ah = NULL;
	}
}

static void conn_free_rcu(struct wcm_conn_entry *e)
{
	struct wharf_conn *c = conn_of(e);

	wharf_numa_free(c->arena, c);
}

int wcm_conn_publish(struct wharf_conn *c)
{
	struct wcm_shard *sh = c->sh;
	int err;

	err = wcm_conn_table_insert(c->cm->table, &c->entry, c->id);
	if (err)
		return err;
	c->inserted = true;
	wcore_list_add_head(&sh->conns, &c->shard_link);
	return 0;
}

void wcm_conn_bind_qp(struct wharf_conn *c)
{
	if (!c->inserted || !c->qp || !c->dev)
		return;
	if (!wcm_conn_table_bind_qp(c->cm->table, &c->entry, c->dev->index,
				    wharf_qp_num(c->qp)))
		c->qp_bound = true;
}

static void listener_put(struct wharf_listener *l)
{
	if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 1)
		free(l);
}

void wcm_conn_free_unpublished(struct wharf_conn *c)
{
	side_free(c);
	if (c->listener)
		listener_put(c->listener);
	wharf_numa_free(c->arena, c);
}

void wcm_conn_put(struct wharf_conn *c)
{
	if (c->refs || c->app_ref || c->handover_ref || c->id_ref || c->qp ||
	    c->qps_draining || c->freeing)
		return;
	c->freeing = true;
	wcm_held_drop(c);
	if (c->timer)
		wharf_timer_destroy(c->timer);
	c->timer = NULL;
	side_free(c);
	if (!c->inserted) {
		wcm_conn_free_unpublished(c);
		return;
	}
	wcore_list_del(&c->shard_link);
	if (c->listener)
		listener_put(c->listener);
	c->listener = NULL;
	wcm_conn_table_remove(c->cm->table, &c->entry, conn_free_rcu);
}

void wcm_conn_trim(struct wharf_conn *c)
{
	switch (c->sm.state) {
	case WCM_ST_ESTABLISHED:
	case WCM_ST_DISCONNECTING:
	case WCM_ST_TIMEWAIT:
		break;
	default:
		return; /* the handshake may still need it, or the end is near */
	}
	passive_free(c);
	/* Created again if a disconnect or time-wait needs a bound. */
	if (c->timer && !wharf_timer_armed(c->timer)) {
		wharf_timer_destroy(c->timer);
		c->timer = NULL;
	}
}

void wcm_conn_unref(struct wharf_conn *c)
{
	c->refs--;
	if (!c->refs)
		wcm_conn_trim(c);
	wcm_conn_put(c);
}

const struct wharf_conn_qp_opts *wcm_conn_qp_opts(const struct wharf_conn *c)
{
	return c->pas ? &c->pas->qp_opts : &c->cfg->qp;
}

/* ---------------------------------------------------------------- */
/* Lookups                                                           */
/* ---------------------------------------------------------------- */

static struct wharf_conn *live(struct wcm_conn_entry *e)
{
	struct wharf_conn *c;

	if (!e)
		return NULL;
	c = conn_of(e);
	if (atomic_load_explicit(&c->dead, memory_order_acquire))
		return NULL;
	return c;
}

struct wharf_conn *wharf_conn_lookup(struct wharf_cm *cm, uint64_t id)
{
	if (!cm || !id)
		return NULL;
	return live(wcm_conn_table_lookup(cm->table, id));
}

struct wharf_conn *wharf_conn_lookup_qp(struct wharf_cm *cm,
					const struct ibv_context *verbs,
					uint32_t qp_num)
{
	if (!cm || !verbs)
		return NULL;
	for (unsigned i = 0; i < cm->ndev; i++)
		if (cm->devs[i].verbs == verbs)
			return live(
				wcm_conn_table_lookup_qp(cm->table, i, qp_num));
	return NULL;
}

struct call_msg {
	struct wharf_cm *cm;
	uint64_t id;
	wharf_conn_fn fn;
	void *arg;
};

static void call_msg_fn(struct wharf_shard *shard, void *arg)
{
	struct call_msg *m = arg;
	struct wharf_conn *c;

	/* Connections handed over before this message was sent first. */
	wcm_inbox_drain(m->cm->shards[wharf_shard_index(shard)]);
	urcu_qsbr_read_lock();
	c = wharf_conn_lookup(m->cm, m->id);
	urcu_qsbr_read_unlock();
	m->fn(c, m->arg); /* the owner's own connection: stays valid */
	free(m);
}

int wharf_conn_call(struct wharf_cm *cm, uint64_t id, wharf_conn_fn fn,
		    void *arg)
{
	unsigned idx = wcm_conn_id_shard(id);
	struct call_msg *m;
	int err;

	if (!cm || !fn || idx >= cm->nshards)
		return -EINVAL;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	*m = (struct call_msg){cm, id, fn, arg};
	err = wharf_shard_send(cm->shards[idx]->shard, call_msg_fn, m);
	if (err)
		free(m);
	return err;
}

/* ---------------------------------------------------------------- */
/* Accessors                                                         */
/* ---------------------------------------------------------------- */

uint64_t wharf_conn_id(const struct wharf_conn *conn)
{
	return conn ? conn->id : 0;
}

struct wharf_shard *wharf_conn_shard(const struct wharf_conn *conn)
{
	return conn ? conn->sh->shard : NULL;
}

struct wharf_qp *wharf_conn_qp(const struct wharf_conn *conn)
{
	return conn ? conn->qp : NULL;
}

struct ibv_pd *wharf_conn_pd(const struct wharf_conn *conn)
{
	if (!conn || !conn->dev)
		return NULL;
	if (conn->ps == WCM_PS_UD)
		return conn->dev->ud_pd;
	return wharf_qp_dev_pd(conn->dev->qdev);
}

uint8_t wharf_conn_port_num(const struct wharf_conn *conn)
{
	if (!conn)
		return 0;
	if (conn->cm_id)
		return conn->cm_id->port_num;
	return conn->port_num;
}

const struct wharf_conn_request *
wharf_conn_get_request(const struct wharf_conn *conn)
{
	if (!conn || !conn->pas)
		return NULL;
	return &conn->pas->req_view;
}

void wharf_conn_set_arg(struct wharf_conn *conn, void *arg)
{
	if (conn)
		conn->arg = arg;
}

const char *wharf_conn_state_name(const struct wharf_conn *conn)
{
	return conn ? wcm_conn_state_name(conn->sm.state) : "?";
}

size_t wcm_sockaddr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	}
	return 0;
}
