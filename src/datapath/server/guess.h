/*
 * guess.h - who is guessing knocks: refused knocks counted per source prefix.
 *
 * A random ISN passes a k-key entry with probability k x 2^-32 (auth only;
 * native mode tries 3 epochs per key) or k x 2^-16 in integrity mode, where
 * the SYN carries only 16 bits of MAC: a guesser who sends enough SYNs gets
 * a SYN-ACK now and then.  Each refused knock (a SYN that failed, an
 * integrity flow whose bytes failed) counts against its source's prefix (an
 * IPv4 address, an IPv6 /64: what one host controls); a prefix that reaches
 * `threshold` refusals within `window` seconds is reported once per window,
 * and with a penalty its SYNs to protected ports are answered like a closed
 * port without being verified for `penalty` seconds.  Sources are spoofable:
 * a penalty can lock a real user out, which is why it is off by default.
 *
 * A fixed-size table (a full table forgets its oldest-windowed entries
 * first, never grows); `now` is a parameter.  Pure: no I/O, no logging.
 */
#ifndef KNOCKGW_GUESS_H
#define KNOCKGW_GUESS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/table/flowtable.h"

struct guess_params {
	uint32_t threshold;		/* refusals per window; 0 = no accounting */
	uint32_t window;		/* seconds */
	uint32_t penalty;		/* seconds; 0 = none */
};

struct guess {
	struct guess_params p;
	struct flowtable t;
};

int guess_init(struct guess *g, const struct guess_params *p, size_t max_sources);
void guess_free(struct guess *g);
/* New parameters (a reload); what was counted stays. */
void guess_set_params(struct guess *g, const struct guess_params *p);

enum guess_event {
	GUESS_COUNTED,		/* counted, below the threshold */
	GUESS_CROSSED,		/* this refusal reached the threshold: report the source */
	GUESS_ABOVE,		/* above it, already reported in this window */
};

/* One refused knock from src (4 or 16 bytes by family) at now (seconds). */
enum guess_event guess_refused(struct guess *g, int family, const uint8_t *src, uint64_t now);

/* Is src's prefix serving a penalty at now? */
bool guess_penalized(struct guess *g, int family, const uint8_t *src, uint64_t now);

/*
 * Is src's prefix counted at all?  Changes nothing: the lookup a refusal
 * costs, for what must cost as much as a refusal without being one (a probe
 * of a closed port).
 */
bool guess_known(struct guess *g, int family, const uint8_t *src);

/* The prefix guess counts src under, for messages: 4 or 16 bytes; length in bits. */
unsigned guess_prefix(int family, const uint8_t *src, uint8_t out[static 16]);

#endif
