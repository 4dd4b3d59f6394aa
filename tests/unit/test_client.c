/*
 * test_client.c - the client role's data path (client.[ch], through the
 * door, door.h) against fakes of the adapters it calls.
 *
 * The queue, conntrack, raw-socket and intent modules are replaced by the
 * fakes the data-path tests share (fakes.h), so the real nfq.o, ctnl.o,
 * rawsock.o and intent.o are never linked: each verdict (with the rewritten packet, if any), conntrack
 * create/get/delete and closed-port answer goes into one event log; the
 * conntrack fake keeps a small table of entries (a scenario may start with
 * one left over), and the intent fake holds at most one announced payload.
 * The configuration is built by hand and the clock is c.mono / c.wall, set
 * here: no root, no network, no sleeps.
 *
 * Each numbered scenario is a fresh client fed steps in order: a SYN leaving
 * this host, a later segment of the flow going out or coming in (the user
 * path finds its shift in the worker's table, or in the conntrack entry's
 * labels; its mark is other software's, and must come back as it went),
 * a malformed packet, time moving on (client_tick), or a reload.  Each packet
 * must get exactly one verdict: D drop, A accept unchanged, or P accept with
 * a new packet, which must be byte for byte the packet this test builds
 * with the numbers it should carry (the knock ISN, the pinned TSval, seq +
 * delta, ack and SACK - delta) and the reference checksum (pktbuild.h).  A
 * step also lists the conntrack calls it must make, in order ("C" create,
 * "G" get, "X" delete), checked with their arguments.  After the last step
 * every counter is compared with the scenario's list (those not listed must
 * be 0).
 *
 * A routed scenario is the gateway client role (`from`): its SYN and its
 * later segments going out come at prerouting with the FWD code in their
 * mark (the verdict must give the mark back without it), its answers at
 * forward; its source
 * is a LAN address, and the conntrack entry must carry
 * the source NAT the fake gwnat_source() gives when a private source goes
 * to a public destination.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "common/isn.h"
#include "config/conf.h"
#include "config/keys.h"
#include "datapath/client/client.h"
#include "datapath/client/intent.h"
#include "datapath/door.h"
#include "fakes.h"
#include "kernel/ctnl.h"
#include "kernel/gwnat.h"
#include "kernel/nfq.h"
#include "kernel/rawsock.h"
#include "pktbuild.h"
#include "unit.h"

enum {
	BUF_LEN = 66000,	/* room for a packet larger than the client's buffer */
	MAX_STEPS = 8,
	MAX_CNT = 5,
	MONO0 = 5000,
	WALL0 = 1700000020,	/* 20 s into a 30 s epoch */
	TSVAL0 = 0x20000000,
	SPORT = 50000,
	KERNEL_ISN = 0x11111111,
	CT_TIMEOUT = 120,	/* what client.c asks conntrack for */
	PIN_SECONDS = 120,	/* how long a SYN is remembered */
	SHIFT_IDLE = 300,	/* how long an idle flow's shift is remembered */
	OTHER_MARK = 0x00000abc,	/* other software's bits in a packet's mark */
	SERVER_ISN = 0x70000000,
};

static struct conf conf;

/* ------------------------------------------------------------------ */
/* Configuration */

enum { KEY_NATIVE, KEY_LEGACY, NKEYS };

enum entry_id {
	E_KNOCK4,	/* 192.0.2.1 port 22, knock */
	E_NATIVE6,	/* 2001:db8::1 port 22, native */
	E_INTEG4,	/* 192.0.2.1 port 2222, knock, integrity 16 */
	E_INTEG6,	/* 2001:db8::/64 port 8443, native, integrity 64 */
	E_GW4,		/* 192.0.2.0/24 port 22, native, from 10.0.0.0/24 198.51.100.0/24 fd00::/64 */
	E_GW6,		/* 2001:db8::/64 port 22, knock, from 10.0.0.0/24 fd00::/64 2001:db8:1::/64 */
	NENTRIES
};

static const struct entry_spec {
	const char *dst;
	uint16_t port;
	enum kg_mode mode;
	int key;
	uint16_t integrity_len;
	uint32_t window;
	const char *from[3];
} entries[NENTRIES] = {
	[E_KNOCK4] = { .dst = "192.0.2.1", .port = 22, .mode = KG_MODE_KNOCK, .key = KEY_LEGACY },
	[E_NATIVE6] = { .dst = "2001:db8::1", .port = 22, .mode = KG_MODE_NATIVE,
			.key = KEY_NATIVE, .window = 30 },
	[E_INTEG4] = { .dst = "192.0.2.1", .port = 2222, .mode = KG_MODE_KNOCK, .key = KEY_LEGACY,
		       .integrity_len = 16 },
	[E_INTEG6] = { .dst = "2001:db8::/64", .port = 8443, .mode = KG_MODE_NATIVE,
		       .key = KEY_NATIVE, .integrity_len = 64, .window = 30 },
	/* Wider than E_KNOCK4 and E_NATIVE6: a routed SYN takes them all the same. */
	[E_GW4] = { .dst = "192.0.2.0/24", .port = 22, .mode = KG_MODE_NATIVE, .key = KEY_NATIVE,
		    .window = 30, .from = { "10.0.0.0/24", "198.51.100.0/24", "fd00::/64" } },
	[E_GW6] = { .dst = "2001:db8::/64", .port = 22, .mode = KG_MODE_KNOCK, .key = KEY_LEGACY,
		    .from = { "10.0.0.0/24", "fd00::/64", "2001:db8:1::/64" } },
};

