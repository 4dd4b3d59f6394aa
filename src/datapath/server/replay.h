/*
 * replay.h - refuse a captured knock replayed from another address.
 *
 * A verified SYN's (ISN, TSval, port) is remembered with its source address
 * until its lifetime ends.  The same knock later seen from another source is
 * a replay; from the same source it is a retransmission or a timestamp-less
 * client reconnecting, and is accepted.  Only knocks that passed the MAC
 * check reach the table, so only key holders fill it.
 *
 * The table is bounded (limits.replay) and never refuses a fresh knock: a
 * full table makes room.  An expired entry nobody collected yet goes first;
 * otherwise the oldest entry of whoever holds the most for its share: the
 * source prefix (an IPv4 address, an IPv6 /64, as guess.h counts them; its
 * share an eighth of the table) or the key (half of it), whichever is
 * further over.  So a key holder flooding from one prefix displaces only
 * that prefix's knocks, and one flooding from many prefixes only that key's;
 * nobody's valid knock is refused because others filled the table.  The
 * price: a displaced knock could be replayed from another address before its
 * lifetime ends.  The caller hears of each displacement (replay_room) to
 * count and report it.
 *
 * One table serves every queue thread, so it has a lock.
 */
#ifndef KNOCKGW_REPLAY_H
#define KNOCKGW_REPLAY_H

#include <pthread.h>
#include <stdint.h>

#include "common/table/hidx.h"
#include "common/table/tally.h"

enum {
	REPLAY_KEY_NAME_MAX = TALLY_KEY_LEN - 1,	/* a key's name: conf.h's names fit */
	REPLAY_SOURCE_SHARE = 8,	/* a source prefix's share: 1/8 of the table */
	REPLAY_KEY_SHARE = 2,		/* a key's share: 1/2 */
	REPLAY_KEY_GROUPS = 1024,	/* keys with live entries, across reloads */
};

enum replay_result {
	REPLAY_FRESH,		/* first sighting: remembered */
	REPLAY_SAME_SOURCE,	/* seen before from this address: accept */
	REPLAY_OTHER_SOURCE,	/* seen before from another address: refuse */
};

/* What a knock is and whose it is. */
struct replay_knock {
	uint32_t isn, tsval;
	uint16_t port;
	int family;		/* AF_INET or AF_INET6 */
	const uint8_t *src;	/* 4 or 16 bytes by family */
	const char *key;	/* the name of the key it verified with */
};

/* How a fresh knock found its place. */
enum replay_room_how {
	REPLAY_ROOM_FREE,	/* a free slot */
	REPLAY_ROOM_EXPIRED,	/* an expired entry not collected yet */
	REPLAY_ROOM_SOURCE,	/* displaced: the oldest of the heaviest source prefix */
	REPLAY_ROOM_KEY,	/* displaced: the oldest of the heaviest key */
};

struct replay_room {
	enum replay_room_how how;
	/* The displaced knock's source prefix and key (REPLAY_ROOM_SOURCE, _KEY). */
	int family;
	uint8_t prefix[16];
	unsigned prefix_len;
	char key[REPLAY_KEY_NAME_MAX + 1];
};

struct replay_slot;

struct replay {
	pthread_mutex_t lock;
	size_t max, count;
	struct replay_slot *slot;
	uint32_t free_slot;
	uint32_t oldest, newest;	/* every entry, in the order they came */
	struct hidx idx;		/* (ISN, TSval, port) -> slot */
	struct tally by_source, by_key;
};

/* 0, -EINVAL or -ENOMEM; at most max knocks. */
int replay_init(struct replay *r, size_t max);
void replay_free(struct replay *r);

/*
 * Checks one verified knock at now (seconds, monotonic) and remembers a
 * fresh one for ttl seconds (it is gone at now + ttl).  *ret_room (may be
 * NULL) says how a fresh one found its place (REPLAY_ROOM_FREE for any
 * other answer).
 */
enum replay_result replay_check(struct replay *r, const struct replay_knock *k, uint64_t now,
				uint32_t ttl, struct replay_room *ret_room);
size_t replay_gc(struct replay *r, uint64_t now);
size_t replay_count(struct replay *r);

#endif
