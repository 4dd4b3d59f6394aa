/*
 * pkt.h - read-only view of an IPv4/IPv6 + TCP packet.
 *
 * Contract: pkt_parse() looks at (buf, caplen) and nothing else: no I/O, no
 * allocation, no logging.  It either fills *ret_view and returns PKT_OK, or
 * returns the named reason the packet was rejected (each reason is a drop
 * counter) and leaves *ret_view untouched.  All offsets in the view are from
 * the start of buf and every byte they describe lies inside caplen, except the
 * payload: when the capture was cut short (NFQUEUE copy range), payload_len is
 * what the IP header declares and payload_caplen what was captured.
 * TCP options never reject a segment, as they never make the kernel's TCP
 * discard one: the view holds the options the kernel would act on (the last
 * well-formed copy of each; a malformed length ends the list), see pkt.c.
 */
#ifndef KNOCKGW_PKT_H
#define KNOCKGW_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pkt_drop {
	PKT_OK = 0,
	PKT_SHORT,		/* shorter than the smallest IP header */
	PKT_BAD_VERSION,	/* IP version neither 4 nor 6 */
	PKT_BAD_IHL,		/* IPv4 IHL < 5 or beyond the capture */
	PKT_BAD_TOTLEN,		/* IP length smaller than its headers */
	PKT_TRUNCATED,		/* headers extend beyond the captured bytes */
	PKT_FRAGMENT,		/* a fragment: no complete TCP header to trust */
	PKT_BAD_EXTHDR,		/* malformed or too many IPv6 extension headers */
	PKT_NOT_TCP,		/* not TCP (or ESP/no-next-header) */
	PKT_TCP_SHORT,		/* fewer than 20 bytes of TCP header */
	PKT_BAD_DOFF,		/* data offset < 5 or beyond the IP payload */
	PKT_DROP_MAX
};

enum {
	TCP_FIN = 0x01, TCP_SYN = 0x02, TCP_RST = 0x04, TCP_PSH = 0x08,
	TCP_ACK = 0x10, TCP_URG = 0x20, TCP_ECE = 0x40, TCP_CWR = 0x80,
};

enum { PKT_MAX_SACK = 4 };

/*
 * Where the fixed TCP header keeps the fields the daemon rewrites (RFC 9293
 * 3.1); a SACK block is a left and a right edge (RFC 2018 3).
 */
enum {
	TCP_SEQ_OFF = 4,
	TCP_ACK_OFF = 8,
	TCP_CSUM_OFF = 16,
	SACK_BLOCK_LEN = 8,
};

struct pkt_view {
	int family;		/* AF_INET or AF_INET6 */
	size_t ip_len;		/* IPv4 total length / 40 + IPv6 payload length */
	size_t addr_off;	/* source address; destination follows it */
	size_t addr_len;	/* 4 or 16 */
	size_t l4_off;		/* TCP header */
	size_t tcp_hlen;	/* doff * 4 */
	size_t payload_off;
	size_t payload_len;	/* as declared by the IP header */
	size_t payload_caplen;	/* how much of it was captured */

	uint16_t sport, dport;	/* host order, like every number below */
	uint32_t seq, ack;
	uint8_t flags;		/* TCP_* bits */
	uint16_t window;
	uint16_t urg_ptr;	/* the urgent pointer, whether or not URG is set */

	bool has_mss;
	uint16_t mss;
	bool has_wscale;
	uint8_t wscale;
	bool sack_perm;
	bool has_ts;
	size_t ts_off;		/* offset of TSval; TSecr follows */
	uint32_t tsval, tsecr;
	uint8_t nsack;		/* SACK blocks present */
	size_t sack_off;	/* offset of the first block (left edge) */

	/*
	 * IPv6: an extension header the kernel handles after the input hook
	 * (destination options, a routing header) makes it discard the
	 * packet, silently or with an ICMPv6 Parameter Problem, before TCP
	 * sees it (as Linux's ip6_parse_tlv and ipv6_rthdr_rcv do, with the
	 * default limit of 8 destination options).
	 */
	bool v6_discarded;
};

enum pkt_drop pkt_parse(const uint8_t *buf, size_t caplen, struct pkt_view *ret_view);
const char *pkt_drop_name(enum pkt_drop reason);

static inline const uint8_t *pkt_src(const uint8_t *buf, const struct pkt_view *v)
{
	return buf + v->addr_off;
}

static inline const uint8_t *pkt_dst(const uint8_t *buf, const struct pkt_view *v)
{
	return buf + v->addr_off + v->addr_len;
}

#endif
