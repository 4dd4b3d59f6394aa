/*
 * test_flowtable.c - the flow table against its contract and a reference
 * model.
 *
 * Time is injected: entries carry expires values and flow_gc gets now.  The
 * hash key is random at flow_init; the tests that compare with the model
 * overwrite it with a fixed one (the table is empty then, so that is safe)
 * so that every run probes the same slots.  Results never depend on it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "common/table/flowtable.h"
#include "unit.h"

enum {
	CHURN_ROUNDS = 100000,
	MODEL_OPS = 200000,
	POOL_MAX = 512,
};

/* splitmix64, seeded per test: no clock anywhere. */
struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void fixed_hashkey(struct flowtable *t, uint8_t seed)
{
	size_t i;

	for (i = 0; i < sizeof(t->hashkey); i++)
		t->hashkey[i] = (uint8_t)(seed + i);
}

/* A distinct IPv4 or IPv6 key for each n. */
static void key_n(struct flow_key *k, unsigned n, bool v6)
{
	uint8_t src[16] = { 10, 0, 0, 1 }, dst[16] = { 192, 0, 2, 7 };

	if (v6) {
		src[0] = 0x20;
		src[1] = 0x01;
		src[2] = 0x0d;
		src[3] = 0xb8;
	}
	src[v6 ? 12 : 2] = (uint8_t)(n >> 8);
	src[v6 ? 13 : 3] = (uint8_t)n;
	flow_key_make(k, v6 ? AF_INET6 : AF_INET, src, dst, (uint16_t)(30000 + n), 22);
}

static void random_key(struct rng *r, struct flow_key *k)
{
	uint8_t src[16], dst[16];
	size_t i;

	for (i = 0; i < sizeof(src); i++) {
		src[i] = (uint8_t)rnd(r);
		dst[i] = (uint8_t)rnd(r);
	}
	flow_key_make(k, rnd(r) % 2 ? AF_INET : AF_INET6, src, dst, (uint16_t)rnd(r),
		      (uint16_t)rnd(r));
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/*
 * Slots not in use whose value is not all zero: flow_free wipes only live
 * slots, which is enough only while this stays 0.
 */
static size_t unused_dirty(const struct flowtable *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->cap; i++)
		n += t->slots[i].state != FLOW_USED && !all_zero(t->slots[i].value, t->value_size);
	return n;
}

static void test_init(void)
{
	struct flowtable t;
	static const struct {
		size_t max, cap;
	} caps[] = {
		{ 1, 2 }, { 2, 4 }, { 3, 8 }, { 4, 8 }, { 5, 16 }, { 1000, 2048 }, { 1024, 2048 },
	};
	size_t i;

	CHECK_EQ_U(flow_init(&t, 0, 8), (unsigned long long)-EINVAL, "init: max 0");
	CHECK_EQ_U(flow_init(&t, SIZE_MAX / 2, 8), (unsigned long long)-EINVAL, "init: huge max");
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		CHECK_EQ_U(flow_init(&t, caps[i].max, 8), 0, "init row %zu", i + 1);
		CHECK_EQ_U(t.cap, caps[i].cap, "init row %zu: cap", i + 1);
		CHECK_EQ_U(t.max, caps[i].max, "init row %zu: max", i + 1);
		CHECK(t.count == 0 && t.dead == 0 && t.refused_full == 0, "init row %zu: zero",
		      i + 1);
		CHECK(!all_zero(t.hashkey, sizeof(t.hashkey)), "init row %zu: hash key", i + 1);
		flow_free(&t);
	}
}

