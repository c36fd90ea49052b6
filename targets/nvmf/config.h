/*
 * targets/nvmf/config.h - the wharf-nvmf-tgt configuration: a small
 * line-oriented file (or the same lines built from command-line flags).
 *
 *   # comment (a '#' that starts a word runs to the end of the line)
 *   listen 198.18.0.1 4420      # address [port]; port 4420 by default;
 *                               # IPv4 or IPv6; up to 16 lines
 *   shards 2                    # shard threads; "auto": one per core
 *   cpus 0,2-3                  # pin shard i to the i-th CPU listed (OS
 *                               # indexes 0..1023, "A-B" ranges, repeats
 *                               # share a CPU); shards must match if given
 *   queue-depth 128             # largest I/O queue, entries (2..1024)
 *   io-queues 8                 # I/O queues per controller (1..1024)
 *   in-capsule 4096             # in-capsule data per I/O capsule, bytes
 *                               # (0..65536, a multiple of 16)
 *   max-io-size 128K            # largest transfer (4K..2M, a power of 2)
 *
 *   subsystem nqn.2024-01.io.wharf:disk0
 *     serial WHARF0001          # <= 20 printable characters
 *     model wharf ram disk      # <= 40 characters (rest of the line)
 *     namespace 1 ram:1G        # NSID (1..1024) and backing: ram:SIZE
 *     namespace 3 null:1T       # null:SIZE: writes discarded, reads zero
 *     namespace 2 file:/srv/d2 block=4096   # file:PATH: a regular file or
 *                               # a block device; block 512|4096 (default:
 *                               # the device's logical block, 512 for a
 *                               # file); io=direct|buffered (default:
 *                               # direct for a device, buffered for a file)
 *     allow-host nqn.2014-08.org.nvmexpress:uuid:...
 *                               # [dhchap-key=DHHC-1:XX:...:] the host
 *                               # must authenticate (DH-HMAC-CHAP);
 *                               # [dhchap-ctrl-key=DHHC-1:..:] and the
 *                               # controller to it, if it asks;
 *                               # [dhchap-hash=sha256|sha384|sha512]
 *                               # [dhchap-dhgroup=null|ffdhe2048..8192]
 *     allow-any-host            # explicit; never mixed with allow-host
 *     allow-no-host             # nobody until hosts are added at run time
 *                               # (what a saved configuration says of a
 *                               # subsystem whose last host was removed)
 *     export 198.18.0.1 4420    # served on this listen address only
 *                               # (repeatable; each names a listen line)
 *     export-none               # on no listen address until one is
 *                               # added at run time (what a saved
 *                               # configuration says of a subsystem
 *                               # whose last listener was removed)
 *
 * Every directive after "subsystem" belongs to it until the next
 * "subsystem". A subsystem without export lines is served on every listen
 * address; one with export lines only on those, as nvmet's
 * ports/N/subsystems links: a Connect through another listener is refused
 * as for an unknown subsystem, and only a discovery controller that came
 * in through one of its listeners lists it (at its own addresses). Sizes
 * take K, M, G, T suffixes (powers of 1024). Each subsystem must say who
 * may connect: at least one allow-host, allow-any-host or allow-no-host
 * (there is no implicit default). The configuration needs at least one
 * listen line and one subsystem.
 *
 * Errors name the source and line: "tgt.conf:7: namespace: duplicate NSID
 * 1 (first on line 5)". Parsing is pure: file backings are opened (and
 * their errors reported with their line) by nvmf_tgt_create().
 */
#ifndef WHARF_TARGETS_NVMF_CONFIG_H
#define WHARF_TARGETS_NVMF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "targets/nvmf/auth.h"
#include "targets/nvmf/bdev.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NVMF_CFG_MAX_LISTEN 16
#define NVMF_CFG_MAX_SUBSYS 64
#define NVMF_CFG_MAX_HOSTS  1024
#define NVMF_CFG_MAX_SHARDS 1024
#define NVMF_CFG_MAX_CPU    1023 /* highest CPU index a "cpus" line takes */
#define NVMF_CFG_LINE_MAX   1024
#define NVMF_MAX_NSID	    1024
#define NVMF_DEFAULT_PORT   4420

struct nvmf_cfg_listen {
	char addr[64]; /* numeric IPv4 / IPv6 address */
	int family;    /* AF_INET or AF_INET6 */
	uint16_t port;
	unsigned int line;
};

struct nvmf_cfg_ns {
	uint32_t nsid;
	enum nvmf_bdev_kind kind;
	uint64_t size;	      /* RAM, NULL: bytes */
	char *path;	      /* FILE: owned */
	uint32_t block_size;  /* FILE: 0 = the device's */
	enum nvmf_bdev_io io; /* FILE: how it is opened */
	unsigned int line;
};

