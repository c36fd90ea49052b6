/*
 * cm/conn_rcu.h - QSBR reader threads for the cm lookup tables.
 *
 * The cm tables (conn_table.h) use liburcu's QSBR flavor: a reader costs
 * nothing, and a removed entry is freed once every registered thread has
 * announced a quiescent state (a point where it holds no reference into a
 * table). Threads that read the tables register, announce quiescent states
 * and go offline through these wrappers, not through urcu_qsbr_* directly.
 *
 * Why wrappers: besides calling liburcu, each announcement publishes
 * "everything this thread did before this point" with a C11 release store
 * to a slot owned by the thread, and the callbacks that free removed
 * entries read every slot with an acquire load first
 * (wcm_rcu_sync_readers()). liburcu already orders these accesses, but
 * inside an uninstrumented library; the release/acquire pair states the
 * same ordering in our code, so ThreadSanitizer sees it and checks
 * everything else. On x86 both are plain moves; the free path additionally
 * takes a mutex and reads one word per registered thread.
 *
 * Read-side critical sections: urcu_qsbr_read_lock() / _unlock() (free in
 * QSBR); a reference obtained inside one stays valid until the thread's
 * next wcm_rcu_quiescent_state() or wcm_rcu_thread_offline().
 */
#ifndef WHARF_CM_CONN_RCU_H
#define WHARF_CM_CONN_RCU_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * wcm_rcu_register_thread() - make the calling thread a QSBR reader.
 *
 * The thread starts online. It must announce quiescent states regularly
 * (a shard: once per loop iteration) and go offline before blocking, or
 * grace periods, hence frees, stall.
 *
 * Return: 0; -EALREADY if already registered; -ENOMEM.
 * Context: any thread not yet registered; may allocate; non-blocking.
 */
int wcm_rcu_register_thread(void);

/**
 * wcm_rcu_unregister_thread() - stop being a reader (before thread exit).
 *
 * Does nothing if the thread is not registered.
 * Context: a registered thread, outside read-side critical sections;
 * takes a mutex briefly.
 */
void wcm_rcu_unregister_thread(void);

/**
 * wcm_rcu_quiescent_state() - the thread holds no table references now.
 *
 * Context: a registered, online thread, outside read-side critical
 * sections; non-blocking.
 */
void wcm_rcu_quiescent_state(void);

/**
 * wcm_rcu_thread_offline() - quiescent until wcm_rcu_thread_online().
 *
 * Use before blocking (waiting for events, joining threads).
 * Context: a registered, online thread, outside read-side critical
 * sections; non-blocking.
 */
void wcm_rcu_thread_offline(void);

/**
 * wcm_rcu_thread_online() - end an offline period.
 *
 * Context: a registered, offline thread; non-blocking.
 */
void wcm_rcu_thread_online(void);

/**
 * wcm_rcu_attach_thread() - publish for a thread registered elsewhere.
 *
 * For threads that another module registered with urcu_qsbr directly (the
 * core's shard threads): gives the thread a slot, so that
 * wcm_rcu_publish() makes its accesses visible to wcm_rcu_sync_readers(),
 * without registering it with liburcu a second time.
 *
 * Return: 0; -EALREADY if the thread has a slot; -ENOMEM.
 * Context: the thread itself; may allocate; non-blocking.
 */
int wcm_rcu_attach_thread(void);

/**
 * wcm_rcu_detach_thread() - drop the slot of wcm_rcu_attach_thread().
 *
 * Does nothing for a thread without a slot or one registered with
 * wcm_rcu_register_thread().
 * Context: the thread itself; takes a mutex briefly.
 */
void wcm_rcu_detach_thread(void);

/**
 * wcm_rcu_publish() - publish everything this thread did so far.
 *
 * An attached thread calls it before each of its quiescent states (the
 * registered ones do it inside wcm_rcu_quiescent_state()).  No effect on a
 * thread without a slot.
 * Context: any thread; non-blocking.
 */
void wcm_rcu_publish(void);

/**
 * wcm_rcu_sync_readers() - acquire what every reader has published.
 *
 * Called by free callbacks (after the grace period) before touching a
 * removed entry; conn_table.c does it for its entries.
 * Context: any thread; takes a mutex briefly.
 */
void wcm_rcu_sync_readers(void);

/**
 * wcm_rcu_barrier() - wait until every free scheduled so far has run.
 *
 * Context: any thread, outside read-side critical sections (a registered
 * thread is put offline meanwhile); blocks for at least a grace period.
 */
void wcm_rcu_barrier(void);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CM_CONN_RCU_H */
