/*
 * hidx.h - a fixed-capacity hash index of small integer ids.
 *
 * The ids are slots of the owner's own table and their keys live there:
 * the index keeps only each id and its 32-bit hash, and a lookup hands out,
 * one by one, the ids stored under the hash asked for; the owner compares
 * the keys.  Open addressing with linear probing, at most half full, and
 * backward-shift deletion, so no tombstones build up and nothing is ever
 * rehashed or allocated after hidx_init.  The hash is SipHash-2-4
 * (crypto_shorthash) under a random key chosen at init (hidx_hash): peers
 * choose addresses and ports, and with a public hash they could pile their
 * entries into one probe run.  Pure: no I/O, no locking, no clock.
 */
#ifndef KNOCKGW_HIDX_H
#define KNOCKGW_HIDX_H

#include <stddef.h>
#include <stdint.h>

enum { HIDX_NONE = UINT32_MAX };	/* no id; also an empty slot */

struct hidx {
	size_t cap;		/* power of two, >= 2 * max */
	size_t max, count;
	uint32_t *id;		/* per slot: an id or HIDX_NONE */
	uint32_t *hash;		/* per slot: the id's hash */
	uint8_t key[16];	/* crypto_shorthash key */
};

/* Where a lookup goes on from: hidx_first() sets it up. */
struct hidx_cursor {
	size_t pos, steps;
	uint32_t hash;
};

/* 0, -EINVAL (max is 0 or too large) or -ENOMEM; at most max ids. */
int hidx_init(struct hidx *x, size_t max);
void hidx_free(struct hidx *x);

/* The keyed hash of len bytes, for this index. */
uint32_t hidx_hash(const struct hidx *x, const void *key, size_t len);

/* The first and the following ids stored under hash; HIDX_NONE after the last. */
uint32_t hidx_first(const struct hidx *x, uint32_t hash, struct hidx_cursor *c);
uint32_t hidx_next(const struct hidx *x, struct hidx_cursor *c);

/* Adds id under hash: 0, or -ENOSPC with max ids in already. */
int hidx_add(struct hidx *x, uint32_t hash, uint32_t id);

/* Removes id, stored under hash; nothing when it is not there. */
void hidx_del(struct hidx *x, uint32_t hash, uint32_t id);

#endif