struct nvmf_cfg_subsys {
	char nqn[224];
	char serial[21];
	char model[41];
	bool allow_any;
	bool allow_none; /* "allow-no-host": closed until hosts are added */
	char **hosts;	 /* owned NQNs */
	/* Parallel to hosts, allocated with it: each host's DH-HMAC-CHAP
	 * secrets (owned), NULL for a host without. */
	struct nvmf_auth_cfg **host_auth;
	size_t nhosts;
	struct nvmf_cfg_ns *ns;
	size_t nns;
	unsigned int line;
	unsigned int allow_line; /* first allow-* line */
	struct nvmf_cfg_listen exports[NVMF_CFG_MAX_LISTEN]; /* export lines */
	size_t nexports;
	bool export_none; /* "export-none": on no listener until one is added
			     at run time */
	/* Set by nvmf_config_finish(): bit i for listen[i] of an export
	 * line; 0 = every listen address. */
	uint32_t listen_mask;
};

struct nvmf_config {
	char source[64]; /* file name (or "flags") for messages */
	struct nvmf_cfg_listen listen[NVMF_CFG_MAX_LISTEN];
	size_t nlisten;
	uint32_t shards; /* 0 = auto */
	/* "cpus": shard i runs on cpus[i] (wharf_ctx_opts.cpus as is);
	 * ncpus 0 = placement policy. */
	int cpus[NVMF_CFG_MAX_SHARDS];
	uint32_t ncpus;
	unsigned int cpus_line;
	uint32_t queue_depth;
	uint32_t io_queues;
	uint32_t in_capsule;
	uint32_t max_io_size;
	struct nvmf_cfg_subsys *subsys;
	size_t nsubsys;
	unsigned int line; /* lines consumed so far */
};

/**
 * nvmf_config_init() - an empty configuration with the defaults.
 * @cfg: the configuration (shards auto, queue-depth 128, io-queues 8,
 *       in-capsule 4096, max-io-size 128K).
 * @source: the name errors cite (copied, truncated to 63 bytes); NULL
 *          means "config".
 *
 * Context: any thread; pure.
 */
void nvmf_config_init(struct nvmf_config *cfg, const char *source);

/**
 * nvmf_config_line() - apply one configuration line.
 * @cfg: the configuration.
 * @line: the line, without its newline; NUL terminated.
 * @lineno: its line number, for messages (and the subsystem order).
 * @err: receives "source:LINE: message" on failure.
 * @errlen: size of @err.
 *
 * Return: 0; -EINVAL for a bad line (message in @err); -ENOMEM.
 * Context: any thread; allocates.
 */
int nvmf_config_line(struct nvmf_config *cfg, const char *line,
		     unsigned int lineno, char *err, size_t errlen);

/**
 * nvmf_config_finish() - the checks that need the whole configuration.
 * @cfg: the configuration.
 * @err: receives the message on failure.
 * @errlen: size of @err.
 *
 * Return: 0; -EINVAL if there is no listen line or no subsystem, a
 * subsystem has no allow-host / allow-any-host line, or an export line
 * names no listen line. Sets each subsystem's listen_mask.
 * Context: any thread; pure.
 */
int nvmf_config_finish(struct nvmf_config *cfg, char *err, size_t errlen);

/**
 * nvmf_config_parse() - parse a whole configuration text.
 * @text: the text (need not be NUL terminated).
 * @len: its length.
 * @source: the name errors cite.
 * @cfg: receives the configuration (initialised here; free it with
 *       nvmf_config_free() whatever the result).
 * @err: receives "source:LINE: message" on failure.
 * @errlen: size of @err.
 *
 * Return: 0; -EINVAL for a bad configuration (lines longer than
 * NVMF_CFG_LINE_MAX and NUL bytes included); -ENOMEM.
 * Context: any thread; allocates.
 */
int nvmf_config_parse(const char *text, size_t len, const char *source,
		      struct nvmf_config *cfg, char *err, size_t errlen);

/**
 * nvmf_config_load() - read and parse a configuration file.
 * @path: the file.
 * @cfg: as for nvmf_config_parse().
 * @err: receives the message on failure.
 * @errlen: size of @err.
 *
 * Return: 0; -errno if the file cannot be read (message in @err);
 * otherwise as nvmf_config_parse().
 * Context: any thread; blocks on the filesystem; allocates.
 */
int nvmf_config_load(const char *path, struct nvmf_config *cfg, char *err,
		     size_t errlen);

/**
 * nvmf_config_free() - release what a configuration owns.
 * @cfg: the configuration; left empty (re-usable after
 *       nvmf_config_init()).
 *
 * Context: any thread.
 */
void nvmf_config_free(struct nvmf_config *cfg);

/**
 * nvmf_parse_size() - a size with an optional K/M/G/T suffix.
 * @s: the text ("64M", "4096", "1g").
 * @out: the size in bytes.
 *
 * Return: 0; -EINVAL for anything else (empty, junk, zero is allowed,
 * overflow).
 * Context: any thread; pure.
 */
int nvmf_parse_size(const char *s, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_CONFIG_H */
