/*
 * nftplan.c - the ruleset planned from the configuration (see nftplan.h:
 * the ruleset drawn, and why each rule is there; its text form, and the
 * names of its rules in error reports, are nftprint.c's).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/nft/nftplan.h"
#include "kernel/nft/nftrules.h"

enum {
	SERVER_PRIORITY = -150,		/* after conntrack, before DNAT */
	/*
	 * The first nat chain the kernel allows (> -200): nat chains run in
	 * priority order, those of equal priority newest first, and the first
	 * to map a connection decides it; another table's DNAT (Docker's at
	 * -100, re-created after ours) must never take a SYN the daemon did
	 * not let through.
	 */
	NAT_PRIORITY = -199,
	LATE_PRIORITY = -140,		/* after the server's chain, before nat */
	/*
	 * Every nat chain runs inside the kernel's one DNAT hook at -100, in
	 * the order of their priorities: at -99 every DNAT is decided.
	 */
	PROBE_PRIORITY = -99,
	REPLY_PRIORITY = 110,		/* after SNAT, and after DNAT undone */
	CLOSED_PRIORITY = 10,		/* after the usual filter chains (0) */
	CLOSED_LATE_PRIORITY = 11,
	RAW_PRIORITY = -300,
	USER_PRIORITY = -150,
	ICMP_PRIORITY = -150,		/* after conntrack, and (forward) after un-NAT */
	SRCNAT_PRIORITY = 100,		/* nft's srcnat */
	PLAN_FIRST = 64,
};

static const struct nftplan_chain_def chains[CH_MAX] = {
	[CH_PREROUTING] = { "prerouting", "filter", NF_INET_PRE_ROUTING, SERVER_PRIORITY },
	[CH_PREROUTING_LATE] = { "prerouting_late", "filter", NF_INET_PRE_ROUTING, LATE_PRIORITY },
	[CH_PREROUTING_NAT] = { "prerouting_nat", "nat", NF_INET_PRE_ROUTING, NAT_PRIORITY },
	[CH_PREROUTING_CLOSED] = { "prerouting_closed", "filter", NF_INET_PRE_ROUTING,
				   PROBE_PRIORITY },
	[CH_POSTROUTING] = { "postrouting", "filter", NF_INET_POST_ROUTING, REPLY_PRIORITY },
	[CH_INPUT] = { "input", "filter", NF_INET_LOCAL_IN, USER_PRIORITY },
	[CH_INPUT_CLOSED] = { "input_closed", "filter", NF_INET_LOCAL_IN, CLOSED_PRIORITY },
	[CH_INPUT_LATE] = { "input_late", "filter", NF_INET_LOCAL_IN, CLOSED_LATE_PRIORITY },
	[CH_OUTPUT_RAW] = { "output_raw", "filter", NF_INET_LOCAL_OUT, RAW_PRIORITY },
	[CH_PREROUTING_RAW] = { "prerouting_raw", "filter", NF_INET_PRE_ROUTING, RAW_PRIORITY },
	[CH_FORWARD_USER] = { "forward_user", "filter", NF_INET_FORWARD, USER_PRIORITY },
	[CH_INPUT_ICMP] = { "input_icmp", "filter", NF_INET_LOCAL_IN, ICMP_PRIORITY },
	[CH_FORWARD_ICMP] = { "forward_icmp", "filter", NF_INET_FORWARD, ICMP_PRIORITY },
	[CH_POSTROUTING_NAT] = { "postrouting_nat", "nat", NF_INET_POST_ROUTING, SRCNAT_PRIORITY },
	[CH_INPUT_CLOSED_NAT] = { "input_closed_nat", "nat", NF_INET_LOCAL_IN, SRCNAT_PRIORITY },
};

const struct nftplan_chain_def *nftplan_chain_def(enum nftplan_chain ch)
{
	return &chains[ch];
}

/* ------------------------------------------------------------------ plan */


/*
 * The plan grows as it is made: its size follows the configuration (up to
 * CONF_MAX_PROTECT entries of CONF_MAX_ADDRS addresses each, and the knock
 * entries), and a rule that did not fit must never be dropped silently, which
 * would leave a port unprotected: out of memory fails the whole plan.
 */
