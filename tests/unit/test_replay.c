/*
 * test_replay.c - the replay table (replay.[ch]).
 *
 * Each scenario is a fresh table of a given size and numbered steps run in
 * order: a knock (ISN, TSval, port) seen from an address at an injected time
 * with a lifetime (and, when fresh, how it found room in a full table), a
 * flood of fresh knocks from one source or from one source prefix each with
 * the number of knocks each kind of displacement forgot, a garbage
 * collection, or a count, each with the answer it must give.  Lifetimes end at now + ttl exactly (flowtable.h: expires <= now
 * is gone).  No clock, no I/O.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "datapath/server/replay.h"
#include "unit.h"

enum { MAX_STEPS = 14 };

enum op {
	END,		/* no more steps */
	CHK,		/* replay_check: want a replay_result (and, fresh, how it got room) */
	FLOOD,		/* n fresh knocks (isn, isn + 1, ...): want n fresh, so many displaced */
	GC,		/* replay_gc(now): want the number removed */
	CNT,		/* replay_count: want the number of knocks remembered */
};

/* FLOOD's sources: always src, or one new source prefix per knock from src on. */
enum spread { ONE_SOURCE, MANY_SOURCES };

struct step {
	enum op op;
	uint32_t isn, tsval;
	uint16_t port;
	const char *src;	/* IPv4 or IPv6 text; the family follows */
	uint64_t now;
	uint32_t ttl;
	unsigned want;
	enum replay_room_how room;	/* CHK, fresh: how it found its place */
	const char *key;		/* the knock's key; NULL: "k" */
	unsigned n;			/* FLOOD: how many */
	enum spread spread;		/* FLOOD */
	unsigned by_source, by_key;	/* FLOOD: displacements of each kind */
};

struct scenario {
	const char *name;
	size_t max;
	struct step s[MAX_STEPS];
};

#define FRESH REPLAY_FRESH
#define SAME REPLAY_SAME_SOURCE
#define OTHER REPLAY_OTHER_SOURCE
#define K1 0x11111111, 0x0000abcd, 22
/* One check: knock (isn, tsval, port) from src at now with ttl; want (K1 spells a knock). */
#define C(...) C_(__VA_ARGS__)
#define C_(isn_, tsval_, port_, src_, now_, ttl_, want_, ...)                                  \
	{ .op = CHK, .isn = (isn_), .tsval = (tsval_), .port = (port_), .src = (src_),         \
	  .now = (now_), .ttl = (ttl_), .want = (want_), __VA_ARGS__ }
#define CNT_(n_) { .op = CNT, .want = (n_) }
#define GC_(now_, n_) { .op = GC, .now = (now_), .want = (n_) }
/* n fresh knocks from isn on, with key, from src (spread), at now for ttl. */
#define FL(isn_, n_, key_, src_, spread_, now_, ttl_, bys_, byk_)                              \
	{ .op = FLOOD, .isn = (isn_), .port = 22, .n = (n_), .key = (key_), .src = (src_),     \
	  .spread = (spread_), .now = (now_), .ttl = (ttl_), .by_source = (bys_),             \
	  .by_key = (byk_) }

