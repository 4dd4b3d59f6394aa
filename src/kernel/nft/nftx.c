/*
 * nftx.c - nf_tables expressions, one piece of a rule each (see nftx.h).
 */
#include <arpa/inet.h>
#include <linux/netfilter.h>
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

#include "kernel/nft/nftx.h"

enum {
	TCP_FLAGS_OFF = 13,
	TCP_DPORT_OFF = 2,
	RTN_LOCAL_TYPE = 2,		/* RTN_LOCAL: an address of this host */
};

static const struct {
	const char *name;
	uint16_t key, dreg, sreg;
} key_exprs[] = {
	[NFTX_META] = { "meta", NFTNL_EXPR_META_KEY, NFTNL_EXPR_META_DREG, NFTNL_EXPR_META_SREG },
	[NFTX_CT] = { "ct", NFTNL_EXPR_CT_KEY, NFTNL_EXPR_CT_DREG, NFTNL_EXPR_CT_SREG },
};

/* Loads key into register 1 or, with store, sets key from it. */
void nftx_key(struct nftnl_rule *r, enum nftx_key x, uint32_t key, bool store)
{
	struct nftnl_expr *e = nftnl_expr_alloc(key_exprs[x].name);

	nftnl_expr_set_u32(e, key_exprs[x].key, key);
	nftnl_expr_set_u32(e, store ? key_exprs[x].sreg : key_exprs[x].dreg, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

static void payload_to(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len,
		       uint32_t reg)
{
	struct nftnl_expr *e = nftnl_expr_alloc("payload");

	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, reg);
	nftnl_rule_add_expr(r, e);
}

static void nftx_payload(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len)
{
	payload_to(r, base, off, len, NFT_REG_1);
}

/* reg1 = (reg1 & mask) ^ xor */
void nftx_bitwise(struct nftnl_rule *r, const void *mask, const void *xor, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("bitwise");

	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, xor, len);
	nftnl_rule_add_expr(r, e);
}

void nftx_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("cmp");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
	nftnl_rule_add_expr(r, e);
}

/* reg1 & mask == value, on a 32-bit host-order key (marks, ct state). */
void nftx_masked_eq32(struct nftnl_rule *r, uint32_t mask, uint32_t value, uint32_t op)
{
	uint32_t zero = 0;

	nftx_bitwise(r, &mask, &zero, sizeof(mask));
	nftx_cmp(r, op, &value, sizeof(value));
}

void nftx_verdict(struct nftnl_rule *r, int verdict)
{
	struct nftnl_expr *e = nftnl_expr_alloc("immediate");

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	nftnl_rule_add_expr(r, e);
}

void nftx_counter(struct nftnl_rule *r)
{
	nftnl_rule_add_expr(r, nftnl_expr_alloc("counter"));
}

/* Queues to rule ru's set (nftplan.h), with bypass when ru or the plan asks. */
void nftx_queue(struct nftnl_rule *r, const struct nftplan *p, enum nft_queue_kind kind,
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

/* The address loaded in register 1 (len bytes) within prefix a: masked when a is shorter. */
static void prefix_cmp(struct nftnl_rule *r, const struct prefix *a, uint32_t len)
{
	uint8_t mask[16] = { 0 }, zero[16] = { 0 }, want[16];

	for (unsigned bit = 0; bit < a->len; bit++)
		mask[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
	for (unsigned i = 0; i < len; i++)
		want[i] = a->addr[i] & mask[i];
	if (a->len != len * 8)
		nftx_bitwise(r, mask, zero, len);
	nftx_cmp(r, NFT_CMP_EQ, want, len);
}

void nftx_nfproto(struct nftnl_rule *r, int family)
{
	uint8_t nfproto = family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;

	nftx_key(r, NFTX_META, NFT_META_NFPROTO, false);
	nftx_cmp(r, NFT_CMP_EQ, &nfproto, 1);
}

/* dep: the family check nft puts before a rule's first address match. */
void nftx_addr(struct nftnl_rule *r, const struct prefix *a, bool src, bool dep)
{
	uint32_t len = a->family == AF_INET ? 4 : 16;

	if (dep)
		nftx_nfproto(r, a->family);
	/* Source at IPv4 offset 12 / IPv6 8, destination at 16 / 24. */
	nftx_payload(r, NFT_PAYLOAD_NETWORK_HEADER,
		     a->family == AF_INET ? (src ? 12 : 16) : (src ? 8 : 24), len);
	prefix_cmp(r, a, len);
}

/* ct original ip[6] saddr/daddr: the address of the flow's original tuple. */
void nftx_ct_addr(struct nftnl_rule *r, const struct prefix *a, bool src)
{
	uint32_t len = a->family == AF_INET ? 4 : 16;
	struct nftnl_expr *e = nftnl_expr_alloc("ct");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY,
			   a->family == AF_INET ? (src ? NFT_CT_SRC_IP : NFT_CT_DST_IP)
						: (src ? NFT_CT_SRC_IP6 : NFT_CT_DST_IP6));
	nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, IP_CT_DIR_ORIGINAL);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	prefix_cmp(r, a, len);
}

