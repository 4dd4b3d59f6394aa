/*
 * nftprint.c - the planned ruleset as text (see nftprint.h).
 */
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel/nft/nftplan.h"
#include "kernel/nft/nftprint.h"
#include "kernel/nft/nftrules.h"

static void print_addr(FILE *f, const struct prefix *a, bool src)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned full = a->family == AF_INET ? 32 : 128;

	inet_ntop(a->family, a->addr, buf, sizeof(buf));
	fprintf(f, "%s %s %s", a->family == AF_INET ? "ip" : "ip6", src ? "saddr" : "daddr", buf);
	if (a->len != full)
		fprintf(f, "/%u", a->len);
	fputc(' ', f);
}

/* ct original ip[6] saddr/daddr (nftx.c, nftx_ct_addr). */
static void print_ct_addr(FILE *f, const struct prefix *a, bool src)
{
	fputs("ct original ", f);
	print_addr(f, a, src);
}

/* Rule r's queue statement: its set's queues (nftplan.h). */
static void print_queue(FILE *f, const struct nftplan *p, const struct nftplan_rule *r, bool bypass)
{
	unsigned num = p->qnum[r->qset < QSET_MAX ? r->qset : QSET_SYN];

	bypass = bypass || p->bypass;
	if (p->qtotal > 1)
		fprintf(f, "queue num %u-%u%s", num, num + p->qtotal - 1, bypass ? " bypass" : "");
	else
		fprintf(f, "queue num %u%s", num, bypass ? " bypass" : "");
}

/* What every closed_ports rule of chain ch matches first (nftx.c, nftx_probe_prefix). */
static void print_probe_prefix(FILE *f, enum nftplan_chain ch)
{
	if (ch == CH_INPUT_CLOSED_NAT)
		fputs("meta l4proto tcp iif != \"lo\" ct status & dnat == 0x0 ", f);
	else if (ch == CH_PREROUTING_CLOSED)
		fputs("meta l4proto tcp ct state new iif != \"lo\" tcp flags & rst == 0x0 "
		      "ct status & dnat == 0x0 ", f);
	else
		fputs("meta l4proto tcp iif != \"lo\" tcp flags & (syn | ack | rst) == 0x0 ", f);
}

