/*
 * test_pkt - the packet view (src/common/pkt.c).
 *
 * Every row builds one packet with the helpers below (IPv4 or IPv6 with
 * optional IP options / extension headers, TCP options and payload), then
 * pokes single fields and chooses a capture length, and states the expected
 * verdict and view.  Every OK row is additionally parsed at every capture
 * length from 0 to its full size, which pins the "headers must be captured,
 * payload may be cut short" boundary for every shape in the table.
 */
#include <sys/socket.h>
#include <arpa/inet.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/pkt.h"
#include "unit.h"

enum {
	V4 = 20,		/* IPv4 header without options */
	V6 = 40,		/* IPv6 fixed header */
	TH = 20,		/* TCP header without options */
	BUF_MAX = 2048,

	SPORT = 40000,
	DPORT = 22,
	SEQ = 0x01020304,
	ACK = 0xa1b2c3d4,
	WINDOW = 64240,
	URGENT = 0xa05b,	/* the urgent pointer, URG or not */
	TSVAL = 0x11223344,
	TSECR = 0x55667788,

	NH_HOP = 0, NH_TCP = 6, NH_UDP = 17, NH_RT = 43, NH_FRAG = 44, NH_ESP = 50,
	NH_AH = 51, NH_NONE = 59, NH_DST = 60,
};

static const uint8_t v4_src[4] = { 192, 0, 2, 1 };
static const uint8_t v4_dst[4] = { 192, 18, 42, 42 };
static const uint8_t v6_src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };
static const uint8_t v6_dst[16] = { 0x20, 0x01, 0x0d, 0xb8, [12] = 0x00, 0x2a, 0x00, 0x2a };

static void put16(uint8_t *p, uint16_t v)
{
	v = htons(v);
	memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, sizeof(v));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return ntohl(v);
}

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* TCP header + options (EOL-padded to 32 bits) + a counting payload. */
static size_t put_tcp(uint8_t *p, uint8_t flags, const uint8_t *opts, size_t optlen,
		      size_t paylen)
{
	size_t hlen = TH + pad4(optlen);

	memset(p, 0, hlen);
	put16(p, SPORT);
	put16(p + 2, DPORT);
	put32(p + 4, SEQ);
	put32(p + 8, ACK);
	p[12] = (uint8_t)(hlen / 4 << 4);
	p[13] = flags;
	put16(p + 14, WINDOW);
	put16(p + 18, URGENT);
	if (optlen)
		memcpy(p + TH, opts, optlen);
	for (size_t i = 0; i < paylen; i++)
		p[hlen + i] = (uint8_t)i;
	return hlen + paylen;
}

static size_t build_v4(uint8_t *out, const uint8_t *ipopt, size_t ipoptlen, uint8_t flags,
		       const uint8_t *opts, size_t optlen, size_t paylen)
{
	size_t ihl = V4 + pad4(ipoptlen), len;

	memset(out, 0, ihl);
	out[0] = (uint8_t)(0x40 | ihl / 4);
	out[8] = 64;
	out[9] = NH_TCP;
	memcpy(out + 12, v4_src, 4);
	memcpy(out + 16, v4_dst, 4);
	if (ipoptlen)
		memcpy(out + V4, ipopt, ipoptlen);
	len = ihl + put_tcp(out + ihl, flags, opts, optlen, paylen);
	put16(out + 2, (uint16_t)len);
	return len;
}

/* ext holds the raw extension headers, each naming its own next header. */
static size_t build_v6(uint8_t *out, uint8_t first_nh, const uint8_t *ext, size_t extlen,
		       uint8_t flags, const uint8_t *opts, size_t optlen, size_t paylen)
{
	size_t len;

	memset(out, 0, V6);
	out[0] = 0x60;
	out[6] = extlen ? first_nh : NH_TCP;
	out[7] = 64;
	memcpy(out + 8, v6_src, 16);
	memcpy(out + 24, v6_dst, 16);
	if (extlen)
		memcpy(out + V6, ext, extlen);
	len = V6 + extlen + put_tcp(out + V6 + extlen, flags, opts, optlen, paylen);
	put16(out + 4, (uint16_t)(len - V6));
	return len;
}

struct poke {
	size_t off;
	uint16_t val;
	uint8_t width;		/* 0 unused, 1 or 2 bytes (network order) */
};

enum { X_MSS = 1, X_WS = 2, X_SACKP = 4, X_TS = 8 };

