/*
 * flowtable.c - fixed-capacity hash table of per-flow state.
 *
 * Open addressing with linear probing.  A removed entry leaves a tombstone
 * (FLOW_DEAD) so that keys placed past it stay reachable; tombstones count
 * towards the load like live entries, and when live + dead would pass 3/4 of
 * the slots an insert first rehashes the table in place, which drops every
 * tombstone.  With at most cap/2 live entries that keeps each probe run short
 * and guarantees an empty slot to stop on, without ever allocating after
 * flow_init (a full table is a counted refusal, never growth).
 *
 * The value of slot i lives at values + i * value_size, so an entry and its
 * value move together.  Pointers returned by flow_lookup/flow_insert stay
 * valid until the next flow_insert (which may rehash) or until that entry is
 * removed.
 *
 * The bucket is SipHash-2-4 (crypto_shorthash) of the key under a random key:
 * a peer chooses addresses and ports, and with a public hash it could pile
 * all its flows into one probe run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "common/table/flowtable.h"
#include "common/table/tablemem.h"

enum {
	KEY_SRC_OFF = 0,
	KEY_DST_OFF = 16,
	KEY_ADDR_MAX = 16,
	KEY_SPORT_OFF = 32,
	KEY_DPORT_OFF = 34,
	KEY_FAMILY_OFF = 36,	/* 37..39 stay zero */
};

_Static_assert(sizeof(((struct flowtable *)0)->hashkey) == crypto_shorthash_KEYBYTES,
	       "hashkey must be a crypto_shorthash key");

void flow_key_make(struct flow_key *k, int family, const uint8_t *src, const uint8_t *dst,
		   uint16_t sport, uint16_t dport)
{
	/*
	 * Zero first: the key is hashed and compared as 40 raw bytes, so the
	 * unused address bytes and the padding must be deterministic.  The
	 * family byte keeps 10.0.0.1 apart from an IPv6 address that merely
	 * starts with the same four bytes.
	 */
	size_t alen = family == AF_INET6 ? KEY_ADDR_MAX : 4;

	memset(k, 0, sizeof(*k));
	memcpy(k->b + KEY_SRC_OFF, src, alen);
	memcpy(k->b + KEY_DST_OFF, dst, alen);
	k->b[KEY_SPORT_OFF] = (uint8_t)(sport >> 8);
	k->b[KEY_SPORT_OFF + 1] = (uint8_t)sport;
	k->b[KEY_DPORT_OFF] = (uint8_t)(dport >> 8);
	k->b[KEY_DPORT_OFF + 1] = (uint8_t)dport;
	k->b[KEY_FAMILY_OFF] = (uint8_t)family;
}

static size_t home(const struct flowtable *t, const struct flow_key *k)
{
	uint8_t h[crypto_shorthash_BYTES];
	uint64_t x;

	crypto_shorthash(h, k->b, sizeof(k->b), t->hashkey);
	memcpy(&x, h, sizeof(x));
	return (size_t)x & (t->cap - 1);
}

static bool too_loaded(const struct flowtable *t, size_t used)
{
	return used * 4 > t->cap * 3;
}