static void plan_push(struct nftplan *p, struct nftplan_rule ru)
{
	if (p->failed)
		return;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : PLAN_FIRST;
		struct nftplan_rule *r = reallocarray(p->r, cap, sizeof(*r));

		if (!r) {
			p->failed = true;
			return;
		}
		p->r = r;
		p->cap = cap;
	}
	p->r[p->n++] = ru;
	p->used[ru.chain] = true;
}

void nftplan_free(struct nftplan *p)
{
	free(p->r);
	free(p->grp);
	free(p->gports);
	p->r = NULL;
	p->grp = NULL;
	p->gports = NULL;
	p->n = p->cap = 0;
}

/*
 * Does entry e hide its port with no daemon, through the nat chain?  Not
 * with on_fail "drop" (silence is its closed port), nor with fail_open
 * (its SYNs pass when no daemon is there).
 */
static bool hides(const struct nftplan *p, const struct conf_protect *e)
{
	return !p->bypass && e->on_fail == ON_FAIL_RESET;
}

/*
 * The queue set each kind of rule queues to (the others queue nothing).
 * Every probe of a protected port comes on the SYN set, as its SYNs do,
 * and every probe of a closed port on the probe set: each side's probes,
 * of whatever type, pass one queue and one path through the daemon, so
 * a scan that mixes types leaves neither side's path colder in the
 * caches than the other's (the answer's time would tell).  A flood of
 * closed ports never reaches the SYN set; one aimed at the protected
 * port itself reaches it whatever its type, as its SYNs always did.
 */
static enum conf_qset qset_of(enum nftplan_kind k)
{
	switch (k) {
	case RK_SYN_HIDE:
	case RK_SYN:
	case RK_STRAY_QUEUE:
	case RK_NOCONN_NEW:
	case RK_NOCONN:
	case RK_CLIENT_SYN:
	case RK_CLIENT_FWD_SYN:
		return QSET_SYN;
	case RK_PROBE:
		return QSET_PROBE;
	default:
		return QSET_DATA;
	}
}

/*
 * A server rule of kind k for entry e (NULL: none) and address a, in chain
 * ch; none for an entry whose port an earlier entry's rules carry.
 */
static void plan_add_in(struct nftplan *p, enum nftplan_kind k, enum nftplan_chain ch,
			const struct conf_protect *e, const struct prefix *a)
{
	const struct nftplan_group *g = e && p->grp ? &p->grp[e - p->protect] : NULL;

	if (g && g->merged)
		return;
	plan_push(p, (struct nftplan_rule){ .kind = k, .chain = ch, .port = e ? e->port : 0, .addr = a,
				    .ports = g ? g->ports : NULL, .nports = g ? g->nports : 0,
				    .addr_is_src = k == RK_INTEG_REPLY,
				    .local = e && !e->forward &&
					     (ch == CH_PREROUTING || ch == CH_PREROUTING_NAT),
				    .forward = e && e->forward,
				    .bypass = e && hides(p, e) &&
					      (k == RK_STRAY_QUEUE || k == RK_NOCONN_NEW ||
					       k == RK_NOCONN),
				    .qset = (uint8_t)qset_of(k), .entry_line = e ? e->line : 0 });
}

static void plan_add(struct nftplan *p, enum nftplan_kind k, const struct conf_protect *e,
		     const struct prefix *a)
{
	enum nftplan_chain ch = k == RK_INTEG_REPLY  ? CH_POSTROUTING
			   : k == RK_NAT_REFUSE	   ? CH_PREROUTING_NAT
						 : CH_PREROUTING;

	plan_add_in(p, k, ch, e, a);
}

static void plan_client(struct nftplan *p, enum nftplan_kind k, enum nftplan_chain ch,
			const struct conf_knock *e, bool src)
{
	plan_push(p, (struct nftplan_rule){ .kind = k, .chain = ch, .port = e->port, .addr = &e->dst,
				    .addr_is_src = src, .qset = (uint8_t)qset_of(k),
				    .entry_line = e->line });
}

