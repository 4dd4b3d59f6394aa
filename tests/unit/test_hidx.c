/*
 * test_hidx.c - the hash index (hidx.[ch]) against a reference model.
 *
 * Random adds and deletes, many of them under colliding hashes (a few
 * hash values for many ids, so runs are long and deletions shift entries
 * back across wrapped runs), and after each step every id the model holds
 * is found under its hash and nothing else is.  Rows first: the limits.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <sodium.h>

#include "common/table/hidx.h"
#include "unit.h"

enum { MODEL_MAX = 200, OPS = 60000 };

static void limits(void)
{
	struct hidx x;

	/* 1 */ CHECK_EQ_U((unsigned)-hidx_init(&x, 0), EINVAL, "max 0 refused");
	/* 2 */ CHECK_EQ_U(hidx_init(&x, 3), 0, "init 3");
	/* 3 */ CHECK_EQ_U(x.cap, 8, "capacity: a power of two, at least twice max");
	CHECK_EQ_U(hidx_add(&x, 7, 1), 0, "add 1");
	CHECK_EQ_U(hidx_add(&x, 7, 2), 0, "add 2 under the same hash");
	CHECK_EQ_U(hidx_add(&x, 0xffffffff, 3), 0, "add 3 at the last slot");
	/* 4 */ CHECK_EQ_U((unsigned)-hidx_add(&x, 1, 4), ENOSPC, "a fourth is refused");
	/* 5: deleting what is not there changes nothing */
	hidx_del(&x, 7, 9);
	hidx_del(&x, 8, 1);
	CHECK_EQ_U(x.count, 3, "count after deleting absent ids");
	struct hidx_cursor c;
	unsigned seen = 0;
	for (uint32_t id = hidx_first(&x, 7, &c); id != HIDX_NONE; id = hidx_next(&x, &c))
		seen |= 1u << id;
	/* 6 */ CHECK_EQ_U(seen, 0x6, "both ids under hash 7");
	hidx_del(&x, 7, 1);
	seen = 0;
	for (uint32_t id = hidx_first(&x, 7, &c); id != HIDX_NONE; id = hidx_next(&x, &c))
		seen |= 1u << id;
	/* 7 */ CHECK_EQ_U(seen, 0x4, "only id 2 left under hash 7");
	/* 8 */ CHECK_EQ_U(hidx_first(&x, 0xffffffff, &c), 3, "the wrapped one");
	hidx_free(&x);
}

/* Every id the model has is found under its hash, exactly once; no other is. */
static bool agrees(const struct hidx *x, const bool *in, const uint32_t *hash_of)
{
	for (uint32_t id = 0; id < MODEL_MAX; id++) {
		struct hidx_cursor c;
		unsigned found = 0;

		for (uint32_t g = hidx_first(x, hash_of[id], &c); g != HIDX_NONE;
		     g = hidx_next(x, &c))
			if (g == id)
				found++;
		if (found != (in[id] ? 1u : 0u))
			return false;
	}
	return true;
}

static void model(void)
{
	struct hidx x;
	bool in[MODEL_MAX] = { false };
	uint32_t hash_of[MODEL_MAX] = { 0 };
	uint64_t rng = 20261207;
	size_t n = 0;
	unsigned bad = 0, checked = 0;

	if (hidx_init(&x, MODEL_MAX) < 0) {
		CHECK(0, "model: init");
		return;
	}
	for (unsigned op = 0; op < OPS; op++) {
		uint32_t id = (uint32_t)(unit_rnd(&rng) % MODEL_MAX);

		if (!in[id]) {
			/* Few distinct hashes, near the table's end: long, wrapping runs. */
			hash_of[id] = (uint32_t)(x.cap - 1 - unit_rnd(&rng) % 5) +
				      (uint32_t)(unit_rnd(&rng) % 3) * (uint32_t)x.cap;
			if (hidx_add(&x, hash_of[id], id) == 0) {
				in[id] = true;
				n++;
			} else {
				bad++;
			}
		} else {
			hidx_del(&x, hash_of[id], id);
			in[id] = false;
			n--;
		}
		if (x.count != n)
			bad++;
		if (op % 97 == 0) {
			checked++;
			bad += !agrees(&x, in, hash_of);
		}
	}
	CHECK_EQ_U(bad, 0, "model: %u checks of every id", checked);
	hidx_free(&x);
}

int main(void)
{
	if (sodium_init() < 0) {
		printf("not ok: sodium_init\n");
		return 1;
	}
	limits();
	model();
	return unit_done("hidx");
}
