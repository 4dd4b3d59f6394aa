/*
 * test_marks.c - the mark bits knockgw uses (marks.[ch]): which masks and
 * conntrack bits are accepted, and the codes they give.  Table-driven.
 */
#include <stdint.h>

#include "marks.h"
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

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct kgw_marks m = { 0 };
		int ret = kgw_marks_make(r->mask, r->ct_bit, &m);

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
		CHECK_EQ_U(kgw_mark_code(&m, m.fwd | ~m.mask), m.fwd, "row %zu: fwd code", i + 1);
		CHECK_EQ_U(m.ct_integ, r->ct_bit, "row %zu: ct bit", i + 1);
		CHECK_EQ_U(kgw_mark_own(&m, 0xffffffffu) | m.mask, 0xffffffffu, "row %zu: own", i + 1);
		CHECK_EQ_U(kgw_mark_code(&m, m.noconn | ~m.mask), m.noconn, "row %zu: code", i + 1);
	}
	return unit_done("marks");
}
