/*
 * Registered senders: an application thread's own lanes to every shard of
 * a context (msg.c describes lanes, batches and wake-ups).
 */
#include <errno.h>
#include <stdlib.h>

#include "core/shard.h"

int wharf_sender_create(struct wharf_ctx *ctx, struct wharf_sender **out)
{
	struct wharf_sender *s;
	int err;

	if (!ctx || !out)
		return -EINVAL;
	if (atomic_load_explicit(&ctx->closing, memory_order_acquire))
		return -ESHUTDOWN;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = wcore_outbox_init(&s->out, ctx->nshards);
	if (err) {
		free(s);
		return err;
	}
	s->ctx = ctx;
	atomic_fetch_add_explicit(&ctx->senders, 1, memory_order_relaxed);
	*out = s;
	return 0;
}

int wharf_sender_send(struct wharf_sender *s, struct wharf_shard *shard,
		      wharf_msg_fn fn, void *arg, unsigned flags)
{
	int err;

	if (!s || !shard || !fn || shard->ctx != s->ctx ||
	    (flags & ~WHARF_SEND_MORE))
		return -EINVAL;
	if (atomic_load_explicit(&s->ctx->closing, memory_order_acquire))
		return -ESHUTDOWN;
	err = wcore_outbox_put(&s->out, shard, fn, arg);
	if (!err && !(flags & WHARF_SEND_MORE))
		wcore_outbox_flush(&s->out);
	return err;
}

int wharf_sender_flush(struct wharf_sender *s)
{
	if (!s)
		return -EINVAL;
	wcore_outbox_flush(&s->out);
	return 0;
}

int wharf_sender_destroy(struct wharf_sender *s)
{
	struct wharf_ctx *ctx;

	if (!s)
		return 0;
	ctx = s->ctx;
	wcore_outbox_close(&s->out, ctx->nshards);
	free(s);
	atomic_fetch_sub_explicit(&ctx->senders, 1, memory_order_release);
	return 0;
}
