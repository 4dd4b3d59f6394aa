/*
 * pkt.c - read-only view of an IPv4/IPv6 + TCP packet.
 *
 * Everything here reads through a cursor and checks the remaining length
 * before each access; multi-byte fields are copied out with memcpy, so no
 * unaligned pointer is ever dereferenced.  Three lengths are kept apart:
 *
 *   caplen   what NFQUEUE handed us: possibly cut short by the copy range,
 *            possibly longer than the datagram (ethernet padding);
 *   ip_end   where the IP header says the datagram ends;
 *   cap_end  min(caplen, ip_end): the bytes we may look at.
 *
 * Every header must lie inside cap_end; only the payload may run past it.
 * Bytes between ip_end and caplen are not part of the datagram and are never
 * read.
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "common/bytes.h"
#include "common/pkt.h"

enum {
	IPV4_HDR_MIN = 20,		/* RFC 791 3.1: IHL 5 */
	IPV4_TOTLEN_OFF = 2,
	IPV4_FRAG_OFF = 6,
	IPV4_PROTO_OFF = 9,
	IPV4_ADDR_OFF = 12,
	IPV4_ADDR_LEN = 4,
	IPV4_MF = 0x2000,		/* RFC 791 3.1: More Fragments */
	IPV4_OFFMASK = 0x1fff,		/* RFC 791 3.1: Fragment Offset */

	IPV6_HDR_LEN = 40,		/* RFC 8200 3 */
	IPV6_PLEN_OFF = 4,
	IPV6_NH_OFF = 6,
	IPV6_ADDR_OFF = 8,
	IPV6_ADDR_LEN = 16,
	IPV6_EXTHDR_MIN = 2,		/* next header + length */
	IPV6_RH_SEGLEFT_OFF = 3,	/* routing header: segments left */
	V6OPT_PAD1 = 0,
	V6OPT_PADN = 1,
	V6OPT_HAO = 201,		/* home address option (RFC 6275) */
	V6OPT_ACTION = 0xc0,		/* high bits: what to do with an unknown one */
	V6OPT_PAD_MAX = 7,
	V6OPT_DST_MAX = 8,		/* net.ipv6.max_dst_opts_number's default */
	IPV6_MAX_EXTHDRS = 8,		/* more than any honest sender stacks */
	IPV6_FRAG_LEN = 8,		/* RFC 8200 4.5 */
	IPV6_FRAG_OFFMASK = 0xfff8,
	IPV6_FRAG_M = 0x0001,

	TCP_HDR_MIN = 20,		/* RFC 9293 3.1: data offset 5 */
	TCP_DOFF_OFF = 12,
	TCP_FLAGS_OFF = 13,
	TCP_WIN_OFF = 14,
	TCP_URP_OFF = 18,
};

/* IP protocol and IPv6 next header numbers (IANA). */
enum {
	NH_HOPOPTS = 0,
	NH_TCP = 6,
	NH_ROUTING = 43,
	NH_FRAGMENT = 44,
	NH_ESP = 50,
	NH_AH = 51,
	NH_NONE = 59,
	NH_DSTOPTS = 60,
};

/* TCP options: RFC 9293 3.2, RFC 7323 (WS, TS), RFC 2018 (SACK). */
enum {
	TCPOPT_EOL = 0,
	TCPOPT_NOP = 1,
	TCPOPT_MSS = 2,
	TCPOPT_WS = 3,
	TCPOPT_SACK_PERM = 4,
	TCPOPT_SACK = 5,
	TCPOPT_TS = 8,

	TCPOLEN_MSS = 4,
	TCPOLEN_WS = 3,
	TCPOLEN_SACK_PERM = 2,
	TCPOLEN_TS = 10,
	TCPOLEN_HDR = 2,		/* kind + length */
	TCPOLEN_SACK_BLOCK = 8,
};

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * TCP options (RFC 9293 3.2): EOL ends the list, NOP is a single byte, every
 * other option carries a length covering kind and length bytes.  Options
 * never make a segment less than TCP: the kernel answers a closed port's SYN
 * whatever its options, and its listener (tcp_parse_options) reads them with
 * the leniency below, which we copy so that a protected port and the TCP
 * behind it agree on every segment:
 *   - a length < 2, or one past the header, ends the walk: what came before
 *     stands, nothing after it is read;
 *   - a known option with the wrong length for its kind is skipped;
 *   - a later copy of an option replaces an earlier one (an MSS of 0 is no
 *     MSS at all), so the TSval we verify or the SACK blocks we translate are
 *     the ones the endpoint acts on.
 */
