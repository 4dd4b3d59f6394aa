/*
 * gwnat.h - the source address a routed flow leaves this host with, for
 * the gateway client role (knock entries with `from`).
 *
 * The client role makes a knocked flow's conntrack entry itself, before
 * conntrack sees the SYN (ctnl.h), and the kernel sets up no NAT for an
 * entry that is already confirmed: a masquerade rule further on would
 * leave such a flow alone, and a LAN host's private address would go out
 * as it is.  So for a routed flow from a private source to a public
 * destination the entry carries the source NAT a masquerade rule gives:
 * this host's own source address toward the destination (the kernel's
 * source address selection, asked through a connected UDP socket that
 * sends nothing), the port kept unless it clashes.  The kernel applies
 * that binding only while a nat chain is registered in the namespace:
 * with `from`, the table has an empty one of its own (nftplan.h), for
 * routers with no nat table.
 */
#ifndef KNOCKGW_GWNAT_H
#define KNOCKGW_GWNAT_H

#include <stdint.h>

/*
 * Writes to ret (4 or 16 bytes, network order) the address this host sends
 * from toward dst.  0, or -errno (no route, for one).
 */
int gwnat_source(int family, const uint8_t *dst, uint8_t *ret);

#endif
