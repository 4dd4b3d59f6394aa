/*
 * pktbuild.h - test packets and the reference TCP checksum, for the unit
 * tests and the bench tools.
 *
 * pb_build() writes an IPv4 or IPv6 + TCP packet from a plain description
 * (the caller lays out the TCP options; pb_opt_* write the common ones) with
 * both checksums right; pb_build_icmp() an ICMP/ICMPv6 error quoting one.  The checksum is the oracle the daemon's incremental
 * and full checksums are compared with, so it shares no code with the
 * daemon: the pseudo-header is spelled out as bytes (RFC 9293 3.1, RFC 8200
 * 8.1) and everything is summed byte by byte (RFC 1071).  Header-only, so
 * that each bench tool stays one file (bench/run.sh compiles them so) and
 * the Makefile links nothing new.
 */
#ifndef KNOCKGW_PKTBUILD_H
#define KNOCKGW_PKTBUILD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

enum {
	PB_IPPROTO_ICMP = 1,
	PB_IPPROTO_TCP = 6,
	PB_IPPROTO_ICMPV6 = 58,
	PB_IPPROTO_HOPOPTS = 0,
	PB_TCP_CSUM_OFF = 16,
};

static inline void pb_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void pb_put32(uint8_t *p, uint32_t v)
{
	pb_put16(p, v >> 16);
	pb_put16(p + 2, v & 0xffff);
}

static inline uint32_t pb_get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t pb_get32(const uint8_t *p)
{
	return pb_get16(p) << 16 | pb_get16(p + 2);
}

/* Adds n bytes to sum as big-endian 16-bit words, an odd last byte zero-padded. */
static inline uint32_t pb_sum(uint32_t sum, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sum += i % 2 ? p[i] : (uint32_t)p[i] << 8;
	return sum;
}

/* Folds the carries back in and complements: the checksum to store. */
static inline uint16_t pb_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Writes the IPv4 header checksum (RFC 791), the header length from IHL. */
static inline void pb_ip4_csum(uint8_t *ip)
{
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;

	pb_put16(ip + 10, 0);
	pb_put16(ip + 10, pb_fold(pb_sum(0, ip, ihl)));
}

/*
 * The TCP checksum of the segment at ip + tcp_off, tcp_len bytes long, with
 * the addresses of the fixed IP header at ip; the checksum field is summed
 * as zero, so the result is the value to store or to compare with.
 */
static inline uint16_t pb_tcp_csum(const uint8_t *ip, size_t tcp_off, size_t tcp_len)
{
	uint8_t pseudo[40] = { 0 };
	size_t plen;

	if (ip[0] >> 4 == 4) {
		memcpy(pseudo, ip + 12, 8);
		pseudo[9] = PB_IPPROTO_TCP;
		pb_put16(pseudo + 10, (uint32_t)tcp_len);
		plen = 12;
	} else {
		memcpy(pseudo, ip + 8, 32);
		pb_put32(pseudo + 32, (uint32_t)tcp_len);
		pseudo[39] = PB_IPPROTO_TCP;
		plen = 40;
	}
	/* The field is at an even offset: skipping it keeps every word in place. */
	uint32_t sum = pb_sum(0, pseudo, plen);
	sum = pb_sum(sum, ip + tcp_off, PB_TCP_CSUM_OFF);
	sum = pb_sum(sum, ip + tcp_off + PB_TCP_CSUM_OFF + 2, tcp_len - PB_TCP_CSUM_OFF - 2);
	return pb_fold(sum);
}

/* The same for a packet whose TCP header follows the IPv4 header or the fixed IPv6 one. */
static inline uint16_t pb_tcp_csum_of(const uint8_t *ip)
{
	if (ip[0] >> 4 == 4) {
		size_t ihl = (size_t)(ip[0] & 0x0f) * 4;

		return pb_tcp_csum(ip, ihl, pb_get16(ip + 2) - ihl);
	}
	return pb_tcp_csum(ip, 40, pb_get16(ip + 4));
}

