/*
 * fwcompat.c - xtables matches and targets for the firewall judge (see
 * fwcompat.h).  Each match is decided from the view of the packet the
 * way the kernel's xt_*.c decides it, for the fields a port and the
 * redirect change; what only the source or the moment decides (addresses,
 * rate limits, recent lists) is shared by both packets; anything else is
 * not known.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/xt_addrtype.h>
#include <linux/netfilter/xt_conntrack.h>
#include <linux/netfilter/xt_multiport.h>
#include <linux/netfilter/xt_state.h>
#include <linux/netfilter/xt_tcpudp.h>
#include <linux/netfilter_ipv4/ipt_REJECT.h>
#include <linux/netfilter_ipv6/ip6t_REJECT.h>

#include "kernel/fw/fwcompat.h"

enum {
	ICMP_UNREACH4 = 3,	/* ICMP destination unreachable */
	ICMP_UNREACH6 = 1,	/* ICMPv6 destination unreachable */
	TCP_SYN = 0x02,
};

uint32_t fw_view_ct_state(const struct fw_view *v)
{
	/* Before conntrack a packet has no entry, which ct state calls invalid. */
	return v->tracked ? NF_CT_STATE_BIT(IP_CT_NEW) : NF_CT_STATE_INVALID_BIT;
}

uint32_t fw_view_ct_status(const struct fw_view *v)
{
	uint32_t s = 0;

	if (v->dnat)
		s |= IPS_DST_NAT;
	if (v->nat_done)
		s |= IPS_DST_NAT_DONE;
	if (v->src_nat_done)
		s |= IPS_SRC_NAT_DONE;
	return s;
}

static enum fw_cond cond(bool b)
{
	return b ? FC_TRUE : FC_FALSE;
}

/* -m conntrack, revisions 1 to 3: the fields all three share. */
static enum fw_cond conntrack(const uint8_t *info, size_t len, uint32_t rev,
			      const struct fw_view *v)
{
	uint16_t flags, inv, state_mask, status_mask, l4proto;
	uint32_t statebit = v->tracked ? NF_CT_STATE_BIT(IP_CT_NEW) : XT_CONNTRACK_STATE_INVALID;

	if (rev == 1 && len >= sizeof(struct xt_conntrack_mtinfo1)) {
		const struct xt_conntrack_mtinfo1 *m = (const void *)info;

		flags = m->match_flags;
		inv = m->invert_flags;
		state_mask = m->state_mask;
		status_mask = m->status_mask;
		l4proto = m->l4proto;
	} else if ((rev == 2 && len >= sizeof(struct xt_conntrack_mtinfo2)) ||
		   (rev == 3 && len >= sizeof(struct xt_conntrack_mtinfo3))) {
		const struct xt_conntrack_mtinfo2 *m = (const void *)info;

		flags = m->match_flags;
		inv = m->invert_flags;
		state_mask = m->state_mask;
		status_mask = m->status_mask;
		l4proto = m->l4proto;
	} else {
		return FC_UNKNOWN;
	}
	if (v->dnat)
		statebit |= XT_CONNTRACK_STATE_DNAT;
	if ((flags & XT_CONNTRACK_STATE) &&
	    !!(state_mask & statebit) == !!(inv & XT_CONNTRACK_STATE))
		return FC_FALSE;
	if (!v->tracked && (flags & ~(XT_CONNTRACK_STATE | XT_CONNTRACK_STATE_ALIAS)))
		return FC_FALSE;	/* no entry: every other test fails */
	if ((flags & XT_CONNTRACK_STATUS) &&
	    !!(status_mask & fw_view_ct_status(v)) == !!(inv & XT_CONNTRACK_STATUS))
		return FC_FALSE;
	if ((flags & XT_CONNTRACK_PROTO) && (l4proto == IPPROTO_TCP) == !!(inv & XT_CONNTRACK_PROTO))
		return FC_FALSE;
	/* Both are in the original direction: --ctdir ORIGINAL is the inverted test. */
	if ((flags & XT_CONNTRACK_DIRECTION) && !(inv & XT_CONNTRACK_DIRECTION))
		return FC_FALSE;
	/* Port tests of the tuples: the redirect changes them. */
	if (flags & (XT_CONNTRACK_ORIGDST_PORT | XT_CONNTRACK_REPLSRC_PORT | XT_CONNTRACK_EXPIRES))
		return FC_UNKNOWN;
	/* The addresses and the source port are the prober's: alike for both. */
	if (flags & (XT_CONNTRACK_ORIGSRC | XT_CONNTRACK_ORIGDST | XT_CONNTRACK_REPLSRC |
		     XT_CONNTRACK_REPLDST | XT_CONNTRACK_ORIGSRC_PORT | XT_CONNTRACK_REPLDST_PORT))
		return FC_SHARED;
	return FC_TRUE;
}

