/*
 * test_server.c - the server role's data path (server.[ch], pending.[ch],
 * through the door, door.h) against fakes of the adapters it calls.
 *
 * The queue, sock_diag, raw-socket and conntrack adapters are replaced by
 * the fakes the data-path tests share (fakes.h): they record every verdict,
 * flush, held count, socket abort, closed-port answer and conntrack change
 * in one event log, so the real nfq.o, sockkill.o, rawsock.o and ctnl.o are
 * never linked; conntrack answers as each step scripts it.  The
 * configuration is built by hand (conf_defaults, then keys and protect
 * entries), and every SYN carries
 * an ISN computed with isn_compute for the entry's key and the destination
 * the client dialled (its own, or a public one a NAT rewrote: enum dial):
 * no root, no network, and the clock is s.mono / s.wall, set here.
 *
 * Each numbered scenario is a fresh server fed steps in order: a SYN, a data
 * segment, a bare segment, a stray probe, a malformed packet, or time moving
 * on (server_tick).  Each goes in by the door (door.h) from the queue set
 * its rule queues to, as the queue threads' do.  Packets get ids 1, 2, ... in the order they are sent.
 * A step lists the verdicts it must produce, in order, as "<id><verdict>"
 * (a range "2-33D" stands for each id in turn): D drop, A accept,
 * R accept with our mark bits cleared (the service's segments come marked
 * with the reply code), K accept with the accepted code (a SYN let through,
 * which the nat rule then spares), I repeat with the integrity code
 * (marks.h), S accept, our bits cleared, as the packet itself with its TCP
 * checksum spoiled: the one packet the server rewrites, a refused IPv6
 * packet the kernel discards after the input hook anyway (server.c,
 * let_kernel_discard); how
 * many sockets it must abort (and whose), closed-port answers it must send
 * and conntrack bits it must clear (ctnl_set_mark).  A REPLY step is a
 * segment from the service (postrouting hook) acknowledging `off` bytes of the
 * client's stream.  After the last step every counter is compared with the
 * scenario's list (those not listed must be 0).  Then time runs far ahead so
 * that every pending flow ends, and every packet must have had exactly one
 * verdict.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "common/isn.h"
#include "common/marks.h"
#include "common/rst.h"
#include "config/conf.h"
#include "config/keys.h"
#include "datapath/door.h"
#include "datapath/server/integ.h"
#include "datapath/server/server.h"
#include "datapath/server/strays.h"
#include "fakes.h"
#include "kernel/nfq.h"
#include "kernel/rawsock.h"
#include "kernel/sockkill.h"
#include "pktbuild.h"
#include "unit.h"

enum {
	BUF_LEN = 4096,
	MAX_IDS = 128,
	MAX_STEPS = 12,
	MAX_CNT = 8,
	INDEV = 7,
	MONO0 = 1000,
	WALL0 = 1700000020,	/* 20 s into a 30 s epoch */
	TSVAL0 = 0x10000000,
	SPORT = 40000,
};

static struct conf conf;	/* the scenarios' configuration (below) */

/* ------------------------------------------------------------------ */
/* Configuration */

enum { KEY_NATIVE, KEY_LEGACY, KEY_ROTATED, NKEYS };

enum entry_id {
	E_KNOCK,	/* 22, knock, auth only, reset */
	E_NATIVE,	/* 443, native, two keys (the client has the second) */
	E_DROP,		/* 2022, knock, on_fail drop */
	E_NOREPLAY,	/* 2023, native, replay off */
	E_INTEG,	/* 2222, knock, integrity 16 */
	E_INTEG_N,	/* 8443, native, integrity 64 */
	E_INTEG_MAX,	/* 2048, knock, integrity INTEG_MAX_LEN */
	E_ADDR,		/* 80, knock, only 192.0.2.1 and 2001:db8::1 */
	E_FWD,		/* 8080, native, forward: 192.0.2.0/24, 2001:db8::/64 routed */
	E_PUB,		/* 3022, knock, public destinations (pub_list) */
	E_PUB_N,	/* 3023, native, likewise */
	E_PUB_INTEG,	/* 3024, knock, integrity 16, likewise */
	E_PUB_INTEG_N,	/* 3025, native, integrity 64, likewise */
	E_TSREQ,	/* 4022, native, timestamps "required" */
	NENTRIES
};

static const struct entry_spec {
	uint16_t port;
	enum kg_mode mode;
	size_t nkeys;
	int keys[2];
	int client_key;
	uint16_t integrity_len;
	enum on_fail on_fail;
	uint32_t window;
	bool replay;
	uint32_t replay_ttl;
	const char *addr[2];
	bool forward;
	bool pub;		/* public = pub_list */
	enum timestamps timestamps;
} entries[NENTRIES] = {
	[E_KNOCK] = { 22, KG_MODE_KNOCK, 1, { KEY_LEGACY }, KEY_LEGACY, 0, ON_FAIL_RESET, 0,
		      true, 3600, { NULL } },
	[E_NATIVE] = { 443, KG_MODE_NATIVE, 2, { KEY_ROTATED, KEY_NATIVE }, KEY_NATIVE, 0,
		       ON_FAIL_RESET, 30, true, 90, { NULL } },
	[E_DROP] = { 2022, KG_MODE_KNOCK, 1, { KEY_LEGACY }, KEY_LEGACY, 0, ON_FAIL_DROP, 0,
		     true, 3600, { NULL } },
	[E_NOREPLAY] = { 2023, KG_MODE_NATIVE, 1, { KEY_NATIVE }, KEY_NATIVE, 0, ON_FAIL_RESET, 30,
			 false, 90, { NULL } },
	[E_INTEG] = { 2222, KG_MODE_KNOCK, 1, { KEY_LEGACY }, KEY_LEGACY, 16, ON_FAIL_RESET, 0,
		      true, 3600, { NULL } },
	[E_INTEG_N] = { 8443, KG_MODE_NATIVE, 1, { KEY_NATIVE }, KEY_NATIVE, 64, ON_FAIL_RESET, 30,
			true, 90, { NULL } },
	[E_INTEG_MAX] = { 2048, KG_MODE_KNOCK, 1, { KEY_LEGACY }, KEY_LEGACY, INTEG_MAX_LEN,
			  ON_FAIL_RESET, 0, true, 3600, { NULL } },
	[E_ADDR] = { 80, KG_MODE_KNOCK, 1, { KEY_LEGACY }, KEY_LEGACY, 0, ON_FAIL_RESET, 0,
		     true, 3600, { "192.0.2.1", "2001:db8::1/128" } },
	[E_FWD] = { 8080, KG_MODE_NATIVE, 1, { KEY_NATIVE }, KEY_NATIVE, 0, ON_FAIL_RESET, 30,
		    true, 90, { "192.0.2.0/24", "2001:db8::/64" }, true, false },
	[E_PUB] = { 3022, KG_MODE_KNOCK, 1, { KEY_LEGACY }, KEY_LEGACY, 0, ON_FAIL_RESET, 0, true,
		    3600, { NULL }, false, true },
	[E_PUB_N] = { 3023, KG_MODE_NATIVE, 2, { KEY_ROTATED, KEY_NATIVE }, KEY_NATIVE, 0,
		      ON_FAIL_RESET, 30, true, 90, { NULL }, false, true },
	[E_PUB_INTEG] = { 3024, KG_MODE_KNOCK, 1, { KEY_LEGACY }, KEY_LEGACY, 16, ON_FAIL_RESET, 0,
			  true, 3600, { NULL }, false, true },
	[E_PUB_INTEG_N] = { 3025, KG_MODE_NATIVE, 1, { KEY_NATIVE }, KEY_NATIVE, 64, ON_FAIL_RESET,
			    30, true, 90, { NULL }, false, true },
	[E_TSREQ] = { 4022, KG_MODE_NATIVE, 1, { KEY_NATIVE }, KEY_NATIVE, 0, ON_FAIL_RESET, 30,
		      true, 90, { NULL }, false, false, TIMESTAMPS_REQUIRED },
};

/*
 * The public destinations of the E_PUB* entries: what a NAT in front of
 * this host rewrites to server4/server6 (1:1, and a port forward from 2200).
 */
static const char *const pub_list[] = { "203.0.113.1", "203.0.113.1:2200",
					"[2001:db8:ff::1]:2200", "2001:db8:ff::1" };

static int setup_conf(void)
{
	static const char legacy[] = "Magic secret string";
	uint8_t raw[32];

	conf_defaults(&conf);
	if (keyring_alloc(&conf.keyring, NKEYS) < 0)
		return -1;
	conf.nkeys = NKEYS;
	for (int i = 0; i < 32; i++)
		raw[i] = (uint8_t)i;
	isn_key_init(&conf.keyring.keys[KEY_NATIVE], raw, sizeof(raw));
	snprintf(conf.keys[KEY_NATIVE].name, CONF_NAME_MAX, "native");
	conf.keys[KEY_NATIVE].len = sizeof(raw);
	isn_key_init(&conf.keyring.keys[KEY_LEGACY], (const uint8_t *)legacy, strlen(legacy));
	snprintf(conf.keys[KEY_LEGACY].name, CONF_NAME_MAX, "legacy");
	conf.keys[KEY_LEGACY].len = strlen(legacy);
	for (int i = 0; i < 32; i++)
		raw[i] = (uint8_t)(100 + i);
	isn_key_init(&conf.keyring.keys[KEY_ROTATED], raw, sizeof(raw));
	snprintf(conf.keys[KEY_ROTATED].name, CONF_NAME_MAX, "rotated");
	conf.keys[KEY_ROTATED].len = sizeof(raw);
	sodium_memzero(raw, sizeof(raw));

	for (size_t i = 0; i < NENTRIES; i++) {
		const struct entry_spec *es = &entries[i];
		struct conf_protect *e = &conf.protect[i];

		e->line = (int)i + 1;
		e->port = es->port;
		e->mode = es->mode;
		e->nkeys = es->nkeys;
		for (size_t k = 0; k < es->nkeys; k++)
			e->keys[k] = es->keys[k];
		e->integrity_len = es->integrity_len;
		e->on_fail = es->on_fail;
		e->window = es->window;
		e->replay = es->replay;
		e->replay_ttl = es->replay_ttl;
		e->forward = es->forward;
		e->timestamps = es->timestamps;
		for (size_t a = 0; a < 2 && es->addr[a]; a++)
			if (prefix_parse(es->addr[a], &e->addrs[e->naddrs++]) < 0)
				return -1;
		for (size_t a = 0; es->pub && a < sizeof(pub_list) / sizeof(pub_list[0]); a++)
			if (dest_read(pub_list[a], &e->pub[e->npublic++].dst) != DEST_OK)
				return -1;
	}
	conf.nprotect = NENTRIES;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Packets */

struct spec {
	int family;
	const uint8_t *src, *dst;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	bool ts;
	uint32_t tsval;
	const uint8_t *payload;
	size_t plen;
	uint16_t urg;
};

/* IPv4/IPv6 + TCP with MSS (SYNs) and timestamps; checksums from pktbuild.h. */
static size_t build(uint8_t *buf, const struct spec *s, size_t *ret_tcp_off)
{
	uint8_t opt[16];
	size_t ol = 0;
	struct pb_built b;

	if (s->flags & TCP_SYN)
		ol += pb_opt_mss(opt, 1460);
	if (s->ts) {
		opt[ol++] = 1;
		opt[ol++] = 1;
		ol += pb_opt_ts(opt + ol, s->tsval, 0);
	}
	memset(buf, 0, BUF_LEN);
	pb_build(buf, &(struct pb_spec){
		.family = s->family, .src = s->src, .dst = s->dst, .sport = s->sport,
		.dport = s->dport, .seq = s->seq, .ack = s->ack, .flags = s->flags, .window = 502,
		.urg = s->urg, .opt = opt, .opt_len = ol, .payload = s->payload, .plen = s->plen }, &b);
	*ret_tcp_off = b.tcp_off;
	return b.len;
}

static const uint8_t client4[4] = { 198, 51, 100, 7 }, other4[4] = { 198, 51, 100, 8 };
static const uint8_t server4[4] = { 192, 0, 2, 1 }, elsewhere4[4] = { 192, 0, 2, 99 };
static const uint8_t client6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 7 };
static const uint8_t other6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 8 };
static const uint8_t server6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t elsewhere6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x99 };
/* Public destinations (pub_list), and addresses not in it. */
static const uint8_t pub4[4] = { 203, 0, 113, 1 }, notpub4[4] = { 203, 0, 113, 9 };
static const uint8_t pub6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0xff, [15] = 1 };
static const uint8_t notpub6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0xff, [15] = 9 };

/* The client's byte stream from ISN+1 on. */
static uint8_t stream(uint32_t off)
{
	return (uint8_t)(off * 29 + 3 + (off >> 7));
}

/* ------------------------------------------------------------------ */
/* Scenarios */

