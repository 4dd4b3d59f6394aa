/*
 * harness.h - what the libFuzzer targets share: the "broken property"
 * abort, the attribute that keeps a harness's own loops out of coverage,
 * and the @include guard of the two that feed libconfig.
 */
#ifndef KNOCKGW_FUZZ_HARNESS_H
#define KNOCKGW_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

/* Any broken property aborts, which libFuzzer reports as a crash. */
#define REQUIRE(cond)                                                           \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "%s:%d: broken: %s\n", __FILE__,        \
				__LINE__, #cond);                               \
			abort();                                                \
		}                                                               \
	} while (0)

/*
 * For the harness's own checks and models, byte by byte: without coverage
 * instrumentation (traced, their comparisons take up to four fifths of a
 * run and tell libFuzzer nothing about the code under test), and not
 * inlined into instrumented callers, which would trace them after all.
 */
#define HARNESS __attribute__((no_sanitize("coverage"), noinline))

/*
 * libconfig's @include (it cannot be switched off in 1.5) would let an input
 * read any file, /dev/stdin included, and stall the run; the directive is
 * matched without regard to case to be safe.
 */
HARNESS static inline bool has_include(const uint8_t *data, size_t size)
{
	static const char word[] = "@include";
	const size_t n = sizeof(word) - 1;

	for (size_t i = 0; i + n <= size; i++) {
		if (data[i] == '@' && strncasecmp((const char *)data + i, word, n) == 0)
			return true;
	}
	return false;
}

#endif
