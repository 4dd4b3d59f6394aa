/*
 * fuzz_icmp - libFuzzer target: ICMP error parse -> translate back.
 *
 * Whatever icmperr_parse() accepts must be safe to rewrite, so for every
 * accepted input this target
 *   1. checks that every offset and length in the view lies inside the
 *      input and inside the datagrams the headers declare;
 *   2. runs seqrewrite_icmp() on an exact-size heap copy (ASan sees any
 *      stray byte), then parses the copy again and checks that the view is
 *      unchanged but for the sequence number, which went back by delta,
 *      that no byte moved but the quoted sequence number, the quoted TCP
 *      checksum and the ICMP checksum, and that, started from correct
 *      checksums, both are still correct (RFC 1624 against RFC 1071: the
 *      ICMP one against csum_icmp_full and a model here, the
 *      quoted TCP one against a model over the whole quoted segment).
 * Any broken property aborts, which libFuzzer reports as a crash.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/csum.h"
#include "common/icmperr.h"
#include "datapath/client/seqrewrite.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* RFC 1071, byte by byte: the model both checksums are held against. */
HARNESS static uint32_t model_sum(uint32_t sum, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sum += i % 2 ? p[i] : (uint32_t)p[i] << 8;
	return sum;
}

HARNESS static uint16_t model_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The ICMP checksum with the field taken as zero (captured bytes only). */
HARNESS static uint16_t model_icmp(const uint8_t *b, const struct icmperr_view *v)
{
	uint32_t sum = 0;

	if (v->family == AF_INET6) {
		sum = model_sum(sum, b + 8, 32);
		sum += (uint32_t)(v->icmp_len >> 16) + (uint32_t)(v->icmp_len & 0xffff) + 58;
	}
	sum = model_sum(sum, b + v->icmp_off, 2);
	sum = model_sum(sum, b + v->icmp_off + 4, v->icmp_caplen - 4);
	return model_fold(sum);
}

/*
 * The quoted segment's TCP checksum over what was quoted, the length taken
 * as quoted: meaningful as a check of the incremental update only (a
 * segment checksummed this way before stays checksummed this way after).
 */
HARNESS static uint16_t model_tcp(const uint8_t *b, const struct icmperr_view *v)
{
	uint32_t sum = model_sum(0, b + v->q_addr_off, 2 * v->addr_len);

	sum += (uint32_t)(v->q_tcp_len >> 16) + (uint32_t)(v->q_tcp_len & 0xffff) + 6;
	sum = model_sum(sum, b + v->q_tcp_off, ICMPERR_TCP_CSUM_OFF);
	sum = model_sum(sum, b + v->q_tcp_off + ICMPERR_TCP_CSUM_OFF + 2,
			v->q_tcp_len - ICMPERR_TCP_CSUM_OFF - 2);
	return model_fold(sum);
}

/* One's complement has two zeros; a receiver accepts either. */
static bool csum_equal(uint16_t a, uint16_t b)
{
	return a == b || (a == 0 && b == 0xffff) || (a == 0xffff && b == 0);
}

static bool in_range(size_t i, size_t off, size_t len)
{
	return i >= off && i < off + len;
}

static void check_bounds(const struct icmperr_view *v, size_t size)
{
	REQUIRE(v->family == AF_INET || v->family == AF_INET6);
	REQUIRE(v->addr_len == (v->family == AF_INET ? 4u : 16u));
	REQUIRE(v->icmp_caplen >= 8 && v->icmp_caplen <= v->icmp_len);
	REQUIRE(v->icmp_off + v->icmp_caplen <= size);
	REQUIRE(v->q_addr_off >= v->icmp_off + 8);
	REQUIRE(v->q_addr_off + 2 * v->addr_len <= v->q_tcp_off);
	REQUIRE(v->q_tcp_len >= ICMPERR_TCP_MIN);
	REQUIRE(v->q_tcp_off + v->q_tcp_len <= v->icmp_off + v->icmp_caplen);
}

/* Everything but the sequence number must survive a rewrite. */
static void check_same_shape(const struct icmperr_view *a, const struct icmperr_view *b)
{
	REQUIRE(a->family == b->family && a->type == b->type && a->code == b->code);
	REQUIRE(a->icmp_off == b->icmp_off && a->icmp_len == b->icmp_len);
	REQUIRE(a->icmp_caplen == b->icmp_caplen);
	REQUIRE(a->q_addr_off == b->q_addr_off && a->addr_len == b->addr_len);
	REQUIRE(a->q_tcp_off == b->q_tcp_off && a->q_tcp_len == b->q_tcp_len);
	REQUIRE(a->sport == b->sport && a->dport == b->dport);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct icmperr_view v, w, again;
	uint8_t *ref, *copy;
	uint32_t delta;
	bool tcsum;

	if (icmperr_parse(data, size, &v) != ICMPERR_OK)
		return 0;
	check_bounds(&v, size);
	REQUIRE(v.sport == rd16(data + v.q_tcp_off) && v.dport == rd16(data + v.q_tcp_off + 2));
	REQUIRE(v.seq == rd32(data + v.q_tcp_off + 4));

	ref = malloc(size);
	copy = malloc(size);
	REQUIRE(ref != NULL && copy != NULL);
	memcpy(ref, data, size);
	/* Start from correct checksums, so the updates can be held to them. */
	tcsum = icmperr_has_tcp_csum(&v);
	if (tcsum) {
		wr16(ref + v.q_tcp_off + ICMPERR_TCP_CSUM_OFF, 0);
		wr16(ref + v.q_tcp_off + ICMPERR_TCP_CSUM_OFF, model_tcp(ref, &v));
	}
	wr16(ref + v.icmp_off + 2, 0);
	wr16(ref + v.icmp_off + 2, model_icmp(ref, &v));
	REQUIRE(csum_icmp_full(ref, &v) == model_icmp(ref, &v));
	memcpy(copy, ref, size);

	/* Let the input pick the delta too, wrap-around included. */
	delta = (uint32_t)v.dport << 16 | v.sport;
	w = v;
	seqrewrite_icmp(copy, &w, delta);
	REQUIRE(w.seq == v.seq - delta);
	REQUIRE(icmperr_parse(copy, size, &again) == ICMPERR_OK);
	REQUIRE(again.seq == w.seq);
	check_same_shape(&v, &again);
	check_same_shape(&v, &w);
	for (size_t i = 0; i < size; i++) {
		if (in_range(i, v.q_tcp_off + 4, 4) || in_range(i, v.icmp_off + 2, 2) ||
		    (tcsum && in_range(i, v.q_tcp_off + ICMPERR_TCP_CSUM_OFF, 2)))
			continue;
		REQUIRE(copy[i] == ref[i]);
	}
	REQUIRE(csum_equal(rd16(copy + v.icmp_off + 2), model_icmp(copy, &again)));
	if (tcsum)
		REQUIRE(csum_equal(rd16(copy + v.q_tcp_off + ICMPERR_TCP_CSUM_OFF),
				   model_tcp(copy, &again)));
	free(ref);
	free(copy);
	return 0;
}
