/*
 * test_tally.c - groups that count their members (tally.[ch]).
 *
 * Rows: numbered steps (join, leave, then what the tally must say: a
 * member's group size, the heaviest group's oldest member and size).  Then
 * random joins and leaves against a reference model that keeps each
 * group's members in a plain array: after every step the heaviest size is
 * the model's largest, and the member tally_heaviest names is the oldest
 * of a group of that size.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <sodium.h>

#include "common/table/tally.h"
#include "unit.h"

enum { MAX_STEPS = 16 };

enum op { END, JOIN, LEAVE, SIZE_OF, HEAVIEST, GROUPS };

struct step {
	enum op op;
	uint32_t m;
	char group;		/* JOIN: the group's name, one letter */
	int want;		/* JOIN: 0 or -errno; SIZE_OF, GROUPS: the number */
	uint32_t want_m;	/* HEAVIEST: its oldest member (TALLY_NONE: none) */
	uint32_t want_size;	/* HEAVIEST: its size */
};

struct scenario {
	const char *name;
	size_t members, groups;
	struct step s[MAX_STEPS];
};

#define J(m_, g_) { .op = JOIN, .m = (m_), .group = (g_) }
#define L(m_) { .op = LEAVE, .m = (m_) }
#define HV(m_, n_) { .op = HEAVIEST, .want_m = (m_), .want_size = (n_) }

static const struct scenario scenarios[] = {
	{ "empty", 4, 4, { HV(TALLY_NONE, 0), { .op = GROUPS, .want = 0 } } },
	{ "one group: oldest first, sizes follow", 8, 4,
	  { J(3, 'a'), J(1, 'a'), J(5, 'a'), HV(3, 3), { .op = SIZE_OF, .m = 1, .want = 3 },
	    L(3), HV(1, 2), L(5), HV(1, 1), L(1), HV(TALLY_NONE, 0),
	    { .op = SIZE_OF, .m = 1, .want = 0 }, { .op = GROUPS, .want = 0 } } },
	{ "the heaviest of two; a tie goes to the one that got there first", 8, 4,
	  { J(0, 'a'), J(1, 'b'), J(2, 'b'), HV(1, 2), J(3, 'a'), HV(1, 2), L(1), HV(0, 2),
	    L(0), L(3), HV(2, 1), { .op = GROUPS, .want = 1 } } },
	{ "leaving from the middle keeps the order", 8, 2,
	  { J(4, 'x'), J(5, 'x'), J(6, 'x'), L(5), HV(4, 2), L(4), HV(6, 1), J(4, 'x'), HV(6, 2) } },
	{ "no room for a third group; members in no group", 8, 2,
	  { J(0, 'a'), J(1, 'b'), { .op = JOIN, .m = 2, .group = 'c', .want = -ENOSPC },
	    { .op = SIZE_OF, .m = 2, .want = 0 }, L(2), { .op = GROUPS, .want = 2 },
	    { .op = JOIN, .m = 0, .group = 'b', .want = -EINVAL },
	    { .op = JOIN, .m = 8, .group = 'b', .want = -EINVAL }, L(0),
	    { .op = JOIN, .m = 2, .group = 'c', .want = 0 }, HV(1, 1) } },
};

static void name(uint8_t out[static TALLY_KEY_LEN], char g)
{
	memset(out, 0, TALLY_KEY_LEN);
	out[0] = (uint8_t)g;
}

static void run(unsigned no, const struct scenario *sc)
{
	struct tally t;
	uint8_t key[TALLY_KEY_LEN];

	if (tally_init(&t, sc->members, sc->groups) < 0) {
		CHECK(0, "scenario %u: init", no);
		return;
	}
	for (unsigned i = 0; i < MAX_STEPS && sc->s[i].op != END; i++) {
		const struct step *st = &sc->s[i];
		uint32_t size, m;

		switch (st->op) {
		case JOIN:
			name(key, st->group);
			CHECK_EQ_U((unsigned)tally_join(&t, key, st->m), (unsigned)st->want,
				   "scenario %u step %u: join (%s)", no, i + 1, sc->name);
			break;
		case LEAVE:
			tally_leave(&t, st->m);
			break;
		case SIZE_OF:
			CHECK_EQ_U(tally_size_of(&t, st->m), (unsigned)st->want,
				   "scenario %u step %u: size of (%s)", no, i + 1, sc->name);
			break;
		case HEAVIEST:
			m = tally_heaviest(&t, &size);
			CHECK_EQ_U(m, st->want_m, "scenario %u step %u: heaviest's oldest (%s)", no,
				   i + 1, sc->name);
			CHECK_EQ_U(size, st->want_size, "scenario %u step %u: heaviest's size (%s)",
				   no, i + 1, sc->name);
			break;
		case GROUPS:
			CHECK_EQ_U(t.ngroups, (unsigned)st->want, "scenario %u step %u: groups (%s)",
				   no, i + 1, sc->name);
			break;
		case END:
			break;
		}
	}
	tally_free(&t);
}

enum { M = 300, G = 12, OPS = 100000 };

/* The model: each group's members in joining order. */
struct mgroup {
	uint32_t m[M];
	size_t n;
};

static void model(void)
{
	struct tally t;
	static struct mgroup mg[G];
	int group_of[M];
	uint64_t rng = 42;
	unsigned bad = 0;

	if (tally_init(&t, M, G) < 0) {
		CHECK(0, "model: init");
		return;
	}
	for (size_t i = 0; i < M; i++)
		group_of[i] = -1;
	for (unsigned op = 0; op < OPS; op++) {
		uint32_t m = (uint32_t)(unit_rnd(&rng) % M);
		uint8_t key[TALLY_KEY_LEN];

		if (group_of[m] < 0) {
			/* Skewed: group 0 gets the most, so sizes climb and fall. */
			int g = (int)(unit_rnd(&rng) % 3 == 0 ? 0 : unit_rnd(&rng) % G);

			name(key, (char)('A' + g));
			if (tally_join(&t, key, m) != 0) {
				bad++;
				continue;
			}
			group_of[m] = g;
			mg[g].m[mg[g].n++] = m;
		} else {
			struct mgroup *x = &mg[group_of[m]];
			size_t j = 0;

			tally_leave(&t, m);
			while (j < x->n && x->m[j] != m)
				j++;
			memmove(&x->m[j], &x->m[j + 1], (x->n - j - 1) * sizeof(x->m[0]));
			x->n--;
			group_of[m] = -1;
		}
		size_t top = 0;
		for (int g = 0; g < G; g++)
			top = mg[g].n > top ? mg[g].n : top;
		uint32_t size, oldest = tally_heaviest(&t, &size);
		bool one = false;
		for (int g = 0; g < G; g++)
			one |= mg[g].n == top && top > 0 && mg[g].m[0] == oldest;
		if (size != top || (top > 0 && !one) || (top == 0 && oldest != TALLY_NONE))
			bad++;
		if (tally_size_of(&t, m) != (group_of[m] < 0 ? 0 : mg[group_of[m]].n))
			bad++;
	}
	CHECK_EQ_U(bad, 0, "model: %u random joins and leaves", (unsigned)OPS);
	tally_free(&t);
}

int main(void)
{
	if (sodium_init() < 0) {
		printf("not ok: sodium_init\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run((unsigned)i + 1, &scenarios[i]);
	model();
	return unit_done("tally");
}
