/*
 * udiff.h - a unified diff of two texts, as `diff -u` prints it, so that
 * `knockgw invite` and `revoke` can show the change they would make and
 * patch(1) can apply it.
 *
 * Lines are compared whole (Myers' O(ND) greedy algorithm, where D, the
 * lines that differ, is bounded by UDIFF_MAX_D: past it the whole file is
 * one hunk, still a correct diff).  Three lines of context; a last line
 * without a newline is marked "\ No newline at end of file".
 *
 * Pure but for writing to the FILE it is given.
 */
#ifndef KNOCKGW_UDIFF_H
#define KNOCKGW_UDIFF_H

#include <stddef.h>
#include <stdio.h>

enum { UDIFF_MAX_D = 1000, UDIFF_CONTEXT = 3 };

/*
 * Prints the diff from a (alen bytes, named a_name in the "---" line) to b
 * (named b_name) on f; nothing when they are the same.  0, -ENOMEM, or
 * -EIO when f failed.
 */
int udiff_print(FILE *f, const char *a_name, const char *a, size_t alen, const char *b_name,
		const char *b, size_t blen);

#endif
