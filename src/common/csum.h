/*
 * csum.h - the Internet checksum (RFC 1071): incremental updates of a
 * stored checksum when words of a packet change (RFC 1624), and the TCP and
 * ICMP checksums computed in full over a captured packet.
 *
 * Contract: pure computation on caller memory; no I/O, no allocation.  The
 * incremental updates take the checksum and the words in the byte order in
 * which they lie in the packet; the full checksums return host order, like
 * the numbers in pkt_view, and are the value to store (the checksum field
 * itself is summed as zero).
 */
#ifndef KNOCKGW_CSUM_H
#define KNOCKGW_CSUM_H

#include <stdint.h>

#include "common/icmperr.h"
#include "common/pkt.h"

/* Incremental one's-complement update of a 16-bit checksum (RFC 1624 eq. 3). */
uint16_t csum_replace32(uint16_t check, uint32_t old_be, uint32_t new_be);

/* The same for one 16-bit word. */
uint16_t csum_replace16(uint16_t check, uint16_t old, uint16_t new);

/*
 * Full TCP checksum (pseudo-header included) over the captured packet:
 * meaningful only when payload_caplen == payload_len, which the caller
 * checks.
 */
uint16_t csum_tcp_full(const uint8_t *buf, const struct pkt_view *v);

/*
 * The ICMP checksum computed in full (the value to store), for a packet
 * the kernel left unfinished.  Only captured bytes are read: the result is
 * meaningful only when icmp_caplen == icmp_len, which the caller checks.
 */
uint16_t csum_icmp_full(const uint8_t *buf, const struct icmperr_view *v);

#endif
