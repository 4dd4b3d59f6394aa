/*
 * test_seqrewrite.c - seqrewrite against packets built here and a checksum
 * computed here.
 *
 * Every packet is generated (IPv4/IPv6, with or without timestamps, 0..4 SACK
 * blocks in an aligned and a deliberately misaligned option layout, random
 * payload, at a random offset in the buffer), parsed with pkt_parse, and
 * rewritten.  The oracle is the same builder run again with the numbers the
 * rewrite should produce: with fix_csum the result must be byte-identical to
 * it, checksum included, and that checksum comes from pktbuild.h, a plain
 * byte-summing implementation that shares no code with the daemon.
 * A deterministic PRNG drives everything: no clock, same run every time.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/csum.h"
#include "common/pkt.h"
#include "datapath/client/seqrewrite.h"
#include "pktbuild.h"
#include "unit.h"

enum {
	BUF_LEN = 2048,
	MAX_PAYLOAD = 1500,
	RANDOM_CASES = 10000,
	TCP_OPT_MAX = 40,		/* RFC 9293 3.1: data offset <= 15 */
};

enum layout {
	LAYOUT_LINUX,		/* NOP NOP TS, NOP NOP SACK: 4-byte aligned */
	LAYOUT_ODD,		/* NOP SACK TS EOL..: SACK edges at odd offsets */
	LAYOUT_MAX
};

struct spec {
	int family;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t window;
	bool ts;
	uint32_t tsval, tsecr;
	int nsack;
	uint32_t sack[PKT_MAX_SACK][2];
	enum layout layout;
	size_t plen;
	uint8_t payload[MAX_PAYLOAD];
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return unit_rnd(&rng_state);
}

static uint32_t rnd32(void)
{
	return (uint32_t)rnd();
}

/* TCP options for s into o; returns their length, a multiple of 4. */
static size_t build_opts(uint8_t *o, const struct spec *s)
{
	size_t n = 0;

	if (s->layout == LAYOUT_LINUX) {
		if (s->ts) {
			o[n++] = 1;
			o[n++] = 1;
			n += pb_opt_ts(o + n, s->tsval, s->tsecr);
		}
		if (s->nsack) {
			o[n++] = 1;
			o[n++] = 1;
			n += pb_opt_sack(o + n, s->sack, (size_t)s->nsack);
		}
	} else {
		o[n++] = 1;
		if (s->nsack)
			n += pb_opt_sack(o + n, s->sack, (size_t)s->nsack);
		if (s->ts)
			n += pb_opt_ts(o + n, s->tsval, s->tsecr);
	}
	while (n % 4)
		o[n++] = 0;
	return n;
}

/* Builds the IP packet s describes at p with a correct checksum; returns its length. */
static size_t build(uint8_t *p, const struct spec *s)
{
	uint8_t opt[TCP_OPT_MAX + 8];
	size_t olen = build_opts(opt, s);

	if (olen > TCP_OPT_MAX)
		abort();
	return pb_build(p, &(struct pb_spec){
		.family = s->family, .src = s->src, .dst = s->dst,
		.ip_id = 0x1234, .label = s->sport,	/* flow label: any fixed value */
		.sport = s->sport, .dport = s->dport, .seq = s->seq, .ack = s->ack,
		.flags = s->flags, .window = s->window, .opt = opt, .opt_len = olen,
		.payload = s->payload, .plen = s->plen }, NULL);
}

/* The numbers seqrewrite_apply should leave: the plain arithmetic of the header comment. */
static void expect(struct spec *want, const struct spec *s, enum seq_dir dir, uint32_t delta)
{
	int i;

	*want = *s;
	if (dir == SEQ_OUT) {
		want->seq = s->seq + delta;
		return;
	}
	if (s->flags & TCP_ACK)
		want->ack = s->ack - delta;
	for (i = 0; i < s->nsack; i++) {
		want->sack[i][0] = s->sack[i][0] - delta;
		want->sack[i][1] = s->sack[i][1] - delta;
	}
}

static void random_addrs(struct spec *s)
{
	size_t i;

	for (i = 0; i < sizeof(s->src); i++) {
		s->src[i] = (uint8_t)rnd();
		s->dst[i] = (uint8_t)rnd();
	}
}

static void random_payload(struct spec *s, size_t plen)
{
	size_t i;

	s->plen = plen;
	for (i = 0; i < plen; i++)
		s->payload[i] = (uint8_t)rnd();
}