static const struct scenario scenarios[] = {
	{ "IPv4 sources", 16,
	  { C(K1, "198.51.100.7", 100, 60, FRESH),
	    C(K1, "198.51.100.7", 100, 60, SAME),
	    C(K1, "198.51.100.8", 101, 60, OTHER),
	    /* The other source did not take the knock over. */
	    C(K1, "198.51.100.7", 102, 60, SAME),
	    C(K1, "7.100.51.198", 102, 60, OTHER),
	    CNT_(1) } },
	{ "IPv6 sources", 16,
	  { C(K1, "2001:db8:1::7", 100, 60, FRESH),
	    C(K1, "2001:db8:1::7", 100, 60, SAME),
	    C(K1, "2001:db8:1::6", 100, 60, OTHER),
	    C(K1, "3001:db8:1::7", 100, 60, OTHER),
	    C(K1, "2001:db8:1:0:8000::7", 100, 60, OTHER),
	    CNT_(1) } },
	{ "IPv4 and IPv6 with the same leading bytes", 16,
	  { C(K1, "10.0.0.1", 100, 60, FRESH),
	    C(K1, "a00:1::", 100, 60, OTHER),
	    C(K1, "::ffff:10.0.0.1", 100, 60, OTHER),
	    C(K1, "10.0.0.1", 100, 60, SAME),
	    C(0x22222222, 0, 443, "a00:1::", 100, 60, FRESH),
	    C(0x22222222, 0, 443, "10.0.0.1", 100, 60, OTHER),
	    C(0x22222222, 0, 443, "a00:1::", 100, 60, SAME),
	    CNT_(2) } },
	{ "lifetime ends at now + ttl", 16,
	  { C(K1, "198.51.100.7", 100, 10, FRESH),
	    C(K1, "198.51.100.8", 109, 10, OTHER),
	    C(K1, "198.51.100.7", 109, 10, SAME),
	    /* Expired, not yet collected: as good as absent, now this source's. */
	    C(K1, "198.51.100.8", 110, 10, FRESH),
	    C(K1, "198.51.100.7", 111, 10, OTHER),
	    C(K1, "198.51.100.8", 119, 10, SAME),
	    CNT_(1),
	    GC_(119, 0),
	    GC_(120, 1),
	    CNT_(0) } },
	{ "a sighting from the same source does not extend the lifetime", 16,
	  { C(K1, "2001:db8::7", 1000, 10, FRESH),
	    C(K1, "2001:db8::7", 1009, 3600, SAME),
	    C(K1, "2001:db8::8", 1010, 3600, FRESH) } },
	{ "port, TSval and ISN each make a different knock", 16,
	  { C(K1, "198.51.100.7", 100, 60, FRESH),
	    C(0x11111111, 0x0000abcd, 23, "198.51.100.8", 100, 60, FRESH),
	    C(0x11111111, 0x0000abcd, 0x1600, "198.51.100.8", 100, 60, FRESH),
	    C(0x11111111, 0x0000abce, 22, "198.51.100.8", 100, 60, FRESH),
	    C(0x11111111, 0, 22, "198.51.100.8", 100, 60, FRESH),
	    C(0x11111110, 0x0000abcd, 22, "198.51.100.8", 100, 60, FRESH),
	    /* ISN and TSval swapped: still another knock */
	    C(0x0000abcd, 0x11111111, 22, "198.51.100.8", 100, 60, FRESH),
	    C(K1, "198.51.100.8", 100, 60, OTHER),
	    CNT_(7) } },
	/*
	 * A full table (64: a source prefix's share 8, a key's 32) never
	 * refuses a fresh knock.  An expired entry nobody collected yet goes
	 * first, and knocks already known still get their answers.
	 */
	{ "a full table reuses an expired entry first", 64,
	  { FL(1000, 64, "a", "192.0.2.1", MANY_SOURCES, 0, 10, 0, 0),
	    CNT_(64),
	    C(1001, 0, 22, "192.0.2.2", 5, 10, SAME),
	    C(1001, 0, 22, "192.0.2.1", 5, 10, OTHER),
	    C(5000, 0, 22, "198.51.100.9", 10, 10, FRESH, .room = REPLAY_ROOM_EXPIRED),
	    /* The oldest expired one went; the next oldest goes for the next. */
	    C(1000, 0, 22, "198.51.100.9", 10, 10, FRESH, .room = REPLAY_ROOM_EXPIRED),
	    CNT_(64),
	    GC_(10, 62),
	    C(1063, 0, 22, "198.51.100.9", 10, 10, FRESH, .room = REPLAY_ROOM_FREE),
	    CNT_(3) } },
	/* One key holder floods from one source: only that source's own knocks go. */
	{ "one source floods: it displaces only itself", 64,
	  { C(1, 0, 22, "203.0.113.7", 0, 100, FRESH, .key = "b"),
	    C(2, 0, 22, "198.51.100.7", 0, 100, FRESH, .key = "a"),
	    FL(1000, 200, "a", "192.0.2.1", ONE_SOURCE, 1, 100, 138, 0),
	    CNT_(64),
	    /* The other key's knock and the flooder's key from elsewhere: still remembered. */
	    C(1, 0, 22, "198.51.100.1", 2, 100, OTHER),
	    C(2, 0, 22, "198.51.100.1", 2, 100, OTHER),
	    C(1, 0, 22, "203.0.113.7", 2, 100, SAME),
	    /* The price: the flood's first knocks were forgotten early. */
	    C(1000, 0, 22, "198.51.100.1", 2, 100, FRESH, .room = REPLAY_ROOM_SOURCE),
	    /* Another source's fresh knock takes the flooder's room too. */
	    C(3, 0, 22, "2001:db8:7::1", 2, 100, FRESH, .room = REPLAY_ROOM_SOURCE, .key = "b"),
	    C(3, 0, 22, "2001:db8:7::1", 2, 100, SAME),
	    /* Same /64, another address: another source for replays. */
	    C(3, 0, 22, "2001:db8:7::2", 2, 100, OTHER),
	    CNT_(64) } },
	/* One key holder floods from many sources: only that key's knocks go. */
	{ "one key floods from many sources: it displaces only that key", 64,
	  { C(1, 0, 22, "203.0.113.7", 0, 100, FRESH, .key = "b"),
	    C(2, 0, 22, "2001:db8:b::7", 0, 100, FRESH, .key = "b"),
	    FL(1000, 200, "a", "192.0.2.1", MANY_SOURCES, 1, 100, 0, 138),
	    FL(2000, 100, "a", "2001:db8:1::1", MANY_SOURCES, 1, 100, 0, 100),
	    C(1, 0, 22, "198.51.100.1", 2, 100, OTHER),
	    C(2, 0, 22, "198.51.100.1", 2, 100, OTHER),
	    C(1000, 0, 22, "198.51.100.1", 2, 100, FRESH, .room = REPLAY_ROOM_KEY),
	    CNT_(64) } },
	/*
	 * Shares, not sizes: a key with 40 knocks from 40 sources holds less of
	 * its share (32) than one source with 24 of its 8; the source pays.
	 */
	{ "the one furthest over its share pays", 64,
	  { FL(100, 40, "b", "198.51.100.1", MANY_SOURCES, 0, 100, 0, 0),
	    FL(1000, 30, "a", "192.0.2.1", ONE_SOURCE, 0, 100, 6, 0),
	    C(7, 0, 22, "203.0.113.9", 1, 100, FRESH, .room = REPLAY_ROOM_SOURCE, .key = "b"),
	    C(100, 0, 22, "203.0.113.1", 1, 100, OTHER),
	    C(139, 0, 22, "203.0.113.1", 1, 100, OTHER),
	    /*
	     * 16 more for b: the source pays while 32 x its size is at least
	     * 8 x b's (23 against 41 down to 12 against 52), then b does.
	     */
	    FL(200, 16, "b", "203.0.113.100", MANY_SOURCES, 1, 100, 11, 5),
	    C(1006, 0, 22, "198.51.100.1", 1, 100, FRESH, .room = REPLAY_ROOM_KEY),
	    C(1029, 0, 22, "192.0.2.1", 1, 100, SAME),
	    C(100, 0, 22, "203.0.113.1", 1, 100, FRESH, .room = REPLAY_ROOM_KEY),
	    CNT_(64) } },
	{ "gc removes exactly what has expired", 16,
	  { C(1, 0, 22, "2001:db8::1", 0, 10, FRESH),
	    C(2, 0, 22, "2001:db8::2", 0, 20, FRESH),
	    C(3, 0, 22, "2001:db8::3", 0, 30, FRESH),
	    GC_(9, 0),
	    GC_(10, 1),
	    CNT_(2),
	    GC_(30, 2),
	    CNT_(0),
	    GC_(1000, 0),
	    C(2, 0, 22, "2001:db8::9", 1000, 20, FRESH) } },
};

