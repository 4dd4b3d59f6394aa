/*
 * nftprint.c - the planned ruleset in nft syntax, for `knockgw print-rules`
 * (nftrules_print, nftrules.h): the same plan the install renders as
 * libnftnl messages (nftexpr.c), so the two cannot drift apart;
 * tests/netns/0008 loads this text with nft -f and compares the two.
 */
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

#include "nftplan.h"
#include "nftrules.h"

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

/* ct original ip[6] saddr/daddr (nftexpr.c, x_ct_addr). */
static void print_ct_addr(FILE *f, const struct prefix *a, bool src)
{
	fputs("ct original ", f);
	print_addr(f, a, src);
}

static void print_queue(FILE *f, const struct nftplan *p, bool bypass)
{
	bypass = bypass || p->bypass;
	if (p->qtotal > 1)
		fprintf(f, "queue num %u-%u%s", p->qnum, p->qnum + p->qtotal - 1,
			bypass ? " bypass" : "");
	else
		fprintf(f, "queue num %u%s", p->qnum, bypass ? " bypass" : "");
}

static void print_rule(FILE *f, const struct nftplan *p, const struct nftplan_rule *r)
{
	const struct kgw_marks *m = &p->m;
	unsigned keep = ~m->mask, ct = m->ct_integ;

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
	case RK_CLOSED_SOCKET:
		fprintf(f, "tcp flags & (ack | rst) == 0x0 socket transparent %u accept\n", r->value);
		return;
	case RK_CLOSED:
		fputs("tcp flags & (ack | rst) == 0x0 counter ", f);
		print_queue(f, p, true);
		fputc('\n', f);
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
		print_queue(f, p, true);
		fputc('\n', f);
		return;
	default:
		break;
	}
	if (r->local)
		fputs("fib daddr type local ", f);
	if (r->from) {
		/* Gateway rules: the source first, whichever prefix it is. */
		print_addr(f, r->addr_is_src ? r->addr : r->from, true);
		print_addr(f, r->addr_is_src ? r->from : r->addr, false);
	} else if (r->addr) {
		print_addr(f, r->addr, r->addr_is_src);
	}
	fprintf(f, "tcp %s %u ", r->addr_is_src ? "sport" : "dport", r->port);
	switch (r->kind) {
	case RK_SYN_HIDE:
	case RK_SYN:
		fputs("tcp flags & (syn | ack) == syn ", f);
		if (r->kind == RK_SYN_HIDE)
			fprintf(f, "iif != \"lo\" ct state new meta mark set meta mark & 0x%08x | "
				   "0x%08x counter ", keep, m->newsyn);
		else
			fprintf(f, "meta mark set meta mark & 0x%08x counter ", keep);
		if (r->kind == RK_SYN_HIDE && p->hiding)
			fputs("accept", f);
		else
			print_queue(f, p, r->kind == RK_SYN_HIDE);
		break;
	case RK_NAT_REFUSE:
		fputs("tcp flags & (syn | ack) == syn counter ", f);
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
		print_queue(f, p, r->bypass);
		break;
	case RK_STRAY_DROP:
		fputs("ct state new,invalid tcp flags & (syn | ack) != syn counter drop", f);
		break;
	case RK_NOCONN:
		fprintf(f, "ct state new,untracked tcp flags & (syn | ack) != syn "
			   "meta mark set meta mark & 0x%08x | 0x%08x counter ",
			keep, m->noconn);
		print_queue(f, p, r->bypass);
		break;
	case RK_INVALID_INTEG:
		fprintf(f, "ct state invalid tcp flags & (syn | ack) != syn "
			   "meta mark set meta mark & 0x%08x | 0x%08x counter ",
			keep, m->invalid);
		print_queue(f, p, false);
		break;
	case RK_INTEG:
		fprintf(f, "ct mark & 0x%08x == 0x%08x ct direction original "
			   "meta mark set meta mark & 0x%08x counter ",
			ct, ct, keep);
		print_queue(f, p, false);
		break;
	case RK_INTEG_REPLY:
		fprintf(f, "ct mark & 0x%08x == 0x%08x ct direction reply "
			   "meta mark set meta mark & 0x%08x | 0x%08x counter ",
			ct, ct, keep, m->reply);
		print_queue(f, p, false);
		break;
	case RK_CLIENT_SYN:
		fputs("tcp flags & (syn | ack) == syn counter ", f);
		print_queue(f, p, false);
		break;
	case RK_CLIENT_OUT:
		fputs("tcp flags & (syn | ack) != syn counter ", f);
		print_queue(f, p, false);
		break;
	case RK_CLIENT_IN:
	case RK_CLIENT_FWD_IN:
		fprintf(f, "tcp flags & ack == ack ct label %u counter ", p->ct_label);
		print_queue(f, p, false);
		break;
	case RK_CLIENT_IN_NOCT:
	case RK_CLIENT_FWD_IN_NOCT:
		fputs("tcp flags & ack == ack ct state invalid,untracked counter ", f);
		print_queue(f, p, false);
		break;
	case RK_CLIENT_FWD_SYN:
		fputs("tcp flags & (syn | ack) == syn fib daddr type != local ", f);
		if (r->iif)
			fprintf(f, "iifname \"%s\" ", r->iif);
		fprintf(f, "meta mark set meta mark & 0x%08x | 0x%08x counter ", keep, m->fwd);
		print_queue(f, p, false);
		break;
	case RK_CLIENT_FWD_SPOOF:
		fprintf(f, "tcp flags & (syn | ack) == syn fib daddr type != local %scounter drop",
			r->rpf ? "fib saddr . iif oif missing " : "");
		break;
	case RK_CLIENT_FWD_OUT:
		fprintf(f, "tcp flags & (syn | ack) != syn fib daddr type != local "
			   "meta mark set meta mark & 0x%08x | 0x%08x counter ", keep, m->fwd);
		print_queue(f, p, false);
		break;
	case RK_CLOSED_SKIP:
		fputs("return", f);
		break;
	default:
		break;
	}
	fputc('\n', f);
}

void nftrules_print(const struct conf *c, enum nft_queue_kind kind, FILE *f)
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

