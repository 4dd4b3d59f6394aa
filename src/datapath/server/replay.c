/*
 * replay.c - see replay.h.
 *
 * Entries live in a fixed array of slots; the index finds a knock's slot,
 * and two tallies (tally.h) group the slots by source prefix and by key, so
 * that the heaviest of either and its oldest entry are at hand in O(1) when
 * the table is full.  Every entry is also on one list in the order entries
 * came, whose head is the first candidate for room: most entries of one
 * protect entry share a lifetime, so the oldest is the first to expire.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "common/table/tablemem.h"
#include "datapath/server/guess.h"
#include "datapath/server/replay.h"

struct replay_slot {
	uint32_t isn, tsval;
	uint16_t port;
	uint8_t family;		/* 0: a free slot */
	uint8_t src[16];
	uint32_t hash;
	uint64_t expires;	/* gone at expires <= now */
	uint32_t older, newer;	/* the list in arrival order; free list (newer) */
};

enum { NONE = HIDX_NONE };

int replay_init(struct replay *r, size_t max)
{
	size_t key_groups = max < REPLAY_KEY_GROUPS ? max : REPLAY_KEY_GROUPS;
	int ret;

	memset(r, 0, sizeof(*r));
	if (max == 0 || max >= NONE / 4)
		return -EINVAL;
	r->slot = tablemem_alloc(max, sizeof(*r->slot));
	if (!r->slot)
		return -ENOMEM;
	ret = hidx_init(&r->idx, max);
	if (ret == 0)
		ret = tally_init(&r->by_source, max, max);
	if (ret == 0)
		ret = tally_init(&r->by_key, max, key_groups);
	if (ret < 0) {
		tally_free(&r->by_source);
		hidx_free(&r->idx);
		tablemem_free(r->slot, max, sizeof(*r->slot));
		r->slot = NULL;
		return ret;
	}
	for (size_t i = 0; i < max; i++)
		r->slot[i].newer = i + 1 < max ? (uint32_t)(i + 1) : NONE;
	r->free_slot = 0;
	r->oldest = r->newest = NONE;
	r->max = max;
	pthread_mutex_init(&r->lock, NULL);
	return 0;
}

void replay_free(struct replay *r)
{
	if (!r->slot)
		return;
	tally_free(&r->by_key);
	tally_free(&r->by_source);
	hidx_free(&r->idx);
	/*
	 * Who knocked from where: not worth keeping in freed memory.  Only
	 * live slots are wiped (the others are zero): a stop stays quick.
	 */
	for (size_t i = 0; r->count > 0 && i < r->max; i++)
		if (r->slot[i].family != 0)
			sodium_memzero(&r->slot[i], sizeof(r->slot[i]));
	tablemem_free(r->slot, r->max, sizeof(*r->slot));
	pthread_mutex_destroy(&r->lock);
	memset(r, 0, sizeof(*r));
}

static uint32_t knock_hash(const struct replay *r, uint32_t isn, uint32_t tsval, uint16_t port)
{
	uint8_t b[10];

	memcpy(b, &isn, 4);
	memcpy(b + 4, &tsval, 4);
	memcpy(b + 8, &port, 2);
	return hidx_hash(&r->idx, b, sizeof(b));
}

static uint32_t find(const struct replay *r, const struct replay_knock *k, uint32_t hash)
{
	struct hidx_cursor c;

	for (uint32_t i = hidx_first(&r->idx, hash, &c); i != NONE; i = hidx_next(&r->idx, &c)) {
		const struct replay_slot *s = &r->slot[i];

		if (s->isn == k->isn && s->tsval == k->tsval && s->port == k->port)
			return i;
	}
	return NONE;
}

/* The tallies' names: the source prefix (family, then its bytes), the key's name. */
static void source_name(uint8_t out[static TALLY_KEY_LEN], int family, const uint8_t *src)
{
	memset(out, 0, TALLY_KEY_LEN);
	out[0] = (uint8_t)family;
	guess_prefix(family, src, out + 1);
}

static void key_name(uint8_t out[static TALLY_KEY_LEN], const char *key)
{
	size_t n = key ? strnlen(key, REPLAY_KEY_NAME_MAX) : 0;

	memset(out, 0, TALLY_KEY_LEN);
	if (n)
		memcpy(out, key, n);
}

static void remove_slot(struct replay *r, uint32_t i)
{
	struct replay_slot *s = &r->slot[i];

	hidx_del(&r->idx, s->hash, i);
	tally_leave(&r->by_source, i);
	tally_leave(&r->by_key, i);
	if (s->older != NONE)
		r->slot[s->older].newer = s->newer;
	else
		r->oldest = s->newer;
	if (s->newer != NONE)
		r->slot[s->newer].older = s->older;
	else
		r->newest = s->older;
	sodium_memzero(s, sizeof(*s));
	s->newer = r->free_slot;
	r->free_slot = i;
	r->count--;
}

