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
 *
 * And what stays across a reboot: tablelife_save() keeps the hiding state
 * (hidestate.h) up to date after each successful start and reload, so
 * that `knockgw hide` can put the hiding table back before a start that
 * then fails.
 */
#ifndef KNOCKGW_TABLELIFE_H
#define KNOCKGW_TABLELIFE_H

#include "config/conf.h"
#include "kernel/nft/nftrules.h"

/*
 * Nothing may listen on rules.refuse_port while the table sends refused
 * SYNs there (listen.h): 0, or -EADDRINUSE (logged).  A socket table that
 * cannot be read is logged and not held against the configuration.
 */
int tablelife_refuse_port_ok(const struct conf *c);

void tablelife_hide(const struct conf *c, enum nft_queue_kind kind);
void tablelife_remove(const struct conf *c, enum nft_queue_kind kind);

/*
 * After a successful start or reload with c: saves the hiding state in
 * state_dir, or removes it where nothing is to stay hidden (on_stop
 * "open", or rules.manage false: the table is not ours), so that a failed
 * start after a reboot hides what this configuration hides and nothing
 * else.  When the state it replaces named another table (rules.table was
 * renamed; `knockgw hide` may have installed that one at boot), that
 * table is deleted: nothing else would ever replace it.  state_dir NULL
 * (the daemon was not started by its unit): nothing.  Logs what it did
 * and what failed; the daemon runs on either way.
 */
void tablelife_save(const struct conf *c, const char *state_dir);

#endif
