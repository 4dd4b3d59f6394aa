/*
 * test_guess.c - refused knocks counted per source prefix (guess.[ch]).
 *
 * Each scenario is a fresh table (parameters, size) and numbered steps run
 * in order at an injected time: a refused knock from an address (want the
 * event), or the penalty question (want yes or no).  IPv4 counts per
 * address, IPv6 per /64.  No clock, no I/O.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <sys/socket.h>

#include <sodium.h>

#include "datapath/server/guess.h"
#include "unit.h"

enum { MAX_STEPS = 16 };

enum op {
	END,
	REF,		/* guess_refused, n times (the last one's event is checked) */
	PEN,		/* guess_penalized: want 1 or 0 */
};

struct step {
	enum op op;
	const char *src;
	uint64_t now;
	unsigned n;
	unsigned want;
};

struct scenario {
	const char *name;
	struct guess_params p;
	size_t max;
	struct step s[MAX_STEPS];
};

#define R(a, t, times, w) { REF, a, t, times, w }
#define P(a, t, w) { PEN, a, t, 1, w }
#define C GUESS_COUNTED
#define X GUESS_CROSSED
#define A GUESS_ABOVE

static const struct scenario scenarios[] = {
	{ "below the threshold", { 5, 60, 0 }, 16,
	  { R("198.51.100.7", 100, 4, C), P("198.51.100.7", 100, 0) } },
	{ "crossing once per window", { 5, 60, 0 }, 16,
	  { R("198.51.100.7", 100, 4, C), R("198.51.100.7", 101, 1, X),
	    R("198.51.100.7", 102, 1, A), R("198.51.100.7", 159, 3, A),
	    /* a new window counts from zero */
	    R("198.51.100.7", 160, 4, C), R("198.51.100.7", 161, 1, X),
	    P("198.51.100.7", 161, 0) } },
	{ "IPv4 per address", { 3, 60, 0 }, 16,
	  { R("198.51.100.7", 10, 2, C), R("198.51.100.8", 10, 2, C), R("198.51.100.7", 11, 1, X) } },
	{ "IPv6 per /64", { 3, 60, 0 }, 16,
	  { R("2001:db8:1::7", 10, 2, C), R("2001:db8:1::ffff:9", 10, 1, X),
	    R("2001:db8:2::7", 10, 2, C) } },
	{ "penalty for its length, then over", { 3, 60, 30 }, 16,
	  { R("203.0.113.5", 1000, 2, C), P("203.0.113.5", 1000, 0), R("203.0.113.5", 1001, 1, X),
	    P("203.0.113.5", 1001, 1), P("203.0.113.6", 1001, 0), P("203.0.113.5", 1030, 1),
	    P("203.0.113.5", 1031, 0) } },
	{ "penalty outlives the window", { 2, 10, 100 }, 16,
	  { R("2001:db8::5", 50, 2, X), P("2001:db8::5", 65, 1), P("2001:db8::5", 149, 1),
	    P("2001:db8::5", 150, 0) } },
	{ "accounting off", { 0, 60, 30 }, 16,
	  { R("198.51.100.7", 1, 100, C), P("198.51.100.7", 1, 0) } },
	{ "a full table forgets the oldest window, not a penalty", { 2, 60, 300 }, 2,
	  { R("198.51.100.1", 10, 2, X), R("198.51.100.2", 20, 1, C), R("198.51.100.3", 30, 1, C),
	    P("198.51.100.1", 30, 1), R("198.51.100.2", 31, 1, C), R("198.51.100.2", 32, 1, X) } },
	{ "a table full of penalties counts nothing new", { 1, 60, 300 }, 1,
	  { R("198.51.100.1", 10, 1, X), R("198.51.100.2", 20, 5, C), P("198.51.100.2", 20, 0),
	    P("198.51.100.1", 20, 1) } },
	{ "expired entries make room first", { 2, 10, 0 }, 1,
	  { R("198.51.100.1", 10, 1, C), R("198.51.100.2", 20, 1, C), R("198.51.100.2", 21, 1, X) } },
};

static void parse(const char *text, int *family, uint8_t addr[16])
{
	*family = strchr(text, ':') ? AF_INET6 : AF_INET;
	inet_pton(*family, text, addr);
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		const struct scenario *sc = &scenarios[i];
		struct guess g;

		if (guess_init(&g, &sc->p, sc->max) < 0) {
			CHECK(0, "scenario %zu: init", i + 1);
			continue;
		}
		for (size_t k = 0; k < MAX_STEPS && sc->s[k].op != END; k++) {
			const struct step *st = &sc->s[k];
			uint8_t addr[16] = { 0 };
			unsigned got = 0;
			int family;

			parse(st->src, &family, addr);
			if (st->op == REF) {
				for (unsigned n = 0; n < st->n; n++)
					got = guess_refused(&g, family, addr, st->now);
			} else {
				got = guess_penalized(&g, family, addr, st->now);
			}
			CHECK_EQ_U(got, st->want, "scenario %zu (%s) step %zu", i + 1, sc->name, k + 1);
		}
		guess_free(&g);
	}
	return unit_done("guess");
}