/*
 * Gateway client role: the routed SYNs of each `from` prefix of dst's
 * family are knocked only where they may arrive, on the interface this host
 * routes their source through or on one of the entry's from_interfaces;
 * any other is dropped, so a forged `from` source gets no knock (the drop
 * rule counts it).
 */
static void plan_gateway_syn(struct nftplan *p, const struct conf_knock *e)
{
	for (size_t i = 0; i < e->nfrom && i < CONF_MAX_FROM; i++) {
		struct nftplan_rule ru = { .chain = CH_PREROUTING_RAW, .port = e->port,
					   .addr = &e->dst, .from = &e->from[i],
					   .qset = QSET_SYN, .entry_line = e->line };

		if (e->from[i].family != e->dst.family)
			continue;
		if (e->nifaces == 0) {
			ru.kind = RK_CLIENT_FWD_SPOOF;
			ru.rpf = true;
			plan_push(p, ru);
			ru.kind = RK_CLIENT_FWD_SYN;
			ru.rpf = false;
			plan_push(p, ru);
			continue;
		}
		ru.kind = RK_CLIENT_FWD_SYN;
		for (size_t j = 0; j < e->nifaces && j < CONF_MAX_FROM_IFACES; j++) {
			ru.iif = e->ifaces[j];
			plan_push(p, ru);
		}
		ru.kind = RK_CLIENT_FWD_SPOOF;
		ru.iif = NULL;
		plan_push(p, ru);
	}
}

/* Gateway client role, user path: one rule per `from` prefix of dst's family. */
static void plan_gateway(struct nftplan *p, enum nftplan_kind k, enum nftplan_chain ch,
			 const struct conf_knock *e)
{
	for (size_t i = 0; i < e->nfrom && i < CONF_MAX_FROM; i++) {
		if (e->from[i].family != e->dst.family)
			continue;
		plan_push(p, (struct nftplan_rule){ .kind = k, .chain = ch, .port = e->port,
					    .addr = &e->dst, .from = &e->from[i],
					    .addr_is_src = k == RK_CLIENT_FWD_IN ||
							   k == RK_CLIENT_FWD_IN_NOCT,
					    .qset = (uint8_t)qset_of(k), .entry_line = e->line });
	}
}

/* The user path's rules for knock entry e (its SYNs' are the caller's). */
static void plan_user_path(struct nftplan *p, const struct conf_knock *e)
{
	plan_client(p, RK_CLIENT_OUT, CH_OUTPUT_RAW, e, false);
	plan_client(p, RK_CLIENT_IN, CH_INPUT, e, true);
	plan_client(p, RK_CLIENT_IN_NOCT, CH_INPUT, e, true);
	plan_gateway(p, RK_CLIENT_FWD_OUT, CH_PREROUTING_RAW, e);
	plan_gateway(p, RK_CLIENT_FWD_IN, CH_FORWARD_USER, e);
	plan_gateway(p, RK_CLIENT_FWD_IN_NOCT, CH_FORWARD_USER, e);
}

/*
 * Does entry e answer for a port of this host like a closed port (so that
 * its FIN/NULL/Xmas probes are taken at input)?  A forward entry's hosts
 * are routed: their probes never reach input.
 */
static bool answers_locally(const struct conf_protect *e)
{
	return !e->forward && e->on_fail == ON_FAIL_RESET;
}

/*
 * The gateway's routed flows carry their source NAT in the conntrack entry
 * the daemon makes (gwnat.h), and the kernel applies an entry's NAT only
 * while some nat chain is registered in the namespace: on a router with
 * no nat table of its own, an empty one of ours, or a flow would leave
 * with its LAN source.  It maps nothing itself.
 */
static void plan_gateway_nat(struct nftplan *p, const struct conf *c)
{
	for (size_t i = 0; i < c->nknock; i++)
		if (c->knock[i].nfrom > 0)
			p->used[CH_POSTROUTING_NAT] = true;
}