static void parse_options(const uint8_t *buf, size_t off, size_t rem, struct pkt_view *v)
{
	const uint8_t *p = buf + off;

	while (rem > 0) {
		uint8_t kind = p[0], len;

		if (kind == TCPOPT_EOL)
			break;
		if (kind == TCPOPT_NOP) {
			p++;
			rem--;
			continue;
		}
		if (rem < TCPOLEN_HDR)
			break;
		len = p[1];
		if (len < TCPOLEN_HDR || len > rem)
			break;

		switch (kind) {
		case TCPOPT_MSS:
			if (len == TCPOLEN_MSS && get_be16(p + 2) != 0) {
				v->has_mss = true;
				v->mss = get_be16(p + 2);
			}
			break;
		case TCPOPT_WS:
			if (len == TCPOLEN_WS) {
				v->has_wscale = true;
				v->wscale = p[2];
			}
			break;
		case TCPOPT_SACK_PERM:
			if (len == TCPOLEN_SACK_PERM)
				v->sack_perm = true;
			break;
		case TCPOPT_TS:
			/* RFC 7323 3.2: kind 8, length 10, TSval, TSecr. */
			if (len == TCPOLEN_TS) {
				v->has_ts = true;
				v->ts_off = (size_t)(p - buf) + 2;
				v->tsval = get_be32(p + 2);
				v->tsecr = get_be32(p + 6);
			}
			break;
		case TCPOPT_SACK: {
			/* RFC 2018 3: length 2 + 8n; 40 option bytes fit at most 4. */
			size_t n = (size_t)(len - TCPOLEN_HDR) / TCPOLEN_SACK_BLOCK;

			if ((len - TCPOLEN_HDR) % TCPOLEN_SACK_BLOCK == 0 && n >= 1 &&
			    n <= PKT_MAX_SACK) {
				v->nsack = (uint8_t)n;
				v->sack_off = (size_t)(p - buf) + 2;
			}
			break;
		}
		default:
			/* RFC 9293 3.1 (MUST-68): skip what we do not know. */
			break;
		}
		p += len;
		rem -= len;
	}
}

/*
 * The TCP header at l4_off.  The caller guarantees l4_off <= cap_end <=
 * ip_end.  "Short" is judged against what the IP header declares, "truncated"
 * against what was captured, so a capture limit never looks like an attack.
 */
static enum pkt_drop parse_tcp(const uint8_t *buf, size_t l4_off, size_t ip_end, size_t cap_end,
			       struct pkt_view *v)
{
	const uint8_t *p = buf + l4_off;
	size_t avail = ip_end - l4_off, cap = cap_end - l4_off, hlen;

	if (avail < TCP_HDR_MIN)
		return PKT_TCP_SHORT;
	if (cap < TCP_HDR_MIN)
		return PKT_TRUNCATED;
	hlen = (size_t)(p[TCP_DOFF_OFF] >> 4) * 4;
	if (hlen < TCP_HDR_MIN || hlen > avail)
		return PKT_BAD_DOFF;
	if (hlen > cap)
		return PKT_TRUNCATED;

	v->l4_off = l4_off;
	v->tcp_hlen = hlen;
	v->payload_off = l4_off + hlen;
	v->payload_len = ip_end - v->payload_off;
	v->payload_caplen = cap_end - v->payload_off;
	v->sport = get_be16(p);
	v->dport = get_be16(p + 2);
	v->seq = get_be32(p + TCP_SEQ_OFF);
	v->ack = get_be32(p + TCP_ACK_OFF);
	v->flags = p[TCP_FLAGS_OFF];
	v->window = get_be16(p + TCP_WIN_OFF);
	v->urg_ptr = get_be16(p + TCP_URP_OFF);
	parse_options(buf, l4_off + TCP_HDR_MIN, hlen - TCP_HDR_MIN, v);
	return PKT_OK;
}

