/*
 * test_ctnl.c - ctnl_parse_info(): one conntrack entry message, as the
 * kernel (or anyone able to answer on the socket) could send it: the mark,
 * the labels (the user path's shift) and the sequence adjustment.
 *
 * Each row builds a message with libmnl from a few steps (a u32 attribute,
 * raw bytes, a nest, a run of attribute types, a cut length) and says what
 * the parse must return.  The rows that matter most put attribute types the
 * sequence-adjustment nest does not define (above CTA_SEQADJ_MAX, up to
 * CTA_MAX and beyond) inside CTA_SEQ_ADJ_ORIG: they must be skipped, not
 * stored past the nest's table.  No I/O.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

#include "kernel/ctnl.h"
#include "unit.h"

enum { MAX_STEPS = 12, BUF_BYTES = 4096 };

enum op {
	END,		/* no more steps */
	U32,		/* attribute type, 32-bit value (network order on the wire) */
	U8,		/* attribute type, 8-bit value */
	RAW,		/* attribute type with len bytes of 0xab */
	NEST,		/* nest of type ... */
	NEST_END,	/* ... ends here */
	RUN,		/* u32 attributes of every type from type to len */
	CUT,		/* the message's length shrinks by len bytes */
	LEN,		/* the message's length is exactly len bytes */
	LABELS,		/* CTA_LABELS of len bytes, 32-bit word i = value + i */
};

struct step {
	enum op op;
	uint16_t type;
	uint32_t len;
	uint32_t value;
};

struct row {
	const char *name;
	struct step s[MAX_STEPS];
	int rc;
	struct ct_info want;
};

#define SEQ_ADJ_NESTED (CTA_SEQ_ADJ_ORIG | NLA_F_NESTED)
#define POS(v) { U32, CTA_SEQADJ_CORRECTION_POS, 0, v }
#define BEFORE(v) { U32, CTA_SEQADJ_OFFSET_BEFORE, 0, v }
#define AFTER(v) { U32, CTA_SEQADJ_OFFSET_AFTER, 0, v }
#define MARK(v) { U32, CTA_MARK, 0, v }
#define ADJ(p, d) { .has_seqadj = true, .pos = p, .delta = d }
#define LAB(n, v) { LABELS, CTA_LABELS, n, v }
#define WORDS(...) { .labels = { __VA_ARGS__ } }
#define NEST_OF(t) { NEST, t, 0, 0 }
#define NEND { NEST_END, 0, 0, 0 }
#define RAW_OF(t, n) { RAW, t, n, 0 }
#define RUN_OF(from, to, v) { RUN, from, to, v }
#define CUT_BY(n) { CUT, 0, n, 0 }
#define LEN_OF(n) { LEN, 0, n, 0 }
#define NONE { END, 0, 0, 0 }
/* CTA_PROTOINFO { CTA_PROTOINFO_TCP { CTA_PROTOINFO_TCP_STATE st } } */
#define TCP_STATE(st) NEST_OF(CTA_PROTOINFO), NEST_OF(CTA_PROTOINFO_TCP), \
	{ U8, CTA_PROTOINFO_TCP_STATE, 0, st }, NEND, NEND

