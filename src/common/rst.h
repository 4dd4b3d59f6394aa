/*
 * rst.h - the answer a closed port gives, built to be the kernel's own.
 *
 * For a segment to a port with no socket, Linux (tcp_v4_send_reset /
 * tcp_v6_send_reset with no socket) answers, unless the segment is an RST:
 *   TCP:  no options, window 0, urgent 0; if the segment has ACK:
 *         seq = its ack, flags RST; else seq 0, ack = its seq + SYN + FIN +
 *         payload length, flags RST|ACK.
 *   IPv4: TOS = the segment's TOS without the ECN bits, ID 0, DF, TTL =
 *         net.ipv4.ip_default_ttl; the segment's IP options echoed as
 *         ip_send_unicast_reply echoes them (RFC 1122 3.2.1.8, see rst.c):
 *         record route and timestamp, with this host's address (and time)
 *         added where there is room, nothing else.
 *   IPv6: no extension headers (tcp_v6_send_response echoes none),
 *         traffic class likewise, hop limit = the interface's hop_limit,
 *         flow label: the segment's if net.ipv6.flowlabel_reflect has bit 2;
 *         else, when auto_flowlabels is 1 or 3, a keyed per-connection hash
 *         (the kernel's key is secret; ours is random and equally opaque)
 *         with bit 19 set if flowlabel_state_ranges; else 0.
 * nftables' `reject with tcp reset` differs (TOS 0, flow label 0), which is
 * why knockgw builds the answer itself.  A segment whose TCP checksum is
 * wrong gets no answer, as in the kernel: its TCP checks the sum unless it
 * was checked already (csum_unverified); we check it when we hold the
 * whole segment, and otherwise stay silent, since a segment that reaches
 * the queue unverified has failed conntrack's check
 * (net.netfilter.nf_conntrack_checksum, on by default).  Pure: no I/O, no
 * clock.
 */
#ifndef KNOCKGW_RST_H
#define KNOCKGW_RST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pkt.h"

enum {
	RST_IPOPT_MAX = 40,		/* RFC 791: IHL 15 */
	RST_MAX_LEN = 60 + RST_IPOPT_MAX, /* IPv4 header with options + TCP header */
};

struct rst_params {
	uint8_t ttl;			/* IPv4 TTL / IPv6 hop limit */
	bool flowlabel_reflect;		/* net.ipv6.flowlabel_reflect & 2 */
	bool flowlabel_auto;		/* auto_flowlabels is 1 or 3 */
	bool flowlabel_state_ranges;
	uint8_t flowlabel_key[16];	/* crypto_shorthash key for the label hash */
	bool csum_unverified;		/* nobody checked the segment's sum yet
					   (NFQA_SKB_CSUM_NOTVERIFIED): the
					   kernel's TCP would; else it was checked
					   (NIC, conntrack) and will not be again */
	bool csum_unfinished;		/* the segment's checksum is not final yet
					   (local, offloaded): do not judge it */
	uint32_t ip_ts_ms;		/* now, in milliseconds since midnight UTC:
					   for IPv4 timestamp options (RFC 791) */
};

/*
 * Writes the closed-port answer to pkt (described by v) into out and returns
 * its length, or 0 when a closed port would stay silent (an RST, a bad
 * checksum, IP options the kernel refuses to echo).
 */
size_t rst_build(const uint8_t *pkt, const struct pkt_view *v, const struct rst_params *rp,
		 uint8_t out[static RST_MAX_LEN]);

#endif
