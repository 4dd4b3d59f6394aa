/*
 * md5.h - MD5 (RFC 1321) and its bare compression function.
 *
 * Why our own: mode "knock" (Knock/TCP Stealth wire format) needs ONE raw MD5
 * compression with a caller-chosen chaining value and no padding, which no
 * library exposes in a supported way (OpenSSL 3 deprecates MD5_Transform and
 * libsodium has no MD5).  MD5 is used here only because the Knock wire format
 * fixes it; the native mode uses libsodium.  Pure: no I/O, no allocation.
 */
#ifndef KNOCKGW_MD5_H
#define KNOCKGW_MD5_H

#include <stddef.h>
#include <stdint.h>

enum { MD5_BLOCK_LEN = 64, MD5_DIGEST_LEN = 16 };

/* One compression: state := state + F(state, block), words little-endian. */
void md5_compress(uint32_t state[static 4], const uint8_t block[static MD5_BLOCK_LEN]);

struct md5_ctx {
	uint32_t state[4];
	uint64_t len;			/* bytes hashed so far */
	uint8_t buf[MD5_BLOCK_LEN];
	size_t buflen;
};

void md5_init(struct md5_ctx *ctx);
void md5_update(struct md5_ctx *ctx, const uint8_t *data, size_t len);
void md5_final(struct md5_ctx *ctx, uint8_t out[static MD5_DIGEST_LEN]);

#endif