static int setup_conf(void)
{
	static const char legacy[] = "Magic secret string";
	uint8_t raw[32];

	conf_defaults(&conf);
	if (keyring_alloc(&conf.keyring, NKEYS) < 0)
		return -1;
	conf.nkeys = NKEYS;
	for (int i = 0; i < 32; i++)
		raw[i] = (uint8_t)(7 * i + 1);
	isn_key_init(&conf.keyring.keys[KEY_NATIVE], raw, sizeof(raw));
	snprintf(conf.keys[KEY_NATIVE].name, CONF_NAME_MAX, "native");
	conf.keys[KEY_NATIVE].len = sizeof(raw);
	isn_key_init(&conf.keyring.keys[KEY_LEGACY], (const uint8_t *)legacy, strlen(legacy));
	snprintf(conf.keys[KEY_LEGACY].name, CONF_NAME_MAX, "legacy");
	conf.keys[KEY_LEGACY].len = strlen(legacy);
	sodium_memzero(raw, sizeof(raw));

	for (size_t i = 0; i < NENTRIES; i++) {
		const struct entry_spec *es = &entries[i];
		struct conf_knock *k = &conf.knock[i];

		k->line = (int)i + 1;
		if (prefix_parse(es->dst, &k->dst) < 0)
			return -1;
		k->port = es->port;
		k->mode = es->mode;
		k->key = es->key;
		k->integrity_len = es->integrity_len;
		k->window = es->window;
		for (size_t f = 0; f < 3 && es->from[f]; f++)
			if (prefix_parse(es->from[f], &k->from[k->nfrom++]) < 0)
				return -1;
	}
	conf.nknock = NENTRIES;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Scenarios */

enum kind { K_END, K_SYN, K_OUT, K_IN, K_BAD, K_TICK, K_RELOAD };
enum who {
	OTHER_SPORT = 1,	/* SPORT + 1: another connection */
	OTHER_DST = 2,		/* an address no entry covers */
	OTHER_PORT = 4,		/* port 9999 */
	FROM_NONE = 8,		/* routed: a source no `from` holds (10.1.0.7, fd01::7) */
	FROM_PUBLIC = 16,	/* routed: a public source in `from` (the client's address) */
};
enum intent_kind { INTENT_NONE, INTENT_OK, INTENT_SHORT, INTENT_OTHER_PORT, INTENT_ERR };
enum stale_kind {
	STALE_NONE,
	STALE_OTHER,	/* an entry of an earlier connection on the same tuple */
	STALE_OURS,	/* the entry this very SYN makes (a restarted daemon) */
	STALE_OLD_SHIFT,/* same kernel ISN, another shift (knocked under an older TSval) */
	STALE_USER,	/* the user path's entry (labels, no seqadj) found by the kernel path */
	STALE_RESTART,	/* user: the main flow's entry, knocked before a restart */
	STALE_ZERO,	/* user: ... knocked with a shift of 0 */
	STALE_KERNEL,	/* user: a flow the kernel path translates (seqadj, no label) */
	STALE_FOREIGN,	/* user: other software's labels, not our flag */
};

struct step {
	enum kind k;
	unsigned who;		/* enum who bits */
	uint32_t tsval;		/* added to TSVAL0 */
	uint32_t seq;		/* K_SYN: added to KERNEL_ISN; K_OUT: bytes after the ISN */
	uint32_t ack;		/* K_IN: bytes of ours acknowledged */
	uint8_t flags;		/* added to the step's usual flags */
	uint8_t nsack;		/* K_IN: SACK blocks */
	uint16_t len;		/* payload bytes; K_TICK: seconds */
	bool odd;		/* timestamps (and SACK) at odd offsets */
	bool no_ts;		/* no timestamp option */
	bool retx;		/* K_SYN: a retransmission of the first one, pinned */
	bool notready;		/* NFQA_SKB_CSUMNOTREADY: only the pseudo-header sum */
	int cut;		/* bytes missing at the end: > 0 capture short, < 0 IP length lies */
	size_t pad;		/* bytes past the IP packet, to a huge capture */
	bool nomark;		/* K_SYN, routed: without our FWD code */
	char want;		/* 'D', 'A', 'P' */
	const char *ct;		/* conntrack calls, "CGXC" ("G": a shift read back) */
	unsigned answers, intents;
};

struct count {
	enum client_counter c;
	unsigned n;
};

struct scenario {
	const char *name;
	enum entry_id entry;
	bool user;			/* translate = "user" */
	bool routed;			/* gateway client role: a flow this host routes */
	int gwnat_ret;			/* gwnat_source() fails with it */
	enum intent_kind intent;
	enum stale_kind stale;
	int create_ret, recreate_ret, get_ret;
	uint32_t max_flows;		/* 0: default */
	struct step s[MAX_STEPS];
	struct count cnt[MAX_CNT];
};

#define SYN(w, c, ...) { .k = K_SYN, .want = w, .ct = c, __VA_ARGS__ }
#define OUT(w, ...) { .k = K_OUT, .want = w, __VA_ARGS__ }
#define IN(w, ...) { .k = K_IN, .want = w, __VA_ARGS__ }
#define BAD { .k = K_BAD, .want = 'D' }
#define TICK(sec) { .k = K_TICK, .len = sec }
#define RELOAD { .k = K_RELOAD }
#define C(name, v) { CC_##name, v }

static const struct scenario scenarios[] = {
	/* 1-4: kernel path: the SYN passes unchanged, conntrack gets the shift */
	{ "kernel v4 knock", E_KNOCK4, .s = { SYN('A', "C") }, .cnt = { C(knocked, 1) } },
	{ "kernel v6 native", E_NATIVE6, .s = { SYN('A', "C") }, .cnt = { C(knocked, 1) } },
	{ "kernel, no timestamps", E_KNOCK4, .s = { SYN('A', "C", .no_ts = true) },
	  .cnt = { C(knocked, 1) } },
	{ "kernel, two connections", E_NATIVE6,
	  .s = { SYN('A', "C"), SYN('A', "C", .who = OTHER_SPORT, .tsval = 9) },
	  .cnt = { C(knocked, 2) } },
	/* 5-8: SYNs no entry covers, SYN-ACKs, malformed packets */
	{ "no entry: other address, other port", E_KNOCK4,
	  .s = { SYN('A', "", .who = OTHER_DST), SYN('A', "", .who = OTHER_PORT) },
	  .cnt = { C(no_entry, 2) } },
	{ "no entry v6 (a /64 covers only 8443)", E_INTEG6,
	  .s = { SYN('A', "", .who = OTHER_PORT) }, .cnt = { C(no_entry, 1) } },
	{ "malformed", E_KNOCK4, .s = { BAD }, .cnt = { C(pkt_errors, 1) } },
	{ "an outgoing SYN-ACK is no knock, and of no flow of ours", E_KNOCK4, .user = true,
	  .s = { OUT('A', .flags = TCP_SYN, .ct = "G") }, .cnt = { C(passed_as_is, 1),
								    C(shift_lookups, 1) } },
	/* 9-12: retransmissions keep the first SYN's ISN and TSval */
	{ "kernel retransmission, same TSval", E_KNOCK4,
	  .s = { SYN('A', "C"), SYN('A', "CG", .retx = true) },
	  .cnt = { C(knocked, 1), C(retransmits, 1) } },
	{ "kernel retransmission, new TSval: pinned (even offset)", E_NATIVE6,
	  .s = { SYN('A', "C"), SYN('P', "CG", .tsval = 250, .retx = true) },
	  .cnt = { C(knocked, 1), C(retransmits, 1) } },
	{ "kernel retransmission, new TSval: pinned (odd offset)", E_KNOCK4,
	  .s = { SYN('A', "C", .odd = true), SYN('P', "CG", .tsval = 250, .odd = true, .retx = true) },
	  .cnt = { C(knocked, 1), C(retransmits, 1) } },
	{ "a new kernel ISN on the same ports is a new knock", E_KNOCK4,
	  .s = { SYN('A', "C"), SYN('A', "CGXC", .seq = 5, .tsval = 3) },
	  .cnt = { C(knocked, 2), C(stale_replaced, 1) } },
	/* 13-18: user path: the daemon writes the knock ISN itself */
	{ "user v4, even TS offset", E_KNOCK4, .user = true, .s = { SYN('P', "C") },
	  .cnt = { C(knocked, 1) } },
	{ "user v4, odd TS offset", E_KNOCK4, .user = true, .s = { SYN('P', "C", .odd = true) },
	  .cnt = { C(knocked, 1) } },
	{ "user v6, odd TS offset", E_NATIVE6, .user = true, .s = { SYN('P', "C", .odd = true) },
	  .cnt = { C(knocked, 1) } },
	{ "user v6, no timestamps, with data", E_NATIVE6, .user = true,
	  .s = { SYN('P', "C", .no_ts = true, .len = 7) }, .cnt = { C(knocked, 1) } },
	{ "user, checksum not ready: computed in full", E_NATIVE6, .user = true,
	  .s = { SYN('P', "C", .notready = true, .odd = true, .len = 3) },
	  .cnt = { C(knocked, 1) } },
	{ "user retransmission with a new TSval", E_KNOCK4, .user = true,
	  .s = { SYN('P', "C", .odd = true), SYN('P', "CG", .tsval = 77, .odd = true, .retx = true) },
	  .cnt = { C(knocked, 1), C(retransmits, 1) } },
	/* 19-22: SYNs that cannot be rewritten whole */
	{ "user, SYN captured short", E_KNOCK4, .user = true,
	  .s = { SYN('D', "C", .len = 20, .cut = 5) },
	  .cnt = { C(knocked, 1), C(untranslatable, 1) } },
	{ "user, SYN larger than the buffer", E_KNOCK4, .user = true,
	  .s = { SYN('D', "C", .pad = 65800) }, .cnt = { C(knocked, 1), C(untranslatable, 1) } },
	{ "user, IP length beyond the packet, checksum not ready", E_NATIVE6, .user = true,
	  .s = { SYN('D', "C", .len = 20, .cut = -4, .notready = true) },
	  .cnt = { C(knocked, 1), C(untranslatable, 1) } },
	{ "user, IP length beyond the packet, checksum ready: incremental", E_NATIVE6,
	  .user = true, .s = { SYN('P', "C", .len = 20, .cut = -4) }, .cnt = { C(knocked, 1) } },
	/* 23-30: user path, later packets both ways */
	{ "user: data out, ack and SACK in (even)", E_KNOCK4, .user = true,
	  .s = { SYN('P', "C"), OUT('P', .seq = 1, .len = 100), IN('P', .ack = 101, .nsack = 3),
		 IN('P', .ack = 50, .nsack = 1, .len = 9) },
	  .cnt = { C(knocked, 1), C(translated_out, 1), C(translated_in, 2) } },
	{ "user: odd option offsets both ways, v6", E_NATIVE6, .user = true,
	  .s = { SYN('P', "C", .odd = true), OUT('P', .seq = 1, .len = 33, .odd = true),
		 IN('P', .ack = 34, .nsack = 3, .odd = true) },
	  .cnt = { C(knocked, 1), C(translated_out, 1), C(translated_in, 1) } },
	{ "user: a flow conntrack does not know passes untouched both ways, asked once",
	  E_KNOCK4, .user = true,
	  .s = { OUT('A', .seq = 1, .len = 10, .ct = "G"), IN('A', .ack = 1) },
	  .cnt = { C(passed_as_is, 2), C(shift_lookups, 1) } },
	{ "user: captured short, either way", E_NATIVE6, .user = true,
	  .s = { SYN('P', "C"), OUT('D', .seq = 1, .len = 1400, .cut = 400),
		 IN('D', .ack = 1, .len = 1000, .cut = 1) },
	  .cnt = { C(knocked, 1), C(untranslatable, 2) } },
	{ "user: checksum not ready, computed in full", E_KNOCK4, .user = true,
	  .s = { SYN('P', "C"), OUT('P', .seq = 1, .len = 1001, .notready = true),
		 IN('P', .ack = 1002, .nsack = 2, .notready = true) },
	  .cnt = { C(knocked, 1), C(translated_out, 1), C(translated_in, 1) } },
	{ "user: IP length lies, checksum not ready", E_KNOCK4, .user = true,
	  .s = { SYN('P', "C"), OUT('D', .seq = 1, .len = 100, .cut = -10, .notready = true) },
	  .cnt = { C(knocked, 1), C(untranslatable, 1) } },
	{ "user: an incoming RST without ACK keeps its ack field", E_KNOCK4, .user = true,
	  .s = { SYN('P', "C"), IN('P', .flags = TCP_RST, .ack = 5) },
	  .cnt = { C(knocked, 1), C(translated_in, 1) } },
	{ "user: a FIN going out", E_NATIVE6, .user = true,
	  .s = { SYN('P', "C"), OUT('P', .seq = 1, .flags = TCP_FIN) },
	  .cnt = { C(knocked, 1), C(translated_out, 1) } },
	/* 31-39: conntrack entries left over, and conntrack failures */
	{ "stale entry replaced (kernel)", E_KNOCK4, .stale = STALE_OTHER,
	  .s = { SYN('A', "CGXC") }, .cnt = { C(knocked, 1), C(stale_replaced, 1) } },
	{ "stale entry replaced (user)", E_NATIVE6, .user = true, .stale = STALE_OTHER,
	  .s = { SYN('P', "CGXC") }, .cnt = { C(knocked, 1), C(stale_replaced, 1) } },
	{ "our own entry, after a restart (kernel)", E_KNOCK4, .stale = STALE_OURS,
	  .s = { SYN('A', "CG") }, .cnt = { C(knocked, 1) } },
	{ "our own entry, after a restart (user)", E_NATIVE6, .user = true, .stale = STALE_OURS,
	  .s = { SYN('P', "CG") }, .cnt = { C(knocked, 1) } },
	{ "same kernel ISN, another shift: replaced", E_KNOCK4, .stale = STALE_OLD_SHIFT,
	  .s = { SYN('A', "CGXC") }, .cnt = { C(knocked, 1), C(stale_replaced, 1) } },
	{ "the user path's entry after a switch to the kernel path: replaced", E_KNOCK4,
	  .stale = STALE_USER, .s = { SYN('A', "CGXC") },
	  .cnt = { C(knocked, 1), C(stale_replaced, 1) } },
	{ "conntrack refuses: SYN dropped", E_NATIVE6, .create_ret = -ENOMEM,
	  .s = { SYN('D', "C"), SYN('D', "C", .who = OTHER_SPORT) },
	  .cnt = { C(ct_errors, 2) } },
	{ "stale entry cannot be replaced", E_KNOCK4, .user = true, .stale = STALE_OTHER,
	  .recreate_ret = -EPERM, .s = { SYN('D', "CGXC") },
	  .cnt = { C(stale_replaced, 1), C(ct_errors, 1) } },
	{ "the entry cannot be read: replaced", E_KNOCK4, .stale = STALE_OURS, .get_ret = -EIO,
	  .s = { SYN('A', "CGXC") }, .cnt = { C(knocked, 1), C(stale_replaced, 1) } },
	/* 40-46: integrity knocks need knock-connect's intent */
	{ "integrity without an intent: refused, the socket told", E_INTEG4,
	  .s = { SYN('D', "", .intents = 1, .answers = 1) }, .cnt = { C(integrity_refused, 1) } },
	{ "integrity with an intent (kernel)", E_INTEG4, .intent = INTENT_OK,
	  .s = { SYN('A', "C", .intents = 1) }, .cnt = { C(knocked, 1), C(intents_used, 1) } },
	{ "integrity with an intent (user, v6)", E_INTEG6, .user = true, .intent = INTENT_OK,
	  .s = { SYN('P', "C", .intents = 1, .odd = true) },
	  .cnt = { C(knocked, 1), C(intents_used, 1) } },
	{ "integrity intent of the wrong length", E_INTEG6, .intent = INTENT_SHORT,
	  .s = { SYN('D', "", .intents = 1, .answers = 1) }, .cnt = { C(integrity_refused, 1) } },
	{ "integrity intent for another port", E_INTEG4, .intent = INTENT_OTHER_PORT,
	  .s = { SYN('D', "", .intents = 1, .answers = 1) }, .cnt = { C(integrity_refused, 1) } },
	{ "integrity intent table error", E_INTEG4, .intent = INTENT_ERR,
	  .s = { SYN('D', "", .intents = 1, .answers = 1) }, .cnt = { C(integrity_refused, 1) } },
	{ "integrity retransmission needs no second intent", E_INTEG4, .intent = INTENT_OK,
	  .s = { SYN('A', "C", .intents = 1), SYN('P', "CG", .tsval = 8, .retx = true) },
	  .cnt = { C(knocked, 1), C(intents_used, 1), C(retransmits, 1) } },
	/* 47-50: the pin table: full, expiry, reload */
	{ "pin table full: a retransmission is knocked again", E_KNOCK4, .max_flows = 1,
	  .s = { SYN('A', "C"), SYN('A', "C", .who = OTHER_SPORT),
		 SYN('A', "CG", .who = OTHER_SPORT) },
	  .cnt = { C(knocked, 3) } },
	{ "pins expire with client_tick", E_KNOCK4,
	  .s = { SYN('A', "C"), TICK(PIN_SECONDS + 1), SYN('A', "CG") },
	  .cnt = { C(knocked, 2) } },
	{ "pins survive a reload", E_NATIVE6,
	  .s = { SYN('A', "C"), RELOAD, SYN('P', "CG", .tsval = 1, .retx = true) },
	  .cnt = { C(knocked, 1), C(retransmits, 1) } },
	{ "pins last until their time", E_KNOCK4,
	  .s = { SYN('A', "C"), TICK(PIN_SECONDS - 1), SYN('A', "CG", .retx = true) },
	  .cnt = { C(knocked, 1), C(retransmits, 1) } },
	/* 51-62: gateway client role, routed flows (`from`) */
	{ "routed v4, kernel: the from entry's knock, NAT'ed", E_GW4, .routed = true,
	  .s = { SYN('A', "C") }, .cnt = { C(knocked, 1) } },
	{ "routed v6, kernel: the from entry's knock, NAT'ed", E_GW6, .routed = true,
	  .s = { SYN('A', "C", .odd = true) }, .cnt = { C(knocked, 1) } },
	{ "routed v4, user: SYN rewritten, data out at forward, ack and SACK in", E_GW4,
	  .user = true, .routed = true,
	  .s = { SYN('P', "C"), OUT('P', .seq = 1, .len = 100), IN('P', .ack = 101, .nsack = 2) },
	  .cnt = { C(knocked, 1), C(translated_out, 1), C(translated_in, 1) } },
	{ "routed v6, user, odd offsets both ways", E_GW6, .user = true, .routed = true,
	  .s = { SYN('P', "C", .odd = true), OUT('P', .seq = 1, .len = 33, .odd = true),
		 IN('P', .ack = 34, .nsack = 3, .odd = true) },
	  .cnt = { C(knocked, 1), C(translated_out, 1), C(translated_in, 1) } },
	{ "routed v4, source in no from: untouched, our code cleared", E_GW4, .routed = true,
	  .s = { SYN('A', "", .who = FROM_NONE) }, .cnt = { C(no_entry, 1) } },
	{ "routed v6, source in no from (user path too)", E_GW6, .user = true, .routed = true,
	  .s = { SYN('A', "", .who = FROM_NONE) }, .cnt = { C(no_entry, 1) } },
	{ "routed, public source: knocked, not NAT'ed", E_GW4, .routed = true,
	  .s = { SYN('A', "C", .who = FROM_PUBLIC) }, .cnt = { C(knocked, 1) } },
	{ "routed v6, public source, user path: not NAT'ed", E_GW6, .user = true, .routed = true,
	  .s = { SYN('P', "C", .who = FROM_PUBLIC) }, .cnt = { C(knocked, 1) } },
	{ "routed, no address to NAT to: dropped", E_GW6, .routed = true,
	  .gwnat_ret = -ENETUNREACH, .s = { SYN('D', "") }, .cnt = { C(ct_errors, 1) } },
	{ "routed retransmission with a new TSval: pinned", E_GW4, .routed = true,
	  .s = { SYN('A', "C"), SYN('P', "CG", .tsval = 40, .retx = true) },
	  .cnt = { C(knocked, 1), C(retransmits, 1) } },
	{ "routed, another port: untouched", E_GW4, .routed = true,
	  .s = { SYN('A', "", .who = OTHER_PORT) }, .cnt = { C(no_entry, 1) } },
	{ "a SYN at prerouting without our code is no knock", E_GW4, .routed = true,
	  .s = { SYN('A', "", .nomark = true) }, .cnt = { C(no_entry, 1) } },
	/*
	 * Native without timestamps: the nonce form, one nonce per connection
	 * (a keyed hash of its flow and kernel ISN), kept by a retransmission.
	 */
	{ "kernel v6 native, no timestamps: the nonce form", E_NATIVE6,
	  .s = { SYN('A', "C", .no_ts = true),
		 SYN('A', "C", .no_ts = true, .who = OTHER_SPORT, .seq = 77) },
	  .cnt = { C(knocked, 2) } },
	{ "no timestamps: a retransmission keeps the nonce", E_NATIVE6,
	  .s = { SYN('A', "C", .no_ts = true), SYN('A', "CG", .no_ts = true, .retx = true) },
	  .cnt = { C(knocked, 1), C(retransmits, 1) } },
	{ "no timestamps, user path: the nonce form written", E_NATIVE6, .user = true,
	  .s = { SYN('P', "C", .no_ts = true) }, .cnt = { C(knocked, 1) } },
	{ "no timestamps, gateway: the routed host's SYN gets the nonce form", E_GW4, .routed = true,
	  .s = { SYN('A', "C", .no_ts = true) }, .cnt = { C(knocked, 1) } },
	/* user path: the shift read back from conntrack labels */
	{ "after a restart: the labels' shift, read once for the flow", E_NATIVE6, .user = true,
	  .stale = STALE_RESTART,
	  .s = { OUT('P', .seq = 1, .len = 50, .ct = "G"), IN('P', .ack = 51, .nsack = 2),
		 OUT('P', .seq = 51, .len = 5) },
	  .cnt = { C(translated_out, 2), C(translated_in, 1), C(shift_lookups, 1) } },
	{ "after a restart, routed v4: answers first", E_GW4, .user = true, .routed = true,
	  .stale = STALE_RESTART,
	  .s = { IN('P', .ack = 1, .ct = "G"), OUT('P', .seq = 1, .len = 10) },
	  .cnt = { C(translated_out, 1), C(translated_in, 1), C(shift_lookups, 1) } },
	{ "our flag with a shift of 0: nothing to translate", E_KNOCK4, .user = true,
	  .stale = STALE_ZERO, .s = { OUT('A', .seq = 1, .ct = "G"), IN('A', .ack = 1) },
	  .cnt = { C(passed_as_is, 2), C(shift_lookups, 1) } },
	{ "a flow the kernel path translates is left to it", E_NATIVE6, .user = true,
	  .stale = STALE_KERNEL, .s = { OUT('A', .seq = 1, .len = 3, .ct = "G") },
	  .cnt = { C(passed_as_is, 1), C(shift_lookups, 1) } },
	{ "other software's labels without our flag are no shift", E_KNOCK4, .user = true,
	  .stale = STALE_FOREIGN, .s = { OUT('A', .seq = 1, .ct = "G"), IN('A', .ack = 1) },
	  .cnt = { C(passed_as_is, 2), C(shift_lookups, 1) } },
	{ "conntrack cannot be asked: dropped, never sent unshifted", E_KNOCK4, .user = true,
	  .stale = STALE_RESTART, .get_ret = -EIO,
	  .s = { OUT('D', .seq = 1, .len = 4, .ct = "G"), IN('D', .ack = 1, .ct = "G") },
	  .cnt = { C(lookup_errors, 2), C(shift_lookups, 2) } },
	{ "a RST going out is shifted like any segment", E_NATIVE6, .user = true,
	  .s = { SYN('P', "C"), OUT('P', .seq = 1, .flags = TCP_RST) },
	  .cnt = { C(knocked, 1), C(translated_out, 1) } },
	{ "routed: a RST going out at prerouting loses our code", E_GW6, .user = true,
	  .routed = true, .s = { SYN('P', "C"), OUT('P', .seq = 1, .flags = TCP_RST) },
	  .cnt = { C(knocked, 1), C(translated_out, 1) } },
	{ "an idle flow's shift is read back from conntrack", E_KNOCK4, .user = true,
	  .s = { SYN('P', "C"), TICK(SHIFT_IDLE - 1), OUT('P', .seq = 1, .len = 2),
		 TICK(SHIFT_IDLE + 1), IN('P', .ack = 3, .ct = "G"), OUT('P', .seq = 3, .len = 1) },
	  .cnt = { C(knocked, 1), C(translated_out, 2), C(translated_in, 1),
		   C(shift_lookups, 1) } },
	{ "no room for the shift: read from conntrack at each packet", E_KNOCK4, .user = true,
	  .max_flows = 1,
	  .s = { SYN('P', "C", .who = OTHER_SPORT, .tsval = 9), SYN('P', "C"),
		 OUT('P', .seq = 1, .len = 9, .ct = "G"), IN('P', .ack = 10, .ct = "G") },
	  .cnt = { C(knocked, 2), C(translated_out, 1), C(translated_in, 1),
		   C(shift_lookups, 2) } },
};

/* ------------------------------------------------------------------ */
/* Running a scenario */

static const uint8_t client4[4] = { 198, 51, 100, 7 }, other4[4] = { 203, 0, 113, 9 };
static const uint8_t server4[4] = { 192, 0, 2, 1 };
static const uint8_t client6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 7 };
static const uint8_t server6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t other6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 1 };
static const uint8_t lan4[4] = { 10, 0, 0, 7 }, nolan4[4] = { 10, 1, 0, 7 };
static const uint8_t lan6[16] = { 0xfd, 0, [15] = 7 }, nolan6[16] = { 0xfd, 1, [15] = 7 };

