/*
 * core/tsan_urcu.c - ThreadSanitizer suppressions for liburcu's own
 * memory, linked into every executable that uses wharf (tools and tests
 * alike: a TSan build of wharf-echo or wharf-nvmf-tgt needs them as much
 * as a unit test does).  Compiled to nothing without TSan.
 *
 * liburcu (Debian's liburcu8) is not TSan-instrumented. It hands its own
 * heap blocks between threads through lock-free queues TSan cannot see:
 * urcu_qsbr_barrier() callocs completion items that its call_rcu worker
 * frees, cds_lfht's resize work items are malloc'd by an updater and freed
 * by the hash table's worker thread. TSan then reports the malloc/free pair
 * as a race. called_from_lib tells TSan to ignore the allocator calls that
 * liburcu itself makes; nothing else: memory allocated or freed by our code
 * (connections freed by our call_rcu callbacks, which run on liburcu's
 * thread but call free() from our code) is still fully checked, and the
 * ordering our code relies on is stated with C11 atomics (see
 * cm/conn_rcu.h, cm/conn_table.c).
 */
#if defined(__SANITIZE_THREAD__)
#define WHARF_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WHARF_TSAN 1
#endif
#endif

#ifdef WHARF_TSAN
const char *__tsan_default_suppressions(void);

const char *__tsan_default_suppressions(void)
{
	return "called_from_lib:liburcu-qsbr.so\n"
	       "called_from_lib:liburcu-cds.so\n"
	       "called_from_lib:liburcu-common.so\n";
}
#endif