static bool in_ports(uint16_t port, const uint16_t *ports, const uint8_t *pflags, unsigned count)
{
	for (unsigned i = 0; i < count && i < XT_MULTI_PORTS; i++) {
		if (pflags && pflags[i] && i + 1 < count) {
			if (port >= ports[i] && port <= ports[i + 1])
				return true;
			i++;
		} else if (port == ports[i]) {
			return true;
		}
	}
	return false;
}

static enum fw_cond multiport(const uint8_t *info, size_t len, uint32_t rev,
			      const struct fw_view *v)
{
	const uint16_t *ports;
	const uint8_t *pflags = NULL;
	uint8_t flags, count, invert = 0;
	bool hit;

	if (rev == 1 && len >= sizeof(struct xt_multiport_v1)) {
		const struct xt_multiport_v1 *m = (const void *)info;

		flags = m->flags;
		count = m->count;
		ports = m->ports;
		pflags = m->pflags;
		invert = m->invert;
	} else if (rev == 0 && len >= sizeof(struct xt_multiport)) {
		const struct xt_multiport *m = (const void *)info;

		flags = m->flags;
		count = m->count;
		ports = m->ports;
	} else {
		return FC_UNKNOWN;
	}
	switch (flags) {
	case XT_MULTIPORT_DESTINATION:
		hit = in_ports(v->dport, ports, pflags, count);
		return cond(hit != !!invert);
	case XT_MULTIPORT_EITHER:
		if (in_ports(v->dport, ports, pflags, count))
			return cond(!invert);
		return FC_SHARED;	/* the prober's source port */
	default:
		return FC_SHARED;
	}
}

static enum fw_cond tcp(const uint8_t *info, size_t len, const struct fw_view *v)
{
	const struct xt_tcp *m = (const void *)info;
	bool shared = false;

	if (len < sizeof(*m))
		return FC_UNKNOWN;
	if ((v->dport >= m->dpts[0] && v->dport <= m->dpts[1]) == !!(m->invflags & XT_TCP_INV_DSTPT))
		return FC_FALSE;
	if (((TCP_SYN & m->flg_mask) == m->flg_cmp) == !!(m->invflags & XT_TCP_INV_FLAGS))
		return FC_FALSE;
	if (m->spts[0] != 0 || m->spts[1] != 0xffff || (m->invflags & XT_TCP_INV_SRCPT))
		shared = true;
	if (m->option)
		shared = true;
	return shared ? FC_SHARED : FC_TRUE;
}

/* -m addrtype: the destination is a local address for both (the redirect keeps it local). */
static enum fw_cond addrtype(const uint8_t *info, size_t len, uint32_t rev)
{
	uint16_t source, dest;
	bool inv_dest;