struct run {
	const struct scenario *sc;
	unsigned no;
	int family;
	struct client c;
	struct door door;		/* every packet's way in and its verdict's way out */
	uint32_t next_id;
	unsigned verdicts[64];
	/* What the first SYN of the main flow was given. */
	bool knocked;
	uint32_t kernel_isn, knock_isn, tsval;
};

static const uint8_t *client_addr(int family)
{
	return family == AF_INET ? client4 : client6;
}

/* The flow's source: this host, or (routed) a LAN host. */
static const uint8_t *src_of(const struct scenario *sc, int family, unsigned who)
{
	if (!sc->routed || (who & FROM_PUBLIC))
		return client_addr(family);
	if (who & FROM_NONE)
		return family == AF_INET ? nolan4 : nolan6;
	return family == AF_INET ? lan4 : lan6;
}

static const uint8_t *dst_of(int family, unsigned who)
{
	if (who & OTHER_DST)
		return family == AF_INET ? other4 : other6;
	return family == AF_INET ? server4 : server6;
}

static uint16_t dport_of(const struct scenario *sc, unsigned who)
{
	return who & OTHER_PORT ? 9999 : entries[sc->entry].port;
}

static uint8_t stream(uint32_t off)
{
	return (uint8_t)(off * 13 + 5);
}

