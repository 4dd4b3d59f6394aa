/*
 * nftexpr.c - a planned rule as libnftnl expressions (see nftexpr.h).
 *
 * Every match loads a field into register 1 and compares it there; every
 * rule ends in its verdict (or none: the chain goes on).  The byte layout
 * is what nft itself generates for the same text, so `nft list` shows the
 * installed rules as print-rules writes them.
 */
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_NFQUEUE.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "kernel/nft/nftexpr.h"

enum {
	TCP_FLAGS_OFF = 13,
	TCP_DPORT_OFF = 2,
	TCP_SYN_BIT = 0x02,
	TCP_RST_BIT = 0x04,
	TCP_ACK_BIT = 0x10,
	CT_STATE_NEW_OR_INVALID = NF_CT_STATE_INVALID_BIT | NF_CT_STATE_BIT(IP_CT_NEW),
	CT_STATE_NEW_OR_UNTRACKED = NF_CT_STATE_BIT(IP_CT_NEW) | NF_CT_STATE_UNTRACKED_BIT,
	LOOPBACK_IFINDEX = 1,		/* lo, in every network namespace */
	RTN_LOCAL_TYPE = 2,		/* RTN_LOCAL: an address of this host */
};

/* The keyed expressions: a packet's meta data and its conntrack entry. */
enum key_expr { KEY_META, KEY_CT };

static const struct {
	const char *name;
	uint16_t key, dreg, sreg;
} key_exprs[] = {
	[KEY_META] = { "meta", NFTNL_EXPR_META_KEY, NFTNL_EXPR_META_DREG, NFTNL_EXPR_META_SREG },
	[KEY_CT] = { "ct", NFTNL_EXPR_CT_KEY, NFTNL_EXPR_CT_DREG, NFTNL_EXPR_CT_SREG },
};

/* Loads key into register 1 or, with store, sets key from it. */
static void x_key(struct nftnl_rule *r, enum key_expr x, uint32_t key, bool store)
{
	struct nftnl_expr *e = nftnl_expr_alloc(key_exprs[x].name);

	nftnl_expr_set_u32(e, key_exprs[x].key, key);
	nftnl_expr_set_u32(e, store ? key_exprs[x].sreg : key_exprs[x].dreg, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

static void x_payload(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("payload");

	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

/* reg1 = (reg1 & mask) ^ xor */
static void x_bitwise(struct nftnl_rule *r, const void *mask, const void *xor, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("bitwise");

	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, xor, len);
	nftnl_rule_add_expr(r, e);
}

static void x_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("cmp");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
	nftnl_rule_add_expr(r, e);
}

/* reg1 & mask == value, on a 32-bit host-order key (marks, ct state). */
static void x_masked_eq32(struct nftnl_rule *r, uint32_t mask, uint32_t value, uint32_t op)
{
	uint32_t zero = 0;

	x_bitwise(r, &mask, &zero, sizeof(mask));
	x_cmp(r, op, &value, sizeof(value));
}

static void x_verdict(struct nftnl_rule *r, int verdict)
{
	struct nftnl_expr *e = nftnl_expr_alloc("immediate");

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	nftnl_rule_add_expr(r, e);
}

static void x_counter(struct nftnl_rule *r)
{
	nftnl_rule_add_expr(r, nftnl_expr_alloc("counter"));
}

/* Queues to rule ru's set (nftplan.h), with bypass when ru or the plan asks. */
static void x_queue(struct nftnl_rule *r, const struct nftplan *p, enum nft_queue_kind kind,
		    const struct nftplan_rule *ru, bool bypass)
{
	uint16_t num = p->qnum[ru->qset < QSET_MAX ? ru->qset : QSET_SYN];
	struct nftnl_expr *e;

	bypass = bypass || p->bypass;
	if (kind == NFT_QUEUE_NATIVE) {
		e = nftnl_expr_alloc("queue");
		nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_NUM, num);
		nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_TOTAL, p->qtotal);
		nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_FLAGS, bypass ? NFT_QUEUE_FLAG_BYPASS : 0);
	} else {
		/* libnftnl owns (frees) the info blob; xtables blobs are host order. */
		struct xt_NFQ_info_v3 *info = calloc(1, XT_ALIGN(sizeof(*info)));

		e = nftnl_expr_alloc("target");
		if (info) {
			info->queuenum = num;
			info->queues_total = p->qtotal;
			info->flags = bypass ? NFQ_FLAG_BYPASS : 0;
		}
		nftnl_expr_set_str(e, NFTNL_EXPR_TG_NAME, "NFQUEUE");
		nftnl_expr_set_u32(e, NFTNL_EXPR_TG_REV, 3);
		nftnl_expr_set(e, NFTNL_EXPR_TG_INFO, info, XT_ALIGN(sizeof(*info)));
	}
	nftnl_rule_add_expr(r, e);
}

