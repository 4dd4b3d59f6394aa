/*
 * fuzz_seq - libFuzzer target: sequence translation and integrity
 * reassembly, the two pure modules that rewrite or hold a flow's bytes
 * (seqrewrite.[ch], integ.[ch]).
 *
 * The first input byte picks the part; the rest is its input.
 *
 * Even: a packet.  Four bytes of delta, then the packet, parsed by
 * pkt_parse().  For every accepted packet, in both directions, on
 * exact-size heap copies (ASan sees any stray byte):
 *   0. csum_tcp_full() equals a checksum computed here word by
 *      word, as RFC 1071 spells it;
 *   1. starting from a correct checksum, the incremental update equals a
 *      full recomputation (RFC 1624 eqn. 3 vs RFC 1071), and equals the
 *      full checksum of a copy rewritten with fix_csum false (the GSO path
 *      computes it in full);
 *   2. starting from a wrong checksum, it stays wrong: a rewrite must never
 *      launder a corrupted segment into one the receiver accepts;
 *   3. rewriting by delta and then by -delta gives back the original bytes
 *      (up to the two one's-complement zeros in the checksum field);
 *   4. only seq (out), ack and SACK edges (in) and the checksum move.
 *
 * Odd: reassembly.  Two bytes choose N (1..INTEG_MAX_LEN), four the ISN,
 * then segments of four descriptor bytes each (offset from ISN+1, length,
 * flags) cut from a stream the input also provides; a flag makes a segment
 * carry bytes that differ from the stream.  Each integ_add() result is held
 * against a plain per-byte model: the same status (a conflict exactly when
 * a byte already present differs), the same bytes present, and on
 * completion exactly the stream's first N bytes unless a wrong byte was the
 * first to arrive somewhere.
 *
 * Any broken property aborts, which libFuzzer reports as a crash.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/bytes.h"
#include "common/csum.h"
#include "common/pkt.h"
#include "datapath/client/seqrewrite.h"
#include "datapath/server/integ.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	INPUT_MAX = 70000,	/* a 64 KB GSO packet and its header bytes */
	SEG_DESC_LEN = 4,
	/*
	 * Up to 64 segments of up to 1499 bytes: enough to fill N = 2048 in
	 * any order, with overlaps and conflicts to spare; more only made each
	 * input slower (a 4 KB input could carry 255).
	 */
	MAX_SEGS = 64,
	SEG_CORRUPT = 0x01,	/* the segment's bytes differ from the stream */
	SEG_BEFORE = 0x02,	/* the offset counts back from ISN+1 */
	SEG_WRAP = 0x04,	/* far away: 2^31 and more from ISN+1 */
};


/* One's complement has two zeros; a receiver accepts either. */
static bool csum_equal(uint16_t a, uint16_t b)
{
	return a == b || (a == 0 && b == 0xffff) || (a == 0xffff && b == 0);
}

static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);

	REQUIRE(q != NULL);
	memcpy(q, p, n);
	return q;
}

HARNESS static bool in_range(size_t i, size_t off, size_t len)
{
	return i >= off && i < off + len;
}

/* May byte i change when rewriting v in direction dir? */
HARNESS static bool may_change(const struct pkt_view *v, enum seq_dir dir, size_t i)
{
	if (in_range(i, v->l4_off + TCP_CSUM_OFF, 2))
		return true;
	if (dir == SEQ_OUT)
		return in_range(i, v->l4_off + TCP_SEQ_OFF, 4);
	return in_range(i, v->l4_off + TCP_ACK_OFF, 4) ||
	       (v->nsack && in_range(i, v->sack_off, (size_t)v->nsack * SACK_BLOCK_LEN));
}

/*
 * The TCP checksum by the book (RFC 1071 4.1, pseudo-headers of RFC 9293 3.1
 * and RFC 8200 8.1), one 16-bit word at a time, with its own fold: the
 * module's faster full sum is held against this, not against itself.
 */