/* SACK blocks spread above base, the first one optionally below it (D-SACK). */
static void sack_blocks(struct spec *s, int nsack, uint32_t base)
{
	int i;

	s->nsack = nsack;
	for (i = 0; i < nsack; i++) {
		s->sack[i][0] = base + 4000 * (uint32_t)i;
		s->sack[i][1] = s->sack[i][0] + 1448;
	}
}

static uint8_t pktbuf[BUF_LEN + 8], wantbuf[BUF_LEN + 8], origbuf[BUF_LEN + 8];

/*
 * Runs one rewrite and checks everything about it.  off shifts the packet in
 * its buffer so that no field is where alignment would put it.  cut payload
 * bytes are hidden from the parser, as an NFQUEUE copy range would: the
 * incremental update never reads the payload, so the checksum must still come
 * out right for the whole packet.
 */
static void run_case(const char *name, unsigned no, const struct spec *s, enum seq_dir dir,
		     uint32_t delta, bool fix, size_t off, size_t cut)
{
	struct spec want;
	struct pkt_view v, v2;
	uint8_t *pkt = pktbuf + off;
	size_t len, csum_off;
	uint32_t csum_before;
	int i;

	memset(&v, 0, sizeof(v));
	len = build(pkt, s);
	memcpy(origbuf, pkt, len);
	expect(&want, s, dir, delta);
	build(wantbuf, &want);

	CHECK_EQ_U(pkt_parse(pkt, len - cut, &v), PKT_OK, "%s %u: parse", name, no);
	CHECK_EQ_U(v.nsack, (unsigned)s->nsack, "%s %u: nsack", name, no);
	CHECK_EQ_U(v.has_ts, s->ts, "%s %u: has_ts", name, no);
	CHECK_EQ_U(v.payload_len, s->plen, "%s %u: payload", name, no);
	CHECK_EQ_U(v.payload_caplen, s->plen - cut, "%s %u: payload captured", name, no);
	if (v.nsack != s->nsack || v.payload_caplen != s->plen - cut)
		return;
	csum_off = v.l4_off + 16;
	csum_before = pb_get16(pkt + csum_off);
	if (!cut)
		CHECK_EQ_U(csum_tcp_full(pkt, &v), csum_before,
			   "%s %u: full csum before", name, no);

	seqrewrite_apply(pkt, &v, dir, delta, fix);

	CHECK_EQ_U(v.seq, want.seq, "%s %u: view seq", name, no);
	CHECK_EQ_U(v.ack, want.ack, "%s %u: view ack", name, no);
	CHECK_EQ_U(pb_get32(pkt + v.l4_off + 4), want.seq, "%s %u: seq", name, no);
	CHECK_EQ_U(pb_get32(pkt + v.l4_off + 8), want.ack, "%s %u: ack", name, no);
	for (i = 0; i < s->nsack; i++) {
		CHECK_EQ_U(pb_get32(pkt + v.sack_off + 8 * (size_t)i), want.sack[i][0],
			   "%s %u: sack %d left", name, no, i);
		CHECK_EQ_U(pb_get32(pkt + v.sack_off + 8 * (size_t)i + 4), want.sack[i][1],
			   "%s %u: sack %d right", name, no, i);
	}
	if (fix) {
		CHECK_EQ_U(pb_get16(pkt + csum_off), pb_tcp_csum_of(pkt), "%s %u: incremental csum",
			   name, no);
		if (!cut)
			CHECK_EQ_U(csum_tcp_full(pkt, &v), pb_tcp_csum_of(pkt),
				   "%s %u: full csum after", name, no);
		CHECK(memcmp(pkt, wantbuf, len) == 0, "%s %u: packet differs from rebuilt one",
		      name, no);
	} else {
		CHECK_EQ_U(pb_get16(pkt + csum_off), csum_before, "%s %u: csum untouched", name, no);
		CHECK(memcmp(pkt, wantbuf, csum_off) == 0 &&
		      memcmp(pkt + csum_off + 2, wantbuf + csum_off + 2, len - csum_off - 2) == 0,
		      "%s %u: packet differs from rebuilt one", name, no);
	}

	/* The rewritten packet parses to the view seqrewrite left behind. */
	memset(&v2, 0, sizeof(v2));
	CHECK_EQ_U(pkt_parse(pkt, len - cut, &v2), PKT_OK, "%s %u: reparse", name, no);
	CHECK(v2.seq == v.seq && v2.ack == v.ack && v2.nsack == v.nsack &&
	      v2.sack_off == v.sack_off && v2.flags == v.flags && v2.tsval == v.tsval,
	      "%s %u: view differs from reparse", name, no);

	/* The opposite delta undoes it bit for bit, checksum included. */
	seqrewrite_apply(pkt, &v, dir, 0u - delta, fix);
	CHECK(memcmp(pkt, origbuf, len) == 0, "%s %u: inverse not restored", name, no);
	CHECK(v.seq == s->seq && v.ack == s->ack, "%s %u: inverse view", name, no);
}