/* dep: the family check nft puts before a rule's first address match. */
static void x_addr(struct nftnl_rule *r, const struct prefix *a, bool src, bool dep)
{
	uint8_t nfproto = a->family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;
	uint32_t len = a->family == AF_INET ? 4 : 16;
	uint8_t mask[16] = { 0 }, zero[16] = { 0 }, want[16];

	if (dep) {
		x_key(r, KEY_META, NFT_META_NFPROTO, false);
		x_cmp(r, NFT_CMP_EQ, &nfproto, 1);
	}
	/* Source at IPv4 offset 12 / IPv6 8, destination at 16 / 24. */
	x_payload(r, NFT_PAYLOAD_NETWORK_HEADER,
		  a->family == AF_INET ? (src ? 12 : 16) : (src ? 8 : 24), len);
	for (unsigned bit = 0; bit < a->len; bit++)
		mask[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
	for (unsigned i = 0; i < len; i++)
		want[i] = a->addr[i] & mask[i];
	if (a->len != len * 8)
		x_bitwise(r, mask, zero, len);
	x_cmp(r, NFT_CMP_EQ, want, len);
}

/* ct original ip[6] saddr/daddr: the address of the flow's original tuple. */
static void x_ct_addr(struct nftnl_rule *r, const struct prefix *a, bool src)
{
	uint32_t len = a->family == AF_INET ? 4 : 16;
	uint8_t mask[16] = { 0 }, zero[16] = { 0 }, want[16];
	struct nftnl_expr *e = nftnl_expr_alloc("ct");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY,
			   a->family == AF_INET ? (src ? NFT_CT_SRC_IP : NFT_CT_DST_IP)
						: (src ? NFT_CT_SRC_IP6 : NFT_CT_DST_IP6));
	nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, IP_CT_DIR_ORIGINAL);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	for (unsigned bit = 0; bit < a->len; bit++)
		mask[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
	for (unsigned i = 0; i < len; i++)
		want[i] = a->addr[i] & mask[i];
	if (a->len != len * 8)
		x_bitwise(r, mask, zero, len);
	x_cmp(r, NFT_CMP_EQ, want, len);
}

/*
 * An ICMP error about a flow of a knock entry's (RK_CLIENT_ICMP: this
 * host's, at input; RK_CLIENT_FWD_ICMP: a routed one's, at forward): the
 * error's conntrack entry is the flow's, so its original tuple names the
 * flow; conntrack relates only errors, and those about our side's segments
 * come in the reply direction.  An error from loopback is this host's own
 * (a local reject) about a segment not yet shifted: left alone.  Bypass:
 * with no daemon the error goes on as it came.
 */
