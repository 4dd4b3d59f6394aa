/*
 * test_integ.c - reassembly of the first N bytes after ISN+1 (integ.[ch]).
 *
 * Every row feeds segments cut from one known byte stream (stream(), a fixed
 * function of the offset from ISN+1, negative offsets included) and spells
 * out the status each call must return and the number of bytes present at
 * the end.  The stored bytes are compared with what a plain per-byte model
 * expects: the first copy of each byte in the window wins, bytes never sent
 * stay 0.  Sequence numbers are taken modulo 2^32 (RFC 9293 3.4), so rows
 * also sit across the wrap.  A second part cuts random windows into random,
 * shuffled, duplicated segments.  No clock, no I/O.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "datapath/server/integ.h"
#include "unit.h"

enum {
	MAX_SEGS = 8,
	MAX_SEG_LEN = 4096,
	RANDOM_CASES = 2000,
	RANDOM_MAX_SEGS = 64,
};

#define M INTEG_MORE
#define C INTEG_COMPLETE
#define X INTEG_CONFLICT

struct seg {
	int64_t off;		/* first byte, from ISN+1; seq = ISN+1+off mod 2^32 */
	uint16_t len;
	uint16_t flip;		/* 1-based index of a byte sent wrong, 0 none */
	enum integ_status want;
};

struct row {
	uint32_t isn;
	uint16_t n;
	uint8_t nseg;
	struct seg seg[MAX_SEGS];
	uint16_t want_have;
};

static const struct row rows[] = {
	/* 1-2: one segment, exactly N or longer */
	{ 1000, 16, 1, { { 0, 16, 0, C } }, 16 },
	{ 1000, 16, 1, { { 0, 100, 0, C } }, 16 },
	/* 3-5: split; reordered; single bytes backwards */
	{ 7, 16, 2, { { 0, 10, 0, M }, { 10, 6, 0, C } }, 16 },
	{ 7, 16, 3, { { 10, 6, 0, M }, { 0, 4, 0, M }, { 4, 6, 0, C } }, 16 },
	{ 7, 4, 4, { { 3, 1, 0, M }, { 2, 1, 0, M }, { 1, 1, 0, M }, { 0, 1, 0, C } }, 4 },
	/* 6: duplicates, before and after completion */
	{ 99, 16, 4, { { 0, 8, 0, M }, { 0, 8, 0, M }, { 8, 8, 0, C }, { 8, 8, 0, C } }, 16 },
	/* 7-8: overlapping retransmissions that agree */
	{ 99, 16, 2, { { 0, 10, 0, M }, { 6, 10, 0, C } }, 16 },
	{ 99, 16, 3, { { 4, 4, 0, M }, { 0, 12, 0, M }, { 10, 6, 0, C } }, 16 },
	/* 9: an overlap that disagrees (offset 7, already present) */
	{ 99, 16, 2, { { 0, 10, 0, M }, { 5, 10, 3, X } }, 0 },
	/* 10: a wrong byte nobody sent before is no conflict (verify catches it) */
	{ 99, 16, 2, { { 0, 8, 0, M }, { 8, 8, 4, C } }, 16 },
	/* 11: a disagreeing retransmission after completion */
	{ 99, 16, 2, { { 0, 16, 0, C }, { 3, 1, 1, X } }, 0 },
	/* 12: new bytes first, then a conflict inside the same segment */
	{ 99, 16, 2, { { 8, 8, 0, M }, { 0, 12, 10, X } }, 0 },
	/* 13-14: starts before base: clipped; ends at base: ignored */
	{ 5000, 16, 2, { { -5, 10, 0, M }, { 5, 11, 0, C } }, 16 },
	{ 5000, 16, 4, { { -10, 10, 0, M }, { -4, 4, 0, M }, { -10, 9, 0, M }, { -1, 17, 0, C } },
	  16 },
	/* 15: beyond N: ignored, or cut at N */
	{ 5000, 16, 4, { { 16, 10, 0, M }, { 20, 5, 0, M }, { 14, 10, 0, M }, { 0, 14, 0, C } },
	  16 },
	/* 16: one segment from before base to beyond N */
	{ 5000, 16, 1, { { -100, 300, 0, C } }, 16 },
	/* 17-19: across 2^32: base 0xfffffff1, base 0, a clipped one across the wrap */
	{ 0xfffffff0, 32, 3, { { 0, 15, 0, M }, { 20, 12, 0, M }, { 10, 10, 0, C } }, 32 },
	{ 0xffffffff, 16, 2, { { 8, 8, 0, M }, { 0, 8, 0, C } }, 16 },
	{ 0xfffffffe, 16, 2, { { -3, 6, 0, M }, { 3, 13, 0, C } }, 16 },
	/* 20-22: N = 1 */
	{ 1, 1, 1, { { 0, 1, 0, C } }, 1 },
	{ 1, 1, 1, { { -1, 2, 0, C } }, 1 },
	{ 0x7fffffff, 1, 3, { { 1, 5, 0, M }, { -5, 5, 0, M }, { 0, 1, 0, C } }, 1 },
	/* 23-24: N = INTEG_MAX_LEN in full-sized segments, in and out of order */
	{ 424242, INTEG_MAX_LEN, 2, { { 0, 1448, 0, M }, { 1448, 1448, 0, C } }, INTEG_MAX_LEN },
	{ 0xfffffc00, INTEG_MAX_LEN, 3,
	  { { 1000, 1048, 0, M }, { 2047, 1, 0, M }, { 0, 1200, 0, C } }, INTEG_MAX_LEN },
	/* 25: zero-length segments change nothing */
	{ 31, 16, 5,
	  { { 0, 0, 0, M }, { 5, 0, 0, M }, { 0, 16, 0, C }, { 16, 0, 0, C }, { 3, 0, 0, C } }, 16 },
	/*
	 * 26: far away: seq - base >= 2^31 is before base (RFC 9293 3.4),
	 * so 2^31 and 2^32 - 8 come before, 2^31 - 1 after the window.
	 */
	{ 0x10, 16, 4,
	  { { 0x80000000, 100, 0, M }, { 0x7fffffff, 100, 0, M }, { 0xfffffff8, 20, 0, M },
	    { 12, 4, 0, C } },
	  16 },
	/* 27: the same near the wrap */
	{ 0xfffffff0, 16, 3,
	  { { 0x80000000, 3000, 0, M }, { 0xfffff000, 4096, 0, M }, { 0, 16, 0, C } }, 16 },
	/* 28: a partial window stays MORE */
	{ 42, 100, 3, { { 0, 10, 0, M }, { 50, 10, 0, M }, { 99, 1, 0, M } }, 21 },
};

