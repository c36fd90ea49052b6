/*
 * cm/sync.c - an application thread waiting for work it sent to shards
 * (setting up and tearing down shards and listeners).  Not on any data
 * path: a mutex and a condition variable.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "cm/rt.h"

struct wcm_sync {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned pending;
	int err;
};

struct wcm_sync *wcm_sync_new(unsigned pending)
{
	struct wcm_sync *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->pending = pending;
	return s;
}

void wcm_sync_done(struct wcm_sync *s, int err)
{
	pthread_mutex_lock(&s->lock);
	if (err && !s->err)
		s->err = err;
	s->pending--;
	if (!s->pending)
		pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

int wcm_sync_wait(struct wcm_sync *s)
{
	int err;

	/*
	 * On a shard (wharf_listen() from another shard's callback), what it
	 * sent would otherwise wait for the end of its loop iteration.
	 */
	wharf_shard_flush();
	pthread_mutex_lock(&s->lock);
	while (s->pending)
		pthread_cond_wait(&s->cond, &s->lock);
	err = s->err;
	pthread_mutex_unlock(&s->lock);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return err;
}