/*
 * fib daddr type local (op EQ): the destination is one of this host's
 * addresses; with NEQ, it is not (a packet this host routes).
 */
void nftx_fib_local_op(struct nftnl_rule *r, uint32_t op)
{
	struct nftnl_expr *e = nftnl_expr_alloc("fib");
	uint32_t local = RTN_LOCAL_TYPE;

	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, NFTA_FIB_F_DADDR);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	nftx_cmp(r, op, &local, sizeof(local));
}

/*
 * fib saddr . iif oif missing: no route back to the source leaves through
 * the interface the packet came in on (the strict reverse-path test).
 */
void nftx_fib_rpf_missing(struct nftnl_rule *r)
{
	struct nftnl_expr *e = nftnl_expr_alloc("fib");
	uint32_t missing = 0;	/* a whole register, as nft compares it */

	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS,
			   NFTA_FIB_F_SADDR | NFTA_FIB_F_IIF | NFTA_FIB_F_PRESENT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_OIF);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	nftx_cmp(r, NFT_CMP_EQ, &missing, sizeof(missing));
}

/* iifname NAME: the interface's name, zero-padded as the kernel keeps it. */
void nftx_iifname(struct nftnl_rule *r, const char *name)
{
	char buf[IFNAMSIZ] = { 0 };

	snprintf(buf, sizeof(buf), "%s", name);
	nftx_key(r, NFTX_META, NFT_META_IIFNAME, false);
	nftx_cmp(r, NFT_CMP_EQ, buf, sizeof(buf));
}

void nftx_fib_local(struct nftnl_rule *r)
{
	nftx_fib_local_op(r, NFT_CMP_EQ);
}

/* redirect to :port (this host's address, that port). */
void nftx_redirect(struct nftnl_rule *r, uint16_t port)
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
/* nat of type (NFT_NAT_DNAT, _SNAT) to register 1's address, register 2's port. */
static void nat_to_regs(struct nftnl_rule *r, uint32_t type, int family)
{
	struct nftnl_expr *e = nftnl_expr_alloc("nat");

	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_TYPE, type);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_FAMILY, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_REG_ADDR_MIN, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_REG_PROTO_MIN, NFT_REG_2);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	nftnl_rule_add_expr(r, e);
}

void nftx_dnat_same_host(struct nftnl_rule *r, int family, uint16_t port)
{
	struct nftnl_expr *imm = nftnl_expr_alloc("immediate");
	uint16_t be = htons(port);

	/* Destination at IPv4 offset 16 / IPv6 24, into register 1. */
	nftx_payload(r, NFT_PAYLOAD_NETWORK_HEADER, family == AF_INET ? 16 : 24,
		     family == AF_INET ? 4 : 16);
	nftnl_expr_set_u32(imm, NFTNL_EXPR_IMM_DREG, NFT_REG_2);
	nftnl_expr_set(imm, NFTNL_EXPR_IMM_DATA, &be, sizeof(be));
	nftnl_rule_add_expr(r, imm);
	nat_to_regs(r, NFT_NAT_DNAT, family);
}

/*
 * snat to (the packet's own source):(its source port ^ 0x8000), family's
 * addresses: a port that always changes, one for one (nftplan.c).
 */
void nftx_snat_sport_flip(struct nftnl_rule *r, int family)
{
	struct nftnl_expr *flip = nftnl_expr_alloc("bitwise");
	uint16_t mask = 0xffff, top = htons(0x8000);

	/* Source at IPv4 offset 12 / IPv6 8, into register 1. */
	nftx_payload(r, NFT_PAYLOAD_NETWORK_HEADER, family == AF_INET ? 12 : 8,
		     family == AF_INET ? 4 : 16);
	payload_to(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 2, NFT_REG_2);
	nftnl_expr_set_u32(flip, NFTNL_EXPR_BITWISE_SREG, NFT_REG_2);
	nftnl_expr_set_u32(flip, NFTNL_EXPR_BITWISE_DREG, NFT_REG_2);
	nftnl_expr_set_u32(flip, NFTNL_EXPR_BITWISE_LEN, sizeof(mask));
	nftnl_expr_set(flip, NFTNL_EXPR_BITWISE_MASK, &mask, sizeof(mask));
	nftnl_expr_set(flip, NFTNL_EXPR_BITWISE_XOR, &top, sizeof(top));
	nftnl_rule_add_expr(r, flip);
	nat_to_regs(r, NFT_NAT_SNAT, family);
}

void nftx_reject_rst(struct nftnl_rule *r)
{
	struct nftnl_expr *e = nftnl_expr_alloc("reject");

	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_TCP_RST);
	nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, 0);
	nftnl_rule_add_expr(r, e);
}

/* Our bits of the packet mark cleared, the rest kept. */
void nftx_clear_ours(struct nftnl_rule *r, const struct marks *m)
{
	uint32_t keep = ~m->mask, zero = 0;

	nftx_key(r, NFTX_META, NFT_META_MARK, false);
	nftx_bitwise(r, &keep, &zero, sizeof(keep));
	nftx_key(r, NFTX_META, NFT_META_MARK, true);
}

