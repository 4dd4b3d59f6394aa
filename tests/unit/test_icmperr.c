/*
 * test_icmperr.c - icmperr_parse and seqrewrite_icmp against ICMP errors
 * built here (pktbuild.h, whose checksums share no code with the daemon).
 *
 * Parse: numbered rows, each an error built from a plain description and
 * then spoiled in one way (or not), with the result and the fields the view
 * must hold.  Rewrite: the oracle is the error a router would have sent had
 * the segment left unshifted: the segment is built twice, with the kernel's
 * sequence number and with the shifted one; the error quoting the shifted
 * one (cut to every quote length a router may choose), once translated
 * back, must equal byte for byte the error quoting the kernel's, both
 * checksums included (but for a quote that ends inside the TCP checksum:
 * the quoted half cannot be derived, and stays as sent).  A deterministic PRNG drives the random cases.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/csum.h"
#include "common/icmperr.h"
#include "datapath/client/seqrewrite.h"
#include "pktbuild.h"
#include "unit.h"

enum {
	BUF_LEN = 2048,
	RANDOM_CASES = 4000,
	SEG_PAYLOAD = 1400,
};

static const uint8_t host4[4] = { 198, 51, 100, 1 }, srv4[4] = { 203, 0, 113, 2 };
static const uint8_t rtr4[4] = { 192, 0, 2, 1 };
static const uint8_t host6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 1 };
static const uint8_t srv6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 5, [15] = 2 };
static const uint8_t rtr6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 1 };

static uint64_t rng_state;

static uint32_t rnd32(void)
{
	return (uint32_t)unit_rnd(&rng_state);
}

/* A segment host -> server: ACK|PSH, timestamps, plen bytes of payload. */
static size_t segment(uint8_t *p, int family, uint32_t seq, size_t plen, const uint8_t *ipopt,
		      size_t ipopt_len)
{
	static uint8_t payload[SEG_PAYLOAD];
	uint8_t opt[12] = { 1, 1 };

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	pb_opt_ts(opt + 2, 0x01020304, 0x05060708);
	return pb_build(p, &(struct pb_spec){
		.family = family, .src = family == AF_INET ? host4 : host6,
		.dst = family == AF_INET ? srv4 : srv6, .ip_id = 0x4242, .label = 0x12345,
		.ipopt = ipopt, .ipopt_len = ipopt_len,
		.sport = 40022, .dport = 22, .seq = seq, .ack = 0x11223344,
		.flags = 0x18, .window = 501, .opt = opt, .opt_len = sizeof(opt),
		.payload = payload, .plen = plen }, NULL);
}

/* The router's error about the first qlen bytes of the segment at seg. */
static size_t error_about(uint8_t *p, int family, uint8_t type, uint8_t code, const uint8_t *seg,
			  size_t qlen)
{
	return pb_build_icmp(p, &(struct pb_icmp_spec){
		.family = family, .src = family == AF_INET ? rtr4 : rtr6,
		.dst = family == AF_INET ? host4 : host6, .type = type, .code = code,
		.rest = 1280, .quote = seg, .quote_len = qlen });
}

/* ------------------------------------------------------------------ parse */

enum spoil {
	SP_NONE,
	SP_CAP,			/* capture cut to arg bytes */
	SP_OUTER_PROTO,		/* outer protocol / next header = arg */
	SP_OUTER_FRAG,		/* outer IPv4 more-fragments bit */
	SP_QUOTE_PROTO,		/* quoted protocol / next header = arg */
	SP_QUOTE_FRAG,		/* quoted IPv4 fragment offset 8 */
	SP_QUOTE_IHL,		/* quoted IPv4 IHL = arg */
	SP_QUOTE_VERSION,	/* quoted version = arg */
	SP_QUOTE_TOTLEN,	/* quoted IPv4 total / IPv6 payload length = arg */
	SP_PAD,			/* arg zero bytes after the datagram (capture only) */
};

struct parse_row {
	int line;
	int family;
	uint8_t type, code;
	size_t qlen;		/* bytes of the segment quoted (0: all of it) */
	bool quote_hbh;		/* the quoted IPv6 segment has a hop-by-hop header */
	enum spoil spoil;
	size_t arg;
	enum icmperr_drop want;
	size_t want_tcp_len;	/* when OK (0: the segment's whole TCP length) */
};

