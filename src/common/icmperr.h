/*
 * icmperr.h - read-only view of an ICMP or ICMPv6 error that quotes a TCP
 * segment: the outer IP header, the ICMP header, and the quoted IP and TCP
 * headers of the segment the error is about (RFC 792, RFC 1812 4.3.2.3,
 * RFC 4443 2.4(c) and 3).
 *
 * Contract, as pkt.h's: icmperr_parse() looks at (buf, caplen) and nothing
 * else, no I/O, no allocation, no logging.  It either fills *ret_view and
 * returns ICMPERR_OK, or returns the named reason and leaves *ret_view
 * untouched.  Every offset in the view, and every byte the view says was
 * quoted, lies inside caplen and inside the datagram the outer header
 * declares.  The quote is usually cut short (an IPv4 router need quote only
 * the IP header and 8 bytes of TCP; Linux quotes up to 576 bytes in all,
 * 1280 for ICMPv6): the view needs the quoted IP header and the first 8
 * bytes of TCP (ports and sequence number), and says how many TCP bytes
 * there are, so a caller knows whether the TCP checksum was quoted.
 *
 * Only errors conntrack relates to a flow are read: IPv4 destination
 * unreachable (fragmentation needed among them), source quench, redirect,
 * time exceeded and parameter problem; ICMPv6 types 1-4 (packet too big
 * among them).  The quoted packet is of the outer one's family.
 */
#ifndef KNOCKGW_ICMPERR_H
#define KNOCKGW_ICMPERR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum icmperr_drop {
	ICMPERR_OK = 0,
	ICMPERR_SHORT,		/* outer IP or ICMP header cut short or malformed */
	ICMPERR_NOT_ICMP,	/* not ICMP/ICMPv6, or a fragment of it */
	ICMPERR_NOT_ERROR,	/* an ICMP type that quotes no packet */
	ICMPERR_QUOTE_SHORT,	/* quoted IP header or first 8 TCP bytes missing */
	ICMPERR_QUOTE_NOT_TCP,	/* the quote is no TCP segment's first fragment */
	ICMPERR_DROP_MAX
};

/* Where a quoted TCP header keeps its checksum (RFC 9293 3.1). */
enum { ICMPERR_TCP_MIN = 8, ICMPERR_TCP_CSUM_OFF = 16 };

struct icmperr_view {
	int family;		/* AF_INET or AF_INET6, outer and quoted alike */
	size_t icmp_off;	/* the ICMP header */
	size_t icmp_len;	/* ICMP header and data, as the outer header declares */
	size_t icmp_caplen;	/* how much of it was captured */
	uint8_t type, code;
	size_t q_addr_off;	/* the quoted source address; its destination follows */
	size_t addr_len;	/* 4 or 16 */
	size_t q_tcp_off;	/* the quoted TCP header */
	size_t q_tcp_len;	/* TCP bytes quoted (and captured), at least 8 */
	uint16_t sport, dport;	/* the quoted segment's, host order */
	uint32_t seq;
};

enum icmperr_drop icmperr_parse(const uint8_t *buf, size_t caplen, struct icmperr_view *ret_view);
const char *icmperr_drop_name(enum icmperr_drop reason);

/* The quote holds the TCP checksum (and so must have it patched). */
static inline bool icmperr_has_tcp_csum(const struct icmperr_view *v)
{
	return v->q_tcp_len >= ICMPERR_TCP_CSUM_OFF + 2;
}

static inline const uint8_t *icmperr_src(const uint8_t *buf, const struct icmperr_view *v)
{
	return buf + v->q_addr_off;
}

static inline const uint8_t *icmperr_dst(const uint8_t *buf, const struct icmperr_view *v)
{
	return buf + v->q_addr_off + v->addr_len;
}

#endif
