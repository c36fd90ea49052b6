/*
 * cm/conn_table.c - connection IDs and the RCU lookup tables (see
 * conn_table.h).
 *
 * Memory ordering, stated in our code so that ThreadSanitizer can check it
 * (liburcu's own barriers are in an uninstrumented library):
 *  - publication: the key is release-stored before the node is added and
 *    the match callbacks acquire-load it, so a reader that finds an entry
 *    sees everything its writer did before inserting it;
 *  - retirement: the remover release-stores e->retired just before
 *    call_rcu and the callback acquire-loads it, so the callback sees the
 *    remover's last writes;
 *  - readers: the callback calls wcm_rcu_sync_readers() (conn_rcu.h), so
 *    that every reader access made before its quiescent state happens
 *    before the free.
 */
#include "cm/conn_table.h"

#include <errno.h>
#include <stdlib.h>

#include "cm/conn_rcu.h"

#define ENTRY_INSERTED	0x1u
#define ENTRY_BOUND	0x2u
#define ENTRY_WAS_BOUND 0x4u
#define ENTRY_REMOVED	0x8u

#define TABLE_MIN_SIZE 64ul

struct wcm_conn_table {
	struct cds_lfht *by_id;
	struct cds_lfht *by_qp;
	unsigned long count; /* inserted entries; atomic */
};

int wcm_conn_id_make(unsigned int shard, uint64_t seq, uint64_t *id)
{
	if (!id || shard > WCM_CONN_ID_SHARD_MAX || seq == 0 ||
	    seq > WCM_CONN_ID_SEQ_MASK)
		return -EINVAL;
	*id = ((uint64_t)shard << WCM_CONN_ID_SHARD_SHIFT) | seq;
	return 0;
}

int wcm_conn_id_gen_init(struct wcm_conn_id_gen *gen, unsigned int shard)
{
	if (!gen || shard > WCM_CONN_ID_SHARD_MAX)
		return -EINVAL;
	gen->next_seq = 1;
	gen->shard = shard;
	return 0;
}

int wcm_conn_id_gen_next(struct wcm_conn_id_gen *gen, uint64_t *id)
{
	int ret;

	if (!gen || !id)
		return -EINVAL;
	ret = wcm_conn_id_make(gen->shard, gen->next_seq, id);
	if (ret)
		return gen->next_seq > WCM_CONN_ID_SEQ_MASK ? -EOVERFLOW : ret;
	gen->next_seq++;
	return 0;
}

/* 64-bit finaliser (MurmurHash3 fmix64): spreads sequential IDs. */
static unsigned long hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return (unsigned long)x;
}

static uint64_t qp_key(uint32_t dev_index, uint32_t qp_num)
{
	return ((uint64_t)dev_index << 32) | qp_num;
}

static int match_id(struct cds_lfht_node *node, const void *key)
{
	const struct wcm_conn_entry *e =
		caa_container_of(node, struct wcm_conn_entry, id_node);

	return __atomic_load_n(&e->id, __ATOMIC_ACQUIRE) ==
	       *(const uint64_t *)key;
}

static int match_qp(struct cds_lfht_node *node, const void *key)
{
	const struct wcm_conn_entry *e =
		caa_container_of(node, struct wcm_conn_entry, qp_node);

	return __atomic_load_n(&e->qp_key, __ATOMIC_ACQUIRE) ==
	       *(const uint64_t *)key;
}