static void base_spec(struct spec *s, int family)
{
	memset(s, 0, sizeof(*s));
	s->family = family;
	random_addrs(s);
	s->sport = 40000;
	s->dport = 22;
	s->window = 502;
	s->tsval = 0x11223344;
	s->tsecr = 0x55667788;
}

struct row {
	int family;
	bool ts;
	int nsack;
	enum layout layout;
	size_t plen;
	uint8_t flags;
	enum seq_dir dir;
	bool fix;
	uint32_t seq, ack, sack0, delta;
	uint32_t want_seq, want_ack, want_sack0;	/* spelled out, not computed */
};

#define A TCP_ACK
#define V4 AF_INET
#define V6 AF_INET6
static const struct row rows[] = {
	/* 1-6: outgoing seq, delta 0 and both wrap directions */
	{ .family = V4, .layout = LAYOUT_LINUX, .flags = A, .dir = SEQ_OUT, .fix = true,
	  .seq = 1000, .ack = 5, .delta = 0, .want_seq = 1000, .want_ack = 5 },
	{ .family = V4, .layout = LAYOUT_LINUX, .plen = 10, .flags = A, .dir = SEQ_OUT,
	  .fix = true, .seq = 0xfffffff0, .ack = 5, .delta = 0x20, .want_seq = 0x10,
	  .want_ack = 5 },
	{ .family = V4, .ts = true, .layout = LAYOUT_LINUX, .plen = 10, .flags = A,
	  .dir = SEQ_OUT, .fix = true, .seq = 0x10, .ack = 5, .delta = 0xffffffe0,
	  .want_seq = 0xfffffff0, .want_ack = 5 },
	{ .family = V6, .layout = LAYOUT_LINUX, .plen = 1, .flags = A, .dir = SEQ_OUT,
	  .fix = true, .seq = 0xffffffff, .ack = 7, .delta = 1, .want_ack = 7 },
	{ .family = V6, .ts = true, .layout = LAYOUT_LINUX, .plen = 3, .flags = A, .dir = SEQ_OUT,
	  .fix = true, .ack = 7, .delta = 0xffffffff, .want_seq = 0xffffffff, .want_ack = 7 },
	{ .family = V6, .ts = true, .layout = LAYOUT_ODD, .plen = 1448, .flags = A,
	  .dir = SEQ_OUT, .fix = true, .seq = 0x80000000, .ack = 9, .delta = 0x80000000,
	  .want_ack = 9 },
	/* 7: outgoing SACK names the server's bytes: untouched (as is ack) */
	{ .family = V4, .ts = true, .nsack = 3, .layout = LAYOUT_LINUX, .flags = A,
	  .dir = SEQ_OUT, .fix = true, .seq = 500, .ack = 900, .sack0 = 800, .delta = 0x1000,
	  .want_seq = 0x11f4, .want_ack = 900, .want_sack0 = 800 },
	/* 8: a SYN without ACK goes out shifted too */
	{ .family = V4, .ts = true, .layout = LAYOUT_LINUX, .flags = TCP_SYN, .dir = SEQ_OUT,
	  .fix = true, .seq = 0xabcdef01, .delta = 0x10000000, .want_seq = 0xbbcdef01 },
	/* 9-12: incoming ack and SACK, wrap both ways, delta 0 */
	{ .family = V4, .nsack = 2, .layout = LAYOUT_LINUX, .flags = A, .dir = SEQ_IN,
	  .fix = true, .seq = 1, .ack = 0x10, .sack0 = 0x30, .delta = 0x20, .want_seq = 1,
	  .want_ack = 0xfffffff0, .want_sack0 = 0x10 },
	{ .family = V6, .ts = true, .nsack = 3, .layout = LAYOUT_LINUX, .flags = A, .dir = SEQ_IN,
	  .fix = true, .seq = 1, .delta = 1, .want_seq = 1, .want_ack = 0xffffffff,
	  .want_sack0 = 0xffffffff },
	{ .family = V6, .nsack = 4, .layout = LAYOUT_LINUX, .flags = A, .dir = SEQ_IN,
	  .fix = true, .seq = 1, .ack = 0xfffffff0, .sack0 = 0xfffffff8, .delta = 0xfffffff0,
	  .want_seq = 1, .want_sack0 = 8 },
	{ .family = V4, .nsack = 1, .layout = LAYOUT_ODD, .flags = A, .dir = SEQ_IN, .fix = true,
	  .seq = 77, .ack = 1234, .sack0 = 2000, .delta = 0, .want_seq = 77, .want_ack = 1234,
	  .want_sack0 = 2000 },
	/* 13: D-SACK (RFC 2883): first block below the cumulative ack */
	{ .family = V6, .nsack = 4, .layout = LAYOUT_ODD, .flags = A, .dir = SEQ_IN, .fix = true,
	  .seq = 9, .ack = 0x5000, .sack0 = 0x1000, .delta = 0x100, .want_seq = 9,
	  .want_ack = 0x4f00, .want_sack0 = 0xf00 },
	/* 14-15: no ACK flag: ack field kept, SACK still translated */
	{ .family = V4, .layout = LAYOUT_LINUX, .flags = TCP_SYN, .dir = SEQ_IN, .fix = true,
	  .seq = 3, .ack = 0x12345678, .delta = 0x1000, .want_seq = 3, .want_ack = 0x12345678 },
	{ .family = V6, .ts = true, .nsack = 1, .layout = LAYOUT_ODD, .flags = TCP_RST,
	  .dir = SEQ_IN, .fix = true, .seq = 3, .ack = 0xdeadbeef, .sack0 = 0x100,
	  .delta = 0x1000, .want_seq = 3, .want_ack = 0xdeadbeef, .want_sack0 = 0xfffff100 },
	/* 16-17: fix_csum false: numbers change, checksum field does not */
	{ .family = V4, .ts = true, .nsack = 2, .layout = LAYOUT_LINUX, .plen = 100, .flags = A,
	  .dir = SEQ_IN, .seq = 3, .ack = 0x100, .sack0 = 0x80, .delta = 0x10, .want_seq = 3,
	  .want_ack = 0xf0, .want_sack0 = 0x70 },
	{ .family = V6, .ts = true, .layout = LAYOUT_LINUX, .plen = 101, .flags = A,
	  .dir = SEQ_OUT, .seq = 0xfffffffe, .ack = 4, .delta = 2, .want_ack = 4 },
	/* 18-20: odd payloads, odd layouts, full segments */
	{ .family = V4, .nsack = 4, .layout = LAYOUT_ODD, .plen = 1, .flags = A, .dir = SEQ_IN,
	  .fix = true, .seq = 3, .ack = 0x40000000, .sack0 = 0x3fff0000, .delta = 0x40000001,
	  .want_seq = 3, .want_ack = 0xffffffff, .want_sack0 = 0xfffeffff },
	{ .family = V6, .ts = true, .nsack = 3, .layout = LAYOUT_ODD, .plen = 1427,
	  .flags = A | TCP_PSH, .dir = SEQ_IN, .fix = true, .seq = 3, .ack = 2, .sack0 = 1,
	  .delta = 3, .want_seq = 3, .want_ack = 0xffffffff, .want_sack0 = 0xfffffffe },
	{ .family = V4, .ts = true, .layout = LAYOUT_LINUX, .plen = 1460, .flags = A | TCP_PSH,
	  .dir = SEQ_OUT, .fix = true, .seq = 0x7fffffff, .delta = 1, .want_seq = 0x80000000 },
};
#undef A
#undef V4
#undef V6

