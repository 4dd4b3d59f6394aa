/*
 * test_fwjudge.c - the firewall judge (fwjudge.h) on rulesets built by
 * hand, expression by expression as nft and iptables-nft write them: each
 * row builds one, follows a refused SYN (22 redirected to 1) and a SYN to
 * an unused port through it, and checks the result and both answers.
 * Table-driven; no root, no kernel.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/xt_conntrack.h>
#include <linux/netfilter/xt_multiport.h>
#include <linux/netfilter_ipv4/ipt_REJECT.h>
#include <linux/netfilter_ipv6/ip6t_REJECT.h>

#include "kernel/fw/fwjudge.h"
#include "kernel/fw/fwrules.h"
#include "unit.h"

enum { REFUSE = 1, PROTECTED = 22, UNUSED = 4000, MARK_MASK = 0x7f000000 };

/* ------------------------------------------------------------ builders */

static struct fw_ruleset RS;
static size_t cur_chain;
static uint8_t cur_family;	/* the probes' (compat targets are per family) */

static size_t chain(const char *table, const char *name, uint8_t family, bool base, uint32_t hook,
		    int prio, int policy)
{
	struct fw_chain c = { .family = family, .base = base, .hook = hook, .prio = prio,
			      .policy = policy };

	snprintf(c.table, sizeof(c.table), "%s", table);
	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.type, sizeof(c.type), "filter");
	fw_add_chain(&RS, &c);
	return RS.nchains - 1;
}

/* An input chain of table inet t with a policy; rules go to it. */
static void input(int policy)
{
	cur_chain = chain("t", "input", NFPROTO_INET, true, NF_INET_LOCAL_IN, 0, policy);
}

/* A rule of the current chain (its rules must be added in one run). */
static void rule(void)
{
	struct fw_chain *c = &RS.chains[cur_chain];

	if (c->n == 0)
		c->first = (uint32_t)RS.nrules;
	fw_add_rule(&RS, 100 + RS.nrules);
	c->n++;
}

static void ex(struct fw_expr e)
{
	if (!e.kind && !e.name[0])
		e.kind = FX_OTHER;
	fw_add_expr(&RS, &e);
}

static struct fw_bytes B(const void *p, size_t n)
{
	return fw_bytes_add(&RS, p, n);
}

static void dport_load(void)
{
	ex((struct fw_expr){ .kind = FX_PAYLOAD, .dreg = 0, .key = NFT_PAYLOAD_TRANSPORT_HEADER,
			     .offset = 2, .len = 2 });
}

static void cmp(uint32_t op, const void *d, size_t n)
{
	ex((struct fw_expr){ .kind = FX_CMP, .sreg = 0, .op = op, .data = B(d, n) });
}

static void cmp_port(uint16_t p)
{
	uint8_t be[2] = { (uint8_t)(p >> 8), (uint8_t)p };

	dport_load();
	cmp(NFT_CMP_EQ, be, 2);
}

static void verdict(int v)
{
	ex((struct fw_expr){ .kind = FX_IMM, .dreg = FW_REG_VERDICT, .verdict = v });
}

static void jump(int v, const char *to)
{
	ex((struct fw_expr){ .kind = FX_IMM, .dreg = FW_REG_VERDICT, .verdict = v,
			     .info = B(to, strlen(to)) });
}

/* ct KEY & mask != 0 (KEY a u32 in host order). */
static void ct_bits(uint32_t key, uint32_t mask)
{
	uint32_t zero = 0;

	ex((struct fw_expr){ .kind = FX_CT, .dreg = 0, .key = key, .flags = UINT32_MAX });
	ex((struct fw_expr){ .kind = FX_BITWISE, .sreg = 0, .dreg = 0, .len = 4,
			     .data = B(&mask, 4), .data2 = B(&zero, 4) });
	cmp(NFT_CMP_NEQ, &zero, 4);
}

static void reject(uint32_t type, uint32_t code)
{
	ex((struct fw_expr){ .kind = FX_REJECT, .key = type, .op = code });
}

static void named(enum fw_ex kind, const char *name, uint32_t rev, const void *info, size_t n)
{
	struct fw_expr e = { .kind = kind, .key = rev, .info = B(info, n) };

	snprintf(e.name, sizeof(e.name), "%s", name);
	ex(e);
}