/* src as bytes and family; false if it is no address. */
static bool parse_src(const char *src, uint8_t addr[static 16], int *family)
{
	memset(addr, 0, 16);
	*family = AF_INET;
	if (inet_pton(AF_INET, src, addr) == 1)
		return true;
	*family = AF_INET6;
	return inet_pton(AF_INET6, src, addr) == 1;
}

/* The i-th of MANY_SOURCES from addr: IPv4 + i, or i in the fourth group of IPv6 (a /64 each). */
static void nth_source(uint8_t addr[static 16], int family, unsigned i)
{
	if (family == AF_INET) {
		uint32_t a = (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 |
			     (uint32_t)addr[2] << 8 | addr[3];

		a += i;
		addr[0] = (uint8_t)(a >> 24);
		addr[1] = (uint8_t)(a >> 16);
		addr[2] = (uint8_t)(a >> 8);
		addr[3] = (uint8_t)a;
	} else {
		addr[6] = (uint8_t)(i >> 8);
		addr[7] = (uint8_t)i;
	}
}

static void flood(struct replay *r, unsigned no, unsigned i, const struct scenario *sc)
{
	const struct step *st = &sc->s[i];
	unsigned fresh = 0, by[REPLAY_ROOM_KEY + 1] = { 0 };
	uint8_t base[16], addr[16];
	int family;

	if (!parse_src(st->src, base, &family)) {
		CHECK(0, "scenario %u step %u: bad address", no, i + 1);
		return;
	}
	for (unsigned j = 0; j < st->n; j++) {
		struct replay_knock k = { .isn = st->isn + j, .tsval = 0, .port = st->port,
					  .family = family, .src = addr, .key = st->key };
		struct replay_room room;

		memcpy(addr, base, sizeof(addr));
		if (st->spread == MANY_SOURCES)
			nth_source(addr, family, j);
		if (replay_check(r, &k, st->now, st->ttl, &room) == FRESH) {
			fresh++;
			by[room.how]++;
		}
	}
	CHECK_EQ_U(fresh, st->n, "scenario %u step %u: flood, every knock fresh (%s)", no, i + 1,
		   sc->name);
	CHECK_EQ_U(by[REPLAY_ROOM_SOURCE], st->by_source,
		   "scenario %u step %u: flood, displaced by source (%s)", no, i + 1, sc->name);
	CHECK_EQ_U(by[REPLAY_ROOM_KEY], st->by_key,
		   "scenario %u step %u: flood, displaced by key (%s)", no, i + 1, sc->name);
}

static void run(unsigned no, const struct scenario *sc)
{
	struct replay r;

	if (replay_init(&r, sc->max) < 0) {
		CHECK(0, "scenario %u: replay_init", no);
		return;
	}
	for (unsigned i = 0; i < MAX_STEPS && sc->s[i].op != END; i++) {
		const struct step *st = &sc->s[i];
		uint8_t addr[16];
		int family;
		struct replay_room room = { .how = REPLAY_ROOM_FREE };
		enum replay_result res;

		switch (st->op) {
		case CHK: {
			if (!parse_src(st->src, addr, &family)) {
				CHECK(0, "scenario %u step %u: bad address", no, i + 1);
				continue;
			}
			struct replay_knock k = { .isn = st->isn, .tsval = st->tsval, .port = st->port,
						  .family = family, .src = addr,
						  .key = st->key ? st->key : "k" };

			/* Garbage first: every answer must say how it got room. */
			room.how = REPLAY_ROOM_KEY;
			res = replay_check(&r, &k, st->now, st->ttl, &room);
			CHECK_EQ_U(res, st->want, "scenario %u step %u (%s)", no, i + 1, sc->name);
			CHECK_EQ_U(room.how, res == FRESH ? st->room : REPLAY_ROOM_FREE,
				   "scenario %u step %u: room (%s)", no, i + 1, sc->name);
			break;
		}
		case FLOOD:
			flood(&r, no, i, sc);
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

/*
 * Many knocks, no two alike: every one fresh, then every one the same
 * again; one more when full displaces one of them (they all share one /64).
 */
static void many(void)
{
	enum { N = 3000 };
	struct replay r;
	uint8_t addr[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	struct replay_room room;
	unsigned bad = 0;

	if (replay_init(&r, N) < 0) {
		CHECK(0, "many: replay_init");
		return;
	}
	for (unsigned pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < N; i++) {
			struct replay_knock k = { .isn = i * 2654435761u, .tsval = i % 7,
						  .port = (uint16_t)(i % 3 + 1), .family = AF_INET6,
						  .src = addr, .key = "k" };

			addr[15] = (uint8_t)i;
			bad += replay_check(&r, &k, 50, 100, NULL) != (pass ? SAME : FRESH);
		}
	}
	CHECK_EQ_U(bad, 0, "many: unexpected answers");
	CHECK_EQ_U(replay_count(&r), N, "many: count");
	struct replay_knock one = { .isn = 1, .tsval = 1, .port = 1, .family = AF_INET6,
				    .src = addr, .key = "k" };
	CHECK_EQ_U(replay_check(&r, &one, 50, 100, &room), FRESH, "many: full, still fresh");
	CHECK_EQ_U(room.how, REPLAY_ROOM_SOURCE, "many: the source made room");
	CHECK_EQ_U(room.prefix_len, 64, "many: the source's prefix length");
	CHECK(strcmp(room.key, "k") == 0, "many: the displaced knock's key");
	CHECK_EQ_U(replay_count(&r), N, "many: count");
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
