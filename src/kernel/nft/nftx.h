/*
 * nftx.h - one nf_tables match, statement or verdict appended to a libnftnl
 * rule, with the bytes nft itself writes for the same text, so that `nft
 * list` shows an installed rule as print-rules writes it.  Every match
 * loads its field into register 1 and compares it there.  The pieces
 * nftexpr.c builds its rules from; objects only, no I/O.  Part of the
 * rules adapter, which alone includes libnftnl.
 */
#ifndef KNOCKGW_NFTX_H
#define KNOCKGW_NFTX_H

#include <linux/netfilter/nf_conntrack_common.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/marks.h"
#include "config/match.h"
#include "kernel/nft/nftplan.h"
#include "kernel/nft/nftrules.h"

struct nftnl_rule;

enum {
	NFTX_TCP_SYN = 0x02,
	NFTX_TCP_RST = 0x04,
	NFTX_TCP_ACK = 0x10,
	NFTX_CT_NEW_OR_INVALID = NF_CT_STATE_INVALID_BIT | NF_CT_STATE_BIT(IP_CT_NEW),
	NFTX_CT_NEW_OR_UNTRACKED = NF_CT_STATE_BIT(IP_CT_NEW) | NF_CT_STATE_UNTRACKED_BIT,
	NFTX_LOOPBACK = 1,		/* lo's ifindex, in every network namespace */
};

/* The keyed expressions: a packet's meta data and its conntrack entry. */
enum nftx_key { NFTX_META, NFTX_CT };

/* Loads key into register 1 or, with store, sets key from it. */
void nftx_key(struct nftnl_rule *r, enum nftx_key x, uint32_t key, bool store);

/* reg1 = (reg1 & mask) ^ xor */
void nftx_bitwise(struct nftnl_rule *r, const void *mask, const void *xor, uint32_t len);

/* reg1 compared with data (op: NFT_CMP_EQ, _NEQ, ...). */
void nftx_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len);

/* reg1 & mask == value, on a 32-bit host-order key (marks, ct state). */
void nftx_masked_eq32(struct nftnl_rule *r, uint32_t mask, uint32_t value, uint32_t op);

/* The rule's verdict: NF_ACCEPT, NF_DROP, NFT_RETURN, ... */
void nftx_verdict(struct nftnl_rule *r, int verdict);

/* counter: packets and bytes, for `nft list`. */
void nftx_counter(struct nftnl_rule *r);

/* Queues to rule ru's set (nftplan.h), with bypass when ru or the plan asks. */
void nftx_queue(struct nftnl_rule *r, const struct nftplan *p, enum nft_queue_kind kind,
		const struct nftplan_rule *ru, bool bypass);

/* meta nfproto == family's (AF_INET: ipv4, else ipv6). */
void nftx_nfproto(struct nftnl_rule *r, int family);

/* dep: the family check nft puts before a rule's first address match. */
void nftx_addr(struct nftnl_rule *r, const struct prefix *a, bool src, bool dep);

/* ct original ip[6] saddr/daddr: the address of the flow's original tuple. */
void nftx_ct_addr(struct nftnl_rule *r, const struct prefix *a, bool src);

/*
 * fib daddr type local (op EQ): the destination is one of this host's
 * addresses; with NEQ, it is not (a packet this host routes).
 */
void nftx_fib_local_op(struct nftnl_rule *r, uint32_t op);

/*
 * fib saddr . iif oif missing: no route back to the source leaves through
 * the interface the packet came in on (the strict reverse-path test).
 */
void nftx_fib_rpf_missing(struct nftnl_rule *r);

/* iifname NAME: the interface's name, zero-padded as the kernel keeps it. */
void nftx_iifname(struct nftnl_rule *r, const char *name);

/* fib daddr type local. */
void nftx_fib_local(struct nftnl_rule *r);

/* redirect to :port (this host's address, that port). */
void nftx_redirect(struct nftnl_rule *r, uint16_t port);

/* dnat to (the packet's own destination):port, family's addresses. */
void nftx_dnat_same_host(struct nftnl_rule *r, int family, uint16_t port);

/* snat to (its own source):(its source port ^ 0x8000), family's addresses. */
void nftx_snat_sport_flip(struct nftnl_rule *r, int family);

/* reject with tcp reset. */
void nftx_reject_rst(struct nftnl_rule *r);

/* Our bits of the packet mark cleared, the rest kept. */
void nftx_clear_ours(struct nftnl_rule *r, const struct marks *m);

/* meta l4proto tcp: every TCP match nft writes starts with it. */
void nftx_l4_tcp(struct nftnl_rule *r);

/* ct state (one state bit) is, or (op NEQ) is not, set. */
void nftx_ct_state(struct nftnl_rule *r, uint32_t bits, uint32_t op);

/* meta iif != lo. */
void nftx_iif_not_lo(struct nftnl_rule *r);

/* Our bits of the packet mark = code (0: cleared), the rest kept. */
void nftx_set_code(struct nftnl_rule *r, const struct marks *m, uint32_t code);

/*
 * A socket takes the packet (socket transparent <= 1: one lookup, no match
 * when none is found).
 */
void nftx_socket_found(struct nftnl_rule *r);

/* tcp sport (src) or dport == port. */
void nftx_tcp_port(struct nftnl_rule *r, uint16_t port, bool src);

/*
 * The name an anonymous set is created with; the kernel numbers it, and a
 * rule of the same batch finds it by its id.
 */
#define NFTX_ANON_SET "__set%d"

/* tcp dport (sport with src) in the anonymous set of this batch whose id is set_id. */
void nftx_tcp_port_set(struct nftnl_rule *r, uint32_t set_id, bool src);

/*
 * ct label N: our flag's bit set (nft loads the 128 label bits, masks the
 * one and compares with zero, in the kernel's word layout, marks.h).
 */
void nftx_ct_label(struct nftnl_rule *r, unsigned bit);

/* tcp flags & mask == value (op EQ), or != (op NEQ). */
void nftx_tcp_flags(struct nftnl_rule *r, uint8_t mask, uint8_t value, uint32_t op);

/*
 * What every closed_ports rule of chain ch matches first (nftplan.h): at
 * prerouting a new connection that no DNAT took (not from loopback, no
 * RST); at input a segment with none of SYN, ACK, RST (not from loopback).
 */
void nftx_probe_prefix(struct nftnl_rule *r, enum nftplan_chain ch);

#endif
