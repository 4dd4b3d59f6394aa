/*
 * strays.c - see strays.h.
 */
#include <string.h>

#include "datapath/server/guess.h"
#include "datapath/server/strays.h"

struct spent {
	uint32_t n;		/* resets in the second the entry expires after */
};

static const uint8_t zero[16];

int strays_init(struct strays *t, size_t max_flows, size_t max_sources)
{
	int r;

	memset(t, 0, sizeof(*t));
	r = flow_init(&t->flows, max_flows, 1);
	if (r < 0)
		return r;
	r = flow_init(&t->sources, max_sources, sizeof(struct spent));
	if (r < 0)
		flow_free(&t->flows);
	return r;
}

void strays_free(struct strays *t)
{
	flow_free(&t->flows);
	flow_free(&t->sources);
}

void strays_note(struct strays *t, int family, const uint8_t *src, const uint8_t *dst,
		 uint16_t sport, uint16_t dport, uint64_t now)
{
	struct flow_key k;
	struct flow_entry *e;
	bool created;

	flow_key_make(&k, family, src, dst, sport, dport);
	e = flow_insert(&t->flows, &k, now + STRAY_QUIET, &created);
	if (e)
		e->expires = now + STRAY_QUIET;
}

/* May src's prefix spend one more reset in second now?  Then it has. */
static bool spend(struct strays *t, int family, const uint8_t *src, uint64_t now)
{
	uint8_t pfx[16];
	struct flow_key k;
	struct flow_entry *e;
	struct spent *sp;
	bool created;

	if (t->second != now) {
		t->second = now;
		t->total = 0;
	}
	if (t->total >= STRAY_TOTAL_RATE)
		return false;
	guess_prefix(family, src, pfx);
	flow_key_make(&k, family, pfx, zero, 0, 0);
	e = flow_lookup(&t->sources, &k);
	if (e && e->expires <= now) {
		/* Last second's count: this one starts afresh. */
		((struct spent *)e->value)->n = 0;
		e->expires = now + 1;
	}
	if (!e) {
		e = flow_insert(&t->sources, &k, now + 1, &created);
		/* Too many sources this second: the total alone bounds them. */
		if (!e) {
			t->total++;
			return true;
		}
	}
	sp = e->value;
	if (sp->n >= STRAY_SOURCE_RATE)
		return false;
	sp->n++;
	t->total++;
	return true;
}

bool strays_recent(struct strays *t, int family, const uint8_t *src, const uint8_t *dst,
		   uint16_t sport, uint16_t dport, uint64_t now)
{
	struct flow_key k;
	struct flow_entry *e;

	flow_key_make(&k, family, src, dst, sport, dport);
	e = flow_lookup(&t->flows, &k);
	return e && e->expires > now;
}

enum stray_action strays_check(struct strays *t, int family, const uint8_t *src,
			       const uint8_t *dst, uint16_t sport, uint16_t dport, uint64_t now)
{
	if (strays_recent(t, family, src, dst, sport, dport, now))
		return STRAY_DROP_QUIET;
	if (!spend(t, family, src, now))
		return STRAY_DROP_QUIET;
	strays_note(t, family, src, dst, sport, dport, now);
	return STRAY_RESET;
}

void strays_gc(struct strays *t, uint64_t now)
{
	flow_gc(&t->flows, now, NULL, NULL);
	flow_gc(&t->sources, now, NULL, NULL);
}
