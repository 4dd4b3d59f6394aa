/*
 * test_rst.c - the closed-port answer (rst.[ch]) field by field.
 *
 * Each row builds one segment here (IPv4 or IPv6, optionally with IP options
 * or a hop-by-hop header, TCP options and payload; checksums from pb_tcp_csum()
 * below, which shares no code with the daemon), describes it with pkt_parse,
 * and checks every header field of rst_build's answer against the rules in
 * rst.h (tcp_v4_send_reset / tcp_v6_send_reset without a socket): addresses
 * and ports swapped; with ACK seq = its ack and flags R, else seq 0, ack =
 * seq + SYN + FIN + payload and flags RA; window, urgent pointer and options
 * none; IPv4 ID 0 with DF, the TTL given, TOS without ECN; IPv6 traffic class
 * without ECN, hop limit, and the flow label policy.  Both checksums of the
 * answer are recomputed here.  The expected numbers are spelled out in the
 * rows, not computed.  Auto flow labels are checked for their properties
 * (the key is fixed here, random in the daemon).  No clock, no I/O.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "common/pkt.h"
#include "common/rst.h"
#include "pktbuild.h"
#include "unit.h"

enum {
	BUF_LEN = 4096,
	LABEL_CASES = 1000,
};

/* The segment a row sends. */
struct spec {
	int family;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t window, urg;
	uint8_t tos;		/* IPv4 TOS / IPv6 traffic class, ECN bits included */
	uint32_t label;		/* IPv6 flow label */
	bool ipopt;		/* IPv4: 4 option bytes; IPv6: a hop-by-hop header */
	bool tcpopt;		/* MSS, NOP NOP, timestamps */
	size_t plen;
};

struct built {
	size_t len, tcp_off, tcp_len;
};

/* Writes the packet for s with correct checksums. */
static struct built build(uint8_t *buf, const struct spec *s)
{
	static const uint8_t ip4opt[4] = { 1, 1, 1, 0 };	/* NOP NOP NOP EOL */
	static const uint8_t hbh[8] = { 0, 0, 1, 4 };		/* hop-by-hop: PadN */
	static uint8_t payload[BUF_LEN];
	uint8_t opt[16];
	size_t ol = 0;
	struct pb_built pb;

	if (s->tcpopt) {
		ol = pb_opt_mss(opt, 1460);
		opt[ol++] = 1;
		opt[ol++] = 1;
		ol += pb_opt_ts(opt + ol, 0xa1b2c3d4, 0);
	}
	for (size_t i = 0; i < s->plen; i++)
		payload[i] = (uint8_t)(i * 37 + 11);
	memset(buf, 0, BUF_LEN);
	pb_build(buf, &(struct pb_spec){
		.family = s->family, .src = s->src, .dst = s->dst, .tos = s->tos,
		.label = s->label, .ip_id = 0x1234, .ttl = s->family == AF_INET ? 57 : 61,
		.ipopt = !s->ipopt ? NULL : s->family == AF_INET ? ip4opt : hbh,
		.ipopt_len = !s->ipopt ? 0 : s->family == AF_INET ? sizeof(ip4opt) : sizeof(hbh),
		.sport = s->sport, .dport = s->dport, .seq = s->seq, .ack = s->ack,
		.flags = s->flags, .window = s->window, .urg = s->urg, .opt = opt, .opt_len = ol,
		.payload = payload, .plen = s->plen }, &pb);
	return (struct built){ .len = pb.len, .tcp_off = pb.tcp_off, .tcp_len = pb.tcp_len };
}

static const uint8_t client4[4] = { 198, 51, 100, 7 }, server4[4] = { 192, 0, 2, 1 };
static const uint8_t client6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 7 };
static const uint8_t server6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

static void base_spec(struct spec *s, int family)
{
	memset(s, 0, sizeof(*s));
	s->family = family;
	memcpy(s->src, family == AF_INET ? client4 : client6, family == AF_INET ? 4 : 16);
	memcpy(s->dst, family == AF_INET ? server4 : server6, family == AF_INET ? 4 : 16);
	s->sport = 51234;
	s->dport = 22;
	s->window = 64240;
}

