/*
 * rst.h - the answer a closed port gives, built to be the kernel's own.
 *
 * For a segment to a port with no socket, Linux (tcp_v4_send_reset /
 * tcp_v6_send_reset with no socket) answers, unless the segment is an RST:
 *   TCP:  no options, window 0, urgent 0; if the segment has ACK:
 *         seq = its ack, flags RST; else seq 0, ack = its seq + SYN + FIN +
 *         payload length, flags RST|ACK.
 *   IPv4: TOS = the segment's TOS without the ECN bits, ID 0, DF, TTL =
 *         net.ipv4.ip_default_ttl, no options.
 *   IPv6: traffic class likewise, hop limit = the interface's hop_limit,
 *         flow label: the segment's if net.ipv6.flowlabel_reflect has bit 2;
 *         else, when auto_flowlabels is 1 or 3, a keyed per-connection hash
 *         (the kernel's key is secret; ours is random and equally opaque)
 *         with bit 19 set if flowlabel_state_ranges; else 0.
 * nftables' `reject with tcp reset` differs (TOS 0, flow label 0), which is
 * why knockgw builds the answer itself.  A segment whose TCP checksum is
 * wrong gets no answer, as in the kernel.  Pure: no I/O.
 */
#ifndef KNOCKGW_RST_H
#define KNOCKGW_RST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkt.h"

enum { RST_MAX_LEN = 60 };	/* IPv6 header + TCP header */

struct rst_params {
	uint8_t ttl;			/* IPv4 TTL / IPv6 hop limit */
	bool flowlabel_reflect;		/* net.ipv6.flowlabel_reflect & 2 */
	bool flowlabel_auto;		/* auto_flowlabels is 1 or 3 */
	bool flowlabel_state_ranges;
	uint8_t flowlabel_key[16];	/* crypto_shorthash key for the label hash */
	bool csum_unfinished;		/* the segment's checksum is not final yet
					   (local, offloaded): do not judge it */
};

/*
 * Writes the closed-port answer to pkt (described by v) into out and returns
 * its length, or 0 when a closed port would stay silent (an RST, a bad
 * checksum).
 */
size_t rst_build(const uint8_t *pkt, const struct pkt_view *v, const struct rst_params *rp,
		 uint8_t out[static RST_MAX_LEN]);

#endif