	if (rev == 1 && len >= sizeof(struct xt_addrtype_info_v1)) {
		const struct xt_addrtype_info_v1 *m = (const void *)info;

		source = m->source;
		dest = m->dest;
		inv_dest = m->flags & XT_ADDRTYPE_INVERT_DEST;
	} else if (rev == 0 && len >= sizeof(struct xt_addrtype_info)) {
		const struct xt_addrtype_info *m = (const void *)info;

		source = m->source;
		dest = m->dest;
		inv_dest = m->invert_dest;
	} else {
		return FC_UNKNOWN;
	}
	if (dest && !!(dest & XT_ADDRTYPE_LOCAL) == inv_dest)
		return FC_FALSE;
	return source ? FC_SHARED : FC_TRUE;
}

/* Matches that look only at what both packets share: the source, the moment, the interface. */
static const char *const shared_matches[] = {
	"limit", "hashlimit", "recent", "connlimit", "statistic", "time", "iprange", "mac",
	"pkttype", "length", "ttl", "hl", "physdev", "rpfilter", "set", "policy", "devgroup",
	"cpu", "quota", "connbytes", "helper", "realm", "dscp", "tos", "ecn", "u32", "string",
	"bpf", "connmark", "icmp", "icmp6", "udp", "sctp", "esp", "ah", "frag", "ipv6header",
	"hbh", "dst", "rt", "mh", "tcpmss", "ipvs", "nfacct", "cluster", "osf", "socket",
	"owner", "cgroup", "ipcomp", "l2tp", "dccp", "conntrack_helper", NULL,
};

enum fw_cond fw_compat_match(const struct fw_expr *e, const uint8_t *blob,
			     const struct fw_view *v)
{
	/*
	 * The blob sits wherever the netlink attribute put it, with no
	 * alignment promised; the xt_* structs need theirs, so every match
	 * reads a copy.  A blob longer than any struct read here is cut: the
	 * fields past it are never looked at.
	 */
	union {
		struct xt_conntrack_mtinfo3 ct;
		struct xt_multiport_v1 mp;
		struct xt_tcp tcp;
		struct xt_addrtype_info_v1 at;
		struct xt_state_info st;
		uint8_t bytes[512];
	} copy;
	size_t len = e->info.len < sizeof(copy) ? e->info.len : sizeof(copy);
	const uint8_t *info = copy.bytes;

	memset(&copy, 0, sizeof(copy));
	memcpy(copy.bytes, blob, len);
	if (strcmp(e->name, "comment") == 0)
		return FC_TRUE;
	if (strcmp(e->name, "conntrack") == 0)
		return conntrack(info, len, e->key, v);
	if (strcmp(e->name, "state") == 0) {
		const struct xt_state_info *m = (const void *)info;

		if (len < sizeof(*m))
			return FC_UNKNOWN;
		return cond(m->statemask & fw_view_ct_state(v));
	}
	if (strcmp(e->name, "multiport") == 0)
		return multiport(info, len, e->key, v);
	if (strcmp(e->name, "tcp") == 0)
		return tcp(info, len, v);
	if (strcmp(e->name, "addrtype") == 0)
		return addrtype(info, len, e->key);
	/* "mark" reads the packet mark, which knockgw's bits make differ: not known. */
	for (const char *const *n = shared_matches; *n; n++)
		if (strcmp(e->name, *n) == 0)
			return FC_SHARED;
	return FC_UNKNOWN;
}

static void icmp(struct fw_answer *a, uint8_t family, uint8_t code4, uint8_t code6)
{
	a->kind = FA_ICMP;
	a->icmp_type = family == NFPROTO_IPV6 ? ICMP_UNREACH6 : ICMP_UNREACH4;
	a->icmp_code = family == NFPROTO_IPV6 ? code6 : code4;
}