static void fixed_params(struct rst_params *rp)
{
	memset(rp, 0, sizeof(*rp));
	for (size_t i = 0; i < sizeof(rp->flowlabel_key); i++)
		rp->flowlabel_key[i] = (uint8_t)(0x40 + i);
	rp->csum_unverified = true;	/* the daemon checks: as for raw-socket peers */
}

enum csum_case {
	CS_GOOD,
	CS_BAD,		/* one bit off */
	CS_SHORT,	/* payload captured short: the sum cannot be checked */
	CS_SHORT_OK,	/* likewise, but the kernel verified it (no NOTVERIFIED) */
	CS_BAD_OK,	/* one bit off, but the kernel took it as verified */
};

enum want_label {
	WL_ZERO,	/* 0 */
	WL_IN,		/* the segment's own label */
	WL_AUTO,	/* a hash: nonzero, 20 bits, bit 19 if ranges */
};

#define V4 AF_INET
#define V6 AF_INET6
#define S TCP_SYN
#define A TCP_ACK
#define F TCP_FIN
#define R TCP_RST
#define P TCP_PSH
#define U TCP_URG

struct row {
	int family;
	uint8_t flags;
	uint32_t seq, ack;
	size_t plen;
	uint8_t tos;
	uint32_t label;
	bool ipopt, tcpopt;
	uint8_t ttl;
	bool reflect, autol, ranges;
	enum csum_case csum;
	/* the answer: */
	bool answer;
	uint8_t want_flags;
	uint32_t want_seq, want_ack;
	uint8_t want_tos;
	enum want_label want_label;
};