struct row {
	int ipv;			/* 4 or 6 */
	const uint8_t *ipopt;		/* IPv4 options */
	size_t ipoptlen;
	uint8_t nh;			/* IPv6: first next header when ext is set */
	const uint8_t *ext;
	size_t extlen;
	uint8_t flags;			/* 0 means SYN */
	const uint8_t *opts;
	size_t optlen;
	size_t paylen;
	struct poke poke[3];
	bool fixcap;			/* caplen = cap ... */
	size_t cap;
	int trim;			/* ... else built length - trim (< 0: padding) */

	enum pkt_drop want;
	/* Checked only when want == PKT_OK. */
	size_t l4_off, hlen, payload_len, payload_caplen;
	unsigned has;			/* X_* */
	uint16_t mss;
	uint8_t ws;
	uint8_t nsack;
	bool discarded;			/* v6_discarded */
};

#define IPOPT(...)	.ipopt = (const uint8_t[]){ __VA_ARGS__ }, \
			.ipoptlen = sizeof((const uint8_t[]){ __VA_ARGS__ })
#define EXT(first, ...)	.nh = (first), .ext = (const uint8_t[]){ __VA_ARGS__ }, \
			.extlen = sizeof((const uint8_t[]){ __VA_ARGS__ })
#define OPTS(...)	.opts = (const uint8_t[]){ __VA_ARGS__ }, \
			.optlen = sizeof((const uint8_t[]){ __VA_ARGS__ })
#define P8(o, v)	{ (o), (v), 1 }
#define P16(o, v)	{ (o), (v), 2 }
#define CAP(n)		.fixcap = true, .cap = (n)
#define OK(l4, hl, pl, pc) \
	.want = PKT_OK, .l4_off = (l4), .hlen = (hl), .payload_len = (pl), .payload_caplen = (pc)

/* Option bytes, RFC 9293 3.2 / RFC 7323 / RFC 2018. */
#define O_MSS		2, 4, 0x05, 0xb4		/* 1460 */
#define O_SACKP		4, 2
#define O_TS		8, 10, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88
#define O_WS		3, 3, 7
#define O_LINUX_SYN	O_MSS, O_SACKP, O_TS, 1, O_WS	/* what Linux sends */
#define SACKB(i)	0x10, 0, (i), 0x00, 0x10, 0, (i), 0x80	/* [0x1000i00, 0x1000i80) */
/* An 8-byte options header (hop-by-hop or destination) holding one PadN. */
#define OPTHDR(next)	(next), 0, 1, 4, 0, 0, 0, 0
#define LINUX_HAS	(X_MSS | X_WS | X_SACKP | X_TS)