static void build_icmp_rule(struct nftnl_rule *r, const struct nftplan_rule *ru,
			    const struct nftplan *p, enum nft_queue_kind kind)
{
	uint8_t l4 = ru->addr->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	uint8_t dir_reply = IP_CT_DIR_REPLY;
	uint16_t port = htons(ru->port);
	uint32_t lo = LOOPBACK_IFINDEX;
	struct nftnl_expr *e;

	x_key(r, KEY_META, NFT_META_L4PROTO, false);
	x_cmp(r, NFT_CMP_EQ, &l4, 1);
	x_key(r, KEY_CT, NFT_CT_STATE, false);
	x_masked_eq32(r, NF_CT_STATE_BIT(IP_CT_RELATED), 0, NFT_CMP_NEQ);
	x_key(r, KEY_CT, NFT_CT_DIRECTION, false);
	x_cmp(r, NFT_CMP_EQ, &dir_reply, 1);
	if (ru->from)
		x_ct_addr(r, ru->from, true);
	x_ct_addr(r, ru->addr, false);
	e = nftnl_expr_alloc("ct");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_PROTO_DST);
	nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, IP_CT_DIR_ORIGINAL);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	x_cmp(r, NFT_CMP_EQ, &port, sizeof(port));
	if (!ru->from) {
		x_key(r, KEY_META, NFT_META_IIF, false);
		x_cmp(r, NFT_CMP_NEQ, &lo, sizeof(lo));
	}
	x_counter(r);
	x_queue(r, p, kind, ru, true);
}

/*
 * fib daddr type local (op EQ): the destination is one of this host's
 * addresses; with NEQ, it is not (a packet this host routes).
 */
static void x_fib_local_op(struct nftnl_rule *r, uint32_t op)
{
	struct nftnl_expr *e = nftnl_expr_alloc("fib");
	uint32_t local = RTN_LOCAL_TYPE;

	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, NFTA_FIB_F_DADDR);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	x_cmp(r, op, &local, sizeof(local));
}

/*
 * fib saddr . iif oif missing: no route back to the source leaves through
 * the interface the packet came in on (the strict reverse-path test).
 */
static void x_fib_rpf_missing(struct nftnl_rule *r)
{
	struct nftnl_expr *e = nftnl_expr_alloc("fib");
	uint32_t missing = 0;	/* a whole register, as nft compares it */

	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS,
			   NFTA_FIB_F_SADDR | NFTA_FIB_F_IIF | NFTA_FIB_F_PRESENT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_OIF);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	x_cmp(r, NFT_CMP_EQ, &missing, sizeof(missing));
}

/* iifname NAME: the interface's name, zero-padded as the kernel keeps it. */
static void x_iifname(struct nftnl_rule *r, const char *name)
{
	char buf[IFNAMSIZ] = { 0 };

	snprintf(buf, sizeof(buf), "%s", name);
	x_key(r, KEY_META, NFT_META_IIFNAME, false);
	x_cmp(r, NFT_CMP_EQ, buf, sizeof(buf));
}

static void x_fib_local(struct nftnl_rule *r)
{
	x_fib_local_op(r, NFT_CMP_EQ);
}

/* redirect to :port (this host's address, that port). */
static void x_redirect(struct nftnl_rule *r, uint16_t port)
{
	struct nftnl_expr *imm = nftnl_expr_alloc("immediate");
	struct nftnl_expr *e = nftnl_expr_alloc("redir");
	uint16_t be = htons(port);

	nftnl_expr_set_u32(imm, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	nftnl_expr_set(imm, NFTNL_EXPR_IMM_DATA, &be, sizeof(be));
	nftnl_rule_add_expr(r, imm);
	nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	nftnl_rule_add_expr(r, e);
}

/* dnat to (the packet's own destination):port, family's addresses. */
static void x_dnat_same_host(struct nftnl_rule *r, int family, uint16_t port)
{
	struct nftnl_expr *imm = nftnl_expr_alloc("immediate");
	struct nftnl_expr *e = nftnl_expr_alloc("nat");
	uint16_t be = htons(port);

	/* Destination at IPv4 offset 16 / IPv6 24, into register 1. */
	x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, family == AF_INET ? 16 : 24,
		  family == AF_INET ? 4 : 16);
	nftnl_expr_set_u32(imm, NFTNL_EXPR_IMM_DREG, NFT_REG_2);
	nftnl_expr_set(imm, NFTNL_EXPR_IMM_DATA, &be, sizeof(be));
	nftnl_rule_add_expr(r, imm);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_TYPE, NFT_NAT_DNAT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_FAMILY, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_REG_ADDR_MIN, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_REG_PROTO_MIN, NFT_REG_2);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	nftnl_rule_add_expr(r, e);
}