/* RFC 791 3.1.  The caller has checked caplen >= 20 and version 4. */
static enum pkt_drop parse_ipv4(const uint8_t *buf, size_t caplen, struct pkt_view *v)
{
	size_t ihl = (size_t)(buf[0] & 0x0f) * 4, tot_len;
	uint16_t frag;

	if (ihl < IPV4_HDR_MIN)
		return PKT_BAD_IHL;
	tot_len = get_be16(buf + IPV4_TOTLEN_OFF);
	if (tot_len < ihl)
		return PKT_BAD_TOTLEN;
	if (ihl > caplen)
		return PKT_BAD_IHL;
	/*
	 * Only a first fragment carries the TCP header, and even then the
	 * options or payload we would check may sit in a later one.  The
	 * kernel reassembles before the queue (nf_defrag), so a fragment here
	 * is something to refuse, not to piece together.
	 */
	frag = get_be16(buf + IPV4_FRAG_OFF);
	if (frag & (IPV4_MF | IPV4_OFFMASK))
		return PKT_FRAGMENT;
	if (buf[IPV4_PROTO_OFF] != NH_TCP)
		return PKT_NOT_TCP;

	v->family = AF_INET;
	v->ip_len = tot_len;
	v->addr_off = IPV4_ADDR_OFF;
	v->addr_len = IPV4_ADDR_LEN;
	return parse_tcp(buf, ihl, tot_len, min_size(caplen, tot_len), v);
}

/*
 * Would the kernel's destination-options handler refuse this header (p,
 * len: the whole header)?  As Linux reads the options: Pad1 and PadN pad,
 * at most 7 bytes in a row and PadN's bytes all zero; any other option is
 * one the kernel does not know in a destination header (the home address
 * option it knows is refused without an IPsec state), and its two high
 * bits say skip (00) or discard (01, and 10/11 with an ICMPv6 Parameter
 * Problem); more than 8 of them, or an option that runs past the header,
 * is refused as well.
 */
static bool dstopts_refused(const uint8_t *p, size_t len)
{
	size_t off = IPV6_EXTHDR_MIN, padlen = 0, count = 0;

	while (off < len) {
		size_t optlen;

		if (p[off] == V6OPT_PAD1) {
			if (++padlen > V6OPT_PAD_MAX)
				return true;
			off++;
			continue;
		}
		if (len - off < 2)
			return true;
		optlen = (size_t)p[off + 1] + 2;
		if (optlen > len - off)
			return true;
		if (p[off] == V6OPT_PADN) {
			padlen += optlen;
			if (padlen > V6OPT_PAD_MAX)
				return true;
			for (size_t i = 2; i < optlen; i++)
				if (p[off + i] != 0)
					return true;
		} else {
			if (++count > V6OPT_DST_MAX || (p[off] & V6OPT_ACTION) != 0 ||
			    p[off] == V6OPT_HAO)
				return true;
			padlen = 0;
		}
		off += optlen;
	}
	return false;
}

/*
 * RFC 8200 3 and 4.  Extension headers are walked with the same cursor up to
 * the TCP header.  A header that runs past the datagram is malformed
 * (PKT_BAD_EXTHDR); one inside the datagram but past the capture is merely
 * truncated.
 */
static enum pkt_drop parse_ipv6(const uint8_t *buf, size_t caplen, struct pkt_view *v)
{
	size_t plen, ip_end, cap_end, off = IPV6_HDR_LEN, n;
	uint8_t nh;

	if (caplen < IPV6_HDR_LEN)
		return PKT_SHORT;
	plen = get_be16(buf + IPV6_PLEN_OFF);
	/*
	 * Payload length 0 means a jumbogram (RFC 2675), whose real length
	 * hides in a hop-by-hop option; no TCP SYN needs one.
	 */
	if (plen == 0)
		return PKT_BAD_TOTLEN;
	ip_end = IPV6_HDR_LEN + plen;
	cap_end = min_size(caplen, ip_end);
	nh = buf[IPV6_NH_OFF];

