/*
 * unit.h - the few macros the table-driven unit tests share.
 *
 * Each test binary prints one "ok"/"not ok" line per checked row (TAP style),
 * then "N passed, N failed", and exits non-zero when anything failed.
 */
#ifndef KNOCKGW_UNIT_H
#define KNOCKGW_UNIT_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned unit_passed, unit_failed;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (cond) {                                                     \
			unit_passed++;                                          \
		} else {                                                        \
			unit_failed++;                                          \
			printf("not ok %s:%d: ", __FILE__, __LINE__);           \
			printf(__VA_ARGS__);                                    \
			printf("  [%s]\n", #cond);                              \
		}                                                               \
	} while (0)

#define CHECK_EQ_U(got, want, ...)                                              \
	do {                                                                    \
		unsigned long long g_ = (got), w_ = (want);                     \
		if (g_ == w_) {                                                 \
			unit_passed++;                                          \
		} else {                                                        \
			unit_failed++;                                          \
			printf("not ok %s:%d: got %llu (0x%llx), want %llu (0x%llx): ", \
			       __FILE__, __LINE__, g_, g_, w_, w_);             \
			printf(__VA_ARGS__);                                    \
			printf("\n");                                           \
		}                                                               \
	} while (0)

/* splitmix64: tiny and seedable; a fixed seed gives the same cases every run. */
static inline uint64_t unit_rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline int unit_done(const char *name)
{
	printf("%s: %u passed, %u failed\n", name, unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