static void test_keys(void)
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	static const uint8_t a6[16] = { 10, 0, 0, 1 }, b6[16] = { 10, 0, 0, 2 };
	struct flow_key k4, k6, kdirty, krev, kport;
	struct flowtable t;
	struct flow_entry *e4, *e6;
	bool created;

	/* Padding and the unused address bytes come out zero whatever was there. */
	memset(&kdirty, 0xa5, sizeof(kdirty));
	flow_key_make(&kdirty, AF_INET, a4, b4, 1, 2);
	memset(&k4, 0, sizeof(k4));
	flow_key_make(&k4, AF_INET, a4, b4, 1, 2);
	CHECK(memcmp(&k4, &kdirty, sizeof(k4)) == 0, "key: zero-padded");

	/* 10.0.0.1 and the IPv6 address 0a00:0001:: must not collide. */
	flow_key_make(&k6, AF_INET6, a6, b6, 1, 2);
	CHECK(memcmp(&k4, &k6, sizeof(k4)) != 0, "key: v4 vs v6");
	flow_key_make(&krev, AF_INET, b4, a4, 2, 1);
	CHECK(memcmp(&k4, &krev, sizeof(k4)) != 0, "key: direction");
	flow_key_make(&kport, AF_INET, a4, b4, 2, 1);
	CHECK(memcmp(&k4, &kport, sizeof(k4)) != 0, "key: ports");

	CHECK_EQ_U(flow_init(&t, 4, 8), 0, "keys: init");
	e4 = flow_insert(&t, &k4, 100, &created);
	CHECK(e4 && created, "keys: insert v4");
	e6 = flow_insert(&t, &k6, 100, &created);
	CHECK(e6 && created && e6 != e4, "keys: insert v6 is a new entry");
	CHECK(flow_lookup(&t, &k4) == e4 && flow_lookup(&t, &k6) == e6, "keys: both found");
	CHECK(flow_lookup(&t, &krev) == NULL, "keys: reverse not found");
	flow_remove(&t, e4);
	CHECK(flow_lookup(&t, &k4) == NULL && flow_lookup(&t, &k6) == e6, "keys: remove v4 only");
	flow_free(&t);
}

static void test_basic(void)
{
	struct flowtable t;
	struct flow_key k1, k2;
	struct flow_entry *e, *e2;
	bool created = false;

	key_n(&k1, 1, false);
	key_n(&k2, 2, true);
	CHECK_EQ_U(flow_init(&t, 8, 16), 0, "basic: init");

	e = flow_insert(&t, &k1, 50, &created);
	CHECK(e != NULL && created, "basic 1: insert creates");
	if (!e)
		goto out;
	CHECK(memcmp(&e->key, &k1, sizeof(k1)) == 0, "basic 2: key stored");
	CHECK_EQ_U(e->expires, 50, "basic 3: expires stored");
	CHECK(all_zero(e->value, 16), "basic 4: value zeroed");
	memcpy(e->value, "0123456789abcdef", 16);
	CHECK(flow_lookup(&t, &k1) == e, "basic 5: lookup finds it");
	CHECK(flow_lookup(&t, &k2) == NULL, "basic 6: other key absent");

	e2 = flow_insert(&t, &k1, 99, &created);
	CHECK(e2 == e && !created, "basic 7: duplicate returns existing");
	CHECK_EQ_U(e->expires, 50, "basic 8: duplicate keeps expires");
	CHECK(memcmp(e->value, "0123456789abcdef", 16) == 0, "basic 9: duplicate keeps value");
	CHECK_EQ_U(t.count, 1, "basic 10: count");
	CHECK(flow_insert(&t, &k1, 99, NULL) == e, "basic 11: ret_created may be NULL");

	e2 = flow_insert(&t, &k2, 60, &created);
	CHECK(e2 && e2 != e && created, "basic 12: second key");
	CHECK(e2 && e2->value != e->value, "basic 13: own value slot");
	CHECK_EQ_U(t.count, 2, "basic 14: count");

	flow_remove(&t, e);
	CHECK(flow_lookup(&t, &k1) == NULL, "basic 15: removed");
	CHECK(flow_lookup(&t, &k2) == e2, "basic 16: other survives");
	CHECK_EQ_U(t.count, 1, "basic 17: count after remove");
	flow_remove(&t, NULL);
	CHECK_EQ_U(t.count, 1, "basic 18: remove NULL is a no-op");

	e = flow_insert(&t, &k1, 70, &created);
	CHECK(e && created && all_zero(e->value, 16), "basic 19: reinsert is fresh");
out:
	flow_free(&t);

	/* value_size 0: a set of keys. */
	CHECK_EQ_U(flow_init(&t, 2, 0), 0, "basic 20: value_size 0");
	e = flow_insert(&t, &k1, 1, &created);
	CHECK(e && created && e->value == NULL, "basic 21: no value");
	flow_free(&t);
}

