/*
 * targets/nvmf/tgt_main.c - wharf-nvmf-tgt: parse the configuration,
 * start the RDMA binding, then wait for signals on the main thread
 * (blocked in every shard thread): SIGUSR1 prints a stats line,
 * SIGINT / SIGTERM shut down cleanly and print the final stats line.
 */
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "targets/nvmf/rpc.h"
#include "targets/nvmf/tgt_main.h"

static void print_stats(const struct nvmf_rdma *r, const char *when)
{
	struct nvmf_rdma_stats s = {.size = sizeof(s)};
	struct nvmf_tgt_stats t;

	nvmf_rdma_get_stats(r, &s, &t);
	fprintf(stderr,
		"wharf-nvmf-tgt: stats%s: ctrls=%llu queues=%llu reqs=%llu "
		"held=%llu bufs=%llu ctrls_created=%llu connects_failed=%llu "
		"kato_expired=%llu dropped=%llu accepted=%llu rejected=%llu "
		"capsules=%llu reads=%llu writes=%llu responses=%llu "
		"responses_inv=%llu buf_waits=%llu wc_errors=%llu kills=%llu "
		"cm_requests=%llu deferred=%llu deferred_total=%llu "
		"deferred_accepted=%llu deferred_timed_out=%llu "
		"rejected_busy=%llu cm_failed=%llu backend_ops=%llu "
		"backend_errors=%llu backend_waits=%llu backend_fixed=%llu "
		"backend_inflight=%llu bounces=%llu audit_held=%llu "
		"media_errors=%llu "
		"capacity_errors=%llu write_protect_errors=%llu "
		"internal_errors=%llu auth_ok=%llu auth_failed=%llu\n",
		when, (unsigned long long)t.ctrls, (unsigned long long)s.queues,
		(unsigned long long)t.reqs, (unsigned long long)t.held,
		(unsigned long long)s.bufs_in_use,
		(unsigned long long)t.ctrls_created,
		(unsigned long long)t.connects_failed,
		(unsigned long long)t.kato_expired,
		(unsigned long long)t.dropped, (unsigned long long)s.accepted,
		(unsigned long long)s.rejected, (unsigned long long)s.capsules,
		(unsigned long long)s.rdma_reads,
		(unsigned long long)s.rdma_writes,
		(unsigned long long)s.responses,
		(unsigned long long)s.responses_inv,
		(unsigned long long)s.buf_waits,
		(unsigned long long)s.wc_errors, (unsigned long long)s.kills,
		(unsigned long long)s.cm_requests,
		(unsigned long long)s.deferred,
		(unsigned long long)s.deferred_total,
		(unsigned long long)s.deferred_accepted,
		(unsigned long long)s.deferred_timed_out,
		(unsigned long long)s.rejected_busy,
		(unsigned long long)s.cm_failed,
		(unsigned long long)s.backend_ops,
		(unsigned long long)s.backend_errors,
		(unsigned long long)s.backend_waits,
		(unsigned long long)s.backend_fixed,
		(unsigned long long)s.backend_inflight,
		(unsigned long long)s.bounces, (unsigned long long)s.audit_held,
		(unsigned long long)t.media_errors,
		(unsigned long long)t.capacity_errors,
		(unsigned long long)t.write_protect_errors,
		(unsigned long long)t.internal_errors,
		(unsigned long long)t.auth_ok,
		(unsigned long long)t.auth_failed);
	fflush(stderr);
}

/*
 * The signals the main thread takes with sigwait() are blocked in every
 * thread the binding starts, but not in liburcu's hash table resize
 * worker (before liburcu 0.14 it unblocks SIGUSR1, its signal flavor's
 * SIGRCU: see wharf_cm_create()). A SIGUSR1 sent while the main thread
 * is not in sigwait() could land there and end the target. A handler
 * makes that harmless: wherever it runs, it sends the signal on to the
 * main thread, where it waits (blocked, pending) for the next sigwait().
 */
static pid_t main_tid;

