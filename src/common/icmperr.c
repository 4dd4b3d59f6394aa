/*
 * icmperr.c - read-only view of an ICMP/ICMPv6 error quoting a TCP segment
 * (see icmperr.h).
 *
 * The same cursor discipline as pkt.c: every access is checked against an
 * end that is the smaller of the capture and what the enclosing header
 * declares.  Three ends nest here: the outer datagram (its IP length, cut
 * to the capture), the quote (what is left of it after the ICMP header),
 * and the quoted datagram (its own IP length, which may say more than was
 * quoted, or less: RFC 4884 pads a short quote before its extensions, and
 * those bytes are no TCP).
 */
#include <string.h>
#include <sys/socket.h>

#include "common/bytes.h"
#include "common/icmperr.h"

enum {
	IPV4_HDR_MIN = 20,		/* RFC 791 3.1 */
	IPV4_TOTLEN_OFF = 2,
	IPV4_FRAG_OFF = 6,
	IPV4_PROTO_OFF = 9,
	IPV4_ADDR_OFF = 12,
	IPV4_MF = 0x2000,
	IPV4_OFFMASK = 0x1fff,

	IPV6_HDR_LEN = 40,		/* RFC 8200 3 */
	IPV6_PLEN_OFF = 4,
	IPV6_NH_OFF = 6,
	IPV6_ADDR_OFF = 8,
	IPV6_EXTHDR_MIN = 2,
	IPV6_FRAG_LEN = 8,
	IPV6_FRAG_OFFMASK = 0xfff8,
	IPV6_MAX_EXTHDRS = 8,

	ICMP_HDR_LEN = 8,		/* type, code, checksum, 4 bytes the type defines */
	TCP_SEQ_OFF = 4,
};

/* IP protocol / IPv6 next header numbers (IANA). */
enum {
	NH_HOPOPTS = 0,
	NH_ICMP = 1,
	NH_TCP = 6,
	NH_ROUTING = 43,
	NH_FRAGMENT = 44,
	NH_ICMPV6 = 58,
	NH_DSTOPTS = 60,
};

/*
 * The ICMP types conntrack relates to the flow of the packet they quote
 * (its icmp_is_err and the ICMPv6 error range): RFC 792 destination
 * unreachable (3), source quench (4), redirect (5), time exceeded (11),
 * parameter problem (12); RFC 4443 3.1-3.4 (types 1-4).
 */