static void test_full(void)
{
	enum { MAX = 5 };
	struct flowtable t;
	struct flow_key k;
	struct flow_entry *e, *first = NULL;
	bool created;
	unsigned i;

	CHECK_EQ_U(flow_init(&t, MAX, 4), 0, "full: init");
	for (i = 0; i < MAX; i++) {
		key_n(&k, i, i % 2);
		e = flow_insert(&t, &k, 10, &created);
		CHECK(e && created, "full 1: insert %u", i);
		if (i == 0)
			first = e;
	}
	CHECK_EQ_U(t.count, MAX, "full 2: count");
	key_n(&k, MAX, false);
	created = true;
	CHECK(flow_insert(&t, &k, 10, &created) == NULL, "full 3: refused");
	CHECK(created, "full 4: ret_created untouched on failure");
	CHECK_EQ_U(t.refused_full, 1, "full 5: counted");
	CHECK(flow_insert(&t, &k, 10, &created) == NULL, "full 6: refused again");
	CHECK_EQ_U(t.refused_full, 2, "full 7: counted again");
	CHECK(flow_lookup(&t, &k) == NULL, "full 8: not there");

	/* An existing key is found even when full: not a refusal. */
	key_n(&k, 0, false);
	CHECK(flow_insert(&t, &k, 10, &created) == first && !created, "full 9: existing");
	CHECK_EQ_U(t.refused_full, 2, "full 10: not counted");

	flow_remove(&t, first);
	key_n(&k, MAX, false);
	e = flow_insert(&t, &k, 10, &created);
	CHECK(e && created, "full 11: room after remove");
	CHECK_EQ_U(t.count, MAX, "full 12: count");
	flow_free(&t);
}

struct expired {
	unsigned calls;
	uint64_t now;
	bool bad;
	struct flowtable *t;
};

static void on_expire(struct flow_entry *e, void *arg)
{
	struct expired *x = arg;

	x->calls++;
	/* Called before removal: still live, still findable, really expired. */
	if (e->expires > x->now || flow_lookup(x->t, &e->key) != e)
		x->bad = true;
}

static void test_gc(void)
{
	/* Entry n expires at 10 * (n + 1); rows give now and what must remain. */
	static const struct {
		uint64_t now;
		size_t removed, left;
	} rows[] = {
		{ 0, 0, 8 }, { 9, 0, 8 }, { 10, 1, 7 }, { 10, 0, 7 }, { 35, 2, 5 },
		{ 79, 4, 1 }, { 80, 1, 0 }, { UINT64_MAX, 0, 0 },
	};
	struct flowtable t;
	struct flow_key k;
	struct expired x = { 0, 0, false, &t };
	size_t i, removed;
	unsigned n;

	CHECK_EQ_U(flow_init(&t, 8, 8), 0, "gc: init");
	for (n = 0; n < 8; n++) {
		key_n(&k, n, n % 3 == 0);
		CHECK(flow_insert(&t, &k, 10 * (uint64_t)(n + 1), NULL) != NULL, "gc: insert %u", n);
	}
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		x.calls = 0;
		x.now = rows[i].now;
		removed = flow_gc(&t, rows[i].now, on_expire, &x);
		CHECK_EQ_U(removed, rows[i].removed, "gc row %zu: removed", i + 1);
		CHECK_EQ_U(x.calls, rows[i].removed, "gc row %zu: callbacks", i + 1);
		CHECK_EQ_U(t.count, rows[i].left, "gc row %zu: left", i + 1);
		CHECK(!x.bad, "gc row %zu: callback saw a live expired entry", i + 1);
		for (n = 0; n < 8; n++) {
			key_n(&k, n, n % 3 == 0);
			CHECK((flow_lookup(&t, &k) != NULL) == (10 * (uint64_t)(n + 1) > rows[i].now),
			      "gc row %zu: key %u", i + 1, n);
		}
	}

	/* NULL callback is allowed. */
	key_n(&k, 1, false);
	CHECK(flow_insert(&t, &k, 5, NULL) != NULL, "gc: reinsert");
	CHECK_EQ_U(flow_gc(&t, 5, NULL, NULL), 1, "gc: no callback");
	CHECK_EQ_U(t.count, 0, "gc: empty");
	flow_free(&t);
}

