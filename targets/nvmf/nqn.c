/*
 * targets/nvmf/nqn.c - NQN format checks and text fields (see nqn.h).
 */
#include "targets/nvmf/nqn.h"

#include <string.h>

#include "proto/nvme/spec_fabrics.h"

/* Whether @p starts with @n decimal digits. */
static bool digits(const char *p, int n)
{
	for (int i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

bool nvmf_nqn_valid(const char *nqn)
{
	size_t len;
	int month;

	if (!nqn)
		return false;
	len = strnlen(nqn, NVME_NQN_MAX + 1);
	/* "nqn.yyyy-mm." plus at least one character */
	if (len > NVME_NQN_MAX || len < 13)
		return false;
	for (size_t i = 0; i < len; i++)
		if (nqn[i] <= ' ' || nqn[i] > '~')
			return false;
	if (memcmp(nqn, "nqn.", 4) || !digits(nqn + 4, 4) || nqn[8] != '-' ||
	    !digits(nqn + 9, 2) || nqn[11] != '.')
		return false;
	month = (nqn[9] - '0') * 10 + (nqn[10] - '0');
	return month >= 1 && month <= 12;
}

int nvmf_nqn_field(const char *field, size_t size)
{
	const char *nul = memchr(field, '\0', size);

	return nul ? (int)(nul - field) : -1;
}

void nvmf_ascii_field(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size);

	memset(dst, ' ', size);
	memcpy(dst, src, len);
}
