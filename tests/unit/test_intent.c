/*
 * test_intent - the intent table (src/datapath/client/intent.c).
 *
 * Time is injected (now is a parameter everywhere).  Rows are numbered;
 * the key rows check that each part of (family, local port, destination,
 * destination port) matters and that nothing else does; the wipe rows look
 * through the table's whole value storage for a payload that has left it.
 * The last test runs an adding and a taking thread against each other: the
 * lock is what keeps every intent taken exactly once.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "datapath/client/intent.h"
#include "unit.h"

/*
 * SPIN_MAX bounds each thread's wait for one intent (the other thread's
 * turn): far more than a correct table ever needs, so reaching it is a
 * failure, not a slow machine.
 */
enum { T0 = 1000, THREAD_ROUNDS = 20000, SPIN_MAX = 10000000 };

static const uint8_t dst4[16] = { 192, 0, 2, 10 };
static const uint8_t dst4b[16] = { 192, 0, 2, 11 };
static const uint8_t dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x0a };

static uint8_t got[INTEG_MAX_LEN];

/* Does the payload still sit anywhere in the table's value storage? */
static bool in_storage(const struct intent_table *it, const char *needle)
{
	const uint8_t *v = it->t.values;
	size_t total = it->t.cap * it->t.value_size, n = strlen(needle);

	for (size_t i = 0; i + n <= total; i++)
		if (memcmp(v + i, needle, n) == 0)
			return true;
	return false;
}

static int add(struct intent_table *it, int family, uint16_t sport, const uint8_t *dst,
	       uint16_t dport, uint32_t uid, const char *payload, uint64_t now)
{
	return intent_add(it, family, sport, dst, dport, uid, (const uint8_t *)payload,
			  strlen(payload), now);
}

static int take(struct intent_table *it, int family, uint16_t sport, const uint8_t *dst,
		uint16_t dport, size_t *len, uint64_t now)
{
	return intent_take(it, family, sport, dst, dport, got, sizeof(got), len, now);
}

static void test_new(void)
{
	struct intent_table *it = intent_new(0);

	CHECK(it && it->t.max == 1, "row 1: max 0 becomes 1");
	intent_free(it);
	it = intent_new(65536);
	CHECK(it && it->t.max == INTENT_MAX, "row 2: max clamped to INTENT_MAX");
	CHECK(it && it->per_uid == INTENT_PER_UID, "row 3: default quota");
	intent_free(it);
	intent_free(NULL);	/* row 4: no crash */
}

