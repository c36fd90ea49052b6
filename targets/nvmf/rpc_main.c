/*
 * targets/nvmf/rpc_main.c - wharf-nvmf-rpc: send one management request
 * to a running wharf-nvmf-tgt (--rpc PATH) and print the answer: the
 * result as JSON on stdout (exit 0), or the JSON-RPC error on stderr
 * (exit 1); exit 2 when the target cannot be reached or does not answer
 * within the timeout.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "targets/nvmf/rpc.h"

static void usage(FILE *f)
{
	fputs("usage: wharf-nvmf-rpc [-s SOCKET] [-t SECONDS] METHOD "
	      "[NAME=VALUE...]\n"
	      "Manage a running wharf-nvmf-tgt (started with --rpc SOCKET) "
	      "over JSON-RPC 2.0.\n"
	      "VALUE is JSON when it parses as JSON (2, true, \"x\"), else a "
	      "string.\n"
	      "\n"
	      "  -s, --socket PATH   the target's socket (default "
	      "/run/wharf-nvmf-tgt.sock)\n"
	      "  -t, --timeout SEC   wait at most SEC for the answer "
	      "(default 10)\n"
	      "      --version       the version\n"
	      "  -h, --help          this text\n"
	      "\n"
	      "Methods:\n"
	      "  rpc_get_methods\n"
	      "  nvmf_get_subsystems\n"
	      "  nvmf_subsystem_get_controllers nqn=NQN\n"
	      "  nvmf_subsystem_get_qpairs nqn=NQN   (each queue: commands, "
	      "errors,\n"
	      "                        latency percentiles and histogram)\n"
	      "  nvmf_get_stats\n"
	      "  nvmf_subsystem_add_ns nqn=NQN nsid=N bdev=ram:SIZE|null:SIZE|"
	      "file:PATH\n"
	      "                        [block_size=512|4096] "
	      "[io=direct|buffered]\n"
	      "  nvmf_subsystem_remove_ns nqn=NQN nsid=N\n"
	      "  nvmf_subsystem_add_host nqn=NQN host=HOSTNQN "
	      "[dhchap_key=DHHC-1:..:]\n"
	      "                        [dhchap_ctrlr_key=DHHC-1:..:] "
	      "[dhchap_hash=sha256|sha384|sha512]\n"
	      "                        [dhchap_dhgroup=null|ffdhe2048.."
	      "ffdhe8192]   (must authenticate)\n"
	      "  nvmf_subsystem_remove_host nqn=NQN host=HOSTNQN   "
	      "(disconnects it)\n"
	      "  nvmf_subsystem_allow_any_host nqn=NQN allow_any_host="
	      "true|false\n"
	      "  save_config [path=FILE]   (the running configuration, in "
	      "the -c format)\n"
	      "  nvmf_create_subsystem nqn=NQN [serial_number=SN] "
	      "[model_number=TEXT]\n"
	      "                        [allow_any_host=true]   (on no "
	      "listener until one is added)\n"
	      "  nvmf_delete_subsystem nqn=NQN   (disconnects its hosts)\n"
	      "  nvmf_subsystem_add_listener nqn=NQN "
	      "listen_address='{\"traddr\":\"ADDR\",\"trsvcid\":\"PORT\"}'\n"
	      "                        (starts listening there if need be)\n"
	      "  nvmf_subsystem_remove_listener nqn=NQN "
	      "listen_address='{...}'\n"
	      "                        (disconnects its hosts there; stops a "
	      "listener nothing uses)\n"
	      "\n"
	      "Exit: 0 result printed; 1 the target answered with an error; "
	      "2 no answer.\n",
	      f);
}

/* One line from @fd within @ms; NULL (errno set) otherwise. */
static char *read_line(int fd, int ms)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		struct timespec t;
		long left;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - ((t.tv_sec - t0.tv_sec) * 1000 +
			     (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			errno = ETIMEDOUT;
			break;
		}
		if (len + 4096 > cap) {
			char *b = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!b)
				break;
			buf = b;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = n ? errno : ECONNRESET;
			break;
		}
		len += (size_t)n;
		buf[len] = '\0';
		if (memchr(buf, '\n', len))
			return buf;
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"timeout", required_argument, NULL, 't'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *path = NVMF_RPC_DEFAULT_SOCKET;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	uint32_t secs = 10;
	char err[512], *req, *line;
	json_t *resp, *v;
	int c, fd, rc;

	while ((c = getopt_long(argc, argv, "+s:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 't':
			if (cli_u32(optarg, 1, 3600, &secs)) {
				fprintf(stderr,
					"wharf-nvmf-rpc: --timeout: 1..3600 "
					"seconds\n");
				return 2;
			}
			break;
		case 'V':
			cli_version(stdout, "wharf-nvmf-rpc");
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fputs("Try 'wharf-nvmf-rpc --help'.\n", stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	req = nvmf_rpc_build_request(argv[optind], argv + optind + 1,
				     argc - optind - 1, 1, err, sizeof(err));
	if (!req) {
		fprintf(stderr, "wharf-nvmf-rpc: %s\n", err);
		return 2;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "wharf-nvmf-rpc: %s: path too long\n", path);
		free(req);
		return 2;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr,
			"wharf-nvmf-rpc: %s: %s (is wharf-nvmf-tgt running "
			"with --rpc %s?)\n",
			path, strerror(errno), path);
		free(req);
		return 2;
	}
	{ /* the whole request, or exit 2; never SIGPIPE */
		size_t len = strlen(req), off = 0;

		req[len] = '\n'; /* replaces the NUL: sent by length */
		rc = 0;
		while (!rc && off < len + 1) {
			ssize_t w = send(fd, req + off, len + 1 - off,
					 MSG_NOSIGNAL);

			if (w < 0 && errno == EINTR)
				continue;
			rc = w <= 0;
			if (!rc)
				off += (size_t)w;
		}
	}
	free(req);
	line = rc ? NULL : read_line(fd, (int)secs * 1000);
	close(fd);
	if (!line) {
		fprintf(stderr, "wharf-nvmf-rpc: no answer from %s: %s\n", path,
			strerror(errno));
		return 2;
	}
	resp = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
	free(line);
	if (!resp) {
		fprintf(stderr, "wharf-nvmf-rpc: the answer is not JSON\n");
		return 2;
	}
	v = json_object_get(resp, "result");
	rc = v ? 0 : 1;
	if (!v)
		v = json_object_get(resp, "error");
	json_dumpf(v ? v : resp, rc ? stderr : stdout,
		   JSON_INDENT(2) | JSON_ENCODE_ANY);
	fputc('\n', rc ? stderr : stdout);
	json_decref(resp);
	return rc;
}