HARNESS static uint16_t ref_csum(const uint8_t *buf, const struct pkt_view *v)
{
	size_t tcp_len = v->tcp_hlen + v->payload_len;
	uint32_t sum = 0;
	uint8_t word[2];

	for (size_t i = 0; i < 2 * v->addr_len; i += 2)
		sum += get_be16(buf + v->addr_off + i);
	if (v->family == AF_INET6)
		sum += (uint32_t)(tcp_len >> 16);
	sum += (uint32_t)(tcp_len & 0xffff) + 6;
	for (size_t i = 0; i < tcp_len; i += 2) {
		size_t at = v->l4_off + i;

		word[0] = buf[at];
		word[1] = i + 1 < tcp_len ? buf[at + 1] : 0;
		if (i == TCP_CSUM_OFF)
			continue;	/* the field itself counts as zero */
		sum += get_be16(word);
		sum = (sum & 0xffff) + (sum >> 16);
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint16_t stored_csum(const uint8_t *buf, const struct pkt_view *v)
{
	return get_be16(buf + v->l4_off + TCP_CSUM_OFF);
}

static void rewrite(uint8_t *buf, size_t size, enum seq_dir dir, uint32_t delta, bool fix)
{
	struct pkt_view v;

	REQUIRE(pkt_parse(buf, size, &v) == PKT_OK);
	seqrewrite_apply(buf, &v, dir, delta, fix);
}

HARNESS static void check_dir(const uint8_t *pkt, size_t size, const struct pkt_view *v,
		      enum seq_dir dir, uint32_t delta, uint16_t wrong)
{
	const bool full = v->payload_caplen == v->payload_len;
	uint8_t *good = dup_bytes(pkt, size);
	uint8_t *a, *b, *c;
	uint16_t sum;

	/* A correct checksum to start from, when there is a payload to sum. */
	if (full) {
		REQUIRE(csum_equal(csum_tcp_full(good, v), ref_csum(good, v)));
		put_be16(good + v->l4_off + TCP_CSUM_OFF, 0);
		put_be16(good + v->l4_off + TCP_CSUM_OFF, csum_tcp_full(good, v));
	}
	a = dup_bytes(good, size);
	b = dup_bytes(good, size);
	rewrite(a, size, dir, delta, true);
	rewrite(b, size, dir, delta, false);

	/* 4: nothing else moved; without fix_csum the checksum did not either. */
	for (size_t i = 0; i < size; i++) {
		if (!may_change(v, dir, i))
			REQUIRE(a[i] == good[i]);
		if (in_range(i, v->l4_off + TCP_CSUM_OFF, 2))
			REQUIRE(b[i] == good[i]);
		else
			REQUIRE(b[i] == a[i]);
	}
	if (dir == SEQ_OUT)
		REQUIRE(get_be32(a + v->l4_off + TCP_SEQ_OFF) == v->seq + delta);
	if (dir == SEQ_IN && (v->flags & TCP_ACK))
		REQUIRE(get_be32(a + v->l4_off + TCP_ACK_OFF) == v->ack - delta);

	if (full) {
		struct pkt_view w;

		/* 1: incremental == full == full after the no-fix rewrite. */
		REQUIRE(pkt_parse(a, size, &w) == PKT_OK);
		sum = csum_tcp_full(a, &w);
		REQUIRE(csum_equal(stored_csum(a, &w), sum));
		REQUIRE(pkt_parse(b, size, &w) == PKT_OK);
		REQUIRE(csum_equal(csum_tcp_full(b, &w), sum));

		/* 2: a wrong checksum stays wrong. */
		c = dup_bytes(good, size);
		put_be16(c + v->l4_off + TCP_CSUM_OFF, wrong);
		if (!csum_equal(wrong, stored_csum(good, v))) {
			rewrite(c, size, dir, delta, true);
			REQUIRE(pkt_parse(c, size, &w) == PKT_OK);
			REQUIRE(!csum_equal(stored_csum(c, &w), csum_tcp_full(c, &w)));
		}
		free(c);
	}

	/* 3: and back, from the packet as it came (its checksum need not be right). */
	c = dup_bytes(pkt, size);
	rewrite(c, size, dir, delta, true);
	rewrite(c, size, dir, 0u - delta, true);
	for (size_t i = 0; i < size; i++) {
		if (in_range(i, v->l4_off + TCP_CSUM_OFF, 2))
			continue;
		/* Without ACK the field is left as it was, either way. */
		REQUIRE(c[i] == pkt[i]);
	}
	REQUIRE(csum_equal(stored_csum(c, v), stored_csum(pkt, v)));
	free(c);
	free(a);
	free(b);
	free(good);
}

static void fuzz_packet(const uint8_t *data, size_t size)
{
	struct pkt_view v;
	uint8_t *pkt;
	uint32_t delta;
	uint16_t wrong;

	if (size < 6)
		return;
	delta = get_be32(data);
	wrong = get_be16(data + 4);
	pkt = dup_bytes(data + 6, size - 6);
	if (pkt_parse(pkt, size - 6, &v) == PKT_OK) {
		check_dir(pkt, size - 6, &v, SEQ_OUT, delta, wrong);
		check_dir(pkt, size - 6, &v, SEQ_IN, delta, wrong);
	}
	free(pkt);
}

/* ------------------------------------------------------------------ */

struct model {
	uint16_t need, have;
	bool present[INTEG_MAX_LEN];
	uint8_t data[INTEG_MAX_LEN];
	bool tainted;		/* a wrong byte was the first at some offset */
};

/* The byte a segment carries at stream offset off (off may be negative). */
HARNESS static uint8_t seg_byte(const uint8_t *stream, size_t slen, int64_t off, bool corrupt)
{
	uint8_t b = slen ? stream[(uint64_t)off % slen] : (uint8_t)off;

	return corrupt ? (uint8_t)(b ^ 0xa5) : b;
}

HARNESS static enum integ_status model_add(struct model *m, int64_t start, const uint8_t *p, size_t len,
				   bool corrupt)
{
	/* Only the part inside [0, N) counts: clip to it first. */
	size_t j0 = start < 0 ? (size_t)-start : 0;

	for (size_t j = j0; j < len; j++) {
		int64_t off = start + (int64_t)j;

		if (off >= m->need)
			break;
		if (m->present[off]) {
			if (m->data[off] != p[j])
				return INTEG_CONFLICT;
			continue;
		}
		m->present[off] = true;
		m->data[off] = p[j];
		m->have++;
		if (corrupt)
			m->tainted = true;
	}
	return m->have == m->need ? INTEG_COMPLETE : INTEG_MORE;
}

/* The module's bitmap and bytes are the model's (checked at the end and on completion). */
HARNESS static void same_state(const struct integ_buf *b, const struct model *m)
{
	for (size_t i = 0; i < m->need; i++) {
		bool bit = b->present[i >> 3] & (1u << (i & 7));

		REQUIRE(bit == m->present[i]);
		if (bit)
			REQUIRE(b->data[i] == m->data[i]);
	}
}

/*
 * A segment's bytes, on an exact-size heap copy: ASan sees a read past it.
 * At offsets from 0 on, byte for byte what seg_byte() gives, with the
 * stream copied one period at a time rather than indexed byte by byte.
 */
HARNESS static uint8_t *segment(const uint8_t *stream, size_t slen, int64_t start, size_t len,
				bool corrupt)
{
	uint8_t *p = malloc(len ? len : 1);

	REQUIRE(p != NULL);
	if (slen == 0) {
		for (size_t j = 0; j < len; j++)
			p[j] = (uint8_t)(start + (int64_t)j);
	} else {
		/* start mod slen in [0, slen), negative starts included. */
		size_t k = (size_t)(((start % (int64_t)slen) + (int64_t)slen) % (int64_t)slen);

		/* One period (stream[k..], then stream[..k]), then doubled:
		 * p[j] = p[j - slen] for j >= slen. */
		size_t n = len < slen ? len : slen;
		size_t first = slen - k < n ? slen - k : n;

		memcpy(p, stream + k, first);
		memcpy(p + first, stream, n - first);
		while (n < len) {
			size_t c = n < len - n ? n : len - n;

			memcpy(p + n, p, c);
			n += c;
		}
	}
	if (corrupt)
		for (size_t j = 0; j < len; j++)
			p[j] ^= 0xa5;
	return p;
}

/* Completed without a wrong byte first anywhere: exactly the stream's first N bytes. */
HARNESS static void same_stream(const struct integ_buf *b, const uint8_t *stream, size_t slen)
{
	for (size_t i = 0; i < b->need; i++)
		REQUIRE(b->data[i] == seg_byte(stream, slen, (int64_t)i, false));
}

static void fuzz_integ(const uint8_t *data, size_t size)
{
	struct integ_buf *b;
	struct model *m;
	const uint8_t *desc, *stream;
	size_t nseg, slen;
	uint32_t isn;
	uint16_t need;

	if (size < 7)
		return;
	need = (uint16_t)(get_be16(data) % INTEG_MAX_LEN + 1);
	isn = get_be32(data + 2);
	nseg = data[6] % (MAX_SEGS + 1);
	data += 7;
	size -= 7;
	if (nseg * SEG_DESC_LEN > size)
		nseg = size / SEG_DESC_LEN;
	desc = data;
	stream = data + nseg * SEG_DESC_LEN;
	slen = size - nseg * SEG_DESC_LEN;

	b = malloc(sizeof(*b));
	m = calloc(1, sizeof(*m));
	REQUIRE(b && m);
	integ_init(b, isn, need);
	REQUIRE(b->base == isn + 1 && b->need == need && b->have == 0);
	m->need = need;

	for (size_t s = 0; s < nseg; s++) {
		const uint8_t *d = desc + s * SEG_DESC_LEN;
		uint8_t flags = d[3];
		bool corrupt = flags & SEG_CORRUPT;
		int64_t start = get_be16(d) % (INTEG_MAX_LEN + 64);
		size_t len = d[2] * 9u % 1500;	/* up to an MSS, often longer than N */
		enum integ_status got, want;
		uint8_t *p;

		if (flags & SEG_BEFORE)
			start = -start;
		if (flags & SEG_WRAP)	/* half the sequence space away, either side */
			start += flags & SEG_BEFORE ? -(int64_t)INT32_MAX : (int64_t)INT32_MAX - 8;
		/*
		 * Sequence numbers are modulo 2^32 (RFC 9293 3.4): a segment
		 * more than 2^31 away lies on the other side of ISN+1.  The
		 * model works on plain offsets, so it gets that distance.
		 */
		start = (int32_t)(uint32_t)start;
		p = segment(stream, slen, start, len, corrupt);
		got = integ_add(b, isn + 1 + (uint32_t)start, p, len);
		want = model_add(m, start, p, len, corrupt);
		free(p);
		REQUIRE(got == want);
		if (got == INTEG_CONFLICT)
			break;	/* the caller fails the flow closed: no more input */
		REQUIRE(b->have == m->have);
		if (got == INTEG_COMPLETE) {
			same_state(b, m);
			if (!m->tainted)
				same_stream(b, stream, slen);
		}
	}
	same_state(b, m);
	free(b);
	free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > INPUT_MAX)
		return 0;
	if (data[0] % 2 == 0)
		fuzz_packet(data + 1, size - 1);
	else
		fuzz_integ(data + 1, size - 1);
	return 0;
}