/* TCP options (RFC 9293 3.2, RFC 7323, RFC 2018): each returns its length. */
static inline size_t pb_opt_mss(uint8_t *o, uint16_t mss)
{
	o[0] = 2;
	o[1] = 4;
	pb_put16(o + 2, mss);
	return 4;
}

static inline size_t pb_opt_ts(uint8_t *o, uint32_t tsval, uint32_t tsecr)
{
	o[0] = 8;
	o[1] = 10;
	pb_put32(o + 2, tsval);
	pb_put32(o + 6, tsecr);
	return 10;
}

static inline size_t pb_opt_sack(uint8_t *o, const uint32_t (*blocks)[2], size_t n)
{
	o[0] = 5;
	o[1] = (uint8_t)(2 + 8 * n);
	for (size_t i = 0; i < n; i++) {
		pb_put32(o + 2 + 8 * i, blocks[i][0]);
		pb_put32(o + 6 + 8 * i, blocks[i][1]);
	}
	return 2 + 8 * n;
}

/* A SYN's options as Linux orders them: MSS 1460, SACK_PERM, TS, NOP, WS 7 (20 bytes). */
static inline size_t pb_opt_linux_syn(uint8_t *o, uint32_t tsval)
{
	size_t n = pb_opt_mss(o, 1460);

	o[n++] = 4;
	o[n++] = 2;
	n += pb_opt_ts(o + n, tsval, 0);
	o[n++] = 1;
	o[n++] = 3;
	o[n++] = 3;
	o[n++] = 7;
	return n;
}

/*
 * The ICMP checksum of the message at ip + off, len bytes (RFC 792), with
 * the RFC 8200 8.1 pseudo-header of the fixed IPv6 header at ip for ICMPv6
 * (RFC 4443 2.3); the checksum field is summed as zero.
 */
static inline uint16_t pb_icmp_csum(const uint8_t *ip, size_t off, size_t len)
{
	uint32_t sum = 0;

	if (ip[0] >> 4 == 6) {
		uint8_t pseudo[40] = { 0 };

		memcpy(pseudo, ip + 8, 32);
		pb_put32(pseudo + 32, (uint32_t)len);
		pseudo[39] = PB_IPPROTO_ICMPV6;
		sum = pb_sum(sum, pseudo, sizeof(pseudo));
	}
	sum = pb_sum(sum, ip + off, 2);
	sum = pb_sum(sum, ip + off + 4, len - 4);
	return pb_fold(sum);
}

/* An ICMP or ICMPv6 error quoting a packet: what pb_build_icmp writes. */
struct pb_icmp_spec {
	int family;
	const uint8_t *src, *dst;	/* the outer header's: the router, the host */
	uint8_t type, code;
	uint32_t rest;			/* the header's last 4 bytes (an MTU, say) */
	const uint8_t *quote;		/* the start of the packet the error is about */
	size_t quote_len;
};

/*
 * Writes the error s describes at buf, outer IPv4 header checksum and ICMP
 * checksum right; returns its length (the ICMP message starts at 20 or 40).
 */
static inline size_t pb_build_icmp(uint8_t *buf, const struct pb_icmp_spec *s)
{
	size_t ipl = s->family == AF_INET ? 20 : 40, len = 8 + s->quote_len;

	memset(buf, 0, ipl + 8);
	if (s->family == AF_INET) {
		buf[0] = 0x45;
		pb_put16(buf + 2, (uint32_t)(ipl + len));
		buf[8] = 64;
		buf[9] = PB_IPPROTO_ICMP;
		memcpy(buf + 12, s->src, 4);
		memcpy(buf + 16, s->dst, 4);
		pb_ip4_csum(buf);
	} else {
		buf[0] = 0x60;
		pb_put16(buf + 4, (uint32_t)len);
		buf[6] = PB_IPPROTO_ICMPV6;
		buf[7] = 64;
		memcpy(buf + 8, s->src, 16);
		memcpy(buf + 24, s->dst, 16);
	}
	buf[ipl] = s->type;
	buf[ipl + 1] = s->code;
	pb_put32(buf + ipl + 4, s->rest);
	memcpy(buf + ipl + 8, s->quote, s->quote_len);
	pb_put16(buf + ipl + 2, pb_icmp_csum(buf, ipl, len));
	return ipl + len;
}