enum kind { K_END, K_SYN, K_DATA, K_RUN, K_BARE, K_STRAY, K_BAD, K_TICK, K_REPLY, K_RELOAD };
/* ISN_NONCE: the nonce form (native, no timestamp), the step's tsval as its nonce. */
enum isn_kind { ISN_GOOD, ISN_BAD, ISN_PREV, ISN_NEXT, ISN_FAR, ISN_OTHER_TSVAL, ISN_NONCE };
enum bad_kind { BAD_SHORT = 1, BAD_DOFF, BAD_UDP, BAD_FRAG };
enum who {
	OTHER_SRC = 1,		/* 198.51.100.8 / 2001:db8:1::8 */
	OTHER_SPORT = 2,	/* SPORT + 1 */
	OTHER_DST = 4,		/* 192.0.2.99 / 2001:db8::99 */
	OTHER_PORT = 8,		/* destination port 9999 */
	OTHER_SPORT2 = 16,	/* SPORT + 2 */
};

struct step {
	enum kind k;
	int how;		/* K_SYN: enum isn_kind; K_BAD: enum bad_kind */
	uint32_t off;		/* K_DATA/K_RUN: first byte after ISN; K_TICK: seconds */
	uint16_t len;		/* payload bytes; K_RUN: of each segment */
	uint16_t n;		/* K_RUN: segments, one byte apart */
	uint16_t flip;		/* 1-based payload byte sent wrong, 0 none */
	uint16_t cap;		/* payload bytes captured + 1; 0 all */
	uint8_t flags;		/* K_SYN, K_DATA: added; K_BARE/K_STRAY: the flags */
	uint16_t urg;		/* the urgent pointer (set URG in flags to mean it) */
	uint8_t ct;		/* K_SYN: conntrack's TCP state for it (0: no entry) */
	bool ct_lost;		/* not K_SYN: conntrack has no entry for it */
	unsigned who;		/* enum who bits */
	uint32_t tsval;		/* added to TSVAL0 */
	uint8_t dial;		/* K_SYN: the destination its ISN is computed for (enum dial) */
	uint32_t mark;		/* the packet's mark */
	uint8_t code;		/* and our code in it, as a rule put it: CODE_* */
	const char *want;	/* verdicts, see the top */
	unsigned kills, answers;
	unsigned unflags;	/* conntrack bits cleared (ctnl_set_mark) */
	unsigned victim;	/* whose socket is aborted: who + 1; 0 the step's own */
	bool anykill;		/* aborts of several flows: counted, not checked */
	bool input;		/* K_STRAY: from the input hook (input_closed), not prerouting */
	bool rthdr;		/* IPv6: a routing header with segments left, which the
				   kernel's input discards after the hook (pkt.h) */
};

enum code { CODE_NONE, CODE_INVALID, CODE_NOCONN, CODE_NEWSYN };

/*
 * What the client dialled: the SYN's own destination, or a public one a NAT
 * rewrote to it (pub_list, of the scenario's family unless said otherwise).
 */
enum dial {
	DIAL_OWN,
	DIAL_PUB,		/* the public address, the entry's port */
	DIAL_PUB_PORT,		/* the public address, port 2200 (forwarded) */
	DIAL_PUB_OTHER_PORT,	/* the public address, port 2201: not in the list */
	DIAL_NOT_PUB,		/* another address, the entry's port: not in the list */
	DIAL_PUB_OTHER_FAMILY,	/* the other family's public address (NAT64), 2200 */
};

struct count {
	enum server_counter c;
	unsigned n;
};

struct scenario {
	const char *name;
	enum entry_id entry;
	int family;
	bool ts;
	int kill_ret, raw_ret, unflag_ret;
	int ct_ret;		/* conntrack's answer to a get, when an error */
	bool no_sk;
	uint32_t max_flows, hold_flow_bytes, hold_bytes;	/* 0: defaults */
	uint32_t maxlen;					/* 0: default */
	uint32_t guess_threshold, guess_penalty;		/* 0: off */
	size_t replay_max;					/* 0: 1024 */
	bool closed_daemon;					/* closed_ports "daemon" */
	struct step s[MAX_STEPS];
	struct count cnt[MAX_CNT];
	enum pkt_drop drop;
};

#define SYN(w, ...) { .k = K_SYN, .want = w, __VA_ARGS__ }
#define DATA(o, l, w, ...) { .k = K_DATA, .off = o, .len = l, .want = w, __VA_ARGS__ }
#define RUN(o, l, cnt, w, ...) { .k = K_RUN, .off = o, .len = l, .n = cnt, .want = w, __VA_ARGS__ }
#define BARE(f, w, ...) { .k = K_BARE, .flags = f, .want = w, __VA_ARGS__ }
#define STRAY(f, w, ...) { .k = K_STRAY, .flags = f, .want = w, __VA_ARGS__ }
#define BAD(b) { .k = K_BAD, .how = b, .want = "1D" }
#define TICK(sec, w, ...) { .k = K_TICK, .off = sec, .want = w, __VA_ARGS__ }
#define REPLY(a, l, w, ...) { .k = K_REPLY, .off = a, .len = l, .want = w, __VA_ARGS__ }
#define VICTIM(who) .victim = (who) + 1
#define RELOAD(w, ...) { .k = K_RELOAD, .want = w, __VA_ARGS__ }
#define C(name, v) { SC_##name, v }
#define CAP(n) .cap = (n) + 1
#define V4 AF_INET
#define V6 AF_INET6
#define FIN TCP_FIN
#define ACK TCP_ACK

