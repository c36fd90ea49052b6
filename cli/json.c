/*
 * cli/json.c - JSON documents through jansson (see json.h).
 */
#include "cli/json.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Doubles keep ten significant digits, as the programs' tables do. */
#define CLI_JSON_PRECISION 10

static void fail(struct cli_json *j, int err)
{
	if (!j->err)
		j->err = err;
}

void cli_json_init(struct cli_json *j, FILE *f, enum cli_json_style style)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->style = style;
}

static void print(struct cli_json *j, json_t *root)
{
	size_t flags = JSON_REAL_PRECISION(CLI_JSON_PRECISION);

	flags |= j->style == CLI_JSON_COMPACT ? JSON_COMPACT : JSON_INDENT(2);
	if (json_dumpf(root, j->f, flags) || fputc('\n', j->f) == EOF ||
	    fflush(j->f))
		fail(j, -EIO);
}

/* Add @v (owned) to the innermost open container. */
static void put(struct cli_json *j, const char *key, json_t *v)
{
	json_t *parent;
	int rc;

	if (!v) {
		fail(j, -ENOMEM);
		return;
	}
	if (j->lost) { /* inside a container that could not be opened */
		json_decref(v);
		return;
	}
	if (!j->depth) {
		json_decref(v);
		fail(j, -EINVAL);
		return;
	}
	parent = j->stack[j->depth - 1];
	if (json_is_object(parent)) {
		if (!key) {
			json_decref(v);
			fail(j, -EINVAL);
			return;
		}
		rc = json_object_set_new(parent, key, v);
	} else {
		rc = json_array_append_new(parent, v);
	}
	if (rc)
		fail(j, -ENOMEM);
}

static void open_value(struct cli_json *j, const char *key, json_t *c)
{
	if (!c) {
		fail(j, -ENOMEM);
		j->lost++;
		return;
	}
	if (j->lost || j->depth == CLI_JSON_DEPTH) {
		json_decref(c);
		fail(j, -E2BIG);
		j->lost++;
		return;
	}
	if (j->depth) {
		json_incref(c); /* the stack keeps a reference of its own */
		put(j, key, c);
	}
	j->stack[j->depth++] = c;
}

void cli_json_obj(struct cli_json *j, const char *key)
{
	open_value(j, key, json_object());
}

void cli_json_arr(struct cli_json *j, const char *key)
{
	open_value(j, key, json_array());
}

void cli_json_end(struct cli_json *j)
{
	json_t *c;

	if (j->lost) {
		j->lost--;
		return;
	}
	if (!j->depth) {
		fail(j, -EINVAL);
		return;
	}
	c = j->stack[--j->depth];
	if (!j->depth)
		print(j, c);
	json_decref(c);
}

/* @s as a JSON string: bytes that do not form UTF-8 become '?'. */
static json_t *string(const char *s)
{
	json_t *v = json_string(s);
	char *copy;

	if (v)
		return v;
	copy = strdup(s);
	if (!copy)
		return NULL;
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	v = json_string(copy);
	free(copy);
	return v;
}

void cli_json_str(struct cli_json *j, const char *key, const char *v)
{
	put(j, key, v ? string(v) : json_null());
}

void cli_json_num(struct cli_json *j, const char *key, double v)
{
	put(j, key, isfinite(v) ? json_real(v) : json_null());
}

void cli_json_u64(struct cli_json *j, const char *key, uint64_t v)
{
	put(j, key,
	    v <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v)
				     : json_real((double)v));
}

void cli_json_i64(struct cli_json *j, const char *key, int64_t v)
{
	put(j, key, json_integer((json_int_t)v));
}

void cli_json_bool(struct cli_json *j, const char *key, bool v)
{
	put(j, key, json_boolean(v));
}

int cli_json_finish(struct cli_json *j)
{
	if (j->depth) {
		json_decref(j->stack[0]); /* the rest hang from the root */
		for (unsigned i = 1; i < j->depth; i++)
			json_decref(j->stack[i]);
		j->depth = 0;
		fail(j, -EINVAL);
	}
	if (j->lost) {
		j->lost = 0;
		fail(j, -EINVAL);
	}
	return j->err;
}

int cli_json_write(const char *path, enum cli_json_style style,
		   void (*build)(struct cli_json *j, const void *arg),
		   const void *arg)
{
	bool out = !strcmp(path, "-");
	FILE *f = out ? stdout : fopen(path, "w");
	struct cli_json j;
	int err;

	if (!f)
		return -errno;
	cli_json_init(&j, f, style);
	build(&j, arg);
	err = cli_json_finish(&j);
	if (!out && fclose(f) && !err)
		err = -errno;
	return err;
}