/* The client's byte stream around ISN+1: a fixed function of the offset. */
static uint8_t stream(int64_t off)
{
	uint64_t u = (uint64_t)off;

	return (uint8_t)(u * 131 + 17 + (u >> 8) * 7);
}

/* The segment's bytes: the stream at its offset, one byte flipped if asked. */
static void fill(uint8_t *p, int64_t off, size_t len, uint16_t flip)
{
	for (size_t i = 0; i < len; i++)
		p[i] = stream(off + (int64_t)i);
	if (flip)
		p[flip - 1] ^= 0x5a;
}

/* The offset integ.h means: the signed 32-bit distance from base. */
static int64_t distance(int64_t off)
{
	return (int32_t)(uint32_t)off;
}

/* Model: the first copy of each window byte wins; returns true on a disagreement. */
static bool model_add(uint8_t *want, bool *have, uint16_t n, int64_t off, const uint8_t *p,
		      size_t len)
{
	int64_t start = distance(off);
	bool conflict = false;

	for (size_t i = 0; i < len; i++) {
		int64_t at = start + (int64_t)i;

		if (at < 0 || at >= n)
			continue;
		if (have[at]) {
			conflict |= want[at] != p[i];
			continue;
		}
		have[at] = true;
		want[at] = p[i];
	}
	return conflict;
}