static void test_basic(void)
{
	struct intent_table *it = intent_new(16);
	size_t len = 0;

	if (!it) {
		CHECK(0, "basic: intent_new");
		return;
	}
	CHECK_EQ_U(add(it, AF_INET, 40000, dst4, 22, 1000, "SSH-2.0-x", T0), 0, "row 10: add");
	CHECK_EQ_U(intent_count(it), 1, "row 11: count");
	CHECK_EQ_U(take(it, AF_INET, 40000, dst4, 22, &len, T0), 0, "row 12: take");
	CHECK(len == 9 && memcmp(got, "SSH-2.0-x", 9) == 0, "row 13: payload back");
	CHECK_EQ_U(take(it, AF_INET, 40000, dst4, 22, &len, T0), (unsigned long long)-ENOENT,
		   "row 14: taken once only");
	CHECK_EQ_U(intent_count(it), 0, "row 15: count after take");

	/* Each part of the key matters. */
	static const struct {
		int n, family;
		uint16_t sport;
		const uint8_t *dst;
		uint16_t dport;
	} other[] = {
		{ 20, AF_INET, 40001, dst4, 22 },
		{ 21, AF_INET, 40000, dst4b, 22 },
		{ 22, AF_INET, 40000, dst4, 2222 },
		{ 23, AF_INET6, 40000, dst4, 22 },
		{ 24, AF_UNIX, 40000, dst4, 22 },
	};
	CHECK_EQ_U(add(it, AF_INET, 40000, dst4, 22, 1000, "abc", T0), 0, "row 19: add");
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		CHECK_EQ_U(take(it, other[i].family, other[i].sport, other[i].dst, other[i].dport,
				&len, T0),
			   (unsigned long long)-ENOENT, "row %d: other key", other[i].n);
	CHECK_EQ_U(take(it, AF_INET, 40000, dst4, 22, &len, T0), 0, "row 25: still there");

	/* IPv6: all 16 bytes are the key; IPv4 uses 4 (the rest is not looked at). */
	uint8_t dst6b[16];
	memcpy(dst6b, dst6, 16);
	dst6b[8] = 1;
	CHECK_EQ_U(add(it, AF_INET6, 50000, dst6, 22, 0, "v6", T0), 0, "row 26: add v6");
	CHECK_EQ_U(take(it, AF_INET6, 50000, dst6b, 22, &len, T0), (unsigned long long)-ENOENT,
		   "row 27: middle byte differs");
	CHECK_EQ_U(take(it, AF_INET6, 50000, dst6, 22, &len, T0), 0, "row 28: v6 take");
	uint8_t dst4junk[16] = { 192, 0, 2, 10, 0xff, 0xff };
	CHECK_EQ_U(add(it, AF_INET, 40000, dst4junk, 22, 0, "v4", T0), 0, "row 29: add v4");
	CHECK_EQ_U(take(it, AF_INET, 40000, dst4, 22, &len, T0), 0,
		   "row 30: bytes past an IPv4 address do not count");

	/* Bad arguments. */
	uint8_t big[INTEG_MAX_LEN + 1] = { 0 };
	CHECK_EQ_U(intent_add(it, AF_INET, 1, dst4, 22, 0, big, 0, T0), (unsigned long long)-EINVAL,
		   "row 31: empty payload");
	CHECK_EQ_U(intent_add(it, AF_INET, 1, dst4, 22, 0, big, sizeof(big), T0),
		   (unsigned long long)-EINVAL, "row 32: payload too long");
	CHECK_EQ_U(intent_add(it, AF_INET, 1, dst4, 22, 0, big, INTEG_MAX_LEN, T0), 0,
		   "row 33: INTEG_MAX_LEN bytes");
	CHECK_EQ_U(intent_add(it, AF_UNIX, 1, dst4, 22, 0, big, 1, T0), (unsigned long long)-EINVAL,
		   "row 34: family");

	/* Too small a buffer: refused, and the intent stays. */
	uint8_t small[8];
	CHECK_EQ_U(intent_take(it, AF_INET, 1, dst4, 22, small, sizeof(small), &len, T0),
		   (unsigned long long)-ENOBUFS, "row 35: buffer too small");
	CHECK_EQ_U(take(it, AF_INET, 1, dst4, 22, &len, T0), 0, "row 36: still there");
	CHECK_EQ_U(len, INTEG_MAX_LEN, "row 37: length");
	CHECK_EQ_U(it->added, 5, "row 38: added counter");
	CHECK_EQ_U(it->taken, 5, "row 39: taken counter");
	intent_free(it);
}

