/*
 * test_strays.c - the budget of resets for unknown integrity flows'
 * segments (strays.[ch]).
 *
 * Each numbered row is a fresh table fed steps in order: a segment of flow
 * (source, port) at a time, or a flow the daemon reset itself (note), each
 * with the action it must get; sources are IPv4 addresses 198.51.100.N or
 * IPv6 addresses in 2001:db8:N::/64.  The clock is the step's own second.
 * No I/O.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "datapath/server/strays.h"
#include "unit.h"

enum { MAX_STEPS = 8, FLOWS = 64, SOURCES = 8 };

#define R STRAY_RESET
#define Q STRAY_DROP_QUIET

enum op { END, SEG, NOTE, BURST };

struct step {
	enum op op;
	uint64_t now;
	int family;
	uint8_t src;		/* the source's number (its /64 for IPv6) */
	uint8_t host;		/* IPv6: the host part within that /64 */
	uint16_t sport;
	enum stray_action want;
	unsigned n;		/* BURST: segments of n flows from ports sport.. */
	unsigned resets;	/* BURST: of which this many reset */
};

#define SEG_(t, f, a, h, p, w) { .op = SEG, .now = t, .family = f, .src = a, .host = h, \
				 .sport = p, .want = w }
#define NOTE_(t, f, a, h, p) { .op = NOTE, .now = t, .family = f, .src = a, .host = h, .sport = p }
#define BURST_(t, f, a, h, p, count, r) { .op = BURST, .now = t, .family = f, .src = a, \
					  .host = h, .sport = p, .n = count, .resets = r }
#define V4 AF_INET
#define V6 AF_INET6

static const struct {
	const char *name;
	struct step s[MAX_STEPS];
} rows[] = {
	{ "one reset per flow, then quiet until STRAY_QUIET is over",
	  { SEG_(100, V4, 1, 0, 4000, R), SEG_(100, V4, 1, 0, 4000, Q),
	    SEG_(100 + STRAY_QUIET - 1, V4, 1, 0, 4000, Q),
	    SEG_(100 + STRAY_QUIET, V4, 1, 0, 4000, R) } },
	{ "flows are told apart by port and address",
	  { SEG_(5, V4, 1, 0, 4000, R), SEG_(5, V4, 1, 0, 4001, R), SEG_(5, V4, 2, 0, 4000, R),
	    SEG_(5, V6, 1, 0, 4000, R), SEG_(5, V6, 1, 0, 4000, Q) } },
	{ "a flow the daemon reset itself is quiet at once",
	  { NOTE_(7, V6, 3, 0, 999), SEG_(7, V6, 3, 0, 999, Q),
	    SEG_(7 + STRAY_QUIET, V6, 3, 0, 999, R) } },
	{ "a source's resets per second",
	  { BURST_(50, V4, 9, 0, 1000, 3 * STRAY_SOURCE_RATE, STRAY_SOURCE_RATE),
	    SEG_(50, V4, 10, 0, 1000, R),
	    /* the next second: flows not reset yet get theirs */
	    BURST_(51, V4, 9, 0, 1000 + STRAY_SOURCE_RATE, 2 * STRAY_SOURCE_RATE,
		   STRAY_SOURCE_RATE) } },
	{ "an IPv6 /64 is one source, whatever the host part",
	  { BURST_(60, V6, 4, 1, 2000, STRAY_SOURCE_RATE, STRAY_SOURCE_RATE),
	    SEG_(60, V6, 4, 2, 3000, Q), SEG_(60, V6, 5, 2, 3000, R) } },
	/* More sources than the table counts: the total still bounds them. */
	{ "every source together",
	  { BURST_(70, V4, 20, 0, 1, STRAY_TOTAL_RATE + 40, STRAY_TOTAL_RATE),
	    SEG_(71, V4, 21, 0, 7, R) } },
};

static void addr_of(const struct step *st, unsigned i, uint8_t a[16])
{
	memset(a, 0, 16);
	if (st->family == AF_INET) {
		a[0] = 198, a[1] = 51, a[2] = 100, a[3] = (uint8_t)(st->src + i);
		return;
	}
	a[0] = 0x20, a[1] = 0x01, a[2] = 0x0d, a[3] = 0xb8, a[5] = st->src;
	a[15] = (uint8_t)(st->host + i);
}

int main(void)
{
	static const uint8_t local[16] = { 192, 0, 2, 2 };

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct strays t;

		if (strays_init(&t, FLOWS, SOURCES) < 0) {
			CHECK(0, "row %zu: init", r + 1);
			continue;
		}
		for (size_t i = 0; i < MAX_STEPS && rows[r].s[i].op != END; i++) {
			const struct step *st = &rows[r].s[i];
			uint8_t src[16];
			unsigned resets = 0;

			strays_gc(&t, st->now);
			switch (st->op) {
			case NOTE:
				addr_of(st, 0, src);
				strays_note(&t, st->family, src, local, st->sport, 22, st->now);
				break;
			case SEG:
				addr_of(st, 0, src);
				CHECK_EQ_U(strays_check(&t, st->family, src, local, st->sport, 22,
							st->now),
					   st->want, "row %zu (%s) step %zu", r + 1, rows[r].name, i + 1);
				break;
			case BURST:
				/* "every source together" varies the source, the others the port */
				for (unsigned k = 0; k < st->n; k++) {
					bool many = st->src == 20;

					addr_of(st, many ? k : 0, src);
					resets += strays_check(&t, st->family, src, local,
							       (uint16_t)(st->sport + (many ? 0 : k)), 22,
							       st->now) == STRAY_RESET;
				}
				CHECK_EQ_U(resets, st->resets, "row %zu (%s) step %zu: resets", r + 1,
					   rows[r].name, i + 1);
				break;
			case END:
				break;
			}
		}
		strays_free(&t);
	}
	return unit_done("strays");
}
