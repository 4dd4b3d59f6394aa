/*
 * nftplan.h - the daemon's ruleset as a plan: plain rule descriptions made
 * from the configuration, rendered twice from that one plan, as nft syntax
 * for `knockgw print-rules` (nftrules_print, in nftplan.c) and as libnftnl
 * messages for the kernel (nftexpr.h), so the two cannot drift apart.
 *
 * Pure: no I/O but the FILE print writes to, no libnftnl.  Part of the
 * rules adapter (nftrules.h is its public contract).
 */
#ifndef KNOCKGW_NFTPLAN_H
#define KNOCKGW_NFTPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "marks.h"

enum nftplan_chain {
	CH_INPUT, CH_INPUT_CLOSED, CH_OUTPUT_INTEG, CH_OUTPUT_RAW, CH_OUTPUT, CH_PREROUTING,
	CH_PREROUTING_RAW,	/* gateway client role: routed SYNs, before conntrack */
	CH_FORWARD_USER,	/* ... user path: the routed flows' outgoing packets */
	CH_MAX
};

struct nftplan_chain_def {
	const char *name;
	uint32_t hook;		/* NF_INET_* */
	int priority;
};

/* Name, hook and priority of each chain. */
const struct nftplan_chain_def *nftplan_chain_def(enum nftplan_chain ch);

enum nftplan_kind {
	RK_MARK_INTEG,		/* our REPEAT verdict for a valid integrity SYN */
	RK_SYN,			/* new SYNs to a protected port: queue */
	RK_STRAY_QUEUE,		/* FIN/NULL/Xmas: queue, answered like a closed port */
	RK_STRAY_DROP,		/* on_fail "drop": anything not a SYN, untracked: drop */
	RK_NOCONN,		/* reset: not a SYN, no connection conntrack knows: queue */
	RK_INVALID_INTEG,	/* integrity: not a SYN, conntrack says invalid: mark, queue */
	RK_INTEG,		/* flows awaiting integrity bytes: queue */
	RK_INTEG_REPLY,		/* the service's side of those flows: mark, queue */
	RK_CLIENT_SYN,		/* this host's SYNs to a knock destination: queue */
	RK_CLIENT_OUT,		/* user path: later outgoing packets of such flows */
	RK_CLIENT_IN,		/* user path: their incoming packets (routed ones too) */
	RK_CLIENT_FWD_SYN,	/* routed SYNs from a `from` prefix to a knock destination */
	RK_CLIENT_FWD_OUT,	/* user path: later packets of those flows, going out */
	RK_CT_KEEP,		/* after a stop: keeps conntrack (and so seqadj) running */
	RK_CLOSED_SKIP,		/* closed_ports "daemon": a protected port, the input chain's */
	RK_CLOSED_SOCKET,	/* ... a socket answers (value = transparent) */
	RK_CLOSED,		/* ... none does: queue, bypass */
};

struct nftplan_rule {
	enum nftplan_kind kind;
	enum nftplan_chain chain;
	uint16_t port;
	const struct prefix *addr;	/* NULL: any local address */
	const struct prefix *from;	/* gateway rules: the source prefix, matched first */
	bool addr_is_src;		/* match addr as source (incoming client flows) */
	int entry_line;
	uint8_t value;			/* RK_CLOSED_SOCKET: the socket's transparent flag */
};

struct nftplan {
	size_t n, cap;
	struct nftplan_rule *r;
	bool failed;
	bool used[CH_MAX];
	uint16_t qnum, qtotal;
	bool bypass;
	struct kgw_marks m;		/* rules.mark_mask, rules.ct_mark_bit */
};

/* The table for c; 0 or -ENOMEM (then nothing is planned). */
int nftplan_make(const struct conf *c, struct nftplan *p);

/*
 * What must outlive the daemon while translated client flows are open (see
 * nftrules_install_keeper); 0 or -ENOMEM (then nothing is planned).
 */
int nftplan_make_keeper(const struct conf *c, struct nftplan *p);

void nftplan_free(struct nftplan *p);

/*
 * Names a rule in error reports: its kind, and the port and configuration
 * entry it comes from.
 */
void nftplan_rule_what(const struct nftplan_rule *ru, char *buf, size_t len);

#endif