static const struct row rows[] = {
	/* 1-4: IPv4 SYN, plain and with options everywhere; TOS keeps DSCP, loses ECN */
	{ .family = V4, .flags = S, .seq = 1000, .ttl = 64, .answer = true, .want_flags = R | A,
	  .want_ack = 1001 },
	{ .family = V4, .flags = S, .seq = 0x12345678, .tos = 0xbb, .ipopt = true, .tcpopt = true,
	  .ttl = 64, .answer = true, .want_flags = R | A, .want_ack = 0x12345679,
	  .want_tos = 0xb8 },
	{ .family = V4, .flags = S | TCP_ECE | TCP_CWR, .seq = 5, .tos = 0x03, .ttl = 255,
	  .answer = true, .want_flags = R | A, .want_ack = 6 },
	{ .family = V4, .flags = S, .seq = 0xffffffff, .tos = 0x2e, .tcpopt = true, .ttl = 1,
	  .answer = true, .want_flags = R | A, .want_tos = 0x2c },
	/* 5-8: FIN, NULL, Xmas, SYN|FIN with payload (odd length) */
	{ .family = V4, .flags = F, .seq = 77, .ttl = 64, .answer = true, .want_flags = R | A,
	  .want_ack = 78 },
	{ .family = V4, .seq = 77, .ttl = 64, .answer = true, .want_flags = R | A,
	  .want_ack = 77 },
	{ .family = V4, .flags = F | P | U, .seq = 77, .plen = 5, .tos = 0x10, .ttl = 64,
	  .answer = true, .want_flags = R | A, .want_ack = 83, .want_tos = 0x10 },
	{ .family = V4, .flags = S | F, .seq = 0xfffffff0, .plen = 17, .ttl = 64, .answer = true,
	  .want_flags = R | A, .want_ack = 3 },
	/* 9-11: ACK, FIN|ACK, data with ACK: seq = their ack, flags R alone */
	{ .family = V4, .flags = A, .seq = 500, .ack = 0xdeadbeef, .ttl = 64, .answer = true,
	  .want_flags = R, .want_seq = 0xdeadbeef },
	{ .family = V4, .flags = F | A, .seq = 500, .tos = 0x01, .tcpopt = true, .ttl = 64,
	  .answer = true, .want_flags = R },
	{ .family = V4, .flags = A | P, .seq = 500, .ack = 0x80000000, .plen = 1000, .ttl = 64,
	  .answer = true, .want_flags = R, .want_seq = 0x80000000 },
	/* 12: SYN with payload (TFO-style): the payload counts */
	{ .family = V4, .flags = S, .seq = 100, .plen = 64, .tcpopt = true, .ttl = 64,
	  .answer = true, .want_flags = R | A, .want_ack = 165 },
	/* 13-15: RST, RST|ACK and a bad checksum: silence */
	{ .family = V4, .flags = R, .seq = 1, .ttl = 64 },
	{ .family = V4, .flags = R | A, .seq = 1, .ack = 2, .ttl = 64 },
	{ .family = V4, .flags = S, .seq = 1, .ttl = 64, .csum = CS_BAD },
	/*
	 * 16: payload captured short, its sum unverified: conntrack found it
	 * bad before us (it checks the whole segment), so silence
	 */
	{ .family = V4, .flags = A | P, .seq = 9, .ack = 10, .plen = 1400, .ttl = 64,
	  .csum = CS_SHORT },
	/* 17-20: IPv6, no flow label policy: label 0 even when the SYN has one */
	{ .family = V6, .flags = S, .seq = 1000, .ttl = 64, .answer = true, .want_flags = R | A,
	  .want_ack = 1001 },
	{ .family = V6, .flags = S, .seq = 1000, .tos = 0xb9, .label = 0xabcde, .ipopt = true,
	  .tcpopt = true, .ttl = 255, .answer = true, .want_flags = R | A, .want_ack = 1001,
	  .want_tos = 0xb8 },
	{ .family = V6, .flags = F | P | U, .seq = 0xffffffff, .plen = 1, .tos = 0x02,
	  .label = 0x1, .ttl = 1, .answer = true, .want_flags = R | A, .want_ack = 1 },
	{ .family = V6, .flags = A, .seq = 1, .ack = 0xfffffffe, .tos = 0xff, .label = 0x12345,
	  .ttl = 64, .answer = true, .want_flags = R, .want_seq = 0xfffffffe, .want_tos = 0xfc },
	/* 21-23: reflect: the segment's label, ranges or not; auto does not override */
	{ .family = V6, .flags = S, .seq = 7, .label = 0xabcde, .ttl = 64, .reflect = true,
	  .answer = true, .want_flags = R | A, .want_ack = 8, .want_label = WL_IN },
	{ .family = V6, .flags = S, .seq = 7, .label = 0x00001, .tcpopt = true, .ttl = 64,
	  .reflect = true, .autol = true, .ranges = true, .answer = true, .want_flags = R | A,
	  .want_ack = 8, .want_label = WL_IN },
	{ .family = V6, .flags = F | A, .seq = 7, .ack = 9, .tos = 0x4a, .label = 0xfffff,
	  .ttl = 64, .reflect = true, .autol = true, .answer = true, .want_flags = R,
	  .want_seq = 9, .want_tos = 0x48, .want_label = WL_IN },
	/* 24-26: reflect with label 0 falls back to auto, or to 0 */
	{ .family = V6, .flags = S, .seq = 7, .ttl = 64, .reflect = true, .autol = true,
	  .answer = true, .want_flags = R | A, .want_ack = 8, .want_label = WL_AUTO },
	{ .family = V6, .flags = S, .seq = 7, .ttl = 64, .reflect = true, .autol = true,
	  .ranges = true, .answer = true, .want_flags = R | A, .want_ack = 8,
	  .want_label = WL_AUTO },
	{ .family = V6, .flags = S, .seq = 7, .ttl = 64, .reflect = true, .ranges = true,
	  .answer = true, .want_flags = R | A, .want_ack = 8 },
	/* 27-28: auto without reflect ignores the segment's label */
	{ .family = V6, .flags = S, .seq = 7, .label = 0x54321, .ttl = 64, .autol = true,
	  .answer = true, .want_flags = R | A, .want_ack = 8, .want_label = WL_AUTO },
	{ .family = V6, .flags = S | F, .seq = 7, .plen = 30, .label = 0x54321, .ipopt = true,
	  .tcpopt = true, .ttl = 64, .autol = true, .ranges = true, .answer = true,
	  .want_flags = R | A, .want_ack = 39, .want_label = WL_AUTO },
	/* 29-32: IPv6 RST, RST|ACK, bad checksum, short capture */
	{ .family = V6, .flags = R, .seq = 1, .ttl = 64, .reflect = true, .autol = true,
	  .ranges = true },
	{ .family = V6, .flags = R | A, .seq = 1, .plen = 5, .ttl = 64, .reflect = true,
	  .autol = true, .ranges = true },
	{ .family = V6, .flags = S, .seq = 1, .ipopt = true, .tcpopt = true, .ttl = 64,
	  .reflect = true, .autol = true, .ranges = true, .csum = CS_BAD },
	{ .family = V6, .flags = S, .seq = 1, .plen = 600, .ttl = 64, .csum = CS_SHORT },
	/* 33-36: the kernel verified the sum: short or not, answered */
	{ .family = V4, .flags = A | P, .seq = 9, .ack = 10, .plen = 1400, .ttl = 64,
	  .csum = CS_SHORT_OK, .answer = true, .want_flags = R, .want_seq = 10 },
	{ .family = V6, .flags = S, .seq = 1, .plen = 3000, .ttl = 64, .csum = CS_SHORT_OK,
	  .answer = true, .want_flags = R | A, .want_ack = 3002 },
	{ .family = V4, .flags = S, .seq = 1, .ttl = 64, .csum = CS_BAD_OK, .answer = true,
	  .want_flags = R | A, .want_ack = 2 },
	{ .family = V6, .flags = S, .seq = 1, .ipopt = true, .tcpopt = true, .ttl = 64,
	  .csum = CS_BAD_OK, .answer = true, .want_flags = R | A, .want_ack = 2 },
};

