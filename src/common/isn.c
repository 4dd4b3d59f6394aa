/*
 * isn.c - ISN computation and checks for modes "knock" and "native".
 *
 * The formats are those of isn.h; comments below say where the byte
 * order matters.  Nothing here branches on secret data except through
 * sodium_memcmp, and the native epoch loop always tries every candidate so a
 * match does not return earlier than a miss.
 */
#include <sys/socket.h>
#include <string.h>

#include <sodium.h>

#include "common/bytes.h"
#include "common/isn.h"
#include "common/md5.h"

static const char kdf_context[crypto_kdf_CONTEXTBYTES] = { 'k', 'n', 'o', 'c', 'k', 'g', 'w', '1' };

enum {
	KDF_ID_AV = 1,
	KDF_ID_IH = 2,
	KDF_ID_NV = 3,		/* the nonce form's own MAC key: a domain apart */
	NATIVE_M_LEN = 16 + 2 + 4 + 8,	/* dst || port || TSval || epoch */
};

const char *kg_mode_name(enum kg_mode m)
{
	switch (m) {
	case KG_MODE_KNOCK:
		return "knock";
	case KG_MODE_NATIVE:
		return "native";
	}
	return "?";
}

void isn_key_init(struct kg_key *key, const uint8_t *raw, size_t len)
{
	if (len > KG_KEY_MAX)
		len = KG_KEY_MAX;
	sodium_memzero(key, sizeof(*key));
	key->len = len;
	memcpy(key->secret64, raw, len);

	/* MD5(secret64 || payload): the first block is the same for every SYN. */
	struct md5_ctx ctx;
	md5_init(&ctx);
	md5_compress(ctx.state, key->secret64);
	memcpy(key->ih_midstate, ctx.state, sizeof(key->ih_midstate));
	sodium_memzero(&ctx, sizeof(ctx));

	if (len == KG_NATIVE_KEY_LEN) {
		key->native_ok = true;
		crypto_kdf_derive_from_key(key->k_av, sizeof(key->k_av), KDF_ID_AV, kdf_context,
					   raw);
		crypto_kdf_derive_from_key(key->k_ih, sizeof(key->k_ih), KDF_ID_IH, kdf_context,
					   raw);
		crypto_kdf_derive_from_key(key->k_nv, sizeof(key->k_nv), KDF_ID_NV, kdf_context,
					   raw);
	}
}

uint64_t isn_epoch(uint64_t now, uint32_t window)
{
	return window ? now / window : 0;
}

/*
 * Knock: "IH = XOR of the eight big-endian 16-bit words of ordinary
 * MD5(secret64 || payload[0..N-1])".
 */
uint16_t isn_ih_knock(const struct kg_key *key, const uint8_t *payload, size_t n)
{
	struct md5_ctx ctx;
	uint8_t digest[MD5_DIGEST_LEN];
	uint16_t ih = 0;

	md5_init(&ctx);
	memcpy(ctx.state, key->ih_midstate, sizeof(ctx.state));
	ctx.len = MD5_BLOCK_LEN;
	md5_update(&ctx, payload, n);
	md5_final(&ctx, digest);
	for (int i = 0; i < MD5_DIGEST_LEN; i += 2)
		ih ^= (uint16_t)(digest[i] << 8 | digest[i + 1]);
	return ih;
}

/*
 * Knock: IV = destination address (IPv4 in IV[0..3]), IV[4..5] ^= IH,
 * IV[8..11] ^= TSval, IV[12..13] ^= port, all big-endian; one raw MD5
 * compression with IV (as four LE words) chaining secret64; XOR the words.
 */
uint32_t isn_av_knock(const struct kg_key *key, const struct isn_input *in, uint16_t ih)
{
	uint8_t iv[16] = { 0 };
	uint8_t be[4];
	uint32_t w[4];

	memcpy(iv, in->dst, in->family == AF_INET6 ? 16 : 4);
	put_be16(be, ih);
	iv[4] ^= be[0];
	iv[5] ^= be[1];
	put_be32(be, in->tsval);
	for (int i = 0; i < 4; i++)
		iv[8 + i] ^= be[i];
	put_be16(be, in->port);
	iv[12] ^= be[0];
	iv[13] ^= be[1];

	for (int i = 0; i < 4; i++)
		w[i] = get_le32(iv + 4 * i);
	md5_compress(w, key->secret64);
	return w[0] ^ w[1] ^ w[2] ^ w[3];
}

/* Native: M = dst as 16 bytes (IPv4 mapped) || port || TSval || epoch, BE. */
static void native_m(uint8_t m[static NATIVE_M_LEN], const struct isn_input *in, uint64_t epoch)
{
	if (in->family == AF_INET6) {
		memcpy(m, in->dst, 16);
	} else {
		memset(m, 0, 10);
		m[10] = m[11] = 0xff;
		memcpy(m + 12, in->dst, 4);
	}
	put_be16(m + 16, in->port);
	put_be32(m + 18, in->tsval);
	put_be64(m + 22, epoch);
}

uint16_t isn_ih_native(const struct kg_key *key, const struct isn_input *in, uint64_t epoch,
		       const uint8_t *payload, size_t n)
{
	uint8_t m[NATIVE_M_LEN];
	uint8_t out[16];
	crypto_generichash_state st;

	native_m(m, in, epoch);
	crypto_generichash_init(&st, key->k_ih, sizeof(key->k_ih), sizeof(out));
	crypto_generichash_update(&st, m, sizeof(m));
	crypto_generichash_update(&st, payload, n);
	crypto_generichash_final(&st, out, sizeof(out));
	sodium_memzero(&st, sizeof(st));
	return (uint16_t)(out[0] << 8 | out[1]);
}

