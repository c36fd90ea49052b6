/*
 * bench/storm/cmtime.c - parsing the table the stock cmtime client prints
 * (rdma-core 44):
 *
 *   step              total ms     max ms     min us  us / conn
 *   create id    :        6.56       3.13      11.00      65.57
 *
 * Lines before the header (its progress) and carriage returns (a serial
 * console) are ignored; the table ends at the first line that is not a
 * row.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/storm/storm.h"

/* Copies line @s (up to '\n') into @buf without '\r'; returns the next. */
static const char *next_line(const char *s, char *buf, size_t len)
{
	size_t k = 0;

	while (*s && *s != '\n') {
		if (*s != '\r' && k + 1 < len)
			buf[k++] = *s;
		s++;
	}
	buf[k] = '\0';
	return *s ? s + 1 : s;
}

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

/* "name : a b c d" -> 0; -EBADMSG when it has a colon but bad numbers;
 * -ENOENT when it is not a row at all. */
static int parse_row(const char *line, char *name, size_t nlen,
		     struct storm_step_row *r)
{
	const char *colon = strchr(line, ':');
	double v[4];
	char *end;
	const char *p;
	size_t k;

	if (!colon)
		return -ENOENT;
	k = (size_t)(colon - line);
	if (!k || k >= nlen)
		return -EBADMSG;
	memcpy(name, line, k);
	name[k] = '\0';
	trim(name);
	if (!*name)
		return -EBADMSG;
	p = colon + 1;
	for (int i = 0; i < 4; i++) {
		v[i] = strtod(p, &end);
		if (end == p)
			return -EBADMSG;
		p = end;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p)
		return -EBADMSG;
	memset(r, 0, sizeof(*r));
	r->total_ms = v[0];
	r->max_ms = v[1];
	r->min_us = v[2];
	r->us_per_conn = v[3];
	return 0;
}

int storm_cmtime_parse(const char *text, unsigned conns,
		       struct storm_cmtime *out)
{
	char line[256];
	bool in_table = false;

	memset(out, 0, sizeof(*out));
	while (text && *text) {
		text = next_line(text, line, sizeof(line));
		if (!in_table) {
			in_table = !strncmp(line, "step", 4) &&
				   strstr(line, "total ms") &&
				   strstr(line, "us / conn");
			continue;
		}
		if (out->nrows == STORM_CMTIME_ROWS)
			break;
		struct storm_step_row *r = &out->rows[out->nrows];
		int err = parse_row(line, out->names[out->nrows],
				    sizeof(out->names[0]), r);

		if (err == -ENOENT)
			break;
		if (err)
			return err;
		r->name = out->names[out->nrows];
		r->n = conns;
		r->avg_us = -1; /* cmtime 44 does not print it */
		out->nrows++;
	}
	return out->nrows ? 0 : -ENODATA;
}

const struct storm_step_row *storm_cmtime_row(const struct storm_cmtime *t,
					      const char *name)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (!strcmp(t->names[i], name))
			return &t->rows[i];
	return NULL;
}