static void table_rows(void)
{
	static struct integ_buf b;
	static uint8_t want[INTEG_MAX_LEN], seg[MAX_SEG_LEN];
	static bool have[INTEG_MAX_LEN];

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct row *row = &rows[r];
		unsigned no = (unsigned)r + 1;
		bool conflicted = false;

		memset(&b, 0xa5, sizeof(b));	/* init must clear everything */
		integ_init(&b, row->isn, row->n);
		CHECK_EQ_U(b.base, row->isn + 1, "row %u: base", no);
		CHECK_EQ_U(b.need, row->n, "row %u: need", no);
		CHECK_EQ_U(b.have, 0, "row %u: have after init", no);

		memset(want, 0, sizeof(want));
		memset(have, 0, sizeof(have));
		for (size_t i = 0; i < row->nseg; i++) {
			const struct seg *s = &row->seg[i];
			uint32_t seq = row->isn + 1 + (uint32_t)s->off;
			uint8_t before[INTEG_MAX_LEN];
			enum integ_status got;

			fill(seg, s->off, s->len, s->flip);
			memcpy(before, b.data, sizeof(before));
			got = integ_add(&b, seq, seg, s->len);
			CHECK_EQ_U(got, s->want, "row %u seg %zu: status", no, i + 1);
			if (s->want == INTEG_CONFLICT) {
				/* A disagreeing copy must not overwrite what was there. */
				bool ok = true;

				for (size_t j = 0; j < row->n; j++)
					ok &= !have[j] || b.data[j] == before[j];
				CHECK(ok, "row %u seg %zu: stored bytes kept", no, i + 1);
				conflicted = true;
				break;
			}
			CHECK(!model_add(want, have, row->n, s->off, seg, s->len),
			      "row %u seg %zu: the row itself disagrees with the model", no, i + 1);
		}
		if (conflicted)
			continue;
		CHECK_EQ_U(b.have, row->want_have, "row %u: bytes present", no);
		CHECK(memcmp(b.data, want, row->n) == 0, "row %u: data", no);
	}
}

/* A fixed seed: the same cases on every run. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	return unit_rnd(&rng_state);
}

/*
 * Random windows: the bytes [-20, N+20) cut at random points, a few pieces
 * sent twice, all shuffled.  The status is MORE until the model has all N
 * bytes, then COMPLETE on that very call, and the data is the stream.
 */
static void random_cases(void)
{
	static struct integ_buf b;
	static uint8_t seg[MAX_SEG_LEN], want[INTEG_MAX_LEN];
	static bool have[INTEG_MAX_LEN];
	struct {
		int64_t off;
		uint16_t len;
	} segs[RANDOM_MAX_SEGS];
	unsigned bad = 0;

	rng_state = 0x696e746567ULL;
	for (unsigned c = 1; c <= RANDOM_CASES; c++) {
		uint16_t n = (uint16_t)(1 + rnd() % INTEG_MAX_LEN);
		uint32_t isn = rnd() % 2 ? 0u - (uint32_t)(rnd() % 4096) : (uint32_t)rnd();
		int64_t at = -20, end = (int64_t)n + 20;
		size_t nseg = 0, have_n = 0;

		/* Cut: piece lengths 0..n/4+3, at most RANDOM_MAX_SEGS - 8 pieces. */
		while (at < end && nseg < RANDOM_MAX_SEGS - 8) {
			uint16_t len = (uint16_t)(rnd() % (n / 4 + 4));

			segs[nseg].off = at;
			segs[nseg].len = len;
			nseg++;
			at += len;
		}
		if (at < end) {
			segs[nseg].off = at;
			segs[nseg].len = (uint16_t)(end - at);
			nseg++;
		}
		for (size_t d = rnd() % 8; d > 0; d--) {
			size_t j = rnd() % nseg;

			segs[nseg] = segs[j];
			nseg++;
		}
		for (size_t i = nseg - 1; i > 0; i--) {
			size_t j = rnd() % (i + 1);
			int64_t o = segs[i].off;
			uint16_t l = segs[i].len;

			segs[i] = segs[j];
			segs[j].off = o;
			segs[j].len = l;
		}

		integ_init(&b, isn, n);
		memset(want, 0, sizeof(want));
		memset(have, 0, sizeof(have));
		for (size_t i = 0; i < nseg; i++) {
			enum integ_status got, exp;

			fill(seg, segs[i].off, segs[i].len, 0);
			got = integ_add(&b, isn + 1 + (uint32_t)segs[i].off, seg, segs[i].len);
			model_add(want, have, n, segs[i].off, seg, segs[i].len);
			have_n = 0;
			for (size_t j = 0; j < n; j++)
				have_n += have[j];
			exp = have_n == n ? INTEG_COMPLETE : INTEG_MORE;
			if (got != exp) {
				bad++;
				printf("not ok random %u seg %zu: status %d, want %d\n", c, i + 1,
				       got, exp);
				break;
			}
		}
		if (b.have != have_n || have_n != n || memcmp(b.data, want, n) != 0) {
			bad++;
			printf("not ok random %u: have %u/%zu of %u or data differs\n", c,
			       b.have, have_n, n);
		}
	}
	CHECK_EQ_U(bad, 0, "random cases failed");
}

