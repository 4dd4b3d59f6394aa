/*
 * nftexpr.h - one planned rule (nftplan.h) as a libnftnl rule for the
 * kernel.  Builds objects only: no I/O.  Part of the rules adapter, which
 * alone includes libnftnl.
 */
#ifndef KNOCKGW_NFTEXPR_H
#define KNOCKGW_NFTEXPR_H

#include "kernel/nft/nftplan.h"
#include "kernel/nft/nftrules.h"

struct nftnl_rule;

/*
 * The rule ru of plan p in table (family inet, chain as planned), queueing
 * with the given kind of queue statement; a rule for several ports
 * (ru->nports > 1) looks them up in the anonymous set of the same batch
 * whose id is set_id.  NULL when out of memory.  The caller frees it with
 * nftnl_rule_free().
 */
struct nftnl_rule *nftexpr_rule(const char *table, const struct nftplan_rule *ru,
				const struct nftplan *p, enum nft_queue_kind kind, uint32_t set_id);

#endif