#define ROW(...) { __LINE__, __VA_ARGS__ }
/* Segments carry 100 payload bytes: TCP is 32 + 100 = 132 bytes. */
enum { ROW_PLEN = 100, ROW_TCP = 132 };
static const struct parse_row parse_rows[] = {
	ROW(AF_INET, 3, 4, 0, false, SP_NONE, 0, ICMPERR_OK, ROW_TCP),	/* frag needed */
	ROW(AF_INET, 3, 3, 28, false, SP_NONE, 0, ICMPERR_OK, 8),	/* RFC 792's 64 bits */
	ROW(AF_INET, 3, 13, 38, false, SP_NONE, 0, ICMPERR_OK, 18),	/* checksum just in */
	ROW(AF_INET, 11, 0, 0, false, SP_NONE, 0, ICMPERR_OK, ROW_TCP),
	ROW(AF_INET, 12, 0, 0, false, SP_NONE, 0, ICMPERR_OK, ROW_TCP),
	ROW(AF_INET, 5, 1, 0, false, SP_NONE, 0, ICMPERR_OK, ROW_TCP),
	ROW(AF_INET, 4, 0, 0, false, SP_NONE, 0, ICMPERR_OK, ROW_TCP),
	ROW(AF_INET, 3, 4, 27, false, SP_NONE, 0, ICMPERR_QUOTE_SHORT, 0),
	ROW(AF_INET, 3, 4, 19, false, SP_NONE, 0, ICMPERR_QUOTE_SHORT, 0),
	ROW(AF_INET, 8, 0, 0, false, SP_NONE, 0, ICMPERR_NOT_ERROR, 0),	/* echo request */
	ROW(AF_INET, 0, 0, 0, false, SP_NONE, 0, ICMPERR_NOT_ERROR, 0),	/* echo reply */
	ROW(AF_INET, 3, 4, 0, false, SP_CAP, 19, ICMPERR_SHORT, 0),
	ROW(AF_INET, 3, 4, 0, false, SP_CAP, 27, ICMPERR_SHORT, 0),
	ROW(AF_INET, 3, 4, 0, false, SP_CAP, 28 + 27, ICMPERR_QUOTE_SHORT, 0),
	ROW(AF_INET, 3, 4, 0, false, SP_CAP, 28 + 28, ICMPERR_OK, 8),
	ROW(AF_INET, 3, 4, 0, false, SP_CAP, 28 + 20 + 18, ICMPERR_OK, 18),
	ROW(AF_INET, 3, 4, 0, false, SP_OUTER_PROTO, 6, ICMPERR_NOT_ICMP, 0),
	ROW(AF_INET, 3, 4, 0, false, SP_OUTER_FRAG, 0, ICMPERR_NOT_ICMP, 0),
	ROW(AF_INET, 3, 4, 0, false, SP_QUOTE_PROTO, 17, ICMPERR_QUOTE_NOT_TCP, 0),
	ROW(AF_INET, 3, 4, 0, false, SP_QUOTE_FRAG, 0, ICMPERR_QUOTE_NOT_TCP, 0),
	ROW(AF_INET, 3, 4, 0, false, SP_QUOTE_IHL, 4, ICMPERR_QUOTE_NOT_TCP, 0),
	ROW(AF_INET, 3, 4, 40, false, SP_QUOTE_IHL, 6, ICMPERR_OK, 16),	/* options */
	ROW(AF_INET, 3, 4, 30, false, SP_QUOTE_IHL, 15, ICMPERR_QUOTE_SHORT, 0),
	ROW(AF_INET, 3, 4, 0, false, SP_QUOTE_VERSION, 6, ICMPERR_QUOTE_NOT_TCP, 0),
	/* RFC 4884: the quote padded past the datagram it quotes is no TCP. */
	ROW(AF_INET, 3, 4, 0, false, SP_QUOTE_TOTLEN, 20 + 20, ICMPERR_OK, 20),
	ROW(AF_INET, 3, 4, 0, false, SP_QUOTE_TOTLEN, 20 + 7, ICMPERR_QUOTE_SHORT, 0),
	ROW(AF_INET, 3, 4, 0, false, SP_QUOTE_TOTLEN, 19, ICMPERR_QUOTE_NOT_TCP, 0),
	/* Ethernet padding after the datagram is not part of it. */
	ROW(AF_INET, 3, 4, 0, false, SP_PAD, 18, ICMPERR_OK, ROW_TCP),

	ROW(AF_INET6, 2, 0, 0, false, SP_NONE, 0, ICMPERR_OK, ROW_TCP),	/* packet too big */
	ROW(AF_INET6, 1, 4, 0, false, SP_NONE, 0, ICMPERR_OK, ROW_TCP),	/* port unreachable */
	ROW(AF_INET6, 3, 0, 0, false, SP_NONE, 0, ICMPERR_OK, ROW_TCP),
	ROW(AF_INET6, 4, 0, 0, false, SP_NONE, 0, ICMPERR_OK, ROW_TCP),
	ROW(AF_INET6, 1, 1, 48, false, SP_NONE, 0, ICMPERR_OK, 8),
	ROW(AF_INET6, 1, 1, 47, false, SP_NONE, 0, ICMPERR_QUOTE_SHORT, 0),
	ROW(AF_INET6, 1, 1, 39, false, SP_NONE, 0, ICMPERR_QUOTE_SHORT, 0),
	ROW(AF_INET6, 2, 0, 0, true, SP_NONE, 0, ICMPERR_OK, ROW_TCP),
	ROW(AF_INET6, 2, 0, 40 + 8 + 8, true, SP_NONE, 0, ICMPERR_OK, 8),
	ROW(AF_INET6, 2, 0, 40 + 7, true, SP_NONE, 0, ICMPERR_QUOTE_SHORT, 0),
	ROW(AF_INET6, 128, 0, 0, false, SP_NONE, 0, ICMPERR_NOT_ERROR, 0),
	ROW(AF_INET6, 135, 0, 0, false, SP_NONE, 0, ICMPERR_NOT_ERROR, 0),
	ROW(AF_INET6, 2, 0, 0, false, SP_CAP, 47, ICMPERR_SHORT, 0),
	ROW(AF_INET6, 2, 0, 0, false, SP_CAP, 39, ICMPERR_SHORT, 0),
	ROW(AF_INET6, 2, 0, 0, false, SP_OUTER_PROTO, 6, ICMPERR_NOT_ICMP, 0),
	ROW(AF_INET6, 2, 0, 0, false, SP_OUTER_PROTO, 59, ICMPERR_NOT_ICMP, 0),
	ROW(AF_INET6, 2, 0, 0, false, SP_QUOTE_PROTO, 17, ICMPERR_QUOTE_NOT_TCP, 0),
	ROW(AF_INET6, 2, 0, 0, false, SP_QUOTE_VERSION, 4, ICMPERR_QUOTE_NOT_TCP, 0),
	ROW(AF_INET6, 2, 0, 0, false, SP_QUOTE_TOTLEN, 20, ICMPERR_OK, 20),
	ROW(AF_INET6, 2, 0, 0, false, SP_QUOTE_TOTLEN, 7, ICMPERR_QUOTE_SHORT, 0),
	ROW(AF_INET6, 2, 0, 0, false, SP_PAD, 6, ICMPERR_OK, ROW_TCP),
};

