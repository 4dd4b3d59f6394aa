/*
 * fuzz_pkt - libFuzzer target: parse -> rewrite -> verify.
 *
 * Whatever pkt_parse() accepts must be safe to hand to the rest of the
 * pipeline, so for every accepted input this target
 *   1. checks that every offset in the view lies inside the input;
 *   2. runs seqrewrite_apply() in both directions on an exact-size heap copy
 *      (so ASan sees any stray byte), then re-parses the copy and checks that
 *      the view is unchanged except for the translated numbers, that no byte
 *      outside seq/ack/SACK/checksum moved, and that the incrementally
 *      patched checksum equals a full recomputation (RFC 1624 vs RFC 1071);
 *   3. runs isn_verify_syn() with a fixed key in both modes, auth only and with
 *      integrity, and checks that an ISN computed for the packet verifies.
 * Any broken property aborts, which libFuzzer reports as a crash.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "common/csum.h"
#include "common/isn.h"
#include "common/pkt.h"
#include "datapath/client/seqrewrite.h"
#include "harness.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	INTEGRITY_LEN = 16,
	WINDOW = 30,
};

static const uint64_t fuzz_now = 1700000000;	/* a fixed clock: runs must repeat */
static struct kg_key fuzz_key;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t raw[KG_NATIVE_KEY_LEN];

	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	/* 32 bytes: usable as a native key and as a knock secret alike. */
	for (size_t i = 0; i < sizeof(raw); i++)
		raw[i] = (uint8_t)i;
	isn_key_init(&fuzz_key, raw, sizeof(raw));
	REQUIRE(fuzz_key.native_ok);
	return 0;
}

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

/* The contract of pkt.h: every described byte is inside the capture. */
static void check_bounds(const struct pkt_view *v, size_t size)
{
	REQUIRE(v->family == AF_INET || v->family == AF_INET6);
	REQUIRE(v->addr_len == (v->family == AF_INET ? 4u : 16u));
	REQUIRE(v->addr_off + 2 * v->addr_len <= v->l4_off);
	REQUIRE(v->tcp_hlen >= 20 && v->tcp_hlen <= 60 && v->tcp_hlen % 4 == 0);
	REQUIRE(v->payload_off == v->l4_off + v->tcp_hlen);
	REQUIRE(v->payload_off <= size);
	REQUIRE(v->payload_caplen <= v->payload_len);
	REQUIRE(v->payload_off + v->payload_caplen <= size);
	REQUIRE(v->payload_off + v->payload_len == v->ip_len);
	if (v->has_ts)
		REQUIRE(v->ts_off >= v->l4_off + 22 && v->ts_off + 8 <= v->payload_off);
	REQUIRE(v->nsack <= PKT_MAX_SACK);
	if (v->nsack)
		REQUIRE(v->sack_off >= v->l4_off + 22 &&
			v->sack_off + (size_t)v->nsack * SACK_BLOCK_LEN <= v->payload_off);
	if (v->has_ts && v->nsack)	/* the two options cannot overlap */
		REQUIRE(v->ts_off + 8 <= v->sack_off - 2 ||
			v->sack_off + (size_t)v->nsack * SACK_BLOCK_LEN <= v->ts_off - 2);
}