/* What pb_build writes.  Zero fields are zero on the wire, except ttl (0: 64). */
struct pb_spec {
	int family;			/* AF_INET or AF_INET6 */
	const uint8_t *src, *dst;	/* 4 or 16 bytes */
	uint8_t tos;			/* IPv4 TOS / IPv6 traffic class */
	uint32_t label;			/* IPv6 flow label */
	uint16_t ip_id;			/* IPv4; DF is always set */
	uint8_t ttl;			/* TTL / hop limit */
	/*
	 * IPv4 options, or an IPv6 hop-by-hop header (its first byte is set
	 * to TCP here); a multiple of 4 resp. 8 bytes.
	 */
	const uint8_t *ipopt;
	size_t ipopt_len;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t window, urg;
	const uint8_t *opt;		/* TCP options, a multiple of 4 bytes */
	size_t opt_len;
	const uint8_t *payload;
	size_t plen;
};

struct pb_built {
	size_t len, tcp_off, tcp_len;
};

/* Writes the packet s describes at buf, checksums included; returns its length. */
static inline size_t pb_build(uint8_t *buf, const struct pb_spec *s, struct pb_built *ret)
{
	size_t ipl = (s->family == AF_INET ? 20 : 40) + s->ipopt_len;
	size_t tcp_len = 20 + s->opt_len + s->plen;
	uint8_t *t = buf + ipl;

	memset(buf, 0, ipl + 20);
	if (s->family == AF_INET) {
		buf[0] = (uint8_t)(0x40 | ipl / 4);
		buf[1] = s->tos;
		pb_put16(buf + 2, (uint32_t)(ipl + tcp_len));
		pb_put16(buf + 4, s->ip_id);
		pb_put16(buf + 6, 0x4000);		/* DF, not a fragment */
		buf[8] = s->ttl ? s->ttl : 64;
		buf[9] = PB_IPPROTO_TCP;
		memcpy(buf + 12, s->src, 4);
		memcpy(buf + 16, s->dst, 4);
		if (s->ipopt_len)
			memcpy(buf + 20, s->ipopt, s->ipopt_len);
		pb_ip4_csum(buf);
	} else {
		pb_put32(buf, 6u << 28 | (uint32_t)s->tos << 20 | (s->label & 0xfffff));
		pb_put16(buf + 4, (uint32_t)(s->ipopt_len + tcp_len));
		buf[6] = s->ipopt_len ? PB_IPPROTO_HOPOPTS : PB_IPPROTO_TCP;
		buf[7] = s->ttl ? s->ttl : 64;
		memcpy(buf + 8, s->src, 16);
		memcpy(buf + 24, s->dst, 16);
		if (s->ipopt_len) {
			memcpy(buf + 40, s->ipopt, s->ipopt_len);
			buf[40] = PB_IPPROTO_TCP;
		}
	}
	pb_put16(t, s->sport);
	pb_put16(t + 2, s->dport);
	pb_put32(t + 4, s->seq);
	pb_put32(t + 8, s->ack);
	t[12] = (uint8_t)((20 + s->opt_len) / 4 << 4);
	t[13] = s->flags;
	pb_put16(t + 14, s->window);
	pb_put16(t + 18, s->urg);
	if (s->opt_len)
		memcpy(t + 20, s->opt, s->opt_len);
	if (s->plen)
		memcpy(t + 20 + s->opt_len, s->payload, s->plen);
	pb_put16(t + PB_TCP_CSUM_OFF, pb_tcp_csum(buf, ipl, tcp_len));
	if (ret)
		*ret = (struct pb_built){ .len = ipl + tcp_len, .tcp_off = ipl, .tcp_len = tcp_len };
	return ipl + tcp_len;
}

#endif