/* Checks the answer out[0..len) to the segment in (built as b) against r. */
static void check_answer(unsigned no, const struct row *r, const struct rst_params *rp,
			 const uint8_t *in, const uint8_t *out, size_t len)
{
	bool v4 = r->family == AF_INET;
	size_t ipl = v4 ? 20 : 40, alen = v4 ? 4 : 16;
	const uint8_t *t = out + ipl;
	const uint8_t *in_src = in + (v4 ? 12 : 8), *in_dst = in_src + alen;

	CHECK_EQ_U(len, ipl + 20, "row %u: length", no);
	if (len != ipl + 20)
		return;
	if (v4) {
		CHECK_EQ_U(out[0], 0x45, "row %u: version, IHL 5 (no options)", no);
		CHECK_EQ_U(out[1], r->want_tos, "row %u: TOS", no);
		CHECK_EQ_U(pb_get16(out + 2), 40, "row %u: total length", no);
		CHECK_EQ_U(pb_get16(out + 4), 0, "row %u: ID", no);
		CHECK_EQ_U(pb_get16(out + 6), 0x4000, "row %u: DF, offset 0", no);
		CHECK_EQ_U(out[8], rp->ttl, "row %u: TTL", no);
		CHECK_EQ_U(out[9], 6, "row %u: protocol", no);
		CHECK_EQ_U(pb_fold(pb_sum(0, out, 20)), 0, "row %u: IP header checksum", no);
		CHECK(memcmp(out + 12, in_dst, 4) == 0, "row %u: source = their destination", no);
		CHECK(memcmp(out + 16, in_src, 4) == 0, "row %u: destination = their source", no);
	} else {
		uint32_t w = pb_get32(out), label = w & 0xfffff;
		uint32_t in_label = pb_get32(in) & 0xfffff;

		CHECK_EQ_U(w >> 28, 6, "row %u: version", no);
		CHECK_EQ_U((w >> 20) & 0xff, r->want_tos, "row %u: traffic class", no);
		switch (r->want_label) {
		case WL_ZERO:
			CHECK_EQ_U(label, 0, "row %u: flow label", no);
			break;
		case WL_IN:
			CHECK_EQ_U(label, in_label, "row %u: flow label reflected", no);
			CHECK(in_label != 0, "row %u: the row reflects a real label", no);
			break;
		case WL_AUTO:
			CHECK(label != 0 && label != in_label, "row %u: auto flow label", no);
			if (r->ranges)
				CHECK_EQ_U(label & 0x80000, 0x80000, "row %u: stateless bit", no);
			break;
		}
		CHECK_EQ_U(pb_get16(out + 4), 20, "row %u: payload length", no);
		CHECK_EQ_U(out[6], 6, "row %u: next header TCP (no extension headers)", no);
		CHECK_EQ_U(out[7], rp->ttl, "row %u: hop limit", no);
		CHECK(memcmp(out + 8, in_dst, 16) == 0, "row %u: source = their destination", no);
		CHECK(memcmp(out + 24, in_src, 16) == 0, "row %u: destination = their source", no);
	}
	CHECK_EQ_U(pb_get16(t), 22, "row %u: source port = their destination port", no);
	CHECK_EQ_U(pb_get16(t + 2), 51234, "row %u: destination port = their source port", no);
	CHECK_EQ_U(pb_get32(t + 4), r->want_seq, "row %u: seq", no);
	CHECK_EQ_U(pb_get32(t + 8), r->want_ack, "row %u: ack", no);
	CHECK_EQ_U(t[12], 0x50, "row %u: data offset 5, reserved 0", no);
	CHECK_EQ_U(t[13], r->want_flags, "row %u: flags", no);
	CHECK_EQ_U(pb_get16(t + 14), 0, "row %u: window", no);
	CHECK_EQ_U(pb_get16(t + 18), 0, "row %u: urgent pointer", no);
	CHECK_EQ_U(pb_get16(t + 16), pb_tcp_csum(out, ipl, 20), "row %u: TCP checksum", no);
}