static void plan_entry(struct nftplan *p, const struct conf_protect *e, const struct prefix *a)
{
	if (hides(p, e))
		plan_add(p, RK_SYN_HIDE, e, a);
	plan_add(p, RK_SYN, e, a);
	if (e->on_fail == ON_FAIL_DROP)
		plan_add(p, RK_STRAY_DROP, e, a);
	else if (e->forward)
		plan_add(p, RK_STRAY_QUEUE, e, a);
	/*
	 * A segment that opens no connection conntrack knows (an ACK scan, an
	 * ACK with a guessed SYN cookie; a flow whose entry was lost) never
	 * reaches the socket unseen.  A new conntrack entry from outside is
	 * refused as a SYN is, through the nat chain's closed port; the rest
	 * (loopback, untracked), which nat cannot move, the daemon answers.
	 * An invalid one carries no conntrack entry, so the integrity rule
	 * cannot see it: for those flows it comes to the daemon too, marked,
	 * and passes unless it belongs to a flow being checked.
	 */
	if (e->on_fail == ON_FAIL_RESET) {
		if (hides(p, e))
			plan_add(p, RK_NOCONN_NEW, e, a);
		plan_add(p, RK_NOCONN, e, a);
	}
	if (e->integrity_len) {
		plan_add(p, RK_INTEG, e, a);
		plan_add(p, RK_INVALID_INTEG, e, a);
	}
}

static void plan_start(const struct conf *c, struct nftplan *p)
{
	memset(p, 0, sizeof(*p));
	for (int set = 0; set < QSET_MAX; set++)
		p->qnum[set] = conf_queue_first(c, (enum conf_qset)set);
	p->qtotal = c->queue_count;
	p->bypass = c->fail_open;
	p->refuse_port = c->refuse_port;
	p->m = c->marks;
	p->ct_label = c->ct_label;
}

/*
 * What stays after a stop while translated client flows are open: conntrack
 * only runs in a namespace while some rule uses it, and seqadj with it; the
 * user path's packets keep going to the queue, where they wait (and drop,
 * to be retransmitted) until a daemon is back.  No knock, no server rule.
 * 0 or -ENOMEM (then nothing is planned).
 */
int nftplan_make_keeper(const struct conf *c, struct nftplan *p)
{
	plan_start(c, p);
	plan_push(p, (struct nftplan_rule){ .kind = RK_CT_KEEP, .chain = CH_OUTPUT_RAW });
	plan_gateway_nat(p, c);
	for (size_t i = 0; c->translate == TRANSLATE_USER && i < c->nknock; i++)
		plan_user_path(p, &c->knock[i]);
	if (p->failed) {
		nftplan_free(p);
		return -ENOMEM;
	}
	return 0;
}

/* Every protect entry's rule of kind k in chain ch, one per address. */
static void plan_each(struct nftplan *p, const struct conf *c, enum nftplan_kind k,
		      enum nftplan_chain ch, bool (*want)(const struct nftplan *,
							  const struct conf_protect *))
{
	for (size_t i = 0; i < c->nprotect; i++) {
		const struct conf_protect *e = &c->protect[i];

		if (!want(p, e))
			continue;
		if (e->naddrs == 0)
			plan_add_in(p, k, ch, e, NULL);
		for (size_t a = 0; a < e->naddrs; a++)
			plan_add_in(p, k, ch, e, &e->addrs[a]);
	}
}

static bool want_hiding(const struct nftplan *p, const struct conf_protect *e)
{
	return hides(p, e);
}

static bool want_integrity(const struct nftplan *p, const struct conf_protect *e)
{
	(void)p;
	return e->integrity_len > 0;
}

static bool want_local_reset(const struct nftplan *p, const struct conf_protect *e)
{
	(void)p;
	return answers_locally(e);
}

static bool want_local(const struct nftplan *p, const struct conf_protect *e)
{
	(void)p;
	return !e->forward;
}

/*
 * closed_ports "daemon": the probes of ports nobody listens on, each scan
 * type in the chain its counterpart to a protected port is decided in
 * (see the header).  Only while some entry answers for a port of this host
 * like a closed port: there is nothing to tell apart otherwise.
 */
