/*
 * rst.c - see rst.h.
 */
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "common/bytes.h"
#include "common/csum.h"
#include "common/rst.h"

enum {
	IPV4_HDR_LEN = 20,
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

/* IPv4 options, RFC 791 3.1. */
enum {
	IPOPT_END = 0,
	IPOPT_NOOP = 1,
	IPOPT_RR = 7,
	IPOPT_TS = 68,
	IPOPT_LSRR = 131,
	IPOPT_SSRR = 137,
	IPOPT_TS_TSONLY = 0,
	IPOPT_TS_TSANDADDR = 1,
	IPOPT_TS_PRESPEC = 3,
	IPOPT_SLOT = 4,			/* one address or one timestamp */
};

/*
 * The IP options of the kernel's RST, as ip_send_unicast_reply makes them:
 * __ip_options_echo copies record route and timestamp (in that order, then
 * END padding to 32 bits), ip_options_build fills in the address of this
 * host and the time where the echo left room.  By the time a segment reaches
 * the queue, the kernel's input path (ip_options_compile) has already
 * recorded this host in it and moved the pointers on, so what it holds is
 * what the kernel echoes.  Returns the length written, or -1 where the
 * kernel sends no answer at all (an option the echo refuses, or one the
 * input path would have dropped the segment for).
 *
 * A prespecified timestamp is stamped when the address it names is local;
 * we know one local address, the segment's destination.  Source routes
 * only reach a socket with accept_source_route, and are not echoed here.
 */
static int echo_ip_options(const uint8_t *pkt, const struct rst_params *rp,
			   uint8_t out[static RST_IPOPT_MAX])
{
	size_t ihl = (size_t)(pkt[0] & 0x0f) * 4, off = IPV4_HDR_LEN, rr = 0, ts = 0, n = 0;
	const uint8_t *local = pkt + 16;

	while (off < ihl) {
		uint8_t type = pkt[off], len;

		if (type == IPOPT_END)
			break;
		if (type == IPOPT_NOOP) {
			off++;
			continue;
		}
		if (ihl - off < 2)
			return -1;
		len = pkt[off + 1];
		if (len < 2 || len > ihl - off)
			return -1;
		if (type == IPOPT_RR || type == IPOPT_TS) {
			size_t *at = type == IPOPT_RR ? &rr : &ts;

			if (*at)
				return -1;	/* twice: the input path drops it */
			*at = off;
		}
		off += len;
	}

	if (rr) {
		const uint8_t *o = pkt + rr;
		uint8_t len = o[1], ptr;

		if (len < 3 || o[2] < IPOPT_SLOT)
			return -1;
		ptr = o[2];
		memcpy(out + n, o, len);
		if (ptr <= len) {
			if (ptr + 3 > len)
				return -1;
			out[n + 2] = (uint8_t)(ptr + IPOPT_SLOT);
			memcpy(out + n + ptr - 1, local, 4);
		}
		n += len;
	}
	if (ts) {
		const uint8_t *o = pkt + ts;
		uint8_t len = o[1], flag = o[3] & 0x0f;
		size_t ptr;
		bool addr = false, time = false;

		if (len < 4 || o[2] < IPOPT_SLOT + 1)
			return -1;
		ptr = o[2];
		memcpy(out + n, o, len);
		if (ptr <= len) {
			/* What the input path found to do: address, time or both. */
			bool in_addr = flag == IPOPT_TS_TSANDADDR;
			bool in_time = flag == IPOPT_TS_TSONLY || flag == IPOPT_TS_TSANDADDR ||
				       (flag == IPOPT_TS_PRESPEC && ptr >= 2 * IPOPT_SLOT + 5 &&
					memcmp(o + ptr - 9, local, 4) == 0);

			if (in_addr) {
				if (ptr + 3 > len)
					return -1;
				addr = true;
				ptr += IPOPT_SLOT;
			}
			if (in_time) {
				if (ptr + 3 > len)
					return -1;
				if (flag != IPOPT_TS_PRESPEC) {
					time = true;
					ptr += IPOPT_SLOT;
				} else if (ptr + 7 <= len && memcmp(o + ptr - 1, local, 4) == 0) {
					time = true;
					ptr += 2 * IPOPT_SLOT;
				}
			}
			out[n + 2] = (uint8_t)ptr;
			if (addr)
				memcpy(out + n + ptr - 9, local, 4);
			if (time)
				put_be32(out + n + ptr - 5, rp->ip_ts_ms);
		}
		n += len;
	}
	while (n % 4)
		out[n++] = IPOPT_END;
	return (int)n;
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
	 * The kernel's TCP checks the sum before it answers, unless it knows
	 * it already.  It sums the segment with its checksum field, so 0xffff
	 * in the field stands for a computed 0x0000 too (one's complement has
	 * two zeros, RFC 1071 and RFC 1624 section 3); the computed value is
	 * never 0xffff.  A sum we cannot check (the capture was cut short) did
	 * not pass conntrack, which checked the whole segment before us.
	 */
	if (rp->csum_unverified && !rp->csum_unfinished) {
		uint16_t got, want;

		if (v->payload_caplen != v->payload_len)
			return 0;
		got = (uint16_t)(pkt[v->l4_off + 16] << 8 | pkt[v->l4_off + 17]);
		want = csum_tcp_full(pkt, v);
		if (got != want && !(got == 0xffff && want == 0))
			return 0;
	}

	memset(out, 0, RST_MAX_LEN);
	if (v->family == AF_INET) {
		int optlen = echo_ip_options(pkt, rp, out + IPV4_HDR_LEN);

		if (optlen < 0)
			return 0;
		iphl = IPV4_HDR_LEN + (size_t)optlen;
		out[0] = (uint8_t)(0x40 | iphl / 4);
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
	put_be16(tcp + 16, csum_tcp_full(out, &rv));
	if (v->family == AF_INET)
		put_be16(out + 10, ip4_csum(out, iphl));
	return iphl + 20;
}