static void table_rows(void)
{
	static struct spec s;
	unsigned i;
	int j;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct spec want;

		rng_state = i + 1;
		base_spec(&s, r->family);
		s.ts = r->ts;
		s.layout = r->layout;
		s.flags = r->flags;
		s.seq = r->seq;
		s.ack = r->ack;
		sack_blocks(&s, r->nsack, r->sack0);
		random_payload(&s, r->plen);

		/* The spelled-out answers agree with the arithmetic run_case uses. */
		expect(&want, &s, r->dir, r->delta);
		CHECK_EQ_U(want.seq, r->want_seq, "row %u: seq", i + 1);
		CHECK_EQ_U(want.ack, r->want_ack, "row %u: ack", i + 1);
		if (r->nsack)
			CHECK_EQ_U(want.sack[0][0], r->want_sack0, "row %u: sack0", i + 1);
		for (j = 1; j < r->nsack; j++)
			CHECK_EQ_U(want.sack[j][0] - want.sack[0][0], 4000 * (uint32_t)j,
				   "row %u: sack %d", i + 1, j);

		run_case("row", i + 1, &s, r->dir, r->delta, r->fix, i % 4, 0);
	}
}

/*
 * seqrewrite_syn: the knock ISN and the pinned TSval written into an
 * outgoing SYN.  The timestamp option lies at an even offset of the TCP
 * header (NOP NOP TS, as Linux sends it) or an odd one (NOP TS, or after a
 * SACK option: legal from other stacks and forwarded hosts); the result must
 * be byte-identical to the SYN built with the new numbers, checksum included.
 */
