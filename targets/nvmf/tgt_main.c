/*
 * targets/nvmf/tgt_main.c - wharf-nvmf-tgt: parse the configuration,
 * start the RDMA binding, then wait for signals on the main thread
 * (blocked in every shard thread): SIGUSR1 prints a stats line,
 * SIGINT / SIGTERM shut down cleanly and print the final stats line.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "targets/nvmf/tgt_main.h"

static void print_stats(const struct nvmf_rdma *r, const char *when)
{
	struct nvmf_rdma_stats s = {.size = sizeof(s)};
	struct nvmf_tgt_stats t;

	nvmf_rdma_get_stats(r, &s, &t);
	printf("wharf-nvmf-tgt: stats%s: ctrls=%llu queues=%llu reqs=%llu "
	       "held=%llu bufs=%llu ctrls_created=%llu connects_failed=%llu "
	       "kato_expired=%llu dropped=%llu accepted=%llu rejected=%llu "
	       "capsules=%llu reads=%llu writes=%llu responses=%llu "
	       "responses_inv=%llu buf_waits=%llu wc_errors=%llu kills=%llu "
	       "cm_requests=%llu deferred=%llu deferred_total=%llu "
	       "deferred_accepted=%llu deferred_timed_out=%llu "
	       "rejected_busy=%llu cm_failed=%llu\n",
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
	       (unsigned long long)s.buf_waits, (unsigned long long)s.wc_errors,
	       (unsigned long long)s.kills, (unsigned long long)s.cm_requests,
	       (unsigned long long)s.deferred,
	       (unsigned long long)s.deferred_total,
	       (unsigned long long)s.deferred_accepted,
	       (unsigned long long)s.deferred_timed_out,
	       (unsigned long long)s.rejected_busy,
	       (unsigned long long)s.cm_failed);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct tgt_args a;
	struct nvmf_rdma *r = NULL;
	char err[512] = "";
	sigset_t set;
	int rc, sig;

	rc = tgt_args_parse(&a, argc, argv);
	if (rc) {
		nvmf_config_free(&a.cfg);
		return rc > 0 ? 0 : 2;
	}
	/* Every thread the binding starts inherits the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	rc = nvmf_rdma_create(&a.cfg, &a.opts, &r, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "wharf-nvmf-tgt: %s\n",
			err[0] ? err : strerror(-rc));
		nvmf_config_free(&a.cfg);
		return 1;
	}
	for (size_t i = 0; i < a.cfg.nlisten; i++)
		printf("wharf-nvmf-tgt: listening on %s port %u\n",
		       a.cfg.listen[i].addr, nvmf_rdma_listen_port(r, i));
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (sig == SIGUSR1) {
			print_stats(r, "");
			continue;
		}
		break;
	}
	printf("wharf-nvmf-tgt: %s, shutting down\n",
	       sig == SIGINT ? "SIGINT" : "SIGTERM");
	print_stats(r, " at exit");
	rc = nvmf_rdma_destroy(r);
	nvmf_config_free(&a.cfg);
	return rc ? 1 : 0;
}