/*
 * The nonce client.c gives a SYN without a timestamp (native auth-only):
 * the first byte of SipHash-2-4, under the client's nonce key, of the
 * flow's key (flowtable.h) and the kernel ISN, big-endian.
 */
static uint8_t nonce_of(const struct run *r, const struct step *st, uint32_t kernel_isn)
{
	struct flow_key fk;
	uint8_t m[sizeof(fk.b) + 4], h[crypto_shorthash_BYTES];

	flow_key_make(&fk, r->family, src_of(r->sc, r->family, st->who),
		      dst_of(r->family, st->who), (uint16_t)(SPORT + (st->who & OTHER_SPORT ? 1 : 0)),
		      dport_of(r->sc, st->who));
	memcpy(m, fk.b, sizeof(fk.b));
	m[sizeof(fk.b)] = (uint8_t)(kernel_isn >> 24);
	m[sizeof(fk.b) + 1] = (uint8_t)(kernel_isn >> 16);
	m[sizeof(fk.b) + 2] = (uint8_t)(kernel_isn >> 8);
	m[sizeof(fk.b) + 3] = (uint8_t)kernel_isn;
	crypto_shorthash(h, m, sizeof(m), r->c.nonce_key);
	return h[0];
}

/*
 * The ISN the knock entry gives this SYN, computed here from the
 * configuration: without a timestamp (no_ts), a native auth-only entry's
 * is the nonce form, for the SYN's kernel ISN.
 */
