/*
 * cli/json.h - the JSON documents of wharf's programs and benchmarks,
 * written through jansson (Debian's libjansson: it escapes strings,
 * checks UTF-8 and formats numbers, so no program carries a JSON writer
 * of its own).
 *
 * A document is built in the order it reads: open an object or array,
 * add members (with a key inside an object, NULL inside an array),
 * close it.  Closing the outermost value prints the whole document to
 * the stream given at init, followed by a newline.  Misuse (a scalar
 * outside any container, a missing key, nesting deeper than
 * CLI_JSON_DEPTH) and allocation or write failures are recorded, never
 * fatal: cli_json_finish() reports the first one.
 */
#ifndef WHARF_CLI_JSON_H
#define WHARF_CLI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLI_JSON_DEPTH 16

enum cli_json_style {
	CLI_JSON_PRETTY = 0,  /* two-space indentation, one member a line */
	CLI_JSON_COMPACT = 1, /* one line, no blanks: for grep and logs */
};

struct cli_json {
	FILE *f;
	enum cli_json_style style;
	void *stack[CLI_JSON_DEPTH]; /* open containers (json_t *) */
	unsigned depth;
	unsigned lost; /* containers opened beyond CLI_JSON_DEPTH */
	int err;       /* first failure (-errno), 0 if none */
};

/** cli_json_init() - an empty document that will be printed to @f. */
void cli_json_init(struct cli_json *j, FILE *f, enum cli_json_style style);

/** cli_json_obj(), cli_json_arr() - open an object / an array (@key: its
 * name inside an object, NULL inside an array or at the top). */
void cli_json_obj(struct cli_json *j, const char *key);
void cli_json_arr(struct cli_json *j, const char *key);

/** cli_json_end() - close the innermost open value; closing the outermost
 * prints the document. */
void cli_json_end(struct cli_json *j);

/** A string (NULL: null; bytes that are not UTF-8 become '?'). */
void cli_json_str(struct cli_json *j, const char *key, const char *v);
/** A number (NaN and infinities: null; ten significant digits). */
void cli_json_num(struct cli_json *j, const char *key, double v);
/** An integer (beyond INT64_MAX: a number with an exponent, as
 * jansson's integers are signed 64-bit). */
void cli_json_u64(struct cli_json *j, const char *key, uint64_t v);
void cli_json_i64(struct cli_json *j, const char *key, int64_t v);
void cli_json_bool(struct cli_json *j, const char *key, bool v);

/**
 * cli_json_finish() - drop whatever is still open (not printed).
 * Return: 0 if the document was printed whole; the first failure:
 * -EINVAL (misuse, or values still open), -E2BIG (nesting), -ENOMEM,
 * -EIO (the stream refused it).
 */
int cli_json_finish(struct cli_json *j);

/**
 * cli_json_write() - one document into the file @path ("-": stdout),
 * built by @build(j, @arg) (which opens and closes its outermost value).
 * Return: 0; -errno of fopen()/fclose(), or cli_json_finish()'s.
 */
int cli_json_write(const char *path, enum cli_json_style style,
		   void (*build)(struct cli_json *j, const void *arg),
		   const void *arg);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CLI_JSON_H */