static const struct row rows[] = {
	{ "no attributes", { NONE }, 0, { 0 } },
	{ "a mark", { MARK(0x1234) }, 0, { .mark = 0x1234 } },
	{ "a sequence adjustment and a mark",
	  { NEST_OF(CTA_SEQ_ADJ_ORIG), POS(1000), BEFORE(77), AFTER(77), NEND, MARK(5) },
	  0, { .has_seqadj = true, .pos = 1000, .delta = 77, .mark = 5 } },
	{ "the nest flagged NLA_F_NESTED, as the kernel sends it",
	  { NEST_OF(SEQ_ADJ_NESTED), POS(0xfffffff0), BEFORE(0x80000000), NEND },
	  0, ADJ(0xfffffff0, 0x80000000) },
	/* Types the nest does not define: every one up to CTA_MAX, then more. */
	{ "seqadj nest with types CTA_SEQADJ_MAX+1..CTA_MAX only",
	  { NEST_OF(CTA_SEQ_ADJ_ORIG), RUN_OF(CTA_SEQADJ_MAX + 1, CTA_MAX, 9), NEND },
	  0, { 0 } },
	{ "seqadj nest with its fields, then types up to CTA_MAX",
	  { NEST_OF(CTA_SEQ_ADJ_ORIG), POS(42), BEFORE(7),
	    RUN_OF(CTA_SEQADJ_MAX + 1, CTA_MAX, 9), NEND },
	  0, ADJ(42, 7) },
	{ "seqadj nest with types far above CTA_MAX",
	  { NEST_OF(CTA_SEQ_ADJ_ORIG), { U32, CTA_MAX + 1, 0, 1 }, { U32, 0x3fff, 0, 1 },
	    POS(3), BEFORE(4), { U32, 0x2000, 0, 1 }, NEND },
	  0, ADJ(3, 4) },
	{ "top-level types above CTA_MAX are skipped",
	  { RUN_OF(CTA_MAX + 1, CTA_MAX + 40, 1), MARK(8) }, 0, { .mark = 8 } },
	/* Missing or malformed fields: that field is absent, nothing else. */
	{ "seqadj without the offset",
	  { NEST_OF(CTA_SEQ_ADJ_ORIG), POS(1), AFTER(2), NEND }, 0, { 0 } },
	{ "seqadj without the position",
	  { NEST_OF(CTA_SEQ_ADJ_ORIG), BEFORE(1), NEND }, 0, { 0 } },
	{ "seqadj position of 2 bytes",
	  { NEST_OF(CTA_SEQ_ADJ_ORIG), RAW_OF(CTA_SEQADJ_CORRECTION_POS, 2), BEFORE(1),
	    NEND },
	  0, { 0 } },
	{ "seqadj offset of 0 bytes",
	  { NEST_OF(CTA_SEQ_ADJ_ORIG), POS(1), RAW_OF(CTA_SEQADJ_OFFSET_BEFORE, 0),
	    NEND },
	  0, { 0 } },
	{ "an empty seqadj nest", { NEST_OF(CTA_SEQ_ADJ_ORIG), NEND, MARK(1) },
	  0, { .mark = 1 } },
	{ "seqadj that is not a nest but 4 bytes", { RAW_OF(CTA_SEQ_ADJ_ORIG, 4), MARK(1) },
	  0, { .mark = 1 } },
	{ "a mark of 2 bytes", { RAW_OF(CTA_MARK, 2) }, 0, { 0 } },
	{ "a mark of 8 bytes", { RAW_OF(CTA_MARK, 8) }, 0, { 0 } },
	/* Cut short: what lies past the end is never read. */
	{ "the last attribute cut in half", { MARK(6), MARK(7), CUT_BY(4) },
	  0, { .mark = 6 } },
	{ "the seqadj nest cut inside its last field",
	  { MARK(6), NEST_OF(CTA_SEQ_ADJ_ORIG), POS(1), BEFORE(2), NEND, CUT_BY(4) },
	  0, { .mark = 6 } },
	/* libmnl walks up to the aligned length: an unaligned one is not the
	 * kernel's, and would let it read bytes past the message. */
	{ "a length that is not a multiple of 4",
	  { MARK(6), NEST_OF(CTA_SEQ_ADJ_ORIG), POS(1), BEFORE(2), NEND, CUT_BY(2) },
	  -EBADMSG, { 0 } },
	{ "a header and no nfgenmsg", { LEN_OF(sizeof(struct nlmsghdr)) }, -EBADMSG, { 0 } },
	{ "a header and half an nfgenmsg", { LEN_OF(sizeof(struct nlmsghdr) + 2) },
	  -EBADMSG, { 0 } },
	/* The TCP state, nested twice as the kernel sends it */
	{ "an established connection", { TCP_STATE(3), MARK(2) }, 0, { .mark = 2, .tcp_state = 3 } },
	{ "a TCP state of 4 bytes is absent",
	  { NEST_OF(CTA_PROTOINFO), NEST_OF(CTA_PROTOINFO_TCP),
	    RAW_OF(CTA_PROTOINFO_TCP_STATE, 4), NEND, NEND },
	  0, { 0 } },
	{ "protoinfo without its TCP nest", { NEST_OF(CTA_PROTOINFO), MARK(3), NEND },
	  0, { 0 } },
	{ "a TCP nest with types above its maximum",
	  { NEST_OF(CTA_PROTOINFO), NEST_OF(CTA_PROTOINFO_TCP),
	    RUN_OF(CTA_PROTOINFO_TCP_MAX + 1, CTA_MAX + 3, 1), { U8, CTA_PROTOINFO_TCP_STATE, 0, 7 },
	    NEND, NEND },
	  0, { .tcp_state = 7 } },
	/* Labels: whole 32-bit words, the first four of them. */
	{ "labels, 16 bytes as the kernel sends them", { LAB(16, 0x11), MARK(3) },
	  0, { .mark = 3, .labels = { 0x11, 0x12, 0x13, 0x14 } } },
	{ "labels of 8 bytes: two words", { LAB(8, 0x21) }, 0, WORDS(0x21, 0x22) },
	{ "labels of 32 bytes (a wider kernel): the first four words", { LAB(32, 0x31) },
	  0, WORDS(0x31, 0x32, 0x33, 0x34) },
	{ "labels of 6 bytes: not whole words, none", { LAB(6, 0x41) }, 0, { 0 } },
	{ "labels of 0 bytes", { LAB(0, 0x51), MARK(2) }, 0, { .mark = 2 } },
	{ "labels cut short: not read", { MARK(4), LAB(16, 0x61), CUT_BY(8) },
	  0, { .mark = 4 } },
	{ "labels beside a sequence adjustment",
	  { NEST_OF(CTA_SEQ_ADJ_ORIG), POS(9), BEFORE(8), NEND, LAB(16, 0x71) },
	  0, { .has_seqadj = true, .pos = 9, .delta = 8,
	       .labels = { 0x71, 0x72, 0x73, 0x74 } } },
	{ "headers and an attribute's header without its value",
	  { MARK(1), LEN_OF(sizeof(struct nlmsghdr) + sizeof(struct nfgenmsg) + 4) },
	  0, { 0 } },
};

