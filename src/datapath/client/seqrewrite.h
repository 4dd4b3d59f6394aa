/*
 * seqrewrite.h - the client role's packet rewriting: the knock written into
 * an outgoing SYN (seqrewrite_syn), then sequence translation for the rest
 * of the flow (seqrewrite_apply).
 *
 * A knocked flow's SYN leaves with the knock ISN instead of the kernel's, so
 * every later packet is shifted by delta = knock_isn - kernel_isn: outgoing
 * seq += delta, incoming ack -= delta and every incoming SACK block edge
 * (D-SACK included, RFC 2883) -= delta, all modulo 2^32.  The TCP checksum is
 * updated incrementally (RFC 1624) unless the caller says it is not yet
 * computed (a GSO/partial-checksum packet), in which case the caller must
 * compute it in full (csum_tcp_full, common/csum.h).  Pure: in-place on caller
 * memory, no I/O.
 */
#ifndef KNOCKGW_SEQREWRITE_H
#define KNOCKGW_SEQREWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/icmperr.h"
#include "common/pkt.h"

enum seq_dir {
	SEQ_OUT,	/* this host -> server: seq += delta */
	SEQ_IN,		/* server -> this host: ack, SACK -= delta */
};

/*
 * Rewrites buf (described by v, which stays valid: only numbers change) for
 * direction dir.  fix_csum false leaves the checksum field alone.
 */
void seqrewrite_apply(uint8_t *buf, struct pkt_view *v, enum seq_dir dir, uint32_t delta,
		      bool fix_csum);

/*
 * A SYN leaving this host gets the knock: its sequence number becomes isn
 * and, when it carries timestamps, its TSval becomes tsval (what the ISN was
 * computed for: a retransmission keeps the first SYN's).  Writing the same
 * value changes nothing.  The checksum is updated incrementally, also when
 * the timestamp option lies at an odd offset (one NOP before it is legal).
 * v stays valid; its seq and tsval follow.
 */
void seqrewrite_syn(uint8_t *buf, struct pkt_view *v, uint32_t isn, uint32_t tsval);

/*
 * An ICMP/ICMPv6 error about a translated flow (icmperr.h) quotes a segment
 * that left with the shifted sequence number seq; the TCP that sent it
 * knows it as seq - delta.  Writes that into the quote and patches, each
 * incrementally, the quoted TCP checksum (when quoted: the segment then
 * reads as it was sent) and the ICMP checksum (ICMPv6's pseudo-header
 * does not change: no address does).  A checksum that was wrong stays
 * wrong.  No IP header changes, so neither IPv4 header checksum does.
 * v stays valid; its seq follows.
 */
void seqrewrite_icmp(uint8_t *buf, struct icmperr_view *v, uint32_t delta);

#endif