static void x_reject_rst(struct nftnl_rule *r)
{
	struct nftnl_expr *e = nftnl_expr_alloc("reject");

	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_TCP_RST);
	nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, 0);
	nftnl_rule_add_expr(r, e);
}

/* Our bits of the packet mark cleared, the rest kept. */
static void x_clear_ours(struct nftnl_rule *r, const struct kgw_marks *m)
{
	uint32_t keep = ~m->mask, zero = 0;

	x_key(r, KEY_META, NFT_META_MARK, false);
	x_bitwise(r, &keep, &zero, sizeof(keep));
	x_key(r, KEY_META, NFT_META_MARK, true);
}

static void x_l4_tcp(struct nftnl_rule *r)
{
	uint8_t tcp = IPPROTO_TCP;

	x_key(r, KEY_META, NFT_META_L4PROTO, false);
	x_cmp(r, NFT_CMP_EQ, &tcp, 1);
}

/* ct state (one state bit) is, or (op NEQ) is not, set. */
static void x_ct_state(struct nftnl_rule *r, uint32_t bits, uint32_t op)
{
	x_key(r, KEY_CT, NFT_CT_STATE, false);
	x_masked_eq32(r, bits, 0, op);
}

static void x_iif_not_lo(struct nftnl_rule *r)
{
	uint32_t lo = LOOPBACK_IFINDEX;

	x_key(r, KEY_META, NFT_META_IIF, false);
	x_cmp(r, NFT_CMP_NEQ, &lo, sizeof(lo));
}

/* Our bits of the packet mark = code (0: cleared), the rest kept. */
static void x_set_code(struct nftnl_rule *r, const struct kgw_marks *m, uint32_t code)
{
	uint32_t keep = ~m->mask;

	x_key(r, KEY_META, NFT_META_MARK, false);
	x_bitwise(r, &keep, &code, sizeof(keep));
	x_key(r, KEY_META, NFT_META_MARK, true);
}

/* socket transparent == value: no match at all when no socket is found. */
static void x_socket_transparent(struct nftnl_rule *r, uint8_t value)
{
	struct nftnl_expr *e = nftnl_expr_alloc("socket");

	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_KEY, NFT_SOCKET_TRANSPARENT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	x_cmp(r, NFT_CMP_EQ, &value, 1);
}

static void x_tcp_port(struct nftnl_rule *r, uint16_t port, bool src)
{
	uint16_t be = htons(port);

	x_l4_tcp(r);
	x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, src ? 0 : TCP_DPORT_OFF, 2);
	x_cmp(r, NFT_CMP_EQ, &be, 2);
}

/*
 * ct label N: our flag's bit set (nft loads the 128 label bits, masks the
 * one and compares with zero, in the kernel's word layout, marks.h).
 */
static void x_ct_label(struct nftnl_rule *r, unsigned bit)
{
	uint32_t mask[KGW_LABEL_WORDS] = { 0 }, zero[KGW_LABEL_WORDS] = { 0 };

	mask[bit / 32 % KGW_LABEL_WORDS] = 1u << (bit % 32);
	x_key(r, KEY_CT, NFT_CT_LABELS, false);
	x_bitwise(r, mask, zero, sizeof(mask));
	x_cmp(r, NFT_CMP_NEQ, zero, sizeof(zero));
}

static void x_tcp_flags(struct nftnl_rule *r, uint8_t mask, uint8_t value, uint32_t op)
{
	uint8_t zero = 0;

	x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, TCP_FLAGS_OFF, 1);
	x_bitwise(r, &mask, &zero, 1);
	x_cmp(r, op, &value, 1);
}

