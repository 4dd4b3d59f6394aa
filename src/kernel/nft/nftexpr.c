/*
 * nftexpr.c - a planned rule as libnftnl expressions (see nftexpr.h): per
 * kind of rule, its matches and statements in order, from the pieces of
 * nftx.h; every rule ends in its verdict (or none: the chain goes on).
 */
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <netinet/in.h>
#include <stdio.h>

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "kernel/nft/nftexpr.h"
#include "kernel/nft/nftx.h"

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
	uint32_t lo = NFTX_LOOPBACK;
	struct nftnl_expr *e;

	nftx_key(r, NFTX_META, NFT_META_L4PROTO, false);
	nftx_cmp(r, NFT_CMP_EQ, &l4, 1);
	nftx_key(r, NFTX_CT, NFT_CT_STATE, false);
	nftx_masked_eq32(r, NF_CT_STATE_BIT(IP_CT_RELATED), 0, NFT_CMP_NEQ);
	nftx_key(r, NFTX_CT, NFT_CT_DIRECTION, false);
	nftx_cmp(r, NFT_CMP_EQ, &dir_reply, 1);
	if (ru->from)
		nftx_ct_addr(r, ru->from, true);
	nftx_ct_addr(r, ru->addr, false);
	e = nftnl_expr_alloc("ct");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_PROTO_DST);
	nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, IP_CT_DIR_ORIGINAL);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	nftx_cmp(r, NFT_CMP_EQ, &port, sizeof(port));
	if (!ru->from) {
		nftx_key(r, NFTX_META, NFT_META_IIF, false);
		nftx_cmp(r, NFT_CMP_NEQ, &lo, sizeof(lo));
	}
	nftx_counter(r);
	nftx_queue(r, p, kind, ru, true);
}

/*
 * Our INTEG code in the mark of a SYN: set the ct bit, clear our bits, and
 * go on through the chain.  No verdict: a mark alone, which some other
 * software might set, never lets a packet skip the knock rule.
 */
static void build_mark_rule(struct nftnl_rule *r, const struct marks *m)
{
	uint32_t ct_mask = ~m->ct_integ, ct_xor = m->ct_integ;
	uint32_t keep = ~m->mask, zero = 0;

	nftx_l4_tcp(r);
	nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK, NFTX_TCP_SYN, NFT_CMP_EQ);
	nftx_key(r, NFTX_META, NFT_META_MARK, false);
	nftx_masked_eq32(r, m->mask, m->integ, NFT_CMP_EQ);
	/* ct mark = (ct mark & ~BIT) ^ BIT: sets the one bit. */
	nftx_key(r, NFTX_CT, NFT_CT_MARK, false);
	nftx_bitwise(r, &ct_mask, &ct_xor, sizeof(ct_mask));
	nftx_key(r, NFTX_CT, NFT_CT_MARK, true);
	nftx_key(r, NFTX_META, NFT_META_MARK, false);
	nftx_bitwise(r, &keep, &zero, sizeof(keep));
	nftx_key(r, NFTX_META, NFT_META_MARK, true);
	nftx_counter(r);
}

/*
 * Only to this host's own addresses (fib daddr type local): the one route
 * lookup of a rule, after its port and every cheaper test, so that a probe
 * another test refuses (another port; a Maimon probe, which no rule of a
 * protected port queues) never pays it, as a closed port's probe does not.
 */
static void local_last(struct nftnl_rule *r, const struct nftplan_rule *ru)
{
	if (ru->local)
		nftx_fib_local(r);
}

static void build_rule(struct nftnl_rule *r, const struct nftplan_rule *ru, const struct nftplan *p,
		       enum nft_queue_kind kind, uint32_t set_id)
{
	uint8_t dir_original = 0, dir_reply = 1;	/* IP_CT_DIR_ORIGINAL, _REPLY */
	const struct marks *m = &p->m;
	uint32_t zero = 0;

