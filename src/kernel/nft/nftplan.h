/*
 * nftplan.h - the daemon's ruleset as a plan: plain rule descriptions made
 * from the configuration, rendered twice from that one plan, as nft syntax
 * for `knockgw print-rules` (nftprint.h) and as libnftnl
 * messages for the kernel (nftexpr.h), so the two cannot drift apart.
 *
 * Pure: no I/O, no libnftnl.  Part of the rules adapter (nftrules.h is
 * its public contract).
 *
 * The ruleset a plan describes, for a configuration that uses every part:
 *
 *   table inet knockgw {
 *     chain prerouting {                                       the server role
 *       type filter hook prerouting priority -150; policy accept;
 *       tcp flags & (syn|ack) == syn meta mark & MASK == INTEG
 *                     ct mark set ct mark | CT_INTEG, clear our bits, go on
 *                     (the daemon's REPEAT of a valid integrity SYN: the SYN
 *                     rule below queues it again and the daemon lets it pass)
 *       per protected port (and address, when limited); entries that
 *       differ only in their port share their rules, the ports in a set
 *       (tcp dport { P, Q, ... }: one lookup, so a probe passes as many
 *       rules whatever the number of entries and its port's place); every
 *       rule only for this host's own addresses (fib daddr type local, the
 *       rule's one route lookup, made last, past its port and every cheaper
 *       test, so that a probe the rule does not take never pays it), as
 *       dialled, but a forward entry's, which name the routed hosts it
 *       protects:
 *         tcp dport P SYN iif != lo ct state new  our bits = NEWSYN  queue SYN bypass
 *                     (on_fail "reset" and no fail_open: with no daemon the
 *                     packet goes on to the nat chain, which refuses it)
 *         tcp dport P SYN  clear our bits         queue SYN  (the rest: invalid,
 *                     untracked, loopback, which nat cannot redirect: dropped
 *                     with no daemon)
 *         forward entries: tcp dport P tcp flags & (syn|ack|rst) == 0
 *                     our bits = NOCONN    queue SYN    (FIN/NULL/Xmas, which never
 *                     reach input: the daemon answers like a closed port)
 *           or, with on_fail "drop":  ct state new,invalid, not a SYN   drop
 *         on_fail "reset", not a SYN, no connection conntrack knows (an ACK
 *                     scan, a guessed SYN cookie, a lost flow):
 *           tcp dport P iif != lo ct state new   our bits = NEWSYN
 *                     queue SYN bypass   (refused like a SYN: the nat chain
 *                     sends it to the closed port, the kernel answers)
 *           tcp dport P ct state new,untracked   our bits = NOCONN
 *                     queue SYN     (loopback, untracked: nat cannot take it;
 *                     the daemon answers)
 *         tcp dport P ct mark & CT_INTEG ct direction original
 *                     meta mark set mark & ~MASK                queue DATA  (integrity)
 *         integrity: tcp dport P ct state invalid, not a SYN
 *                     meta mark set mark & ~MASK | INVALID      queue DATA  (no entry, so
 *                                     no flag: checked if its flow is being checked)
 *     }
 *     chain prerouting_late {  type filter hook prerouting priority -140;
 *       meta mark & MASK == NOCONN  reject with tcp reset   (what no daemon answered)
 *     }
 *     chain prerouting_nat {  type nat hook prerouting priority -199;
 *                     (before any other table's DNAT)
 *       SYN meta mark & MASK == ACCEPTED   clear our bits  accept  (let through)
 *       per protected port (and address): tcp dport P  redirect to :REFUSE
 *                     (any other new connection to it: refused, or no daemon
 *                     saw it; the kernel answers from a port nobody listens
 *                     on, and conntrack puts P back in the answer, which is
 *                     then a closed port's, field by field)
 *       per forward entry's address: ip daddr A tcp dport P
 *                     dnat to ip daddr:REFUSE   (the routed host's own closed
 *                     port answers, through this router)
 *     }
 *     with closed_ports "daemon" (the default) and an entry that answers
 *     for this host's own port with on_fail "reset": probes of ports nobody
 *     listens on take the path a probe of a protected port takes
 *     chain prerouting_closed {  type filter hook prerouting priority -99;
 *                     (after every DNAT: a port forwarded elsewhere is
 *                     not this host's, a redirected one is judged by where
 *                     it goes)
 *       ct state != new  return
 *       per protected port of this host (and address): tcp dport P  return
 *                     (decided in chain prerouting: a knock let through to
 *                     a port nobody listens on is not decided twice)
 *       tcp ct state new iif != lo, no RST, ct status not dnat (the nat
 *                     chain's refusals are decided already):
 *         socket transparent <= 1  accept    (any socket: someone listens,
 *                     or the flow exists: not ours; one lookup)
 *         fib daddr type local  our bits = NEWSYN  queue PROBE bypass
 *                     (SYN, ACK and window scans: the daemon does a refused
 *                     knock's work and lets it go on; the kernel answers)
 *     }
 *     chain input_closed {  type filter hook input priority 10;
 *                     (after the usual filter chains: a port another
 *                     firewall here drops is never answered by us)
 *       per protected port of this host (on_fail "reset", and address):
 *         tcp dport P tcp flags & (syn|ack|rst) == 0
 *                     our bits = NOCONN  queue SYN bypass   (FIN/NULL/Xmas:
 *                     invalid for conntrack, so no nat; the daemon answers)
 *       closed_ports "daemon": tcp iif != lo tcp flags & (syn|ack|rst) == 0
 *         socket transparent <= 1  accept
 *         clear our bits  queue PROBE bypass   (answered as the protected
 *                     port's; with no daemon, by the kernel)
 *     }
 *     chain input_late {  type filter hook input priority 11;
 *       meta mark & MASK == NOCONN  reject with tcp reset }
 *     and the closed ports' new connections (SYN, ACK, window scans), once
 *     the host's filter chains have seen them as they came:
 *     chain input_closed_nat {  type nat hook input priority 100;
 *       tcp iif != lo, ct status not dnat (a nat chain sees new ones only):
 *         socket transparent <= 1  accept    (someone listens: not ours)
 *         snat to (its source):(its port ^ 0x8000)
 *                     (the nat work a protected port's refusal gets from
 *                     the redirect, there and back; one for one, so the
 *                     answer to a repeated probe repeats, IPv6 flow label
 *                     and all) }
 *     with an integrity entry: the service's side of those flows (pending.h),
 *     after any DNAT is undone, so with the addresses the client dialled
 *     chain postrouting {  type filter hook postrouting priority 110;
 *       per integrity entry (and address):
 *         tcp sport P ct mark & CT_INTEG ct direction reply
 *                     meta mark set mark & ~MASK | REPLY  queue DATA
 *     }
 *     (The daemon clears a flow's CT_INTEG over ctnetlink once the service
 *     acknowledged its bytes; no rule acts on a mark to do that.)
 *     chain output_raw {                          client role, before conntrack
 *       type filter hook output priority -300; policy accept;
 *       per knock entry:  ip daddr D tcp dport P tcp flags & (syn|ack) == syn  queue SYN
 *       with translate = "user", also:
 *                         ip daddr D tcp dport P tcp flags & (syn|ack) != syn  queue DATA
 *     }
 *     with translate = "user" only (the shift is in conntrack labels of
 *     ours, bits N..N+32 for rules.ct_label = N: bit N says the flow is one
 *     the daemon translates):
 *     chain input {  type filter hook input priority -150;
 *       ip saddr D tcp sport P tcp flags & ack == ack ct label N  queue DATA
 *       ip saddr D tcp sport P tcp flags & ack == ack ct state invalid,untracked  queue DATA }
 *     with `from` in a knock entry (gateway client role), per prefix F of
 *     dst's family:
 *     chain prerouting_raw {  type filter hook prerouting priority -300;
 *       ip saddr F ip daddr D tcp dport P tcp flags & (syn|ack) == syn
 *                   fib daddr type != local       (routed: not to this host)
 *                   fib saddr . iif oif missing  drop
 *                                 (it did not come the way F is routed: forged)
 *       ip saddr F ip daddr D tcp dport P tcp flags & (syn|ack) == syn
 *                   fib daddr type != local
 *                   meta mark set mark & ~MASK | FWD  queue SYN
 *       or, with from_interfaces = [ I, ... ] (asymmetric routes):
 *         ... fib daddr type != local iifname I  meta mark ... queue SYN   (per I)
 *         ... fib daddr type != local  drop
 *       and with translate = "user", its later packets going out:
 *       ip saddr F ip daddr D tcp dport P tcp flags & (syn|ack) != syn
 *                   fib daddr type != local  meta mark set mark & ~MASK | FWD  queue DATA }
 *     and with translate = "user" the answers (routed packets pass neither
 *     output nor input; forward sees them after conntrack, and after their
 *     destination is back to the LAN host's):
 *     chain forward_user {  type filter hook forward priority -150;
 *       ip saddr D ip daddr F tcp sport P tcp flags & ack == ack ct label N  queue DATA
 *       ip saddr D ip daddr F tcp sport P tcp flags & ack == ack
 *                   ct state invalid,untracked  queue DATA }
 *     ICMP errors about the client's flows (their quote holds the shifted
 *     sequence number, which conntrack adjusts nowhere; clienticmp.h):
 *     chain input_icmp {  type filter hook input priority -150;
 *       per knock entry: meta l4proto icmp ct state related ct direction reply
 *                   ct original ip daddr D ct original proto-dst P
 *                   iif != lo  queue DATA bypass }
 *     chain forward_icmp {  type filter hook forward priority -150;
 *       per `from` prefix F: the same with ct original ip saddr F, no iif }
 *     and with `from` anywhere, an empty nat chain: the kernel applies the
 *     NAT binding of a routed flow's entry (gwnat.h) only while a nat chain
 *     is registered in the namespace
 *     chain postrouting_nat {  type nat hook postrouting priority 100; }
 *   }
 *
 * Queues: "queue SYN" is the set of SYNs and of every other probe of a
 * protected port, queue.num .. num + count - 1; "queue PROBE" (the probes
 * of closed ports) and "queue DATA" the probe and data sets
 * (conf_queue_first: by default the count numbers after the SYN set, and
 * the count after those).  Each side's probes, of every type, pass one
 * queue: a scan that mixes types warms both sides' paths alike (with a
 * protected port's ACKs on the probe set, its SYNs alone took a path the
 * scan left cold, and were answered later than a closed port's).  Each
 * set has a queue of its own per queue thread, and a thread reads SYNs
 * first, then data, then probes (workers.c): a flood of closed ports or
 * of integrity segments fills its own queue, never the SYNs'; a flood
 * aimed at a protected port meets the knocks whatever its type, as its
 * SYNs always did.  The
 * kernel spreads a set's packets over its queues by address (the same
 * hash for every set), so one connection's SYN, probes and data meet the
 * same thread.
 *
 * Prerouting priority -150: after conntrack (-200) so ct state and mark are
 * known, and before DNAT (-100), so a SYN still carries the destination the
 * client dialled, which its knock covers: a port forward or a container's
 * published port on this host is protected by the port the client dials.
 * Loopback traffic passes prerouting too.  The client's SYN chain runs
 * before conntrack, so the daemon can create the flow's entry first; so
 * does the gateway's (prerouting_raw: a routed SYN never passes output).
 * The user path shifts outgoing packets there too, before conntrack, and
 * incoming ones after it, so conntrack sees a flow's numbers as the wire
 * does both ways and judges it like any other: a RST is valid (or not)
 * for the same reasons.  Before conntrack no packet carries its entry, so
 * the daemon finds the shift by the packet's tuple (client.h); after it,
 * our label picks the flows to queue, and a packet conntrack ties to no
 * entry (invalid, untracked) is queued too: it may still be one of ours.
 * Incoming packets need the shift only for an acknowledgement (ACK set).
 * No mark carries the shift: the packet mark and conntrack mark stay
 * other software's (but for our codes in mark_mask).
 *
 * Closed ports.  What a probe of a protected port meets, a probe of a
 * closed port meets too, scan type by scan type, so that neither the answer
 * nor its time tells them apart: a new connection (SYN, ACK, window scan)
 * is queued at prerouting, gets a refused knock's work in the daemon and
 * an accept, and the kernel answers it, each through one nat rewrite (the
 * protected port's through the nat redirect; the closed port's as itself,
 * its source port rewritten once the host's filter has seen it: a port
 * another firewall here drops must stay silent, which a redirect would
 * undo, as the input filter would then see the closed port's number, not
 * the dialled one); a
 * FIN/NULL/Xmas probe, which conntrack calls invalid and nat cannot move,
 * is queued at input after the host's filter chains and answered with the
 * daemon's RST on both sides; a Maimon probe (FIN+ACK, invalid) is
 * answered by the kernel on both sides (the listener's TCP resets it as a
 * closed port does).  The closed side is matched after DNAT and by the
 * socket lookup, so a listening port, a forwarded one or a container's is
 * never taken for closed; bypass, since without the daemon the kernel's
 * own answer is the right one.
 *
 * Each hook the daemon queues from tells the roles apart (door.h):
 * prerouting and postrouting are the server's, output the client's; input
 * carries the client's incoming user-path segments (on the data set), and
 * input_closed's probes (a protected port's on the SYN set, a closed
 * port's on the probe set).  The
 * gateway's are told apart too: at prerouting, a routed SYN or (user path)
 * a routed flow's later packet going out carries the FWD code (the
 * server's rules clear our bits before they queue); forward is the
 * client's alone, the routed flows' answers.
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
	CH_INPUT_CLOSED_NAT,	/* closed ports' new connections: the nat a refusal takes */
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
	RK_PROBE_SOCKET,	/* ... a socket answers (any: one lookup) */
	RK_PROBE,		/* ... none does, a port of this host: queue, bypass */
	RK_PROBE_SNAT,		/* ... a new connection no socket takes, past the host's
				 * filter: nat its source port (value = 4 or 6) */
};