/* nvmf_get_stats' "transport" member: the binding's counters. */
static void rpc_stats(void *arg,
		      void (*add)(void *ctx, const char *name, uint64_t v),
		      void *ctx)
{
	struct nvmf_rdma_stats s = {.size = sizeof(s)};

	nvmf_rdma_get_stats(arg, &s, NULL);
#define PUT(f) add(ctx, #f, s.f)
	PUT(queues);
	PUT(bufs_in_use);
	PUT(accepted);
	PUT(rejected);
	PUT(capsules);
	PUT(rdma_reads);
	PUT(rdma_writes);
	PUT(responses);
	PUT(responses_inv);
	PUT(buf_waits);
	PUT(wc_errors);
	PUT(kills);
	PUT(backend_ops);
	PUT(backend_errors);
	PUT(backend_waits);
	PUT(backend_inflight);
	PUT(bounces);
	PUT(audit_held);
	PUT(cm_requests);
	PUT(deferred);
	PUT(deferred_total);
	PUT(deferred_timed_out);
	PUT(rejected_busy);
	PUT(cm_failed);
#undef PUT
}

static int rpc_listen(void *arg, const struct nvmf_cfg_listen *l,
		      uint16_t *listener)
{
	int rc = nvmf_rdma_listen(arg, l, listener);

	if (!rc)
		fprintf(stderr, "wharf-nvmf-tgt: listening on %s port %u\n",
			l->addr, l->port);
	fflush(stderr);
	return rc;
}

static int rpc_unlisten(void *arg, uint16_t listener, unsigned *disconnected)
{
	return nvmf_rdma_unlisten(arg, listener, disconnected);
}

static void forward_to_main(int sig)
{
	int saved = errno;

	syscall(SYS_tgkill, getpid(), main_tid, sig);
	errno = saved;
}

int main(int argc, char **argv)
{
	struct tgt_args a;
	struct nvmf_rdma *r = NULL;
	struct nvmf_rpc_server *rpc = NULL;
	struct nvmf_rpc_env env = {0};
	char err[512] = "";
	sigset_t set;
	int rc, sig;

	rc = tgt_args_parse(&a, argc, argv);
	if (rc) {
		nvmf_config_free(&a.cfg);
		return rc > 0 ? 0 : 2;
	}
	/* Every thread the binding starts inherits the mask; a thread that
	 * unblocks one of them anyway forwards it (forward_to_main()). */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	main_tid = gettid();
	{
		struct sigaction sa = {.sa_handler = forward_to_main,
				       .sa_flags = SA_RESTART};

		sigfillset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGUSR1, &sa, NULL);
	}
	rc = nvmf_rdma_create(&a.cfg, &a.opts, &r, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "wharf-nvmf-tgt: %s\n",
			err[0] ? err : strerror(-rc));
		nvmf_config_free(&a.cfg);
		return 1;
	}
	/* Read before the management thread may change the listeners;
	 * printed after it started ("listening" means ready, RPC too). */
	uint16_t ports[NVMF_CFG_MAX_LISTEN];
	for (size_t i = 0; i < a.cfg.nlisten; i++)
		ports[i] = nvmf_rdma_listen_port(r, i);
	if (a.rpc) {
		env.tgt = nvmf_rdma_target(r);
		env.cfg = &a.cfg;
		env.file_ns = nvmf_rdma_file_ns(r);
		env.stats = rpc_stats;
		env.listen = rpc_listen;
		env.unlisten = rpc_unlisten;
		env.arg = r;
		rc = nvmf_rpc_server_start(a.rpc, &env, &rpc);
		if (rc) {
			fprintf(stderr, "wharf-nvmf-tgt: --rpc %s: %s\n", a.rpc,
				strerror(-rc));
			nvmf_rdma_destroy(r);
			nvmf_config_free(&a.cfg);
			return 1;
		}
		fprintf(stderr, "wharf-nvmf-tgt: management RPC on %s\n",
			a.rpc);
	}
	for (size_t i = 0; i < a.cfg.nlisten; i++)
		fprintf(stderr, "wharf-nvmf-tgt: listening on %s port %u\n",
			a.cfg.listen[i].addr, ports[i]);
	fflush(stderr);
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (sig == SIGUSR1) {
			print_stats(r, "");
			continue;
		}
		break;
	}
	fprintf(stderr, "wharf-nvmf-tgt: %s, shutting down\n",
		sig == SIGINT ? "SIGINT" : "SIGTERM");
	nvmf_rpc_server_stop(rpc); /* no change after this point */
	print_stats(r, " at exit");
	rc = nvmf_rdma_destroy(r);
	nvmf_config_free(&a.cfg);
	return rc ? 1 : 0;
}