/* Reports the entry about to be displaced (its source prefix and key). */
static void note_displaced(const struct replay *r, uint32_t i, enum replay_room_how how,
			   struct replay_room *room)
{
	const struct replay_slot *s = &r->slot[i];
	const uint8_t *key = tally_key_of(&r->by_key, i);

	room->how = how;
	room->family = s->family;
	room->prefix_len = guess_prefix(s->family, s->src, room->prefix);
	memset(room->key, 0, sizeof(room->key));
	if (key)
		memcpy(room->key, key, REPLAY_KEY_NAME_MAX);
}

/*
 * A full table: an expired entry if the oldest is one, else the oldest of
 * the source prefix or the key furthest over its share (sizes compared as
 * size / share, multiplied out).
 */
static void make_room(struct replay *r, uint64_t now, struct replay_room *room)
{
	uint64_t share_src = r->max / REPLAY_SOURCE_SHARE, share_key = r->max / REPLAY_KEY_SHARE;
	uint32_t nsrc, nkey, by_src, by_key, victim;
	enum replay_room_how how;

	if (r->oldest != NONE && r->slot[r->oldest].expires <= now) {
		room->how = REPLAY_ROOM_EXPIRED;
		remove_slot(r, r->oldest);
		return;
	}
	share_src = share_src ? share_src : 1;
	share_key = share_key ? share_key : 1;
	by_src = tally_heaviest(&r->by_source, &nsrc);
	by_key = tally_heaviest(&r->by_key, &nkey);
	if (by_key == NONE || (uint64_t)nsrc * share_key >= (uint64_t)nkey * share_src) {
		victim = by_src;
		how = REPLAY_ROOM_SOURCE;
	} else {
		victim = by_key;
		how = REPLAY_ROOM_KEY;
	}
	if (victim == NONE)	/* unreachable: a full table has entries */
		victim = r->oldest;
	note_displaced(r, victim, how, room);
	remove_slot(r, victim);
}

static void insert(struct replay *r, const struct replay_knock *k, uint32_t hash, uint64_t expires)
{
	uint8_t name[TALLY_KEY_LEN];
	uint32_t i = r->free_slot;
	struct replay_slot *s = &r->slot[i];

	r->free_slot = s->newer;
	memset(s, 0, sizeof(*s));
	s->isn = k->isn;
	s->tsval = k->tsval;
	s->port = k->port;
	s->family = (uint8_t)k->family;
	memcpy(s->src, k->src, k->family == AF_INET6 ? 16 : 4);
	s->hash = hash;
	s->expires = expires;
	s->older = r->newest;
	s->newer = NONE;
	if (r->newest != NONE)
		r->slot[r->newest].newer = i;
	else
		r->oldest = i;
	r->newest = i;
	r->count++;
	/* The index and the source tally have room for every slot. */
	(void)hidx_add(&r->idx, hash, i);
	source_name(name, k->family, k->src);
	(void)tally_join(&r->by_source, name, i);
	/*
	 * The key tally holds REPLAY_KEY_GROUPS names: more keys with live
	 * entries than that (only after many reloads renamed keys) leave the
	 * newcomers out of the key share, never out of the table.
	 */
	key_name(name, k->key);
	(void)tally_join(&r->by_key, name, i);
}

enum replay_result replay_check(struct replay *r, const struct replay_knock *k, uint64_t now,
				uint32_t ttl, struct replay_room *ret_room)
{
	size_t alen = k->family == AF_INET6 ? 16 : 4;
	uint32_t hash = knock_hash(r, k->isn, k->tsval, k->port);
	struct replay_room room = { .how = REPLAY_ROOM_FREE };
	enum replay_result res;
	uint32_t i;

	pthread_mutex_lock(&r->lock);
	i = find(r, k, hash);
	if (i != NONE && r->slot[i].expires <= now) {
		/* Expired but not yet collected: as good as absent. */
		remove_slot(r, i);
		i = NONE;
	}
	if (i != NONE) {
		const struct replay_slot *s = &r->slot[i];

		res = (s->family == k->family && memcmp(s->src, k->src, alen) == 0)
			      ? REPLAY_SAME_SOURCE
			      : REPLAY_OTHER_SOURCE;
	} else {
		if (r->count >= r->max)
			make_room(r, now, &room);
		insert(r, k, hash, now + ttl);
		res = REPLAY_FRESH;
	}
	pthread_mutex_unlock(&r->lock);
	if (ret_room)
		*ret_room = room;
	return res;
}

size_t replay_gc(struct replay *r, uint64_t now)
{
	size_t n = 0;

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; r->count > 0 && i < r->max; i++) {
		if (r->slot[i].family != 0 && r->slot[i].expires <= now) {
			remove_slot(r, (uint32_t)i);
			n++;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return n;
}

size_t replay_count(struct replay *r)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->count;
	pthread_mutex_unlock(&r->lock);
	return n;
}