uint32_t isn_av_native(const struct kg_key *key, const struct isn_input *in, uint64_t epoch,
		       uint16_t ih)
{
	uint8_t m[NATIVE_M_LEN + 2];
	uint8_t out[crypto_shorthash_BYTES];

	native_m(m, in, epoch);
	put_be16(m + NATIVE_M_LEN, ih);
	crypto_shorthash(out, m, sizeof(m), key->k_av);
	return (uint32_t)out[0] << 24 | (uint32_t)out[1] << 16 | (uint32_t)out[2] << 8 | out[3];
}

/*
 * Nonce form: AVn = SipHash-2-4 under k_nv over M (TSval 0) || nonce, its
 * first 4 bytes big-endian; the nonce replaces AVn's low byte.
 */
uint32_t isn_native_nonce(const struct kg_key *key, const struct isn_input *in, uint64_t epoch,
			  uint8_t nonce)
{
	struct isn_input no_ts = *in;
	uint8_t m[NATIVE_M_LEN + 1];
	uint8_t out[crypto_shorthash_BYTES];
	uint32_t av;

	no_ts.tsval = 0;
	native_m(m, &no_ts, epoch);
	m[NATIVE_M_LEN] = nonce;
	crypto_shorthash(out, m, sizeof(m), key->k_nv);
	av = (uint32_t)out[0] << 24 | (uint32_t)out[1] << 16 | (uint32_t)out[2] << 8 | out[3];
	return (av & ~(uint32_t)ISN_NONCE_MASK) | nonce;
}

static uint32_t combine(uint32_t av, uint16_t ih, size_t integrity_len)
{
	return integrity_len ? (av & 0xffff0000u) | ih : av;
}

uint32_t isn_compute(const struct kg_key *key, enum kg_mode mode, const struct isn_input *in,
		     uint64_t epoch, const uint8_t *payload, size_t integrity_len)
{
	uint16_t ih = 0;

	if (mode == KG_MODE_KNOCK) {
		if (integrity_len)
			ih = isn_ih_knock(key, payload, integrity_len);
		return combine(isn_av_knock(key, in, ih), ih, integrity_len);
	}
	if (integrity_len)
		ih = isn_ih_native(key, in, epoch, payload, integrity_len);
	return combine(isn_av_native(key, in, epoch, ih), ih, integrity_len);
}

/* Constant-time equality of the bits selected by mask. */
static bool ct_equal(uint32_t a, uint32_t b, uint32_t mask)
{
	uint8_t x[4], y[4];

	put_be32(x, a & mask);
	put_be32(y, b & mask);
	return sodium_memcmp(x, y, sizeof(x)) == 0;
}

enum isn_result isn_verify_syn(const struct kg_key *key, const struct isn_params *p,
			       const struct isn_input *in, uint32_t isn, uint64_t now,
			       struct isn_match *ret)
{
	/* Integrity mode: IH rides in the low half; the MAC covers it. */
	uint16_t ih = p->integrity_len ? (uint16_t)isn : 0;
	uint32_t mask = p->integrity_len ? 0xffff0000u : 0xffffffffu;

	if (p->mode == KG_MODE_KNOCK) {
		if (!ct_equal(isn_av_knock(key, in, ih), isn, mask))
			return ISN_BAD_AV;
		*ret = (struct isn_match){ .epoch = 0, .nonce = false };
		return ISN_OK;
	}

	if (!key->native_ok)
		return ISN_BAD_KEY;
	/* Accept e-1, e and e+1; with window 0 the epoch is always 0. */
	uint64_t e = isn_epoch(now, p->window);
	uint64_t lo = (p->window && e > 0) ? e - 1 : e;
	uint64_t hi = (p->window && e < UINT64_MAX) ? e + 1 : e;
	/* Whether the SYN has a timestamp is no secret: it decides the work. */
	bool nonce_form = p->no_ts && !p->integrity_len;
	bool found = false;
	struct isn_match match = { 0 };

	for (uint64_t cand = lo;; cand++) {
		bool eq = ct_equal(isn_av_native(key, in, cand, ih), isn, mask);
		bool eqn = nonce_form &&
			   ct_equal(isn_native_nonce(key, in, cand, (uint8_t)(isn & ISN_NONCE_MASK)),
				    isn, 0xffffffffu);

		if ((eq || eqn) && !found) {
			found = true;
			match = (struct isn_match){ .epoch = cand, .nonce = !eq };
		}
		if (cand == hi)
			break;
	}
	if (!found)
		return ISN_BAD_AV;
	*ret = match;
	return ISN_OK;
}

enum isn_result isn_verify_payload(const struct kg_key *key, const struct isn_params *p,
				   const struct isn_input *in, uint32_t isn, uint64_t epoch,
				   const uint8_t *payload)
{
	uint16_t ih;

	if (p->integrity_len == 0)
		return ISN_OK;
	if (p->mode == KG_MODE_KNOCK) {
		ih = isn_ih_knock(key, payload, p->integrity_len);
	} else {
		if (!key->native_ok)
			return ISN_BAD_KEY;
		ih = isn_ih_native(key, in, epoch, payload, p->integrity_len);
	}
	return ct_equal(ih, isn, 0xffffu) ? ISN_OK : ISN_BAD_IH;
}