static void table_rows(void)
{
	static uint8_t buf[BUF_LEN];
	uint8_t out[RST_MAX_LEN];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		unsigned no = (unsigned)i + 1;
		struct rst_params rp;
		struct pkt_view v;
		struct spec s;
		struct built b;
		size_t cap, len;

		base_spec(&s, r->family);
		s.flags = r->flags;
		s.seq = r->seq;
		s.ack = r->ack;
		s.plen = r->plen;
		s.tos = r->tos;
		s.label = r->label;
		s.ipopt = r->ipopt;
		s.tcpopt = r->tcpopt;
		b = build(buf, &s);
		cap = b.len;
		if (r->csum == CS_BAD || r->csum == CS_BAD_OK)
			buf[b.tcp_off + 17] ^= 0x01;
		if (r->csum == CS_SHORT || r->csum == CS_SHORT_OK)
			cap = b.len - r->plen + 10;

		fixed_params(&rp);
		rp.ttl = r->ttl;
		rp.flowlabel_reflect = r->reflect;
		rp.flowlabel_auto = r->autol;
		rp.flowlabel_state_ranges = r->ranges;
		rp.csum_unverified = r->csum != CS_SHORT_OK && r->csum != CS_BAD_OK;

		if (pkt_parse(buf, cap, &v) != PKT_OK) {
			CHECK(0, "row %u: the test's packet parses", no);
			continue;
		}
		memset(out, 0xa5, sizeof(out));
		len = rst_build(buf, &v, &rp, out);
		if (!r->answer) {
			CHECK_EQ_U(len, 0, "row %u: no answer", no);
			continue;
		}
		check_answer(no, r, &rp, buf, out, len);
	}
}

/* The answer's flow label for a SYN from sport to dport, under rp. */
static uint32_t label_of(const struct rst_params *rp, const uint8_t *src, uint16_t sport,
			 uint16_t dport, uint32_t in_label)
{
	static uint8_t buf[BUF_LEN];
	uint8_t out[RST_MAX_LEN];
	struct pkt_view v;
	struct spec s;
	struct built b;

	base_spec(&s, AF_INET6);
	memcpy(s.src, src, 16);
	s.sport = sport;
	s.dport = dport;
	s.flags = TCP_SYN;
	s.seq = sport * 7919u;
	s.label = in_label;
	b = build(buf, &s);
	if (pkt_parse(buf, b.len, &v) != PKT_OK || rst_build(buf, &v, rp, out) != 60)
		return 0xffffffff;
	return pb_get32(out) & 0xfffff;
}

