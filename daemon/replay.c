/*
 * replay.c - see replay.h.
 */
#include <string.h>
#include <sys/socket.h>

#include "replay.h"

struct seen {
	int family;
	uint8_t src[16];
};

int replay_init(struct replay *r, size_t max)
{
	int ret = flow_init(&r->t, max, sizeof(struct seen));

	if (ret < 0)
		return ret;
	pthread_mutex_init(&r->lock, NULL);
	return 0;
}

void replay_free(struct replay *r)
{
	flow_free(&r->t);
	pthread_mutex_destroy(&r->lock);
}

static void make_key(struct flow_key *k, uint32_t isn, uint32_t tsval, uint16_t port)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->b, &isn, sizeof(isn));
	memcpy(k->b + 4, &tsval, sizeof(tsval));
	memcpy(k->b + 8, &port, sizeof(port));
	k->b[FLOW_KEY_LEN - 1] = 0xee;	/* never equal to a flow_key_make() key */
}

enum replay_result replay_check(struct replay *r, uint32_t isn, uint32_t tsval, uint16_t port,
				int family, const uint8_t *src, uint64_t now, uint32_t ttl)
{
	struct flow_key k;
	struct flow_entry *e;
	struct seen *s;
	size_t alen = family == AF_INET6 ? 16 : 4;
	bool created = false;
	enum replay_result res;

	make_key(&k, isn, tsval, port);
	pthread_mutex_lock(&r->lock);
	e = flow_lookup(&r->t, &k);
	if (e && e->expires <= now) {
		/* Expired but not yet collected: as good as absent. */
		flow_remove(&r->t, e);
		e = NULL;
	}
	if (!e)
		e = flow_insert(&r->t, &k, now + ttl, &created);
	if (!e) {
		res = REPLAY_FULL;
	} else if (created) {
		s = e->value;
		s->family = family;
		memcpy(s->src, src, alen);
		res = REPLAY_FRESH;
	} else {
		s = e->value;
		res = (s->family == family && memcmp(s->src, src, alen) == 0) ? REPLAY_SAME_SOURCE
									       : REPLAY_OTHER_SOURCE;
	}
	pthread_mutex_unlock(&r->lock);
	return res;
}

size_t replay_gc(struct replay *r, uint64_t now)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = flow_gc(&r->t, now, NULL, NULL);
	pthread_mutex_unlock(&r->lock);
	return n;
}

size_t replay_count(struct replay *r)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->t.count;
	pthread_mutex_unlock(&r->lock);
	return n;
}