static void apply(uint8_t *p, size_t *len, const struct parse_row *r)
{
	size_t ipl = r->family == AF_INET ? 20 : 40, q = ipl + 8;

	switch (r->spoil) {
	case SP_NONE:
		break;
	case SP_CAP:
		*len = r->arg;
		break;
	case SP_OUTER_PROTO:
		p[r->family == AF_INET ? 9 : 6] = (uint8_t)r->arg;
		break;
	case SP_OUTER_FRAG:
		p[6] |= 0x20;
		break;
	case SP_QUOTE_PROTO:
		p[q + (r->family == AF_INET ? 9 : 6)] = (uint8_t)r->arg;
		break;
	case SP_QUOTE_FRAG:
		pb_put16(p + q + 6, 1);
		break;
	case SP_QUOTE_IHL:
		p[q] = (uint8_t)(0x40 | r->arg);
		break;
	case SP_QUOTE_VERSION:
		p[q] = (uint8_t)(r->arg << 4 | (p[q] & 0x0f));
		break;
	case SP_QUOTE_TOTLEN:
		pb_put16(p + q + (r->family == AF_INET ? 2 : 4), (uint32_t)r->arg);
		break;
	case SP_PAD:
		memset(p + *len, 0, r->arg);
		*len += r->arg;
		break;
	}
}