/*
 * Auto labels: one per connection, the same for the same 4-tuple, different
 * for another port, address or key, spread over all 20 bits; the stateless
 * bit (RFC 6437 leaves the label's meaning to the source; Linux's
 * flowlabel_state_ranges marks its own with bit 19) only added on request.
 */
static void auto_labels(void)
{
	struct rst_params rp, rp_ranges, rp_key;
	uint8_t src[16];
	uint32_t l, l2;
	unsigned zero = 0, bit19 = 0, same = 0, ranges_bad = 0;

	fixed_params(&rp);
	rp.ttl = 64;
	rp.flowlabel_auto = true;
	rp_ranges = rp;
	rp_ranges.flowlabel_state_ranges = true;
	rp_key = rp;
	rp_key.flowlabel_key[0] ^= 1;
	memcpy(src, client6, 16);

	l = label_of(&rp, src, 40000, 22, 0);
	CHECK(l != 0 && l <= 0xfffff, "auto 1: a 20-bit label, not 0 (0x%x)", l);
	CHECK_EQ_U(label_of(&rp, src, 40000, 22, 0), l, "auto 2: same 4-tuple, same label");
	CHECK_EQ_U(label_of(&rp, src, 40000, 22, 0x11111), l,
		   "auto 3: the segment's own label plays no part");
	CHECK(label_of(&rp, src, 40001, 22, 0) != l, "auto 4: other source port, other label");
	CHECK(label_of(&rp, src, 40000, 23, 0) != l, "auto 5: other destination port, other label");
	src[15] ^= 1;
	CHECK(label_of(&rp, src, 40000, 22, 0) != l, "auto 6: other address, other label");
	src[15] ^= 1;
	CHECK(label_of(&rp_key, src, 40000, 22, 0) != l, "auto 7: other key, other label");
	CHECK_EQ_U(label_of(&rp_ranges, src, 40000, 22, 0), l | 0x80000,
		   "auto 8: state ranges add bit 19 and nothing else");

	for (unsigned i = 0; i < LABEL_CASES; i++) {
		src[12] = (uint8_t)(i >> 8);
		src[13] = (uint8_t)i;
		l = label_of(&rp, src, (uint16_t)(1024 + i * 31), 443, 0);
		l2 = label_of(&rp_ranges, src, (uint16_t)(1024 + i * 31), 443, 0);
		zero += l == 0;
		bit19 += !!(l & 0x80000);
		same += l == label_of(&rp, src, (uint16_t)(1025 + i * 31), 443, 0);
		ranges_bad += l2 != (l | 0x80000);
	}
	CHECK_EQ_U(zero, 0, "auto 9: no zero label in %u connections", LABEL_CASES);
	CHECK(bit19 > LABEL_CASES * 2 / 5 && bit19 < LABEL_CASES * 3 / 5,
	      "auto 10: bit 19 not forced without state ranges (%u of %u)", bit19, LABEL_CASES);
	CHECK(same <= 1, "auto 11: neighbouring ports share a label %u times", same);
	CHECK_EQ_U(ranges_bad, 0, "auto 12: state ranges label = label | bit 19");
}

/*
 * RFC 1071 / RFC 1624: 0x0000 and 0xffff are both zero in one's complement.
 * The kernel verifies a segment by summing it checksum field included
 * (__skb_checksum_complete), so a segment whose sum comes out as 0x0000 is
 * also accepted with 0xffff in the field, and a closed port answers it.
 */
