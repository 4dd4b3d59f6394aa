/*
 * intent.h - integrity payloads announced by knock-connect, waiting for
 * their SYN.
 *
 * knock-connect reads the first integrity_len bytes of its stream, binds a
 * TCP socket and tells the daemon over the control socket (ctl.h): "the SYN
 * from local port P to D:port covers these bytes".  The client role takes
 * the intent when that SYN leaves and computes the integrity ISN from it.
 *
 * Key: (family, local port, destination address, destination port).  The
 * local address is not part of it: a socket bound to the wildcard gets its
 * source address only at connect(), after the intent was made.  A local
 * port is unique per family for unconnected sockets the kernel bound
 * (ctl.c checks the caller owns that socket), so a second intent for the
 * same key replaces the first: the first one's socket no longer holds the
 * port.
 *
 * Bounded: fixed capacity (a flowtable), at most INTENT_PER_UID of it per
 * uid so one local user cannot crowd out the others, and every intent
 * expires INTENT_TTL seconds after it was made (time is a parameter).
 * Payload bytes are wiped whenever an intent leaves the table.  The control
 * socket (main thread) adds and the queue threads take, so there is a lock.
 */
#ifndef KNOCKGW_INTENT_H
#define KNOCKGW_INTENT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/table/flowtable.h"
#include "common/isn.h"

enum {
	INTENT_TTL = 10,		/* seconds from INTENT to its SYN */
	INTENT_MAX = 1024,		/* each slot holds INTEG_MAX_LEN bytes */
	INTENT_PER_UID = 32,
};

struct intent_table {
	pthread_mutex_t lock;
	struct flowtable t;		/* key -> struct intent (intent.c) */
	struct flowtable uids;		/* uid -> intents it holds */
	size_t per_uid;			/* INTENT_PER_UID; tests may lower it */
	/* Counters, under the lock. */
	uint64_t added, replaced, taken, expired, refused_full, refused_quota;
};

/*
 * A table for max live intents, clamped to 1..INTENT_MAX: intents live for
 * seconds, so even a busy jump host has few at a time, and each slot
 * costs a payload's worth of memory.  NULL with errno set on failure.
 */
struct intent_table *intent_new(size_t max);
/* Wipes and frees; NULL is fine. */
void intent_free(struct intent_table *it);

/*
 * Records (or replaces) the intent for this key, expiring at now +
 * INTENT_TTL.  dst is 4 or 16 bytes by family; len is 1..INTEG_MAX_LEN.
 * 0, -EINVAL, -ENOSPC (table full) or -EDQUOT (uid holds too many).
 */
int intent_add(struct intent_table *it, int family, uint16_t sport, const uint8_t *dst,
	       uint16_t dport, uint32_t uid, const uint8_t *payload, size_t len, uint64_t now);

/*
 * Removes the intent for this key and copies its payload to payload (room
 * for payload_size bytes) and its length to *ret_len.  0; -ENOENT when there
 * is none or it has expired (an expired one is removed all the same);
 * -ENOBUFS when payload_size is too small (the intent stays).
 */
int intent_take(struct intent_table *it, int family, uint16_t sport, const uint8_t *dst,
		uint16_t dport, uint8_t *payload, size_t payload_size, size_t *ret_len,
		uint64_t now);

/* Removes every intent with expiry <= now; returns how many. */
size_t intent_gc(struct intent_table *it, uint64_t now);
size_t intent_count(struct intent_table *it);

#endif
