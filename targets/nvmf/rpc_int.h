/*
 * targets/nvmf/rpc_int.h - what the JSON-RPC method files share: the call
 * being answered and the helpers that check its params and set its error
 * (rpc.c). Each helper that fails sets the call's error and returns -1 or
 * NULL; a method then returns -1.
 */
#ifndef WHARF_TARGETS_NVMF_RPC_INT_H
#define WHARF_TARGETS_NVMF_RPC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "targets/nvmf/rpc.h"

struct nvmf_subsys;

struct rpc_call {
	const struct nvmf_rpc_env *env;
	json_t *params; /* an object (empty when absent) */
	json_t *result; /* set by a method that succeeded */
	int code;	/* set by a method that failed */
	char msg[512];
};

/* Set the error: @code (JSON-RPC or -errno) and a message. Return: -1. */
__attribute__((format(printf, 3, 4))) int rpc_fail(struct rpc_call *c, int code,
						   const char *fmt, ...);
/* An operation's -errno as the error, @what said first. Return: -1. */
int rpc_fail_errno(struct rpc_call *c, int rc, const char *what);
/* Params must be members of @allowed (NULL-terminated) only. */
int rpc_only(struct rpc_call *c, const char *const *allowed);
/* A string member; NULL (error set) if missing or not a string. */
const char *rpc_str(struct rpc_call *c, const char *key);
/* An integer member in [lo, hi]; @def when absent unless @required. */
int rpc_u32(struct rpc_call *c, const char *key, uint32_t lo, uint32_t hi,
	    bool required, uint32_t def, uint32_t *out);
/* The subsystem "nqn" names (not the discovery one), or NULL. */
struct nvmf_subsys *rpc_subsys(struct rpc_call *c);
/* A JSON string of @s, or a stand-in when NULL or not UTF-8. */
json_t *rpc_jstr(const char *s);

/* rpc_ports.c: subsystems and listeners created and removed. */
int rpc_create_subsystem(struct rpc_call *c);
int rpc_delete_subsystem(struct rpc_call *c);
int rpc_add_listener(struct rpc_call *c);
int rpc_remove_listener(struct rpc_call *c);

#endif /* WHARF_TARGETS_NVMF_RPC_INT_H */