static void negative_zero(void)
{
	static uint8_t buf[BUF_LEN];
	uint8_t out[RST_MAX_LEN];
	struct rst_params rp;
	struct pkt_view v;
	struct spec s;
	struct built b;
	int families[2] = { AF_INET, AF_INET6 };

	fixed_params(&rp);
	rp.ttl = 64;
	for (unsigned i = 0; i < 2; i++) {
		base_spec(&s, families[i]);
		s.flags = TCP_SYN;
		s.seq = 4242;
		b = build(buf, &s);
		/* Put the sum's complement into the urgent pointer: the sum becomes 0. */
		s.urg = (uint16_t)pb_tcp_csum(buf, b.tcp_off, b.tcp_len);
		b = build(buf, &s);
		CHECK_EQ_U(pb_get16(buf + b.tcp_off + 16), 0, "-0 %u: the checksum is 0x0000", i + 1);
		if (pkt_parse(buf, b.len, &v) != PKT_OK) {
			CHECK(0, "-0 %u: parse", i + 1);
			continue;
		}
		CHECK_EQ_U(rst_build(buf, &v, &rp, out), b.tcp_off == 20 ? 40 : 60,
			   "-0 %u: 0x0000 answered", i + 1);
		pb_put16(buf + b.tcp_off + 16, 0xffff);
		CHECK(rst_build(buf, &v, &rp, out) == (b.tcp_off == 20 ? 40u : 60u),
			  "-0 %u: a checksum of 0xffff (negative zero) is answered like 0x0000",
			  i + 1);
		/* A sum the kernel has not finished (local, offloaded) is not judged. */
		pb_put16(buf + b.tcp_off + 16, 0x1234);
		CHECK_EQ_U(rst_build(buf, &v, &rp, out), 0, "-0 %u: a wrong sum is not answered", i + 1);
		rp.csum_unfinished = true;
		CHECK(rst_build(buf, &v, &rp, out) == (b.tcp_off == 20 ? 40u : 60u),
		      "-0 %u: an unfinished sum is answered", i + 1);
		rp.csum_unfinished = false;
	}
}

/*
 * IPv4 options on the answer, as ip_send_unicast_reply builds them
 * (__ip_options_echo, ip_options_build).  Each row is a segment's options
 * as the queue sees them, after the input path (ip_options_compile) has
 * recorded this host (SA) and its time (T0) where there was room, and the
 * options the kernel's RST carries: record route then timestamp, this
 * host and the time (T) added where the echo leaves room, END padding; or
 * no answer at all where __ip_options_echo fails.
 */
#define SA	192, 0, 2, 1
#define HOP	203, 0, 113, 9
#define T0	0xaa, 0xbb, 0xcc, 0xdd
#define T	0x01, 0x02, 0x03, 0x04
#define Z4	0, 0, 0, 0
#define BYTES(...)	(const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })
#define NONE		NULL, 0

static const struct {
	const uint8_t *in;
	size_t inlen;
	bool answer;
	const uint8_t *out;
	size_t outlen;
} ipopt_rows[] = {
	/* 1-4: record route: this host again where there is room */
	{ BYTES(7, 11, 8, SA, Z4, 0), true, BYTES(7, 11, 12, SA, SA, 0) },
	{ BYTES(7, 7, 8, SA, 0), true, BYTES(7, 7, 8, SA, 0) },
	{ BYTES(7, 11, 9, Z4, Z4, 0), false, NONE },		/* pointer off the slots */
	{ BYTES(1, 148, 4, 0, 0, 7, 7, 8, SA), true, BYTES(7, 7, 8, SA, 0) },	/* RA dropped */
	/* 5-8: timestamps only, with addresses, full, overflowed */
	{ BYTES(68, 12, 9, 0, T0, Z4), true, BYTES(68, 12, 13, 0, T0, T) },
	{ BYTES(68, 20, 13, 1, SA, T0, Z4, Z4), true, BYTES(68, 20, 21, 1, SA, T0, SA, T) },
	{ BYTES(68, 12, 13, 1, SA, T0), true, BYTES(68, 12, 13, 1, SA, T0) },
	{ BYTES(68, 8, 9, 0x10, T0), true, BYTES(68, 8, 9, 0x10, T0) },
	/* 9-10: prespecified: stamped where the address is this host's */
	{ BYTES(68, 20, 13, 3, SA, T0, SA, Z4), true, BYTES(68, 20, 21, 3, SA, T0, SA, T) },
	{ BYTES(68, 12, 5, 3, HOP, Z4), true, BYTES(68, 12, 5, 3, HOP, Z4) },
	/* 11: the echo's order is record route, timestamp */
	{ BYTES(68, 8, 9, 0, T0, 7, 7, 8, SA, 0), true, BYTES(7, 7, 8, SA, 68, 8, 9, 0, T0, 0) },
	/* 12-13: twice, a broken length: the input path drops these */
	{ BYTES(7, 7, 8, SA, 7, 7, 8, SA, 0, 0), false, NONE },
	{ BYTES(1, 1, 148, 1), false, NONE },
	/* 14: security (not echoed) */
	{ BYTES(130, 11, 0xf1, 0x35, 0, 0, 0, 0, 0, 0, 0, 0), true, NONE },
	/* 15: a timestamp slot cut by the option's end */
	{ BYTES(68, 10, 9, 0, T0, 0, 0, 0, 0), false, NONE },
	/* 16: 40 bytes of record route, one slot left */
	{ BYTES(7, 39, 36, SA, SA, SA, SA, SA, SA, SA, SA, Z4, 0), true,
	  BYTES(7, 39, 40, SA, SA, SA, SA, SA, SA, SA, SA, SA, 0) },
};