	for (n = 0; nh != NH_TCP; n++) {
		const uint8_t *p = buf + off;
		size_t len;

		switch (nh) {
		case NH_HOPOPTS:
			/* RFC 8200 4.1: only directly after the IPv6 header. */
			if (n != 0)
				return PKT_BAD_EXTHDR;
			break;
		case NH_ROUTING:
		case NH_DSTOPTS:
		case NH_AH:
		case NH_FRAGMENT:
			break;
		default:
			/* ESP, no next header, or another upper layer. */
			return PKT_NOT_TCP;
		}
		if (n == IPV6_MAX_EXTHDRS)
			return PKT_BAD_EXTHDR;
		if (ip_end - off < IPV6_EXTHDR_MIN)
			return PKT_BAD_EXTHDR;
		if (cap_end - off < IPV6_EXTHDR_MIN)
			return PKT_TRUNCATED;

		if (nh == NH_FRAGMENT)
			len = IPV6_FRAG_LEN;
		else if (nh == NH_AH)
			len = ((size_t)p[1] + 2) * 4;	/* RFC 4302 2.2 */
		else
			len = ((size_t)p[1] + 1) * 8;	/* RFC 8200 4.3-4.6 */
		if (ip_end - off < len)
			return PKT_BAD_EXTHDR;
		if (cap_end - off < len)
			return PKT_TRUNCATED;

		/*
		 * The kernel handles these after the input hook: a routing
		 * header with segments left sends the packet elsewhere or
		 * answers it with an error, bad destination options discard it.
		 */
		if ((nh == NH_DSTOPTS && dstopts_refused(p, len)) ||
		    (nh == NH_ROUTING && p[IPV6_RH_SEGLEFT_OFF] != 0))
			v->v6_discarded = true;

		/*
		 * RFC 8200 4.5: a fragment header with offset 0 and M clear
		 * is an atomic fragment (RFC 6946) holding the whole datagram;
		 * anything else is a piece of one.
		 */
		if (nh == NH_FRAGMENT &&
		    (get_be16(p + 2) & (IPV6_FRAG_OFFMASK | IPV6_FRAG_M)) != 0)
			return PKT_FRAGMENT;

		nh = p[0];
		off += len;
	}

	v->family = AF_INET6;
	v->ip_len = ip_end;
	v->addr_off = IPV6_ADDR_OFF;
	v->addr_len = IPV6_ADDR_LEN;
	return parse_tcp(buf, off, ip_end, cap_end, v);
}

enum pkt_drop pkt_parse(const uint8_t *buf, size_t caplen, struct pkt_view *ret_view)
{
	struct pkt_view v;
	enum pkt_drop r;

	memset(&v, 0, sizeof(v));
	if (caplen < IPV4_HDR_MIN)
		return PKT_SHORT;
	switch (buf[0] >> 4) {
	case 4:
		r = parse_ipv4(buf, caplen, &v);
		break;
	case 6:
		r = parse_ipv6(buf, caplen, &v);
		break;
	default:
		return PKT_BAD_VERSION;
	}
	if (r == PKT_OK)
		*ret_view = v;
	return r;
}

const char *pkt_drop_name(enum pkt_drop reason)
{
	/* Counter names: stable, short, snake_case. */
	static const char *const names[PKT_DROP_MAX] = {
		[PKT_OK] = "ok",
		[PKT_SHORT] = "short",
		[PKT_BAD_VERSION] = "bad_version",
		[PKT_BAD_IHL] = "bad_ihl",
		[PKT_BAD_TOTLEN] = "bad_totlen",
		[PKT_TRUNCATED] = "truncated",
		[PKT_FRAGMENT] = "fragment",
		[PKT_BAD_EXTHDR] = "bad_exthdr",
		[PKT_NOT_TCP] = "not_tcp",
		[PKT_TCP_SHORT] = "tcp_short",
		[PKT_BAD_DOFF] = "bad_doff",
	};

	if ((unsigned)reason >= PKT_DROP_MAX || names[reason] == NULL)
		return "unknown";
	return names[reason];
}
