/*
 * test_isn - known answers for both ISN formats (isn.h), MD5
 * (RFC 1321 appendix A.5), the integrity hash alone, and isn_verify_syn /
 * isn_verify_payload acceptance rules with an injected clock.
 *
 * Native-mode answers, the nonce form's too, were generated once by
 * tests/isn/model.py (an independent composition over libsodium through
 * ctypes) and are fixed here.
 */
#include <sys/socket.h>
#include <arpa/inet.h>

#include <sodium.h>

#include "common/isn.h"
#include "common/md5.h"
#include "unit.h"

/* The inputs of the known answers below. */
static const char example_secret[] = "Magic secret string";
static const char example_payload[] = "Protected payload goes here.";

static void key_from(struct kg_key *k, const void *raw, size_t len)
{
	isn_key_init(k, raw, len);
}

static void native_test_key(struct kg_key *k)
{
	uint8_t raw[32];

	for (int i = 0; i < 32; i++)
		raw[i] = (uint8_t)i;
	key_from(k, raw, sizeof(raw));
}

static struct isn_input input(const char *dst, uint8_t buf[static 16], uint16_t port, uint32_t tsval)
{
	struct isn_input in = { .dst = buf, .port = port, .tsval = tsval };

	if (inet_pton(AF_INET, dst, buf) == 1)
		in.family = AF_INET;
	else if (inet_pton(AF_INET6, dst, buf) == 1)
		in.family = AF_INET6;
	return in;
}