static void ip_options(void)
{
	static uint8_t buf[RST_IPOPT_MAX + BUF_LEN];

	for (size_t i = 0; i < sizeof(ipopt_rows) / sizeof(ipopt_rows[0]); i++) {
		unsigned no = (unsigned)i + 1;
		size_t optlen = (ipopt_rows[i].inlen + 3) & ~(size_t)3, ihl = 20 + optlen, len;
		size_t oihl = 20 + ipopt_rows[i].outlen;
		uint8_t out[RST_MAX_LEN];
		struct rst_params rp;
		struct pkt_view v;
		struct spec s;
		struct built b;

		base_spec(&s, AF_INET);
		s.flags = TCP_SYN;
		s.seq = 99;
		b = build(buf + optlen, &s);
		/* Slide the options in between the IP and TCP headers. */
		memmove(buf, buf + optlen, 20);
		memset(buf + 20, 0, optlen);
		memcpy(buf + 20, ipopt_rows[i].in, ipopt_rows[i].inlen);
		buf[0] = (uint8_t)(0x40 | ihl / 4);
		pb_put16(buf + 2, (uint32_t)(ihl + b.tcp_len));
		fixed_params(&rp);
		rp.ttl = 64;
		rp.ip_ts_ms = 0x01020304;
		if (pkt_parse(buf, ihl + b.tcp_len, &v) != PKT_OK) {
			CHECK(0, "ipopt %u: the test's packet parses", no);
			continue;
		}
		len = rst_build(buf, &v, &rp, out);
		if (!ipopt_rows[i].answer) {
			CHECK_EQ_U(len, 0, "ipopt %u: no answer", no);
			continue;
		}
		CHECK_EQ_U(len, oihl + 20, "ipopt %u: length", no);
		if (len != oihl + 20)
			continue;
		CHECK_EQ_U(out[0], 0x40 | oihl / 4, "ipopt %u: IHL", no);
		CHECK_EQ_U(pb_get16(out + 2), oihl + 20, "ipopt %u: total length", no);
		CHECK(ipopt_rows[i].outlen == 0 ||
		      memcmp(out + 20, ipopt_rows[i].out, ipopt_rows[i].outlen) == 0,
		      "ipopt %u: options", no);
		CHECK_EQ_U(pb_fold(pb_sum(0, out, oihl)), 0, "ipopt %u: IP header checksum", no);
		CHECK(memcmp(out + 12, server4, 4) == 0 && memcmp(out + 16, client4, 4) == 0,
		      "ipopt %u: addresses", no);
		CHECK_EQ_U(pb_get32(out + oihl + 8), 100, "ipopt %u: ack", no);
		CHECK_EQ_U(out[oihl + 13], TCP_RST | TCP_ACK, "ipopt %u: flags", no);
		CHECK_EQ_U(pb_get16(out + oihl + 16), pb_tcp_csum(out, oihl, 20), "ipopt %u: TCP checksum",
			   no);
	}
}

int main(void)
{
	table_rows();
	auto_labels();
	negative_zero();
	ip_options();
	return unit_done("rst");
}