/*
 * What every closed_ports rule of chain ch matches first (nftplan.c): at
 * prerouting a new connection that no DNAT took (not from loopback, no
 * RST); at input a segment with none of SYN, ACK, RST (not from loopback).
 */
static void x_probe_prefix(struct nftnl_rule *r, enum nftplan_chain ch)
{
	x_l4_tcp(r);
	if (ch == CH_PREROUTING_CLOSED) {
		x_ct_state(r, NF_CT_STATE_BIT(IP_CT_NEW), NFT_CMP_NEQ);
		x_iif_not_lo(r);
		x_tcp_flags(r, TCP_RST_BIT, 0, NFT_CMP_EQ);
		x_key(r, KEY_CT, NFT_CT_STATUS, false);
		x_masked_eq32(r, IPS_DST_NAT, 0, NFT_CMP_EQ);
	} else {
		x_iif_not_lo(r);
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT | TCP_RST_BIT, 0, NFT_CMP_EQ);
	}
}

/*
 * Our INTEG code in the mark of a SYN: set the ct bit, clear our bits, and
 * go on through the chain.  No verdict: a mark alone, which some other
 * software might set, never lets a packet skip the knock rule.
 */
static void build_mark_rule(struct nftnl_rule *r, const struct kgw_marks *m)
{
	uint32_t ct_mask = ~m->ct_integ, ct_xor = m->ct_integ;
	uint32_t keep = ~m->mask, zero = 0;

	x_l4_tcp(r);
	x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_EQ);
	x_key(r, KEY_META, NFT_META_MARK, false);
	x_masked_eq32(r, m->mask, m->integ, NFT_CMP_EQ);
	/* ct mark = (ct mark & ~BIT) ^ BIT: sets the one bit. */
	x_key(r, KEY_CT, NFT_CT_MARK, false);
	x_bitwise(r, &ct_mask, &ct_xor, sizeof(ct_mask));
	x_key(r, KEY_CT, NFT_CT_MARK, true);
	x_key(r, KEY_META, NFT_META_MARK, false);
	x_bitwise(r, &keep, &zero, sizeof(keep));
	x_key(r, KEY_META, NFT_META_MARK, true);
	x_counter(r);
}

static void build_rule(struct nftnl_rule *r, const struct nftplan_rule *ru, const struct nftplan *p,
		       enum nft_queue_kind kind)
{
	uint8_t dir_original = 0, dir_reply = 1;	/* IP_CT_DIR_ORIGINAL, _REPLY */
	const struct kgw_marks *m = &p->m;
	uint32_t zero = 0;

