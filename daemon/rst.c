/*
 * rst.c - see rst.h.
 */
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "bytes.h"
#include "rst.h"
#include "seqrewrite.h"

enum {
	ECN_MASK = 0x03,
	IP_DF = 0x4000,
	FLOWLABEL_MASK = 0xfffff,
	FLOWLABEL_STATELESS = 0x80000,
};

/* RFC 1071 checksum of the IPv4 header. */
static uint16_t ip4_csum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t flowlabel(const uint8_t *pkt, const struct pkt_view *v, const struct rst_params *rp)
{
	uint32_t in_label = (uint32_t)(pkt[1] & 0x0f) << 16 | (uint32_t)pkt[2] << 8 | pkt[3];
	uint8_t m[36], h[crypto_shorthash_BYTES];
	uint32_t label;

	if (rp->flowlabel_reflect && in_label)
		return in_label;
	if (!rp->flowlabel_auto)
		return 0;
	/* The answer's own 4-tuple, as the kernel hashes the flow it sends. */
	memcpy(m, pkt_dst(pkt, v), 16);
	memcpy(m + 16, pkt_src(pkt, v), 16);
	put_be16(m + 32, v->dport);
	put_be16(m + 34, v->sport);
	crypto_shorthash(h, m, sizeof(m), rp->flowlabel_key);
	label = ((uint32_t)h[0] << 16 | (uint32_t)h[1] << 8 | h[2]) & FLOWLABEL_MASK;
	if (rp->flowlabel_state_ranges)
		label |= FLOWLABEL_STATELESS;
	return label;
}

size_t rst_build(const uint8_t *pkt, const struct pkt_view *v, const struct rst_params *rp,
		 uint8_t out[static RST_MAX_LEN])
{
	uint8_t *tcp;
	size_t iphl;

	if (v->flags & TCP_RST)
		return 0;
	/*
	 * The kernel's TCP checks the sum before it answers; so do we.  It sums
	 * the segment with its checksum field, so 0xffff in the field stands
	 * for a computed 0x0000 too (one's complement has two zeros, RFC 1071
	 * and RFC 1624 section 3); the computed value is never 0xffff.
	 */
	if (!rp->csum_unfinished && v->payload_caplen == v->payload_len) {
		uint16_t got = (uint16_t)(pkt[v->l4_off + 16] << 8 | pkt[v->l4_off + 17]);
		uint16_t want = seqrewrite_tcp_csum_full(pkt, v);

		if (got != want && !(got == 0xffff && want == 0))
			return 0;
	}

	memset(out, 0, RST_MAX_LEN);
	if (v->family == AF_INET) {
		iphl = 20;
		out[0] = 0x45;
		out[1] = pkt[1] & (uint8_t)~ECN_MASK;
		put_be16(out + 2, (uint16_t)(iphl + 20));
		put_be16(out + 6, IP_DF);	/* ID 0 with DF, as ip_send_unicast_reply */
		out[8] = rp->ttl;
		out[9] = 6;
		memcpy(out + 12, pkt_dst(pkt, v), 4);
		memcpy(out + 16, pkt_src(pkt, v), 4);
	} else {
		uint8_t tclass = (uint8_t)((pkt[0] & 0x0f) << 4 | pkt[1] >> 4) & (uint8_t)~ECN_MASK;
		uint32_t label = flowlabel(pkt, v, rp);

		iphl = 40;
		put_be32(out, 6u << 28 | (uint32_t)tclass << 20 | label);
		put_be16(out + 4, 20);
		out[6] = 6;
		out[7] = rp->ttl;
		memcpy(out + 8, pkt_dst(pkt, v), 16);
		memcpy(out + 24, pkt_src(pkt, v), 16);
	}

	tcp = out + iphl;
	put_be16(tcp, v->dport);
	put_be16(tcp + 2, v->sport);
	if (v->flags & TCP_ACK) {
		put_be32(tcp + 4, v->ack);
		tcp[13] = TCP_RST;
	} else {
		uint32_t ack = v->seq + (uint32_t)v->payload_len + !!(v->flags & TCP_SYN) +
			       !!(v->flags & TCP_FIN);

		put_be32(tcp + 8, ack);
		tcp[13] = TCP_RST | TCP_ACK;
	}
	tcp[12] = 5 << 4;

	/* Checksums: describe the answer to the same helpers the parser feeds. */
	struct pkt_view rv;
	if (pkt_parse(out, iphl + 20, &rv) != PKT_OK)
		return 0;
	put_be16(tcp + 16, seqrewrite_tcp_csum_full(out, &rv));
	if (v->family == AF_INET)
		put_be16(out + 10, ip4_csum(out, 20));
	return iphl + 20;
}
