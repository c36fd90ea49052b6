/*
 * cm/conn_table.h - connection IDs and the global RCU lookup tables.
 *
 * Connection ID (64 bits):
 *
 *   bits 63..48  owner shard index (0..65535)
 *   bits 47..0   sequence number within that shard, 1..2^48-1
 *
 * 0 is never a valid ID. Each shard generates its own sequence numbers
 * (no shared counter); the owner shard of any ID is known without a lookup.
 * At a million connections per second a shard runs out of sequence numbers
 * after about nine years; then it gets -EOVERFLOW, never a reused ID.
 *
 * Two lock-free hash tables (liburcu cds_lfht, bound to the QSBR flavor)
 * hold the same entries: one keyed by connection ID, one by (device index,
 * QP number) for completions, which carry only wc.qp_num. Entries are
 * intrusive: the connection embeds a struct wcm_conn_entry.
 *
 * Writers (the owner shard of each entry) insert, bind, unbind and remove;
 * writers of different entries run concurrently. Readers on any registered
 * thread (conn_rcu.h) look up under urcu_qsbr_read_lock(); an entry found
 * stays valid (not freed) until that thread's next quiescent state, even if
 * it is removed meanwhile. Removal frees through the caller's callback
 * after a grace period.
 */
#ifndef WHARF_CM_CONN_TABLE_H
#define WHARF_CM_CONN_TABLE_H

#include <stdint.h>

#include <urcu/urcu-qsbr.h>
#include <urcu/rculfhash.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WCM_CONN_ID_SHARD_SHIFT 48
#define WCM_CONN_ID_SEQ_MASK	((UINT64_C(1) << WCM_CONN_ID_SHARD_SHIFT) - 1)
#define WCM_CONN_ID_SHARD_MAX	0xFFFFu

/*
 * wcm_conn_id_shard() / wcm_conn_id_seq() - the fields of a connection ID.
 * Context: any thread; pure, non-blocking.
 */
static inline unsigned int wcm_conn_id_shard(uint64_t id)
{
	return (unsigned int)(id >> WCM_CONN_ID_SHARD_SHIFT);
}

static inline uint64_t wcm_conn_id_seq(uint64_t id)
{
	return id & WCM_CONN_ID_SEQ_MASK;
}

/**
 * wcm_conn_id_make() - build a connection ID.
 * @shard: the owner shard, 0..65535.
 * @seq: the sequence number, 1..2^48-1.
 * @id: receives the ID.
 *
 * Return: 0; -EINVAL if @id is NULL or a field is out of range.
 * Context: any thread; pure, non-blocking.
 */
int wcm_conn_id_make(unsigned int shard, uint64_t seq, uint64_t *id);

/* A shard's ID generator; owned by that shard. */
struct wcm_conn_id_gen {
	uint64_t next_seq;
	unsigned int shard;
};

/**
 * wcm_conn_id_gen_init() - start a shard's sequence at 1.
 * @gen: the generator.
 * @shard: the shard, 0..65535.
 *
 * Return: 0; -EINVAL if @gen is NULL or @shard out of range.
 * Context: any thread; pure, non-blocking.
 */
int wcm_conn_id_gen_init(struct wcm_conn_id_gen *gen, unsigned int shard);

/**
 * wcm_conn_id_gen_next() - the next ID of a shard.
 * @gen: the generator.
 * @id: receives the ID.
 *
 * Return: 0; -EINVAL if an argument is NULL; -EOVERFLOW once the 48-bit
 * sequence is exhausted (IDs are never reused).
 * Context: the generator's shard; non-blocking.
 */
int wcm_conn_id_gen_next(struct wcm_conn_id_gen *gen, uint64_t *id);

struct wcm_conn_entry;
typedef void (*wcm_conn_entry_free_fn)(struct wcm_conn_entry *entry);

/*
 * Embed in the connection; zero it before wcm_conn_table_insert(). The
 * fields are the table's: read them through the functions below.
 */
struct wcm_conn_entry {
	struct cds_lfht_node id_node;
	struct cds_lfht_node qp_node;
	struct rcu_head rcu;
	uint64_t id;	 /* key; release-stored before publication */
	uint64_t qp_key; /* (dev_index << 32) | qp_num once bound */
	wcm_conn_entry_free_fn free_fn;
	uint32_t retired; /* release-stored before call_rcu */
	uint32_t flags;	  /* the owner shard's bookkeeping */
};

struct wcm_conn_table;

/**
 * wcm_conn_table_create() - allocate the two tables.
 * @init_size: expected number of connections (rounded up to a power of
 *             two, at least 64); the tables grow and shrink on their own.
 * @out: receives the table.
 *
 * Return: 0; -EINVAL if @out is NULL; -ENOMEM.
 * Context: any thread, registered or not; may allocate; non-blocking.
 */