static void print_rule(FILE *f, const struct nftplan *p, const struct nftplan_rule *r)
{
	const struct marks *m = &p->m;
	unsigned keep = ~m->mask, ct = m->ct_integ;
	const char *fib;

	fputs("\t\t", f);
	switch (r->kind) {
	case RK_MARK_INTEG:
		fprintf(f, "tcp flags & (syn | ack) == syn meta mark & 0x%08x == 0x%08x "
			   "ct mark set ct mark | 0x%08x meta mark set meta mark & 0x%08x counter\n",
			m->mask, m->integ, ct, keep);
		return;
	case RK_CT_KEEP:
		fputs("ct state established counter\n", f);
		return;
	case RK_PROBE_GATE:
		fputs("ct state & new == 0x0 return\n", f);
		return;
	case RK_PROBE_SOCKET:
		print_probe_prefix(f, r->chain);
		fputs("socket transparent <= 1 accept\n", f);
		return;
	case RK_PROBE:
		print_probe_prefix(f, r->chain);
		if (r->chain == CH_PREROUTING_CLOSED)
			fprintf(f, "%smeta mark set meta mark & 0x%08x | 0x%08x counter ",
				r->local ? "fib daddr type local " : "", keep, m->newsyn);
		else
			fprintf(f, "meta mark set meta mark & 0x%08x counter ", keep);
		print_queue(f, p, r, r->bypass);
		fputc('\n', f);
		return;
	case RK_PROBE_SNAT:
		fprintf(f, "meta nfproto %s ", r->value == 4 ? "ipv4" : "ipv6");
		print_probe_prefix(f, r->chain);
		fprintf(f, "counter snat %s to %s saddr : tcp sport ^ 32768\n",
			r->value == 4 ? "ip" : "ip6", r->value == 4 ? "ip" : "ip6");
		return;
	case RK_NAT_ACCEPTED:
		fprintf(f, "tcp flags & (syn | ack) == syn meta mark & 0x%08x == 0x%08x "
			   "meta mark set meta mark & 0x%08x counter accept\n",
			m->mask, m->accepted, keep);
		return;
	case RK_NOCONN_RESET:
		fprintf(f, "meta l4proto tcp meta mark & 0x%08x == 0x%08x counter reject with tcp reset\n",
			m->mask, m->noconn);
		return;
	case RK_CLIENT_ICMP:
	case RK_CLIENT_FWD_ICMP:
		fprintf(f, "meta l4proto %s ct state related ct direction reply ",
			r->addr->family == AF_INET ? "icmp" : "ipv6-icmp");
		if (r->from)
			print_ct_addr(f, r->from, true);
		print_ct_addr(f, r->addr, false);
		fprintf(f, "ct original proto-dst %u %scounter ", r->port,
			r->from ? "" : "iif != \"lo\" ");
		print_queue(f, p, r, true);
		fputc('\n', f);
		return;
	default:
		break;
	}
	if (r->from) {
		/* Gateway rules: the source first, whichever prefix it is. */
		print_addr(f, r->addr_is_src ? r->addr : r->from, true);
		print_addr(f, r->addr_is_src ? r->from : r->addr, false);
	} else if (r->addr) {
		print_addr(f, r->addr, r->addr_is_src);
	}
	fprintf(f, "tcp %s ", r->addr_is_src ? "sport" : "dport");
	if (r->nports > 1) {
		for (uint16_t i = 0; i < r->nports; i++)
			fprintf(f, "%s%u", i ? ", " : "{ ", r->ports[i]);
		fputs(" } ", f);
	} else {
		fprintf(f, "%u ", r->port);
	}
	/* The route is looked up last, past every cheaper test (nftexpr.c). */
	fib = r->local ? "fib daddr type local " : "";
	switch (r->kind) {
	case RK_SYN_HIDE:
	case RK_SYN:
		fputs("tcp flags & (syn | ack) == syn ", f);
		if (r->kind == RK_SYN_HIDE)
			fprintf(f, "iif != \"lo\" ct state new %smeta mark set meta mark & 0x%08x | "
				   "0x%08x counter ", fib, keep, m->newsyn);
		else
			fprintf(f, "%smeta mark set meta mark & 0x%08x counter ", fib, keep);
		if (r->kind == RK_SYN_HIDE && p->hiding)
			fputs("accept", f);
		else
			print_queue(f, p, r, r->kind == RK_SYN_HIDE);
		break;
	case RK_NAT_REFUSE:
		fprintf(f, "%scounter ", fib);
		if (r->forward) {
			const char *fam = r->addr->family == AF_INET ? "ip" : "ip6";

			fprintf(f, "dnat %s to %s daddr:%u", fam, fam, p->refuse_port);
		} else {
			fprintf(f, "redirect to :%u", p->refuse_port);
		}
		break;
	case RK_STRAY_QUEUE:
		fprintf(f, "tcp flags & (syn | ack | rst) == 0x0 meta mark set meta mark & 0x%08x | "
			   "0x%08x counter ", keep, m->noconn);
		print_queue(f, p, r, r->bypass);
		break;
	case RK_STRAY_DROP:
		fprintf(f, "ct state new,invalid tcp flags & (syn | ack) != syn %scounter drop", fib);
		break;
	case RK_NOCONN_NEW:
		fprintf(f, "iif != \"lo\" ct state new tcp flags & (syn | ack) != syn "
			   "%smeta mark set meta mark & 0x%08x | 0x%08x counter ",
			fib, keep, m->newsyn);
		print_queue(f, p, r, r->bypass);
		break;
	case RK_NOCONN:
		fprintf(f, "ct state new,untracked tcp flags & (syn | ack) != syn "
			   "%smeta mark set meta mark & 0x%08x | 0x%08x counter ",
			fib, keep, m->noconn);
		print_queue(f, p, r, r->bypass);
		break;
	case RK_INVALID_INTEG:
		fprintf(f, "ct state invalid tcp flags & (syn | ack) != syn "
			   "%smeta mark set meta mark & 0x%08x | 0x%08x counter ",
			fib, keep, m->invalid);
		print_queue(f, p, r, false);
		break;
	case RK_INTEG:
		fprintf(f, "ct mark & 0x%08x == 0x%08x ct direction original "
			   "%smeta mark set meta mark & 0x%08x counter ",
			ct, ct, fib, keep);
		print_queue(f, p, r, false);
		break;
	case RK_INTEG_REPLY:
		fprintf(f, "ct mark & 0x%08x == 0x%08x ct direction reply "
			   "meta mark set meta mark & 0x%08x | 0x%08x counter ",
			ct, ct, keep, m->reply);
		print_queue(f, p, r, false);
		break;
	case RK_CLIENT_SYN:
		fputs("tcp flags & (syn | ack) == syn counter ", f);
		print_queue(f, p, r, false);
		break;
	case RK_CLIENT_OUT:
		fputs("tcp flags & (syn | ack) != syn counter ", f);
		print_queue(f, p, r, false);
		break;
	case RK_CLIENT_IN:
	case RK_CLIENT_FWD_IN:
		fprintf(f, "tcp flags & ack == ack ct label %u counter ", p->ct_label);
		print_queue(f, p, r, false);
		break;
	case RK_CLIENT_IN_NOCT:
	case RK_CLIENT_FWD_IN_NOCT:
		fputs("tcp flags & ack == ack ct state invalid,untracked counter ", f);
		print_queue(f, p, r, false);
		break;
	case RK_CLIENT_FWD_SYN:
		fputs("tcp flags & (syn | ack) == syn fib daddr type != local ", f);
		if (r->iif)
			fprintf(f, "iifname \"%s\" ", r->iif);
		fprintf(f, "meta mark set meta mark & 0x%08x | 0x%08x counter ", keep, m->fwd);
		print_queue(f, p, r, false);
		break;
	case RK_CLIENT_FWD_SPOOF:
		fprintf(f, "tcp flags & (syn | ack) == syn fib daddr type != local %scounter drop",
			r->rpf ? "fib saddr . iif oif missing " : "");
		break;
	case RK_CLIENT_FWD_OUT:
		fprintf(f, "tcp flags & (syn | ack) != syn fib daddr type != local "
			   "meta mark set meta mark & 0x%08x | 0x%08x counter ", keep, m->fwd);
		print_queue(f, p, r, false);
		break;
	case RK_PROBE_SKIP:
		fputs("return", f);
		break;
	default:
		break;
	}
	fputc('\n', f);
}

