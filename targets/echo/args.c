/*
 * targets/echo/args.c - wharf-echo's command line (ucmatose's and
 * udaddy's flags) and address resolution.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "targets/echo/echo.h"

void echo_usage(FILE *f)
{
	fprintf(f,
		"usage: wharf-echo [-s server_address] [-b bind_address] "
		"[-c connections]\n"
		"                  [-C message_count] [-S message_size] "
		"[-p port] [-T shards]\n"
		"                  [--ud] [--timeout seconds] "
		"[--handshake-cap N] [--hold-ms MS]\n"
		"                  [--disconnect-ms MS] [-v]\n"
		"\n"
		"The exchange of rdmacm-utils' ucmatose (RC, default) or, with "
		"--ud, udaddy,\n"
		"over wharf's connection manager.  With -s it is the client, "
		"otherwise the\n"
		"server.\n"
		"\n"
		"  -s ADDR     connect to ADDR (client role)\n"
		"  -b ADDR     bind to ADDR (server: listen address, default "
		"any)\n"
		"  -c N        connections (default 1)\n"
		"  -C N        messages per connection (default 10)\n"
		"  -S N        message size in bytes (default 100)\n"
		"  -p PORT     port (default 7471, with --ud 7174)\n"
		"  -T N        shards (default: the library's choice)\n"
		"  --ud        udaddy's exchange (RDMA_PS_UDP, SIDR lookup)\n"
		"  --timeout S give up after S seconds (default 120), exit 1\n"
		"  --handshake-cap N\n"
		"              server: handshakes a shard runs at once; later "
		"requests\n"
		"              wait for room (default: the library's, 1024)\n"
		"  --hold-ms MS\n"
		"              server (RC): hold each connection MS ms after "
		"its exchange\n"
		"              before disconnecting (default 0), so that a "
		"fault can be\n"
		"              timed to meet the disconnects\n"
		"  --disconnect-ms MS\n"
		"              RC: wait MS ms for the peer's DREP before a "
		"forced teardown\n"
		"              (default: the library's, 20000)\n"
		"  -v          log progress to stderr, each line stamped "
		"with\n"
		"              CLOCK_MONOTONIC seconds\n"
		"  --version   the version\n"
		"  -h, --help  this text\n"
		"\n"
		"Exit status: 0 when every connection completed its exchange, "
		"1 otherwise,\n"
		"2 for bad arguments.\n");
}

static int num(const char *s, unsigned *out)
{
	uint32_t v;

	if (cli_u32(s, 0, 0x7fffffff, &v))
		return -EINVAL;
	*out = v;
	return 0;
}

/* 0: run; 1: help printed; -EINVAL: bad arguments (usage printed). */
int echo_args_parse(struct echo_args *a, int argc, char **argv)
{
	static const struct option longs[] = {
		{"ud", no_argument, NULL, 'u'},
		{"timeout", required_argument, NULL, 't'},
		{"handshake-cap", required_argument, NULL, 'H'},
		{"hold-ms", required_argument, NULL, 'M'},
		{"disconnect-ms", required_argument, NULL, 'D'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int op, err = 0;

	memset(a, 0, sizeof(*a));
	a->conns = 1;
	a->count = 10;
	a->size = 100;
	a->timeout_s = 120;
	while ((op = getopt_long(argc, argv, "s:b:c:C:S:p:T:vh", longs,
				 NULL)) != -1) {
		switch (op) {
		case 's':
			a->dst = optarg;
			break;
		case 'b':
			a->bind = optarg;
			break;
		case 'c':
			err = num(optarg, &a->conns);
			break;
		case 'C':
			err = num(optarg, &a->count);
			break;
		case 'S':
			err = num(optarg, &a->size);
			break;
		case 'p':
			a->port = optarg;
			break;
		case 'T':
			err = num(optarg, &a->shards);
			break;
		case 'u':
			a->ud = true;
			break;
		case 't':
			err = num(optarg, &a->timeout_s);
			break;
		case 'H':
			err = num(optarg, &a->handshake_cap);
			break;
		case 'M':
			err = num(optarg, &a->hold_ms);
			break;
		case 'D':
			err = num(optarg, &a->disconnect_ms);
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'h':
			echo_usage(stdout);
			return 1;
		case 'V':
			cli_version(stdout, "wharf-echo");
			return 1;
		default:
			err = -EINVAL;
			break;
		}
		if (err)
			break;
	}
	if (!err && (optind != argc || !a->conns || !a->size || !a->timeout_s))
		err = -EINVAL;
	if (err) {
		echo_usage(stderr);
		return -EINVAL;
	}
	if (!a->port)
		a->port = a->ud ? ECHO_UD_PORT : ECHO_RC_PORT;
	return 0;
}

int echo_resolve(const char *host, const char *port, bool passive,
		 struct sockaddr_storage *out)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM};
	struct addrinfo *res;
	int rc;

	if (passive)
		hints.ai_flags = AI_PASSIVE;
	if (!host && passive)
		hints.ai_family = AF_INET;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		fprintf(stderr, "wharf-echo: %s: %s\n", host ? host : "(any)",
			gai_strerror(rc));
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}