static void plan_closed(struct nftplan *p, const struct conf *c)
{
	/*
	 * What is not a new connection leaves at once (established traffic
	 * passes this chain too); a protected port's was decided in chain
	 * prerouting (a knock let through to a port nobody listens on gets
	 * the kernel's RST, not a second decision).
	 */
	plan_push(p, (struct nftplan_rule){ .kind = RK_PROBE_GATE, .chain = CH_PREROUTING_CLOSED });
	plan_each(p, c, RK_PROBE_SKIP, CH_PREROUTING_CLOSED, want_local);
	for (enum nftplan_chain ch = CH_PREROUTING_CLOSED;; ch = CH_INPUT_CLOSED) {
		plan_push(p, (struct nftplan_rule){ .kind = RK_PROBE_SOCKET, .chain = ch });
		plan_push(p, (struct nftplan_rule){ .kind = RK_PROBE, .chain = ch, .bypass = true,
					    .local = ch == CH_PREROUTING_CLOSED,
					    .qset = QSET_PROBE });
		if (ch == CH_INPUT_CLOSED)
			break;
	}
	/*
	 * A protected port's refused connection is answered through the nat
	 * chain's redirect: conntrack rewrites the SYN and, back, the kernel's
	 * RST.  A closed port's new connection gets a rewrite of its own, of
	 * the source port, once the host's filter chains have seen it as it
	 * came: the same nat work, there and back, so neither side's answer
	 * leaves the other's path colder in the caches (its absence was what
	 * was left of the SYN and ACK timing gaps).  It is told by what makes
	 * it a closed port's, again, at the nat hook: no DNAT took it (a
	 * refusal, a port forward), it is not loopback's, and no socket takes
	 * it (checked anew, one lookup: a listener that opened meanwhile, or
	 * one the prerouting lookup missed, gets its connection as it came).
	 * No mark carries it there: the host's chains see the mark as it came.
	 * The new port is the old one with its top bit flipped: one for one,
	 * so a repeated probe meets the same tuple, and the kernel's IPv6 flow
	 * label of the answer (a hash of that tuple) repeats as a protected
	 * port's does.
	 */
	plan_push(p, (struct nftplan_rule){ .kind = RK_PROBE_SOCKET, .chain = CH_INPUT_CLOSED_NAT });
	for (uint8_t fam = 4; fam <= 6; fam += 2)
		plan_push(p, (struct nftplan_rule){ .kind = RK_PROBE_SNAT,
						    .chain = CH_INPUT_CLOSED_NAT, .value = fam });
}

/* An entry whose rules differ from another's only in the port? */
static bool groupable(const struct conf *c, size_t i)
{
	const struct conf_protect *e = &c->protect[i];

	if (e->naddrs > 0 || e->forward || e->integrity_len > 0)
		return false;
	for (size_t j = 0; j < c->nprotect; j++)
		if (j != i && c->protect[j].port == e->port)
			return false;
	return true;
}

/*
 * Entries whose rules would differ only in the port share them: one rule
 * matches their ports in a set (one lookup), in the place of the first of
 * them.  A probe of a closed port passes every entry's rules, a protected
 * port's only those before its own: with a rule group per entry, what
 * passing them cost a probe grew with the entries listed before its port
 * (with 20 entries, the first one's probes were answered 3-5 us sooner
 * than a closed port's).  Such an entry protects this host's own addresses
 * for its port alone (no addresses, not forward, no integrity, and no
 * other entry has its port: no rule between its place and its group's can
 * match its packets, so moving its rules up changes no verdict); groups
 * are by on_fail.  0 or -ENOMEM.
 */
static int plan_groups(struct nftplan *p, const struct conf *c)
{
	size_t n = 0, cnt = c->nprotect ? c->nprotect : 1;

	p->protect = c->protect;
	p->grp = calloc(cnt, sizeof(*p->grp));
	p->gports = calloc(cnt, sizeof(*p->gports));
	if (!p->grp || !p->gports)
		return -ENOMEM;
	for (int how = ON_FAIL_RESET; how <= ON_FAIL_DROP; how++) {
		struct nftplan_group *first = NULL;

		for (size_t i = 0; i < c->nprotect; i++) {
			if ((int)c->protect[i].on_fail != how || !groupable(c, i))
				continue;
			if (!first) {
				first = &p->grp[i];
				first->ports = &p->gports[n];
			} else {
				p->grp[i].merged = true;
			}
			p->gports[n++] = c->protect[i].port;
			first->nports++;
		}
	}
	return 0;
}