static void test_md5(void)
{
	static const struct {
		const char *in, *hex;
	} rows[] = {
		/* 1 */ { "", "d41d8cd98f00b204e9800998ecf8427e" },
		/* 2 */ { "a", "0cc175b9c0f1b6a831c399e269772661" },
		/* 3 */ { "abc", "900150983cd24fb0d6963f7d28e17f72" },
		/* 4 */ { "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
		/* 5 */ { "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b" },
		/* 6 */ { "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
			  "d174ab98d277d9f5a5611c2c9f419d9f" },
		/* 7 */ { "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
			  "57edf4a22be3c955ac49da2e2107b67a" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		/* Feed in uneven pieces so the buffering is exercised too. */
		struct md5_ctx ctx;
		uint8_t d[MD5_DIGEST_LEN];
		char hex[33];
		size_t len = strlen(rows[i].in), off = 0, step = 1;

		md5_init(&ctx);
		while (off < len) {
			size_t n = step < len - off ? step : len - off;

			md5_update(&ctx, (const uint8_t *)rows[i].in + off, n);
			off += n;
			step = step * 3 + 1;
		}
		md5_final(&ctx, d);
		sodium_bin2hex(hex, sizeof(hex), d, sizeof(d));
		CHECK(strcmp(hex, rows[i].hex) == 0, "md5 row %zu: %s", i + 1, hex);
	}
}

static void test_knock_known_answers(void)
{
	static const struct {
		const char *dst;
		size_t ilen;
		uint32_t isn;
	} rows[] = {
		/* 1 */ { "192.18.42.42", 0, 0xedea1325 },
		/* 2 */ { "192.18.42.42", 28, 0x2153ff96 },
		/* 3 */ { "2001:db8::2a:2a", 0, 0x4923a842 },
		/* 4 */ { "2001:db8::2a:2a", 28, 0x3ae5ff96 },
	};
	struct kg_key k;

	key_from(&k, example_secret, strlen(example_secret));
	CHECK_EQ_U(isn_ih_knock(&k, (const uint8_t *)example_payload, 28), 0xff96, "example IH");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t a[16];
		struct isn_input in = input(rows[i].dst, a, 4242, 0x11223344);
		uint32_t isn = isn_compute(&k, KG_MODE_KNOCK, &in, 0, (const uint8_t *)example_payload,
					   rows[i].ilen);
		struct isn_params p = { .mode = KG_MODE_KNOCK, .integrity_len = (uint16_t)rows[i].ilen };
		struct isn_match e = { .epoch = 99 };

		CHECK_EQ_U(isn, rows[i].isn, "knock row %zu", i + 1);
		CHECK(isn_verify_syn(&k, &p, &in, rows[i].isn, 0, &e) == ISN_OK && e.epoch == 0,
		      "knock row %zu verifies", i + 1);
		CHECK(isn_verify_payload(&k, &p, &in, rows[i].isn, 0, (const uint8_t *)example_payload) ==
		      ISN_OK, "knock row %zu payload verifies", i + 1);
		CHECK(isn_verify_syn(&k, &p, &in, rows[i].isn ^ 0x00010000, 0, &e) == ISN_BAD_AV,
		      "knock row %zu: one AV bit off", i + 1);
	}

	/* IH alone for a full 64-byte secret and a payload over several blocks. */
	uint8_t secret[64], payload[200];
	memset(secret, 'x', sizeof(secret));
	memset(payload, 'a', sizeof(payload));
	key_from(&k, secret, sizeof(secret));
	CHECK_EQ_U(isn_ih_knock(&k, payload, sizeof(payload)), 0x4b04, "IH 64-byte secret");
}

static void test_native_known_answers(void)
{
	static const struct {
		const char *dst;
		uint16_t port;
		uint32_t tsval;
		const char *payload;	/* NULL: auth only */
		uint64_t now;
		uint32_t window;
		uint32_t isn;
		uint16_t ih;
	} rows[] = {
		/* 1 */ { "192.0.2.10", 22, 0, NULL, 1700000000, 30, 0x49708bf9, 0 },
		/* 2 */ { "192.0.2.10", 22, 0x11223344, NULL, 1700000000, 30, 0xdb790af7, 0 },
		/* 3 */ { "2001:db8::10", 2222, 0xdeadbeef, NULL, 1700000000, 30, 0xf95623b7, 0 },
		/* 4 */ { "192.0.2.10", 22, 0, "Protected payload goes here.", 1700000000, 30,
			  0x312d4040, 0x4040 },
		/* 5 */ { "2001:db8::10", 443, 1, "Protected payload goes here.", 1700000000, 0,
			  0xa83f7de1, 0x7de1 },
		/* 6 */ { "198.51.100.7", 65535, 0xffffffff, "SSH-2.0-OpenSSH_9.2p1", 0xffffffffffffULL,
			  60, 0xf8dab68e, 0xb68e },
	};
	struct kg_key k;

	native_test_key(&k);
	CHECK(k.native_ok, "32-byte key is native");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t a[16];
		struct isn_input in = input(rows[i].dst, a, rows[i].port, rows[i].tsval);
		const uint8_t *pl = (const uint8_t *)rows[i].payload;
		size_t ilen = pl ? strlen(rows[i].payload) : 0;
		uint64_t e = isn_epoch(rows[i].now, rows[i].window);
		struct isn_params p = { .mode = KG_MODE_NATIVE, .integrity_len = (uint16_t)ilen,
					   .window = rows[i].window };
		struct isn_match got_e = { 0 };

		CHECK_EQ_U(isn_compute(&k, KG_MODE_NATIVE, &in, e, pl, ilen), rows[i].isn,
			   "native row %zu", i + 1);
		if (pl)
			CHECK_EQ_U(isn_ih_native(&k, &in, e, pl, ilen), rows[i].ih, "native IH row %zu",
				   i + 1);
		CHECK(isn_verify_syn(&k, &p, &in, rows[i].isn, rows[i].now, &got_e) == ISN_OK &&
		      got_e.epoch == e && !got_e.nonce, "native row %zu verifies", i + 1);
		CHECK(isn_verify_payload(&k, &p, &in, rows[i].isn, e, pl) == ISN_OK,
		      "native row %zu payload verifies", i + 1);
	}
}

