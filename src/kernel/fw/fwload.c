/*
 * fwload.c - what the firewall judge loads into registers for a packet
 * (see fwload.h): the fields a port, the protocol and the redirect decide
 * are known; what the prober's packets share is a shared unknown; the
 * mark under knockgw's bits an own one.
 */
#include <stdint.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/rtnetlink.h>

#include "kernel/fw/fwload.h"

void fw_load_payload(struct run *r, const struct fw_expr *e)
{
	size_t n = e->len;

	if (!fw_reg_ok(e->dreg, n))
		return;
	for (size_t i = 0; i < n; i++) {
		uint32_t off = e->offset + (uint32_t)i;
		struct rbyte *b = &r->reg[e->dreg * 4 + i];
		uint8_t v;
		bool known = false;

		if (e->key == NFT_PAYLOAD_NETWORK_HEADER) {
			/* The protocol: IPv4's byte 9, IPv6's next header (no extension headers). */
			if ((r->view.family == NFPROTO_IPV4 && off == 9) ||
			    (r->view.family == NFPROTO_IPV6 && off == 6)) {
				v = PROTO_TCP;
				known = true;
			}
		} else if (e->key == NFT_PAYLOAD_TRANSPORT_HEADER) {
			if (off == 2 || off == 3) {
				v = (uint8_t)(off == 2 ? r->view.dport >> 8 : r->view.dport);
				known = true;
			} else if (off == 13) {
				v = 0x02;	/* SYN */
				known = true;
			}
		}
		if (known)
			*b = (struct rbyte){ .known = true, .v = v };
		else
			*b = (struct rbyte){ .sym = fw_sym("payload", e->key, off, 0) };
	}
}

static void load_u32(struct run *r, uint8_t slot, uint32_t v)
{
	if (fw_reg_ok(slot, 4))
		fw_set_known(&r->reg[slot * 4], (const uint8_t *)&v, 4);	/* host order, as nft */
}

static void load_u8(struct run *r, uint8_t slot, uint8_t v)
{
	if (fw_reg_ok(slot, 1))
		fw_set_known(&r->reg[slot * 4], &v, 1);
}

static void load_be16(struct run *r, uint8_t slot, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	if (fw_reg_ok(slot, 2))
		fw_set_known(&r->reg[slot * 4], b, 2);
}

/* false: the kernel ends the rule here (NFT_BREAK: nothing to load). */
bool fw_load_meta(struct run *r, const struct fw_expr *e)
{
	uint16_t proto = r->view.family == NFPROTO_IPV6 ? 0x86dd : 0x0800;

	switch (e->key) {
	case NFT_META_L4PROTO:
		load_u8(r, e->dreg, PROTO_TCP);
		return true;
	case NFT_META_NFPROTO:
		load_u8(r, e->dreg, r->view.family);
		return true;
	case NFT_META_PROTOCOL:
		load_be16(r, e->dreg, proto);
		return true;
	case NFT_META_PKTTYPE:
		load_u8(r, e->dreg, 0);	/* PACKET_HOST */
		return true;
	case NFT_META_OIF:
	case NFT_META_OIFNAME:
	case NFT_META_OIFTYPE:
	case NFT_META_OIFGROUP:
	case NFT_META_SKUID:
	case NFT_META_SKGID:
	case NFT_META_CGROUP:
		return false;	/* no output device, no socket on the way in */
	case NFT_META_IIF:
		fw_set_unknown(r, e->dreg, 4, "iif", 0, 0, false, F_IIF);
		return true;
	case NFT_META_IIFNAME:
		fw_set_unknown(r, e->dreg, 16, "iifname", 0, 0, false, F_IIFNAME);
		return true;
	case NFT_META_IIFTYPE:
		fw_set_unknown(r, e->dreg, 2, "iiftype", 0, 0, false, F_IIFTYPE);
		return true;
	case NFT_META_MARK:
		/* knockgw's bits differ (a refused SYN carries a code); the rest is alike. */
		for (size_t i = 0; i < 4 && fw_reg_ok(e->dreg, 4); i++) {
			uint32_t m = r->p->mark_mask;
			bool own = ((const uint8_t *)&m)[i] != 0;

			r->reg[e->dreg * 4 + i] = (struct rbyte){
				.own = own,
				.sym = fw_sym("mark", own ? r->p->dport : 0, 0, (uint32_t)i),
			};
		}
		return true;
	default:
		fw_set_unknown(r, e->dreg, 16, "meta", e->key, 0, false, F_NONE);
		return true;
	}
}

bool fw_load_ct(struct run *r, const struct fw_expr *e)
{
	const struct fw_view *v = &r->view;

	if (!v->tracked && e->key != NFT_CT_STATE)
		return false;	/* no entry: ct expressions end the rule */
	switch (e->key) {
	case NFT_CT_STATE:
		load_u32(r, e->dreg, fw_view_ct_state(v));
		return true;
	case NFT_CT_STATUS:
		load_u32(r, e->dreg, fw_view_ct_status(v));
		return true;
	case NFT_CT_DIRECTION:
		load_u8(r, e->dreg, CT_DIR_ORIGINAL);
		return true;
	case NFT_CT_L3PROTOCOL:
		load_u8(r, e->dreg, v->family);
		return true;
	case NFT_CT_PROTOCOL:
		load_u8(r, e->dreg, PROTO_TCP);
		return true;
	case NFT_CT_PROTO_DST:
		if (e->flags == CT_DIR_ORIGINAL) {
			load_be16(r, e->dreg, v->orig_dport);
			return true;
		}
		break;
	case NFT_CT_PROTO_SRC:
		if (e->flags == CT_DIR_REPLY) {
			load_be16(r, e->dreg, v->reply_sport);
			return true;
		}
		break;
	default:
		break;
	}
	fw_set_unknown(r, e->dreg, 16, "ct", e->key, e->flags, false, F_NONE);
	return true;
}

void fw_load_fib(struct run *r, const struct fw_expr *e)
{
	/* The destination is a local address for both (the redirect keeps it local). */
	if (e->key == NFT_FIB_RESULT_ADDRTYPE && (e->flags & NFTA_FIB_F_DADDR) &&
	    !(e->flags & NFTA_FIB_F_SADDR)) {
		load_u32(r, e->dreg, RTN_LOCAL);
		return;
	}
	fw_set_unknown(r, e->dreg, 16, "fib", e->key, e->flags, false, F_NONE);
}

