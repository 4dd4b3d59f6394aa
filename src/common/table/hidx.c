/*
 * hidx.c - see hidx.h.
 *
 * Backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, algorithm R): when a
 * slot empties, each later entry of its run whose home is not cyclically
 * between the hole and itself moves back into the hole, so every probe run
 * stays unbroken without tombstones.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "common/table/hidx.h"
#include "common/table/tablemem.h"

_Static_assert(sizeof(((struct hidx *)0)->key) == crypto_shorthash_KEYBYTES,
	       "the index key must be a crypto_shorthash key");

int hidx_init(struct hidx *x, size_t max)
{
	size_t cap = 2;

	memset(x, 0, sizeof(*x));
	if (max == 0 || max >= HIDX_NONE / 4)
		return -EINVAL;
	while (cap < 2 * max)
		cap <<= 1;
	if (sodium_init() < 0)
		return -EIO;
	x->id = tablemem_alloc(cap, sizeof(*x->id));
	x->hash = tablemem_alloc(cap, sizeof(*x->hash));
	if (!x->id || !x->hash) {
		tablemem_free(x->id, cap, sizeof(*x->id));
		tablemem_free(x->hash, cap, sizeof(*x->hash));
		x->id = NULL;
		x->hash = NULL;
		return -ENOMEM;
	}
	memset(x->id, 0xff, cap * sizeof(*x->id));	/* every slot HIDX_NONE */
	x->cap = cap;
	x->max = max;
	randombytes_buf(x->key, sizeof(x->key));
	return 0;
}

void hidx_free(struct hidx *x)
{
	tablemem_free(x->id, x->cap, sizeof(*x->id));
	tablemem_free(x->hash, x->cap, sizeof(*x->hash));
	sodium_memzero(x, sizeof(*x));
}

uint32_t hidx_hash(const struct hidx *x, const void *key, size_t len)
{
	uint8_t h[crypto_shorthash_BYTES];
	uint32_t v;

	crypto_shorthash(h, key, len, x->key);
	memcpy(&v, h, sizeof(v));
	return v;
}

static size_t next_slot(const struct hidx *x, size_t i)
{
	return (i + 1) & (x->cap - 1);
}

uint32_t hidx_next(const struct hidx *x, struct hidx_cursor *c)
{
	/* At most half full: an empty slot ends every run; the bound is belt and braces. */
	for (; c->steps < x->cap; c->steps++, c->pos = next_slot(x, c->pos)) {
		uint32_t id = x->id[c->pos];

		if (id == HIDX_NONE)
			break;
		if (x->hash[c->pos] == c->hash) {
			c->steps++;
			c->pos = next_slot(x, c->pos);
			return id;
		}
	}
	c->steps = x->cap;
	return HIDX_NONE;
}

uint32_t hidx_first(const struct hidx *x, uint32_t hash, struct hidx_cursor *c)
{
	*c = (struct hidx_cursor){ .pos = hash & (x->cap - 1), .steps = 0, .hash = hash };
	return hidx_next(x, c);
}

int hidx_add(struct hidx *x, uint32_t hash, uint32_t id)
{
	size_t i = hash & (x->cap - 1);

	if (x->count >= x->max)
		return -ENOSPC;
	while (x->id[i] != HIDX_NONE)
		i = next_slot(x, i);
	x->id[i] = id;
	x->hash[i] = hash;
	x->count++;
	return 0;
}

/* Is home cyclically in (hole, j]?  Then the entry at j must stay where it is. */
static bool stays(size_t hole, size_t home, size_t j)
{
	if (hole <= j)
		return hole < home && home <= j;
	return hole < home || home <= j;
}

void hidx_del(struct hidx *x, uint32_t hash, uint32_t id)
{
	size_t i = hash & (x->cap - 1), n, j;

	for (n = 0; n < x->cap; n++, i = next_slot(x, i)) {
		if (x->id[i] == HIDX_NONE)
			return;
		if (x->id[i] == id && x->hash[i] == hash)
			break;
	}
	if (n == x->cap)
		return;
	x->count--;
	for (j = next_slot(x, i); x->id[j] != HIDX_NONE; j = next_slot(x, j)) {
		if (stays(i, x->hash[j] & (x->cap - 1), j))
			continue;
		x->id[i] = x->id[j];
		x->hash[i] = x->hash[j];
		i = j;
	}
	x->id[i] = HIDX_NONE;
	x->hash[i] = 0;
}