void nftx_l4_tcp(struct nftnl_rule *r)
{
	uint8_t tcp = IPPROTO_TCP;

	nftx_key(r, NFTX_META, NFT_META_L4PROTO, false);
	nftx_cmp(r, NFT_CMP_EQ, &tcp, 1);
}

/* ct state (one state bit) is, or (op NEQ) is not, set. */
void nftx_ct_state(struct nftnl_rule *r, uint32_t bits, uint32_t op)
{
	nftx_key(r, NFTX_CT, NFT_CT_STATE, false);
	nftx_masked_eq32(r, bits, 0, op);
}

void nftx_iif_not_lo(struct nftnl_rule *r)
{
	uint32_t lo = NFTX_LOOPBACK;

	nftx_key(r, NFTX_META, NFT_META_IIF, false);
	nftx_cmp(r, NFT_CMP_NEQ, &lo, sizeof(lo));
}

/* Our bits of the packet mark = code (0: cleared), the rest kept. */
void nftx_set_code(struct nftnl_rule *r, const struct marks *m, uint32_t code)
{
	uint32_t keep = ~m->mask;

	nftx_key(r, NFTX_META, NFT_META_MARK, false);
	nftx_bitwise(r, &keep, &code, sizeof(keep));
	nftx_key(r, NFTX_META, NFT_META_MARK, true);
}

/* socket transparent == value: no match at all when no socket is found. */
void nftx_socket_found(struct nftnl_rule *r)
{
	struct nftnl_expr *e = nftnl_expr_alloc("socket");
	uint8_t one = 1;

	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_KEY, NFT_SOCKET_TRANSPARENT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	/* The flag is 0 or 1: any socket found passes. */
	nftx_cmp(r, NFT_CMP_LTE, &one, 1);
}

void nftx_tcp_port(struct nftnl_rule *r, uint16_t port, bool src)
{
	uint16_t be = htons(port);

	nftx_l4_tcp(r);
	nftx_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, src ? 0 : TCP_DPORT_OFF, 2);
	nftx_cmp(r, NFT_CMP_EQ, &be, 2);
}

/* tcp dport (sport) in the anonymous set of this batch whose id is set_id. */
void nftx_tcp_port_set(struct nftnl_rule *r, uint32_t set_id, bool src)
{
	struct nftnl_expr *e = nftnl_expr_alloc("lookup");

	nftx_l4_tcp(r);
	nftx_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, src ? 0 : TCP_DPORT_OFF, 2);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, NFTX_ANON_SET);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, set_id);
	nftnl_rule_add_expr(r, e);
}

/*
 * ct label N: our flag's bit set (nft loads the 128 label bits, masks the
 * one and compares with zero, in the kernel's word layout, marks.h).
 */
void nftx_ct_label(struct nftnl_rule *r, unsigned bit)
{
	uint32_t mask[MARKS_LABEL_WORDS] = { 0 }, zero[MARKS_LABEL_WORDS] = { 0 };

	mask[bit / 32 % MARKS_LABEL_WORDS] = 1u << (bit % 32);
	nftx_key(r, NFTX_CT, NFT_CT_LABELS, false);
	nftx_bitwise(r, mask, zero, sizeof(mask));
	nftx_cmp(r, NFT_CMP_NEQ, zero, sizeof(zero));
}

void nftx_tcp_flags(struct nftnl_rule *r, uint8_t mask, uint8_t value, uint32_t op)
{
	uint8_t zero = 0;

	nftx_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, TCP_FLAGS_OFF, 1);
	nftx_bitwise(r, &mask, &zero, 1);
	nftx_cmp(r, op, &value, 1);
}

/*
 * What every closed_ports rule of chain ch matches first (nftplan.h): at
 * prerouting a new connection that no DNAT took (not from loopback, no
 * RST); at input's nat a new connection (a nat chain sees no other) that
 * no DNAT took, not from loopback; at input a segment with none of SYN,
 * ACK, RST (not from loopback).
 */
void nftx_probe_prefix(struct nftnl_rule *r, enum nftplan_chain ch)
{
	nftx_l4_tcp(r);
	if (ch == CH_INPUT_CLOSED_NAT) {
		nftx_iif_not_lo(r);
		nftx_key(r, NFTX_CT, NFT_CT_STATUS, false);
		nftx_masked_eq32(r, IPS_DST_NAT, 0, NFT_CMP_EQ);
	} else if (ch == CH_PREROUTING_CLOSED) {
		nftx_ct_state(r, NF_CT_STATE_BIT(IP_CT_NEW), NFT_CMP_NEQ);
		nftx_iif_not_lo(r);
		nftx_tcp_flags(r, NFTX_TCP_RST, 0, NFT_CMP_EQ);
		nftx_key(r, NFTX_CT, NFT_CT_STATUS, false);
		nftx_masked_eq32(r, IPS_DST_NAT, 0, NFT_CMP_EQ);
	} else {
		nftx_iif_not_lo(r);
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK | NFTX_TCP_RST, 0, NFT_CMP_EQ);
	}
}