struct nftplan_rule {
	enum nftplan_kind kind;
	enum nftplan_chain chain;
	uint16_t port;
	/*
	 * nports > 1: the rule stands for the entries whose ports these are,
	 * matched in a set (one lookup; port is the first of them).
	 */
	const uint16_t *ports;
	uint16_t nports;
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
	uint8_t value;			/* RK_PROBE_SNAT: the family, 4 or 6 */
};

/* A protect entry's share of the rules (nftplan.c, plan_groups). */
struct nftplan_group {
	const uint16_t *ports;	/* the ports its rules match; NULL: its own */
	uint16_t nports;
	bool merged;		/* its port is in an earlier entry's rules */
};

struct nftplan {
	size_t n, cap;
	struct nftplan_rule *r;
	const struct conf_protect *protect;	/* the entries grp[] follows */
	struct nftplan_group *grp;
	uint16_t *gports;			/* the groups' ports */
	bool failed;
	bool used[CH_MAX];
	uint16_t qnum[QSET_MAX], qtotal;	/* each set's first queue; queues per set */
	bool bypass;
	uint16_t refuse_port;		/* rules.refuse_port */
	bool hiding;			/* no daemon to queue SYNs to (nftplan_make_hiding) */
	struct marks m;		/* rules.mark_mask, rules.ct_mark_bit */
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


#endif
