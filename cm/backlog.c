/* cm/backlog.c - the system maximum listen backlog (see backlog.h). */
#include "cm/backlog.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int wcm_backlog_read(const char *path, int fallback)
{
	char buf[32], *end;
	FILE *f = path ? fopen(path, "r") : NULL;
	size_t n;
	long v;

	if (!f)
		return fallback;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (end == buf || errno)
		return fallback;
	while (isspace((unsigned char)*end))
		end++;
	if (*end || v <= 0 || v > INT_MAX)
		return fallback;
	return (int)v;
}
