/*
 * bench/storm/json.c - a streaming JSON writer: objects, arrays, strings
 * (escaped), numbers (non-finite ones become null), booleans.  Keys are
 * given for members of objects and NULL inside arrays.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "bench/storm/storm.h"

void storm_json_init(struct storm_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

static void str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Separator, indentation and key of the next value. */
static void member(struct storm_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (j->depth) {
		fputc('\n', j->f);
		for (unsigned i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	if (key) {
		str(j->f, key);
		fputs(": ", j->f);
	}
}

static void open(struct storm_json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < sizeof(j->first) / sizeof(j->first[0]))
		j->depth++;
	j->first[j->depth] = true;
}

void storm_json_obj(struct storm_json *j, const char *key)
{
	open(j, key, '{');
}

void storm_json_arr(struct storm_json *j, const char *key)
{
	open(j, key, '[');
}

void storm_json_end(struct storm_json *j, char close)
{
	bool empty = j->first[j->depth];

	if (j->depth)
		j->depth--;
	if (!empty) {
		fputc('\n', j->f);
		for (unsigned i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(close, j->f);
	if (!j->depth)
		fputc('\n', j->f);
}

void storm_json_str(struct storm_json *j, const char *key, const char *v)
{
	member(j, key);
	if (v)
		str(j->f, v);
	else
		fputs("null", j->f);
}

void storm_json_num(struct storm_json *j, const char *key, double v)
{
	member(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.10g", v);
	else
		fputs("null", j->f);
}

void storm_json_u64(struct storm_json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void storm_json_bool(struct storm_json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}