static const struct scenario scenarios[] = {
	/* 1-8: valid knocks, both modes, both families, with and without TS */
	{ "knock v4", E_KNOCK, V4, false, .s = { SYN("1K") },
	  .cnt = { C(syn_accepted, 1), C(replay_unchecked, 1) } },
	{ "knock v4 TS", E_KNOCK, V4, true, .s = { SYN("1K") }, .cnt = { C(syn_accepted, 1) } },
	{ "knock v6", E_KNOCK, V6, false, .s = { SYN("1K") },
	  .cnt = { C(syn_accepted, 1), C(replay_unchecked, 1) } },
	{ "knock v6 TS", E_KNOCK, V6, true, .s = { SYN("1K") }, .cnt = { C(syn_accepted, 1) } },
	{ "native v4 TS, second key", E_NATIVE, V4, true, .s = { SYN("1K") },
	  .cnt = { C(syn_accepted, 1) } },
	{ "native v6", E_NATIVE, V6, false, .s = { SYN("1K") }, .cnt = { C(syn_accepted, 1) } },
	{ "native: epochs e-1 and e+1", E_NATIVE, V6, true,
	  .s = { SYN("1K", .how = ISN_PREV), SYN("2K", .how = ISN_NEXT, .who = OTHER_SPORT) },
	  .cnt = { C(syn_accepted, 2) } },
	{ "knock with ECN setup flags and a payload", E_KNOCK, V4, true,
	  .s = { SYN("1K", .flags = TCP_ECE | TCP_CWR, .len = 20) },
	  .cnt = { C(syn_accepted, 1) } },
	/* 9-15: wrong ISNs: closed-port answer (reset) or silence (drop) */
	{ "knock v4 wrong ISN", E_KNOCK, V4, false,
	  .s = { SYN("1D", .how = ISN_BAD, .answers = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_sent, 1) } },
	{ "knock v6 TS wrong ISN", E_KNOCK, V6, true,
	  .s = { SYN("1D", .how = ISN_BAD, .answers = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_sent, 1) } },
	{ "native epoch e+2", E_NATIVE, V4, false, .s = { SYN("1D", .how = ISN_FAR, .answers = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_sent, 1) } },
	{ "ISN for another TSval", E_NATIVE, V6, true,
	  .s = { SYN("1D", .how = ISN_OTHER_TSVAL, .answers = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_sent, 1) } },
	{ "on_fail drop: no answer", E_DROP, V4, true, .s = { SYN("1D", .how = ISN_BAD) },
	  .cnt = { C(syn_refused, 1) } },
	{ "answer cannot be sent", E_KNOCK, V6, false, .raw_ret = -EPERM,
	  .s = { SYN("1D", .how = ISN_BAD, .answers = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_send_error, 1) } },
	{ "SYN|RST with a wrong ISN: no answer due", E_KNOCK, V4, false,
	  .s = { SYN("1D", .how = ISN_BAD, .flags = TCP_RST, .answers = 1) },
	  .cnt = { C(syn_refused, 1) } },
	/* 16-20: replays */
	{ "replay from another source v4", E_KNOCK, V4, true,
	  .s = { SYN("1K"), SYN("2D", .who = OTHER_SRC, .answers = 1), SYN("3K") },
	  .cnt = { C(syn_accepted, 2), C(replay_refused, 1), C(rst_sent, 1) } },
	{ "replay from another source v6, native", E_NATIVE, V6, true,
	  .s = { SYN("1K"), SYN("2D", .who = OTHER_SRC | OTHER_SPORT, .answers = 1) },
	  .cnt = { C(syn_accepted, 1), C(replay_refused, 1), C(rst_sent, 1) } },
	{ "replay off: the other source passes", E_NOREPLAY, V4, true,
	  .s = { SYN("1K"), SYN("2K", .who = OTHER_SRC) }, .cnt = { C(syn_accepted, 2) } },
	{ "same source without TS reconnects from another port", E_KNOCK, V6, false,
	  .s = { SYN("1K"), SYN("2K", .who = OTHER_SPORT) },
	  .cnt = { C(syn_accepted, 2), C(replay_unchecked, 2) } },
	/* A full replay table refuses nothing: the busiest source's oldest knock makes room. */
	{ "replay table full: room made, nothing refused", E_KNOCK, V4, true, .replay_max = 1,
	  .s = { SYN("1K"), SYN("2K", .tsval = 1000, .who = OTHER_SPORT), SYN("3K") },
	  .cnt = { C(syn_accepted, 3), C(replay_displaced_source, 2) } },
	/* 21-26: stray probes, and packets no entry protects */
	{ "FIN v4", E_KNOCK, V4, false, .s = { STRAY(FIN, "1D", .answers = 1) },
	  .cnt = { C(stray, 1), C(rst_sent, 1) } },
	{ "NULL v6", E_NATIVE, V6, true, .s = { STRAY(0, "1D", .answers = 1) },
	  .cnt = { C(stray, 1), C(rst_sent, 1) } },
	{ "Xmas v4", E_INTEG, V4, false,
	  .s = { STRAY(FIN | TCP_PSH | TCP_URG, "1D", .answers = 1) },
	  .cnt = { C(stray, 1), C(rst_sent, 1) } },
	{ "FIN to an on_fail drop port", E_DROP, V6, false, .s = { STRAY(FIN, "1D") },
	  .cnt = { C(stray, 1) } },
	{ "no protect entry: port, address", E_ADDR, V4, false,
	  .s = { SYN("1D", .who = OTHER_PORT), SYN("2D", .who = OTHER_DST), SYN("3K") },
	  .cnt = { C(no_entry, 2), C(syn_accepted, 1), C(replay_unchecked, 1) } },
	{ "an address-limited entry, IPv6", E_ADDR, V6, true,
	  .s = { SYN("1D", .who = OTHER_DST), SYN("2K") },
	  .cnt = { C(no_entry, 1), C(syn_accepted, 1) } },
	/*
	 * A routed host (forward): a new SYN from outside (NEWSYN) is refused
	 * by letting it go on unmarked, to the nat rule and the host's closed
	 * port; any other is dropped and answered here, as for a local port.
	 */
	{ "forward: a refused new SYN goes on to the host's closed port", E_FWD, V4, true,
	  .s = { SYN("1R", .how = ISN_BAD, .code = CODE_NEWSYN, .mark = 0x1234),
		 SYN("2R", .how = ISN_BAD, .code = CODE_NEWSYN, .who = OTHER_SPORT, .mark = 0x1234),
		 SYN("3K", .code = CODE_NEWSYN, .who = OTHER_SPORT2) },
	  .cnt = { C(syn_refused, 2), C(nat_refusals, 2), C(syn_accepted, 1) } },
	{ "forward, IPv6: an invalid or loopback SYN is dropped and answered here", E_FWD, V6,
	  true,
	  .s = { SYN("1D", .how = ISN_BAD, .answers = 1), SYN("2D", .how = ISN_BAD,
		 .code = CODE_INVALID, .who = OTHER_SPORT, .answers = 1), STRAY(FIN, "3D", .answers = 1),
		 SYN("4K", .who = OTHER_SPORT2) },
	  .cnt = { C(syn_refused, 2), C(stray, 1), C(rst_sent, 3), C(syn_accepted, 1) } },
	{ "forward: a replayed knock on NEWSYN goes to the host's closed port too", E_FWD, V4,
	  true,
	  .s = { SYN("1K", .code = CODE_NEWSYN), SYN("2R", .code = CODE_NEWSYN, .who = OTHER_SRC) },
	  .cnt = { C(syn_accepted, 1), C(replay_refused, 1), C(nat_refusals, 1) } },
	/*
	 * closed_ports "daemon": a probe of a port nobody listens on gets what
	 * the same probe of a protected port gets: a new connection (NEWSYN,
	 * from prerouting_closed) goes on to the kernel's closed-port answer
	 * after the work a knock costs, a FIN/NULL/Xmas probe (from
	 * input_closed) gets our RST
	 */
	{ "closed port SYN, the kernel answers", E_ADDR, V4, true, .closed_daemon = true,
	  .s = { SYN("1R", .who = OTHER_PORT, .code = CODE_NEWSYN, .mark = 0x42),
		 SYN("2R", .who = OTHER_DST, .code = CODE_NEWSYN), SYN("3K") },
	  .cnt = { C(closed, 2), C(syn_accepted, 1) } },
	{ "closed port ACK (ACK or window scan): the kernel answers", E_KNOCK, V6, true,
	  .s = { BARE(ACK, "1R", .who = OTHER_PORT, .code = CODE_NEWSYN) },
	  .cnt = { C(closed, 1) } },
	{ "closed port FIN/NULL/Xmas v6 at input: our RST, as a protected port's", E_KNOCK, V6,
	  false, .closed_daemon = true,
	  .s = { STRAY(FIN, "1D", .who = OTHER_PORT, .input = true, .answers = 1),
		 STRAY(0, "2D", .who = OTHER_PORT, .input = true, .answers = 1),
		 STRAY(FIN | TCP_PSH | TCP_URG, "3D", .input = true, .answers = 1) },
	  .cnt = { C(closed, 2), C(stray, 1), C(rst_sent, 3) } },
	{ "a prerouting packet for no entry that no closed-port rule coded: dropped", E_KNOCK,
	  V4, true,
	  .s = { SYN("1D", .who = OTHER_PORT), BARE(ACK | TCP_RST, "2D", .who = OTHER_PORT,
						   .code = CODE_NEWSYN) },
	  .cnt = { C(no_entry, 2) } },
	/* A local port's refused new SYN: the nat rule's closed port answers it. */
	{ "a refused new SYN goes on to the nat rule", E_KNOCK, V4, true,
	  .s = { SYN("1R", .how = ISN_BAD, .code = CODE_NEWSYN, .mark = 0x42),
		 SYN("2K", .code = CODE_NEWSYN, .who = OTHER_SPORT) },
	  .cnt = { C(syn_refused, 1), C(nat_refusals, 1), C(syn_accepted, 1) } },
	{ "... IPv6, and on_fail drop still drops", E_DROP, V6, true,
	  .s = { SYN("1D", .how = ISN_BAD, .code = CODE_NEWSYN) },
	  .cnt = { C(syn_refused, 1) } },
	{ "closed port, ACK or RST: never answered", E_KNOCK, V4, true, .closed_daemon = true,
	  .s = { BARE(ACK, "1D", .who = OTHER_PORT), BARE(TCP_RST, "2D", .who = OTHER_PORT) },
	  .cnt = { C(no_entry, 2) } },
	/* 27-30: malformed: dropped and counted by reason */
	{ "short", E_KNOCK, V4, false, .s = { BAD(BAD_SHORT) }, .drop = PKT_SHORT },
	{ "data offset 4", E_KNOCK, V6, false, .s = { BAD(BAD_DOFF) }, .drop = PKT_BAD_DOFF },
	{ "UDP", E_KNOCK, V6, false, .s = { BAD(BAD_UDP) }, .drop = PKT_NOT_TCP },
	{ "fragment", E_KNOCK, V4, false, .s = { BAD(BAD_FRAG) }, .drop = PKT_FRAGMENT },
	/* 31-38: integrity, verified and released in order */
	{ "integrity v4 TS, one segment", E_INTEG, V4, true,
	  .s = { SYN("1I"), DATA(0, 16, "2A") }, .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "integrity v6, handshake ACK, split", E_INTEG, V6, false,
	  .s = { SYN("1I"), BARE(ACK, "2A"), DATA(0, 8, ""), DATA(8, 8, "3A 4A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(replay_unchecked, 1) } },
	{ "integrity reordered", E_INTEG, V4, false,
	  .s = { SYN("1I"), DATA(8, 8, ""), DATA(0, 8, "3A 2A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(replay_unchecked, 1) } },
	{ "integrity with bytes beyond the window held too", E_INTEG, V6, true,
	  .s = { SYN("1I"), DATA(0, 10, ""), DATA(20, 100, ""), DATA(10, 10, "2A 4A 3A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "integrity duplicates and agreeing overlap", E_INTEG, V4, true,
	  .s = { SYN("1I"), DATA(0, 8, ""), DATA(0, 8, ""), DATA(4, 12, "2A 3A 4A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "integrity native v6, epoch e-1 verified with e-1", E_INTEG_N, V6, true,
	  .s = { SYN("1I", .how = ISN_PREV), DATA(0, 40, ""), DATA(40, 1000, "2A 3A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "integrity N = INTEG_MAX_LEN", E_INTEG_MAX, V4, true,
	  .s = { SYN("1I"), DATA(1448, 1448, ""), DATA(0, 1448, "3A 2A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "integrity: the packet's other mark bits kept", E_INTEG, V4, false,
	  .s = { SYN("1I", .mark = 0x7f0000ab), DATA(0, 16, "2A", .mark = 0x00000123),
		 REPLY(16, 0, "3R", .mark = 0x00000456, .unflags = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(replay_unchecked, 1) } },
	/* 39-43: integrity failures: every held segment dropped, both ends reset */
	{ "integrity wrong bytes", E_INTEG, V4, true,
	  .s = { SYN("1I"), DATA(0, 8, ""), DATA(8, 8, "2D 3D", .flip = 3, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_fail, 1) } },
	{ "integrity wrong bytes, no socket: closed-port answer", E_INTEG, V6, false,
	  .kill_ret = -ENOENT,
	  .s = { SYN("1I"), DATA(0, 16, "2D", .flip = 16, .kills = 1, .answers = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_fail, 1), C(rst_sent, 1), C(replay_unchecked, 1) } },
	{ "integrity wrong bytes without sock_diag", E_INTEG, V4, false, .no_sk = true,
	  .s = { SYN("1I"), DATA(8, 8, ""), DATA(0, 8, "2D 3D", .flip = 1, .answers = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_fail, 1), C(rst_sent, 1), C(replay_unchecked, 1) } },
	{ "integrity native wrong bytes", E_INTEG_N, V4, false,
	  .s = { SYN("1I"), DATA(0, 64, "2D", .flip = 64, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_fail, 1) } },
	{ "integrity conflicting retransmission", E_INTEG, V6, true,
	  .s = { SYN("1I"), DATA(0, 10, ""), DATA(5, 10, "3D 2D", .flip = 2, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_conflict, 1) } },
	/*
	 * 44: the verified bytes went through, but the service's TCP may have
	 * dropped them (a stale timestamp, a TCP-MD5 option): until it
	 * acknowledges the range, a segment that covers it with other bytes
	 * is an attack (it would be read instead) and resets the flow.  Once
	 * the acknowledgement is seen (DONE), a late copy is a duplicate the
	 * kernel trims, and segments past the range always pass.
	 */
	{ "integrity: other bytes for the verified range before the service's ACK", E_INTEG, V4,
	  false,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), DATA(16, 1000, "3A"),
		 DATA(0, 16, "4D", .flip = 1, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_conflict, 1),
		   C(replay_unchecked, 1) } },
	/* 45-47: hold limits: the segment is dropped, the flow goes on */
	{ "hold cap: segments per flow", E_INTEG_MAX, V4, false,
	  .s = { SYN("1I"), RUN(0, 1, 32, ""), DATA(32, 1, "34D"), TICK(10, "2-33D", .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(hold_cap, 1), C(integ_timeout, 1),
		   C(replay_unchecked, 1) } },
	{ "hold cap: bytes per flow", E_INTEG_MAX, V6, false, .hold_flow_bytes = 1024,
	  .s = { SYN("1I"), DATA(0, 400, ""), DATA(400, 400, ""), DATA(800, 400, "4D"),
		 TICK(10, "2D 3D", .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(hold_cap, 1), C(integ_timeout, 1),
		   C(replay_unchecked, 1) } },
	{ "hold cap: bytes per queue", E_INTEG_MAX, V4, true, .hold_bytes = 1000,
	  .s = { SYN("1I"), DATA(0, 400, ""), DATA(400, 400, ""), DATA(800, 200, "4D"),
		 DATA(800, 10, ""), TICK(10, "2D 3D 5D", .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(hold_cap, 1), C(integ_timeout, 1) } },
	/* 48-50: timeouts */
	{ "integrity timeout at SYN + integrity_timeout", E_INTEG, V4, true,
	  .s = { SYN("1I"), DATA(0, 8, ""), TICK(9, ""), TICK(1, "2D", .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_timeout, 1) } },
	{ "integrity timeout with nothing held, no socket", E_INTEG_N, V6, false,
	  .kill_ret = -ENOENT, .s = { SYN("1I"), TICK(10, "", .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_timeout, 1) } },
	/*
	 * The timeout reset the connection: a late segment is dropped without
	 * another reset, until the flow is forgotten (strays.h).
	 */
	{ "integrity: a late segment after the timeout", E_INTEG, V6, false,
	  .s = { SYN("1I"), TICK(10, "", .kills = 1), DATA(0, 16, "2D"),
		 TICK(STRAY_QUIET, ""), DATA(0, 16, "3D", .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_timeout, 1), C(integ_unknown, 2),
		   C(integ_stray_quiet, 1), C(replay_unchecked, 1) } },
	/* 51-53: segments of flows the daemon does not know */
	{ "unknown flow", E_INTEG, V4, false, .s = { DATA(0, 10, "1D", .kills = 1) },
	  .cnt = { C(integ_unknown, 1) } },
	{ "unknown flow, no socket: closed-port answer", E_INTEG, V6, true, .kill_ret = -ENOENT,
	  .s = { DATA(0, 10, "1D", .kills = 1, .answers = 1) },
	  .cnt = { C(integ_unknown, 1), C(rst_sent, 1) } },
	{ "unknown flow RST: dropped, nothing reset", E_INTEG, V4, false,
	  .s = { BARE(TCP_RST | ACK, "1D") }, .cnt = { C(integ_unknown, 1) } },
	/* 54-58: bare segments and SYNs in a pending flow */
	{ "integrity: the client's RST ends the flow", E_INTEG, V4, false,
	  .s = { SYN("1I"), DATA(0, 8, ""), BARE(TCP_RST, "3A 2D", .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(replay_unchecked, 1) } },
	/* A FIN waits with the bytes it follows; one inside them fails the flow. */
	{ "integrity: a FIN at the range's end waits with the bytes", E_INTEG, V6, true,
	  .s = { SYN("1I"), DATA(0, 8, ""), BARE(FIN | ACK, "", .off = 16), DATA(8, 8, "2A 4A 3A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "integrity: a FIN inside the range resets", E_INTEG, V4, true,
	  .s = { SYN("1I"), DATA(0, 8, ""), BARE(FIN | ACK, "3D 2D", .off = 8, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_early_fin, 1) } },
	{ "integrity: data and a FIN that ends inside the range", E_INTEG, V6, false,
	  .s = { SYN("1I"), DATA(0, 15, "2D", .flags = FIN, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_early_fin, 1), C(replay_unchecked, 1) } },
	{ "integrity: a FIN inside the verified range before the service's ACK", E_INTEG, V4,
	  true,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), BARE(FIN | ACK, "3D", .off = 15, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_early_fin, 1) } },
	{ "integrity: data with a FIN past the range waits and passes", E_INTEG, V4, false,
	  .s = { SYN("1I"), DATA(8, 12, "", .flags = FIN), DATA(0, 8, "3A 2A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(replay_unchecked, 1) } },
	/*
	 * Our REPEAT comes back through the knock rule (the mark rule sets the
	 * conntrack bit and lets the SYN go on); so does a retransmission.  The
	 * flow's entry carries the bit: accepted, not verified or counted again.
	 */
	{ "integrity: our REPEAT returns, and retransmitted SYNs", E_INTEG, V4, true,
	  .s = { SYN("1I"), SYN("2K"), DATA(0, 8, ""), SYN("4I"), SYN("5K"),
		 DATA(8, 8, "3A 6A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	/* A new TSval gives a new ISN: before any data the flow starts over with it. */
	{ "integrity: a SYN with another ISN before data restarts", E_INTEG_N, V6, true,
	  .s = { SYN("1I"), SYN("2I", .tsval = 1000), DATA(0, 64, "3A") },
	  .cnt = { C(syn_accepted, 2), C(integ_ok, 1) } },
	{ "integrity: a restarted flow gets a new deadline", E_INTEG, V4, true,
	  .s = { SYN("1I"), TICK(5, ""), SYN("2I", .tsval = 1000), TICK(5, ""),
		 TICK(5, "", .kills = 1) },
	  .cnt = { C(syn_accepted, 2), C(integ_timeout, 1) } },
	/* 59-61: short captures */
	{ "integrity short capture inside the window", E_INTEG, V4, false,
	  .s = { SYN("1I"), DATA(0, 4, ""), DATA(4, 12, "3D 2D", CAP(2), .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_short_capture, 1), C(replay_unchecked, 1) } },
	{ "integrity short capture beyond the window is fine", E_INTEG, V6, false,
	  .s = { SYN("1I"), DATA(16, 100, "", CAP(10)), DATA(0, 100, "3A 2A", CAP(16)) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(replay_unchecked, 1) } },
	{ "integrity short capture, no socket", E_INTEG, V6, false, .kill_ret = -ENOENT,
	  .s = { SYN("1I"), DATA(0, 16, "2D", CAP(15), .kills = 1, .answers = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_short_capture, 1), C(rst_sent, 1),
		   C(replay_unchecked, 1) } },
	/* 62-64: several flows */
	{ "integrity: two flows interleaved", E_INTEG, V4, true,
	  .s = { SYN("1I"), SYN("2I", .who = OTHER_SPORT), DATA(0, 8, ""),
		 DATA(0, 16, "4A", .who = OTHER_SPORT), DATA(8, 8, "3A 5A") },
	  .cnt = { C(syn_accepted, 2), C(integ_ok, 2) } },
	{ "integrity: pending table full, the oldest unverified flow makes room", E_INTEG, V6,
	  false, .max_flows = 1,
	  .s = { SYN("1I"), SYN("2I", .who = OTHER_SPORT, .kills = 1, VICTIM(0)),
		 DATA(0, 16, "3D"), DATA(0, 16, "4A", .who = OTHER_SPORT) },
	  .cnt = { C(syn_accepted, 2), C(integ_evicted, 1), C(integ_unknown, 1),
		   C(integ_ok, 1), C(integ_stray_quiet, 1), C(replay_unchecked, 2) } },
	{ "integrity: pending table full of verified flows: refused", E_INTEG, V4, false,
	  .max_flows = 1,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), SYN("3D", .who = OTHER_SPORT, .answers = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(flows_full, 1), C(rst_sent, 1),
		   C(replay_unchecked, 2) } },
	{ "integrity: wrong ISN, then its data", E_INTEG, V4, false,
	  .s = { SYN("1D", .how = ISN_BAD, .answers = 1), DATA(0, 16, "2D", .kills = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_sent, 1), C(integ_unknown, 1) } },
	/*
	 * 65: a copy of the SYN reordered behind the data must not flag the
	 * verified flow for checking again: its later segments would be held
	 * until the timeout reset it.  Conntrack has the connection
	 * established: the copy is dropped.
	 */
	{ "integrity: a late SYN copy after the release", E_INTEG, V6, true,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), SYN("3D", .ct = TCP_CONNTRACK_ESTABLISHED),
		 DATA(16, 100, "4A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_syn_live, 1) } },
	/*
	 * Nor once the flow is done or forgotten: a copy of the SYN (captured,
	 * and sent from the client's address, which replay protection lets
	 * through) finds conntrack's entry established and is dropped, whatever
	 * the daemon still remembers; the first SYN was NEWSYN (conntrack's
	 * new: not asked).  After the connection, a SYN starts a new flow.
	 */
	{ "integrity: a copy of the SYN after the flow was forgotten is dropped", E_INTEG, V4,
	  true,
	  .s = { SYN("1I", .code = CODE_NEWSYN), DATA(0, 16, "2A"),
		 REPLY(16, 0, "3R", .unflags = 1), TICK(2, ""),
		 SYN("4D", .ct = TCP_CONNTRACK_ESTABLISHED),
		 SYN("5D", .ct = TCP_CONNTRACK_CLOSE_WAIT) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_syn_live, 2) } },
	{ "integrity: ... and while it is done, even with another ISN", E_INTEG_N, V6, true,
	  .s = { SYN("1I", .code = CODE_NEWSYN), DATA(0, 64, "2A"),
		 REPLY(64, 0, "3R", .unflags = 1),
		 SYN("4D", .tsval = 1000, .ct = TCP_CONNTRACK_FIN_WAIT) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_syn_live, 1) } },
	{ "integrity: a knock of an established connection before its data", E_INTEG, V4,
	  true,
	  .s = { SYN("1I"), BARE(ACK, "2A"),
		 SYN("3D", .tsval = 1000, .ct = TCP_CONNTRACK_ESTABLISHED) },
	  .cnt = { C(syn_accepted, 1), C(integ_syn_live, 1) } },
	{ "integrity: another ISN after data came: dropped", E_INTEG, V4, true,
	  .s = { SYN("1I"), SYN("2K"), DATA(0, 8, ""), SYN("4D", .tsval = 1000),
		 DATA(8, 8, "3A 5A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_syn_live, 1) } },
	{ "integrity: another ISN once the service answered (SYN_RECV): dropped", E_INTEG_N, V6,
	  true,
	  .s = { SYN("1I"), SYN("2K"), SYN("3D", .tsval = 1000, .ct = TCP_CONNTRACK_SYN_RECV),
		 DATA(0, 64, "4A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_syn_live, 1) } },
	/*
	 * Whatever conntrack says (it may have lost the entry: the SYN comes
	 * NEWSYN): once the service may hold the first ISN, another is dropped.
	 */
	{ "integrity: another ISN after the first was let through: dropped", E_INTEG, V4, true,
	  .s = { SYN("1I"), SYN("2K"), SYN("3D", .tsval = 1000, .code = CODE_NEWSYN),
		 DATA(0, 16, "4A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_syn_live, 1) } },
	{ "integrity: a SYN while the verified bytes are unacknowledged: dropped", E_INTEG, V6,
	  true,
	  .s = { SYN("1I"), SYN("2K"), DATA(0, 16, "3A"), SYN("4D", .code = CODE_NEWSYN),
		 SYN("5D", .tsval = 1000, .code = CODE_NEWSYN), DATA(0, 16, "6A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_syn_live, 2) } },
	/*
	 * The same SYN once the connection is over (conntrack replaced the
	 * entry): a new connection, checked from the start; its SYN goes
	 * through the flag rule like the first.
	 */
	{ "integrity: the same SYN after the connection is over starts anew", E_INTEG, V4, true,
	  .s = { SYN("1I"), SYN("2K"), DATA(0, 16, "3A"), REPLY(16, 0, "4R", .unflags = 1),
		 SYN("5I"), SYN("6K"), DATA(0, 16, "7A") },
	  .cnt = { C(syn_accepted, 2), C(integ_ok, 2) } },
	{ "integrity: after the connection (TIME_WAIT) a SYN starts a new flow", E_INTEG, V6,
	  true,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), REPLY(16, 0, "3R", .unflags = 1),
		 SYN("4I", .tsval = 1000, .ct = TCP_CONNTRACK_TIME_WAIT), DATA(0, 16, "5A") },
	  .cnt = { C(syn_accepted, 2), C(integ_ok, 2) } },
	{ "integrity: conntrack cannot be asked: the knock is refused", E_INTEG, V4, true,
	  .ct_ret = -EIO,
	  .s = { SYN("1D", .answers = 1), SYN("2I", .code = CODE_NEWSYN, .who = OTHER_SPORT) },
	  .cnt = { C(integ_ct_error, 1), C(rst_sent, 1), C(syn_accepted, 1) } },
	/*
	 * Urgent data: the receiving TCP takes the urgent byte out of the
	 * stream, and the reader gets one from past the range in its place.
	 * Pointers into the range reset the flow, read either way (RFC 793:
	 * the byte before seq + urg; RFC 1122: the byte at it); a bare ACK can
	 * carry one before any data; past the range, or without URG, it is no
	 * matter for the check.
	 */
	{ "integrity: URG into the range, in the range's segment", E_INTEG, V4, true,
	  .s = { SYN("1I"), DATA(0, 16, "2D", .flags = TCP_URG, .urg = 6, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_urgent, 1) } },
	{ "integrity: URG on the handshake's ACK, pointing into the range", E_INTEG, V6, false,
	  .s = { SYN("1I"), BARE(ACK | TCP_URG, "2D", .urg = 16, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_urgent, 1), C(replay_unchecked, 1) } },
	{ "integrity: URG at 17 means byte 16 or 17: 16 is the range's last", E_INTEG, V4, false,
	  .s = { SYN("1I"), DATA(0, 8, ""), BARE(ACK | TCP_URG, "3D 2D", .urg = 16, .off = 0,
		 .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_urgent, 1), C(replay_unchecked, 1) } },
	{ "integrity: URG past the range, and a pointer without URG, pass", E_INTEG, V6, true,
	  .s = { SYN("1I"), DATA(0, 16, "2A", .flags = TCP_URG, .urg = 18),
		 DATA(16, 8, "3A", .urg = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "integrity: URG into the verified range before the service's ACK", E_INTEG, V6, false,
	  .s = { SYN("1I"), DATA(0, 16, "2A"),
		 DATA(0, 16, "3D", .flags = TCP_URG, .urg = 1, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_urgent, 1), C(replay_unchecked, 1) } },
	{ "integrity: URG after the service's ACK: done, it passes", E_INTEG, V4, true,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), REPLY(16, 0, "3R", .unflags = 1),
		 DATA(0, 20, "4A", .flags = TCP_URG, .urg = 3) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	/*
	 * Segments of a flow the daemon does not know: the first resets the
	 * connection, the next ones only drop, for a while; each source may
	 * cost STRAY_SOURCE_RATE resets a second.
	 */
	{ "stray segments: one reset per flow", E_INTEG, V4, true,
	  .s = { RUN(0, 10, 5, "1D 2D 3D 4D 5D", .kills = 1), TICK(STRAY_QUIET - 1, ""),
		 DATA(0, 10, "6D"), TICK(1, ""), DATA(0, 10, "7D", .kills = 1) },
	  .cnt = { C(integ_unknown, 7), C(integ_stray_quiet, 5) } },
	{ "stray segments: the service's data too", E_INTEG, V6, false,
	  .s = { REPLY(0, 30, "1D", .kills = 1), REPLY(0, 30, "2D") },
	  .cnt = { C(integ_unknown, 2), C(integ_stray_quiet, 1) } },
	/* The verified range until the service acknowledges it */
	{ "integrity: a verified copy again passes; other bytes inside reset", E_INTEG, V6, true,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), DATA(0, 16, "3A"),
		 DATA(8, 100, "4D", .flip = 3, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_conflict, 1) } },
	{ "integrity: an RST before the service's ACK ends no checking", E_INTEG, V6, false,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), BARE(TCP_RST | ACK, "3A", .off = 4000),
		 DATA(0, 16, "4D", .flip = 1, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_conflict, 1), C(replay_unchecked, 1) } },
	{ "integrity: other bytes past the range pass", E_INTEG, V4, true,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), DATA(16, 10, "3A", .flip = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "integrity: the service's ACK of the whole range ends the checking", E_INTEG, V4, true,
	  .s = { SYN("1I"), REPLY(0, 0, "2R"), DATA(0, 16, "3A"), REPLY(8, 0, "4R"),
		 REPLY(16, 0, "5R", .unflags = 1), DATA(0, 16, "6A", .flip = 1),
		 REPLY(16, 0, "7R") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "integrity: the bit cannot be cleared for now: the checks go on", E_INTEG, V4, true,
	  .unflag_ret = -EIO,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), REPLY(16, 0, "3R", .unflags = 1),
		 DATA(0, 16, "4D", .flip = 1, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_unflag_error, 1),
		   C(integ_conflict, 1) } },
	{ "integrity: conntrack has no entry to clear: done", E_INTEG, V6, false,
	  .unflag_ret = -ENOENT,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), REPLY(16, 0, "3R", .unflags = 1),
		 DATA(0, 16, "4A", .flip = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(replay_unchecked, 1) } },
	{ "integrity: verified but never acknowledged: reset at the timeout", E_INTEG_N, V6, false,
	  .s = { SYN("1I"), DATA(0, 64, "2A"), TICK(10, "", .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_unacked, 1) } },
	/* A reload fails the flows still waiting; verified ones go on being checked */
	{ "integrity: a reload resets waiting flows, not verified ones", E_INTEG, V4, true,
	  .s = { SYN("1I"), SYN("2I", .who = OTHER_SPORT), DATA(0, 16, "3A", .who = OTHER_SPORT),
		 DATA(0, 8, ""), RELOAD("4D", .kills = 1),
		 DATA(0, 16, "5D", .who = OTHER_SPORT, .flip = 2, .kills = 1) },
	  .cnt = { C(syn_accepted, 2), C(integ_ok, 1), C(integ_reload, 1),
		   C(integ_conflict, 1) } },
	/* The service's first bytes wait for the client's */
	{ "integrity: the banner is held until the bytes verify", E_INTEG, V4, true,
	  .s = { SYN("1I"), REPLY(0, 20, ""), DATA(0, 16, "3A 2R") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "integrity: wrong bytes: the banner is dropped too", E_INTEG, V6, false,
	  .s = { SYN("1I"), REPLY(0, 20, ""), REPLY(0, 20, ""),
		 DATA(0, 16, "2D 3D 4D", .flip = 9, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_fail, 1), C(replay_unchecked, 1) } },
	{ "integrity: the service's RST ends a waiting flow", E_INTEG, V4, false,
	  .s = { SYN("1I"), DATA(0, 8, ""), REPLY(0, 0, "3R 2D", .flags = TCP_RST, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(replay_unchecked, 1) } },
	{ "integrity: the service's data for a flow we do not know", E_INTEG, V6, true,
	  .s = { REPLY(0, 0, "1R"), REPLY(0, 0, "2R", .flags = TCP_RST),
		 REPLY(0, 30, "3D", .kills = 1) },
	  .cnt = { C(integ_unknown, 1) } },
	{ "integrity: data in the SYN (TCP Fast Open) is no knock", E_INTEG, V4, true,
	  .s = { SYN("1D", .len = 20, .answers = 1), SYN("2I") },
	  .cnt = { C(integ_syn_data, 1), C(rst_sent, 1), C(syn_accepted, 1) } },
	/* Segments of no connection conntrack knows; segments it calls invalid */
	{ "no connection: an ACK to a plain entry gets the closed-port answer", E_KNOCK, V4, true,
	  .s = { BARE(ACK, "1D", .answers = 1, .code = CODE_NOCONN),
		 BARE(ACK | TCP_SYN, "2D", .answers = 1, .code = CODE_NOCONN) },
	  .cnt = { C(noconn, 2), C(rst_sent, 2) } },
	{ "no connection, integrity entry, no flow: the closed-port answer", E_INTEG, V4, false,
	  .s = { BARE(ACK, "1D", .answers = 1, .code = CODE_NOCONN),
		 BARE(ACK, "2R", .who = OTHER_SPORT, .code = CODE_NEWSYN) },
	  .cnt = { C(noconn, 2), C(rst_sent, 1), C(nat_refusals, 1) } },
	{ "an ACK scan of a protected port: refused through the nat rule", E_KNOCK, V4, true,
	  .s = { BARE(ACK, "1R", .code = CODE_NEWSYN, .mark = 0x42),
		 BARE(ACK | TCP_PSH, "2R", .code = CODE_NEWSYN, .who = OTHER_SPORT) },
	  .cnt = { C(noconn, 2), C(nat_refusals, 2) } },
	{ "conntrack lost a waiting integrity flow, a new entry took the ACK: reset", E_INTEG, V4,
	  true,
	  .s = { SYN("1I"), DATA(0, 8, ""), BARE(ACK, "3D 2D", .code = CODE_NEWSYN, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_lost, 1) } },
	{ "conntrack lost a waiting integrity flow: reset", E_INTEG, V6, true,
	  .s = { SYN("1I"), DATA(0, 8, ""), DATA(8, 8, "3D 2D", .code = CODE_NOCONN, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_lost, 1) } },
	{ "conntrack lost a verified integrity flow: reset", E_INTEG, V4, true,
	  .s = { SYN("1I"), DATA(0, 16, "2A"), BARE(ACK, "3D", .code = CODE_NOCONN, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(integ_lost, 1) } },
	{ "invalid segments of no flow being checked pass to TCP", E_INTEG, V6, true,
	  .s = { BARE(ACK, "1R", .code = CODE_INVALID, .mark = 0x5),
		 DATA(0, 16, "2R", .code = CODE_INVALID) } },
	{ "an invalid segment of a waiting flow is held and checked", E_INTEG, V4, false,
	  .s = { SYN("1I"), DATA(0, 8, "", .code = CODE_INVALID), DATA(8, 8, "2R 3A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(replay_unchecked, 1) } },
	/*
	 * An invalid segment comes without its entry: the daemon asks whether
	 * the entry still has the bit (an early-dropped entry, with midstream
	 * pickup off, turns the client's segments invalid, and the service's
	 * would leave unflagged).
	 */
	{ "an invalid segment of a waiting flow whose entry is gone: reset", E_INTEG, V4, true,
	  .s = { SYN("1I"), BARE(ACK, "2D", .code = CODE_INVALID, .ct_lost = true, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_lost, 1) } },
	{ "... conntrack cannot tell: dropped, the flow goes on", E_INTEG, V6, true,
	  .ct_ret = -EIO,
	  .s = { SYN("1I", .code = CODE_NEWSYN), DATA(0, 8, "2D", .code = CODE_INVALID),
		 DATA(0, 16, "3A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1), C(hold_cap, 1) } },
	{ "an invalid segment of a flow reset lately is dropped, not passed", E_INTEG, V4, true,
	  .s = { SYN("1I"), DATA(0, 16, "2D", .flip = 3, .kills = 1),
		 DATA(0, 16, "3D", .code = CODE_INVALID), TICK(STRAY_QUIET, ""),
		 DATA(0, 16, "4R", .code = CODE_INVALID) },
	  .cnt = { C(syn_accepted, 1), C(integ_fail, 1), C(integ_unknown, 1),
		   C(integ_stray_quiet, 1) } },
	{ "an invalid segment with other bytes fails the flow", E_INTEG, V6, false,
	  .s = { SYN("1I"), DATA(0, 16, "2D", .flip = 4, .code = CODE_INVALID, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_fail, 1), C(replay_unchecked, 1) } },
	/* Guessing: refused knocks per source, and the optional penalty */
	{ "guessing: a source crosses the threshold, no penalty", E_KNOCK, V4, true,
	  .guess_threshold = 2,
	  .s = { SYN("1D", .how = ISN_BAD, .answers = 1), SYN("2D", .how = ISN_BAD, .answers = 1),
		 SYN("3K") },
	  .cnt = { C(syn_refused, 2), C(rst_sent, 2), C(guessers, 1), C(syn_accepted, 1) } },
	/* ... and so is another address of the same IPv6 /64, until it is over. */
	{ "guessing: with a penalty even a valid knock is refused, unverified", E_NATIVE, V6, true,
	  .guess_threshold = 2, .guess_penalty = 30,
	  .s = { SYN("1D", .how = ISN_BAD, .answers = 1), SYN("2D", .how = ISN_BAD, .answers = 1),
		 SYN("3D", .answers = 1), SYN("4D", .who = OTHER_SRC | OTHER_SPORT, .answers = 1),
		 TICK(30, ""), SYN("5K", .tsval = 7) },
	  .cnt = { C(syn_refused, 2), C(rst_sent, 4), C(guessers, 1), C(penalized, 2),
		   C(syn_accepted, 1) } },
	{ "guessing: failed integrity bytes count too", E_INTEG, V4, false, .guess_threshold = 1,
	  .s = { SYN("1I"), DATA(0, 16, "2D", .flip = 1, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_fail, 1), C(guessers, 1), C(replay_unchecked, 1) } },
	/* What one source holds, and what the queue holds */
	{ "hold cap: one source's share", E_INTEG_MAX, V4, false, .maxlen = 1024,
	  .s = { SYN("1I"), SYN("2I", .who = OTHER_SPORT), SYN("3I", .who = OTHER_SPORT2),
		 RUN(0, 1, 32, ""), RUN(0, 1, 32, "", .who = OTHER_SPORT),
		 DATA(0, 1, "68D", .who = OTHER_SPORT2) },
	  .cnt = { C(syn_accepted, 3), C(source_cap, 1), C(replay_unchecked, 3) } },
	{ "hold cap: the queue's share, the oldest unverified flow goes", E_INTEG_MAX, V6, true,
	  .maxlen = 64,
	  .s = { SYN("1I"), SYN("2I", .who = OTHER_SRC, .tsval = 1000), RUN(0, 1, 20, ""),
		 RUN(0, 1, 12, "", .who = OTHER_SRC),
		 DATA(12, 1, "3-22D", .who = OTHER_SRC, .kills = 1, VICTIM(0)),
		 TICK(10, "23-35D", .kills = 1, VICTIM(OTHER_SRC)) },
	  .cnt = { C(syn_accepted, 2), C(integ_evicted, 1), C(integ_timeout, 1) } },
	/*
	 * public: a knock for a destination a NAT outside rewrote to this one
	 * (pub_list).  Own destination first, then each public one; an address
	 * alone means the entry's port.
	 */
	{ "public: knock for the public address, v4", E_PUB, V4, true,
	  .s = { SYN("1K", .dial = DIAL_PUB), SYN("2K", .dial = DIAL_OWN, .who = OTHER_SPORT) },
	  .cnt = { C(syn_accepted, 2) } },
	{ "public: knock for public address:2200 (a port forward), v4", E_PUB, V4, false,
	  .s = { SYN("1K", .dial = DIAL_PUB_PORT) },
	  .cnt = { C(syn_accepted, 1), C(replay_unchecked, 1) } },
	{ "public: the public address with a port not in the list", E_PUB, V4, true,
	  .s = { SYN("1D", .dial = DIAL_PUB_OTHER_PORT, .answers = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_sent, 1) } },
	{ "public: an address not in the list", E_PUB, V6, true,
	  .s = { SYN("1D", .dial = DIAL_NOT_PUB, .answers = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_sent, 1) } },
	{ "public: v6, address alone and [address]:2200", E_PUB, V6, true,
	  .s = { SYN("1K", .dial = DIAL_PUB), SYN("2K", .dial = DIAL_PUB_PORT, .who = OTHER_SPORT) },
	  .cnt = { C(syn_accepted, 2) } },
	{ "public: native v4, second key, forwarded port", E_PUB_N, V4, true,
	  .s = { SYN("1K", .dial = DIAL_PUB_PORT), SYN("2K", .dial = DIAL_PUB, .who = OTHER_SPORT),
		 SYN("3D", .dial = DIAL_PUB_OTHER_PORT, .who = OTHER_SPORT2, .answers = 1) },
	  .cnt = { C(syn_accepted, 2), C(syn_refused, 1), C(rst_sent, 1) } },
	{ "public: native v6, epoch e-1", E_PUB_N, V6, false,
	  .s = { SYN("1K", .dial = DIAL_PUB, .how = ISN_PREV) }, .cnt = { C(syn_accepted, 1) } },
	{ "public: a wrong ISN is refused whatever it was meant for", E_PUB_N, V4, true,
	  .s = { SYN("1D", .dial = DIAL_PUB, .how = ISN_BAD, .answers = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_sent, 1) } },
	{ "public: the other family's public destination (NAT64)", E_PUB, V4, true,
	  .s = { SYN("1K", .dial = DIAL_PUB_OTHER_FAMILY) }, .cnt = { C(syn_accepted, 1) } },
	{ "public: replay of a public knock from another source", E_PUB, V4, true,
	  .s = { SYN("1K", .dial = DIAL_PUB_PORT),
		 SYN("2D", .dial = DIAL_PUB_PORT, .who = OTHER_SRC, .answers = 1),
		 SYN("3K", .dial = DIAL_PUB_PORT) },
	  .cnt = { C(syn_accepted, 2), C(replay_refused, 1), C(rst_sent, 1) } },
	{ "public: replay of a public knock from another source, native v6", E_PUB_N, V6, true,
	  .s = { SYN("1K", .dial = DIAL_PUB),
		 SYN("2D", .dial = DIAL_PUB, .who = OTHER_SRC | OTHER_SPORT, .answers = 1) },
	  .cnt = { C(syn_accepted, 1), C(replay_refused, 1), C(rst_sent, 1) } },
	{ "public: integrity, knock mode, forwarded port, v4", E_PUB_INTEG, V4, true,
	  .s = { SYN("1I", .dial = DIAL_PUB_PORT), DATA(0, 8, ""), DATA(8, 8, "2A 3A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	/* Native IH covers the destination: the bytes verify only with the dialled one. */
	{ "public: integrity, native, public address, v6", E_PUB_INTEG_N, V6, true,
	  .s = { SYN("1I", .dial = DIAL_PUB), DATA(0, 64, "2A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "public: integrity, native, forwarded port, v4", E_PUB_INTEG_N, V4, false,
	  .s = { SYN("1I", .dial = DIAL_PUB_PORT), DATA(0, 64, "2A") },
	  .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "public: integrity, native, own destination still", E_PUB_INTEG_N, V4, true,
	  .s = { SYN("1I"), DATA(0, 64, "2A") }, .cnt = { C(syn_accepted, 1), C(integ_ok, 1) } },
	{ "public: integrity, native, tampered bytes", E_PUB_INTEG_N, V4, true,
	  .s = { SYN("1I", .dial = DIAL_PUB_PORT), DATA(0, 64, "2D", .flip = 5, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_fail, 1) } },
	{ "public: integrity, knock mode, tampered bytes, v6", E_PUB_INTEG, V6, false,
	  .s = { SYN("1I", .dial = DIAL_PUB), DATA(0, 16, "2D", .flip = 16, .kills = 1) },
	  .cnt = { C(syn_accepted, 1), C(integ_fail, 1), C(replay_unchecked, 1) } },
	/* A SYN retransmitted for another destination before data: the flow takes it. */
	{ "public: integrity, a restart dialled elsewhere checks with the new one", E_PUB_INTEG_N,
	  V6, true,
	  .s = { SYN("1I", .dial = DIAL_PUB), SYN("2I", .dial = DIAL_PUB_PORT, .tsval = 1000),
		 DATA(0, 64, "3A") },
	  .cnt = { C(syn_accepted, 2), C(integ_ok, 1) } },
	/*
	 * SYNs without a timestamp.  Native: the nonce form makes two clients
	 * two knocks, a replay of one from elsewhere is still refused, and the
	 * classic form (older clients) is still a knock, replay-checked as
	 * ever.  Knock mode: one ISN for every such client, so no replay check.
	 * timestamps "required": refused after the same verification.
	 */
	{ "no TS, native: two clients in the nonce form both get in", E_NATIVE, V4, false,
	  .s = { SYN("1K", .how = ISN_NONCE, .tsval = 1),
		 SYN("2K", .how = ISN_NONCE, .tsval = 2, .who = OTHER_SRC) },
	  .cnt = { C(syn_accepted, 2), C(syn_nonce, 2) } },
	{ "no TS, native: a nonce-form knock replayed from elsewhere", E_NATIVE, V6, false,
	  .s = { SYN("1K", .how = ISN_NONCE, .tsval = 0xee),
		 SYN("2D", .how = ISN_NONCE, .tsval = 0xee, .who = OTHER_SRC, .answers = 1),
		 SYN("3K", .how = ISN_NONCE, .tsval = 0xee, .who = OTHER_SPORT) },
	  .cnt = { C(syn_accepted, 2), C(syn_nonce, 2), C(replay_refused, 1), C(rst_sent, 1) } },
	{ "no TS, native: the classic form, same source reconnects", E_NATIVE, V6, false,
	  .s = { SYN("1K"), SYN("2K", .who = OTHER_SPORT) }, .cnt = { C(syn_accepted, 2) } },
	{ "no TS, native: the classic form from another source is a replay", E_NATIVE, V4, false,
	  .s = { SYN("1K"), SYN("2D", .who = OTHER_SRC, .answers = 1) },
	  .cnt = { C(syn_accepted, 1), C(replay_refused, 1), C(rst_sent, 1) } },
	{ "with TS, native: the nonce form is no knock", E_NATIVE, V4, true,
	  .s = { SYN("1D", .how = ISN_NONCE, .tsval = 5, .answers = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_sent, 1) } },
	{ "no TS, native integrity: no nonce form", E_INTEG_N, V6, false,
	  .s = { SYN("1D", .how = ISN_NONCE, .tsval = 5, .answers = 1) },
	  .cnt = { C(syn_refused, 1), C(rst_sent, 1) } },
	{ "no TS, knock mode: another client's same knock gets in too", E_KNOCK, V4, false,
	  .s = { SYN("1K"), SYN("2K", .who = OTHER_SRC) },
	  .cnt = { C(syn_accepted, 2), C(replay_unchecked, 2) } },
	{ "timestamps required: a valid knock without one is refused", E_TSREQ, V4, false,
	  .s = { SYN("1D", .answers = 1), SYN("2D", .how = ISN_NONCE, .who = OTHER_SPORT,
					       .answers = 1) },
	  .cnt = { C(ts_missing, 2), C(rst_sent, 2) } },
	{ "timestamps required: with one it gets in", E_TSREQ, V6, true, .s = { SYN("1K") },
	  .cnt = { C(syn_accepted, 1) } },
	{ "timestamps required: a bad one without is just refused", E_TSREQ, V6, false,
	  .s = { SYN("1D", .how = ISN_BAD, .answers = 1) }, .cnt = { C(syn_refused, 1),
								 C(rst_sent, 1) } },
	/*
	 * A refused IPv6 packet the kernel discards after the input hook (a
	 * routing header with segments left): a closed port never answers it,
	 * so it goes on, checksum spoiled, for the kernel to discard; no RST.
	 */
	{ "v6 refused SYN the kernel discards: left to it, spoiled", E_KNOCK, V6, true,
	  .s = { SYN("1S", .how = ISN_BAD, .rthdr = true) },
	  .cnt = { C(syn_refused, 1), C(v6_discarded, 1) } },
	{ "v6 FIN probe the kernel discards: left to it, spoiled", E_KNOCK, V6, true,
	  .s = { STRAY(TCP_FIN, "1S", .rthdr = true) },
	  .cnt = { C(stray, 1), C(v6_discarded, 1) } },
	{ "v6 discarded SYN, on_fail drop: dropped, silent", E_DROP, V6, true,
	  .s = { SYN("1D", .how = ISN_BAD, .rthdr = true) }, .cnt = { C(syn_refused, 1) } },
	{ "v6 valid knock with a routing header: let through (the kernel decides)", E_KNOCK, V6,
	  true, .s = { SYN("1K", .rthdr = true) }, .cnt = { C(syn_accepted, 1) } },
};

/* ------------------------------------------------------------------ */
/* Running a scenario */

struct flow {
	bool known;
	uint32_t isn;
};

struct run {
	const struct scenario *sc;
	unsigned no;
	bool split;			/* one queue per set (see FAKE_Q) */
	struct nfqueue *qof[MAX_IDS];	/* the queue each packet came from */
	struct server s;
	struct door door;		/* every packet's way in, and its verdicts' way out */
	struct replay replay;
	uint32_t next_id;
	struct flow flows[8];		/* by flow_of(who) */
	unsigned verdicts[MAX_IDS];
	uint32_t marks[MAX_IDS];	/* each packet's own mark */
	uint8_t sent[BUF_LEN];		/* the last packet sent, as it was sent */
	size_t sent_len, sent_tcp_off;
};

static const uint8_t *src_of(int family, unsigned who)
{
	if (family == AF_INET)
		return who & OTHER_SRC ? other4 : client4;
	return who & OTHER_SRC ? other6 : client6;
}

static const uint8_t *dst_of(int family, unsigned who)
{
	if (family == AF_INET)
		return who & OTHER_DST ? elsewhere4 : server4;
	return who & OTHER_DST ? elsewhere6 : server6;
}

static uint16_t sport_of(unsigned who)
{
	return who & OTHER_SPORT2 ? SPORT + 2 : who & OTHER_SPORT ? SPORT + 1 : SPORT;
}

/* The client flow a step belongs to: source address and port. */
static unsigned flow_of(unsigned who)
{
	return (who & (OTHER_SRC | OTHER_SPORT)) | (who & OTHER_SPORT2 ? 4 : 0);
}

static uint16_t dport_of(const struct scenario *sc, unsigned who)
{
	return who & OTHER_PORT ? 9999 : entries[sc->entry].port;
}

/* The ISN the client computes for this SYN (or a wrong one, as asked). */
static uint32_t client_isn(const struct scenario *sc, const struct step *st, uint32_t tsval,
			   uint64_t wall)
{
	const struct entry_spec *es = &entries[sc->entry];
	const struct kg_key *key = &conf.keyring.keys[es->client_key];
	static uint8_t payload[INTEG_MAX_LEN];
	struct isn_input in = { .family = sc->family, .dst = dst_of(sc->family, st->who),
				.port = dport_of(sc, st->who), .tsval = tsval };
	uint64_t e = isn_epoch(wall, es->window);
	uint32_t isn;
	int fam = st->dial == DIAL_PUB_OTHER_FAMILY ? (sc->family == AF_INET ? AF_INET6 : AF_INET)
						     : sc->family;

	if (st->dial != DIAL_OWN) {
		in.family = fam;
		in.dst = st->dial == DIAL_NOT_PUB ? (fam == AF_INET ? notpub4 : notpub6)
						  : (fam == AF_INET ? pub4 : pub6);
		in.port = st->dial == DIAL_PUB_PORT || st->dial == DIAL_PUB_OTHER_FAMILY ? 2200
			  : st->dial == DIAL_PUB_OTHER_PORT				   ? 2201
											   : es->port;
	}
	for (uint32_t i = 0; i < es->integrity_len; i++)
		payload[i] = stream(i);
	switch (st->how) {
	case ISN_PREV:
		e--;
		break;
	case ISN_NEXT:
		e++;
		break;
	case ISN_FAR:
		e += 2;
		break;
	case ISN_OTHER_TSVAL:
		in.tsval ^= 1;
		break;
	default:
		break;
	}
	if (st->how == ISN_NONCE)
		return isn_native_nonce(key, &in, e, (uint8_t)st->tsval);
	isn = isn_compute(key, es->mode, &in, e, payload, es->integrity_len);
	return st->how == ISN_BAD ? isn ^ 0x80000000u : isn;
}

/*
 * Is the packet last given with a verdict the one last sent, but for its TCP
 * checksum, which no ones'-complement sum can take for the old one?
 */
static bool spoiled(const struct run *r)
{
	size_t csum = r->sent_tcp_off + 16;

	if (memcmp(fake_verdict_pkt, r->sent, csum) != 0 ||
	    memcmp(fake_verdict_pkt + csum + 2, r->sent + csum + 2, r->sent_len - csum - 2) != 0)
		return false;
	return fake_verdict_pkt[csum] == (r->sent[csum] ^ 0x55) &&
	       fake_verdict_pkt[csum + 1] == (r->sent[csum + 1] ^ 0x55);
}

/* Checks the verdicts of events[from..nevents) against want ("2L 4A 3A", "2-33D"). */
static void check_verdicts(struct run *r, unsigned step, size_t from, const char *want)
{
	const char *p = want;
	size_t e = from;
	char at[32];

	snprintf(at, sizeof(at), "scenario %u step %u", r->no, step);
	while (*p) {
		unsigned a, b;
		char code;
		char *end;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		a = (unsigned)strtoul(p, &end, 10);
		b = a;
		if (*end == '-')
			b = (unsigned)strtoul(end + 1, &end, 10);
		code = *end;
		p = end + 1;
		for (unsigned id = a; id <= b; id++) {
			while (e < nevents && events[e].kind != EV_VERDICT)
				e++;
			if (e == nevents) {
				CHECK(0, "%s: verdict %u%c missing", at, id, code);
				return;
			}
			const struct event *ev = &events[e++];
			enum nfqueue_verdict v = code == 'D' ? NFQUEUE_DROP
					       : code == 'I' ? NFQUEUE_REPEAT
							     : NFQUEUE_ACCEPT;

			CHECK_EQ_U(ev->id, id, "%s: verdict order", at);
			CHECK_EQ_U(ev->v, v, "%s: verdict for %u", at, id);
			CHECK(ev->q == r->qof[id < MAX_IDS ? id : 0], "%s: verdict for %u on its queue",
			      at, id);
			if (code == 'I') {
				CHECK(ev->has_mark, "%s: %u marked", at, id);
				CHECK_EQ_U(ev->mark,
					   marks_own(&conf.marks, r->marks[id]) | conf.marks.integ,
					   "%s: INTEG mark for %u", at, id);
			} else if (code == 'K') {
				CHECK(ev->has_mark, "%s: %u marked", at, id);
				CHECK_EQ_U(ev->mark,
					   marks_own(&conf.marks, r->marks[id]) | conf.marks.accepted,
					   "%s: ACCEPTED mark for %u", at, id);
			} else if (code == 'R') {
				CHECK(ev->has_mark, "%s: %u marked", at, id);
				CHECK_EQ_U(ev->mark, marks_own(&conf.marks, r->marks[id]),
					   "%s: our bits cleared for %u", at, id);
			} else if (code == 'S') {
				CHECK(ev->has_mark, "%s: %u marked", at, id);
				CHECK_EQ_U(ev->mark, marks_own(&conf.marks, r->marks[id]),
					   "%s: our bits cleared for %u", at, id);
				CHECK(ev->has_pkt && ev->len == r->sent_len && spoiled(r),
				      "%s: %u goes on as sent, its TCP checksum spoiled", at, id);
			} else {
				/* Plain verdicts leave the packet's mark alone. */
				CHECK(!ev->has_mark, "%s: %u unmarked", at, id);
			}
			/* The packet itself goes on, changed, only as S says. */
			CHECK(ev->has_pkt == (code == 'S'), "%s: %u %s", at, id,
			      code == 'S' ? "replaced" : "not replaced");
		}
	}
	while (e < nevents && events[e].kind != EV_VERDICT)
		e++;
	CHECK(e == nevents, "%s: extra verdict for %u", at, e < nevents ? events[e].id : 0);
}

static unsigned queue_index(const struct nfqueue *q)
{
	return q == FAKE_PQ ? 1 : q == FAKE_DQ ? 2 : 0;
}

/* Aborts and answers of events[from..): how many, for which flow, and in what order. */
static void check_side_effects(struct run *r, unsigned step, size_t from, const struct step *st,
			       bool have_pkt, uint32_t pkt_seq)
{
	const struct scenario *sc = r->sc;
	size_t alen = sc->family == AF_INET ? 4 : 16;
	unsigned kills = 0, answers = 0, unflags = 0;
	unsigned victim = st->victim ? st->victim - 1 : st->who;
	const struct nfqueue *unflushed[3] = { NULL, NULL, NULL };	/* by queue */
	char at[32];

	snprintf(at, sizeof(at), "scenario %u step %u", r->no, step);
	for (size_t i = from; i < nevents; i++) {
		const struct event *ev = &events[i];

		switch (ev->kind) {
		case EV_VERDICT:
			unflushed[queue_index(ev->q)] = ev->q;
			r->verdicts[ev->id < MAX_IDS ? ev->id : 0]++;
			CHECK(ev->q == r->qof[ev->id < MAX_IDS ? ev->id : 0],
			      "%s: verdict for %u on its queue", at, ev->id);
			break;
		case EV_FLUSH:
			unflushed[queue_index(ev->q)] = NULL;
			break;
		case EV_HELD:
			break;
		case EV_KILL:
			kills++;
			/* Verdicts first: the aborted socket must find nothing left to read. */
			CHECK(!unflushed[0] && !unflushed[1] && !unflushed[2],
			      "%s: verdicts flushed before the abort", at);
			CHECK_EQ_U(ev->family, sc->family, "%s: kill family", at);
			if (st->anykill)
				break;
			CHECK(memcmp(ev->local, dst_of(sc->family, 0), alen) == 0,
			      "%s: kill local address", at);
			CHECK(memcmp(ev->remote, src_of(sc->family, victim), alen) == 0,
			      "%s: kill remote address", at);
			CHECK_EQ_U(ev->lport, entries[sc->entry].port, "%s: kill lport", at);
			CHECK_EQ_U(ev->rport, sport_of(victim), "%s: kill rport", at);
			break;
		case EV_UNFLAG:
			unflags++;
			CHECK_EQ_U(ev->family, sc->family, "%s: unflag family", at);
			CHECK(memcmp(ev->local, dst_of(sc->family, 0), alen) == 0 &&
				      memcmp(ev->remote, src_of(sc->family, st->who), alen) == 0,
			      "%s: unflag addresses", at);
			CHECK_EQ_U(ev->lport, entries[sc->entry].port, "%s: unflag lport", at);
			CHECK_EQ_U(ev->rport, sport_of(st->who), "%s: unflag rport", at);
			/* Only our bit comes off, nothing is set. */
			CHECK(ev->mark == 0 && ev->mask == conf.marks.ct_integ, "%s: unflag bit", at);
			break;
		case EV_GET:
		case EV_CREATE:
		case EV_DELETE:
		case EV_INTENT:
			/* Lookups are counted (fake_ct_gets); the client's calls never come. */
			CHECK(ev->kind == EV_GET, "%s: only conntrack lookups of the client's calls", at);
			break;
		case EV_ANSWER:
			answers++;
			CHECK(have_pkt, "%s: an answer needs a packet", at);
			CHECK_EQ_U(ev->seq, pkt_seq, "%s: answers this packet", at);
			CHECK_EQ_U(ev->indev, INDEV, "%s: answer indev", at);
			CHECK_EQ_U(ev->now, r->s.mono, "%s: answer clock", at);
			CHECK(memcmp(ev->remote, src_of(sc->family, st->who), alen) == 0,
			      "%s: answer to the sender", at);
			break;
		}
	}
	CHECK_EQ_U(kills, st->kills, "%s: sockets aborted", at);
	CHECK_EQ_U(answers, st->answers, "%s: closed-port answers", at);
	CHECK_EQ_U(unflags, st->unflags, "%s: conntrack bits cleared", at);
}

/*
 * Is p, queued to set, the server's (door.h)?  Its rule's way, and from
 * postrouting the service's side of an integrity flow.
 */
static bool server_takes(const struct server *s, enum conf_qset set,
			 const struct nfqueue_packet *p)
{
	enum door_way way = door_classify(&s->conf->marks, set, p->hook, p->mark);
	struct pkt_view v;

	if (way == DOOR_SERVER)
		return true;
	return way == DOOR_SERVER_REPLY && pkt_parse(p->data, p->caplen, &v) == PKT_OK &&
	       server_is_reply(s, p, &v);
}

/*
 * The queue a packet of step st comes from (nftplan.h): SYNs, probes and
 * segments of no connection to a protected port the SYN set's, the rest
 * (a flow's segments, either way) the data set's.
 */
static enum conf_qset set_of(const struct step *st)
{
	if (st->k == K_SYN || st->k == K_STRAY || st->k == K_BAD ||
	    (st->k == K_BARE && (st->code == CODE_NOCONN || st->code == CODE_NEWSYN)))
		return QSET_SYN;
	return QSET_DATA;
}

static struct nfqueue *queue_of(const struct run *r, const struct step *st)
{
	static struct nfqueue *const split[QSET_MAX] = {
		[QSET_SYN] = FAKE_Q, [QSET_PROBE] = FAKE_PQ, [QSET_DATA] = FAKE_DQ,
	};

	return r->split ? split[set_of(st)] : FAKE_Q;
}

/* Sends one packet of step st; returns its seq. */
static uint32_t send_packet(struct run *r, const struct step *st, uint32_t off)
{
	static uint8_t buf[BUF_LEN], payload[BUF_LEN];
	const struct scenario *sc = r->sc;
	struct flow *f = &r->flows[flow_of(st->who)];
	uint32_t tsval = sc->ts ? TSVAL0 + st->tsval : 0;
	struct nfqueue_packet p;
	struct spec s = {
		.family = sc->family, .src = src_of(sc->family, st->who),
		.dst = dst_of(sc->family, st->who), .sport = sport_of(st->who),
		.dport = dport_of(sc, st->who), .ack = 0x5000, .ts = sc->ts, .tsval = tsval,
		.payload = payload,
	};
	size_t len, tcp_off, caplen;

	switch (st->k) {
	case K_SYN:
		s.flags = TCP_SYN | st->flags;
		s.seq = client_isn(sc, st, tsval, r->s.wall);
		s.ack = 0;
		s.plen = st->len;
		for (size_t i = 0; i < s.plen; i++)
			payload[i] = (uint8_t)i;
		/* A valid SYN the daemon drops is no ISN the client's data follows. */
		if (st->how != ISN_BAD && !strchr(st->want, 'D')) {
			f->known = true;
			f->isn = s.seq;
		}
		break;
	case K_REPLY:
		/* From the service, acknowledging st->off bytes of the client's. */
		s.src = dst_of(sc->family, st->who);
		s.dst = src_of(sc->family, st->who);
		s.sport = dport_of(sc, st->who);
		s.dport = sport_of(st->who);
		s.flags = ACK | (st->len ? TCP_PSH : 0) | st->flags;
		s.seq = 0x70000001;
		s.ack = (f->known ? f->isn : 0x1000) + 1 + st->off;
		s.plen = st->len;
		for (uint32_t i = 0; i < st->len; i++)
			payload[i] = (uint8_t)(0x53 + i);
		break;
	case K_DATA:
	case K_RUN:
		s.flags = ACK | TCP_PSH | st->flags;
		s.seq = (f->known ? f->isn : 0x1000) + 1 + off;
		s.plen = st->len;
		for (uint32_t i = 0; i < st->len; i++)
			payload[i] = stream(off + i);
		if (st->flip)
			payload[st->flip - 1] ^= 0x20;
		break;
	default:		/* K_BARE, K_STRAY, K_BAD */
		s.flags = st->k == K_BAD ? TCP_SYN : st->flags;
		s.seq = (f->known ? f->isn : 0x1000) + 1 + off;
		if (!(s.flags & ACK))
			s.ack = 0;
		break;
	}
	s.urg = st->urg;
	len = build(buf, &s, &tcp_off);
	if (st->rthdr && sc->family == AF_INET6) {
		/* A type 4 routing header, one segment left, between IPv6 and TCP. */
		static const uint8_t rh[8] = { 6, 0, 4, 1 };
		static uint8_t tail[BUF_LEN];

		memcpy(tail, buf + 40, len - 40);
		memcpy(buf + 48, tail, len - 40);
		memcpy(buf + 40, rh, sizeof(rh));
		buf[6] = 43;
		pb_put16(buf + 4, (uint16_t)(len - 40 + sizeof(rh)));
		len += sizeof(rh);
		tcp_off += sizeof(rh);
	}
	caplen = st->cap ? len - s.plen + (st->cap - 1u) : len;
	switch (st->k == K_BAD ? st->how : 0) {
	case BAD_SHORT:
		caplen = 10;
		break;
	case BAD_DOFF:
		buf[tcp_off + 12] = 4 << 4;
		break;
	case BAD_UDP:
		buf[sc->family == AF_INET ? 9 : 6] = 17;
		break;
	case BAD_FRAG:
		pb_put16(buf + 6, 0x2000);		/* MF: a first fragment */
		break;
	default:
		break;
	}

	p = (struct nfqueue_packet){
		.id = ++r->next_id, .hw_proto = sc->family == AF_INET ? 0x0800 : 0x86dd,
		.hook = st->input ? NF_INET_LOCAL_IN : NF_INET_PRE_ROUTING, .mark = st->mark,
		.indev = INDEV, .data = buf, .caplen = caplen, .wirelen = len,
	};
	if (st->k == K_REPLY) {
		/* What the postrouting rule queues: the service's segment, marked. */
		p.hook = NF_INET_POST_ROUTING;
		p.indev = 0;
		p.mark = marks_own(&conf.marks, st->mark) | conf.marks.reply;
		CHECK(server_takes(&r->s, set_of(st), &p), "scenario %u: the server takes its reply",
		      r->no);
	}
	if (st->code != CODE_NONE)
		p.mark = marks_own(&conf.marks, st->mark) |
			 (st->code == CODE_INVALID  ? conf.marks.invalid
			  : st->code == CODE_NOCONN ? conf.marks.noconn
						    : conf.marks.newsyn);
	if (st->input)
		CHECK(server_takes(&r->s, set_of(st), &p),
		      "scenario %u: the server takes an input probe", r->no);
	if (p.id < MAX_IDS) {
		r->marks[p.id] = p.mark;
		r->qof[p.id] = queue_of(r, st);
	}
	memcpy(r->sent, buf, len);
	r->sent_len = len;
	r->sent_tcp_off = tcp_off;
	fake_ct_state = st->ct;
	fake_ct_flagged = st->k != K_SYN && !st->ct_lost;
	door_packet(&r->door, set_of(st), r->qof[p.id < MAX_IDS ? p.id : 0], &p);
	return s.seq;
}

static void check_counters(struct run *r)
{
	const struct scenario *sc = r->sc;
	const struct server_counters *c = &r->s.cnt;
	uint64_t refused;

	for (int i = 0; i < SC_MAX; i++) {
		unsigned want = 0;

		for (size_t k = 0; k < MAX_CNT && sc->cnt[k].n; k++)
			if (sc->cnt[k].c == (enum server_counter)i)
				want = sc->cnt[k].n;
		CHECK_EQ_U(c->c[i], want, "scenario %u (%s): counter %s", r->no, sc->name,
			   server_counter_name((enum server_counter)i));
	}
	for (int i = 1; i < PKT_DROP_MAX; i++)
		CHECK_EQ_U(c->pkt_drop[i], i == (int)sc->drop, "scenario %u: pkt_drop %s", r->no,
			   pkt_drop_name((enum pkt_drop)i));
	refused = c->c[SC_syn_refused] + c->c[SC_replay_refused] + c->c[SC_ts_missing] +
		  c->c[SC_flows_full] + c->c[SC_integ_syn_data] + c->c[SC_penalized] +
		  c->c[SC_integ_ct_error];
	for (size_t i = 0; i < NENTRIES; i++) {
		CHECK_EQ_U(c->port_accepted[i], i == sc->entry ? c->c[SC_syn_accepted] : 0,
			   "scenario %u: port_accepted[%zu]", r->no, i);
		CHECK_EQ_U(c->port_refused[i], i == sc->entry ? refused : 0,
			   "scenario %u: port_refused[%zu]", r->no, i);
	}
}

static void run_scenario(unsigned no, const struct scenario *sc, bool split)
{
	struct nfqueue *dq = split ? FAKE_DQ : FAKE_Q;
	static struct run r;
	uint32_t saved_flows = conf.max_flows, saved_flow_bytes = conf.hold_flow_bytes;
	uint32_t saved_bytes = conf.hold_bytes, saved_maxlen = conf.queue_maxlen;
	unsigned step = 0;

	memset(&r, 0, sizeof(r));
	r.sc = sc;
	r.no = no;
	r.split = split;
	nevents = 0;
	fake_held_last = 0;
	fake_kill_ret = sc->kill_ret;
	fake_raw_ret = sc->raw_ret;
	fake_unflag_ret = sc->unflag_ret;
	fake_get_ret = sc->ct_ret;
	fake_ct_state = 0;
	if (sc->max_flows)
		conf.max_flows = sc->max_flows;
	if (sc->hold_flow_bytes)
		conf.hold_flow_bytes = sc->hold_flow_bytes;
	if (sc->hold_bytes)
		conf.hold_bytes = sc->hold_bytes;
	if (sc->maxlen)
		conf.queue_maxlen = sc->maxlen;
	conf.guess_threshold = sc->guess_threshold;
	conf.guess_penalty = sc->guess_penalty;
	conf.closed_ports = sc->closed_daemon ? CLOSED_DAEMON : CLOSED_KERNEL;
	if (replay_init(&r.replay, sc->replay_max ? sc->replay_max : 1024) < 0 ||
	    server_init(&r.s, &conf, &r.replay, sc->no_sk ? NULL : FAKE_SK, FAKE_RS, FAKE_CT, 1) < 0) {
		CHECK(0, "scenario %u: init", no);
		return;
	}
	r.s.mono = MONO0;
	r.s.wall = WALL0;
	if (door_init(&r.door, &conf, &r.s, NULL) < 0) {
		CHECK(0, "scenario %u: door", no);
		return;
	}
	r.door.hold_q = split ? FAKE_DQ : NULL;
	fake_ct_script = true;
	fake_ct_integ = conf.marks.ct_integ;

	for (size_t i = 0; i < MAX_STEPS && sc->s[i].k != K_END; i++) {
		const struct step *st = &sc->s[i];
		size_t from = nevents;
		uint32_t seq = 0;
		bool have_pkt = true;

		step = (unsigned)i + 1;
		switch (st->k) {
		case K_RELOAD:
			/* The same configuration again, as a SIGHUP would publish it. */
			door_set_conf(&r.door, dq, &conf, 1);
			have_pkt = false;
			break;
		case K_TICK:
			r.s.mono += st->off;
			r.s.wall += st->off;
			door_tick(&r.door, dq);
			have_pkt = false;
			break;
		case K_RUN:
			for (uint32_t k = 0; k < st->n; k++)
				seq = send_packet(&r, st, st->off + k * st->len);
			break;
		default:
			seq = send_packet(&r, st, st->off);
			break;
		}
		check_verdicts(&r, step, from, st->want);
		check_side_effects(&r, step, from, st, have_pkt, seq);
		/* The queue adapter batches verdicts only when it knows nothing is held. */
		CHECK_EQ_U(fake_held_last, r.s.pending.acct.pkts,
			   "scenario %u step %u: held count told to the queue", no, step);
	}
	check_counters(&r);

	/* Let every pending flow time out: then each packet has had its one verdict. */
	size_t from = nevents;
	r.s.mono += 100000;
	door_tick(&r.door, dq);
	for (size_t i = from; i < nevents; i++)
		if (events[i].kind == EV_VERDICT)
			r.verdicts[events[i].id < MAX_IDS ? events[i].id : 0]++;
	for (uint32_t id = 1; id <= r.next_id && id < MAX_IDS; id++)
		CHECK_EQ_U(r.verdicts[id], 1, "scenario %u (%s): verdicts for packet %u", no,
			   sc->name, id);
	CHECK_EQ_U(r.verdicts[0], 0, "scenario %u: verdicts for unknown ids", no);
	CHECK_EQ_U(r.s.pending.acct.pkts, 0, "scenario %u: nothing held at the end", no);
	CHECK_EQ_U(r.s.pending.acct.sources.count, 0, "scenario %u: no source accounted at the end",
		   no);
	CHECK_EQ_U(r.s.pending.held_bytes, 0, "scenario %u: no bytes held at the end", no);
	CHECK_EQ_U(r.s.pending.table.count, 0, "scenario %u: no pending flow at the end", no);
	CHECK_EQ_U(fake_misuse, 0, "scenario %u: adapters called as expected", no);

	door_free(&r.door);
	server_free(&r.s);
	replay_free(&r.replay);
	conf.max_flows = saved_flows;
	conf.hold_flow_bytes = saved_flow_bytes;
	conf.hold_bytes = saved_bytes;
	conf.queue_maxlen = saved_maxlen;
}

/*
 * Which queued packets are the server's (door.h): told apart by the rule
 * that queued them, its hook and queue set, and at postrouting the reply
 * code from an integrity port.  Each row's packet comes on the set its
 * rule queues to (nftplan.h): input_closed's probes on the SYN set (a
 * protected port's) or the probe set (a closed port's), the client's
 * incoming segments on the data set.
 */
static void check_dispatch(void)
{
	static const struct {
		uint32_t hook;
		enum conf_qset set;
		uint8_t flags;
		bool from_service, reply_code;
		bool want;
		const char *what;
	} rows[] = {
		{ NF_INET_PRE_ROUTING, QSET_SYN, TCP_SYN, false, false, true, "a SYN at prerouting" },
		{ NF_INET_PRE_ROUTING, QSET_DATA, TCP_ACK, false, false, true, "a segment at prerouting" },
		{ NF_INET_LOCAL_IN, QSET_PROBE, TCP_SYN, false, false, true, "input_closed's SYN" },
		{ NF_INET_LOCAL_IN, QSET_PROBE, TCP_FIN, false, false, true, "input_closed's FIN probe" },
		{ NF_INET_LOCAL_IN, QSET_SYN, TCP_FIN, false, false, true,
		  "input_closed's FIN probe of a protected port" },
		{ NF_INET_LOCAL_IN, QSET_SYN, 0, false, false, true,
		  "input_closed's NULL probe of a protected port" },
		{ NF_INET_LOCAL_IN, QSET_DATA, TCP_ACK, false, false, false, "the client's incoming segment" },
		{ NF_INET_LOCAL_IN, QSET_DATA, TCP_RST, false, false, false, "the client's incoming RST" },
		{ NF_INET_LOCAL_IN, QSET_DATA, TCP_SYN | TCP_ACK, false, false, false,
		  "the client's incoming SYN-ACK" },
		{ NF_INET_POST_ROUTING, QSET_DATA, TCP_ACK, true, true, true, "the service's integrity segment" },
		{ NF_INET_POST_ROUTING, QSET_DATA, TCP_ACK, true, false, false, "a service segment, no code" },
		{ NF_INET_POST_ROUTING, QSET_DATA, TCP_ACK, false, true, false,
		  "the reply code from a port without integrity" },
		{ NF_INET_LOCAL_OUT, QSET_SYN, TCP_SYN, false, false, false, "the client's SYN" },
		{ NF_INET_LOCAL_OUT, QSET_DATA, TCP_ACK, true, true, false, "output, even with the code" },
		{ NF_INET_FORWARD, QSET_SYN, TCP_SYN, false, false, false, "a forwarded SYN" },
	};
	struct server s = { .conf = &conf };
	uint8_t buf[BUF_LEN];
	size_t tcp_off;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool svc = rows[i].from_service;
		size_t len = build(buf, &(struct spec){
			.family = AF_INET, .src = svc ? server4 : client4, .dst = svc ? client4 : server4,
			.sport = svc ? entries[E_INTEG].port : SPORT,
			.dport = svc ? SPORT : entries[E_INTEG].port, .seq = 1, .ack = 1,
			.flags = rows[i].flags }, &tcp_off);
		struct nfqueue_packet p = {
			.id = 1, .hw_proto = 0x0800, .hook = rows[i].hook, .data = buf,
			.caplen = (uint32_t)len, .wirelen = (uint32_t)len,
			.mark = rows[i].reply_code ? conf.marks.reply : 0,
		};

		if (!svc && rows[i].reply_code)
			p.data[tcp_off] ^= 0x40;	/* sport: not a protected port */
		CHECK(server_takes(&s, rows[i].set, &p) == rows[i].want, "dispatch %zu: %s is %s", i + 1,
		      rows[i].what, rows[i].want ? "the server's" : "the client's");
	}
}

/*
 * Every SYN decided costs the same ISN computations: a refused knock for
 * any entry (whatever its keys, candidate destinations and epochs) and a
 * closed port's probe cost the budget, the most any entry needs per mode
 * (counted here from the entries, apart from server_budget_of), with a
 * timestamp and without (the native nonce form doubles the work); the same
 * from a source serving a guessing penalty costs none, whatever the port.
 */
static void check_budget(void)
{
	static struct server s;
	static struct door d;
	static struct replay rp;
	static uint8_t buf[BUF_LEN];
	uint64_t most[2][2] = { { 0, 0 }, { 0, 0 } };	/* [no timestamp][mode] */
	uint64_t top[2] = { 0, 0 };			/* [no timestamp] the most of all */
	size_t standin[2] = { 0, 0 };			/* the first entry with top's */
	uint64_t calls[NENTRIES + 1][4];		/* isn_verify_syn() calls per SYN */
	size_t tcp_off;

	for (size_t i = 0; i < NENTRIES; i++) {
		const struct entry_spec *es = &entries[i];
		bool native = es->mode == KG_MODE_NATIVE;

		for (int nots = 0; nots <= 1; nots++) {
			/* Keys x candidates x epochs, x 2 for the nonce form without TS. */
			uint64_t n = es->nkeys *
				     (1 + (es->pub ? sizeof(pub_list) / sizeof(pub_list[0]) : 0)) *
				     (native && es->window ? 3 : 1) *
				     (native && nots && !es->integrity_len ? 2 : 1);

			if (n > most[nots][es->mode])
				most[nots][es->mode] = n;
			if (n > top[nots]) {
				top[nots] = n;
				standin[nots] = i;
			}
		}
	}
	if (replay_init(&rp, 64) < 0 ||
	    server_init(&s, &conf, &rp, FAKE_SK, FAKE_RS, FAKE_CT, 1) < 0 ||
	    door_init(&d, &conf, &s, NULL) < 0) {
		CHECK(0, "budget: init");
		return;
	}
	s.mono = MONO0;
	s.wall = WALL0;
	CHECK(most[0][0] > 0 && most[0][1] > 0, "budget: entries of both modes");
	for (int pen = 0; pen <= 1; pen++) {
		for (size_t i = 0; i <= NENTRIES; i++) {
			for (int k = 0; k < 4; k++) {
				/* i == NENTRIES: a closed port's probe (prerouting_closed). */
				int fam = k % 2 ? AF_INET6 : AF_INET;
				bool ts = k < 2;
				uint16_t port = i < NENTRIES ? entries[i].port : 9999;
				struct spec sp = { .family = fam, .src = src_of(fam, 0),
						   .dst = dst_of(fam, 0), .sport = SPORT, .dport = port,
						   .seq = 0x01020304, .flags = TCP_SYN, .ts = ts,
						   .tsval = TSVAL0 };
				size_t len = build(buf, &sp, &tcp_off);
				struct nfqueue_packet p = {
					.id = 1, .hook = NF_INET_PRE_ROUTING, .indev = INDEV,
					.mark = conf.marks.newsyn, .data = buf, .caplen = len,
					.wirelen = len };
				uint64_t before = s.isn_work, calls0 = s.isn_calls;

				nevents = 0;
				door_packet(&d, QSET_SYN, FAKE_Q, &p);
				calls[i][k] = s.isn_calls - calls0;
				CHECK_EQ_U(s.isn_work - before,
					   pen ? 0 : most[!ts][0] + most[!ts][1],
					   "budget: %s SYN to port %u, IPv%d, %s%s",
					   i < NENTRIES ? "a refused" : "a closed port's", port,
					   fam == AF_INET ? 4 : 6, ts ? "timestamp" : "no timestamp",
					   pen ? ", penalized source" : "");
			}
		}
		/*
		 * Not only as many MACs: a closed port's SYN makes the calls a
		 * refused knock to the stand-in entry makes (its keys,
		 * candidates and epochs), so both run the same code.
		 */
		for (int k = 0; k < 4 && !pen; k++)
			CHECK_EQ_U(calls[NENTRIES][k], calls[standin[k >= 2]][k],
				   "budget: a closed port's SYN makes the verification calls of a "
				   "refused knock to entry %zu (the stand-in), IPv%d, %s",
				   standin[k >= 2] + 1, k % 2 ? 6 : 4,
				   k < 2 ? "timestamp" : "no timestamp");
		/* The same source guesses on until it serves a penalty. */
		conf.guess_threshold = 1;
		conf.guess_penalty = 60;
		door_set_conf(&d, FAKE_Q, &conf, 1);
		for (int k = 0; k < 4 && !pen; k++)
			server_note_refusal(&s, AF_INET, src_of(AF_INET, 0));
		for (int k = 0; k < 4 && !pen; k++)
			server_note_refusal(&s, AF_INET6, src_of(AF_INET6, 0));
	}
	conf.guess_threshold = 0;
	conf.guess_penalty = 0;
	door_free(&d);
	server_free(&s);
	replay_free(&rp);
}

int main(void)
{
	if (sodium_init() < 0 || setup_conf() < 0) {
		printf("not ok: setup\n");
		return 1;
	}
	log_init(1, LOG_ERR, "test_server");
	check_dispatch();
	check_budget();
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run_scenario((unsigned)i + 1, &scenarios[i], false);
	/* Again with a queue per set: every verdict goes to its packet's queue. */
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run_scenario((unsigned)(2000 + i + 1), &scenarios[i], true);
	/* Again with other mark bits (rules.mark_mask, rules.ct_mark_bit). */
	CHECK(marks_make(0x0000ff00, 0x1, &conf.marks) == 0, "other marks");
	CHECK_EQ_U(conf.marks.integ, 0x100, "codes from the mask's lowest bit");
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run_scenario((unsigned)(1000 + i + 1), &scenarios[i], false);
	conf_free(&conf);
	return unit_done("server");
}