static void test_expiry(void)
{
	struct intent_table *it = intent_new(16);
	size_t len;

	if (!it) {
		CHECK(0, "expiry: intent_new");
		return;
	}
	CHECK_EQ_U(add(it, AF_INET, 1, dst4, 22, 0, "a", T0), 0, "row 40");
	CHECK_EQ_U(take(it, AF_INET, 1, dst4, 22, &len, T0 + INTENT_TTL - 1), 0,
		   "row 41: taken just before expiry");
	CHECK_EQ_U(add(it, AF_INET, 1, dst4, 22, 0, "a", T0), 0, "row 42");
	CHECK_EQ_U(take(it, AF_INET, 1, dst4, 22, &len, T0 + INTENT_TTL), (unsigned long long)-ENOENT,
		   "row 43: expired at now + INTENT_TTL");
	CHECK_EQ_U(intent_count(it), 0, "row 44: an expired one is removed by take");
	CHECK_EQ_U(it->expired, 1, "row 45: expired counter");

	CHECK_EQ_U(add(it, AF_INET, 1, dst4, 22, 0, "EXPIREME-1", T0), 0, "row 46");
	CHECK_EQ_U(add(it, AF_INET, 2, dst4, 22, 0, "EXPIREME-2", T0 + 5), 0, "row 47");
	CHECK_EQ_U(add(it, AF_INET, 3, dst4, 22, 0, "EXPIREME-3", T0 + 9), 0, "row 48");
	CHECK_EQ_U(intent_gc(it, T0 + 9), 0, "row 49: nothing due");
	CHECK_EQ_U(intent_gc(it, T0 + 15), 2, "row 50: two due");
	CHECK_EQ_U(intent_count(it), 1, "row 51: one left");
	CHECK(!in_storage(it, "EXPIREME-1") && !in_storage(it, "EXPIREME-2"),
	      "row 52: collected payloads wiped");
	CHECK(in_storage(it, "EXPIREME-3"), "row 53: the live one is there (the scan works)");
	CHECK_EQ_U(take(it, AF_INET, 3, dst4, 22, &len, T0 + 15), 0, "row 54");
	CHECK(!in_storage(it, "EXPIREME-3"), "row 55: taken payload wiped");
	CHECK_EQ_U(it->expired, 3, "row 56: expired counter");
	intent_free(it);
}

static void test_replace(void)
{
	struct intent_table *it = intent_new(16);
	size_t len;

	if (!it) {
		CHECK(0, "replace: intent_new");
		return;
	}
	CHECK_EQ_U(add(it, AF_INET, 7, dst4, 22, 1000, "FIRST-PAYLOAD", T0), 0, "row 60");
	CHECK_EQ_U(add(it, AF_INET, 7, dst4, 22, 1001, "second", T0 + 8), 0, "row 61: replace");
	CHECK_EQ_U(intent_count(it), 1, "row 62: still one");
	CHECK_EQ_U(it->replaced, 1, "row 63: replaced counter");
	CHECK(!in_storage(it, "FIRST-PAYLOAD"), "row 64: old payload wiped");
	CHECK_EQ_U(take(it, AF_INET, 7, dst4, 22, &len, T0 + 12), 0,
		   "row 65: the replacement's expiry counts");
	CHECK(len == 6 && memcmp(got, "second", 6) == 0, "row 66: the new payload");
	intent_free(it);
}

static void test_limits(void)
{
	struct intent_table *it = intent_new(4);
	size_t len;
	uint16_t p;

	if (!it) {
		CHECK(0, "limits: intent_new");
		return;
	}
	it->per_uid = 2;
	CHECK_EQ_U(add(it, AF_INET, 1, dst4, 22, 1000, "a", T0), 0, "row 70");
	CHECK_EQ_U(add(it, AF_INET, 2, dst4, 22, 1000, "b", T0), 0, "row 71");
	CHECK_EQ_U(add(it, AF_INET, 3, dst4, 22, 1000, "c", T0), (unsigned long long)-EDQUOT,
		   "row 72: uid 1000 at its quota");
	CHECK_EQ_U(add(it, AF_INET, 2, dst4, 22, 1000, "B", T0), 0,
		   "row 73: replacing its own intent needs no quota");
	CHECK_EQ_U(add(it, AF_INET, 3, dst4, 22, 1001, "c", T0), 0, "row 74: another uid");
	CHECK_EQ_U(add(it, AF_INET, 3, dst4, 22, 1000, "c", T0), (unsigned long long)-EDQUOT,
		   "row 75: taking over another uid's key needs quota");
	CHECK_EQ_U(take(it, AF_INET, 1, dst4, 22, &len, T0), 0, "row 76");
	CHECK_EQ_U(add(it, AF_INET, 3, dst4, 22, 1000, "c", T0), 0,
		   "row 77: quota freed by take; key taken over from uid 1001");
	CHECK_EQ_U(add(it, AF_INET, 4, dst4, 22, 1001, "d", T0), 0, "row 78");
	CHECK_EQ_U(add(it, AF_INET, 5, dst4, 22, 1001, "e", T0), 0,
		   "row 79: uid 1001 lost row 74's key, so it has room");
	CHECK_EQ_U(intent_count(it), 4, "row 80: full");
	CHECK_EQ_U(add(it, AF_INET, 6, dst4, 22, 1002, "f", T0), (unsigned long long)-ENOSPC,
		   "row 81: table full");
	CHECK_EQ_U(it->refused_full, 1, "row 82: counted");
	CHECK_EQ_U(it->refused_quota, 2, "row 83: quota refusals counted");
	CHECK_EQ_U(add(it, AF_INET, 6, dst4, 22, 1002, "f", T0 + INTENT_TTL), 0,
		   "row 84: a full table of expired intents makes room");
	CHECK_EQ_U(intent_count(it), 1, "row 85: the others were collected");
	/* Collection gave the uids their quota back. */
	for (p = 10; p < 12; p++)
		CHECK_EQ_U(add(it, AF_INET, p, dst4, 22, 1000, "x", T0 + INTENT_TTL), 0,
			   "row 86: uid 1000 again, port %u", p);
	intent_free(it);
}

