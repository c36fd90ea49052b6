/*
 * proto/nvme/hostid.c - host identifiers from their text forms
 * (hostid.h).
 */
#include "proto/nvme/hostid.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int nvme_uuid_parse(const char *s, uint8_t out[16])
{
	uint8_t b[16];
	unsigned n = 0;

	for (unsigned i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		int hi, lo;

		if (dash) {
			if (s[i] != '-')
				return -EINVAL;
			continue;
		}
		hi = hex_digit(s[i]);
		if (hi < 0)
			return -EINVAL;
		lo = hex_digit(s[++i]);
		if (lo < 0)
			return -EINVAL;
		b[n++] = (uint8_t)(hi << 4 | lo);
	}
	if (s[36])
		return -EINVAL;
	memcpy(out, b, sizeof(b));
	return 0;
}

int nvme_hostid_default(const char *given_nqn, const char *file_id,
			const char *file_nqn, uint8_t out[16])
{
	const char *nqn = given_nqn ? given_nqn : file_nqn;

	if (file_id && !nvme_uuid_parse(file_id, out))
		return 0;
	if (nqn && !nvme_hostid_from_nqn(nqn, out))
		return 0;
	return -ENOENT;
}

int nvme_hostid_from_nqn(const char *nqn, uint8_t out[16])
{
	size_t n = strlen(NVME_NQN_UUID_PREFIX);

	if (strncmp(nqn, NVME_NQN_UUID_PREFIX, n))
		return -EINVAL;
	return nvme_uuid_parse(nqn + n, out);
}