int wcm_conn_table_create(unsigned long init_size, struct wcm_conn_table **out);

/**
 * wcm_conn_table_destroy() - free an empty table.
 * @t: the table; NULL is a no-op returning 0.
 *
 * Entries removed earlier may still be waiting for their grace period; that
 * is fine, their callbacks do not use the table.
 *
 * Return: 0; -EBUSY if entries are still inserted (nothing is freed).
 * Context: any thread, outside read-side critical sections, once no other
 * thread uses @t; may block briefly (joins liburcu's resize worker).
 */
int wcm_conn_table_destroy(struct wcm_conn_table *t);

/**
 * wcm_conn_table_insert() - publish an entry under an ID.
 * @t: the table.
 * @e: a zeroed entry, owned by the caller until removed.
 * @id: its connection ID (non-zero).
 *
 * Everything the caller wrote to the connection before this call is
 * visible to a reader that finds @e.
 *
 * Return: 0; -EINVAL for NULL arguments or @id 0; -EALREADY if @e was
 * inserted before; -EEXIST if @id is already in the table (@e untouched
 * and not published).
 * Context: a registered, online thread (the connection's owner shard);
 * takes the read lock itself; non-blocking, lock-free.
 */
int wcm_conn_table_insert(struct wcm_conn_table *t, struct wcm_conn_entry *e,
			  uint64_t id);

/**
 * wcm_conn_table_bind_qp() - also publish an entry under its QP.
 * @t: the table.
 * @e: an inserted entry.
 * @dev_index: the device's index in wharf's device list.
 * @qp_num: the QP number (24 bits).
 *
 * Each entry is bound at most once in its life (a node cannot be
 * re-published before a grace period).
 *
 * Return: 0; -EINVAL for a NULL argument or @qp_num above 24 bits;
 * -ENOENT if @e is not inserted (or already removed); -EALREADY if @e was
 * bound before; -EEXIST if another entry holds (@dev_index, @qp_num).
 * Context: a registered, online thread (the owner shard); non-blocking,
 * lock-free.
 */
int wcm_conn_table_bind_qp(struct wcm_conn_table *t, struct wcm_conn_entry *e,
			   uint32_t dev_index, uint32_t qp_num);

/**
 * wcm_conn_table_unbind_qp() - withdraw an entry from the QP table.
 * @t: the table.
 * @e: a bound entry.
 *
 * Use when the QP goes back to the pool before the connection goes away,
 * so that the QP number can be bound to another connection. Readers may
 * still find @e by QP until their next quiescent state.
 *
 * Return: 0; -EINVAL for a NULL argument; -ENOENT if @e is not bound.
 * Context: a registered, online thread (the owner shard); non-blocking,
 * lock-free.
 */
int wcm_conn_table_unbind_qp(struct wcm_conn_table *t,
			     struct wcm_conn_entry *e);

/**
 * wcm_conn_table_remove() - withdraw an entry and free it later.
 * @t: the table.
 * @e: an inserted entry (bound or not).
 * @free_fn: called with @e after a grace period, from liburcu's call_rcu
 *           thread; it owns @e from then on (typically frees the
 *           connection that embeds it). It must not block for long.
 *
 * Return: 0; -EINVAL for a NULL argument; -ENOENT if @e is not inserted
 * or already removed.
 * Context: a registered, online thread (the owner shard); non-blocking.
 */
int wcm_conn_table_remove(struct wcm_conn_table *t, struct wcm_conn_entry *e,
			  wcm_conn_entry_free_fn free_fn);

/**
 * wcm_conn_table_lookup() - find an entry by connection ID.
 * @t: the table.
 * @id: the ID.
 *
 * Return: the entry, or NULL. Valid until the caller's next quiescent
 * state (use container_of to reach the connection).
 * Context: any registered, online thread, under urcu_qsbr_read_lock();
 * non-blocking, wait-free in practice.
 */
struct wcm_conn_entry *wcm_conn_table_lookup(struct wcm_conn_table *t,
					     uint64_t id);

/**
 * wcm_conn_table_lookup_qp() - find an entry by (device, QP number).
 * @t: the table.
 * @dev_index: the device index.
 * @qp_num: the QP number.
 *
 * Return: the entry, or NULL; as wcm_conn_table_lookup().
 * Context: as wcm_conn_table_lookup().
 */
struct wcm_conn_entry *wcm_conn_table_lookup_qp(struct wcm_conn_table *t,
						uint32_t dev_index,
						uint32_t qp_num);

/**
 * wcm_conn_entry_id() - the ID of an entry found by a lookup.
 * @e: the entry.
 *
 * Return: its connection ID.
 * Context: as wcm_conn_table_lookup(); non-blocking.
 */
uint64_t wcm_conn_entry_id(const struct wcm_conn_entry *e);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CM_CONN_TABLE_H */
