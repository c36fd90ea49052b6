/*
 * targets/nvmf/rpc.h - wharf-nvmf-tgt's management interface: JSON-RPC
 * 2.0 requests handled against a running target (rpc.c), and the server
 * that reads them from a Unix socket on a thread of its own
 * (rpc_server.c), off the shards: changes reach the data path through the
 * core's own rules (namespace pointers published atomically, allow-lists
 * under the target lock that Connect takes, controllers torn down by
 * messages to their shards).
 *
 * Methods (params as a JSON object; SPDK's names where SPDK has one):
 *   rpc_get_methods
 *   nvmf_get_subsystems
 *   nvmf_subsystem_get_controllers   {nqn}
 *   nvmf_get_stats
 *   nvmf_subsystem_add_ns            {nqn, nsid, bdev: "ram:64M" |
 *                                     "null:1G" | "file:/path",
 *                                     [block_size], [io]}
 *   nvmf_subsystem_remove_ns         {nqn, nsid}
 *   nvmf_subsystem_add_host          {nqn, host}
 *   nvmf_subsystem_remove_host       {nqn, host}  -> {disconnected: N}
 *   nvmf_subsystem_allow_any_host    {nqn, allow_any_host: bool}
 *                                                 -> {disconnected: N}
 *   save_config                      {[path]}     -> {config: TEXT}
 *   nvmf_create_subsystem            {nqn, [serial_number], [model_number],
 *                                     [allow_any_host]}
 *   nvmf_delete_subsystem            {nqn}        -> {disconnected: N}
 *   nvmf_subsystem_add_listener      {nqn, listen_address: {[trtype],
 *                                     [adrfam], traddr, [trsvcid]}}
 *   nvmf_subsystem_remove_listener   {nqn, listen_address}
 *                                                 -> {disconnected: N}
 *
 * Errors are JSON-RPC errors: -32700 parse error, -32600 invalid request,
 * -32601 unknown method, -32602 invalid params (the message names the
 * member), and for an operation that failed, the negative errno with a
 * message that says what to do (-2 unknown subsystem or namespace, -17
 * already there, -1 not allowed in the subsystem's state...).
 */
#ifndef WHARF_TARGETS_NVMF_RPC_H
#define WHARF_TARGETS_NVMF_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "targets/nvmf/config.h"
#include "targets/nvmf/nvmf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest request a connection may send, bytes. */
#define NVMF_RPC_MAX_REQUEST (1u << 20)

/* JSON-RPC 2.0 error codes. */
#define NVMF_RPC_PARSE_ERROR	  (-32700)
#define NVMF_RPC_INVALID_REQUEST  (-32600)
#define NVMF_RPC_METHOD_NOT_FOUND (-32601)
#define NVMF_RPC_INVALID_PARAMS	  (-32602)
#define NVMF_RPC_INTERNAL_ERROR	  (-32603)

/* What the requests act on. */
struct nvmf_rpc_env {
	struct nvmf_tgt *tgt;
	/* The configuration the target was created from (global lines for
	 * save_config); borrowed. */
	const struct nvmf_config *cfg;
	/* The target's queues have io_urings: file and block device
	 * namespaces may be added (without, their I/O would block a
	 * shard). */
	bool file_ns;
	/* Optional: counters of the binding, as "name" / value pairs into
	 * nvmf_get_stats' result; @add is called once per counter. */
	void (*stats)(void *arg,
		      void (*add)(void *ctx, const char *name, uint64_t v),
		      void *ctx);
	/* Optional: start and stop listening on an address (the binding's
	 * nvmf_rdma_listen() / nvmf_rdma_unlisten()); without them only the
	 * core's listen slots change. */
	int (*listen)(void *arg, const struct nvmf_cfg_listen *l,
		      uint16_t *listener);
	int (*unlisten)(void *arg, uint16_t listener, unsigned *disconnected);
	void *arg;
};

/**
 * nvmf_rpc_handle() - answer one request.
 * @env: the target.
 * @req: the request text (one JSON value; need not be NUL terminated).
 * @len: its length.
 *
 * Return: the response text (one line, no newline; free() it), or NULL
 * for a notification (a request without "id", answered by nothing) or
 * when no memory is left.
 * Context: one thread at a time per @env (the server's); may block on the
 * filesystem (file namespaces, save_config with a path) and takes the
 * target lock.
 */
char *nvmf_rpc_handle(const struct nvmf_rpc_env *env, const char *req,
		      size_t len);

/**
 * nvmf_rpc_build_request() - a request as wharf-nvmf-rpc sends it.
 * @method: the method.
 * @args: "NAME=VALUE" words: VALUE is taken as JSON when it parses as
 *        JSON (2, true, "x", {...}), else as a string (ram:64M, an NQN).
 * @nargs: their number.
 * @id: the request's id.
 * @err: receives the reason on failure.
 * @errlen: size of @err.
 *
 * Return: the request text (free() it); NULL for a word without '=', an
 * empty NAME, a NAME given twice, or no memory (reason in @err).
 * Context: any thread; pure.
 */
char *nvmf_rpc_build_request(const char *method, char *const *args, int nargs,
			     long id, char *err, size_t errlen);

/* Where wharf-nvmf-rpc looks when not told (-s). */
#define NVMF_RPC_DEFAULT_SOCKET "/run/wharf-nvmf-tgt.sock"

struct nvmf_rpc_server;

/**
 * nvmf_rpc_server_start() - serve requests on a Unix socket.
 * @path: the socket's path (a stale socket there, one nobody listens on,
 *        is replaced; anything else is not).
 * @env: what requests act on; must outlive the server.
 * @out: the server.
 *
 * The socket is mode 0600: only its owner (root for the target) may
 * connect. Each connection sends requests (JSON objects) back to back,
 * whitespace between them allowed, and gets one response line per request
 * but notifications; a request that is not JSON, or larger than
 * NVMF_RPC_MAX_REQUEST, gets a parse error and the connection is closed.
 * At most 16 connections at once; more are closed at once. A response not
 * taken within 5 s closes the connection.
 *
 * Return: 0; -ENAMETOOLONG; -EEXIST if @path is not a socket;
 * -EADDRINUSE if a server answers there; -errno of socket(), bind(),
 * listen() or pthread_create().
 * Context: any thread; blocks briefly.
 */
int nvmf_rpc_server_start(const char *path, const struct nvmf_rpc_env *env,
			  struct nvmf_rpc_server **out);

/**
 * nvmf_rpc_server_stop() - stop serving, close every connection, remove
 * the socket.
 * @srv: the server; NULL is a no-op.
 *
 * Context: any thread but the server's; waits for a request being
 * handled to finish.
 */
void nvmf_rpc_server_stop(struct nvmf_rpc_server *srv);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_RPC_H */