	switch (ru->kind) {
	case RK_MARK_INTEG:
		build_mark_rule(r, m);
		return;
	case RK_CT_KEEP:
		x_key(r, KEY_CT, NFT_CT_STATE, false);
		x_masked_eq32(r, NF_CT_STATE_BIT(IP_CT_ESTABLISHED), 0, NFT_CMP_NEQ);
		x_counter(r);
		return;
	case RK_PROBE_GATE:
		x_ct_state(r, NF_CT_STATE_BIT(IP_CT_NEW), NFT_CMP_EQ);
		x_verdict(r, NFT_RETURN);
		return;
	case RK_PROBE_SOCKET:
		x_probe_prefix(r, ru->chain);
		x_socket_transparent(r, ru->value);
		x_verdict(r, NF_ACCEPT);
		return;
	case RK_PROBE:
		x_probe_prefix(r, ru->chain);
		if (ru->local)
			x_fib_local(r);
		/*
		 * A new connection: NEWSYN, it goes on to the kernel's answer
		 * (mimic_closed_port); a FIN/NULL/Xmas probe: no code, no
		 * reject of ours when no daemon answers it (the kernel does).
		 */
		x_set_code(r, m, ru->chain == CH_PREROUTING_CLOSED ? m->newsyn : 0);
		x_counter(r);
		x_queue(r, p, kind, ru, ru->bypass);
		return;
	case RK_NOCONN_RESET:
		x_l4_tcp(r);
		x_key(r, KEY_META, NFT_META_MARK, false);
		x_masked_eq32(r, m->mask, m->noconn, NFT_CMP_EQ);
		x_counter(r);
		x_reject_rst(r);
		return;
	case RK_CLIENT_ICMP:
	case RK_CLIENT_FWD_ICMP:
		build_icmp_rule(r, ru, p, kind);
		return;
	case RK_NAT_ACCEPTED:
		/* Only a verdict sets ACCEPTED: the knock rules clear our bits. */
		x_l4_tcp(r);
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_EQ);
		x_key(r, KEY_META, NFT_META_MARK, false);
		x_masked_eq32(r, m->mask, m->accepted, NFT_CMP_EQ);
		x_clear_ours(r, m);
		x_counter(r);
		x_verdict(r, NF_ACCEPT);
		return;
	default:
		break;
	}
	if (ru->local)
		x_fib_local(r);
	if (ru->from) {
		/* Gateway rules: the source first, whichever prefix it is. */
		x_addr(r, ru->addr_is_src ? ru->addr : ru->from, true, true);
		x_addr(r, ru->addr_is_src ? ru->from : ru->addr, false, false);
	} else if (ru->addr) {
		x_addr(r, ru->addr, ru->addr_is_src, true);
	}
	x_tcp_port(r, ru->port, ru->addr_is_src);
	switch (ru->kind) {
	case RK_SYN_HIDE:
	case RK_SYN:
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_EQ);
		if (ru->kind == RK_SYN_HIDE) {
			/*
			 * Loopback's nat was decided at output, and an invalid or
			 * untracked SYN gets none: only a new, conntracked SYN
			 * from outside may go on to the nat chain with no daemon.
			 */
			x_iif_not_lo(r);
			x_ct_state(r, NF_CT_STATE_BIT(IP_CT_NEW), NFT_CMP_NEQ);
			/* Our bits = NEWSYN: the nat rule can refuse this one. */
			x_set_code(r, m, m->newsyn);
		} else {
			x_clear_ours(r, m);
		}
		x_counter(r);
		if (ru->kind == RK_SYN_HIDE && p->hiding)
			x_verdict(r, NF_ACCEPT);	/* on to the nat chain's refusal */
		else
			x_queue(r, p, kind, ru, ru->kind == RK_SYN_HIDE);
		break;
	case RK_NAT_REFUSE:
		/* A nat chain sees a connection's first packet only. */
		x_counter(r);
		if (ru->forward)
			x_dnat_same_host(r, ru->addr->family, p->refuse_port);
		else
			x_redirect(r, p->refuse_port);
		break;
	case RK_STRAY_QUEUE:
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT | TCP_RST_BIT, 0, NFT_CMP_EQ);
		/* NOCONN: with no daemon, the late chain's reject answers it. */
		x_set_code(r, m, m->noconn);
		x_counter(r);
		x_queue(r, p, kind, ru, ru->bypass);
		break;
	case RK_STRAY_DROP:
		x_ct_state(r, CT_STATE_NEW_OR_INVALID, NFT_CMP_NEQ);
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_NEQ);
		x_counter(r);
		x_verdict(r, NF_DROP);
		break;
	case RK_NOCONN_NEW:
		/*
		 * NEWSYN: refused, or past an empty queue, it goes on to the nat
		 * chain's closed port like a refused SYN.
		 */
		x_iif_not_lo(r);
		x_ct_state(r, NF_CT_STATE_BIT(IP_CT_NEW), NFT_CMP_NEQ);
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_NEQ);
		x_set_code(r, m, m->newsyn);
		x_counter(r);
		x_queue(r, p, kind, ru, ru->bypass);
		break;
	case RK_NOCONN:
	case RK_INVALID_INTEG:
		/* The mark tells the daemon which of the two queued it. */
		x_ct_state(r, ru->kind == RK_NOCONN ? CT_STATE_NEW_OR_UNTRACKED
						    : NF_CT_STATE_INVALID_BIT,
			   NFT_CMP_NEQ);
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_NEQ);
		x_set_code(r, m, ru->kind == RK_NOCONN ? m->noconn : m->invalid);
		x_counter(r);
		x_queue(r, p, kind, ru, ru->bypass);
		break;
	case RK_INTEG:
	case RK_INTEG_REPLY: {
		bool reply = ru->kind == RK_INTEG_REPLY;

		x_key(r, KEY_CT, NFT_CT_MARK, false);
		x_masked_eq32(r, m->ct_integ, m->ct_integ, NFT_CMP_EQ);
		x_key(r, KEY_CT, NFT_CT_DIRECTION, false);
		x_cmp(r, NFT_CMP_EQ, reply ? &dir_reply : &dir_original, 1);
		/*
		 * The daemon reads why a packet came from our bits: the service's
		 * side gets the reply code, the client's none, whatever it had.
		 */
		x_set_code(r, m, reply ? m->reply : zero);
		x_counter(r);
		x_queue(r, p, kind, ru, false);
		break;
	}
	case RK_CLIENT_SYN:
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_EQ);
		x_counter(r);
		x_queue(r, p, kind, ru, false);
		break;
	case RK_CLIENT_FWD_SYN:
	case RK_CLIENT_FWD_OUT:
		/*
		 * FWD tells the daemon it is a routed flow's, not the server's:
		 * its SYN, or (user path) a later packet going out.
		 */
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT,
			    ru->kind == RK_CLIENT_FWD_SYN ? NFT_CMP_EQ : NFT_CMP_NEQ);
		x_fib_local_op(r, NFT_CMP_NEQ);
		if (ru->iif)
			x_iifname(r, ru->iif);
		x_set_code(r, m, m->fwd);
		x_counter(r);
		x_queue(r, p, kind, ru, false);
		break;
	case RK_PROBE_SKIP:
		x_verdict(r, NFT_RETURN);
		break;
	case RK_CLIENT_FWD_SPOOF:
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_EQ);
		x_fib_local_op(r, NFT_CMP_NEQ);
		if (ru->rpf)
			x_fib_rpf_missing(r);
		x_counter(r);
		x_verdict(r, NF_DROP);
		break;
	case RK_CLIENT_OUT:
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_NEQ);
		x_counter(r);
		x_queue(r, p, kind, ru, false);
		break;
	case RK_CLIENT_IN:
	case RK_CLIENT_FWD_IN:
	case RK_CLIENT_IN_NOCT:
	case RK_CLIENT_FWD_IN_NOCT:
		/* Only an acknowledgement needs the shift back. */
		x_tcp_flags(r, TCP_ACK_BIT, TCP_ACK_BIT, NFT_CMP_EQ);
		if (ru->kind == RK_CLIENT_IN || ru->kind == RK_CLIENT_FWD_IN) {
			x_ct_label(r, p->ct_label);
		} else {
			x_key(r, KEY_CT, NFT_CT_STATE, false);
			x_masked_eq32(r, NF_CT_STATE_INVALID_BIT | NF_CT_STATE_UNTRACKED_BIT, 0,
				      NFT_CMP_NEQ);
		}
		x_counter(r);
		x_queue(r, p, kind, ru, false);
		break;
	default:
		break;
	}
}

struct nftnl_rule *nftexpr_rule(const char *table, const struct nftplan_rule *ru,
				const struct nftplan *p, enum nft_queue_kind kind)
{
	struct nftnl_rule *r = nftnl_rule_alloc();

	if (!r)
		return NULL;
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, nftplan_chain_def(ru->chain)->name);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	build_rule(r, ru, p, kind);
	return r;
}