/* Everything but the translated numbers must survive a rewrite. */
static void check_same_shape(const struct pkt_view *a, const struct pkt_view *b)
{
	REQUIRE(a->family == b->family);
	REQUIRE(a->ip_len == b->ip_len);
	REQUIRE(a->addr_off == b->addr_off);
	REQUIRE(a->addr_len == b->addr_len);
	REQUIRE(a->l4_off == b->l4_off);
	REQUIRE(a->tcp_hlen == b->tcp_hlen);
	REQUIRE(a->payload_off == b->payload_off);
	REQUIRE(a->payload_len == b->payload_len);
	REQUIRE(a->payload_caplen == b->payload_caplen);
	REQUIRE(a->sport == b->sport && a->dport == b->dport);
	REQUIRE(a->flags == b->flags && a->window == b->window);
	REQUIRE(a->has_mss == b->has_mss && a->mss == b->mss);
	REQUIRE(a->has_wscale == b->has_wscale && a->wscale == b->wscale);
	REQUIRE(a->sack_perm == b->sack_perm);
	REQUIRE(a->has_ts == b->has_ts && a->ts_off == b->ts_off);
	REQUIRE(a->tsval == b->tsval && a->tsecr == b->tsecr);
	REQUIRE(a->nsack == b->nsack && a->sack_off == b->sack_off);
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

static void check_rewrite(const uint8_t *data, size_t size, const struct pkt_view *v,
			  enum seq_dir dir, uint32_t delta)
{
	uint8_t *ref = malloc(size), *copy = malloc(size);
	const size_t l4 = v->l4_off, sacklen = (size_t)v->nsack * SACK_BLOCK_LEN;
	bool full = v->payload_caplen == v->payload_len;
	struct pkt_view w = *v, again;

	REQUIRE(ref != NULL && copy != NULL);
	memcpy(ref, data, size);
	/*
	 * With the whole segment captured, start from a correct checksum so
	 * that the incremental update can be held against a full one.
	 */
	if (full) {
		wr16(ref + l4 + TCP_CSUM_OFF, 0);
		wr16(ref + l4 + TCP_CSUM_OFF, csum_tcp_full(ref, v));
	}
	memcpy(copy, ref, size);

	seqrewrite_apply(copy, &w, dir, delta, true);

	REQUIRE(pkt_parse(copy, size, &again) == PKT_OK);
	check_same_shape(v, &again);
	check_same_shape(v, &w);
	REQUIRE(again.seq == w.seq && again.ack == w.ack);

	if (dir == SEQ_OUT) {
		REQUIRE(again.seq == v->seq + delta);
		REQUIRE(again.ack == v->ack);
	} else {
		REQUIRE(again.seq == v->seq);
		/* Without ACK the field means nothing; leaving it is fine too. */
		REQUIRE(again.ack == v->ack - delta ||
			(!(v->flags & TCP_ACK) && again.ack == v->ack));
	}
	for (size_t i = 0; i < 2u * v->nsack; i++) {
		size_t off = v->sack_off + 4 * i;
		uint32_t want = dir == SEQ_IN ? rd32(ref + off) - delta : rd32(ref + off);

		REQUIRE(rd32(copy + off) == want);
	}
	for (size_t i = 0; i < size; i++) {
		if (in_range(i, l4 + TCP_CSUM_OFF, 2) ||
		    (dir == SEQ_OUT && in_range(i, l4 + TCP_SEQ_OFF, 4)) ||
		    (dir == SEQ_IN && in_range(i, l4 + TCP_ACK_OFF, 4)) ||
		    (dir == SEQ_IN && v->nsack && in_range(i, v->sack_off, sacklen)))
			continue;
		REQUIRE(copy[i] == ref[i]);
	}
	if (full) {
		uint16_t stored = rd16(copy + l4 + TCP_CSUM_OFF);

		REQUIRE(csum_equal(csum_tcp_full(copy, &again), stored));
	}
	free(ref);
	free(copy);
}

static void check_verify(const uint8_t *data, const struct pkt_view *v)
{
	static const enum kg_mode modes[] = { KG_MODE_KNOCK, KG_MODE_NATIVE };
	static const uint16_t ilens[] = { 0, INTEGRITY_LEN };
	const struct isn_input in = {
		.family = v->family,
		.dst = pkt_dst(data, v),
		.port = v->dport,
		.tsval = v->has_ts ? v->tsval : 0,
	};
	const uint8_t *payload = data + v->payload_off;
	uint64_t e = isn_epoch(fuzz_now, WINDOW);

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		for (size_t k = 0; k < sizeof(ilens) / sizeof(ilens[0]); k++) {
			const struct isn_params p = {
				.mode = modes[m], .integrity_len = ilens[k], .window = WINDOW,
				.no_ts = !v->has_ts,
			};
			struct isn_match vm = { .epoch = UINT64_MAX };
			uint64_t epoch;
			enum isn_result r;
			uint32_t isn;

			/* The packet's own ISN: almost surely no knock. */
			r = isn_verify_syn(&fuzz_key, &p, &in, v->seq, fuzz_now, &vm);
			REQUIRE(r == ISN_OK || r == ISN_BAD_AV);

			if (p.integrity_len > v->payload_caplen)
				continue;
			/* A knock computed for this very packet must pass. */
			isn = isn_compute(&fuzz_key, p.mode, &in, e, payload, p.integrity_len);
			r = isn_verify_syn(&fuzz_key, &p, &in, isn, fuzz_now, &vm);
			REQUIRE(r == ISN_OK);
			epoch = vm.epoch;
			if (p.mode == KG_MODE_KNOCK)
				REQUIRE(epoch == 0);
			else
				REQUIRE(epoch >= e - 1 && epoch <= e + 1);
			/*
			 * In integrity mode only 16 AV bits are compared, so an
			 * earlier epoch may match by chance; the payload check
			 * is only certain for the epoch the ISN was made for.
			 */
			if (p.integrity_len && (p.mode == KG_MODE_KNOCK || epoch == e))
				REQUIRE(isn_verify_payload(&fuzz_key, &p, &in, isn, epoch, payload) ==
					ISN_OK);
			/* Without a timestamp, the nonce form of any nonce passes too. */
			if (p.mode == KG_MODE_NATIVE && p.no_ts && !p.integrity_len) {
				isn = isn_native_nonce(&fuzz_key, &in, e, (uint8_t)v->sport);
				REQUIRE(isn_verify_syn(&fuzz_key, &p, &in, isn, fuzz_now, &vm) ==
					ISN_OK);
				REQUIRE(vm.epoch >= e - 1 && vm.epoch <= e + 1);
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkt_view v;
	uint32_t delta;

	if (pkt_parse(data, size, &v) != PKT_OK)
		return 0;
	check_bounds(&v, size);

	/* Let the input pick the delta too, wrap-around included. */
	delta = (uint32_t)v.window << 16 | v.sport;
	check_rewrite(data, size, &v, SEQ_OUT, delta);
	check_rewrite(data, size, &v, SEQ_IN, delta);
	check_rewrite(data, size, &v, SEQ_IN, 0x80000000u);

	check_verify(data, &v);
	return 0;
}