static void test_parse(void)
{
	for (size_t i = 0; i < sizeof(parse_rows) / sizeof(parse_rows[0]); i++) {
		const struct parse_row *r = &parse_rows[i];
		uint8_t seg[BUF_LEN], pkt[BUF_LEN];
		static const uint8_t hbh[8] = { 0, 0, 1, 4 };	/* PadN */
		size_t slen = segment(seg, r->family, 0xdeadbeef, ROW_PLEN, hbh,
				      r->quote_hbh ? sizeof(hbh) : 0);
		size_t len = error_about(pkt, r->family, r->type, r->code, seg, r->qlen ? r->qlen : slen);
		size_t ipl = r->family == AF_INET ? 20 : 40;
		size_t tcp = ipl + 8 + ipl + (r->quote_hbh ? sizeof(hbh) : 0);
		struct icmperr_view v = { .seq = 7 };
		enum icmperr_drop got;

		apply(pkt, &len, r);
		got = icmperr_parse(pkt, len, &v);
		CHECK_EQ_U(got, r->want, "row %d: %s", r->line, icmperr_drop_name(got));
		if (r->want != ICMPERR_OK) {
			CHECK_EQ_U(v.seq, 7, "row %d: view left alone", r->line);
			continue;
		}
		if (got != ICMPERR_OK)
			continue;
		CHECK_EQ_U(v.family, (unsigned)r->family, "row %d: family", r->line);
		CHECK_EQ_U(v.type, r->type, "row %d: type", r->line);
		CHECK_EQ_U(v.code, r->code, "row %d: code", r->line);
		CHECK_EQ_U(v.icmp_off, ipl, "row %d: ICMP offset", r->line);
		if (r->spoil == SP_QUOTE_IHL)
			tcp += r->arg * 4 - 20;
		CHECK_EQ_U(v.q_tcp_off, tcp, "row %d: quoted TCP offset", r->line);
		CHECK_EQ_U(v.q_tcp_len, r->want_tcp_len, "row %d: quoted TCP bytes", r->line);
		/* A longer quoted IPv4 header takes TCP's first bytes for options. */
		if (r->spoil != SP_QUOTE_IHL) {
			CHECK_EQ_U(v.sport, 40022, "row %d: sport", r->line);
			CHECK_EQ_U(v.dport, 22, "row %d: dport", r->line);
			CHECK_EQ_U(v.seq, 0xdeadbeef, "row %d: seq", r->line);
		}
		CHECK(memcmp(icmperr_src(pkt, &v), r->family == AF_INET ? host4 : host6,
			     v.addr_len) == 0, "row %d: quoted source", r->line);
		CHECK(memcmp(icmperr_dst(pkt, &v), r->family == AF_INET ? srv4 : srv6,
			     v.addr_len) == 0, "row %d: quoted destination", r->line);
		CHECK(v.q_tcp_off + v.q_tcp_len <= len, "row %d: inside the capture", r->line);
		CHECK_EQ_U(icmperr_has_tcp_csum(&v), v.q_tcp_len >= 18, "row %d", r->line);
	}
}

/* Every prefix of every packet: never past the capture, never a crash (ASan). */
static void test_prefixes(void)
{
	for (int fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET;
		uint8_t seg[BUF_LEN], pkt[BUF_LEN], *cut;
		size_t slen = segment(seg, family, 1, 40, NULL, 0);
		size_t len = error_about(pkt, family, fam ? 2 : 3, 4, seg, slen);

		for (size_t n = 0; n <= len; n++) {
			struct icmperr_view v;

			/* A copy of exactly n bytes: a read past them is ASan's to catch. */
			cut = malloc(n ? n : 1);
			if (!cut)
				abort();
			memcpy(cut, pkt, n);
			if (icmperr_parse(cut, n, &v) == ICMPERR_OK)
				CHECK(v.q_tcp_off + v.q_tcp_len <= n && v.q_tcp_len >= 8,
				      "family %d cut %zu: view inside", family, n);
			free(cut);
		}
	}
}

/* --------------------------------------------------------------- rewrite */

/*
 * One case: the kernel's seq s, the shift delta, quote length qlen (0:
 * all).  The error about the shifted segment, translated back, must be the
 * error about the kernel's segment, byte for byte.
 */
static void rewrite_case(int family, uint8_t type, uint32_t s, uint32_t delta, size_t plen,
			 size_t qlen, int tag)
{
	uint8_t sent[BUF_LEN], kern[BUF_LEN], got[BUF_LEN], want[BUF_LEN];
	size_t slen = segment(sent, family, s + delta, plen, NULL, 0);
	size_t klen = segment(kern, family, s, plen, NULL, 0);
	size_t glen, wlen;
	struct icmperr_view v;

	if (slen != klen)
		abort();
	if (qlen == 0 || qlen > slen)
		qlen = slen;
	glen = error_about(got, family, type, 4, sent, qlen);
	wlen = error_about(want, family, type, 4, kern, qlen);
	if (icmperr_parse(got, glen, &v) != ICMPERR_OK) {
		CHECK(false, "case %d: parse", tag);
		return;
	}
	seqrewrite_icmp(got, &v, delta);
	CHECK_EQ_U(v.seq, s, "case %d: the view's seq follows", tag);
	if (v.q_tcp_len == PB_TCP_CSUM_OFF + 1) {
		/*
		 * Half a checksum quoted: its other half, which the new value
		 * depends on, is gone, so the byte stays as sent; the ICMP
		 * checksum must still be right.
		 */
		size_t at = v.q_tcp_off + PB_TCP_CSUM_OFF;

		CHECK_EQ_U(got[at], sent[at - 8 - (family == AF_INET ? 20 : 40)],
			   "case %d: half a checksum left alone", tag);
		want[at] = got[at];
		pb_put16(want + v.icmp_off + 2, pb_icmp_csum(want, v.icmp_off, wlen - v.icmp_off));
	}
	CHECK(glen == wlen && memcmp(got, want, glen) == 0,
	      "case %d: family %d qlen %zu delta %08x: not the error about the unshifted segment",
	      tag, family, qlen, delta);
	CHECK_EQ_U(csum_icmp_full(got, &v), pb_get16(got + v.icmp_off + 2),
		   "case %d: full checksum agrees", tag);
}