void nftprint_ruleset(const struct conf *c, enum nft_queue_kind kind, FILE *f)
{
	struct nftplan *p = malloc(sizeof(*p));

	if (!p || nftplan_make(c, p) < 0) {
		fprintf(f, "# knockgw: out of memory planning the ruleset\n");
		free(p);
		return;
	}
	fprintf(f, "# knockgw ruleset for %s (knockgw print-rules)\n", c->path);
	if (kind == NFT_QUEUE_COMPAT)
		fprintf(f, "# This kernel lacks nft's queue expression: knockgw installs the\n"
			   "# xtables NFQUEUE target (nft compat) where this shows \"queue\".\n");
	fprintf(f, "table inet %s {\n", c->table);
	for (int ch = 0; ch < CH_MAX; ch++) {
		static const char *const hook_names[] = {
			[NF_INET_PRE_ROUTING] = "prerouting", [NF_INET_LOCAL_IN] = "input",
			[NF_INET_FORWARD] = "forward", [NF_INET_LOCAL_OUT] = "output",
			[NF_INET_POST_ROUTING] = "postrouting",
		};

		if (!p->used[ch])
			continue;
		fprintf(f, "\tchain %s {\n", nftplan_chain_def((enum nftplan_chain)ch)->name);
		fprintf(f, "\t\ttype %s hook %s priority %d; policy accept;\n", nftplan_chain_def((enum nftplan_chain)ch)->type,
			hook_names[nftplan_chain_def((enum nftplan_chain)ch)->hook],
			nftplan_chain_def((enum nftplan_chain)ch)->priority);
		for (size_t i = 0; i < p->n; i++)
			if (p->r[i].chain == (enum nftplan_chain)ch)
				print_rule(f, p, &p->r[i]);
		fprintf(f, "\t}\n");
	}
	fprintf(f, "}\n");
	nftplan_free(p);
	free(p);
}

