/*
 * clienticmp.h - ICMP and ICMPv6 errors about the client role's translated
 * flows, translated back before the TCP that sent the quoted segment reads
 * them.
 *
 * A knocked flow's segments leave shifted (by conntrack's sequence
 * adjustment, or by the user path), and an error a router or the server
 * sends about one (fragmentation needed / packet too big for path MTU
 * discovery, an unreachable for a refused SYN) quotes the segment as it
 * left.  Conntrack relates the error to the flow but adjusts nothing
 * inside it, and the sender's TCP (this host's, or a LAN host's behind the
 * gateway) drops an error whose quoted sequence number it never sent.  The
 * rules queue the errors conntrack relates to a flow of a knock entry, in
 * the reply direction: this host's at input (not over loopback: a local
 * reject quotes a segment before the shift), routed ones at forward (after
 * conntrack's NAT has put the LAN host's address and port back into the
 * quote).  client_icmp() reads the quoted tuple, asks for the flow's shift
 * (none: the error passes as it came) and writes the quoted sequence
 * number back with every checksum patched (seqrewrite_icmp).
 *
 * Every packet gets one verdict, always accept: an error that cannot be
 * read or rewritten goes on unchanged, as it would without knockgw.
 * Errors are rare; each costs one conntrack lookup.
 */
#ifndef KNOCKGW_CLIENTICMP_H
#define KNOCKGW_CLIENTICMP_H

#include "datapath/client/client.h"
#include "datapath/verdict.h"
#include "kernel/nfq.h"

/* An ICMP error the client's ICMP rules queued (its verdict goes into out). */
void client_icmp(struct client *c, struct verdicts *out, const struct nfqueue_packet *p);

#endif