static void test_rewrite_rows(void)
{
	static const struct {
		int line;
		uint32_t s, delta;
		size_t qlen;
	} rows[] = {
		ROW(0x00000000, 0x00000000, 0),
		ROW(0x12345678, 0x9abcdef0, 0),
		ROW(0xffffffff, 0x00000001, 0),		/* wraps to 0 */
		ROW(0x00000001, 0xffffffff, 0),		/* a negative shift */
		ROW(0x80000000, 0x80000000, 0),
		ROW(0x0000ffff, 0x00010001, 0),		/* carries across the halves */
		ROW(0xfffe0001, 0x0001ffff, 0),
		ROW(0x12345678, 0x11111111, 8),		/* ports and seq only */
		ROW(0x12345678, 0x11111111, 12),
		ROW(0x12345678, 0x11111111, 17),	/* one byte of the checksum */
		ROW(0x12345678, 0x11111111, 18),	/* the checksum, not urgent */
		ROW(0x12345678, 0x11111111, 20),
		ROW(0x12345678, 0x11111111, 28),
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		for (int fam = 0; fam < 2; fam++) {
			int family = fam ? AF_INET6 : AF_INET;
			size_t ipl = fam ? 40 : 20;

			rewrite_case(family, fam ? 2 : 3, rows[i].s, rows[i].delta, 200,
				     rows[i].qlen ? ipl + rows[i].qlen : 0, rows[i].line);
		}
	}
}

static void test_rewrite_random(void)
{
	rng_state = 0x1c3b;
	for (int i = 0; i < RANDOM_CASES; i++) {
		int family = rnd32() % 2 ? AF_INET6 : AF_INET;
		size_t ipl = family == AF_INET ? 20 : 40;
		size_t plen = rnd32() % SEG_PAYLOAD;
		/* Anything from RFC 792's 8 bytes to the whole segment. */
		size_t qlen = ipl + 8 + rnd32() % (32 + plen);
		static const uint8_t types4[] = { 3, 4, 5, 11, 12 }, types6[] = { 1, 2, 3, 4 };
		uint8_t type = family == AF_INET ? types4[rnd32() % sizeof(types4)]
						 : types6[rnd32() % sizeof(types6)];

		rewrite_case(family, type, rnd32(), rnd32(), plen, qlen, i);
	}
}

/* A corrupt error stays corrupt: the incremental update keeps its fault. */
static void test_bad_stays_bad(void)
{
	for (int fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET;
		uint8_t seg[BUF_LEN], pkt[BUF_LEN];
		size_t slen = segment(seg, family, 0x5000, 64, NULL, 0);
		size_t len = error_about(pkt, family, fam ? 2 : 3, 4, seg, slen);
		struct icmperr_view v;
		uint16_t good;

		pkt[len - 1] ^= 0x40;	/* a payload byte changed in transit */
		if (icmperr_parse(pkt, len, &v) != ICMPERR_OK)
			abort();
		seqrewrite_icmp(pkt, &v, 0x1000);
		good = csum_icmp_full(pkt, &v);
		CHECK(good != pb_get16(pkt + v.icmp_off + 2), "family %d: still wrong", family);
		pkt[len - 1] ^= 0x40;
		CHECK_EQ_U(csum_icmp_full(pkt, &v), pb_get16(pkt + v.icmp_off + 2),
			   "family %d: right once the byte is back", family);
	}
}

int main(void)
{
	test_parse();
	test_prefixes();
	test_rewrite_rows();
	test_rewrite_random();
	test_bad_stays_bad();
	return unit_done("test_icmperr");
}