struct syn_row {
	int family;
	enum layout layout;
	bool ts;
	uint32_t seq, isn;
	uint32_t tsval, new_tsval;
	size_t plen;
	bool want_odd;		/* TSval at an odd offset of the TCP header */
};

static const struct syn_row syn_rows[] = {
	/* 1-4: even TSval offset, both families, the ISN and the TSval changing */
	{ .family = AF_INET, .layout = LAYOUT_LINUX, .ts = true, .seq = 0x12345678,
	  .isn = 0x9abcdef0, .tsval = 0x01020304, .new_tsval = 0xfffefdfc },
	{ .family = AF_INET6, .layout = LAYOUT_LINUX, .ts = true, .seq = 0xffffffff, .isn = 0,
	  .tsval = 7, .new_tsval = 0x80000000 },
	{ .family = AF_INET, .layout = LAYOUT_LINUX, .ts = true, .seq = 1, .isn = 2,
	  .tsval = 0x11223344, .new_tsval = 0x11223344 },
	{ .family = AF_INET6, .layout = LAYOUT_LINUX, .ts = true, .seq = 0xdeadbeef,
	  .isn = 0xdeadbeef, .tsval = 0xa5a5a5a5, .new_tsval = 0x5a5a5a5a },
	/* 5-10: odd TSval offset (NOP TS): each byte in the other half of a checksum word */
	{ .family = AF_INET, .layout = LAYOUT_ODD, .ts = true, .seq = 0x12345678,
	  .isn = 0x9abcdef0, .tsval = 0x01020304, .new_tsval = 0xfffefdfc, .want_odd = true },
	{ .family = AF_INET6, .layout = LAYOUT_ODD, .ts = true, .seq = 0xffffffff, .isn = 0,
	  .tsval = 7, .new_tsval = 0x80000000, .want_odd = true },
	{ .family = AF_INET, .layout = LAYOUT_ODD, .ts = true, .seq = 1, .isn = 1,
	  .tsval = 0x00ff00ff, .new_tsval = 0xff00ff00, .want_odd = true },
	{ .family = AF_INET6, .layout = LAYOUT_ODD, .ts = true, .seq = 0xdeadbeef,
	  .isn = 0xdeadbeef, .tsval = 0xa5a5a5a5, .new_tsval = 0x5a5a5a5a, .want_odd = true },
	{ .family = AF_INET, .layout = LAYOUT_ODD, .ts = true, .seq = 0x80000000,
	  .isn = 0x7fffffff, .tsval = 0x10000000, .new_tsval = 0x0fffffff, .plen = 11,
	  .want_odd = true },
	{ .family = AF_INET6, .layout = LAYOUT_ODD, .ts = true, .seq = 5, .isn = 0x50000005,
	  .tsval = 1, .new_tsval = 1, .plen = 1, .want_odd = true },
	/* 11-12: no timestamps: only the ISN */
	{ .family = AF_INET, .layout = LAYOUT_LINUX, .seq = 0x1000, .isn = 0xcafef00d },
	{ .family = AF_INET6, .layout = LAYOUT_ODD, .seq = 0xcafef00d, .isn = 0x1000 },
};