/* ---------------------------------------------------------------- names */

static const char *kind_name(enum nftplan_kind k)
{
	switch (k) {
	case RK_MARK_INTEG:
		return "integrity flag rule";
	case RK_SYN_HIDE:
	case RK_SYN:
		return "knock rule";
	case RK_NAT_ACCEPTED:
		return "accepted-knock nat rule";
	case RK_NOCONN_RESET:
		return "closed-port reject rule";
	case RK_NAT_REFUSE:
		return "refusal nat rule (redirect to rules.refuse_port)";
	case RK_STRAY_QUEUE:
	case RK_STRAY_DROP:
	case RK_NOCONN_NEW:
	case RK_NOCONN:
		return "closed-port rule";
	case RK_INVALID_INTEG:
		return "integrity invalid-segment rule";
	case RK_INTEG:
		return "integrity rule";
	case RK_INTEG_REPLY:
		return "integrity reply rule";
	case RK_CLIENT_SYN:
		return "client knock rule";
	case RK_CLIENT_OUT:
	case RK_CLIENT_IN:
	case RK_CLIENT_IN_NOCT:
		return "client translation rule";
	case RK_CLIENT_FWD_SYN:
		return "gateway knock rule";
	case RK_CLIENT_FWD_SPOOF:
		return "gateway source-check rule (drops a from SYN that came from elsewhere)";
	case RK_CLIENT_FWD_OUT:
	case RK_CLIENT_FWD_IN:
	case RK_CLIENT_FWD_IN_NOCT:
		return "gateway translation rule";
	case RK_CLIENT_ICMP:
	case RK_CLIENT_FWD_ICMP:
		return "client ICMP error rule";
	case RK_CT_KEEP:
		return "conntrack keeper rule";
	case RK_PROBE_GATE:
	case RK_PROBE_SKIP:
		return "closed_ports rule";
	case RK_PROBE_SOCKET:
		return "closed_ports listener rule (closed_ports \"daemon\"; needs nft_socket)";
	case RK_PROBE:
		return "closed_ports rule";
	case RK_PROBE_SNAT:
		return "closed_ports nat rule (closed_ports \"daemon\"; needs nft_nat)";
	}
	return "rule";
}

void nftprint_rule_what(const struct nftplan_rule *ru, char *buf, size_t len)
{
	if (ru->nports > 1)
		snprintf(buf, len, "%s for ports %u and %u more (protect entries from line %d)",
			 kind_name(ru->kind), ru->port, (unsigned)ru->nports - 1, ru->entry_line);
	else if (ru->port)
		snprintf(buf, len, "%s for port %u (%s entry at line %d)", kind_name(ru->kind),
			 ru->port,
			 ru->chain == CH_PREROUTING || ru->chain == CH_PREROUTING_NAT ||
					 ru->chain == CH_INPUT_CLOSED || ru->chain == CH_POSTROUTING
				 ? "protect"
				 : "knock",
			 ru->entry_line);
	else
		snprintf(buf, len, "%s", kind_name(ru->kind));
}