int wcm_conn_table_create(unsigned long init_size, struct wcm_conn_table **out)
{
	struct wcm_conn_table *t;
	unsigned long size = TABLE_MIN_SIZE;
	int flags = CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING;

	if (!out)
		return -EINVAL;
	while (size < init_size && size < (1ul << 30))
		size <<= 1;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->by_id = cds_lfht_new_flavor(size, TABLE_MIN_SIZE, 0, flags,
				       &urcu_qsbr_flavor, NULL);
	t->by_qp = cds_lfht_new_flavor(size, TABLE_MIN_SIZE, 0, flags,
				       &urcu_qsbr_flavor, NULL);
	if (!t->by_id || !t->by_qp) {
		if (t->by_id)
			cds_lfht_destroy(t->by_id, NULL);
		if (t->by_qp)
			cds_lfht_destroy(t->by_qp, NULL);
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

int wcm_conn_table_destroy(struct wcm_conn_table *t)
{
	if (!t)
		return 0;
	if (__atomic_load_n(&t->count, __ATOMIC_ACQUIRE))
		return -EBUSY;
	cds_lfht_destroy(t->by_id, NULL);
	cds_lfht_destroy(t->by_qp, NULL);
	free(t);
	return 0;
}

/*
 * Publish @node under @key: release-store the key into @slot (read by the
 * match callbacks with acquire), then add the node unless the key exists.
 */
static int publish(struct cds_lfht *ht, struct cds_lfht_node *node,
		   uint64_t *slot, uint64_t key, cds_lfht_match_fct match)
{
	struct cds_lfht_node *got;

	cds_lfht_node_init(node);
	__atomic_store_n(slot, key, __ATOMIC_RELEASE);
	urcu_qsbr_read_lock();
	got = cds_lfht_add_unique(ht, hash_u64(key), match, &key, node);
	urcu_qsbr_read_unlock();
	if (got == node)
		return 0;
	__atomic_store_n(slot, 0, __ATOMIC_RELAXED); /* never published */
	return -EEXIST;
}

int wcm_conn_table_insert(struct wcm_conn_table *t, struct wcm_conn_entry *e,
			  uint64_t id)
{
	int ret;

	if (!t || !e || !id)
		return -EINVAL;
	if (e->flags)
		return -EALREADY;
	ret = publish(t->by_id, &e->id_node, &e->id, id, match_id);
	if (ret)
		return ret;
	e->flags = ENTRY_INSERTED;
	__atomic_add_fetch(&t->count, 1, __ATOMIC_RELEASE);
	return 0;
}

int wcm_conn_table_bind_qp(struct wcm_conn_table *t, struct wcm_conn_entry *e,
			   uint32_t dev_index, uint32_t qp_num)
{
	int ret;

	if (!t || !e || qp_num > 0xFFFFFFu)
		return -EINVAL;
	if (!(e->flags & ENTRY_INSERTED))
		return -ENOENT;
	if (e->flags & ENTRY_WAS_BOUND)
		return -EALREADY;
	ret = publish(t->by_qp, &e->qp_node, &e->qp_key,
		      qp_key(dev_index, qp_num), match_qp);
	if (ret)
		return ret;
	e->flags |= ENTRY_BOUND | ENTRY_WAS_BOUND;
	return 0;
}

int wcm_conn_table_unbind_qp(struct wcm_conn_table *t, struct wcm_conn_entry *e)
{
	int ret;

	if (!t || !e)
		return -EINVAL;
	if (!(e->flags & ENTRY_BOUND))
		return -ENOENT;
	urcu_qsbr_read_lock();
	ret = cds_lfht_del(t->by_qp, &e->qp_node);
	urcu_qsbr_read_unlock();
	e->flags &= ~ENTRY_BOUND;
	return ret ? -ENOENT : 0;
}

static void entry_free_rcu(struct rcu_head *head)
{
	struct wcm_conn_entry *e =
		caa_container_of(head, struct wcm_conn_entry, rcu);

	(void)__atomic_load_n(&e->retired, __ATOMIC_ACQUIRE);
	wcm_rcu_sync_readers();
	e->free_fn(e);
}

int wcm_conn_table_remove(struct wcm_conn_table *t, struct wcm_conn_entry *e,
			  wcm_conn_entry_free_fn free_fn)
{
	int ret;

	if (!t || !e || !free_fn)
		return -EINVAL;
	if (!(e->flags & ENTRY_INSERTED))
		return -ENOENT;
	ret = wcm_conn_table_unbind_qp(t, e);
	if (ret && ret != -ENOENT)
		return ret;
	urcu_qsbr_read_lock();
	ret = cds_lfht_del(t->by_id, &e->id_node);
	urcu_qsbr_read_unlock();
	if (ret)
		return -ENOENT;
	e->flags = ENTRY_REMOVED;
	e->free_fn = free_fn;
	__atomic_sub_fetch(&t->count, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&e->retired, 1, __ATOMIC_RELEASE);
	urcu_qsbr_call_rcu(&e->rcu, entry_free_rcu);
	return 0;
}

static struct cds_lfht_node *find(struct cds_lfht *ht, uint64_t key,
				  cds_lfht_match_fct match)
{
	struct cds_lfht_iter iter;

	cds_lfht_lookup(ht, hash_u64(key), match, &key, &iter);
	return cds_lfht_iter_get_node(&iter);
}

struct wcm_conn_entry *wcm_conn_table_lookup(struct wcm_conn_table *t,
					     uint64_t id)
{
	struct cds_lfht_node *node;

	if (!t || !id)
		return NULL;
	node = find(t->by_id, id, match_id);
	return node ? caa_container_of(node, struct wcm_conn_entry, id_node)
		    : NULL;
}

struct wcm_conn_entry *wcm_conn_table_lookup_qp(struct wcm_conn_table *t,
						uint32_t dev_index,
						uint32_t qp_num)
{
	struct cds_lfht_node *node;

	if (!t)
		return NULL;
	node = find(t->by_qp, qp_key(dev_index, qp_num), match_qp);
	return node ? caa_container_of(node, struct wcm_conn_entry, qp_node)
		    : NULL;
}

uint64_t wcm_conn_entry_id(const struct wcm_conn_entry *e)
{
	return __atomic_load_n(&e->id, __ATOMIC_ACQUIRE);
}
