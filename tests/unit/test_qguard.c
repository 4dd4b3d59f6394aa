/*
 * test_qguard.c - what the queue guard answers for each packet a killed
 * daemon left queued (qguard_decide()): never a knock let through, a new
 * SYN sent on to the nat rule's refusal with our bits cleared and the rest
 * of the mark kept, a no-connection segment on to the rule that rejects it
 * only when that rule exists (no fail_open), everything else dropped.
 * Table-driven over two mark layouts.
 */
#include <linux/netfilter.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/marks.h"
#include "kernel/qguard.h"
#include "unit.h"

enum code { NONE, INTEG, REPLY, INVALID, NOCONN, ACCEPTED, NEWSYN, FWD, UNUSED };

static const struct row {
	const char *what;
	enum code code;
	bool fail_open;
	int verdict;
	bool set_mark;		/* to the other bits of the mark, ours cleared */
} rows[] = {
	{ "a new SYN: on to the nat rule, unmarked (refused there)", NEWSYN, false, NF_ACCEPT, true },
	{ "a new SYN with fail_open: on, as the bypass sends it", NEWSYN, true, NF_ACCEPT, true },
	{ "no code (queue rules without bypass): dropped", NONE, false, NF_DROP, false },
	{ "no code, fail_open: dropped", NONE, true, NF_DROP, false },
	{ "a no-connection segment: on to the rule that rejects it", NOCONN, false, NF_ACCEPT, false },
	{ "a no-connection segment with fail_open (no such rule): dropped", NOCONN, true, NF_DROP,
	  false },
	{ "the accepted code (only a verdict sets it, never queued): dropped", ACCEPTED, false,
	  NF_DROP, false },
	{ "the accepted code, fail_open: dropped", ACCEPTED, true, NF_DROP, false },
	{ "an integrity SYN sent round (its flag): dropped", INTEG, false, NF_DROP, false },
	{ "the service's integrity segment: dropped", REPLY, false, NF_DROP, false },
	{ "an invalid segment of a checked flow: dropped", INVALID, false, NF_DROP, false },
	{ "a routed SYN to knock (gateway client role): dropped, not sent unknocked", FWD, false,
	  NF_DROP, false },
	{ "a routed SYN to knock, fail_open: dropped", FWD, true, NF_DROP, false },
	{ "a code no rule uses: dropped", UNUSED, false, NF_DROP, false },
};

static uint32_t code_of(const struct marks *m, enum code c)
{
	switch (c) {
	case NONE:
		return 0;
	case INTEG:
		return m->integ;
	case REPLY:
		return m->reply;
	case INVALID:
		return m->invalid;
	case NOCONN:
		return m->noconn;
	case ACCEPTED:
		return m->accepted;
	case NEWSYN:
		return m->newsyn;
	case FWD:
		return m->fwd;
	case UNUSED:
		break;
	}
	return m->mask;		/* all ones: beyond the seven codes of a three-bit mask */
}

int main(void)
{
	static const struct layout {
		uint32_t mask, ct_bit, others;	/* others: bits of other users of the mark */
	} layouts[] = {
		{ 0x7f000000, 0x40000000, 0x80000abc },
		{ 0x00000007, 0x80000000, 0xfffffff8 },
	};

	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		struct marks m;

		CHECK(marks_make(layouts[l].mask, layouts[l].ct_bit, &m) == 0, "layout %zu", l);
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			const struct row *r = &rows[i];
			uint32_t mark = code_of(&m, r->code) | layouts[l].others;
			struct qguard_answer a = qguard_decide(&m, r->fail_open, mark);

			CHECK(a.verdict == r->verdict, "layout %zu, %s: verdict %d, want %d", l,
			      r->what, a.verdict, r->verdict);
			CHECK(a.set_mark == r->set_mark, "layout %zu, %s: sets the mark %d, want %d",
			      l, r->what, a.set_mark, r->set_mark);
			if (a.set_mark)
				CHECK_EQ_U(a.mark, layouts[l].others, "layout %zu, %s: mark", l,
					   r->what);
			/* Whatever else it does, never the code that passes the nat rule. */
			CHECK(!(a.set_mark && marks_code(&m, a.mark) == m.accepted),
			      "layout %zu, %s: never marked accepted", l, r->what);
		}
	}
	return unit_done("qguard");
}