/*
 * Insert/remove churn in a small table: tombstones pile up and must be
 * cleared without losing a resident entry, and the load stays bounded so
 * lookups always meet an empty slot.
 */
static void test_churn(void)
{
	enum { MAX = 8, RESIDENT = 6 };
	struct flowtable t;
	struct flow_key k, res[RESIDENT];
	struct flow_entry *e;
	struct rng r = { 7 };
	unsigned i, j, bad_find = 0, bad_value = 0, bad_load = 0;
	uint32_t tag;
	bool created;

	CHECK_EQ_U(flow_init(&t, MAX, sizeof(uint32_t)), 0, "churn: init");
	fixed_hashkey(&t, 1);
	for (j = 0; j < RESIDENT; j++) {
		key_n(&res[j], j, j % 2);
		e = flow_insert(&t, &res[j], 1, NULL);
		CHECK(e != NULL, "churn: resident %u", j);
		if (e)
			memcpy(e->value, &j, sizeof(j));
	}
	for (i = 0; i < CHURN_ROUNDS; i++) {
		/* A transient flow in and out, and now and then a resident replaced. */
		random_key(&r, &k);
		e = flow_insert(&t, &k, 1, &created);
		if (!e || !created)
			bad_find++;
		else
			flow_remove(&t, e);
		if (i % 7 == 0) {
			j = (unsigned)(rnd(&r) % RESIDENT);
			flow_remove(&t, flow_lookup(&t, &res[j]));
			random_key(&r, &res[j]);
			e = flow_insert(&t, &res[j], 1, &created);
			if (!e || !created)
				bad_find++;
			else
				memcpy(e->value, &j, sizeof(j));
		}
		if (t.count != RESIDENT)
			bad_find++;
		if ((t.count + t.dead) * 4 > t.cap * 3)
			bad_load++;
		for (j = 0; j < RESIDENT; j++) {
			e = flow_lookup(&t, &res[j]);
			if (!e) {
				bad_find++;
				continue;
			}
			memcpy(&tag, e->value, sizeof(tag));
			if (tag != j)
				bad_value++;
		}
	}
	CHECK_EQ_U(bad_find, 0, "churn: lost or miscounted entries");
	CHECK_EQ_U(bad_value, 0, "churn: values moved away from their keys");
	CHECK_EQ_U(bad_load, 0, "churn: tombstones unbounded");
	CHECK_EQ_U(t.count, RESIDENT, "churn: final count");
	CHECK_EQ_U(t.refused_full, 0, "churn: nothing refused");
	flow_free(&t);
}

/* Value layout the model test writes: which pool key, and its generation. */
struct tagval {
	uint32_t idx;
	uint32_t gen;
};

struct model {
	size_t npool, max, count;
	struct flow_key key[POOL_MAX];
	bool live[POOL_MAX];
	uint64_t expires[POOL_MAX];
	uint32_t gen[POOL_MAX];
	uint64_t refused;
	uint64_t now;
	unsigned bad;		/* callback mismatches */
};

static void model_expire(struct flow_entry *e, void *arg)
{
	struct model *m = arg;
	struct tagval tv;

	memcpy(&tv, e->value, sizeof(tv));
	if (tv.idx >= m->npool || !m->live[tv.idx] || tv.gen != m->gen[tv.idx] ||
	    m->expires[tv.idx] > m->now || e->expires != m->expires[tv.idx] ||
	    memcmp(&e->key, &m->key[tv.idx], sizeof(e->key)) != 0) {
		m->bad++;
		return;
	}
	m->live[tv.idx] = false;
	m->count--;
}

/* Every pool key: present in the table exactly when live in the model, same value. */
static unsigned model_sweep(struct flowtable *t, const struct model *m)
{
	struct flow_entry *e;
	struct tagval tv;
	unsigned bad = 0;
	size_t i;

	for (i = 0; i < m->npool; i++) {
		e = flow_lookup(t, &m->key[i]);
		if (!m->live[i]) {
			bad += e != NULL;
			continue;
		}
		if (!e) {
			bad++;
			continue;
		}
		memcpy(&tv, e->value, sizeof(tv));
		bad += tv.idx != i || tv.gen != m->gen[i] || e->expires != m->expires[i];
	}
	bad += t->count != m->count;
	return bad;
}

