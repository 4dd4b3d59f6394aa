/*
 * isn.h - the two ISN wire formats.
 *
 * ISN = AV (auth only) or (AV & 0xffff0000) | IH (integrity).
 *   mode "knock":  Knock/TCP Stealth compatible; one raw MD5 compression.
 *   mode "native": libsodium; SipHash-2-4 AV, keyed BLAKE2b IH, time epochs.
 *     Its nonce form ("native-nonce", auth only, for SYNs without a TCP
 *     timestamp): ISN = (AVn & 0xffffff00) | nonce, AVn a SipHash-2-4 under
 *     its own subkey over M || nonce, so that two clients without
 *     timestamps send two knocks; 24 bits of MAC instead of 32.
 *
 * Contract: pure computation on caller memory, no I/O, no allocation, no
 * logging.  Secret-dependent comparisons are constant time.  A struct kg_key
 * is meant to live in locked memory (see keys.h) and holds everything derived
 * from a key once at load, so no per-SYN derivation happens.
 */
#ifndef KNOCKGW_ISN_H
#define KNOCKGW_ISN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kg_mode { KG_MODE_KNOCK, KG_MODE_NATIVE };

/* "knock", "native": the mode as the configuration spells it. */
const char *kg_mode_name(enum kg_mode m);

/*
 * Integrity mode: the ISN's low half covers the first N payload bytes of the
 * client's stream, N = integrity_len, 1..INTEG_MAX_LEN.
 */
enum { INTEG_MAX_LEN = 2048 };

enum {
	KG_KNOCK_SECRET_MAX = 64,	/* knock secrets are zero-padded to this */
	KG_NATIVE_KEY_LEN = 32,
	KG_KEY_MAX = 64,
	KG_AV_KEY_LEN = 16,		/* crypto_shorthash_KEYBYTES */
	KG_IH_KEY_LEN = 32,		/* crypto_generichash_KEYBYTES */
};

struct kg_key {
	size_t len;				/* raw key length, 1..64 */
	uint8_t secret64[KG_KNOCK_SECRET_MAX];	/* knock: zero-padded secret */
	uint32_t ih_midstate[4];		/* knock: MD5 state after secret64 */
	bool native_ok;				/* len == 32: usable in native mode */
	uint8_t k_av[KG_AV_KEY_LEN];		/* native: subkey 1 */
	uint8_t k_ih[KG_IH_KEY_LEN];		/* native: subkey 2 */
	uint8_t k_nv[KG_AV_KEY_LEN];		/* native, nonce form: subkey 3 */
};

/* Derives everything from the raw key bytes.  len must be 1..KG_KEY_MAX. */
void isn_key_init(struct kg_key *key, const uint8_t *raw, size_t len);

/* What an ISN is computed over: the SYN as it arrives at the server. */
struct isn_input {
	int family;		/* AF_INET or AF_INET6 */
	const uint8_t *dst;	/* 4 or 16 bytes, network order */
	uint16_t port;		/* destination port, host order */
	uint32_t tsval;		/* SYN's TSval, 0 when it has no timestamp */
};

/* Integrity hash over the first n payload bytes. */
uint16_t isn_ih_knock(const struct kg_key *key, const uint8_t *payload, size_t n);
uint16_t isn_ih_native(const struct kg_key *key, const struct isn_input *in, uint64_t epoch,
		       const uint8_t *payload, size_t n);

/* AV for a given IH (0 in auth-only mode). */
uint32_t isn_av_knock(const struct kg_key *key, const struct isn_input *in, uint16_t ih);
uint32_t isn_av_native(const struct kg_key *key, const struct isn_input *in, uint64_t epoch,
		       uint16_t ih);

/*
 * The nonce form (native, auth only, a SYN without a timestamp option; its
 * TSval counts as 0): the ISN for this nonce, which it carries in its low
 * ISN_NONCE_BITS bits.
 */
enum { ISN_NONCE_BITS = 8, ISN_NONCE_MASK = (1u << ISN_NONCE_BITS) - 1 };
uint32_t isn_native_nonce(const struct kg_key *key, const struct isn_input *in, uint64_t epoch,
			  uint8_t nonce);

/* epoch = floor(now / window); window 0 means epoch 0 always. */
uint64_t isn_epoch(uint64_t now, uint32_t window);

/*
 * The ISN a client puts in its SYN.  integrity_len 0 means auth only;
 * otherwise payload must hold integrity_len bytes.
 */
uint32_t isn_compute(const struct kg_key *key, enum kg_mode mode, const struct isn_input *in,
		     uint64_t epoch, const uint8_t *payload, size_t integrity_len);

enum isn_result {
	ISN_OK = 0,
	ISN_BAD_AV,		/* AV does not match: not a knock with this key */
	ISN_BAD_IH,		/* integrity: payload does not match the ISN */
	ISN_BAD_KEY,		/* key cannot be used in this mode */
};

struct isn_params {
	enum kg_mode mode;
	uint16_t integrity_len;	/* 0 = auth only */
	uint32_t window;	/* native only */
	bool no_ts;		/* the SYN has no timestamp option: native auth-only
				   also tries the nonce form */
};

/* Which knock a SYN was. */
struct isn_match {
	uint64_t epoch;		/* native: the epoch that matched; 0 in knock mode */
	bool nonce;		/* native: in the nonce form */
};

/*
 * Server side, at SYN time: is isn a knock for this key?  Native mode tries
 * epochs e-1, e and e+1 of now (and, with no_ts, the nonce form for each)
 * and reports what matched in *ret; the integrity check later must use
 * that epoch.
 */
enum isn_result isn_verify_syn(const struct kg_key *key, const struct isn_params *p,
			       const struct isn_input *in, uint32_t isn, uint64_t now,
			       struct isn_match *ret);

/* Server side, once integrity_len payload bytes are in. */
enum isn_result isn_verify_payload(const struct kg_key *key, const struct isn_params *p,
				   const struct isn_input *in, uint32_t isn, uint64_t epoch,
				   const uint8_t *payload);

#endif
