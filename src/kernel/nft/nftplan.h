/*
 * nftplan.h - the daemon's ruleset as a plan: plain rule descriptions made
 * from the configuration, rendered twice from that one plan, as nft syntax
 * for `knockgw print-rules` (nftrules_print, in nftprint.c) and as libnftnl
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

#include "common/marks.h"
#include "config/conf.h"

enum nftplan_chain {
	CH_PREROUTING,		/* the server's: before DNAT, what the client dialled */
	CH_PREROUTING_LATE,	/* what no daemon answered: the kernel's RST */
	CH_PREROUTING_NAT,	/* refused SYNs to a closed port (nat) */
	CH_PREROUTING_CLOSED,	/* probes of closed ports that open a connection, after DNAT */
	CH_POSTROUTING,		/* the service's side of integrity flows, after un-NAT */
	CH_INPUT,		/* the client's user path, incoming */
	CH_INPUT_CLOSED,	/* FIN/NULL/Xmas probes, after the host's filter */
	CH_INPUT_LATE,		/* ... those no daemon answered: RST */
	CH_OUTPUT_RAW,		/* the client's SYNs and user path, before conntrack */
	CH_PREROUTING_RAW,	/* gateway client role: routed SYNs and user path, likewise */
	CH_FORWARD_USER,	/* ... user path: the routed flows' answers */
	CH_INPUT_ICMP,		/* ICMP errors about this host's translated flows */
	CH_FORWARD_ICMP,	/* ... about the routed ones */
	CH_POSTROUTING_NAT,	/* gateway: an empty nat chain, so conntrack applies NAT */
	CH_MAX
};

struct nftplan_chain_def {
	const char *name;
	const char *type;	/* "filter" or "nat" */
	uint32_t hook;		/* NF_INET_* */
	int priority;
};

/* Name, hook and priority of each chain. */
const struct nftplan_chain_def *nftplan_chain_def(enum nftplan_chain ch);

enum nftplan_kind {
	RK_MARK_INTEG,		/* our REPEAT verdict for a valid integrity SYN */
	RK_SYN_HIDE,		/* new SYNs to a protected port: queue, bypass */
	RK_SYN,			/* the other SYNs to it (invalid, untracked, loopback): queue */
	RK_NAT_ACCEPTED,	/* a SYN the daemon let through: no redirect */
	RK_NAT_REFUSE,		/* any other new connection: redirect to rules.refuse_port */
	RK_NOCONN_RESET,	/* a NOCONN-coded segment no daemon saw: reject with RST */
	RK_STRAY_QUEUE,		/* FIN/NULL/Xmas: queue, answered like a closed port */
	RK_STRAY_DROP,		/* on_fail "drop": anything not a SYN, untracked: drop */
	RK_NOCONN_NEW,		/* reset: not a SYN, a new conntrack entry from outside: queue */
	RK_NOCONN,		/* reset: not a SYN, no connection conntrack knows: queue */
	RK_INVALID_INTEG,	/* integrity: not a SYN, conntrack says invalid: mark, queue */
	RK_INTEG,		/* flows awaiting integrity bytes: queue */
	RK_INTEG_REPLY,		/* the service's side of those flows: mark, queue */
	RK_CLIENT_SYN,		/* this host's SYNs to a knock destination: queue */
	RK_CLIENT_OUT,		/* user path: later outgoing packets to a knock destination */
	RK_CLIENT_IN,		/* user path: incoming packets of flows with our label */
	RK_CLIENT_IN_NOCT,	/* ... and of no flow conntrack ties them to (invalid) */
	RK_CLIENT_FWD_SYN,	/* routed SYNs from a `from` prefix to a knock destination */
	RK_CLIENT_FWD_SPOOF,	/* ... that arrived elsewhere than their source is routed: drop */
	RK_CLIENT_FWD_OUT,	/* user path: later packets of those flows, going out */
	RK_CLIENT_FWD_IN,	/* ... their answers with our label (addr is the source) */
	RK_CLIENT_FWD_IN_NOCT,	/* ... and those conntrack ties to no flow */
	RK_CLIENT_ICMP,		/* ICMP errors about this host's flows to a knock destination */
	RK_CLIENT_FWD_ICMP,	/* ... about routed flows from a `from` prefix to one */
	RK_CT_KEEP,		/* after a stop: keeps conntrack (and so seqadj) running */
	RK_PROBE_GATE,		/* closed_ports "daemon": not a new connection: not a probe */
	RK_PROBE_SKIP,		/* ... a protected port: decided in chain prerouting */
	RK_PROBE_SOCKET,	/* ... a socket answers (value = transparent) */
	RK_PROBE,		/* ... none does, a port of this host: queue, bypass */
};

struct nftplan_rule {
	enum nftplan_kind kind;
	enum nftplan_chain chain;
	uint16_t port;
	const struct prefix *addr;	/* NULL: any local address */
	const struct prefix *from;	/* gateway rules: the LAN prefix (source going out) */
	bool addr_is_src;		/* match addr as source (incoming client flows) */
	const char *iif;		/* gateway SYN rules: the interface it arrived on */
	bool rpf;			/* RK_CLIENT_FWD_SPOOF: its source is routed elsewhere */
	bool local;			/* only to this host's own addresses (fib) */
	bool forward;			/* a forward entry's: addr is a routed host */
	bool bypass;			/* queue with bypass (a later rule answers) */
	uint8_t qset;			/* enum conf_qset: the set it queues to */
	int entry_line;
	uint8_t value;			/* RK_PROBE_SOCKET: the socket's transparent flag */
};

struct nftplan {
	size_t n, cap;
	struct nftplan_rule *r;
	bool failed;
	bool used[CH_MAX];
	uint16_t qnum[QSET_MAX], qtotal;	/* each set's first queue; queues per set */
	bool bypass;
	uint16_t refuse_port;		/* rules.refuse_port */
	bool hiding;			/* no daemon to queue SYNs to (nftplan_make_hiding) */
	struct kgw_marks m;		/* rules.mark_mask, rules.ct_mark_bit */
	unsigned ct_label;		/* rules.ct_label: our flag's label bit */
};

/* The table for c; 0 or -ENOMEM (then nothing is planned). */
int nftplan_make(const struct conf *c, struct nftplan *p);

/*
 * The table a daemon leaves when it stops with on_stop "hide": the same,
 * but a hiding port's new SYNs go to the nat chain without the queue, so
 * the queues can be drained and closed while every SYN is refused like a
 * closed port.  0 or -ENOMEM (then nothing is planned).
 */
int nftplan_make_hiding(const struct conf *c, struct nftplan *p);

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