static uint32_t knock_isn(const struct run *r, const struct step *st, uint32_t tsval, bool no_ts,
			  uint32_t kernel_isn)
{
	const struct entry_spec *es = &entries[r->sc->entry];
	const struct kg_key *key = &conf.keyring.keys[es->key];
	uint8_t payload[INTEG_MAX_LEN];
	struct isn_input in = { .family = r->family, .dst = dst_of(r->family, st->who),
				.port = dport_of(r->sc, st->who), .tsval = tsval };
	uint64_t epoch = isn_epoch(r->c.wall, es->window);

	if (no_ts && es->mode == KG_MODE_NATIVE && !es->integrity_len)
		return isn_native_nonce(key, &in, epoch, nonce_of(r, st, kernel_isn));
	for (uint32_t i = 0; i < es->integrity_len; i++)
		payload[i] = stream(i);
	return isn_compute(key, es->mode, &in, epoch, payload, es->integrity_len);
}

/* A packet of the scenario, as the test sees it: then built by pb_build. */
struct pk {
	bool in;			/* from the server */
	unsigned who;
	uint32_t seq, ack;
	uint8_t flags;
	bool ts, odd;
	uint32_t tsval;
	uint8_t nsack;
	uint32_t sack0;
	size_t plen;
};

static size_t build(uint8_t *buf, const struct run *r, const struct pk *k)
{
	static uint8_t payload[2048];
	uint8_t opt[40];
	uint32_t blocks[4][2];
	size_t n = 0;
	const uint8_t *a = src_of(r->sc, r->family, k->who), *b = dst_of(r->family, k->who);
	uint16_t sport = (uint16_t)(SPORT + (k->who & OTHER_SPORT ? 1 : 0));
	uint16_t dport = dport_of(r->sc, k->who);

	if (k->flags & TCP_SYN)
		n += pb_opt_mss(opt, 1460);
	if (k->ts) {
		if (!k->odd)
			opt[n++] = 1;
		opt[n++] = 1;
		n += pb_opt_ts(opt + n, k->tsval, k->in ? TSVAL0 : 0);
	}
	if (k->nsack) {
		for (size_t i = 0; i < k->nsack; i++) {
			blocks[i][0] = k->sack0 + 3000 * (uint32_t)i;
			blocks[i][1] = blocks[i][0] + 1000;
		}
		opt[n++] = 1;
		opt[n++] = 1;
		n += pb_opt_sack(opt + n, (const uint32_t(*)[2])blocks, k->nsack);
	}
	while (n % 4)
		opt[n++] = 0;
	for (size_t i = 0; i < k->plen; i++)
		payload[i] = stream((uint32_t)i);
	struct pb_spec s = {
		.family = r->family, .src = k->in ? b : a, .dst = k->in ? a : b,
		.sport = k->in ? dport : sport, .dport = k->in ? sport : dport,
		.seq = k->seq, .ack = k->ack, .flags = k->flags, .window = 1000, .ip_id = 77,
		.opt = opt, .opt_len = n, .payload = payload, .plen = k->plen,
	};
	return pb_build(buf, &s, NULL);
}