/* A set of table t (2-byte keys), with elements given as ports; 0 ends them. */
static uint32_t port_set(const char *name, uint32_t flags, ...)
{
	struct fw_set s = { .family = NFPROTO_INET, .flags = flags, .key_len = 2 };
	va_list ap;
	int p;

	snprintf(s.table, sizeof(s.table), "t");
	snprintf(s.name, sizeof(s.name), "%s", name);
	fw_add_set(&RS, &s);
	va_start(ap, flags);
	while ((p = va_arg(ap, int)) != 0) {
		uint8_t be[2] = { (uint8_t)(p >> 8), (uint8_t)p };
		struct fw_elem el = { .key = B(be, 2) };

		if (p < 0) {	/* an interval's end (exclusive) */
			be[0] = (uint8_t)(-p >> 8);
			be[1] = (uint8_t)-p;
			el.key = B(be, 2);
			el.interval_end = true;
		}
		fw_add_elem(&RS, &el);
	}
	va_end(ap);
	return (uint32_t)(RS.nsets - 1);
}

static void lookup(uint32_t set, uint32_t flags)
{
	dport_load();
	ex((struct fw_expr){ .kind = FX_LOOKUP, .sreg = 0, .dreg = FW_REG_NONE, .set = set,
			     .flags = flags });
}

/* ------------------------------------------------------------ rulesets */

static void none(void)
{
}