static bool is_error(int family, uint8_t type)
{
	if (family == AF_INET6)
		return type >= 1 && type <= 4;
	return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * RFC 8200 4: walks the extension headers from *off (next header *nh) up to
 * the first header that is none, inside [.., end).  A fragment header is
 * passed only when it starts its datagram (offset 0): what follows it is
 * the first fragment's, headers included; at a later fragment the walk
 * stops with *nh = 44, which is no upper layer.  false when a header runs
 * past end, or there are more headers than any honest sender stacks.
 */
static bool skip_v6_exthdrs(const uint8_t *buf, size_t end, size_t *off, uint8_t *nh)
{
	size_t o = *off;
	uint8_t n = *nh;

	for (int i = 0; n == NH_HOPOPTS || n == NH_ROUTING || n == NH_DSTOPTS || n == NH_FRAGMENT;
	     i++) {
		size_t len;

		if (i == IPV6_MAX_EXTHDRS || end - o < IPV6_EXTHDR_MIN)
			return false;
		if (n == NH_FRAGMENT) {
			if (end - o < IPV6_FRAG_LEN)
				return false;
			if ((get_be16(buf + o + 2) & IPV6_FRAG_OFFMASK) != 0)
				break;
			len = IPV6_FRAG_LEN;
		} else {
			len = ((size_t)buf[o + 1] + 1) * 8;	/* RFC 8200 4.3-4.6 */
		}
		if (end - o < len)
			return false;
		n = buf[o];
		o += len;
	}
	*off = o;
	*nh = n;
	return true;
}

/*
 * The quoted datagram at q (up to end).  Its own length bounds the TCP bytes
 * we take; a quote of a later fragment has no TCP header.
 */
static enum icmperr_drop parse_quote(const uint8_t *buf, size_t q, size_t end, struct icmperr_view *v)
{
	size_t rem = end - q, hlen, dgram, tcp;
	uint8_t nh;

	if (v->family == AF_INET) {
		if (rem < IPV4_HDR_MIN)
			return ICMPERR_QUOTE_SHORT;
		if (buf[q] >> 4 != 4)
			return ICMPERR_QUOTE_NOT_TCP;
		hlen = (size_t)(buf[q] & 0x0f) * 4;
		dgram = get_be16(buf + q + IPV4_TOTLEN_OFF);
		if (hlen < IPV4_HDR_MIN || dgram < hlen)
			return ICMPERR_QUOTE_NOT_TCP;
		if (hlen > rem)
			return ICMPERR_QUOTE_SHORT;
		if (buf[q + IPV4_PROTO_OFF] != NH_TCP ||
		    (get_be16(buf + q + IPV4_FRAG_OFF) & IPV4_OFFMASK) != 0)
			return ICMPERR_QUOTE_NOT_TCP;
		v->q_addr_off = q + IPV4_ADDR_OFF;
		v->addr_len = 4;
		tcp = q + hlen;
	} else {
		if (rem < IPV6_HDR_LEN)
			return ICMPERR_QUOTE_SHORT;
		if (buf[q] >> 4 != 6)
			return ICMPERR_QUOTE_NOT_TCP;
		dgram = IPV6_HDR_LEN + get_be16(buf + q + IPV6_PLEN_OFF);
		tcp = q + IPV6_HDR_LEN;
		nh = buf[q + IPV6_NH_OFF];
		/* Headers past the quote cannot be told from bad ones: short. */
		if (!skip_v6_exthdrs(buf, min_size(end, q + dgram), &tcp, &nh))
			return ICMPERR_QUOTE_SHORT;
		if (nh != NH_TCP)
			return ICMPERR_QUOTE_NOT_TCP;
		v->q_addr_off = q + IPV6_ADDR_OFF;
		v->addr_len = 16;
	}
	/* TCP bytes: what was quoted, but never past the quoted datagram. */
	end = min_size(end, q + dgram);
	if (tcp > end || end - tcp < ICMPERR_TCP_MIN)
		return ICMPERR_QUOTE_SHORT;
	v->q_tcp_off = tcp;
	v->q_tcp_len = end - tcp;
	v->sport = get_be16(buf + tcp);
	v->dport = get_be16(buf + tcp + 2);
	v->seq = get_be32(buf + tcp + TCP_SEQ_OFF);
	return ICMPERR_OK;
}

/* The outer IPv4 header (RFC 791 3.1); caplen >= 20 checked by the caller. */
static enum icmperr_drop parse_v4(const uint8_t *buf, size_t caplen, struct icmperr_view *v,
				  size_t *icmp, size_t *end)
{
	size_t ihl = (size_t)(buf[0] & 0x0f) * 4, tot_len = get_be16(buf + IPV4_TOTLEN_OFF);

	if (ihl < IPV4_HDR_MIN || tot_len < ihl || ihl > caplen)
		return ICMPERR_SHORT;
	if (get_be16(buf + IPV4_FRAG_OFF) & (IPV4_MF | IPV4_OFFMASK))
		return ICMPERR_NOT_ICMP;
	if (buf[IPV4_PROTO_OFF] != NH_ICMP)
		return ICMPERR_NOT_ICMP;
	v->family = AF_INET;
	v->icmp_len = tot_len - ihl;
	*icmp = ihl;
	*end = min_size(caplen, tot_len);
	return ICMPERR_OK;
}

/* The outer IPv6 header and its extension headers (RFC 8200 3, 4). */
static enum icmperr_drop parse_v6(const uint8_t *buf, size_t caplen, struct icmperr_view *v,
				  size_t *icmp, size_t *end)
{
	size_t ip_end, off = IPV6_HDR_LEN;
	uint8_t nh;

	if (caplen < IPV6_HDR_LEN)
		return ICMPERR_SHORT;
	ip_end = IPV6_HDR_LEN + get_be16(buf + IPV6_PLEN_OFF);
	*end = min_size(caplen, ip_end);
	nh = buf[IPV6_NH_OFF];
	if (!skip_v6_exthdrs(buf, *end, &off, &nh))
		return ICMPERR_NOT_ICMP;
	if (nh != NH_ICMPV6)
		return ICMPERR_NOT_ICMP;
	v->family = AF_INET6;
	v->icmp_len = ip_end - off;
	*icmp = off;
	return ICMPERR_OK;
}

enum icmperr_drop icmperr_parse(const uint8_t *buf, size_t caplen, struct icmperr_view *ret_view)
{
	struct icmperr_view v;
	enum icmperr_drop r;
	size_t icmp = 0, end = 0;

	memset(&v, 0, sizeof(v));
	if (caplen < IPV4_HDR_MIN)
		return ICMPERR_SHORT;
	switch (buf[0] >> 4) {
	case 4:
		r = parse_v4(buf, caplen, &v, &icmp, &end);
		break;
	case 6:
		r = parse_v6(buf, caplen, &v, &icmp, &end);
		break;
	default:
		return ICMPERR_NOT_ICMP;
	}
	if (r != ICMPERR_OK)
		return r;
	if (end - icmp < ICMP_HDR_LEN)
		return ICMPERR_SHORT;
	v.icmp_off = icmp;
	v.icmp_caplen = end - icmp;
	v.type = buf[icmp];
	v.code = buf[icmp + 1];
	if (!is_error(v.family, v.type))
		return ICMPERR_NOT_ERROR;
	r = parse_quote(buf, icmp + ICMP_HDR_LEN, end, &v);
	if (r == ICMPERR_OK)
		*ret_view = v;
	return r;
}

const char *icmperr_drop_name(enum icmperr_drop reason)
{
	static const char *const names[ICMPERR_DROP_MAX] = {
		[ICMPERR_OK] = "ok",
		[ICMPERR_SHORT] = "short",
		[ICMPERR_NOT_ICMP] = "not_icmp",
		[ICMPERR_NOT_ERROR] = "not_error",
		[ICMPERR_QUOTE_SHORT] = "quote_short",
		[ICMPERR_QUOTE_NOT_TCP] = "quote_not_tcp",
	};

	if ((unsigned)reason >= ICMPERR_DROP_MAX || names[reason] == NULL)
		return "unknown";
	return names[reason];
}