	switch (ru->kind) {
	case RK_MARK_INTEG:
		build_mark_rule(r, m);
		return;
	case RK_CT_KEEP:
		nftx_key(r, NFTX_CT, NFT_CT_STATE, false);
		nftx_masked_eq32(r, NF_CT_STATE_BIT(IP_CT_ESTABLISHED), 0, NFT_CMP_NEQ);
		nftx_counter(r);
		return;
	case RK_PROBE_GATE:
		nftx_ct_state(r, NF_CT_STATE_BIT(IP_CT_NEW), NFT_CMP_EQ);
		nftx_verdict(r, NFT_RETURN);
		return;
	case RK_PROBE_SOCKET:
		nftx_probe_prefix(r, ru->chain);
		nftx_socket_found(r);
		nftx_verdict(r, NF_ACCEPT);
		return;
	case RK_PROBE_SNAT: {
		/* A closed port's new connection: no socket took it (nftplan.c). */
		int family = ru->value == 4 ? AF_INET : AF_INET6;

		nftx_nfproto(r, family);
		nftx_probe_prefix(r, ru->chain);
		nftx_counter(r);
		nftx_snat_sport_flip(r, family);
		return;
	}
	case RK_PROBE:
		nftx_probe_prefix(r, ru->chain);
		if (ru->local)
			nftx_fib_local(r);
		/*
		 * A new connection: NEWSYN, it goes on to the kernel's answer
		 * (mimic_closed_port); a FIN/NULL/Xmas probe: no code, no
		 * reject of ours when no daemon answers it (the kernel does).
		 */
		nftx_set_code(r, m, ru->chain == CH_PREROUTING_CLOSED ? m->newsyn : 0);
		nftx_counter(r);
		nftx_queue(r, p, kind, ru, ru->bypass);
		return;
	case RK_NOCONN_RESET:
		nftx_l4_tcp(r);
		nftx_key(r, NFTX_META, NFT_META_MARK, false);
		nftx_masked_eq32(r, m->mask, m->noconn, NFT_CMP_EQ);
		nftx_counter(r);
		nftx_reject_rst(r);
		return;
	case RK_CLIENT_ICMP:
	case RK_CLIENT_FWD_ICMP:
		build_icmp_rule(r, ru, p, kind);
		return;
	case RK_NAT_ACCEPTED:
		/* Only a verdict sets ACCEPTED: the knock rules clear our bits. */
		nftx_l4_tcp(r);
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK, NFTX_TCP_SYN, NFT_CMP_EQ);
		nftx_key(r, NFTX_META, NFT_META_MARK, false);
		nftx_masked_eq32(r, m->mask, m->accepted, NFT_CMP_EQ);
		nftx_clear_ours(r, m);
		nftx_counter(r);
		nftx_verdict(r, NF_ACCEPT);
		return;
	default:
		break;
	}
	if (ru->from) {
		/* Gateway rules: the source first, whichever prefix it is. */
		nftx_addr(r, ru->addr_is_src ? ru->addr : ru->from, true, true);
		nftx_addr(r, ru->addr_is_src ? ru->from : ru->addr, false, false);
	} else if (ru->addr) {
		nftx_addr(r, ru->addr, ru->addr_is_src, true);
	}
	if (ru->nports > 1)
		nftx_tcp_port_set(r, set_id, ru->addr_is_src);
	else
		nftx_tcp_port(r, ru->port, ru->addr_is_src);
	switch (ru->kind) {
	case RK_SYN_HIDE:
	case RK_SYN:
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK, NFTX_TCP_SYN, NFT_CMP_EQ);
		if (ru->kind == RK_SYN_HIDE) {
			/*
			 * Loopback's nat was decided at output, and an invalid or
			 * untracked SYN gets none: only a new, conntracked SYN
			 * from outside may go on to the nat chain with no daemon.
			 */
			nftx_iif_not_lo(r);
			nftx_ct_state(r, NF_CT_STATE_BIT(IP_CT_NEW), NFT_CMP_NEQ);
			local_last(r, ru);
			/* Our bits = NEWSYN: the nat rule can refuse this one. */
			nftx_set_code(r, m, m->newsyn);
		} else {
			local_last(r, ru);
			nftx_clear_ours(r, m);
		}
		nftx_counter(r);
		if (ru->kind == RK_SYN_HIDE && p->hiding)
			nftx_verdict(r, NF_ACCEPT);	/* on to the nat chain's refusal */
		else
			nftx_queue(r, p, kind, ru, ru->kind == RK_SYN_HIDE);
		break;
	case RK_NAT_REFUSE:
		/* A nat chain sees a connection's first packet only. */
		local_last(r, ru);
		nftx_counter(r);
		if (ru->forward)
			nftx_dnat_same_host(r, ru->addr->family, p->refuse_port);
		else
			nftx_redirect(r, p->refuse_port);
		break;
	case RK_STRAY_QUEUE:
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK | NFTX_TCP_RST, 0, NFT_CMP_EQ);
		/* NOCONN: with no daemon, the late chain's reject answers it. */
		nftx_set_code(r, m, m->noconn);
		nftx_counter(r);
		nftx_queue(r, p, kind, ru, ru->bypass);
		break;
	case RK_STRAY_DROP:
		nftx_ct_state(r, NFTX_CT_NEW_OR_INVALID, NFT_CMP_NEQ);
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK, NFTX_TCP_SYN, NFT_CMP_NEQ);
		local_last(r, ru);
		nftx_counter(r);
		nftx_verdict(r, NF_DROP);
		break;
	case RK_NOCONN_NEW:
		/*
		 * NEWSYN: refused, or past an empty queue, it goes on to the nat
		 * chain's closed port like a refused SYN.
		 */
		nftx_iif_not_lo(r);
		nftx_ct_state(r, NF_CT_STATE_BIT(IP_CT_NEW), NFT_CMP_NEQ);
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK, NFTX_TCP_SYN, NFT_CMP_NEQ);
		local_last(r, ru);
		nftx_set_code(r, m, m->newsyn);
		nftx_counter(r);
		nftx_queue(r, p, kind, ru, ru->bypass);
		break;
	case RK_NOCONN:
	case RK_INVALID_INTEG:
		/* The mark tells the daemon which of the two queued it. */
		nftx_ct_state(r, ru->kind == RK_NOCONN ? NFTX_CT_NEW_OR_UNTRACKED
						       : NF_CT_STATE_INVALID_BIT,
			      NFT_CMP_NEQ);
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK, NFTX_TCP_SYN, NFT_CMP_NEQ);
		local_last(r, ru);
		nftx_set_code(r, m, ru->kind == RK_NOCONN ? m->noconn : m->invalid);
		nftx_counter(r);
		nftx_queue(r, p, kind, ru, ru->bypass);
		break;
	case RK_INTEG:
	case RK_INTEG_REPLY: {
		bool reply = ru->kind == RK_INTEG_REPLY;

		nftx_key(r, NFTX_CT, NFT_CT_MARK, false);
		nftx_masked_eq32(r, m->ct_integ, m->ct_integ, NFT_CMP_EQ);
		nftx_key(r, NFTX_CT, NFT_CT_DIRECTION, false);
		nftx_cmp(r, NFT_CMP_EQ, reply ? &dir_reply : &dir_original, 1);
		local_last(r, ru);
		/*
		 * The daemon reads why a packet came from our bits: the service's
		 * side gets the reply code, the client's none, whatever it had.
		 */
		nftx_set_code(r, m, reply ? m->reply : zero);
		nftx_counter(r);
		nftx_queue(r, p, kind, ru, false);
		break;
	}
	case RK_CLIENT_SYN:
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK, NFTX_TCP_SYN, NFT_CMP_EQ);
		nftx_counter(r);
		nftx_queue(r, p, kind, ru, false);
		break;
	case RK_CLIENT_FWD_SYN:
	case RK_CLIENT_FWD_OUT:
		/*
		 * FWD tells the daemon it is a routed flow's, not the server's:
		 * its SYN, or (user path) a later packet going out.
		 */
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK, NFTX_TCP_SYN,
			       ru->kind == RK_CLIENT_FWD_SYN ? NFT_CMP_EQ : NFT_CMP_NEQ);
		nftx_fib_local_op(r, NFT_CMP_NEQ);
		if (ru->iif)
			nftx_iifname(r, ru->iif);
		nftx_set_code(r, m, m->fwd);
		nftx_counter(r);
		nftx_queue(r, p, kind, ru, false);
		break;
	case RK_PROBE_SKIP:
		nftx_verdict(r, NFT_RETURN);
		break;
	case RK_CLIENT_FWD_SPOOF:
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK, NFTX_TCP_SYN, NFT_CMP_EQ);
		nftx_fib_local_op(r, NFT_CMP_NEQ);
		if (ru->rpf)
			nftx_fib_rpf_missing(r);
		nftx_counter(r);
		nftx_verdict(r, NF_DROP);
		break;
	case RK_CLIENT_OUT:
		nftx_tcp_flags(r, NFTX_TCP_SYN | NFTX_TCP_ACK, NFTX_TCP_SYN, NFT_CMP_NEQ);
		nftx_counter(r);
		nftx_queue(r, p, kind, ru, false);
		break;
	case RK_CLIENT_IN:
	case RK_CLIENT_FWD_IN:
	case RK_CLIENT_IN_NOCT:
	case RK_CLIENT_FWD_IN_NOCT:
		/* Only an acknowledgement needs the shift back. */
		nftx_tcp_flags(r, NFTX_TCP_ACK, NFTX_TCP_ACK, NFT_CMP_EQ);
		if (ru->kind == RK_CLIENT_IN || ru->kind == RK_CLIENT_FWD_IN) {
			nftx_ct_label(r, p->ct_label);
		} else {
			nftx_key(r, NFTX_CT, NFT_CT_STATE, false);
			nftx_masked_eq32(r, NF_CT_STATE_INVALID_BIT | NF_CT_STATE_UNTRACKED_BIT, 0,
					 NFT_CMP_NEQ);
		}
		nftx_counter(r);
		nftx_queue(r, p, kind, ru, false);
		break;
	default:
		break;
	}
}

struct nftnl_rule *nftexpr_rule(const char *table, const struct nftplan_rule *ru,
				const struct nftplan *p, enum nft_queue_kind kind, uint32_t set_id)
{
	struct nftnl_rule *r = nftnl_rule_alloc();

	if (!r)
		return NULL;
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, nftplan_chain_def(ru->chain)->name);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	build_rule(r, ru, p, kind, set_id);
	return r;
}