static void drop_policy(void)
{
	input(NF_DROP);
	rule(), ct_bits(NFT_CT_STATE, NF_CT_STATE_BIT(IP_CT_ESTABLISHED) |
					  NF_CT_STATE_BIT(IP_CT_RELATED)), verdict(NF_ACCEPT);
	rule(), ex((struct fw_expr){ .kind = FX_META, .dreg = 0, .key = NFT_META_IIFNAME });
	cmp(NFT_CMP_EQ, "lo\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16), verdict(NF_ACCEPT);
	rule(), cmp_port(22), verdict(NF_ACCEPT);
}

static void drop_allow_1(void)
{
	drop_policy();
	rule(), cmp_port(1), verdict(NF_ACCEPT);
}

static void drop_dnat_accept(void)
{
	input(NF_DROP);
	rule(), ct_bits(NFT_CT_STATUS, IPS_DST_NAT), verdict(NF_ACCEPT);
}

static void reject_policy(void)
{
	input(NF_ACCEPT);
	rule(), cmp_port(22), verdict(NF_ACCEPT);
	rule(), reject(NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
}

static void reject_dnat_accept(void)
{
	input(NF_ACCEPT);
	rule(), ct_bits(NFT_CT_STATUS, IPS_DST_NAT), verdict(NF_ACCEPT);
	rule(), reject(NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
}

static void by_source(void)
{
	uint8_t ten = 10, v4 = NFPROTO_IPV4;

	input(NF_DROP);
	rule();
	ex((struct fw_expr){ .kind = FX_META, .dreg = 0, .key = NFT_META_NFPROTO });
	cmp(NFT_CMP_EQ, &v4, 1);
	ex((struct fw_expr){ .kind = FX_PAYLOAD, .dreg = 0, .key = NFT_PAYLOAD_NETWORK_HEADER,
			     .offset = 12, .len = 1 });
	cmp(NFT_CMP_EQ, &ten, 1), verdict(NF_ACCEPT);
}

static void set_allows_1(void)
{
	uint32_t s = port_set("__set0", NFT_SET_ANONYMOUS, 1, 22, 0);

	input(NF_DROP);
	rule(), lookup(s, 0), verdict(NF_ACCEPT);
}

static void set_allows_80(void)
{
	uint32_t s = port_set("__set0", NFT_SET_ANONYMOUS, 80, 443, 22, 0);

	input(NF_DROP);
	rule(), lookup(s, 0), verdict(NF_ACCEPT);
}

static void low_ports_dropped(void)
{
	/* tcp dport 1-1023 drop: an interval set 1 .. 1024 (exclusive end). */
	uint32_t s = port_set("low", NFT_SET_INTERVAL, 1, -1024, 0);

	input(NF_ACCEPT);
	rule(), lookup(s, 0), verdict(NF_DROP);
}

static void mark_decides(void)
{
	uint32_t zero = 0;

	input(NF_DROP);
	rule(), ex((struct fw_expr){ .kind = FX_META, .dreg = 0, .key = NFT_META_MARK });
	cmp(NFT_CMP_EQ, &zero, 4), verdict(NF_ACCEPT);
}

static void unknown_expr(void)
{
	input(NF_DROP);
	rule(), named(FX_OTHER, "fancy", 0, NULL, 0), verdict(NF_ACCEPT);
}

static void log_with_limit(void)
{
	input(NF_DROP);
	rule(), named(FX_MAYBE, "limit", 0, NULL, 0), named(FX_NOP, "log", 0, NULL, 0);
}

static void ufw_reject(void)
{
	struct xt_conntrack_mtinfo3 ct = { .match_flags = XT_CONNTRACK_STATE,
					   .state_mask = XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED) };
	/* ip6t_reject_info has the same layout, another number for the RST. */
	struct ipt_reject_info rst = { .with = cur_family == NFPROTO_IPV6 ? IP6T_TCP_RESET
									   : IPT_TCP_RESET };

	input(NF_DROP);
	rule(), named(FX_MATCH, "conntrack", 3, &ct, sizeof(ct)), verdict(NF_ACCEPT);
	rule(), named(FX_MATCH, "comment", 0, "x", 2), cmp_port(22), verdict(NF_ACCEPT);
	rule(), named(FX_TARGET, "LOG", 0, NULL, 0);
	rule(), named(FX_TARGET, "REJECT", 0, &rst, sizeof(rst));
}

/*
 * The same, with the blobs where netlink leaves them: a 3-byte comment
 * first puts the conntrack and multiport infos at odd addresses, which
 * the matches must read without assuming the structs' alignment.
 */
static void ufw_reject_unaligned(void)
{
	struct xt_conntrack_mtinfo3 ct = { .match_flags = XT_CONNTRACK_STATE,
					   .state_mask = XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED) };
	struct xt_multiport_v1 mp = { .flags = XT_MULTIPORT_DESTINATION, .count = 1,
				      .ports = { 2222 } };
	struct ipt_reject_info rst = { .with = cur_family == NFPROTO_IPV6 ? IP6T_TCP_RESET
									   : IPT_TCP_RESET };

	input(NF_DROP);
	rule(), named(FX_MATCH, "comment", 0, "ufw", 3),
		named(FX_MATCH, "conntrack", 3, &ct, sizeof(ct)), verdict(NF_ACCEPT);
	rule(), named(FX_MATCH, "comment", 0, "abc", 3),
		named(FX_MATCH, "multiport", 1, &mp, sizeof(mp)), verdict(NF_ACCEPT);
	rule(), named(FX_TARGET, "REJECT", 0, &rst, sizeof(rst));
}

static void multiport_allows_1(void)
{
	struct xt_multiport_v1 mp = { .flags = XT_MULTIPORT_DESTINATION, .count = 2,
				      .ports = { 1, 22 } };

	input(NF_DROP);
	rule(), named(FX_MATCH, "multiport", 1, &mp, sizeof(mp)), verdict(NF_ACCEPT);
}

static void jump_accepts_1(void)
{
	input(NF_DROP);
	rule(), jump(NFT_JUMP, "allow");
	cur_chain = chain("t", "allow", NFPROTO_INET, false, 0, 0, NF_ACCEPT);
	rule(), cmp_port(2000), verdict(NFT_RETURN);
	rule(), cmp_port(1), verdict(NF_ACCEPT);
}

static void raw_drops_22(void)
{
	/* Before the redirect a refused SYN is still to port 22. */
	cur_chain = chain("t", "raw", NFPROTO_INET, true, NF_INET_PRE_ROUTING, -300, NF_ACCEPT);
	rule(), cmp_port(22), verdict(NF_DROP);
}

static void loops(void)
{
	input(NF_ACCEPT);
	rule(), jump(NFT_JUMP, "input");
}

static void other_table_ours(void)
{
	/* knockgw's own table (inet kgw) is left out, whatever it holds. */
	cur_chain = chain("kgw", "input", NFPROTO_INET, true, NF_INET_LOCAL_IN, 0, NF_DROP);
}

static const struct row {
	const char *what;
	void (*build)(void);
	uint16_t unused;		/* 0: UNUSED */
	bool fixed_silent;		/* on_fail "drop" */
	enum fw_result want;
	enum fw_answer_kind refused, other;
	bool varied;
} rows[] = {
	{ "no firewall: both get the kernel's RST", none, 0, false, FW_ALIKE, FA_KERNEL, FA_KERNEL, false },
	{ "drop policy: both silent", drop_policy, 0, false, FW_ALIKE, FA_SILENT, FA_SILENT, false },
	{ "drop policy, port 1 allowed: the protected port stands out", drop_allow_1, 0, false,
	  FW_DIFFER, FA_KERNEL, FA_SILENT, false },
	{ "drop policy, DNAT'ed accepted", drop_dnat_accept, 0, false, FW_DIFFER, FA_KERNEL,
	  FA_SILENT, false },
	{ "reject policy: both the same ICMP", reject_policy, 0, false, FW_ALIKE, FA_ICMP, FA_ICMP, false },
	{ "reject policy, DNAT'ed accepted", reject_dnat_accept, 0, false, FW_DIFFER, FA_KERNEL,
	  FA_ICMP, false },
	{ "by source: alike in every world", by_source, 0, false, FW_ALIKE, FA_KERNEL, FA_KERNEL,
	  true },
	{ "a set allows 1 and 22", set_allows_1, 0, false, FW_DIFFER, FA_KERNEL, FA_SILENT, false },
	{ "a set allows 80, 443, 22", set_allows_80, 0, false, FW_ALIKE, FA_SILENT, FA_SILENT, false },
	{ "ports 1-1023 dropped, unused 2 too", low_ports_dropped, 2, false, FW_ALIKE, FA_SILENT,
	  FA_SILENT, false },
	{ "ports 1-1023 dropped, unused 4000 not", low_ports_dropped, 0, false, FW_DIFFER,
	  FA_SILENT, FA_KERNEL, false },
	{ "the mark decides: cannot tell", mark_decides, 0, false, FW_UNSURE, FA_UNKNOWN,
	  FA_UNKNOWN, false },
	{ "an unknown expression decides: cannot tell", unknown_expr, 0, false, FW_UNSURE,
	  FA_UNKNOWN, FA_UNKNOWN, false },
	{ "a log rule under a limit decides nothing", log_with_limit, 0, false, FW_ALIKE,
	  FA_SILENT, FA_SILENT, false },
	{ "iptables-nft REJECT --reject-with tcp-reset", ufw_reject, 0, false, FW_ALIKE, FA_RST,
	  FA_RST, false },
	{ "the same, its infos at odd addresses", ufw_reject_unaligned, 0, false, FW_ALIKE, FA_RST,
	  FA_RST, false },
	{ "-m multiport --dports 1,22", multiport_allows_1, 0, false, FW_DIFFER, FA_KERNEL,
	  FA_SILENT, false },
	{ "a jump to a chain that accepts 1", jump_accepts_1, 0, false, FW_DIFFER, FA_KERNEL,
	  FA_SILENT, false },
	{ "raw prerouting drops 22 (before the redirect)", raw_drops_22, 0, false, FW_DIFFER,
	  FA_SILENT, FA_KERNEL, false },
	{ "a chain that jumps to itself: cannot tell", loops, 0, false, FW_UNSURE, FA_UNKNOWN,
	  FA_UNKNOWN, false },
	{ "knockgw's own table is left out", other_table_ours, 0, false, FW_ALIKE, FA_KERNEL,
	  FA_KERNEL, false },
	{ "on_fail drop, no firewall: silence stands out", none, 0, true, FW_DIFFER, FA_SILENT,
	  FA_KERNEL, false },
	{ "on_fail drop, drop policy: alike", drop_policy, 0, true, FW_ALIKE, FA_SILENT,
	  FA_SILENT, false },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];
		uint16_t u = w->unused ? w->unused : UNUSED;

		for (uint8_t fam = NFPROTO_IPV4; fam <= NFPROTO_IPV6; fam += NFPROTO_IPV6 - NFPROTO_IPV4) {
			struct fw_probe refused = { .family = fam, .dport = PROTECTED,
						    .dport_nat = REFUSE, .dnat = !w->fixed_silent,
						    .mark_mask = MARK_MASK, .fixed = w->fixed_silent,
						    .fixed_kind = FA_SILENT };
			struct fw_probe unused = { .family = fam, .dport = u, .dport_nat = u,
						   .mark_mask = MARK_MASK };
			struct fw_judgement j;
			/* by_source's rule is IPv4's: for IPv6 no rule accepts. */
			bool v6_src = w->build == by_source && fam == NFPROTO_IPV6;

			memset(&RS, 0, sizeof(RS));
			cur_family = fam;
			w->build();
			CHECK(fw_judge(&RS, "kgw", &refused, &unused, &j) == 0, "%s: judged", w->what);
			CHECK_EQ_U(j.result, w->want, "%s (family %u): result", w->what, fam);
			CHECK_EQ_U(j.refused.kind, v6_src ? FA_SILENT : w->refused,
				   "%s (family %u): the refused SYN's answer", w->what, fam);
			if (w->want != FW_UNSURE)
				CHECK_EQ_U(j.unused.kind, v6_src ? FA_SILENT : w->other,
					   "%s (family %u): the unused port's answer", w->what, fam);
			CHECK_EQ_U(j.varied, w->varied && !v6_src, "%s (family %u): varied",
				   w->what, fam);
			fw_ruleset_free(&RS);
		}
	}
	return unit_done("fwjudge");
}