/*
 * Urgent pointers: does a segment at offset off (from ISN+1) with pointer
 * urg designate a byte of an N-byte window, read as RFC 793 (the byte
 * before off + urg) or RFC 1122 (the byte at it; Linux takes the byte at
 * off for urg 0)?
 */
static const struct {
	uint32_t isn;
	uint16_t n;
	int64_t off;
	uint16_t urg;
	bool hits;
} urgent_rows[] = {
	/* 1-4: inside; the window's first byte by both readings */
	{ 1000, 20, 0, 6, true },
	{ 1000, 20, 0, 0, true },
	{ 1000, 20, 0, 1, true },
	{ 1000, 20, 10, 5, true },
	/* 5-7: the last byte, and one past it by RFC 793 only, then neither */
	{ 1000, 20, 0, 20, true },
	{ 1000, 20, 0, 21, false },
	{ 1000, 20, 19, 1, true },
	/* 8-9: a segment after the window cannot point back into it */
	{ 1000, 20, 20, 0, false },
	{ 1000, 20, 20, 65535, false },
	/* 10-13: from before base (a bare segment at the ISN: RFC 1122's reading hits) */
	{ 1000, 20, -2, 1, false },
	{ 1000, 20, -1, 1, true },
	{ 1000, 20, -1, 2, true },
	{ 1000, 20, -65535, 65535, true },
	/* 14: from too far before base the pointer falls short */
	{ 1000, 20, -65536, 65535, false },
	/* 15-17: across 2^32 */
	{ 0xfffffff8, 20, 3, 10, true },
	{ 0xfffffff8, 20, 30, 1, false },
	{ 0xffffffff, 1, -3, 3, true },
	/* 18: N = INTEG_MAX_LEN, the last byte */
	{ 7, INTEG_MAX_LEN, 2000, 48, true },
};

static void urgent(void)
{
	static struct integ_buf b;

	for (size_t r = 0; r < sizeof(urgent_rows) / sizeof(urgent_rows[0]); r++) {
		uint32_t seq = urgent_rows[r].isn + 1 + (uint32_t)urgent_rows[r].off;

		integ_init(&b, urgent_rows[r].isn, urgent_rows[r].n);
		CHECK(integ_urgent_hits(&b, seq, urgent_rows[r].urg) == urgent_rows[r].hits,
		      "urgent row %zu: %s", r + 1, urgent_rows[r].hits ? "hits" : "misses");
	}
	/* integ_covers: exactly [base, base + N), modulo 2^32. */
	integ_init(&b, 0xfffffff0, 32);
	CHECK(!integ_covers(&b, 0xfffffff0), "covers: the ISN is not in the window");
	CHECK(integ_covers(&b, 0xfffffff1), "covers: base");
	CHECK(integ_covers(&b, 0x10), "covers: the last byte, across 2^32");
	CHECK(!integ_covers(&b, 0x11), "covers: one past the end");
	CHECK(!integ_covers(&b, 0x7ffffff0), "covers: far away");
}

/* integ.h promises need <= INTEG_MAX_LEN; a larger request is clamped, not trusted. */
static void clamp(void)
{
	static struct integ_buf b;

	integ_init(&b, 0, INTEG_MAX_LEN + 1);
	CHECK_EQ_U(b.need, INTEG_MAX_LEN, "clamp: need");
	integ_init(&b, 0, UINT16_MAX);
	CHECK_EQ_U(b.need, INTEG_MAX_LEN, "clamp: need 65535");
}

int main(void)
{
	table_rows();
	clamp();
	urgent();
	random_cases();
	return unit_done("integ");
}
