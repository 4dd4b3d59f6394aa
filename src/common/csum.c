/*
 * csum.c - the Internet checksum: RFC 1624 incremental updates and the full
 * TCP and ICMP checksums, pseudo-headers included.
 *
 * The one's-complement sum is byte-order independent (RFC 1071 2.(B)), so
 * the incremental updates take words exactly as they lie in the packet.
 */
#include <string.h>
#include <sys/socket.h>

#include "common/bytes.h"
#include "common/csum.h"

enum {
	IPPROTO_TCP_NUM = 6,
	IPPROTO_ICMPV6_NUM = 58,
	ICMP_CSUM_OFF = 2,
	IPV6_SRC_OFF = 8,
	IPV6_ADDRS_LEN = 32,
};

/* Folds a 32-bit accumulator of 16-bit words to 16 bits with end-around carry. */
static uint16_t fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/*
 * RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'), applied to the two 16-bit halves
 * of a 32-bit word.  Eqn. 3 rather than eqn. 2 (HC' = HC - ~m - m') because
 * it never produces the -0 form 0xffff from a valid checksum (RFC 1624 3-4).
 * check, old_be and new_be must all be in the same byte order; as they lie
 * in the packet is the natural choice.
 */
uint16_t csum_replace32(uint16_t check, uint32_t old_be, uint32_t new_be)
{
	uint32_t sum = (uint16_t)~check;

	sum += (~old_be >> 16) + (~old_be & 0xffff);
	sum += (new_be >> 16) + (new_be & 0xffff);
	return (uint16_t)~fold(sum);
}

/* RFC 1624 eqn. 3 for one 16-bit word; same byte order rule as csum_replace32(). */
uint16_t csum_replace16(uint16_t check, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint16_t)~check;

	sum += (uint16_t)~old;
	sum += new;
	return (uint16_t)~fold(sum);
}

/*
 * Adds len bytes at p to sum as big-endian 16-bit words (RFC 1071 4.1).
 * Whole packets pass here on the user path, so it takes 32-bit words while
 * it can: hi * 2^16 + lo is hi + lo modulo 0xffff, and the caller's end-
 * around-carry fold works modulo 0xffff, so the result is the same.
 */
static uint64_t sum_bytes(uint64_t sum, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		sum += get_be32(p);
		sum += get_be32(p + 4);
		p += 8;
		len -= 8;
	}
	while (len >= 2) {
		sum += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	/* An odd last byte is padded with a zero on the right (RFC 9293 3.1). */
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/*
 * The payload, the bulk of a GSO packet on the user path: the same sum, by
 * 64-bit loads in the host's byte order.  The one's complement sum does not
 * depend on byte order (RFC 1071 2(B)): summed as little-endian words it is
 * the big-endian sum with its two bytes swapped.  Each 64-bit load adds its
 * two 32-bit halves (hi * 2^32 + lo is hi + lo modulo 0xffff, as above);
 * two accumulators of at most 2^16 * 2^33 cannot overflow for any packet.
 * The tail (under 16 bytes) goes through sum_bytes(); p is at an even
 * offset of the segment, and so is p + n.
 */
static uint64_t sum_payload(uint64_t sum, const uint8_t *p, size_t len)
{
	const size_t n = len & ~(size_t)15;
	uint64_t a = 0, b = 0;

	for (size_t i = 0; i < n; i += 16) {
		uint64_t x, y;

		memcpy(&x, p + i, sizeof(x));
		memcpy(&y, p + i + 8, sizeof(y));
		a += (x & 0xffffffffu) + (x >> 32);
		b += (y & 0xffffffffu) + (y >> 32);
	}
	a += b;
	while (a >> 16)
		a = (a & 0xffff) + (a >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	a = ((a & 0xff) << 8) | (a >> 8);
#endif
	return sum_bytes(sum + a, p + n, len - n);
}

/*
 * RFC 9293 3.1 (IPv4 pseudo-header) and RFC 8200 8.1 (IPv6).  The TCP
 * length is the declared one, header plus payload_len, but only the captured
 * bytes are read: the result is only meaningful when payload_caplen ==
 * payload_len, which the caller must check first.  The checksum field itself
 * is summed as zero, so the result is the value to store (or to compare with
 * the stored one).  Returned in host order, like the numbers in pkt_view.
 * The IPv6 destination is the one in the fixed header: a Routing header's
 * final destination (RFC 8200 8.1) is not looked for.
 */
uint16_t csum_tcp_full(const uint8_t *buf, const struct pkt_view *v)
{
	const uint8_t *tcp = buf + v->l4_off;
	uint64_t tcp_len = (uint64_t)v->tcp_hlen + v->payload_len;
	uint64_t sum = 0;

	sum = sum_bytes(sum, buf + v->addr_off, 2 * v->addr_len);
	if (v->family == AF_INET6) {
		/* 32-bit upper-layer length, 3 zero bytes, next header. */
		sum += (tcp_len >> 16) & 0xffff;
		sum += tcp_len & 0xffff;
	} else {
		/* zero, protocol, 16-bit TCP length. */
		sum += tcp_len & 0xffff;
	}
	sum += IPPROTO_TCP_NUM;

	sum = sum_bytes(sum, tcp, TCP_CSUM_OFF);
	sum = sum_bytes(sum, tcp + TCP_CSUM_OFF + 2, v->tcp_hlen - TCP_CSUM_OFF - 2);
	sum = sum_payload(sum, buf + v->payload_off, v->payload_caplen);

	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}


/*
 * RFC 792 (the ICMP message alone) and RFC 4443 2.3 (ICMPv6: the RFC 8200
 * 8.1 pseudo-header first, with the outer header's addresses).
 */
uint16_t csum_icmp_full(const uint8_t *buf, const struct icmperr_view *v)
{
	const uint8_t *icmp = buf + v->icmp_off;
	uint64_t sum = 0;

	if (v->family == AF_INET6) {
		sum = sum_bytes(sum, buf + IPV6_SRC_OFF, IPV6_ADDRS_LEN);
		sum += (v->icmp_len >> 16) & 0xffff;
		sum += v->icmp_len & 0xffff;
		sum += IPPROTO_ICMPV6_NUM;
	}
	sum = sum_bytes(sum, icmp, ICMP_CSUM_OFF);
	sum = sum_bytes(sum, icmp + ICMP_CSUM_OFF + 2, v->icmp_caplen - ICMP_CSUM_OFF - 2);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}
