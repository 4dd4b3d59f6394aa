/*
 * guess.c - see guess.h.
 */
#include <string.h>
#include <sys/socket.h>

#include "datapath/server/guess.h"

enum { V6_PREFIX_BYTES = 8 };

struct source {
	uint64_t window_start;
	uint64_t penalty_until;
	uint32_t refused;	/* in the window that started at window_start */
	bool reported;		/* in this window */
};

static const uint8_t zero[16];

unsigned guess_prefix(int family, const uint8_t *src, uint8_t out[static 16])
{
	memset(out, 0, 16);
	if (family == AF_INET) {
		memcpy(out, src, 4);
		return 32;
	}
	memcpy(out, src, V6_PREFIX_BYTES);
	return V6_PREFIX_BYTES * 8;
}

static void key_of(struct flow_key *k, int family, const uint8_t *src)
{
	uint8_t pfx[16];

	guess_prefix(family, src, pfx);
	flow_key_make(k, family, pfx, zero, 0, 0);
}

int guess_init(struct guess *g, const struct guess_params *p, size_t max_sources)
{
	memset(g, 0, sizeof(*g));
	g->p = *p;
	return flow_init(&g->t, max_sources, sizeof(struct source));
}

void guess_free(struct guess *g)
{
	flow_free(&g->t);
}

void guess_set_params(struct guess *g, const struct guess_params *p)
{
	g->p = *p;
}

/* Room for a new source: the entries whose windows and penalties are over go first. */
static void make_room(struct guess *g, uint64_t now)
{
	struct flow_entry *e;
	size_t pos = 0;

	flow_gc(&g->t, now, NULL, NULL);
	if (g->t.count < g->t.max)
		return;
	/* Every entry is live: forget the one whose window started first. */
	struct flow_entry *oldest = NULL;
	while ((e = flow_next(&g->t, &pos))) {
		const struct source *s = e->value;

		if (s->penalty_until > now)
			continue;	/* a penalty is not forgotten to make room */
		if (!oldest || s->window_start < ((const struct source *)oldest->value)->window_start)
			oldest = e;
	}
	flow_remove(&g->t, oldest);
}

enum guess_event guess_refused(struct guess *g, int family, const uint8_t *src, uint64_t now)
{
	struct flow_key k;
	struct flow_entry *e;
	struct source *s;
	bool created;

	if (g->p.threshold == 0)
		return GUESS_COUNTED;
	key_of(&k, family, src);
	e = flow_lookup(&g->t, &k);
	if (!e) {
		make_room(g, now);
		e = flow_insert(&g->t, &k, 0, &created);
		if (!e)		/* every entry serves a penalty */
			return GUESS_COUNTED;
	}
	s = e->value;
	if (s->window_start == 0 || now >= s->window_start + g->p.window) {
		s->window_start = now ? now : 1;
		s->refused = 0;
		s->reported = false;
	}
	s->refused++;
	/* Kept while its window or its penalty runs, whichever ends later. */
	e->expires = s->window_start + g->p.window;
	if (s->refused < g->p.threshold)
		return GUESS_COUNTED;
	if (g->p.penalty && s->penalty_until < now + g->p.penalty)
		s->penalty_until = now + g->p.penalty;
	if (s->penalty_until > e->expires)
		e->expires = s->penalty_until;
	if (s->reported)
		return GUESS_ABOVE;
	s->reported = true;
	return GUESS_CROSSED;
}

bool guess_penalized(struct guess *g, int family, const uint8_t *src, uint64_t now)
{
	struct flow_key k;
	struct flow_entry *e;

	if (g->p.penalty == 0 || g->t.count == 0)
		return false;
	key_of(&k, family, src);
	e = flow_lookup(&g->t, &k);
	return e && ((const struct source *)e->value)->penalty_until > now;
}

bool guess_known(struct guess *g, int family, const uint8_t *src)
{
	struct flow_key k;

	if (g->p.threshold == 0)
		return false;
	key_of(&k, family, src);
	return flow_lookup(&g->t, &k) != NULL;
}
