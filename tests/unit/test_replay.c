/*
 * test_replay.c - the replay table (replay.[ch]).
 *
 * Each scenario is a fresh table of a given size and numbered steps run in
 * order: a knock (ISN, TSval, port) seen from an address at an injected time
 * with a lifetime, a garbage collection, or a count, each with the answer it
 * must give.  Lifetimes end at now + ttl exactly (flowtable.h: expires <= now
 * is gone).  No clock, no I/O.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <sys/socket.h>

#include <sodium.h>

#include "replay.h"
#include "unit.h"

enum { MAX_STEPS = 12 };

enum op {
	END,		/* no more steps */
	CHK,		/* replay_check: want a replay_result */
	GC,		/* replay_gc(now): want the number removed */
	CNT,		/* replay_count: want the number of knocks remembered */
};

struct step {
	enum op op;
	uint32_t isn, tsval;
	uint16_t port;
	const char *src;	/* IPv4 or IPv6 text; the family follows */
	uint64_t now;
	uint32_t ttl;
	unsigned want;
};

struct scenario {
	const char *name;
	size_t max;
	struct step s[MAX_STEPS];
};

#define FRESH REPLAY_FRESH
#define SAME REPLAY_SAME_SOURCE
#define OTHER REPLAY_OTHER_SOURCE
#define FULL REPLAY_FULL
#define K1 0x11111111, 0x0000abcd, 22

static const struct scenario scenarios[] = {
	{ "IPv4 sources", 16,
	  { { CHK, K1, "198.51.100.7", 100, 60, FRESH },
	    { CHK, K1, "198.51.100.7", 100, 60, SAME },
	    { CHK, K1, "198.51.100.8", 101, 60, OTHER },
	    /* The other source did not take the knock over. */
	    { CHK, K1, "198.51.100.7", 102, 60, SAME },
	    { CHK, K1, "7.100.51.198", 102, 60, OTHER },
	    { CNT, .want = 1 } } },
	{ "IPv6 sources", 16,
	  { { CHK, K1, "2001:db8:1::7", 100, 60, FRESH },
	    { CHK, K1, "2001:db8:1::7", 100, 60, SAME },
	    { CHK, K1, "2001:db8:1::6", 100, 60, OTHER },
	    { CHK, K1, "3001:db8:1::7", 100, 60, OTHER },
	    { CHK, K1, "2001:db8:1:0:8000::7", 100, 60, OTHER },
	    { CNT, .want = 1 } } },
	{ "IPv4 and IPv6 with the same leading bytes", 16,
	  { { CHK, K1, "10.0.0.1", 100, 60, FRESH },
	    { CHK, K1, "a00:1::", 100, 60, OTHER },
	    { CHK, K1, "::ffff:10.0.0.1", 100, 60, OTHER },
	    { CHK, K1, "10.0.0.1", 100, 60, SAME },
	    { CHK, 0x22222222, 0, 443, "a00:1::", 100, 60, FRESH },
	    { CHK, 0x22222222, 0, 443, "10.0.0.1", 100, 60, OTHER },
	    { CHK, 0x22222222, 0, 443, "a00:1::", 100, 60, SAME },
	    { CNT, .want = 2 } } },
	{ "lifetime ends at now + ttl", 16,
	  { { CHK, K1, "198.51.100.7", 100, 10, FRESH },
	    { CHK, K1, "198.51.100.8", 109, 10, OTHER },
	    { CHK, K1, "198.51.100.7", 109, 10, SAME },
	    /* Expired, not yet collected: as good as absent, now this source's. */
	    { CHK, K1, "198.51.100.8", 110, 10, FRESH },
	    { CHK, K1, "198.51.100.7", 111, 10, OTHER },
	    { CHK, K1, "198.51.100.8", 119, 10, SAME },
	    { CNT, .want = 1 },
	    { GC, .now = 119, .want = 0 },
	    { GC, .now = 120, .want = 1 },
	    { CNT, .want = 0 } } },
	{ "a sighting from the same source does not extend the lifetime", 16,
	  { { CHK, K1, "2001:db8::7", 1000, 10, FRESH },
	    { CHK, K1, "2001:db8::7", 1009, 3600, SAME },
	    { CHK, K1, "2001:db8::8", 1010, 3600, FRESH } } },
	{ "port, TSval and ISN each make a different knock", 16,
	  { { CHK, K1, "198.51.100.7", 100, 60, FRESH },
	    { CHK, 0x11111111, 0x0000abcd, 23, "198.51.100.8", 100, 60, FRESH },
	    { CHK, 0x11111111, 0x0000abcd, 0x1600, "198.51.100.8", 100, 60, FRESH },
	    { CHK, 0x11111111, 0x0000abce, 22, "198.51.100.8", 100, 60, FRESH },
	    { CHK, 0x11111111, 0, 22, "198.51.100.8", 100, 60, FRESH },
	    { CHK, 0x11111110, 0x0000abcd, 22, "198.51.100.8", 100, 60, FRESH },
	    /* ISN and TSval swapped: still another knock */
	    { CHK, 0x0000abcd, 0x11111111, 22, "198.51.100.8", 100, 60, FRESH },
	    { CHK, K1, "198.51.100.8", 100, 60, OTHER },
	    { CNT, .want = 7 } } },
	{ "a full table refuses new knocks until collected", 2,
	  { { CHK, 1, 0, 22, "198.51.100.1", 0, 10, FRESH },
	    { CHK, 2, 0, 22, "198.51.100.2", 5, 10, FRESH },
	    { CHK, 3, 0, 22, "198.51.100.3", 5, 10, FULL },
	    /* Known knocks still get their answers. */
	    { CHK, 1, 0, 22, "198.51.100.1", 6, 10, SAME },
	    { CHK, 2, 0, 22, "198.51.100.1", 6, 10, OTHER },
	    /* Knock 1 has expired, but nobody collected it: fail closed. */
	    { CHK, 3, 0, 22, "198.51.100.3", 10, 10, FULL },
	    { CNT, .want = 2 },
	    { GC, .now = 10, .want = 1 },
	    { CHK, 3, 0, 22, "198.51.100.3", 10, 10, FRESH },
	    /* An expired knock seen again is replaced in place, even when full. */
	    { CHK, 2, 0, 22, "198.51.100.9", 15, 10, FRESH },
	    { CHK, 4, 0, 22, "198.51.100.4", 15, 10, FULL },
	    { CNT, .want = 2 } } },
	{ "gc removes exactly what has expired", 16,
	  { { CHK, 1, 0, 22, "2001:db8::1", 0, 10, FRESH },
	    { CHK, 2, 0, 22, "2001:db8::2", 0, 20, FRESH },
	    { CHK, 3, 0, 22, "2001:db8::3", 0, 30, FRESH },
	    { GC, .now = 9, .want = 0 },
	    { GC, .now = 10, .want = 1 },
	    { CNT, .want = 2 },
	    { GC, .now = 30, .want = 2 },
	    { CNT, .want = 0 },
	    { GC, .now = 1000, .want = 0 },
	    { CHK, 2, 0, 22, "2001:db8::9", 1000, 20, FRESH } } },
};