struct race {
	struct intent_table *it;
	unsigned taken, mismatched;
	atomic_bool gave_up;	/* either thread: stop, the test has failed */
};

/*
 * Each wait yields: under valgrind, which runs one thread at a time, a
 * thread that only spins can keep the other from ever running.
 */
static bool wait_turn(struct race *r, unsigned *spins)
{
	if (atomic_load(&r->gave_up))
		return false;
	if (++*spins > SPIN_MAX) {
		atomic_store(&r->gave_up, true);
		return false;
	}
	sched_yield();
	return true;
}

static void *adder(void *arg)
{
	struct race *r = arg;

	for (unsigned i = 0; i < THREAD_ROUNDS; i++) {
		uint8_t b = (uint8_t)i;
		unsigned spins = 0;
		int ret;

		/* A few in flight at most: retry while the table (or quota) is full. */
		for (;;) {
			ret = intent_add(r->it, AF_INET, (uint16_t)(1 + i % 60000), dst4, 22, 0,
					 &b, 1, T0);
			if (ret != -ENOSPC && ret != -EDQUOT)
				break;
			if (!wait_turn(r, &spins))
				return NULL;
		}
	}
	return NULL;
}

static void *taker(void *arg)
{
	struct race *r = arg;
	uint8_t b[4];
	size_t len;

	for (unsigned i = 0; i < THREAD_ROUNDS; i++) {
		unsigned spins = 0;

		while (intent_take(r->it, AF_INET, (uint16_t)(1 + i % 60000), dst4, 22, b,
				   sizeof(b), &len, T0) != 0) {
			if (!wait_turn(r, &spins))
				return NULL;
		}
		r->taken++;
		if (len != 1 || b[0] != (uint8_t)i)
			r->mismatched++;
	}
	return NULL;
}

static void test_threads(void)
{
	struct race r = { .it = intent_new(8) };
	pthread_t a, t;

	if (!r.it) {
		CHECK(0, "threads: intent_new");
		return;
	}
	r.it->per_uid = 8;
	CHECK(pthread_create(&t, NULL, taker, &r) == 0, "row 90: taker");
	CHECK(pthread_create(&a, NULL, adder, &r) == 0, "row 91: adder");
	pthread_join(a, NULL);
	pthread_join(t, NULL);
	CHECK(!atomic_load(&r.gave_up), "row 95: no thread waited SPIN_MAX turns for the other");
	CHECK_EQ_U(r.taken, THREAD_ROUNDS, "row 92: every intent taken");
	CHECK_EQ_U(r.mismatched, 0, "row 93: each with its own payload");
	CHECK_EQ_U(intent_count(r.it), 0, "row 94: none left");
	intent_free(r.it);
}

int main(void)
{
	test_new();
	test_basic();
	test_expiry();
	test_replace();
	test_limits();
	test_threads();
	return unit_done("intent");
}