static void check_ct(struct run *r, unsigned step, size_t from, const struct step *st,
		     const struct pk *syn, uint32_t want_isn)
{
	const char *want = st->ct ? st->ct : "";
	bool user = r->sc->user;
	size_t alen = r->family == AF_INET ? 4 : 16;
	size_t w = 0;

	for (size_t i = from; i < nevents; i++) {
		const struct event *e = &events[i];
		char code = e->kind == EV_CREATE ? 'C' : e->kind == EV_GET ? 'G'
						 : e->kind == EV_DELETE ? 'X' : 0;

		if (!code)
			continue;
		CHECK(want[w] == code, "scenario %u step %u: conntrack call %zu is %c, want %s",
		      r->no, step, w + 1, code, want);
		if (want[w])
			w++;
		CHECK(e->f.family == r->family && e->f.sport == SPORT + (st->who & OTHER_SPORT) &&
			      e->f.dport == dport_of(r->sc, st->who) &&
			      memcmp(e->f.src, src_of(r->sc, r->family, st->who), alen) == 0 &&
			      memcmp(e->f.dst, dst_of(r->family, st->who), alen) == 0,
		      "scenario %u step %u: conntrack tuple", r->no, step);
		if (code != 'C')
			continue;
		uint32_t delta = want_isn - syn->seq;

		CHECK(e->seqadj == !user && e->has_labels == user,
		      "scenario %u step %u: seqadj for the kernel path, labels for the user's",
		      r->no, step);
		CHECK_EQ_U(e->kernel_isn, syn->seq, "scenario %u step %u: kernel ISN", r->no, step);
		CHECK_EQ_U(e->delta, delta, "scenario %u step %u: delta", r->no, step);
		if (user) {
			/* The default bits: our flag at 95, the shift as the last word. */
			static const uint32_t mask[MARKS_LABEL_WORDS] = { 0, 0, 0x80000000,
									0xffffffff };
			CHECK(memcmp(e->labels.mask, mask, sizeof(mask)) == 0 &&
				      e->labels.val[0] == 0 && e->labels.val[1] == 0 &&
				      e->labels.val[2] == 0x80000000 && e->labels.val[3] == delta,
			      "scenario %u step %u: the shift in our label bits, none other",
			      r->no, step);
		}
		CHECK_EQ_U(e->timeout, CT_TIMEOUT, "scenario %u step %u: timeout", r->no, step);
		/* A routed flow from a private source leaves with the router's address. */
		bool snat = r->sc->routed && !(st->who & FROM_PUBLIC);
		CHECK(e->f.snat == snat, "scenario %u step %u: source NAT %d, want %d", r->no, step,
		      e->f.snat, snat);
		if (snat)
			CHECK(memcmp(e->f.snat_addr, r->family == AF_INET ? fake_router4 : fake_router6,
				     alen) == 0,
			      "scenario %u step %u: NAT'ed to the router's address", r->no, step);
	}
	CHECK(want[w] == 0, "scenario %u step %u: conntrack calls %s, only %zu made", r->no, step,
	      want, w);
}

/* Sends the packet of one step and checks its verdict and side effects. */
static void run_step(struct run *r, unsigned step, const struct step *st)
{
	static uint8_t buf[BUF_LEN], want[BUF_LEN];
	const struct scenario *sc = r->sc;
	struct pk k = { .who = st->who, .flags = st->flags, .ts = !st->no_ts, .odd = st->odd,
			.nsack = st->nsack, .plen = st->len };
	struct pk out;
	uint32_t delta = r->knock_isn - r->kernel_isn;
	uint32_t want_isn = 0;
	size_t from = nevents, len, wlen, caplen, wirelen;
	unsigned answers = 0, intents = 0, nverdicts = 0;

	k.tsval = TSVAL0 + st->tsval;
	switch (st->k) {
	case K_SYN:
		k.flags |= TCP_SYN;
		k.seq = KERNEL_ISN + st->seq;
		/* A retransmission of the first SYN keeps its ISN (and TSval). */
		want_isn = knock_isn(r, st, st->retx ? r->tsval : k.ts ? k.tsval : 0, !k.ts,
				     k.seq);
		break;
	case K_OUT:
		k.flags |= TCP_ACK;
		k.seq = KERNEL_ISN + st->seq;
		k.ack = SERVER_ISN + 1;
		break;
	case K_IN:
		k.in = true;
		k.flags |= st->flags & TCP_RST ? 0 : TCP_ACK;
		k.seq = SERVER_ISN + 1;
		k.ack = r->knock_isn + st->ack;
		k.sack0 = r->knock_isn + 1;
		break;
	default:
		k.flags = TCP_SYN;
		break;
	}
	if (sc->intent != INTENT_NONE && st->k == K_SYN) {
		const struct entry_spec *es = &entries[sc->entry];

		fake_intent.set = true;
		fake_intent.ret = sc->intent == INTENT_ERR ? -EINVAL : 0;
		fake_intent.family = r->family;
		fake_intent.sport = SPORT;
		fake_intent.dport = sc->intent == INTENT_OTHER_PORT ? 1 : es->port;
		memcpy(fake_intent.dst, dst_of(r->family, 0), r->family == AF_INET ? 4 : 16);
		fake_intent.len = es->integrity_len - (sc->intent == INTENT_SHORT);
		for (size_t i = 0; i < fake_intent.len; i++)
			fake_intent.payload[i] = stream((uint32_t)i);
	}

	memset(buf, 0, sizeof(buf));
	len = build(buf, r, &k);
	caplen = wirelen = len + st->pad;
	if (st->cut > 0)
		caplen -= (size_t)st->cut;
	else if (st->cut < 0)
		caplen = wirelen = len - (size_t)-st->cut;
	if (st->k == K_BAD)
		caplen = wirelen = 12;
	if (st->notready) {
		/* What the kernel leaves before offload: the folded pseudo-header sum. */
		uint8_t *ip = buf;
		size_t tcp_off = r->family == AF_INET ? 20 : 40;
		uint16_t full = (uint16_t)pb_get16(ip + tcp_off + 16);

		pb_put16(ip + tcp_off + 16, (uint16_t)~full ^ 0x1234);
	}

	struct nfqueue_packet p = {
		.id = ++r->next_id, .hw_proto = r->family == AF_INET ? 0x0800 : 0x86dd,
		.hook = st->k == K_IN ? NF_INET_LOCAL_IN : NF_INET_LOCAL_OUT,
		.mark = OTHER_MARK, .skbinfo = st->notready ? NFQA_SKB_CSUMNOTREADY : 0,
		.data = buf, .caplen = caplen, .wirelen = wirelen,
	};
	/*
	 * The mark the verdict must leave: the packet's own (other software's)
	 * goes on with it; a routed packet going out loses our code.
	 */
	uint32_t want_mark = OTHER_MARK;
	bool fwd_code = sc->routed && st->k != K_IN && !st->nomark;
	if (st->k == K_SYN && st->nomark)
		p.mark = want_mark = 0;
	if (sc->routed) {
		p.hook = st->k == K_IN ? NF_INET_FORWARD : NF_INET_PRE_ROUTING;
		if (fwd_code)
			p.mark |= conf.marks.fwd;
	}
	door_packet(&r->door, st->k == K_SYN ? QSET_SYN : QSET_DATA, FAKE_Q, &p);

	/* The packet the verdict should carry. */
	out = k;
	if (st->k == K_SYN) {
		if (sc->user)
			out.seq = want_isn;
		if (st->retx && k.ts)
			out.tsval = r->tsval;
		if (!r->knocked && st->who == 0 && st->want != 'D') {
			r->knocked = true;
			r->kernel_isn = k.seq;
			r->knock_isn = want_isn;
			r->tsval = k.ts ? k.tsval : 0;
		}
	} else if (st->k == K_OUT && st->want == 'P') {
		out.seq = k.seq + delta;
	} else if (st->k == K_IN && st->want == 'P') {
		if (k.flags & TCP_ACK)
			out.ack = k.ack - delta;
		out.sack0 = k.sack0 - delta;
	}
	wlen = build(want, r, &out);
	if (st->pad || st->cut < 0)
		wlen = wirelen;

	for (size_t i = from; i < nevents; i++) {
		const struct event *e = &events[i];

		switch (e->kind) {
		case EV_VERDICT:
			nverdicts++;
			r->verdicts[e->id < 64 ? e->id : 0]++;
			CHECK_EQ_U(e->id, p.id, "scenario %u step %u: verdict id", r->no, step);
			CHECK(e->q == FAKE_Q, "scenario %u step %u: verdict on its queue", r->no, step);
			if (st->want == 'D') {
				CHECK(e->v == NFQUEUE_DROP && !e->has_pkt,
				      "scenario %u step %u: dropped", r->no, step);
			} else if (st->want == 'A') {
				/* A mark is given only where ours is taken off. */
				bool marked = fwd_code;

				CHECK(e->v == NFQUEUE_ACCEPT && !e->has_pkt,
				      "scenario %u step %u: accepted unchanged", r->no, step);
				CHECK(e->has_mark == marked && (!marked || e->mark == want_mark),
				      "scenario %u step %u: mark given back %d 0x%08x, want %d 0x%08x",
				      r->no, step, e->has_mark, e->mark, marked, want_mark);
			} else {
				CHECK(e->v == NFQUEUE_ACCEPT && e->has_pkt,
				      "scenario %u step %u: accepted with a new packet", r->no, step);
				CHECK_EQ_U(e->len, wlen, "scenario %u step %u: length", r->no, step);
				CHECK_EQ_U(e->mark, want_mark, "scenario %u step %u: mark", r->no, step);
				if (e->has_pkt && e->len == wlen)
					CHECK(memcmp(fake_verdict_pkt, want, wlen) == 0,
					      "scenario %u step %u: packet differs from the one rebuilt "
					      "(csum %04x, want %04x)", r->no, step,
					      (unsigned)pb_get16(fake_verdict_pkt + (r->family == AF_INET ? 36 : 56)),
					      (unsigned)pb_get16(want + (r->family == AF_INET ? 36 : 56)));
			}
			break;
		case EV_ANSWER:
			answers++;
			CHECK(e->f.sport == SPORT && e->f.dport == dport_of(sc, st->who),
			      "scenario %u step %u: the answer is for the refused SYN", r->no, step);
			/* A local socket's RST goes out, not in through an interface. */
			CHECK_EQ_U(e->indev, 0, "scenario %u step %u: answer indev", r->no, step);
			break;
		case EV_INTENT:
			intents++;
			break;
		default:
			break;
		}
	}
	CHECK_EQ_U(nverdicts, 1, "scenario %u step %u: one verdict", r->no, step);
	CHECK_EQ_U(answers, st->answers, "scenario %u step %u: closed-port answers", r->no, step);
	CHECK_EQ_U(intents, st->intents, "scenario %u step %u: intents asked for", r->no, step);
	check_ct(r, step, from, st, &k, want_isn);
}