static void run(unsigned no, const struct scenario *sc)
{
	struct replay r;

	if (replay_init(&r, sc->max) < 0) {
		CHECK(0, "scenario %u: replay_init", no);
		return;
	}
	for (unsigned i = 0; i < MAX_STEPS && sc->s[i].op != END; i++) {
		const struct step *st = &sc->s[i];
		uint8_t addr[16] = { 0 };
		int family = AF_INET;

		switch (st->op) {
		case CHK:
			if (inet_pton(AF_INET, st->src, addr) != 1) {
				family = AF_INET6;
				if (inet_pton(AF_INET6, st->src, addr) != 1) {
					CHECK(0, "scenario %u step %u: bad address", no, i + 1);
					continue;
				}
			}
			CHECK_EQ_U(replay_check(&r, st->isn, st->tsval, st->port, family, addr,
						st->now, st->ttl),
				   st->want, "scenario %u step %u (%s)", no, i + 1, sc->name);
			break;
		case GC:
			CHECK_EQ_U(replay_gc(&r, st->now), st->want, "scenario %u step %u: gc (%s)",
				   no, i + 1, sc->name);
			break;
		case CNT:
			CHECK_EQ_U(replay_count(&r), st->want, "scenario %u step %u: count (%s)",
				   no, i + 1, sc->name);
			break;
		case END:
			break;
		}
	}
	replay_free(&r);
}

/* Many knocks, no two alike: every one fresh, then every one the same again. */
static void many(void)
{
	enum { N = 3000 };
	struct replay r;
	uint8_t addr[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	unsigned bad = 0;

	if (replay_init(&r, N) < 0) {
		CHECK(0, "many: replay_init");
		return;
	}
	for (unsigned pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < N; i++) {
			addr[15] = (uint8_t)i;
			bad += replay_check(&r, i * 2654435761u, i % 7, (uint16_t)(i % 3 + 1),
					    AF_INET6, addr, 50, 100) != (pass ? SAME : FRESH);
		}
	}
	CHECK_EQ_U(bad, 0, "many: unexpected answers");
	CHECK_EQ_U(replay_count(&r), N, "many: count");
	CHECK_EQ_U(replay_check(&r, 1, 1, 1, AF_INET6, addr, 50, 100), FULL, "many: full");
	CHECK_EQ_U(replay_gc(&r, 150), N, "many: all collected");
	replay_free(&r);
}

int main(void)
{
	if (sodium_init() < 0) {
		printf("not ok: sodium_init\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run((unsigned)i + 1, &scenarios[i]);
	many();
	return unit_done("replay");
}
