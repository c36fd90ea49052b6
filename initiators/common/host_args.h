/*
 * initiators/common/host_args.h - the command-line options of the
 * programs on the NVMe-oF host module (wharf-nvmf-perf, wharf-nbd,
 * wharf-ublk) that say which controller to connect to, as whom, and how
 * to recover it.  nvme-cli's names, short forms and units (seconds)
 * throughout, so that what a person types to `nvme connect` means the
 * same here; one spelling, one check and one usage text for all three.
 */
#ifndef WHARF_INITIATORS_COMMON_HOST_ARGS_H
#define WHARF_INITIATORS_COMMON_HOST_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <wharf/nvmf_host.h>

#include "cli/cli.h"

#ifdef __cplusplus
extern "C" {
#endif

/* getopt_long codes of the shared options without a short form. */
enum host_args_opt {
	HOST_OPT_NSID = 0x1000,
	HOST_OPT_SHARDS,
	HOST_OPT_VERSION,
};

/* nvme-cli's short forms: -a traddr, -s trsvcid, -n nqn, -q hostnqn,
 * -I hostid, -i nr-io-queues, -k keep-alive-tmo, -c reconnect-delay,
 * -l ctrl-loss-tmo, -F fast_io_fail_tmo, -S dhchap-secret, -C
 * dhchap-ctrl-secret.  A program's own short options go after these. */
#define HOST_ARGS_SHORTOPTS "a:s:n:q:I:i:k:c:l:F:S:C:"

/* The shared entries, for a program's struct option table; nvme-cli's
 * long names (--nqn, --nr-io-queues) and wharf's (--subnqn, --queues)
 * are the same option. */
/* clang-format off */
#define HOST_ARGS_LONGOPTS                                               \
	{"traddr", required_argument, NULL, 'a'},                        \
	{"trsvcid", required_argument, NULL, 's'},                       \
	{"subnqn", required_argument, NULL, 'n'},                        \
	{"nqn", required_argument, NULL, 'n'},                           \
	{"hostnqn", required_argument, NULL, 'q'},                       \
	{"hostid", required_argument, NULL, 'I'},                        \
	{"nsid", required_argument, NULL, HOST_OPT_NSID},                \
	{"queues", required_argument, NULL, 'i'},                        \
	{"nr-io-queues", required_argument, NULL, 'i'},                  \
	{"shards", required_argument, NULL, HOST_OPT_SHARDS},            \
	{"keep-alive-tmo", required_argument, NULL, 'k'},                \
	{"reconnect-delay", required_argument, NULL, 'c'},               \
	{"ctrl-loss-tmo", required_argument, NULL, 'l'},                 \
	{"fast_io_fail_tmo", required_argument, NULL, 'F'},              \
	{"dhchap-secret", required_argument, NULL, 'S'},                 \
	{"dhchap-ctrl-secret", required_argument, NULL, 'C'},            \
	{"version", no_argument, NULL, HOST_OPT_VERSION}
/* clang-format on */

/* The usage lines of the shared options, for a program's --help text. */
/* clang-format off */
#define HOST_ARGS_USAGE \
	"  -a, --traddr ADDR        target IPv4/IPv6 address\n" \
	"  -s, --trsvcid PORT       target port (default 4420)\n" \
	"  -n, --nqn, --subnqn NQN  subsystem NQN\n" \
	"  -q, --hostnqn NQN        host NQN (default /etc/nvme/hostnqn)\n" \
	"  -I, --hostid UUID        host ID (default /etc/nvme/hostid, else\n" \
	"                           the UUID of a UUID-form host NQN)\n" \
	"      --nsid N             namespace (default 1)\n" \
	"  -i, --nr-io-queues, --queues N\n" \
	"                           I/O queues (default one per shard)\n" \
	"      --shards N           shard threads (default one per core)\n" \
	"  -k, --keep-alive-tmo S   keep-alive timeout (default 5)\n" \
	"  -c, --reconnect-delay S  after losing the controller, wait this\n" \
	"                           long before reconnecting, doubling\n" \
	"                           after each failed attempt, at most 8x\n" \
	"                           (default 2); I/O in flight is held\n" \
	"  -l, --ctrl-loss-tmo S    give up reconnecting after this long:\n" \
	"                           held I/O fails (default 600; -1: never)\n" \
	"  -F, --fast_io_fail_tmo S fail held I/O after this long while\n" \
	"                           reconnecting goes on (default: never)\n" \
	"  -S, --dhchap-secret KEY  in-band authentication: the host's\n" \
	"                           DH-HMAC-CHAP secret, DHHC-1:XX:...:\n" \
	"  -C, --dhchap-ctrl-secret KEY\n" \
	"                           the controller's: bidirectional\n" \
	"  Times are seconds, as nvme-cli's, with up to three decimals; 0\n" \
	"  is the default, as with nvme-cli (a loss is final with -l 0.001).\n"
/* clang-format on */

/* The shared options' values, each program's struct holds one. */
struct host_args {
	const char *traddr;  /* required */
	const char *trsvcid; /* default "4420" */
	const char *subnqn;
	const char *hostnqn; /* NULL: the library's default */
	bool has_hostid;     /* --hostid given: hostid holds it */
	uint8_t hostid[16];
	uint32_t nsid;	 /* default 1 */
	unsigned queues; /* 0: one per shard */
	unsigned shards; /* 0: the context default */
	/* The recovery options in the library's terms (ms, with
	 * WHARF_NVMF_HOST_TMO_INFINITE); 0: not given (or 0), the
	 * library's default. */
	uint32_t kato_ms;
	uint32_t reconnect_delay_ms;
	uint32_t ctrl_loss_tmo_ms;
	uint32_t fast_io_fail_tmo_ms;
	/* DH-HMAC-CHAP secrets (checked to be DHHC-1 text), or NULL. */
	const char *dhchap_secret, *dhchap_ctrl_secret;
};

/** host_args_init() - the shared options' defaults into @h. */
void host_args_init(struct host_args *h);

/**
 * host_args_opt() - getopt_long's @opt with its @val, when it is one of
 * the shared options (HOST_OPT_VERSION is the program's to handle).
 *
 * Times are seconds as nvme-cli takes them, with up to three decimals
 * (0.5 is 500 ms).  0 is the default, as nvme-cli leaves a 0 out of the
 * kernel's options; --ctrl-loss-tmo -1 reconnects forever,
 * --fast_io_fail_tmo -1 never fails held I/O early (its default).
 *
 * Return: 1 when taken; 0 when @opt is not one of them; -EINVAL when
 * @val is not valid for it (a port above 65535, nsid 0 or FFFFFFFFh,
 * queues or shards 0 or above 1024, a host ID that is not a UUID, a time
 * that is not a number of seconds or is above 30 days, a secret not in the
 * DHHC-1 form).
 */
int host_args_opt(struct host_args *h, int opt, const char *val);

/**
 * host_args_parse() - cli_parse() over @argv with @longopts (which hold
 * HOST_ARGS_LONGOPTS) and HOST_ARGS_SHORTOPTS followed by @shortopts
 * (the program's own, at least "h"): the shared options into @h, every
 * other one to @own with @arg.
 * Return: as cli_parse().
 */
int host_args_parse(int argc, char **argv, const char *shortopts,
		    const struct option *longopts, struct host_args *h,
		    cli_opt_fn own, void *arg, char *err, size_t errlen);

/**
 * host_args_apply() - the shared options into the library's connect
 * options @o (already through wharf_nvmf_host_opts_init()): the NQNs,
 * the host ID, the queue count and the recovery options.  @h must stay
 * alive until @o has been used (its strings and host ID are pointed
 * to).
 */
void host_args_apply(const struct host_args *h, struct wharf_nvmf_host_opts *o);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_COMMON_HOST_ARGS_H */