/* A conntrack entry left over for the main flow's tuple, as the scenario says. */
static void seed_stale(struct run *r)
{
	const struct scenario *sc = r->sc;
	struct step st = { .k = K_SYN };
	uint32_t isn = knock_isn(r, &st, TSVAL0, false, KERNEL_ISN);
	uint32_t delta = isn - KERNEL_ISN;
	struct ct_flow f = { .family = r->family, .sport = SPORT, .dport = dport_of(sc, 0) };
	struct ct_info ci = { 0 };

	if (sc->stale == STALE_NONE)
		return;
	memcpy(f.src, src_of(sc, r->family, 0), r->family == AF_INET ? 4 : 16);
	memcpy(f.dst, dst_of(r->family, 0), r->family == AF_INET ? 4 : 16);
	struct ct_labels lab;
	/* What the user path's SYN leaves in the labels (the fake keeps val & mask). */
	marks_label_put(conf.ct_label, delta, lab.val, lab.mask);
	switch (sc->stale) {
	case STALE_OTHER:
		if (sc->user)
			marks_label_put(conf.ct_label, delta + 1, ci.labels, lab.mask);
		else
			ci = (struct ct_info){ .has_seqadj = true, .pos = 99, .delta = 5 };
		break;
	case STALE_OURS:
		if (sc->user)
			memcpy(ci.labels, lab.val, sizeof(ci.labels));
		else
			ci = (struct ct_info){ .has_seqadj = true, .pos = KERNEL_ISN,
					       .delta = delta };
		break;
	case STALE_USER:
	case STALE_RESTART:
		memcpy(ci.labels, lab.val, sizeof(ci.labels));
		break;
	case STALE_ZERO:
		marks_label_put(conf.ct_label, 0, ci.labels, lab.mask);
		break;
	case STALE_KERNEL:
		ci = (struct ct_info){ .has_seqadj = true, .pos = KERNEL_ISN, .delta = delta };
		break;
	case STALE_FOREIGN:
		/* Every bit but our flag, the mark too. */
		memset(ci.labels, 0xff, sizeof(ci.labels));
		ci.labels[conf.ct_label / 32] &= ~(1u << conf.ct_label % 32);
		ci.mark = delta;
		break;
	default:
		ci = (struct ct_info){ .has_seqadj = true, .pos = KERNEL_ISN, .delta = delta ^ 1 };
		break;
	}
	fake_ct_add(&f, &ci);
	/* The flow as the daemon knocked it before it restarted. */
	if (sc->stale >= STALE_RESTART) {
		r->knocked = true;
		r->kernel_isn = KERNEL_ISN;
		r->knock_isn = sc->stale == STALE_ZERO ? KERNEL_ISN : isn;
		r->tsval = TSVAL0;
	}
}

static void check_counters(struct run *r)
{
	const struct scenario *sc = r->sc;

	for (int i = 0; i < CC_MAX; i++) {
		unsigned want = 0;

		for (size_t k = 0; k < MAX_CNT && sc->cnt[k].n; k++)
			if (sc->cnt[k].c == (enum client_counter)i)
				want = sc->cnt[k].n;
		CHECK_EQ_U(r->c.cnt[i], want, "scenario %u (%s): counter %s", r->no, sc->name,
			   client_counter_name((enum client_counter)i));
	}
}

