/*
 * md5.c - MD5 as RFC 1321 defines it, written from the RFC's description.
 *
 * Only mode "knock" uses it, because the Knock wire format fixes MD5; see
 * md5.h.  Words are read little-endian with memcpy-free byte assembly so the
 * code is alignment- and endian-independent.
 */
#include <string.h>

#include "common/bytes.h"
#include "common/md5.h"

/* Per-round shift amounts, RFC 1321 section 3.4. */
static const uint8_t shifts[64] = {
	7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
	5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
	4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
	6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};

/* T[i] = floor(2^32 * abs(sin(i + 1))), RFC 1321 section 3.4. */
static const uint32_t sines[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

static uint32_t rol32(uint32_t x, unsigned c)
{
	return (x << c) | (x >> (32 - c));
}

void md5_compress(uint32_t state[static 4], const uint8_t block[static MD5_BLOCK_LEN])
{
	uint32_t m[16];
	uint32_t a = state[0], b = state[1], c = state[2], d = state[3];

	for (int i = 0; i < 16; i++)
		m[i] = get_le32(block + 4 * i);

	for (int i = 0; i < 64; i++) {
		uint32_t f;
		int g;

		if (i < 16) {
			f = (b & c) | (~b & d);
			g = i;
		} else if (i < 32) {
			f = (d & b) | (~d & c);
			g = (5 * i + 1) % 16;
		} else if (i < 48) {
			f = b ^ c ^ d;
			g = (3 * i + 5) % 16;
		} else {
			f = c ^ (b | ~d);
			g = (7 * i) % 16;
		}
		f += a + sines[i] + m[g];
		a = d;
		d = c;
		c = b;
		b += rol32(f, shifts[i]);
	}
	/* The final addition of the input chaining value (Davies-Meyer). */
	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
}

void md5_init(struct md5_ctx *ctx)
{
	ctx->state[0] = 0x67452301;
	ctx->state[1] = 0xefcdab89;
	ctx->state[2] = 0x98badcfe;
	ctx->state[3] = 0x10325476;
	ctx->len = 0;
	ctx->buflen = 0;
}

void md5_update(struct md5_ctx *ctx, const uint8_t *data, size_t len)
{
	ctx->len += len;
	if (ctx->buflen > 0) {
		size_t take = MD5_BLOCK_LEN - ctx->buflen;

		if (take > len)
			take = len;
		memcpy(ctx->buf + ctx->buflen, data, take);
		ctx->buflen += take;
		data += take;
		len -= take;
		if (ctx->buflen < MD5_BLOCK_LEN)
			return;
		md5_compress(ctx->state, ctx->buf);
		ctx->buflen = 0;
	}
	for (; len >= MD5_BLOCK_LEN; data += MD5_BLOCK_LEN, len -= MD5_BLOCK_LEN)
		md5_compress(ctx->state, data);
	if (len > 0) {
		memcpy(ctx->buf, data, len);
		ctx->buflen = len;
	}
}

void md5_final(struct md5_ctx *ctx, uint8_t out[static MD5_DIGEST_LEN])
{
	/* Padding: 0x80, zeros to 56 mod 64, then the bit length LE (3.1, 3.2). */
	uint64_t bits = ctx->len * 8;
	uint8_t pad[MD5_BLOCK_LEN * 2] = { 0x80 };
	size_t padlen = (ctx->buflen < 56 ? 56 : 120) - ctx->buflen;

	for (int i = 0; i < 8; i++)
		pad[padlen + i] = (uint8_t)(bits >> (8 * i));
	md5_update(ctx, pad, padlen + 8);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (uint8_t)(ctx->state[i] >> (8 * j));
	/* The state may be a secret-derived midstate (isn.c): wipe it. */
	explicit_bzero(ctx, sizeof(*ctx));
}
