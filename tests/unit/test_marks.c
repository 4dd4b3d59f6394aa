/*
 * test_marks.c - the mark bits knockgw uses (marks.[ch]): which masks and
 * conntrack bits are accepted, and the codes they give; the conntrack label
 * bits of the user translation path (marks_label_put/get).  Table-driven.
 */
#include <stdint.h>

#include "common/marks.h"
#include "unit.h"

static const struct row {
	uint32_t mask, ct_bit;
	int ret;
	uint32_t integ, reply, invalid, noconn, accepted, newsyn;
} rows[] = {
	{ 0x7f000000, 0x40000000, 0, 0x01000000, 0x02000000, 0x03000000, 0x04000000, 0x05000000, 0x06000000 },
	{ 0x0000ff00, 0x00000001, 0, 0x00000100, 0x00000200, 0x00000300, 0x00000400, 0x00000500, 0x00000600 },
	{ 0x00000007, 0x80000000, 0, 1, 2, 3, 4, 5, 6 },
	{ 0xe0000000, 0x00010000, 0, 0x20000000, 0x40000000, 0x60000000, 0x80000000, 0xa0000000, 0xc0000000 },
	{ 0xffffffff, 0x00000100, 0, 1, 2, 3, 4, 5, 6 },
	{ 0x00000003, 0x1, -22, 0, 0, 0, 0, 0, 0 },		/* two bits: too few for six codes */
	{ 0x0f0f0000, 0x1, -22, 0, 0, 0, 0, 0, 0 },		/* not one run */
	{ 0x80000001, 0x1, -22, 0, 0, 0, 0, 0, 0 },		/* wraps: not one run */
	{ 0, 0x1, -22, 0, 0, 0, 0, 0, 0 },
	{ 0x7f000000, 0, -22, 0, 0, 0, 0, 0, 0 },			/* no conntrack bit */
	{ 0x7f000000, 0x3, -22, 0, 0, 0, 0, 0, 0 },		/* two conntrack bits */
};

/* Label words as the kernel holds them: bit b at b % 32 of word b / 32. */
static const struct label_row {
	unsigned base;
	uint32_t shift;
	uint32_t val[MARKS_LABEL_WORDS], mask[MARKS_LABEL_WORDS];
} label_rows[] = {
	/* The default: the flag at 95, the shift as word 3 whole. */
	{ 95, 0x12345678, { 0, 0, 0x80000000, 0x12345678 }, { 0, 0, 0x80000000, 0xffffffff } },
	{ 95, 0, { 0, 0, 0x80000000, 0 }, { 0, 0, 0x80000000, 0xffffffff } },
	{ 0, 0xffffffff, { 0xffffffff, 1, 0, 0 }, { 0xffffffff, 1, 0, 0 } },
	{ 0, 0x80000001, { 0x00000003, 1, 0, 0 }, { 0xffffffff, 1, 0, 0 } },
	/* Across a word boundary, unaligned. */
	{ 40, 0xdeadbeef, { 0, 0xdeadbeef << 9 | 1u << 8, 0xdeadbeef >> 23, 0 },
	  { 0, 0xffffff00, 0x1ff, 0 } },
	{ 31, 0x00000001, { 0x80000000, 1, 0, 0 }, { 0x80000000, 0xffffffff, 0, 0 } },
	{ 63, 0xa5a5a5a5, { 0, 0x80000000, 0xa5a5a5a5, 0 }, { 0, 0x80000000, 0xffffffff, 0 } },
	/* Past the words: nothing written, nothing read. */
	{ 96, 0x1234, { 0 }, { 0 } },
	{ 1000, 0x1234, { 0 }, { 0 } },
};

static void test_labels(void)
{
	for (size_t i = 0; i < sizeof(label_rows) / sizeof(label_rows[0]); i++) {
		const struct label_row *r = &label_rows[i];
		uint32_t val[MARKS_LABEL_WORDS], mask[MARKS_LABEL_WORDS], got = 0xabad1dea;
		bool valid = r->base <= MARKS_CTLABEL_MAX;

		marks_label_put(r->base, r->shift, val, mask);
		for (size_t w = 0; w < MARKS_LABEL_WORDS; w++) {
			CHECK_EQ_U(val[w], r->val[w], "label row %zu: word %zu", i + 1, w);
			CHECK_EQ_U(mask[w], r->mask[w], "label row %zu: mask word %zu", i + 1, w);
		}
		CHECK(marks_label_get(r->base, val, &got) == valid, "label row %zu: flag read back",
		      i + 1);
		CHECK_EQ_U(got, valid ? r->shift : 0xabad1dea, "label row %zu: shift read back",
			   i + 1);
		/* Other software's bits around ours change nothing. */
		for (size_t w = 0; w < MARKS_LABEL_WORDS; w++)
			val[w] |= ~mask[w];
		got = 0xabad1dea;
		CHECK(marks_label_get(r->base, val, &got) == valid, "label row %zu: flag among others",
		      i + 1);
		CHECK_EQ_U(got, valid ? r->shift : 0xabad1dea, "label row %zu: shift among others",
			   i + 1);
		/* Our flag clear: no shift, whatever the other bits say. */
		if (valid) {
			val[r->base / 32] &= ~(1u << (r->base % 32));
			CHECK(!marks_label_get(r->base, val, &got), "label row %zu: no flag", i + 1);
		}
	}
}

int main(void)
{
	test_labels();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct marks m = { 0 };
		int ret = marks_make(r->mask, r->ct_bit, &m);

		CHECK(ret == r->ret, "row %zu: returns %d, want %d", i + 1, ret, r->ret);
		if (ret < 0 || r->ret < 0)
			continue;
		CHECK_EQ_U(m.integ, r->integ, "row %zu: integ", i + 1);
		CHECK_EQ_U(m.reply, r->reply, "row %zu: reply", i + 1);
		CHECK_EQ_U(m.invalid, r->invalid, "row %zu: invalid", i + 1);
		CHECK_EQ_U(m.noconn, r->noconn, "row %zu: noconn", i + 1);
		CHECK_EQ_U(m.accepted, r->accepted, "row %zu: accepted", i + 1);
		CHECK_EQ_U(m.newsyn, r->newsyn, "row %zu: newsyn", i + 1);
		/* Code 7, the gateway client's routed SYN: within the mask, like the others. */
		CHECK_EQ_U(m.fwd, r->noconn + 3 * r->integ, "row %zu: fwd", i + 1);
		CHECK_EQ_U(marks_code(&m, m.fwd | ~m.mask), m.fwd, "row %zu: fwd code", i + 1);
		CHECK_EQ_U(m.ct_integ, r->ct_bit, "row %zu: ct bit", i + 1);
		CHECK_EQ_U(marks_own(&m, 0xffffffffu) | m.mask, 0xffffffffu, "row %zu: own", i + 1);
		CHECK_EQ_U(marks_code(&m, m.noconn | ~m.mask), m.noconn, "row %zu: code", i + 1);
	}
	return unit_done("marks");
}
