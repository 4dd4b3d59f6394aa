/*
 * tablelife.h - the daemon's nftables table at the ends of its life: what
 * must hold before it is installed (nothing listens on rules.refuse_port)
 * and what stays when the daemon stops (on_stop).
 *
 *   on_stop "hide": tablelife_hide() swaps in the hiding table
 *     (nftrules_install_hiding): the protected ports keep answering every
 *     SYN like a closed port, through the kernel alone, until the next
 *     start replaces the table in one step.  Called before the queues are
 *     drained and closed.
 *   on_stop "open": tablelife_remove() deletes the table, unless translated
 *     client flows are still open, which need conntrack: then a keeper
 *     table stays (nftrules_install_keeper).
 * Both log what they did, and what failed.
 */
#ifndef KNOCKGW_TABLELIFE_H
#define KNOCKGW_TABLELIFE_H

#include "conf.h"
#include "nftrules.h"

/*
 * Nothing may listen on rules.refuse_port while the table sends refused
 * SYNs there (listen.h): 0, or -EADDRINUSE (logged).  A socket table that
 * cannot be read is logged and not held against the configuration.
 */
int tablelife_refuse_port_ok(const struct conf *c);

void tablelife_hide(const struct conf *c, enum nft_queue_kind kind);
void tablelife_remove(const struct conf *c, enum nft_queue_kind kind);

#endif