int flow_init(struct flowtable *t, size_t max, size_t value_size)
{
	size_t cap = 1, i;

	memset(t, 0, sizeof(*t));
	if (max == 0 || max > SIZE_MAX / 8)
		return -EINVAL;
	while (cap < 2 * max)
		cap <<= 1;
	if (value_size && cap > SIZE_MAX / value_size)
		return -EINVAL;

	/* Idempotent; randombytes_buf needs it.  Fails only without entropy. */
	if (sodium_init() < 0)
		return -EIO;

	t->slots = tablemem_alloc(cap, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	if (value_size) {
		t->values = tablemem_alloc(cap, value_size);
		if (!t->values) {
			tablemem_free(t->slots, cap, sizeof(*t->slots));
			t->slots = NULL;
			return -ENOMEM;
		}
	}
	t->cap = cap;
	t->max = max;
	t->value_size = value_size;
	randombytes_buf(t->hashkey, sizeof(t->hashkey));
	for (i = 0; i < cap; i++)
		t->slots[i].value = value_size ? t->values + i * value_size : NULL;
	return 0;
}

void flow_free(struct flowtable *t)
{
	/*
	 * Values may hold per-flow secrets; the hash key is one.  Only live
	 * slots are wiped: every other slot's value is zero already (insert
	 * starts from zero, remove wipes, a rehash swaps with zeros), and
	 * wiping the whole array would write every byte of a large table
	 * that was mostly never used, milliseconds at each stop.
	 */
	for (size_t i = 0; t->values && i < t->cap; i++)
		if (t->slots[i].state == FLOW_USED)
			sodium_memzero(t->slots[i].value, t->value_size);
	tablemem_free(t->values, t->cap, t->value_size);
	tablemem_free(t->slots, t->cap, sizeof(*t->slots));
	sodium_memzero(t, sizeof(*t));
}

struct flow_entry *flow_lookup(struct flowtable *t, const struct flow_key *k)
{
	size_t i = home(t, k), n;

	/* The load limit leaves empty slots; the bound is belt and braces. */
	for (n = 0; n < t->cap; n++, i = (i + 1) & (t->cap - 1)) {
		struct flow_entry *e = &t->slots[i];

		if (e->state == FLOW_EMPTY)
			break;
		if (e->state == FLOW_USED && memcmp(e->key.b, k->b, sizeof(k->b)) == 0)
			return e;
	}
	return NULL;
}

/* Swaps the contents of two slots, values included; value pointers stay. */
static void swap_slots(struct flowtable *t, size_t a, size_t b)
{
	struct flow_entry *x = &t->slots[a], *y = &t->slots[b];
	struct flow_key key = x->key;
	uint64_t expires = x->expires;
	uint8_t state = x->state;
	uint8_t *va = x->value, *vb = y->value;
	size_t j;

	x->key = y->key;
	x->expires = y->expires;
	x->state = y->state;
	y->key = key;
	y->expires = expires;
	y->state = state;
	/* Byte by byte: no scratch buffer of value_size without allocating. */
	for (j = 0; j < t->value_size; j++) {
		uint8_t c = va[j];

		va[j] = vb[j];
		vb[j] = c;
	}
}

/*
 * In-place rehash: tombstones become empty and every live entry is re-placed
 * at the first free slot of its probe run (the scheme Abseil's
 * drop_deletes_without_resize uses).  Entries already re-placed never move
 * again, and everything between an entry's home and its slot is one of them,
 * so every probe run is unbroken when this returns.  Each step re-places one
 * entry: O(cap) steps of bounded probing.
 */
static void rehash(struct flowtable *t)
{
	size_t i, j, n;

	for (i = 0; i < t->cap; i++) {
		if (t->slots[i].state == FLOW_DEAD)
			t->slots[i].state = FLOW_EMPTY;
		else if (t->slots[i].state == FLOW_USED)
			t->slots[i].state = FLOW_MOVING;
	}
	t->dead = 0;

	for (i = 0; i < t->cap; i++) {
		while (t->slots[i].state == FLOW_MOVING) {
			j = home(t, &t->slots[i].key);
			for (n = 0; n < t->cap && t->slots[j].state == FLOW_USED; n++)
				j = (j + 1) & (t->cap - 1);
			if (j == i) {
				t->slots[i].state = FLOW_USED;
				break;
			}
			/*
			 * j is empty (slot i ends up empty) or holds another
			 * unplaced entry (which slot i now holds: go round).
			 */
			swap_slots(t, i, j);
			t->slots[j].state = FLOW_USED;
		}
	}
}

struct flow_entry *flow_insert(struct flowtable *t, const struct flow_key *k, uint64_t expires,
			       bool *ret_created)
{
	struct flow_entry *e;
	size_t i, n, free_slot;

	e = flow_lookup(t, k);
	if (e) {
		if (ret_created)
			*ret_created = false;
		return e;
	}
	if (t->count >= t->max) {
		t->refused_full++;
		return NULL;
	}
	/* A new entry may take a fresh empty slot: rehash first if that overloads. */
	if (too_loaded(t, t->count + t->dead + 1))
		rehash(t);

	/* The key is absent, so the first tombstone or empty slot is its place. */
	i = home(t, k);
	free_slot = t->cap;
	for (n = 0; n < t->cap; n++, i = (i + 1) & (t->cap - 1)) {
		if (t->slots[i].state != FLOW_USED) {
			free_slot = i;
			break;
		}
	}
	if (free_slot == t->cap)
		return NULL;	/* unreachable: count < max <= cap / 2 */

	e = &t->slots[free_slot];
	if (e->state == FLOW_DEAD)
		t->dead--;
	e->key = *k;
	e->expires = expires;
	e->state = FLOW_USED;
	if (t->value_size)
		memset(e->value, 0, t->value_size);
	t->count++;
	if (ret_created)
		*ret_created = true;
	return e;
}

void flow_remove(struct flowtable *t, struct flow_entry *e)
{
	size_t i, n;

	if (!e || e->state != FLOW_USED)
		return;
	i = (size_t)(e - t->slots);
	if (t->value_size)
		sodium_memzero(e->value, t->value_size);
	sodium_memzero(&e->key, sizeof(e->key));
	e->expires = 0;
	e->state = FLOW_DEAD;
	t->count--;
	t->dead++;

	/*
	 * A tombstone right before an empty slot guards nothing: no probe run
	 * goes through it to a live entry.  Turn such a trailing run back into
	 * empty slots so that churn alone rarely forces a rehash.
	 */
	if (t->slots[(i + 1) & (t->cap - 1)].state != FLOW_EMPTY)
		return;
	for (n = 0; n < t->cap && t->slots[i].state == FLOW_DEAD; n++) {
		t->slots[i].state = FLOW_EMPTY;
		t->dead--;
		i = (i - 1) & (t->cap - 1);
	}
}

struct flow_entry *flow_next(struct flowtable *t, size_t *pos)
{
	while (t->count > 0 && *pos < t->cap) {
		struct flow_entry *e = &t->slots[(*pos)++];

		if (e->state == FLOW_USED)
			return e;
	}
	return NULL;
}

size_t flow_gc(struct flowtable *t, uint64_t now,
	       void (*on_expire)(struct flow_entry *e, void *arg), void *arg)
{
	size_t i, removed = 0;

	/* Tables are mostly empty; a scan of every slot each second is not free. */
	if (t->count == 0)
		return 0;
	/*
	 * flow_remove never moves an entry, so a single pass sees each one
	 * once.  on_expire must not insert into or remove from the table.
	 */
	for (i = 0; i < t->cap; i++) {
		struct flow_entry *e = &t->slots[i];

		if (e->state != FLOW_USED || e->expires > now)
			continue;
		if (on_expire)
			on_expire(e, arg);
		flow_remove(t, e);
		removed++;
	}
	return removed;
}