/* Epoch window: e-1, e and e+1 accepted, e-2 and e+2 refused. */
static void test_native_window(void)
{
	static const struct {
		int64_t skew;	/* client clock minus server clock, seconds */
		enum isn_result want;
	} rows[] = {
		/* 1 */ { 0, ISN_OK },
		/* 2 */ { 29, ISN_OK },
		/* 3 */ { -30, ISN_OK },
		/* 4 */ { 39, ISN_OK },	/* still e+1 */
		/* 5 */ { -50, ISN_OK },	/* still e-1 */
		/* 6 */ { 40, ISN_BAD_AV },	/* e+2 */
		/* 7 */ { -51, ISN_BAD_AV },	/* e-2 */
		/* 8 */ { 3600, ISN_BAD_AV },
	};
	struct kg_key k;
	uint8_t a[16];
	struct isn_input in = input("192.0.2.1", a, 22, 7);
	struct isn_params p = { .mode = KG_MODE_NATIVE, .window = 30 };
	const uint64_t server_now = 1700000000;	/* 20 s into its epoch */

	native_test_key(&k);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t client_e = isn_epoch(server_now + (uint64_t)rows[i].skew, 30);
		uint32_t isn = isn_compute(&k, KG_MODE_NATIVE, &in, client_e, NULL, 0);
		struct isn_match e;

		CHECK(isn_verify_syn(&k, &p, &in, isn, server_now, &e) == rows[i].want,
		      "window row %zu", i + 1);
	}
	/* Window 0: epoch is always 0, whatever the time. */
	p.window = 0;
	uint32_t isn0 = isn_compute(&k, KG_MODE_NATIVE, &in, 0, NULL, 0);
	struct isn_match e;
	CHECK(isn_verify_syn(&k, &p, &in, isn0, 0, &e) == ISN_OK, "window 0 at t=0");
	CHECK(isn_verify_syn(&k, &p, &in, isn0, UINT64_MAX, &e) == ISN_OK, "window 0 at t=max");
	/* Epoch 0 and the largest epoch do not wrap. */
	p.window = 1;
	CHECK(isn_verify_syn(&k, &p, &in, isn0, 0, &e) == ISN_OK && e.epoch == 0, "epoch 0 edge");
	uint32_t isn_max = isn_compute(&k, KG_MODE_NATIVE, &in, UINT64_MAX, NULL, 0);
	CHECK(isn_verify_syn(&k, &p, &in, isn_max, UINT64_MAX, &e) == ISN_OK && e.epoch == UINT64_MAX,
	      "epoch max edge");
}

/* What must make a knock fail: every input is bound. */
static void test_binding(void)
{
	struct kg_key k, other;
	uint8_t a[16], b[16];
	struct isn_input in = input("192.0.2.1", a, 22, 1000);
	struct isn_input in6 = input("::ffff:192.0.2.1", b, 22, 1000);
	const uint8_t *pl = (const uint8_t *)example_payload;
	struct isn_match e;

	for (int mode = KG_MODE_KNOCK; mode <= KG_MODE_NATIVE; mode++) {
		struct isn_params p = { .mode = (enum kg_mode)mode, .window = 30 };
		struct isn_params pi = { .mode = (enum kg_mode)mode, .window = 30,
					    .integrity_len = 28 };
		uint64_t now = 1700000000, ep = isn_epoch(now, 30);

		native_test_key(&k);
		other = k;
		other.k_av[0] ^= 1;
		other.secret64[0] ^= 1;
		uint32_t isn = isn_compute(&k, p.mode, &in, ep, NULL, 0);
		uint32_t isni = isn_compute(&k, p.mode, &in, ep, pl, 28);
		struct isn_input t;

		CHECK(isn_verify_syn(&k, &p, &in, isn, now, &e) == ISN_OK, "mode %d ok", mode);
		CHECK(isn_verify_syn(&other, &p, &in, isn, now, &e) == ISN_BAD_AV, "mode %d key", mode);
		t = in;
		t.port = 23;
		CHECK(isn_verify_syn(&k, &p, &t, isn, now, &e) == ISN_BAD_AV, "mode %d port", mode);
		t = in;
		t.tsval = 1001;
		CHECK(isn_verify_syn(&k, &p, &t, isn, now, &e) == ISN_BAD_AV, "mode %d tsval", mode);
		/*
		 * Knock puts the raw address in the IV, so a mapped address is
		 * another destination; native defines IPv4 as ::ffff:a.b.c.d.
		 */
		CHECK(isn_verify_syn(&k, &p, &in6, isn, now, &e) ==
		      (mode == KG_MODE_KNOCK ? ISN_BAD_AV : ISN_OK),
		      "mode %d v4 vs mapped v6", mode);
		/* Integrity: the AV covers IH, the payload must match IH. */
		CHECK(isn_verify_syn(&k, &pi, &in, isni, now, &e) == ISN_OK, "mode %d integrity", mode);
		CHECK(isn_verify_syn(&k, &pi, &in, isni ^ 1, now, &e) == ISN_BAD_AV,
		      "mode %d IH bit bound into AV", mode);
		CHECK(isn_verify_payload(&k, &pi, &in, isni, e.epoch, pl) == ISN_OK, "mode %d payload",
		      mode);
		uint8_t bad[28];
		memcpy(bad, pl, sizeof(bad));
		bad[27] ^= 0x20;
		CHECK(isn_verify_payload(&k, &pi, &in, isni, e.epoch, bad) == ISN_BAD_IH,
		      "mode %d tampered payload", mode);
	}
	/* A short key cannot be used in native mode. */
	struct isn_params pn = { .mode = KG_MODE_NATIVE, .window = 30 };
	key_from(&k, example_secret, strlen(example_secret));
	CHECK(!k.native_ok, "19-byte key not native");
	CHECK(isn_verify_syn(&k, &pn, &in, 0, 0, &e) == ISN_BAD_KEY, "native with short key");
}