void fw_reject_answer(uint32_t type, uint32_t code, uint8_t family, struct fw_answer *a)
{
	switch (type) {
	case NFT_REJECT_TCP_RST:
		a->kind = FA_RST;
		return;
	case NFT_REJECT_ICMP_UNREACH:
		icmp(a, family, (uint8_t)code, (uint8_t)code);
		return;
	case NFT_REJECT_ICMPX_UNREACH:
		switch (code) {
		case NFT_REJECT_ICMPX_NO_ROUTE:
			icmp(a, family, 0, 0);
			return;
		case NFT_REJECT_ICMPX_PORT_UNREACH:
			icmp(a, family, 3, 4);
			return;
		case NFT_REJECT_ICMPX_HOST_UNREACH:
			icmp(a, family, 1, 3);
			return;
		case NFT_REJECT_ICMPX_ADMIN_PROHIBITED:
			icmp(a, family, 13, 1);
			return;
		}
		break;
	}
	a->kind = FA_UNKNOWN;
	snprintf(a->why, sizeof(a->why), "a reject of an unknown kind (%u, %u)", type, code);
}

static void xt_reject(uint32_t with, uint8_t family, struct fw_answer *a)
{
	static const uint8_t v4[] = {
		[IPT_ICMP_NET_UNREACHABLE] = 0, [IPT_ICMP_HOST_UNREACHABLE] = 1,
		[IPT_ICMP_PROT_UNREACHABLE] = 2, [IPT_ICMP_PORT_UNREACHABLE] = 3,
		[IPT_ICMP_NET_PROHIBITED] = 9, [IPT_ICMP_HOST_PROHIBITED] = 10,
		[IPT_ICMP_ADMIN_PROHIBITED] = 13,
	};
	static const uint8_t v6[] = {
		[IP6T_ICMP6_NO_ROUTE] = 0, [IP6T_ICMP6_ADM_PROHIBITED] = 1,
		[IP6T_ICMP6_NOT_NEIGHBOUR] = 2, [IP6T_ICMP6_ADDR_UNREACH] = 3,
		[IP6T_ICMP6_PORT_UNREACH] = 4, [IP6T_ICMP6_POLICY_FAIL] = 5,
		[IP6T_ICMP6_REJECT_ROUTE] = 6,
	};

	if (family == NFPROTO_IPV6) {
		if (with == IP6T_TCP_RESET) {
			a->kind = FA_RST;
			return;
		}
		if (with < sizeof(v6) && with != IP6T_ICMP6_ECHOREPLY) {
			icmp(a, family, 0, v6[with]);
			return;
		}
	} else {
		if (with == IPT_TCP_RESET) {
			a->kind = FA_RST;
			return;
		}
		if (with < sizeof(v4) && with != IPT_ICMP_ECHOREPLY) {
			icmp(a, family, v4[with], 0);
			return;
		}
	}
	a->kind = FA_UNKNOWN;
	snprintf(a->why, sizeof(a->why), "REJECT --reject-with of an unknown kind (%u)", with);
}

/* Targets that change nothing about where the packet goes. */
static const char *const nop_targets[] = {
	"LOG", "NFLOG", "ULOG", "MARK", "CONNMARK", "TCPMSS", "CT", "NOTRACK", "AUDIT",
	"CLASSIFY", "DSCP", "TOS", "TTL", "HL", "SECMARK", "CONNSECMARK", "TRACE", "CHECKSUM",
	"LED", "IDLETIMER", "RATEEST", "SET", "NFACCT", "TCPOPTSTRIP", "HMARK", NULL,
};

enum fw_tgt fw_compat_target(const struct fw_expr *e, const uint8_t *info, uint8_t family,
			     struct fw_answer *a)
{
	if (strcmp(e->name, "REJECT") == 0) {
		uint32_t with;

		if (e->info.len < sizeof(with))
			return FT_UNKNOWN;
		memcpy(&with, info, sizeof(with));
		xt_reject(with, family, a);
		return a->kind == FA_UNKNOWN ? FT_UNKNOWN : FT_ANSWER;
	}
	if (strcmp(e->name, "ACCEPT") == 0)
		return FT_ACCEPT;
	if (strcmp(e->name, "DROP") == 0)
		return FT_DROP;
	if (strcmp(e->name, "RETURN") == 0)
		return FT_RETURN;
	for (const char *const *n = nop_targets; *n; n++)
		if (strcmp(e->name, *n) == 0)
			return FT_NOP;
	return FT_UNKNOWN;
}
