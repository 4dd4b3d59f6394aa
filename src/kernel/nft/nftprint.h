/*
 * nftprint.h - the planned ruleset (nftplan.h) as text: in nft syntax for
 * `knockgw print-rules`, from the same plan the install renders as
 * libnftnl messages (nftexpr.h), so the two cannot drift apart (the
 * namespace tests load this text with nft -f and compare the two); and
 * the name of one planned rule, for error reports.  No I/O but the FILE *
 * given.
 */
#ifndef KNOCKGW_NFTPRINT_H
#define KNOCKGW_NFTPRINT_H

#include <stddef.h>
#include <stdio.h>

#include "kernel/nft/nftplan.h"
#include "kernel/nft/nftrules.h"

struct conf;

/* The ruleset the daemon would install for c, with the given kind of queue statement, on f. */
void nftprint_ruleset(const struct conf *c, enum nft_queue_kind kind, FILE *f);

/*
 * Names a rule in error reports: its kind, and the port and configuration
 * entry it comes from.
 */
void nftprint_rule_what(const struct nftplan_rule *ru, char *buf, size_t len);

#endif
