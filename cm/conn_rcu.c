/*
 * cm/conn_rcu.c - QSBR reader registration with published quiescent
 * states (see conn_rcu.h for why).
 */
#include "cm/conn_rcu.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <urcu/urcu-qsbr.h>

/* One per registered thread, on its own cache line. */
struct wcm_rcu_slot {
	unsigned long seq; /* release-stored at each announcement */
	struct wcm_rcu_slot *next;
} __attribute__((aligned(64)));

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static struct wcm_rcu_slot *slots;

static __thread struct wcm_rcu_slot *self;
static __thread unsigned long self_seq;
/* The slot came from wcm_rcu_attach_thread(): liburcu is not ours. */
static __thread int self_attached;

/* Publish everything this thread did so far to wcm_rcu_sync_readers(). */
static void publish(void)
{
	if (self)
		__atomic_store_n(&self->seq, ++self_seq, __ATOMIC_RELEASE);
}

static int slot_add(void)
{
	struct wcm_rcu_slot *slot;

	if (self)
		return -EALREADY;
	slot = aligned_alloc(64, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	slot->seq = 0;
	pthread_mutex_lock(&slots_lock);
	slot->next = slots;
	slots = slot;
	pthread_mutex_unlock(&slots_lock);
	self = slot;
	return 0;
}

static void slot_del(void)
{
	struct wcm_rcu_slot **p;

	pthread_mutex_lock(&slots_lock);
	for (p = &slots; *p; p = &(*p)->next) {
		if (*p == self) {
			*p = self->next;
			break;
		}
	}
	pthread_mutex_unlock(&slots_lock);
	free(self);
	self = NULL;
}

int wcm_rcu_register_thread(void)
{
	int ret = slot_add();

	if (ret)
		return ret;
	urcu_qsbr_register_thread();
	return 0;
}

int wcm_rcu_attach_thread(void)
{
	int ret = slot_add();

	if (!ret)
		self_attached = 1;
	return ret;
}

void wcm_rcu_detach_thread(void)
{
	if (!self || !self_attached)
		return;
	publish();
	slot_del();
	self_attached = 0;
}

void wcm_rcu_publish(void)
{
	publish();
}

void wcm_rcu_unregister_thread(void)
{
	if (!self || self_attached)
		return;
	/* A free may run as soon as liburcu sees us gone: publish first. */
	publish();
	urcu_qsbr_unregister_thread();
	/* Then the mutex orders the rest before any later free. */
	slot_del();
}

void wcm_rcu_quiescent_state(void)
{
	publish();
	urcu_qsbr_quiescent_state();
}

void wcm_rcu_thread_offline(void)
{
	publish();
	urcu_qsbr_thread_offline();
}

void wcm_rcu_thread_online(void)
{
	urcu_qsbr_thread_online();
}

void wcm_rcu_sync_readers(void)
{
	struct wcm_rcu_slot *s;

	pthread_mutex_lock(&slots_lock);
	for (s = slots; s; s = s->next)
		(void)__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&slots_lock);
}

void wcm_rcu_barrier(void)
{
	publish();
	urcu_qsbr_barrier();
}
