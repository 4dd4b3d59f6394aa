/*
 * nftrules.h - the daemon's own nftables table, through libnftnl.
 *
 * knockgw owns exactly one table (inet <rules.table>, "knockgw" by default)
 * and never touches another.  nftrules_install() replaces it in one atomic
 * batch (delete-if-present + create), so the ruleset is either the old one
 * or the new one, never half, whatever the configuration's size; a refused
 * batch is reported with the command that failed, and a command the kernel
 * did not answer (within a deadline) fails the install as well, naming it.
 * The kernel's native `queue` expression is used when it exists, else the
 * xtables NFQUEUE target through nft compat (probed at start).
 * nftprint_ruleset() (nftprint.h) writes the same ruleset in nft syntax for
 * admins who manage rules by hand (knockgw print-rules), from the plan the
 * install uses.  The rules adapter (nftrules, nftplan, nftexpr, nftx,
 * nftbatch) is the only code that includes libnftnl.
 */
#ifndef KNOCKGW_NFTRULES_H
#define KNOCKGW_NFTRULES_H

#include <stdbool.h>
#include <stdio.h>

#include "config/conf.h"

enum nft_queue_kind {
	NFT_QUEUE_NATIVE,	/* nft `queue` expression (nft_queue) */
	NFT_QUEUE_COMPAT,	/* xtables NFQUEUE target via nft_compat */
};

/* Which queue kind this kernel supports; -errno if neither. */
int nftrules_probe(enum nft_queue_kind *ret_kind);

/*
 * Installs (or atomically replaces) the table, whatever was there before
 * (a stale table, edited by hand, is replaced by exactly the daemon's); 0
 * or -errno, reason in err.  Replacing a table removes its hooks, and the
 * kernel then drops whatever waits in the namespace's queues.
 */
int nftrules_install(const struct conf *c, enum nft_queue_kind kind, char *err, size_t errlen);
/*
 * The same, but for the daemon's own table (a reload): the rules are
 * replaced inside the existing chains where their shape allows, so that no
 * hook goes and nothing queued is dropped; else as nftrules_install().
 */
int nftrules_update(const struct conf *c, enum nft_queue_kind kind, char *err, size_t errlen);

/*
 * Replaces the table with what must outlive the daemon while translated
 * client flows are open: a rule that keeps conntrack (and its sequence
 * adjustment) running and, on the user path, the rules that queue those
 * flows' packets for the next daemon.  Nothing knocks, nothing is refused.
 */
int nftrules_install_keeper(const struct conf *c, enum nft_queue_kind kind, char *err,
			    size_t errlen);

/*
 * Replaces the table with the one a daemon leaves with on_stop "hide":
 * every rule stays, but new SYNs to a hiding port no longer go to the
 * queue: they are refused by the kernel like a closed port's (nftplan.h).
 * In place, as nftrules_update().
 */
int nftrules_install_hiding(const struct conf *c, enum nft_queue_kind kind, char *err,
			    size_t errlen);
/* Deletes the table if it exists; 0 or -errno. */
int nftrules_remove(const char *table);

/*
 * To notice the table was deleted under us: 1 it exists, 0 the kernel says
 * there is no such table, -errno when the question could not be asked or
 * answered (the caller should not take that for a deletion).
 */
int nftrules_present(const char *table);


#endif