static void run_scenario(unsigned no, const struct scenario *sc)
{
	static struct run r;
	uint32_t saved_flows = conf.max_flows;

	memset(&r, 0, sizeof(r));
	memset(cts, 0, sizeof(cts));
	memset(&fake_intent, 0, sizeof(fake_intent));
	r.sc = sc;
	r.no = no;
	r.family = conf.knock[sc->entry].dst.family;
	nevents = 0;
	ncreates = 0;
	fake_create_ret = sc->create_ret;
	fake_recreate_ret = sc->recreate_ret ? sc->recreate_ret : sc->create_ret;
	fake_get_ret = sc->get_ret;
	fake_gwnat_ret = sc->gwnat_ret;
	conf.translate = sc->user ? TRANSLATE_USER : TRANSLATE_KERNEL;
	if (sc->max_flows)
		conf.max_flows = sc->max_flows;
	if (client_init(&r.c, &conf, FAKE_CT, FAKE_RS, FAKE_IT) < 0 ||
	    door_init(&r.door, &conf, NULL, &r.c) < 0) {
		CHECK(0, "scenario %u: init", no);
		return;
	}
	/* Random at init; fixed here, so every run sends the same nonces. */
	memset(r.c.nonce_key, 0x5a, sizeof(r.c.nonce_key));
	r.c.mono = MONO0;
	r.c.wall = WALL0;
	seed_stale(&r);

	for (size_t i = 0; i < MAX_STEPS && sc->s[i].k != K_END; i++) {
		const struct step *st = &sc->s[i];

		nevents = 0;
		switch (st->k) {
		case K_TICK:
			r.c.mono += st->len;
			door_tick(&r.door, FAKE_Q);
			CHECK_EQ_U(nevents, 0, "scenario %u: a tick calls no adapter", no);
			break;
		case K_RELOAD:
			door_set_conf(&r.door, FAKE_Q, &conf, 1);
			break;
		default:
			run_step(&r, (unsigned)i + 1, st);
			break;
		}
	}
	check_counters(&r);
	for (uint32_t id = 1; id <= r.next_id; id++)
		CHECK_EQ_U(r.verdicts[id], 1, "scenario %u: verdicts for packet %u", no, id);
	CHECK_EQ_U(fake_misuse, 0, "scenario %u: adapters called as expected", no);
	door_free(&r.door);
	client_free(&r.c);
	conf.max_flows = saved_flows;
}

/* The door (door.h): only prerouting with the FWD code is a routed flow's. */
static bool wants_routed(const struct nfqueue_packet *p)
{
	return door_classify(&conf.marks, QSET_SYN, p->hook, p->mark) == DOOR_CLIENT_ROUTED;
}

static void test_wants_routed(void)
{
	static const struct {
		uint8_t hook;
		uint32_t mark;
		bool want;
	} rows[] = {
		{ NF_INET_PRE_ROUTING, 0, false },			/* the server's */
		{ NF_INET_PRE_ROUTING, 0x80000000, false },
		{ NF_INET_FORWARD, 0, false },
		{ NF_INET_LOCAL_OUT, 0, false },
	};
	const struct marks *m = &conf.marks;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct nfqueue_packet p = { .hook = rows[i].hook, .mark = rows[i].mark };

		CHECK(wants_routed(&p) == rows[i].want, "wants_routed row %zu", i + 1);
		/* With FWD in our bits: routed at prerouting only; other bits kept. */
		p.mark = marks_own(m, rows[i].mark) | m->fwd;
		CHECK(wants_routed(&p) == (rows[i].hook == NF_INET_PRE_ROUTING),
		      "wants_routed row %zu with FWD", i + 1);
		/* Any other code of ours is not. */
		p.mark = marks_own(m, rows[i].mark) | m->accepted;
		CHECK(!wants_routed(&p), "wants_routed row %zu with ACCEPTED", i + 1);
	}
}

/*
 * client_flow_shift(), the one way to a flow's shift for code that has no
 * packet of the flow in hand (ICMP errors, say): each row a fresh client,
 * one conntrack entry (or none) for the flow, two calls.
 */
static void test_flow_shift(void)
{
	static const uint32_t lab_mask[MARKS_LABEL_WORDS] = { 0, 0, 0x80000000, 0xffffffff };
	static const struct {
		const char *name;
		bool user, entry, seqadj;
		uint32_t label_shift;	/* with the flag, in the default bits */
		bool foreign;		/* labels without our flag */
		int get_ret;
		int want;
		uint32_t delta;
		unsigned gets;		/* conntrack requests over both calls */
	} rows[] = {
		{ "kernel: the entry's sequence adjustment", false, true, true, 0, false, 0, 0,
		  0x1234, 2 },
		{ "kernel: an entry without one", false, true, false, 0, false, 0, -ENOENT, 0, 2 },
		{ "kernel: no entry", false, false, false, 0, false, 0, -ENOENT, 0, 2 },
		{ "kernel: conntrack fails", false, true, true, 0, false, -EIO, -EIO, 0, 2 },
		{ "user: the labels' shift, then the table's", true, true, false, 0xfedcba98, false,
		  0, 0, 0xfedcba98, 1 },
		{ "user: a seqadj entry is the kernel path's", true, true, true, 0, true, 0, -ENOENT,
		  0, 1 },
		{ "user: no entry, remembered", true, false, false, 0, false, 0, -ENOENT, 0, 1 },
		{ "user: conntrack fails, asked again", true, true, false, 7, false, -EIO, -EIO, 0,
		  2 },
	};
	static struct client c;
	struct ct_flow f = { .family = AF_INET, .sport = SPORT, .dport = 22 };

	memcpy(f.src, client4, 4);
	memcpy(f.dst, server4, 4);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct ct_info ci = { .has_seqadj = rows[i].seqadj, .pos = KERNEL_ISN,
				      .delta = rows[i].seqadj ? rows[i].delta : 0 };
		unsigned gets = 0;

		memset(cts, 0, sizeof(cts));
		nevents = 0;
		fake_get_ret = rows[i].get_ret;
		conf.translate = rows[i].user ? TRANSLATE_USER : TRANSLATE_KERNEL;
		if (client_init(&c, &conf, FAKE_CT, FAKE_RS, FAKE_IT) < 0) {
			CHECK(0, "flow_shift row %zu: init", i + 1);
			continue;
		}
		c.mono = MONO0;
		if (rows[i].user && !rows[i].foreign) {
			marks_label_put(conf.ct_label, rows[i].label_shift, ci.labels,
					(uint32_t[MARKS_LABEL_WORDS]){ 0 });
		} else if (rows[i].foreign) {
			for (size_t w = 0; w < MARKS_LABEL_WORDS; w++)
				ci.labels[w] = ~lab_mask[w];
		}
		if (rows[i].entry)
			fake_ct_add(&f, &ci);
		for (int call = 0; call < 2; call++) {
			uint32_t delta = 0xabad1dea;
			int r = client_flow_shift(&c, &f, &delta);

			CHECK(r == rows[i].want, "flow_shift row %zu (%s), call %d: %d, want %d", i + 1,
			      rows[i].name, call + 1, r, rows[i].want);
			CHECK_EQ_U(delta, r == 0 ? rows[i].delta : 0xabad1dea,
				   "flow_shift row %zu (%s), call %d: shift", i + 1, rows[i].name,
				   call + 1);
		}
		for (size_t e = 0; e < nevents; e++)
			gets += events[e].kind == EV_GET;
		CHECK_EQ_U(gets, rows[i].gets, "flow_shift row %zu (%s): conntrack requests", i + 1,
			   rows[i].name);
		client_free(&c);
	}
	fake_get_ret = 0;
	nevents = 0;
}

int main(void)
{
	if (sodium_init() < 0 || setup_conf() < 0) {
		printf("not ok: setup\n");
		return 1;
	}
	log_init(1, LOG_ERR, "test_client");
	CHECK(strcmp(client_counter_name(CC_knocked), "knocked") == 0, "counter name");
	CHECK(strcmp(client_counter_name(CC_MAX), "unknown") == 0, "counter name out of range");
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run_scenario((unsigned)i + 1, &scenarios[i]);
	test_wants_routed();
	test_flow_shift();
	conf_free(&conf);
	return unit_done("client");
}
