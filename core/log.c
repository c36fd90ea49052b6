/* Context logging through the application's callback (or stderr). */
#include <stdarg.h>
#include <stdio.h>

#include "core/shard.h"

static const char *level_name(enum wharf_log_level level)
{
	switch (level) {
	case WHARF_LOG_ERROR:
		return "error";
	case WHARF_LOG_WARN:
		return "warning";
	case WHARF_LOG_INFO:
		return "info";
	case WHARF_LOG_DEBUG:
		return "debug";
	case WHARF_LOG_DEFAULT:
	case WHARF_LOG_OFF:
		break;
	}
	return "?";
}

enum wharf_log_level wcore_log_effective(enum wharf_log_level level)
{
	return level == WHARF_LOG_DEFAULT ? WHARF_LOG_WARN : level;
}

void wharf_ctx_log(const struct wharf_ctx *ctx, enum wharf_log_level level,
		   const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (level < WHARF_LOG_ERROR ||
	    level > wcore_log_effective(ctx->opts.log_level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ctx->opts.log_fn)
		ctx->opts.log_fn(ctx->opts.log_arg, level, msg);
	else
		fprintf(stderr, "wharf: %s: %s\n", level_name(level), msg);
}