static int make(const struct conf *c, struct nftplan *p, bool hiding)
{
	bool integ = false, hide = false, local = false;

	plan_start(c, p);
	p->hiding = hiding;
	if (plan_groups(p, c) < 0)
		p->failed = true;
	plan_add(p, RK_MARK_INTEG, NULL, NULL);
	for (size_t i = 0; i < c->nprotect; i++) {
		const struct conf_protect *e = &c->protect[i];

		if (e->naddrs == 0)
			plan_entry(p, e, NULL);
		for (size_t a = 0; a < e->naddrs; a++)
			plan_entry(p, e, &e->addrs[a]);
		integ = integ || e->integrity_len > 0;
		hide = hide || hides(p, e);
		local = local || answers_locally(e);
	}
	if (hide) {
		/*
		 * The closed-port rules' segments (FIN/NULL/Xmas, no connection)
		 * go on past an empty queue still coded NOCONN (the daemon drops
		 * every one it answers, and clears the code of one it passes):
		 * the kernel answers those with its RST.
		 */
		plan_push(p, (struct nftplan_rule){ .kind = RK_NOCONN_RESET,
					    .chain = CH_PREROUTING_LATE });
		/*
		 * After the queue: a SYN the daemon let through goes on; any
		 * other new connection to a hiding port (one it refused, or one
		 * no daemon saw, the queue rule's bypass) is redirected to a
		 * closed port.
		 */
		plan_push(p, (struct nftplan_rule){ .kind = RK_NAT_ACCEPTED,
					    .chain = CH_PREROUTING_NAT });
		plan_each(p, c, RK_NAT_REFUSE, CH_PREROUTING_NAT, want_hiding);
	}
	if (integ) {
		/*
		 * The service's side of integrity flows: its data waits until
		 * the client's bytes verify, and its acknowledgement of them
		 * ends the checking (pending.h).
		 */
		plan_each(p, c, RK_INTEG_REPLY, CH_POSTROUTING, want_integrity);
	}
	if (local) {
		/*
		 * FIN/NULL/Xmas probes of this host's protected ports, after the
		 * host's filter chains (a firewall that drops them keeps them
		 * silent); with no daemon, input_late answers them.
		 */
		plan_each(p, c, RK_STRAY_QUEUE, CH_INPUT_CLOSED, want_local_reset);
		if (hide)
			plan_push(p, (struct nftplan_rule){ .kind = RK_NOCONN_RESET,
						    .chain = CH_INPUT_LATE });
		if (c->closed_ports == CLOSED_DAEMON)
			plan_closed(p, c);
	}
	for (size_t i = 0; i < c->nknock; i++) {
		const struct conf_knock *k = &c->knock[i];

		plan_client(p, RK_CLIENT_SYN, CH_OUTPUT_RAW, k, false);
		plan_gateway_syn(p, k);
		/*
		 * Errors about the flow carry a quote of its segment as it
		 * left, shifted, which conntrack's adjustment never touches.
		 */
		plan_client(p, RK_CLIENT_ICMP, CH_INPUT_ICMP, k, false);
		plan_gateway(p, RK_CLIENT_FWD_ICMP, CH_FORWARD_ICMP, k);
		if (c->translate == TRANSLATE_USER)
			plan_user_path(p, k);
	}
	plan_gateway_nat(p, c);
	if (p->failed) {
		nftplan_free(p);
		return -ENOMEM;
	}
	return 0;
}

/* 0 or -ENOMEM (then nothing is planned). */
int nftplan_make(const struct conf *c, struct nftplan *p)
{
	return make(c, p, false);
}

int nftplan_make_hiding(const struct conf *c, struct nftplan *p)
{
	return make(c, p, true);
}