static const struct row rows[] = {
	/* IPv4 length and header checks, RFC 791 3.1. */
	/* 1 */ { 4, OK(V4, TH, 0, 0) },
	/* 2 */ { 4, .trim = 1, .want = PKT_TRUNCATED },
	/* 3 */ { 4, CAP(V4), .want = PKT_TRUNCATED },
	/* 4 */ { 4, CAP(V4 - 1), .want = PKT_SHORT },
	/* 5 */ { 4, CAP(0), .want = PKT_SHORT },
	/* 6 */ { 4, .poke = { P8(0, 0x55) }, .want = PKT_BAD_VERSION },
	/* 7 */ { 4, .poke = { P8(0, 0x05) }, .want = PKT_BAD_VERSION },
	/* 8 */ { 4, .poke = { P8(0, 0x44) }, .want = PKT_BAD_IHL },
	/* 9 */ { 4, .poke = { P8(0, 0x40) }, .want = PKT_BAD_IHL },
	/* 10 */ { 4, IPOPT(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0),
		   OK(40, TH, 0, 0) },
	/* 11 */ { 4, IPOPT(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0),
		   CAP(39), .want = PKT_BAD_IHL },
	/* 12 */ { 4, IPOPT(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0),
		   CAP(40), .want = PKT_TRUNCATED },
	/* 13 */ { 4, .poke = { P16(2, 19) }, .want = PKT_BAD_TOTLEN },
	/* 14 */ { 4, .poke = { P16(2, 0) }, .want = PKT_BAD_TOTLEN },
	/* 15 */ { 4, .poke = { P16(2, V4) }, .want = PKT_TCP_SHORT },
	/* The 20th TCP byte is captured, but past tot_len it is padding. */
	/* 16 */ { 4, .poke = { P16(2, V4 + TH - 1) }, .want = PKT_TCP_SHORT },
	/* 17 */ { 4, .poke = { P16(2, V4 + TH - 1) }, CAP(V4 + TH - 1), .want = PKT_TCP_SHORT },
	/* 18 */ { 4, .poke = { P16(6, 0x2000) }, .want = PKT_FRAGMENT },	/* MF */
	/* 19 */ { 4, .poke = { P16(6, 0x0001) }, .want = PKT_FRAGMENT },	/* offset 8 */
	/* 20 */ { 4, .poke = { P16(6, 0x1fff) }, .want = PKT_FRAGMENT },
	/* 21 */ { 4, .poke = { P16(6, 0x4000) }, OK(V4, TH, 0, 0) },		/* DF */
	/* 22 */ { 4, .poke = { P8(9, NH_UDP) }, .want = PKT_NOT_TCP },
	/* 23 */ { 4, .poke = { P8(9, NH_ESP) }, .want = PKT_NOT_TCP },

	/* Capture limit vs declared length. */
	/* 24 */ { 4, .paylen = 100, OK(V4, TH, 100, 100) },
	/* 25 */ { 4, .paylen = 100, .trim = 50, OK(V4, TH, 100, 50) },
	/* 26 */ { 4, .paylen = 100, CAP(V4 + TH), OK(V4, TH, 100, 0) },
	/* 27 */ { 4, .paylen = 100, CAP(V4 + TH - 1), .want = PKT_TRUNCATED },
	/* Ethernet padding after tot_len is not part of the datagram. */
	/* 28 */ { 4, .trim = -6, OK(V4, TH, 0, 0) },
	/* 29 */ { 4, .paylen = 10, .trim = -6, OK(V4, TH, 10, 10) },

	/* TCP data offset, RFC 9293 3.1. */
	/* 30 */ { 4, .poke = { P8(V4 + 12, 0x40) }, .want = PKT_BAD_DOFF },
	/* 31 */ { 4, .poke = { P8(V4 + 12, 0x00) }, .want = PKT_BAD_DOFF },
	/* 32 */ { 4, .poke = { P8(V4 + 12, 0x60) }, .want = PKT_BAD_DOFF },
	/* 33 */ { 4, .poke = { P8(V4 + 12, 0xf0) }, .paylen = 39, .want = PKT_BAD_DOFF },
	/* 34 */ { 4, OPTS(O_LINUX_SYN), .paylen = 100, CAP(V4 + TH + 19), .want = PKT_TRUNCATED },
	/* The same with only the payload cut. */
	/* 35 */ { 4, OPTS(O_LINUX_SYN), .paylen = 100, CAP(V4 + TH + 20),
		   OK(V4, TH + 20, 100, 0), .has = LINUX_HAS, .mss = 1460, .ws = 7 },

	/* TCP options. */
	/* 36 */ { 4, OPTS(O_LINUX_SYN), OK(V4, TH + 20, 0, 0), .has = LINUX_HAS, .mss = 1460,
		   .ws = 7 },
	/* 37 */ { 4, .flags = TCP_ACK, OPTS(1, 1, O_TS, 1, 1, 5, 10, SACKB(1)),
		   OK(V4, TH + 24, 0, 0), .has = X_TS, .nsack = 1 },
	/* 38 */ { 4, .flags = TCP_ACK, OPTS(1, 1, O_TS, 1, 1, 5, 18, SACKB(1), SACKB(2)),
		   OK(V4, TH + 32, 0, 0), .has = X_TS, .nsack = 2 },
	/* 39 */ { 4, .flags = TCP_ACK,
		   OPTS(1, 1, O_TS, 1, 1, 5, 26, SACKB(1), SACKB(2), SACKB(3)),
		   OK(V4, TH + 40, 0, 0), .has = X_TS, .nsack = 3 },
	/* 40 */ { 4, .flags = TCP_ACK | TCP_PSH,
		   OPTS(1, 1, 5, 34, SACKB(1), SACKB(2), SACKB(3), SACKB(4)), .paylen = 7,
		   OK(V4, TH + 36, 7, 7), .nsack = 4 },
	/*
	 * Option lengths, as the kernel's tcp_parse_options reads them: a known
	 * option of the wrong length is skipped, a length < 2 or one past the
	 * header ends the list; the segment is TCP all the same.
	 */
	/* 41 */ { 4, .flags = TCP_ACK, OPTS(1, 1, 5, 2), OK(V4, TH + 4, 0, 0) },
	/* 42 */ { 4, .flags = TCP_ACK, OPTS(5, 11, SACKB(1), 0), OK(V4, TH + 12, 0, 0) },
	/* An MSS kind in the last byte, its length byte missing. */
	/* 43 */ { 4, OPTS(1, 1, 1, 2), OK(V4, TH + 4, 0, 0) },
	/* 44 */ { 4, OPTS(34, 0, 0, 0), OK(V4, TH + 4, 0, 0) },		/* zero length */
	/* 45 */ { 4, OPTS(34, 1, 0, 0), OK(V4, TH + 4, 0, 0) },
	/* 46 */ { 4, OPTS(34, 5, 0, 0), OK(V4, TH + 4, 0, 0) },		/* past doff */
	/* 47 */ { 4, OPTS(O_MSS, 8, 10, 0, 0), OK(V4, TH + 8, 0, 0), .has = X_MSS,
		   .mss = 1460 },					/* TS past doff */
	/* 48 */ { 4, OPTS(2, 5, 5, 0xb4, 0, 0, 0, 0), OK(V4, TH + 8, 0, 0) },	/* MSS length 5 */
	/* 49 */ { 4, OPTS(2, 3, 5, 0), OK(V4, TH + 4, 0, 0) },
	/* 50 */ { 4, OPTS(3, 4, 7, 0), OK(V4, TH + 4, 0, 0) },
	/* 51 */ { 4, OPTS(4, 3, 0, 0), OK(V4, TH + 4, 0, 0) },
	/* 52 */ { 4, OPTS(8, 8, 0, 0, 0, 0, 0, 0), OK(V4, TH + 8, 0, 0) },
	/* A later copy replaces an earlier one. */
	/* 53 */ { 4, OPTS(O_TS, 1, 1, O_TS, 1, 1), OK(V4, TH + 24, 0, 0), .has = X_TS },
	/* 54 */ { 4, OPTS(O_MSS, O_MSS), OK(V4, TH + 8, 0, 0), .has = X_MSS, .mss = 1460 },
	/* 55 */ { 4, OPTS(0xfe, 4, 0xf9, 0x89, O_MSS), OK(V4, TH + 8, 0, 0), .has = X_MSS,
		   .mss = 1460 },				/* RFC 6994 skipped */
	/* Nothing after EOL is read, not even a broken option. */
	/* 56 */ { 4, OPTS(0, 2, 0, 0), OK(V4, TH + 4, 0, 0) },
	/* 57 */ { 4, OPTS(1, 1, 1, 1), OK(V4, TH + 4, 0, 0) },
	/* 58 */ { 4, OPTS(O_WS, 0), OK(V4, TH + 4, 0, 0), .has = X_WS, .ws = 7 },
	/* 59 */ { 4, OPTS(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
			   1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
		   OK(V4, 60, 0, 0) },
	/* Data offset 8 cuts the TS option in two: MSS and SACK-perm stand. */
	/* 60 */ { 4, OPTS(O_LINUX_SYN), .poke = { P8(V4 + 12, 0x80) }, OK(V4, TH + 12, 8, 8),
		   .has = X_MSS | X_SACKP, .mss = 1460 },

	/* IPv6, RFC 8200. */
	/* 61 */ { 6, OK(V6, TH, 0, 0) },
	/* 62 */ { 6, CAP(V6 - 1), .want = PKT_SHORT },
	/* 63 */ { 6, CAP(V4), .want = PKT_SHORT },
	/* 64 */ { 6, CAP(V6), .want = PKT_TRUNCATED },
	/* 65 */ { 6, .trim = 1, .want = PKT_TRUNCATED },
	/* 66 */ { 6, .poke = { P8(0, 0x70) }, .want = PKT_BAD_VERSION },
	/* 67 */ { 6, .poke = { P16(4, 0) }, .want = PKT_BAD_TOTLEN },	/* jumbogram */
	/* 68 */ { 6, .poke = { P16(4, TH - 1) }, .want = PKT_TCP_SHORT },
	/* 69 */ { 6, .poke = { P8(6, NH_UDP) }, .want = PKT_NOT_TCP },
	/* 70 */ { 6, OPTS(O_LINUX_SYN), .paylen = 100, .trim = 30,
		   OK(V6, TH + 20, 100, 70), .has = LINUX_HAS, .mss = 1460, .ws = 7 },
	/* 71 */ { 6, .paylen = 5, .trim = -8, OK(V6, TH, 5, 5) },
	/* 72 */ { 6, EXT(NH_HOP, OPTHDR(NH_DST), OPTHDR(NH_TCP)), OPTS(O_LINUX_SYN),
		   OK(V6 + 16, TH + 20, 0, 0), .has = LINUX_HAS, .mss = 1460, .ws = 7 },
	/* Routing header, RFC 8200 4.4 (segments left 0). */
	/* 73 */ { 6, EXT(NH_RT, NH_TCP, 0, 4, 0, 0, 0, 0, 0), OK(V6 + 8, TH, 0, 0) },
	/* 74: AH, RFC 4302 2.2: (4 + 2) * 4 = 24 bytes. */
	/* 74 */ { 6, EXT(NH_AH, NH_TCP, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1,
			  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), OK(V6 + 24, TH, 0, 0) },
	/* Atomic fragment, RFC 6946. */
	/* 75 */ { 6, EXT(NH_FRAG, NH_TCP, 0, 0x00, 0x00, 0, 0, 0, 1), .paylen = 3,
		   OK(V6 + 8, TH, 3, 3) },
	/* 76 */ { 6, EXT(NH_FRAG, NH_TCP, 0, 0x00, 0x01, 0, 0, 0, 1), .want = PKT_FRAGMENT },
	/* 77 */ { 6, EXT(NH_FRAG, NH_TCP, 0, 0x00, 0x08, 0, 0, 0, 1), .want = PKT_FRAGMENT },
	/* 78 */ { 6, EXT(NH_HOP, OPTHDR(NH_FRAG), NH_TCP, 0, 0xff, 0xf9, 0, 0, 0, 1),
		   .want = PKT_FRAGMENT },
	/* 79 */ { 6, EXT(NH_ESP, 0, 0, 0, 1, 0, 0, 0, 1), .want = PKT_NOT_TCP },
	/* 80 */ { 6, EXT(NH_NONE, 0, 0, 0, 0, 0, 0, 0, 0), .want = PKT_NOT_TCP },
	/* 81 */ { 6, EXT(NH_DST, OPTHDR(NH_ESP)), .want = PKT_NOT_TCP },
	/* 82 */ { 6, EXT(NH_DST, OPTHDR(NH_UDP)), .want = PKT_NOT_TCP },
	/* 83 */ { 6, EXT(NH_DST, OPTHDR(NH_DST), OPTHDR(NH_DST), OPTHDR(NH_DST), OPTHDR(NH_DST),
			  OPTHDR(NH_DST), OPTHDR(NH_DST), OPTHDR(NH_DST), OPTHDR(NH_TCP)),
		   OK(V6 + 64, TH, 0, 0) },
	/* 84 */ { 6, EXT(NH_DST, OPTHDR(NH_DST), OPTHDR(NH_DST), OPTHDR(NH_DST), OPTHDR(NH_DST),
			  OPTHDR(NH_DST), OPTHDR(NH_DST), OPTHDR(NH_DST), OPTHDR(NH_DST),
			  OPTHDR(NH_TCP)), .want = PKT_BAD_EXTHDR },
	/* Hop-by-hop after another header, RFC 8200 4.1. */
	/* 85 */ { 6, EXT(NH_DST, OPTHDR(NH_HOP), OPTHDR(NH_TCP)), .want = PKT_BAD_EXTHDR },
	/* A hdr ext len of 10 claims 88 bytes; the datagram holds 8 + 20. */
	/* 86 */ { 6, EXT(NH_DST, NH_TCP, 10, 1, 4, 0, 0, 0, 0), .want = PKT_BAD_EXTHDR },
	/* Payload length ends one byte into the header. */
	/* 87 */ { 6, EXT(NH_HOP, OPTHDR(NH_TCP)), .poke = { P16(4, 1) }, .want = PKT_BAD_EXTHDR },
	/* 88 */ { 6, EXT(NH_HOP, OPTHDR(NH_DST), OPTHDR(NH_TCP)), CAP(V6 + 12),
		   .want = PKT_TRUNCATED },
	/* 89 */ { 6, EXT(NH_HOP, OPTHDR(NH_DST), OPTHDR(NH_TCP)), CAP(V6 + 1),
		   .want = PKT_TRUNCATED },
	/* 90 */ { 6, EXT(NH_HOP, OPTHDR(NH_DST), OPTHDR(NH_TCP)), CAP(V6 + 16),
		   .want = PKT_TRUNCATED },
	/* 91 */ { 6, EXT(NH_DST, OPTHDR(NH_TCP)), .poke = { P16(4, 8 + TH - 1) },
		   .want = PKT_TCP_SHORT },
	/* 92 */ { 6, EXT(NH_DST, OPTHDR(NH_TCP)), .poke = { P8(V6 + 8 + 12, 0x60) },
		   .want = PKT_BAD_DOFF },
	/* 93 */ { 6, EXT(NH_HOP, OPTHDR(NH_TCP)), .flags = TCP_ACK,
		   OPTS(1, 1, O_TS, 1, 1, 5, 26, SACKB(1), SACKB(2), SACKB(3)), .paylen = 1000,
		   .trim = 999, OK(V6 + 8, TH + 40, 1000, 1), .has = X_TS, .nsack = 3 },
	/* 94 */ { 6, OPTS(O_MSS, 5, 3, 0, 0), OK(V6, TH + 8, 0, 0), .has = X_MSS, .mss = 1460 },

	/* More of tcp_parse_options: the last well-formed copy wins. */
	/* 95 */ { 4, OPTS(O_MSS, 2, 4, 0x02, 0x00), OK(V4, TH + 8, 0, 0), .has = X_MSS,
		   .mss = 512 },
	/* An MSS of 0 is ignored, not taken. */
	/* 96 */ { 4, OPTS(O_MSS, 2, 4, 0, 0), OK(V4, TH + 8, 0, 0), .has = X_MSS, .mss = 1460 },
	/* 97 */ { 4, OPTS(8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 1, O_TS), OK(V4, TH + 24, 0, 0),
		   .has = X_TS },
	/* 98 */ { 4, OPTS(8, 8, 0, 0, 0, 0, 0, 0, O_TS), OK(V4, TH + 20, 0, 0), .has = X_TS },
	/* What came before a broken length stands; nothing after it is read. */
	/* 99 */ { 4, OPTS(O_TS, 1, 1, 34, 0), OK(V4, TH + 16, 0, 0), .has = X_TS },
	/* 100 */ { 4, OPTS(34, 0, O_TS, 1, 1), OK(V4, TH + 16, 0, 0) },
	/* 101 */ { 4, OPTS(3, 3, 2, O_WS), OK(V4, TH + 8, 0, 0), .has = X_WS, .ws = 7 },
	/* 102 */ { 4, .flags = TCP_ACK, OPTS(5, 10, SACKB(9), 5, 10, SACKB(1)),
		    OK(V4, TH + 20, 0, 0), .nsack = 1 },
	/* 103 */ { 6, OPTS(2, 5, 5, 0xb4, 0, O_TS, 1, 1, 1), OK(V6, TH + 20, 0, 0), .has = X_TS },
	/*
	 * 104-114: what the kernel's IPv6 input discards after the input hook
	 * (destination options it refuses, a routing header with segments
	 * left) is parsed as usual and flagged.
	 */
	/* 104 */ { 6, EXT(NH_DST, NH_TCP, 0, 0x1e, 2, 0, 0, 1, 0), OK(V6 + 8, TH, 0, 0) },
	/* 105 */ { 6, EXT(NH_DST, NH_TCP, 0, 0x5e, 2, 0, 0, 1, 0), OK(V6 + 8, TH, 0, 0),
		    .discarded = true },
	/* 106 */ { 6, EXT(NH_DST, NH_TCP, 0, 0x9e, 2, 0, 0, 1, 0), OK(V6 + 8, TH, 0, 0),
		    .discarded = true },
	/* 107 */ { 6, EXT(NH_DST, NH_TCP, 0, 0xde, 2, 0, 0, 1, 0), OK(V6 + 8, TH, 0, 0),
		    .discarded = true },
	/* 108 */ { 6, EXT(NH_DST, NH_TCP, 0, 1, 4, 0, 0, 1, 0), OK(V6 + 8, TH, 0, 0),
		    .discarded = true },			/* PadN with a non-zero byte */
	/* 109 */ { 6, EXT(NH_DST, NH_TCP, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
		    OK(V6 + 16, TH, 0, 0), .discarded = true },	/* 14 Pad1: more than 7 in a row */
	/* 110 */ { 6, EXT(NH_DST, NH_TCP, 0, 0x1e, 5, 0, 0, 0, 0), OK(V6 + 8, TH, 0, 0),
		    .discarded = true },			/* an option past the header */
	/* 111 */ { 6, EXT(NH_DST, NH_TCP, 0, 0xc9, 2, 0, 0, 1, 0), OK(V6 + 8, TH, 0, 0),
		    .discarded = true },			/* a home address option */
	/* 112 */ { 6, EXT(NH_DST, NH_TCP, 2, 0x1e, 0, 0x1e, 0, 0x1e, 0, 0x1e, 0, 0x1e, 0,
			   0x1e, 0, 0x1e, 0, 0x1e, 0, 0x1e, 0, 1, 2, 0, 0), OK(V6 + 24, TH, 0, 0),
		    .discarded = true },			/* nine options, one past the limit */
	/* 113 */ { 6, EXT(NH_RT, NH_TCP, 0, 0, 1, 0, 0, 0, 0), OK(V6 + 8, TH, 0, 0),
		    .discarded = true },			/* segments left */
	/* 114 */ { 6, EXT(NH_RT, NH_TCP, 0, 4, 0, 0, 0, 0, 0), OK(V6 + 8, TH, 0, 0) },
};

static size_t build(const struct row *r, uint8_t *buf, size_t *ret_caplen)
{
	size_t len;
	uint8_t flags = r->flags ? r->flags : TCP_SYN;

	/* The largest shape: IPv6 + extension headers + 60 + payload + padding. */
	if (V6 + r->extlen + r->ipoptlen + 60 + r->paylen + 16 > BUF_MAX) {
		fprintf(stderr, "row too large for the test buffer\n");
		abort();
	}
	memset(buf, 0, BUF_MAX);
	if (r->ipv == 4)
		len = build_v4(buf, r->ipopt, r->ipoptlen, flags, r->opts, r->optlen, r->paylen);
	else
		len = build_v6(buf, r->nh, r->ext, r->extlen, flags, r->opts, r->optlen,
			       r->paylen);
	for (size_t i = 0; i < sizeof(r->poke) / sizeof(r->poke[0]); i++) {
		if (r->poke[i].width == 1)
			buf[r->poke[i].off] = (uint8_t)r->poke[i].val;
		else if (r->poke[i].width == 2)
			put16(buf + r->poke[i].off, r->poke[i].val);
	}
	if (r->fixcap)
		*ret_caplen = r->cap;
	else
		*ret_caplen = (size_t)((long)len - r->trim);
	return len;
}

static void check_view(size_t n, const struct row *r, const uint8_t *buf, size_t caplen,
		       const struct pkt_view *v)
{
	bool v4 = r->ipv == 4;
	size_t ip_len = v4 ? (size_t)(buf[2] << 8 | buf[3]) : V6 + (size_t)(buf[4] << 8 | buf[5]);

	CHECK_EQ_U(v->family, v4 ? AF_INET : AF_INET6, "row %zu family", n);
	CHECK_EQ_U(v->ip_len, ip_len, "row %zu ip_len", n);
	CHECK_EQ_U(v->addr_off, v4 ? 12 : 8, "row %zu addr_off", n);
	CHECK_EQ_U(v->addr_len, v4 ? 4 : 16, "row %zu addr_len", n);
	CHECK(memcmp(pkt_src(buf, v), v4 ? v4_src : v6_src, v->addr_len) == 0, "row %zu src", n);
	CHECK(memcmp(pkt_dst(buf, v), v4 ? v4_dst : v6_dst, v->addr_len) == 0, "row %zu dst", n);
	CHECK_EQ_U(v->l4_off, r->l4_off, "row %zu l4_off", n);
	CHECK_EQ_U(v->tcp_hlen, r->hlen, "row %zu tcp_hlen", n);
	CHECK_EQ_U(v->v6_discarded, r->discarded, "row %zu v6_discarded", n);
	CHECK_EQ_U(v->payload_off, r->l4_off + r->hlen, "row %zu payload_off", n);
	CHECK_EQ_U(v->payload_len, r->payload_len, "row %zu payload_len", n);
	CHECK_EQ_U(v->payload_caplen, r->payload_caplen, "row %zu payload_caplen", n);
	CHECK(v->payload_off + v->payload_caplen <= caplen, "row %zu payload inside capture", n);
	CHECK_EQ_U(v->sport, SPORT, "row %zu sport", n);
	CHECK_EQ_U(v->dport, DPORT, "row %zu dport", n);
	CHECK_EQ_U(v->seq, SEQ, "row %zu seq", n);
	CHECK_EQ_U(v->ack, ACK, "row %zu ack", n);
	CHECK_EQ_U(v->flags, r->flags ? r->flags : TCP_SYN, "row %zu flags", n);
	CHECK_EQ_U(v->window, WINDOW, "row %zu window", n);
	CHECK_EQ_U(v->urg_ptr, URGENT, "row %zu urgent pointer", n);

	CHECK_EQ_U(v->has_mss, !!(r->has & X_MSS), "row %zu has_mss", n);
	CHECK_EQ_U(v->mss, r->mss, "row %zu mss", n);
	CHECK_EQ_U(v->has_wscale, !!(r->has & X_WS), "row %zu has_wscale", n);
	CHECK_EQ_U(v->wscale, r->ws, "row %zu wscale", n);
	CHECK_EQ_U(v->sack_perm, !!(r->has & X_SACKP), "row %zu sack_perm", n);
	CHECK_EQ_U(v->has_ts, !!(r->has & X_TS), "row %zu has_ts", n);
	if (r->has & X_TS) {
		/* ts_off must point at the TSval bytes themselves. */
		CHECK_EQ_U(v->tsval, TSVAL, "row %zu tsval", n);
		CHECK_EQ_U(v->tsecr, TSECR, "row %zu tsecr", n);
		CHECK(v->ts_off + 8 <= v->payload_off, "row %zu ts inside header", n);
		CHECK_EQ_U(get32(buf + v->ts_off), TSVAL, "row %zu TSval at ts_off", n);
		CHECK_EQ_U(get32(buf + v->ts_off + 4), TSECR, "row %zu TSecr at ts_off+4", n);
	}
	CHECK_EQ_U(v->nsack, r->nsack, "row %zu nsack", n);
	if (r->nsack) {
		CHECK(v->sack_off + 8u * v->nsack <= v->payload_off, "row %zu sack inside header",
		      n);
		for (unsigned i = 0; i < v->nsack; i++) {
			uint32_t left = 0x10000000u | (i + 1) << 8;

			const uint8_t *blk = buf + v->sack_off + 8 * i;

			CHECK_EQ_U(get32(blk), left, "row %zu sack %u left", n, i);
			CHECK_EQ_U(get32(blk + 4), left | 0x80, "row %zu sack %u right", n, i);
		}
	}
}

/*
 * Every prefix of a good packet: OK exactly when the headers are captured,
 * with payload_caplen following the cut.  Each prefix is parsed from a heap
 * copy of exactly its size, so a sanitizer build catches any read past it.
 */
static void check_prefixes(size_t n, const uint8_t *buf, size_t caplen, const struct pkt_view *full)
{
	size_t bad = 0;

	for (size_t cap = 0; cap <= caplen; cap++) {
		struct pkt_view v;
		uint8_t *copy = malloc(cap ? cap : 1);
		enum pkt_drop d;
		size_t end = cap < full->ip_len ? cap : full->ip_len;

		if (copy == NULL) {
			bad++;
			continue;
		}
		memcpy(copy, buf, cap);
		d = pkt_parse(copy, cap, &v);
		free(copy);
		if (cap >= full->payload_off) {
			if (d != PKT_OK || v.payload_caplen != end - full->payload_off ||
			    v.l4_off != full->l4_off || v.payload_len != full->payload_len)
				bad++;
		} else if (d != PKT_SHORT && d != PKT_BAD_IHL && d != PKT_TRUNCATED) {
			/* A cut capture is never mistaken for a malformed packet. */
			bad++;
		}
	}
	CHECK_EQ_U(bad, 0, "row %zu: prefixes with a wrong verdict", n);
}

static void test_rows(void)
{
	static uint8_t buf[BUF_MAX];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct pkt_view v, sentinel;
		size_t caplen;
		enum pkt_drop d;

		build(r, buf, &caplen);
		memset(&v, 0xa5, sizeof(v));
		memcpy(&sentinel, &v, sizeof(v));
		d = pkt_parse(buf, caplen, &v);
		CHECK(d == r->want, "row %zu: got %s, want %s", i + 1, pkt_drop_name(d),
		      pkt_drop_name(r->want));
		if (d != PKT_OK) {
			CHECK(memcmp(&v, &sentinel, sizeof(v)) == 0,
			      "row %zu: view written on failure", i + 1);
			continue;
		}
		if (r->want != PKT_OK)
			continue;
		check_view(i + 1, r, buf, caplen, &v);
		check_prefixes(i + 1, buf, caplen, &v);
	}
}

/* Every reason appears in some row, so every counter is reachable. */
static void test_coverage(void)
{
	bool seen[PKT_DROP_MAX] = { false };

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		seen[rows[i].want] = true;
	for (int d = 0; d < PKT_DROP_MAX; d++)
		CHECK(seen[d], "no row expects %s", pkt_drop_name((enum pkt_drop)d));
}

static void test_names(void)
{
	for (int a = 0; a < PKT_DROP_MAX; a++) {
		const char *s = pkt_drop_name((enum pkt_drop)a);
		bool snake = s[0] != '\0';

		for (const char *c = s; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
				snake = false;
		CHECK(snake && strcmp(s, "unknown") != 0, "name of %d is \"%s\"", a, s);
		for (int b = 0; b < a; b++)
			CHECK(strcmp(s, pkt_drop_name((enum pkt_drop)b)) != 0,
			      "names of %d and %d collide", a, b);
	}
	CHECK(strcmp(pkt_drop_name(PKT_SHORT), "short") == 0, "PKT_SHORT is \"short\"");
	CHECK(strcmp(pkt_drop_name(PKT_BAD_IHL), "bad_ihl") == 0, "PKT_BAD_IHL is \"bad_ihl\"");
	CHECK(strcmp(pkt_drop_name(PKT_DROP_MAX), "unknown") == 0, "out of range");
	CHECK(strcmp(pkt_drop_name((enum pkt_drop)-1), "unknown") == 0, "negative");
}

int main(void)
{
	test_rows();
	test_coverage();
	test_names();
	return unit_done("pkt");
}
