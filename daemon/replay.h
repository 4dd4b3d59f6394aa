/*
 * replay.h - refuse a captured knock replayed from another address.
 *
 * A verified SYN's (ISN, TSval, port) is remembered with its source address
 * until its lifetime ends.  The same knock later seen from another source is
 * a replay; from the same source it is a retransmission or a timestamp-less
 * client reconnecting, and is accepted.  The table is a fixed-size flowtable
 * (SipHash under a random key); when it is full, new knocks are refused
 * (fail closed) and counted.  One table serves every queue thread, so it has
 * a lock; only knocks that already passed the MAC check reach it.
 */
#ifndef KNOCKGW_REPLAY_H
#define KNOCKGW_REPLAY_H

#include <pthread.h>
#include <stdint.h>

#include "flowtable.h"

enum replay_result {
	REPLAY_FRESH,		/* first sighting: remembered */
	REPLAY_SAME_SOURCE,	/* seen before from this address: accept */
	REPLAY_OTHER_SOURCE,	/* seen before from another address: refuse */
	REPLAY_FULL,		/* table full: refuse, fail closed */
};

struct replay {
	pthread_mutex_t lock;
	struct flowtable t;
};

int replay_init(struct replay *r, size_t max);
void replay_free(struct replay *r);

/* src is 4 or 16 bytes by family; now and ttl in seconds (monotonic). */
enum replay_result replay_check(struct replay *r, uint32_t isn, uint32_t tsval, uint16_t port,
				int family, const uint8_t *src, uint64_t now, uint32_t ttl);
size_t replay_gc(struct replay *r, uint64_t now);
size_t replay_count(struct replay *r);

#endif