/*
 * The nonce form (native, auth only, SYNs without a timestamp): known
 * answers from tests/isn/model.py (key bytes 0..31), and what it binds.
 */
static void test_native_nonce(void)
{
	static const struct {
		const char *dst;
		uint16_t port;
		uint64_t now;
		uint32_t window;
		uint8_t nonce;
		uint32_t isn;
	} rows[] = {
		/* 1 */ { "192.0.2.10", 22, 1700000000, 30, 0x00, 0xce7fec00 },
		/* 2 */ { "192.0.2.10", 22, 1700000000, 30, 0xa5, 0x2b5b80a5 },
		/* 3 */ { "2001:db8::10", 2222, 1700000000, 30, 0xff, 0x7fb8dbff },
		/* 4 */ { "198.51.100.7", 65535, 0xffffffffffffULL, 60, 0x01, 0xf5eca001 },
		/* 5 */ { "2001:db8::10", 443, 1700000000, 0, 0x42, 0x3c0e5d42 },
	};
	struct kg_key k;

	native_test_key(&k);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t a[16];
		struct isn_input in = input(rows[i].dst, a, rows[i].port, 0);
		uint64_t e = isn_epoch(rows[i].now, rows[i].window);
		struct isn_params p = { .mode = KG_MODE_NATIVE, .window = rows[i].window,
					   .no_ts = true };
		struct isn_params with_ts = p;
		struct isn_params integ = p;
		struct isn_match m = { 0 };

		with_ts.no_ts = false;
		integ.integrity_len = 28;
		CHECK_EQ_U(isn_native_nonce(&k, &in, e, rows[i].nonce), rows[i].isn,
			   "nonce row %zu", i + 1);
		CHECK(isn_verify_syn(&k, &p, &in, rows[i].isn, rows[i].now, &m) == ISN_OK &&
		      m.nonce && m.epoch == e,
		      "nonce row %zu verifies, as the nonce form", i + 1);
		/* The TSval of a SYN without a timestamp is 0 whatever the caller says. */
		in.tsval = 77;
		CHECK_EQ_U(isn_native_nonce(&k, &in, e, rows[i].nonce), rows[i].isn,
			   "nonce row %zu: TSval not covered", i + 1);
		in.tsval = 0;
		/* Only for a SYN without a timestamp, and never in integrity mode. */
		CHECK(isn_verify_syn(&k, &with_ts, &in, rows[i].isn, rows[i].now, &m) == ISN_BAD_AV,
		      "nonce row %zu: not with a timestamp", i + 1);
		CHECK(isn_verify_syn(&k, &integ, &in, rows[i].isn, rows[i].now, &m) == ISN_BAD_AV,
		      "nonce row %zu: not in integrity mode", i + 1);
		/* Each MAC bit and the nonce are bound. */
		CHECK(isn_verify_syn(&k, &p, &in, rows[i].isn ^ 0x00000100, rows[i].now, &m) ==
		      ISN_BAD_AV, "nonce row %zu: lowest MAC bit", i + 1);
		CHECK(isn_verify_syn(&k, &p, &in, rows[i].isn ^ 0x80000000, rows[i].now, &m) ==
		      ISN_BAD_AV, "nonce row %zu: highest MAC bit", i + 1);
		CHECK(isn_verify_syn(&k, &p, &in, rows[i].isn ^ 0x00000001, rows[i].now, &m) ==
		      ISN_BAD_AV, "nonce row %zu: the nonce", i + 1);
	}

	/* The classic ISN of a SYN without a timestamp still verifies (older clients). */
	uint8_t a[16];
	struct isn_input in = input("192.0.2.10", a, 22, 0);
	struct isn_params p = { .mode = KG_MODE_NATIVE, .window = 30, .no_ts = true };
	struct isn_match m = { .nonce = true };
	const uint64_t now = 1700000000;
	uint64_t e = isn_epoch(now, 30);

	CHECK(isn_verify_syn(&k, &p, &in, 0x49708bf9, now, &m) == ISN_OK && !m.nonce &&
	      m.epoch == e, "classic TS-less knock verifies, not as the nonce form");
	/* Epochs e-1 and e+1 pass, e+2 does not, as for the classic form. */
	CHECK(isn_verify_syn(&k, &p, &in, isn_native_nonce(&k, &in, e - 1, 9), now, &m) == ISN_OK &&
	      m.epoch == e - 1, "nonce form, epoch e-1");
	CHECK(isn_verify_syn(&k, &p, &in, isn_native_nonce(&k, &in, e + 1, 9), now, &m) == ISN_OK &&
	      m.epoch == e + 1, "nonce form, epoch e+1");
	CHECK(isn_verify_syn(&k, &p, &in, isn_native_nonce(&k, &in, e + 2, 9), now, &m) ==
	      ISN_BAD_AV, "nonce form, epoch e+2");
	/* Domain separation: the nonce form's MAC is not the classic AV's. */
	uint32_t classic = isn_compute(&k, KG_MODE_NATIVE, &in, e, NULL, 0);
	CHECK(isn_native_nonce(&k, &in, e, (uint8_t)classic) != classic,
	      "the nonce form is not the classic AV with its own low byte");
	/* Another port, destination or key: refused. */
	struct isn_input t = in;
	uint32_t isn = isn_native_nonce(&k, &in, e, 0x33);
	t.port = 23;
	CHECK(isn_verify_syn(&k, &p, &t, isn, now, &m) == ISN_BAD_AV, "nonce form: port bound");
	uint8_t b[16];
	t = input("192.0.2.11", b, 22, 0);
	CHECK(isn_verify_syn(&k, &p, &t, isn, now, &m) == ISN_BAD_AV, "nonce form: dst bound");
	struct kg_key other = k;
	other.k_nv[0] ^= 1;
	CHECK(isn_verify_syn(&other, &p, &in, isn, now, &m) == ISN_BAD_AV, "nonce form: key bound");
	/* Knock mode has no nonce form. */
	struct isn_params pk = { .mode = KG_MODE_KNOCK, .no_ts = true };
	CHECK(isn_verify_syn(&k, &pk, &in, isn, now, &m) == ISN_BAD_AV, "knock mode: no nonce form");
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	test_md5();
	test_knock_known_answers();
	test_native_known_answers();
	test_native_window();
	test_native_nonce();
	test_binding();
	return unit_done("isn");
}
