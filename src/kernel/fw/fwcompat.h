/*
 * fwcompat.h - xtables matches and targets in nf_tables rules (what
 * iptables-nft writes for -m conntrack, -m multiport, -j REJECT, ...), as
 * the firewall judge (fwjudge.h) needs them: does a match hold for a
 * packet, what does a target do.  Internal to fwjudge.c; pure.
 *
 * The structures are the kernel's (linux/netfilter/xt_*.h); an info blob
 * shorter than the structure its name and revision call for is not
 * understood.
 */
#ifndef KNOCKGW_FWCOMPAT_H
#define KNOCKGW_FWCOMPAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/fw/fwjudge.h"
#include "kernel/fw/fwrules.h"

/* What the judge knows of a packet at one chain. */
struct fw_view {
	uint8_t family;		/* NFPROTO_IPV4 / NFPROTO_IPV6 */
	uint16_t dport;		/* the TCP destination port there */
	uint16_t orig_dport;	/* conntrack's original tuple's */
	uint16_t reply_sport;	/* conntrack's reply tuple's source port */
	bool tracked;		/* conntrack has seen it (after priority -200) */
	bool dnat;		/* ct status dnat */
	bool nat_done;		/* the nat hook has run */
	bool src_nat_done;	/* the input nat hook has run (priority 100) */
};

/*
 * A condition for one packet: decided; shared (it depends only on what
 * both packets have alike: the source, a rate limit); or not known.
 */
enum fw_cond { FC_TRUE, FC_FALSE, FC_SHARED, FC_UNKNOWN };

/* ct state bits (NF_CT_STATE_BIT) and status (IPS_*) of a new SYN, as v sees it. */
uint32_t fw_view_ct_state(const struct fw_view *v);
uint32_t fw_view_ct_status(const struct fw_view *v);

/* A compat match (e->kind FX_MATCH; info: its bytes). */
enum fw_cond fw_compat_match(const struct fw_expr *e, const uint8_t *info,
			     const struct fw_view *v);

/* A compat target: no verdict, an answer (in *a), a verdict, or not known. */
enum fw_tgt { FT_NOP, FT_ANSWER, FT_ACCEPT, FT_DROP, FT_RETURN, FT_UNKNOWN };
enum fw_tgt fw_compat_target(const struct fw_expr *e, const uint8_t *info, uint8_t family,
			     struct fw_answer *a);

/*
 * An nft reject (type NFT_REJECT_*, code) as the answer a packet of family
 * gets.
 */
void fw_reject_answer(uint32_t type, uint32_t code, uint8_t family, struct fw_answer *a);

#endif
