/*
 * flowtable.h - fixed-capacity hash table of per-flow state.
 *
 * Keyed by crypto_shorthash (SipHash) of the flow's key under a random key
 * chosen at flow_init, so a peer cannot aim collisions at one bucket.  The
 * capacity is fixed at init: a full table is a counted refusal, never growth.
 * Time is a parameter (seconds, monotonic); nothing expires until the owner
 * calls flow_gc(now).  Open addressing with linear probing and tombstones.
 * The value is an opaque fixed-size blob owned by the caller's module.
 */
#ifndef KNOCKGW_FLOWTABLE_H
#define KNOCKGW_FLOWTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { FLOW_KEY_LEN = 40 };	/* 2 x 16-byte address + 2 ports + family + pad */

struct flow_key {
	uint8_t b[FLOW_KEY_LEN];
};

/* Builds a key from addresses (4 or 16 bytes each) and ports. */
void flow_key_make(struct flow_key *k, int family, const uint8_t *src, const uint8_t *dst,
		   uint16_t sport, uint16_t dport);

/* A slot's state: internal, but tests read it to check the table's invariants. */
enum flow_state {
	FLOW_EMPTY = 0,		/* never used since the last rehash: ends a probe */
	FLOW_USED,
	FLOW_DEAD,		/* tombstone: skipped by lookups, reused by inserts */
	FLOW_MOVING,		/* live, not yet re-placed: only inside rehash() */
};

struct flow_entry {
	struct flow_key key;
	uint64_t expires;	/* flow_gc removes entries with expires <= now */
	uint8_t state;		/* enum flow_state */
	void *value;		/* points into the table's value storage */
};

struct flowtable {
	size_t cap;		/* power of two, >= 2 * max entries */
	size_t max;		/* most live entries allowed */
	size_t count, dead;
	size_t value_size;
	uint8_t hashkey[16];
	struct flow_entry *slots;
	uint8_t *values;
	uint64_t refused_full;	/* counter: inserts refused because full */
};

/* 0 or -ENOMEM/-EINVAL.  max live entries; value_size bytes per entry. */
int flow_init(struct flowtable *t, size_t max, size_t value_size);
void flow_free(struct flowtable *t);

struct flow_entry *flow_lookup(struct flowtable *t, const struct flow_key *k);
/* Returns the existing entry or a new zeroed one; NULL when full (counted). */
struct flow_entry *flow_insert(struct flowtable *t, const struct flow_key *k, uint64_t expires,
			       bool *ret_created);
void flow_remove(struct flowtable *t, struct flow_entry *e);
/*
 * Live entries one by one: start with *pos = 0; NULL after the last.  The
 * table must not change during the walk, except by removing the entry just
 * returned (flow_remove never moves an entry).
 */
struct flow_entry *flow_next(struct flowtable *t, size_t *pos);
/* Removes expired entries; calls on_expire (may be NULL) for each first. */
size_t flow_gc(struct flowtable *t, uint64_t now,
	       void (*on_expire)(struct flow_entry *e, void *arg), void *arg);

#endif