static void model_run(unsigned row, size_t max, size_t npool, uint64_t seed)
{
	static struct model m;
	struct flowtable t;
	struct flow_entry *e;
	struct rng r = { seed };
	struct tagval tv;
	unsigned op, bad = 0;
	size_t i, n, want_removed;
	bool created;

	memset(&m, 0, sizeof(m));
	m.npool = npool;
	m.max = max;
	for (i = 0; i < npool; i++)
		random_key(&r, &m.key[i]);
	CHECK_EQ_U(flow_init(&t, max, sizeof(struct tagval)), 0, "model %u: init", row);
	fixed_hashkey(&t, (uint8_t)row);

	for (op = 0; op < MODEL_OPS; op++) {
		i = (size_t)(rnd(&r) % npool);
		switch (rnd(&r) % 8) {
		case 0: case 1: case 2:		/* insert */
			e = flow_insert(&t, &m.key[i], m.now + 1 + rnd(&r) % 100, &created);
			if (m.live[i] && (!e || created)) {
				bad++;
			} else if (m.live[i]) {
				memcpy(&tv, e->value, sizeof(tv));
				bad += tv.idx != i || tv.gen != m.gen[i] || e->expires != m.expires[i];
			} else if (m.count == max) {
				m.refused++;
				bad += e != NULL;
			} else if (!e || !created || !all_zero(e->value, sizeof(tv))) {
				bad++;
			} else {
				m.live[i] = true;
				m.count++;
				m.expires[i] = e->expires;
				m.gen[i]++;
				tv.idx = (uint32_t)i;
				tv.gen = m.gen[i];
				memcpy(e->value, &tv, sizeof(tv));
			}
			break;
		case 3: case 4:			/* remove */
			e = flow_lookup(&t, &m.key[i]);
			bad += (e != NULL) != m.live[i];
			if (e) {
				flow_remove(&t, e);
				m.live[i] = false;
				m.count--;
			}
			break;
		case 5: case 6:			/* lookup */
			e = flow_lookup(&t, &m.key[i]);
			bad += (e != NULL) != m.live[i];
			if (e) {
				memcpy(&tv, e->value, sizeof(tv));
				bad += tv.idx != i || tv.gen != m.gen[i];
			}
			break;
		default:			/* the clock moves, sometimes gc */
			m.now += rnd(&r) % 8;
			if (rnd(&r) % 4)
				break;
			for (n = 0, want_removed = 0; n < npool; n++)
				want_removed += m.live[n] && m.expires[n] <= m.now;
			bad += flow_gc(&t, m.now, model_expire, &m) != want_removed;
			bad += model_sweep(&t, &m);
			break;
		}
		bad += t.count != m.count;
		bad += t.refused_full != m.refused;
		bad += unused_dirty(&t);
		bad += (t.count + t.dead) * 4 > t.cap * 3;
	}
	bad += model_sweep(&t, &m);
	CHECK_EQ_U(bad, 0, "model %u (max %zu, pool %zu): mismatches", row, max, npool);
	CHECK_EQ_U(m.bad, 0, "model %u: gc callback mismatches", row);
	CHECK_EQ_U(t.refused_full, m.refused, "model %u: refusals", row);
	flow_free(&t);
}

static void test_model(void)
{
	static const struct {
		size_t max, npool;
	} rows[] = {
		{ 1, 3 }, { 2, 5 }, { 3, 4 }, { 7, 20 }, { 8, 8 }, { 16, 40 }, { 64, 128 },
		{ 100, 300 }, { 200, POOL_MAX },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		model_run((unsigned)i + 1, rows[i].max, rows[i].npool, 1000 + i);
}

int main(void)
{
	if (sodium_init() < 0) {
		printf("not ok: sodium_init\n");
		return 1;
	}
	test_init();
	test_keys();
	test_basic();
	test_full();
	test_gc();
	test_churn();
	test_model();
	return unit_done("flowtable");
}
