/*
 * proto/nvme/hostid.h - the NVMe host identifier (Connect data HOSTID,
 * 16 bytes) in the text forms hosts keep it in: a UUID string
 * (/etc/nvme/hostid, nvme-cli's --hostid) and the UUID form of a host
 * NQN ("nqn.2014-08.org.nvmexpress:uuid:" + UUID).  Pure functions.
 */
#ifndef WHARF_PROTO_NVME_HOSTID_H
#define WHARF_PROTO_NVME_HOSTID_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The prefix of a host NQN in UUID form (NVMe base 2.0, 4.5). */
#define NVME_NQN_UUID_PREFIX "nqn.2014-08.org.nvmexpress:uuid:"

/**
 * nvme_uuid_parse() - @s, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (36
 * characters, hex digits of either case, nothing before or after), into
 * its 16 bytes in the order written.
 * Return: 0; -EINVAL when @s is not such a string (@out untouched).
 */
int nvme_uuid_parse(const char *s, uint8_t out[16]);

/**
 * nvme_hostid_from_nqn() - the UUID of a host NQN in UUID form.
 * Return: 0; -EINVAL when @nqn is not "nqn.2014-08.org.nvmexpress:uuid:"
 * followed by a UUID (@out untouched).
 */
int nvme_hostid_from_nqn(const char *nqn, uint8_t out[16]);

/**
 * nvme_hostid_default() - the host ID to use when none is given, as
 * nvme-cli (libnvme) chooses it: @file_id (the first line of
 * /etc/nvme/hostid, or NULL) when that is a UUID, else the UUID of the
 * host NQN in use - @given_nqn (the one the user named, or NULL), else
 * @file_nqn (the first line of /etc/nvme/hostnqn, or NULL) - when that
 * is in UUID form.
 * Return: 0; -ENOENT when none of them gives one (@out untouched; the
 * caller picks a random one).
 */
int nvme_hostid_default(const char *given_nqn, const char *file_id,
			const char *file_nqn, uint8_t out[16]);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_PROTO_NVME_HOSTID_H */