static struct nlmsghdr *build(char *buf, const struct row *r)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	struct nlattr *nest[4];
	unsigned depth = 0;
	uint8_t junk[16];
	uint32_t words[16];

	memset(junk, 0xab, sizeof(junk));
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_INET;
	nfg->version = NFNETLINK_V0;
	for (unsigned i = 0; i < MAX_STEPS && r->s[i].op != END; i++) {
		const struct step *st = &r->s[i];

		switch (st->op) {
		case U32:
			mnl_attr_put_u32(nlh, st->type, htonl(st->value));
			break;
		case U8:
			mnl_attr_put_u8(nlh, st->type, (uint8_t)st->value);
			break;
		case RAW:
			mnl_attr_put(nlh, st->type, st->len, junk);
			break;
		case NEST:
			if (depth < sizeof(nest) / sizeof(nest[0]))
				nest[depth++] = mnl_attr_nest_start(nlh, st->type);
			break;
		case NEST_END:
			if (depth > 0)
				mnl_attr_nest_end(nlh, nest[--depth]);
			break;
		case RUN:
			for (uint32_t t = st->type; t <= st->len; t++)
				mnl_attr_put_u32(nlh, (uint16_t)t, htonl(st->value));
			break;
		case CUT:
			nlh->nlmsg_len -= st->len;
			break;
		case LEN:
			nlh->nlmsg_len = st->len;
			break;
		case LABELS:
			for (uint32_t w = 0; w < 16; w++)
				words[w] = st->value + w;
			mnl_attr_put(nlh, st->type, st->len, words);
			break;
		case END:
			break;
		}
	}
	return nlh;
}

int main(void)
{
	for (unsigned no = 0; no < sizeof(rows) / sizeof(rows[0]); no++) {
		const struct row *r = &rows[no];
		/* The parse must not read past the message: the rest is poison. */
		static char buf[BUF_BYTES];
		const struct ct_info poison = { .has_seqadj = true, .pos = 0xdead, .delta = 0xbeef,
						.mark = 0xfeed, .tcp_state = 0x77, .labels = { 1, 2, 3, 4 } };
		struct ct_info got = poison;
		struct nlmsghdr *nlh;
		int rc;

		memset(buf, 0, sizeof(buf));
		nlh = build(buf, r);
		memset(buf + nlh->nlmsg_len, 0x5a, sizeof(buf) - nlh->nlmsg_len);
		rc = ctnl_parse_info(nlh, &got);
		CHECK(rc == r->rc, "row %u (%s): rc %d, want %d", no, r->name, rc, r->rc);
		if (r->rc < 0) {
			CHECK(got.has_seqadj == poison.has_seqadj && got.pos == poison.pos &&
				      got.delta == poison.delta && got.mark == poison.mark &&
				      got.tcp_state == poison.tcp_state &&
				      memcmp(got.labels, poison.labels, sizeof(got.labels)) == 0,
			      "row %u (%s): ret written on failure", no, r->name);
			continue;
		}
		CHECK_EQ_U(got.has_seqadj, r->want.has_seqadj, "row %u (%s): has_seqadj", no,
			   r->name);
		CHECK_EQ_U(got.pos, r->want.has_seqadj ? r->want.pos : 0, "row %u (%s): pos", no,
			   r->name);
		CHECK_EQ_U(got.delta, r->want.has_seqadj ? r->want.delta : 0, "row %u (%s): delta",
			   no, r->name);
		CHECK_EQ_U(got.mark, r->want.mark, "row %u (%s): mark", no, r->name);
		CHECK_EQ_U(got.tcp_state, r->want.tcp_state, "row %u (%s): tcp state", no, r->name);
		for (size_t w = 0; w < MARKS_LABEL_WORDS; w++)
			CHECK_EQ_U(got.labels[w], r->want.labels[w], "row %u (%s): label word %zu",
				   no, r->name, w);
	}
	return unit_done("ctnl");
}
