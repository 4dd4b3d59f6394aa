/*
 * tally.c - see tally.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "common/table/tablemem.h"
#include "common/table/tally.h"

int tally_init(struct tally *t, size_t max_members, size_t max_groups)
{
	int r;

	memset(t, 0, sizeof(*t));
	if (max_members == 0 || max_members >= TALLY_NONE / 4 || max_groups == 0 ||
	    max_groups > max_members)
		return -EINVAL;
	r = hidx_init(&t->idx, max_groups);
	if (r < 0)
		return r;
	/* First: tally_free() frees by them. */
	t->max_members = max_members;
	t->max_groups = max_groups;
	t->g = tablemem_alloc(max_groups, sizeof(*t->g));
	t->group_of = tablemem_alloc(max_members, sizeof(*t->group_of));
	t->prev = tablemem_alloc(max_members, sizeof(*t->prev));
	t->next = tablemem_alloc(max_members, sizeof(*t->next));
	t->by_size = tablemem_alloc(max_members + 1, sizeof(*t->by_size));
	if (!t->g || !t->group_of || !t->prev || !t->next || !t->by_size) {
		tally_free(t);
		return -ENOMEM;
	}
	memset(t->group_of, 0xff, max_members * sizeof(*t->group_of));	/* TALLY_NONE */
	memset(t->by_size, 0xff, (max_members + 1) * sizeof(*t->by_size));
	for (size_t i = 0; i < max_groups; i++)
		t->g[i].snext = i + 1 < max_groups ? (uint32_t)(i + 1) : TALLY_NONE;
	t->free_group = 0;
	return 0;
}

void tally_free(struct tally *t)
{
	hidx_free(&t->idx);
	/* Live groups' names only (a freed group's is wiped already). */
	for (size_t i = 0; t->g && t->ngroups > 0 && i < t->max_groups; i++)
		if (t->g[i].size > 0)
			sodium_memzero(t->g[i].key, sizeof(t->g[i].key));
	tablemem_free(t->g, t->max_groups, sizeof(*t->g));
	tablemem_free(t->group_of, t->max_members, sizeof(*t->group_of));
	tablemem_free(t->prev, t->max_members, sizeof(*t->prev));
	tablemem_free(t->next, t->max_members, sizeof(*t->next));
	tablemem_free(t->by_size, t->max_members + 1, sizeof(*t->by_size));
	memset(t, 0, sizeof(*t));
}

/* The group named key, TALLY_NONE if none. */
static uint32_t find(const struct tally *t, const uint8_t *key, uint32_t hash)
{
	struct hidx_cursor c;

	for (uint32_t g = hidx_first(&t->idx, hash, &c); g != HIDX_NONE; g = hidx_next(&t->idx, &c))
		if (memcmp(t->g[g].key, key, TALLY_KEY_LEN) == 0)
			return g;
	return TALLY_NONE;
}

/* Group gi joins the end of the ring of its size. */
static void ring_add(struct tally *t, uint32_t gi)
{
	struct tally_group *g = &t->g[gi];
	uint32_t head = t->by_size[g->size];

	if (head == TALLY_NONE) {
		g->sprev = g->snext = gi;
		t->by_size[g->size] = gi;
	} else {
		uint32_t tail = t->g[head].sprev;

		g->sprev = tail;
		g->snext = head;
		t->g[tail].snext = gi;
		t->g[head].sprev = gi;
	}
	if (g->size > t->top)
		t->top = g->size;
}

static void ring_del(struct tally *t, uint32_t gi)
{
	struct tally_group *g = &t->g[gi];

	if (g->snext == gi) {
		t->by_size[g->size] = TALLY_NONE;
	} else {
		t->g[g->sprev].snext = g->snext;
		t->g[g->snext].sprev = g->sprev;
		if (t->by_size[g->size] == gi)
			t->by_size[g->size] = g->snext;
	}
	/*
	 * Sizes move by one: when the top ring empties, the group that left it
	 * is about to be one smaller (leave; when it goes, it was of size 1 and
	 * the last) or one larger (join, and ring_add raises the top again).
	 */
	if (g->size == t->top && t->by_size[t->top] == TALLY_NONE)
		t->top--;
}

int tally_join(struct tally *t, const uint8_t key[static TALLY_KEY_LEN], uint32_t m)
{
	uint32_t hash, gi;
	struct tally_group *g;

	if (m >= t->max_members || t->group_of[m] != TALLY_NONE)
		return -EINVAL;
	hash = hidx_hash(&t->idx, key, TALLY_KEY_LEN);
	gi = find(t, key, hash);
	if (gi == TALLY_NONE) {
		if (t->free_group == TALLY_NONE || hidx_add(&t->idx, hash, t->free_group) < 0)
			return -ENOSPC;
		gi = t->free_group;
		g = &t->g[gi];
		t->free_group = g->snext;
		memcpy(g->key, key, TALLY_KEY_LEN);
		g->hash = hash;
		g->size = 0;
		g->oldest = g->newest = TALLY_NONE;
		t->ngroups++;
	} else {
		g = &t->g[gi];
		ring_del(t, gi);
	}
	t->group_of[m] = gi;
	t->prev[m] = g->newest;
	t->next[m] = TALLY_NONE;
	if (g->newest != TALLY_NONE)
		t->next[g->newest] = m;
	else
		g->oldest = m;
	g->newest = m;
	g->size++;
	ring_add(t, gi);
	return 0;
}

void tally_leave(struct tally *t, uint32_t m)
{
	uint32_t gi;
	struct tally_group *g;

	if (m >= t->max_members || t->group_of[m] == TALLY_NONE)
		return;
	gi = t->group_of[m];
	g = &t->g[gi];
	if (t->prev[m] != TALLY_NONE)
		t->next[t->prev[m]] = t->next[m];
	else
		g->oldest = t->next[m];
	if (t->next[m] != TALLY_NONE)
		t->prev[t->next[m]] = t->prev[m];
	else
		g->newest = t->prev[m];
	t->group_of[m] = TALLY_NONE;
	ring_del(t, gi);
	if (--g->size > 0) {
		ring_add(t, gi);
		return;
	}
	hidx_del(&t->idx, g->hash, gi);
	sodium_memzero(g->key, sizeof(g->key));
	g->snext = t->free_group;
	t->free_group = gi;
	t->ngroups--;
}

uint32_t tally_size_of(const struct tally *t, uint32_t m)
{
	if (m >= t->max_members || t->group_of[m] == TALLY_NONE)
		return 0;
	return t->g[t->group_of[m]].size;
}

const uint8_t *tally_key_of(const struct tally *t, uint32_t m)
{
	if (m >= t->max_members || t->group_of[m] == TALLY_NONE)
		return NULL;
	return t->g[t->group_of[m]].key;
}

uint32_t tally_size(const struct tally *t, const uint8_t key[static TALLY_KEY_LEN])
{
	uint32_t gi = find(t, key, hidx_hash(&t->idx, key, TALLY_KEY_LEN));

	return gi == TALLY_NONE ? 0 : t->g[gi].size;
}

uint32_t tally_heaviest(const struct tally *t, uint32_t *ret_size)
{
	if (t->top == 0) {
		*ret_size = 0;
		return TALLY_NONE;
	}
	*ret_size = t->top;
	return t->g[t->by_size[t->top]].oldest;
}
