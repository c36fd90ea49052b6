/*
 * The public reader calls of <wharf/cm.h>: an application thread that looks
 * connections up registers through them (conn_rcu.h does the work).
 */
#include <urcu/urcu-qsbr.h>

#include "cm/cm.h"
#include "cm/conn_rcu.h"

int wharf_rcu_register_thread(void)
{
	return wcm_rcu_register_thread();
}

void wharf_rcu_unregister_thread(void)
{
	wcm_rcu_unregister_thread();
}

void wharf_rcu_read_lock(void)
{
	urcu_qsbr_read_lock();
}

void wharf_rcu_read_unlock(void)
{
	urcu_qsbr_read_unlock();
}

void wharf_rcu_quiescent_state(void)
{
	wcm_rcu_quiescent_state();
}

void wharf_rcu_thread_offline(void)
{
	wcm_rcu_thread_offline();
}

void wharf_rcu_thread_online(void)
{
	wcm_rcu_thread_online();
}