static void syn_table(void)
{
	static struct spec s, want;

	for (unsigned i = 0; i < sizeof(syn_rows) / sizeof(syn_rows[0]); i++) {
		const struct syn_row *r = &syn_rows[i];
		unsigned no = i + 1;
		struct pkt_view v;
		uint8_t *pkt = pktbuf + i % 4;
		size_t len;

		rng_state = 1000 + i;
		base_spec(&s, r->family);
		s.flags = TCP_SYN;
		s.layout = r->layout;
		s.ts = r->ts;
		s.seq = r->seq;
		s.tsval = r->tsval;
		s.tsecr = 0;
		random_payload(&s, r->plen);
		want = s;
		want.seq = r->isn;
		want.tsval = r->ts ? r->new_tsval : r->tsval;
		len = build(pkt, &s);
		build(wantbuf, &want);

		memset(&v, 0, sizeof(v));
		CHECK_EQ_U(pkt_parse(pkt, len, &v), PKT_OK, "syn %u: parse", no);
		CHECK_EQ_U(v.has_ts, r->ts, "syn %u: has_ts", no);
		if (r->ts)
			CHECK_EQ_U((v.ts_off - v.l4_off) % 2, r->want_odd, "syn %u: TSval offset", no);
		seqrewrite_syn(pkt, &v, r->isn, r->new_tsval);
		CHECK_EQ_U(pb_get16(pkt + v.l4_off + 16), pb_tcp_csum_of(pkt), "syn %u: csum", no);
		CHECK_EQ_U(csum_tcp_full(pkt, &v), pb_tcp_csum_of(pkt), "syn %u: full csum", no);
		CHECK(memcmp(pkt, wantbuf, len) == 0, "syn %u: packet differs from rebuilt one", no);
		CHECK_EQ_U(v.seq, r->isn, "syn %u: view seq", no);
		CHECK_EQ_U(v.tsval, want.tsval, "syn %u: view tsval", no);
	}
}

/*
 * RFC 1624 4 worked example: HC 0xdd2f, a word 0x5555 becomes 0x3285, and
 * eqn. 3 gives 0x0000 (eqn. 2 would give the -0 form 0xffff).  Put the word
 * in either half of the 32-bit value; the other half does not change.
 */
static void rfc1624_example(void)
{
	CHECK_EQ_U(csum_replace32(0xdd2f, 0x55550000, 0x32850000), 0x0000, "RFC 1624 high");
	CHECK_EQ_U(csum_replace32(0xdd2f, 0x12345555, 0x12343285), 0x0000, "RFC 1624 low");
	CHECK_EQ_U(csum_replace32(0x1234, 0xcafebabe, 0xcafebabe), 0x1234, "no change");
}

static uint32_t random_delta(void)
{
	switch (rnd() % 6) {
	case 0:
		return 0;
	case 1:
		return 0u - (uint32_t)(rnd() % 4096);	/* just below 2^32 */
	case 2:
		return (uint32_t)(rnd() % 4096);
	case 3:
		return 0x80000000u ^ (uint32_t)(rnd() % 3);
	default:
		return rnd32();
	}
}

static uint32_t random_seq(void)
{
	/* Half the time near the wrap, where a carry would go wrong. */
	return rnd() % 2 ? 0u - (uint32_t)(rnd() % 65536) : rnd32();
}

static void random_spec(struct spec *s)
{
	int maxsack, nsack;

	base_spec(s, rnd() % 2 ? AF_INET : AF_INET6);
	s->sport = (uint16_t)rnd();
	s->dport = (uint16_t)rnd();
	s->window = (uint16_t)rnd();
	s->ts = rnd() % 2;
	s->tsval = rnd32();
	s->tsecr = rnd32();
	s->layout = (enum layout)(rnd() % LAYOUT_MAX);
	/* 40 option bytes hold 4 SACK blocks, or 3 next to timestamps. */
	maxsack = s->ts ? 3 : 4;
	s->flags = (uint8_t)rnd();
	if (rnd() % 4)
		s->flags |= TCP_ACK;
	s->seq = random_seq();
	s->ack = random_seq();
	nsack = (int)(rnd() % (unsigned)(maxsack + 1));
	sack_blocks(s, nsack, random_seq());
	if (s->nsack && rnd() % 2)
		s->sack[0][0] = s->ack - 1 - (uint32_t)(rnd() % 3000);	/* D-SACK */
	random_payload(s, rnd() % 3 ? (size_t)(rnd() % 64) : (size_t)(rnd() % MAX_PAYLOAD));
}

static void random_cases(void)
{
	static struct spec s;
	enum seq_dir dir;
	uint32_t delta;
	size_t off, cut;
	unsigned i;
	bool fix;

	rng_state = 0x6b6e6f636b677721ULL;
	for (i = 1; i <= RANDOM_CASES; i++) {
		random_spec(&s);
		dir = rnd() % 2 ? SEQ_OUT : SEQ_IN;
		delta = random_delta();
		fix = rnd() % 8 != 0;
		off = (size_t)(rnd() % 8);
		cut = rnd() % 4 ? 0 : (size_t)(rnd() % (s.plen + 1));
		run_case("random", i, &s, dir, delta, fix, off, cut);
	}
}

/*
 * The round trip the daemon lives by: a data segment leaves with seq + delta,
 * the server acknowledges and SACKs it in its (shifted) space, and after the
 * incoming rewrite the kernel sees exactly its own numbers again.
 */
static void round_trips(void)
{
	static struct spec out, in;
	struct pkt_view v;
	uint8_t *pkt = pktbuf + 1;
	uint32_t delta, kseq, wire_seq;
	size_t len;
	unsigned i;
	int j;

	rng_state = 42;
	for (i = 1; i <= RANDOM_CASES / 10; i++) {
		random_spec(&out);
		out.flags = TCP_ACK | TCP_PSH;
		if (out.plen == 0)
			random_payload(&out, 1 + rnd() % 512);
		delta = random_delta();
		kseq = out.seq;

		len = build(pkt, &out);
		memset(&v, 0, sizeof(v));
		if (pkt_parse(pkt, len, &v) != PKT_OK) {
			CHECK(0, "trip %u: parse out", i);
			continue;
		}
		seqrewrite_apply(pkt, &v, SEQ_OUT, delta, true);
		wire_seq = pb_get32(pkt + v.l4_off + 4);
		CHECK_EQ_U(wire_seq, kseq + delta, "trip %u: wire seq", i);

		/* The server's answer: same flow reversed, acking the end, SACKing pieces. */
		in = out;
		memcpy(in.src, out.dst, sizeof(in.src));
		memcpy(in.dst, out.src, sizeof(in.dst));
		in.sport = out.dport;
		in.dport = out.sport;
		in.flags = TCP_ACK;
		in.seq = out.ack;
		in.ack = wire_seq + (uint32_t)out.plen;
		in.nsack = out.ts ? 3 : 4;
		for (j = 0; j < in.nsack; j++) {
			in.sack[j][0] = wire_seq + (uint32_t)(out.plen * (size_t)j / 4);
			in.sack[j][1] = wire_seq + (uint32_t)(out.plen * (size_t)(j + 1) / 4);
		}
		random_payload(&in, 0);

		len = build(pkt, &in);
		memset(&v, 0, sizeof(v));
		if (pkt_parse(pkt, len, &v) != PKT_OK) {
			CHECK(0, "trip %u: parse in", i);
			continue;
		}
		seqrewrite_apply(pkt, &v, SEQ_IN, delta, true);
		CHECK_EQ_U(v.ack, kseq + (uint32_t)out.plen, "trip %u: kernel ack", i);
		CHECK_EQ_U(v.seq, in.seq, "trip %u: server seq untouched", i);
		for (j = 0; j < in.nsack; j++) {
			CHECK_EQ_U(pb_get32(pkt + v.sack_off + 8 * (size_t)j),
				   kseq + (uint32_t)(out.plen * (size_t)j / 4), "trip %u: left %d", i, j);
			CHECK_EQ_U(pb_get32(pkt + v.sack_off + 8 * (size_t)j + 4),
				   kseq + (uint32_t)(out.plen * (size_t)(j + 1) / 4),
				   "trip %u: right %d", i, j);
		}
		CHECK_EQ_U(pb_get16(pkt + v.l4_off + 16), pb_tcp_csum_of(pkt), "trip %u: csum", i);
	}
}

int main(void)
{
	rfc1624_example();
	table_rows();
	syn_table();
	random_cases();
	round_trips();
	return unit_done("seqrewrite");
}
