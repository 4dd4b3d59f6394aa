/*
 * test_conf.c - the schema loader on text (conf_load_text()), conf_validate()
 * on structs built here, the match module (prefixes and per-packet lookups),
 * and the base64 key decoder.
 *
 * Load rows are whole small configs in memory with the exact first message
 * they must produce.  conf_validate() is pure, so every validate row starts
 * from one valid struct, changes one thing and states how many errors it
 * must produce and what the first one says; the validator only looks at key
 * lengths, so it needs no keyring.  The
 * ownership and mode rule of key and configuration files is pure as well
 * (file_rule_check() on a struct stat), so other owners need no chown here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>

#include <sodium.h>

#include "config/conf.h"
#include "config/keys.h"
#include "config/match.h"
#include "unit.h"

enum { K32, K19, K64 };	/* key indexes of the base config */

/*
 * The base: keys "k32" (32 bytes), "k19" (19) and "k64" (64); one native
 * protect entry and one knock entry.  Lines are set as a loaded file would.
 */
static void base(struct conf *c)
{
	static const struct {
		const char *name;
		size_t len;
	} keys[] = { { "k32", 32 }, { "k19", 19 }, { "k64", 64 } };

	conf_defaults(c);
	snprintf(c->path, sizeof(c->path), "t.conf");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(c->keys[i].name, sizeof(c->keys[i].name), "%s", keys[i].name);
		c->keys[i].len = keys[i].len;
		c->keys[i].line = 10 + (int)i;
	}
	c->nkeys = 3;

	c->nprotect = 1;
	c->protect[0] = (struct conf_protect){
		.line = 20, .lines = { [EL_PORT] = 21, [EL_KEYS] = 22 }, .port = 22,
		.mode = KG_MODE_NATIVE, .nkeys = 1, .keys = { K32 }, .on_fail = ON_FAIL_RESET,
		.window = 30, .replay = true, .replay_ttl = 90,
	};
	c->nknock = 1;
	c->knock[0] = (struct conf_knock){
		.line = 30, .lines = { [EL_DST] = 31 }, .port = 22, .mode = KG_MODE_NATIVE,
		.key = K32, .window = 30,
	};
	prefix_parse("192.0.2.10", &c->knock[0].dst);
}

/* A second protect entry like the first, on another line. */
static struct conf_protect *add_protect(struct conf *c, uint16_t port)
{
	struct conf_protect *p = &c->protect[c->nprotect++];

	*p = c->protect[0];
	p->line = 40;
	p->lines[EL_PORT] = 41;
	p->port = port;
	return p;
}

static struct conf_knock *add_knock(struct conf *c, const char *dst, uint16_t port)
{
	struct conf_knock *k = &c->knock[c->nknock++];

	*k = c->knock[0];
	k->line = 50;
	k->lines[EL_DST] = 51;
	k->port = port;
	prefix_parse(dst, &k->dst);
	return k;
}

static void ok_base(struct conf *c)
{
	(void)c;
}

static void queue_last(struct conf *c)
{
	c->queue_num = 65535;
}

static void queue_past(struct conf *c)
{
	c->queue_num = 65535;
	c->queue_count = 2;
	c->lines[CL_QUEUE_COUNT] = 3;
}

static void queue_past_num_line(struct conf *c)
{
	c->queue_num = 65535;
	c->queue_count = 2;
	c->lines[CL_QUEUE_NUM] = 2;
}

static void queue_15_2(struct conf *c)
{
	c->queue_num = 65534;
	c->queue_count = 2;
}

static void hold_flow_above(struct conf *c)
{
	c->hold_bytes = 4096;
	c->hold_flow_bytes = 8192;
	c->lines[CL_HOLD_BYTES] = 7;
}

static void hold_flow_equal(struct conf *c)
{
	c->hold_bytes = 4096;
	c->hold_flow_bytes = 4096;
}

static void key_len0(struct conf *c)
{
	c->keys[K19].len = 0;
}

static void key_len65(struct conf *c)
{
	c->keys[K19].len = 65;
}

static void key_broken(struct conf *c)
{
	c->keys[K19].len = 0;
	c->keys[K19].name[0] = '\0';
	c->keys[K19].broken = true;
}

static void key_dup(struct conf *c)
{
	snprintf(c->keys[K64].name, sizeof(c->keys[K64].name), "k32");
}

/* Gives the base n keys: k32, k19, k64 and then 32-byte keys x3, x4, ... */
static void many_keys(struct conf *c, size_t n)
{
	for (size_t i = 3; i < n && i < CONF_MAX_KEYS; i++) {
		snprintf(c->keys[i].name, sizeof(c->keys[i].name), "x%zu", i);
		c->keys[i].len = 32;
		c->keys[i].line = 10 + (int)i;
	}
	c->nkeys = n;
}

/* The protect entry names n keys, x3 and on; more than fit must not be read. */
static void entry_keys(struct conf *c, size_t n)
{
	many_keys(c, 3 + CONF_MAX_ENTRY_KEYS);
	c->protect[0].nkeys = n;
	for (int i = 0; i < CONF_MAX_ENTRY_KEYS; i++)
		c->protect[0].keys[i] = 3 + i;
}
static void nkeys_17(struct conf *c)
{
	entry_keys(c, 17);
}
static void nkeys_16(struct conf *c)
{
	entry_keys(c, 16);
}

static void key_index_neg(struct conf *c)
{
	c->protect[0].keys[0] = -1;
}

static void key_index_big(struct conf *c)
{
	c->knock[0].key = 3;
}

static void native_k19(struct conf *c)
{
	c->protect[0].keys[0] = K19;
}

static void native_k64_knock(struct conf *c)
{
	c->knock[0].key = K64;
}

static void knock_k19(struct conf *c)
{
	c->protect[0].mode = KG_MODE_KNOCK;
	c->protect[0].keys[0] = K19;
	c->protect[0].replay_ttl = 3600;
}

static void knock_window(struct conf *c)
{
	c->protect[0].mode = KG_MODE_KNOCK;
	c->protect[0].has_window = true;
	c->protect[0].lines[EL_WINDOW] = 25;
}

static void knock_window_client(struct conf *c)
{
	c->knock[0].mode = KG_MODE_KNOCK;
	c->knock[0].has_window = true;
}

static void native_window_set(struct conf *c)
{
	c->protect[0].has_window = true;
}

static void window_max(struct conf *c)
{
	c->protect[0].window = 86400;
	c->protect[0].replay_ttl = 259200;
}

static void ttl_89(struct conf *c)
{
	c->protect[0].replay_ttl = 89;
	c->protect[0].lines[EL_REPLAY_TTL] = 26;
}

static void ttl_window0(struct conf *c)
{
	c->protect[0].window = 0;
	c->protect[0].replay_ttl = 1;
}

/* 3 * window does not wrap in 32 bits: a struct built by hand may hold any window. */
static void ttl_window_huge(struct conf *c)
{
	c->protect[0].window = 0x60000000u;
	c->protect[0].replay_ttl = 604800;
}

static void ttl_knock_short(struct conf *c)
{
	c->protect[0].mode = KG_MODE_KNOCK;
	c->protect[0].replay_ttl = 1;
}

static void integ_2048(struct conf *c)
{
	c->protect[0].integrity_len = 2048;
}

static void integ_hold(struct conf *c)
{
	c->protect[0].integrity_len = 2048;
	c->hold_flow_bytes = 1024;
}

/* A second protect entry for port 22, with the addresses given (none: all). */
static void two_entries(struct conf *c, const char *a0, const char *b0, const char *b1)
{
	struct conf_protect *p = add_protect(c, 22);
	const char *b[] = { b0, b1 };

	if (a0) {
		c->protect[0].naddrs = 1;
		prefix_parse(a0, &c->protect[0].addrs[0]);
	}
	for (size_t i = 0; i < 2 && b[i]; i++)
		prefix_parse(b[i], &p->addrs[p->naddrs++]);
}

static void dup_port(struct conf *c)
{
	two_entries(c, NULL, NULL, NULL);
}

static void dup_port_noline(struct conf *c)
{
	two_entries(c, NULL, NULL, NULL);
	c->protect[1].lines[EL_PORT] = 0;
}

static void other_port(struct conf *c)
{
	add_protect(c, 23);
}

static void dup_port_disjoint(struct conf *c)
{
	two_entries(c, "10.0.0.0/8", "192.0.2.1", "2001:db8::1");
}

static void dup_port_overlap(struct conf *c)
{
	two_entries(c, "10.0.0.0/8", "192.0.2.1", "10.1.2.3");
}

static void dup_port_v4_v6(struct conf *c)
{
	two_entries(c, "0.0.0.0/0", "::/0", NULL);
}

static void dup_port_one_all(struct conf *c)
{
	two_entries(c, NULL, "2001:db8::1", NULL);
}

static void naddrs_17(struct conf *c)
{
	c->protect[0].naddrs = 17;
}

/* Public destination i of the protect entry, at line 23 + i. */
static void set_public(struct conf *c, size_t i, const char *text)
{
	struct conf_protect *p = &c->protect[0];

	if (dest_read(text, &p->pub[i].dst) != DEST_OK)
		CHECK(0, "public \"%s\" parses", text);
	p->pub[i].line = 23 + (int)i;
	if (p->npublic <= i)
		p->npublic = i + 1;
}

static void public_17(struct conf *c)
{
	for (size_t i = 0; i < CONF_MAX_PUBLIC; i++)
		set_public(c, i, "198.51.100.1");
	for (size_t i = 0; i < CONF_MAX_PUBLIC; i++)
		c->protect[0].pub[i].dst.addr[3] = (uint8_t)(i + 1);
	c->protect[0].npublic = CONF_MAX_PUBLIC + 1;
}

static void public_16(struct conf *c)
{
	public_17(c);
	c->protect[0].npublic = CONF_MAX_PUBLIC;
}

/* An address alone takes the entry's port (22): the same destination as ":22". */
static void public_dup_port(struct conf *c)
{
	set_public(c, 0, "198.51.100.1");
	set_public(c, 1, "198.51.100.1:2200");
	set_public(c, 2, "198.51.100.1:22");
}

static void public_dup_v6(struct conf *c)
{
	set_public(c, 0, "[2001:db8::1]:22");
	set_public(c, 1, "2001:db8::1");
}

static void public_dup_noline(struct conf *c)
{
	public_dup_v6(c);
	c->protect[0].pub[1].line = 0;
}

/* Other ports, other families, another entry's port: all distinct. */
static void public_distinct(struct conf *c)
{
	set_public(c, 0, "198.51.100.1");
	set_public(c, 1, "198.51.100.1:2200");
	set_public(c, 2, "[2001:db8::1]:2200");
	set_public(c, 3, "2001:db8::1");
	set_public(c, 4, "[c633:6401::]:22");	/* 198.51.100.1's bytes, as IPv6 */
	add_protect(c, 23);
	c->protect[1].npublic = 1;
	c->protect[1].pub[0] = c->protect[0].pub[0];
}

static void dup_knock(struct conf *c)
{
	add_knock(c, "192.0.2.10", 22);
}

static void dup_knock_noline(struct conf *c)
{
	add_knock(c, "192.0.2.10", 22)->lines[EL_DST] = 0;
}

static void dup_knock_masked(struct conf *c)
{
	prefix_parse("192.0.2.0/24", &c->knock[0].dst);
	add_knock(c, "192.0.2.99/24", 22);
}

static void knock_host_in_prefix(struct conf *c)
{
	add_knock(c, "192.0.2.0/24", 22);
}

static void knock_other_port(struct conf *c)
{
	add_knock(c, "192.0.2.10", 23);
}

static void knock_v6(struct conf *c)
{
	add_knock(c, "::ffff:192.0.2.10", 22);
}

static void key_twice(struct conf *c)
{
	c->protect[0].nkeys = 2;
	c->protect[0].keys[1] = K32;
}

static void two_errors(struct conf *c)
{
	c->protect[0].keys[0] = -1;
	c->knock[0].key = 3;
}

/* Full tables of valid entries, and a count one past them. */
static void nprotect_big(struct conf *c)
{
	for (int i = 1; i < CONF_MAX_PROTECT; i++)
		add_protect(c, (uint16_t)(1000 + i));
	c->nprotect = CONF_MAX_PROTECT + 1;
}
static void nknock_big(struct conf *c)
{
	for (int i = 1; i < CONF_MAX_KNOCK; i++)
		add_knock(c, "192.0.2.10", (uint16_t)(1000 + i));
	c->nknock = CONF_MAX_KNOCK + 1;
}
static void nkeys_big(struct conf *c)
{
	many_keys(c, CONF_MAX_KEYS + 1);
}

/* Gateway client role: `from` in the knock entry, at line 32. */
static void from_ok(struct conf *c)
{
	c->knock[0].nfrom = 2;
	c->knock[0].lines[EL_FROM] = 32;
	prefix_parse("10.0.0.0/24", &c->knock[0].from[0]);
	prefix_parse("fd00::/64", &c->knock[0].from[1]);
}
static void from_integrity(struct conf *c)
{
	from_ok(c);
	c->knock[0].integrity_len = 16;
}
static void from_integrity_noline(struct conf *c)
{
	from_integrity(c);
	c->knock[0].lines[EL_FROM] = 0;
}
static void from_other_family(struct conf *c)
{
	from_ok(c);
	c->knock[0].nfrom = 1;
	c->knock[0].from[0] = c->knock[0].from[1];
}
static void from_17(struct conf *c)
{
	from_ok(c);
	c->knock[0].nfrom = CONF_MAX_FROM + 1;
}

/*
 * Every single setting is the loader's (load_rows below); these are the
 * checks across settings and the bounds of a struct built by hand.
 */
static const struct validate_row {
	int id;
	void (*setup)(struct conf *c);
	size_t want_errors;
	const char *want_first;	/* exact first message when want_errors > 0 */
} validate_rows[] = {
	{ 1, ok_base, 0, NULL },
	{ 2, queue_last, 0, NULL },
	{ 3, queue_past, 1, "t.conf:3: queue.num 65535 + queue.count 2 - 1 is above the last queue number 65535" },
	{ 4, queue_15_2, 0, NULL },
	{ 5, queue_past_num_line, 1, "t.conf:2: queue.num 65535 + queue.count 2 - 1 is above the last queue number 65535" },
	{ 6, hold_flow_above, 1, "t.conf:7: limits.hold_flow_bytes 8192 exceeds limits.hold_bytes 4096" },
	{ 7, hold_flow_equal, 0, NULL },
	{ 8, key_len0, 1, "t.conf:11: key \"k19\" is 0 bytes; keys are 1..64 bytes" },
	{ 9, key_len65, 1, "t.conf:11: key \"k19\" is 65 bytes; keys are 1..64 bytes" },
	{ 10, key_broken, 0, NULL },
	{ 11, key_dup, 1, "t.conf:12: duplicate key name \"k32\" (first at line 10)" },
	{ 12, nkeys_17, 1, "t.conf:22: 17 keys in a protect entry; at most 16" },
	{ 13, nkeys_16, 0, NULL },
	{ 14, key_index_neg, 1, "t.conf:22: protect entry names key index -1, which does not exist" },
	{ 15, key_index_big, 1, "t.conf:30: knock entry names key index 3, which does not exist" },
	{ 16, native_k19, 1, "t.conf:22: key \"k19\" is 19 bytes; mode \"native\" needs exactly 32" },
	{ 17, native_k64_knock, 1, "t.conf:30: key \"k64\" is 64 bytes; mode \"native\" needs exactly 32" },
	{ 18, knock_k19, 0, NULL },
	{ 19, knock_window, 1, "t.conf:25: \"window\" applies only to mode \"native\"" },
	{ 20, knock_window_client, 1, "t.conf:30: \"window\" applies only to mode \"native\"" },
	{ 21, native_window_set, 0, NULL },
	{ 22, window_max, 0, NULL },
	{ 23, ttl_89, 1, "t.conf:26: replay_ttl 89 is below 3 windows (90 seconds) of mode \"native\"" },
	{ 24, ttl_window0, 0, NULL },
	{ 25, ttl_window_huge, 1, "t.conf:20: replay_ttl 604800 is below 3 windows (4831838208 seconds) of mode \"native\"" },
	{ 26, ttl_knock_short, 0, NULL },
	{ 27, integ_2048, 0, NULL },
	{ 28, integ_hold, 1, "t.conf:20: integrity_len 2048 exceeds limits.hold_flow_bytes 1024" },
	{ 29, dup_port, 1, "t.conf:41: duplicate protect entry for port 22 (first at line 20)" },
	{ 30, dup_port_noline, 1, "t.conf:40: duplicate protect entry for port 22 (first at line 20)" },
	{ 31, other_port, 0, NULL },
	{ 32, dup_port_disjoint, 0, NULL },
	{ 33, dup_port_overlap, 1, "t.conf:41: duplicate protect entry for port 22 (first at line 20)" },
	{ 34, dup_port_v4_v6, 0, NULL },
	{ 35, dup_port_one_all, 1, "t.conf:41: duplicate protect entry for port 22 (first at line 20)" },
	{ 36, naddrs_17, 1, "t.conf:20: 17 addresses in a protect entry; at most 16" },
	{ 37, dup_knock, 1, "t.conf:51: duplicate knock entry for 192.0.2.10 port 22 (first at line 30)" },
	{ 38, dup_knock_noline, 1, "t.conf:50: duplicate knock entry for 192.0.2.10 port 22 (first at line 30)" },
	{ 39, dup_knock_masked, 1, "t.conf:51: duplicate knock entry for 192.0.2.0/24 port 22 (first at line 30)" },
	{ 40, knock_host_in_prefix, 0, NULL },
	{ 41, knock_other_port, 0, NULL },
	{ 42, knock_v6, 0, NULL },
	{ 43, key_twice, 1, "t.conf:22: key \"k32\" is listed twice" },
	{ 44, two_errors, 2, "t.conf:22: protect entry names key index -1, which does not exist" },
	{ 45, nprotect_big, 1, "t.conf: 257 protect entries; at most 256" },
	{ 46, nknock_big, 1, "t.conf: 257 knock entries; at most 256" },
	{ 47, nkeys_big, 1, "t.conf: 257 keys; at most 256" },
	{ 48, public_17, 1, "t.conf:20: 17 public destinations in a protect entry; at most 16" },
	{ 49, public_16, 0, NULL },
	{ 50, public_dup_port, 1, "t.conf:25: public destination 198.51.100.1 port 22 is listed twice (first at line 23)" },
	{ 51, public_dup_v6, 1, "t.conf:24: public destination 2001:db8::1 port 22 is listed twice (first at line 23)" },
	{ 52, public_dup_noline, 1, "t.conf:20: public destination 2001:db8::1 port 22 is listed twice (first at line 23)" },
	{ 53, public_distinct, 0, NULL },
	{ 101, from_ok, 0, NULL },
	{ 102, from_integrity, 1, "t.conf:32: from needs integrity_len 0: the hosts a gateway knocks for cannot give it their first bytes" },
	{ 103, from_other_family, 1, "t.conf:32: from has no IPv4 prefix, and dst is IPv4: the entry would knock for no routed host" },
	{ 104, from_17, 1, "t.conf:30: 17 from prefixes in a knock entry; at most 16" },
	{ 105, from_integrity_noline, 1, "t.conf:30: from needs integrity_len 0: the hosts a gateway knocks for cannot give it their first bytes" },
};

/*
 * A configuration (left uninitialised, so that memcheck sees whatever the
 * loader forgets to set) and a zeroed error list for one test; false, and a
 * failed check, without memory.
 */
static bool alloc_conf(struct conf **ret_c, struct conf_errors **ret_errs)
{
	struct conf *c = malloc(sizeof(*c));
	struct conf_errors *errs = calloc(1, sizeof(*errs));

	if (!c || !errs) {
		CHECK(0, "out of memory");
		free(c);
		free(errs);
		return false;
	}
	*ret_c = c;
	*ret_errs = errs;
	return true;
}

static void test_validate(void)
{
	struct conf *c;
	struct conf_errors *errs;

	if (!alloc_conf(&c, &errs))
		return;
	for (size_t i = 0; i < sizeof(validate_rows) / sizeof(validate_rows[0]); i++) {
		const struct validate_row *r = &validate_rows[i];
		size_t n;

		base(c);
		r->setup(c);
		memset(errs, 0, sizeof(*errs));
		n = conf_validate(c, errs);
		CHECK_EQ_U(n, r->want_errors, "validate row %d: errors (first: %s)", r->id,
			   errs->n ? errs->msg[0] : "none");
		CHECK_EQ_U(errs->n, n < CONF_MAX_ERRORS ? n : CONF_MAX_ERRORS,
			   "validate row %d: messages recorded", r->id);
		if (r->want_first && errs->n)
			CHECK(strcmp(errs->msg[0], r->want_first) == 0,
			      "validate row %d: got \"%s\", want \"%s\"", r->id, errs->msg[0],
			      r->want_first);
	}
	free(c);
	free(errs);
}

/* Error list overflow: more than CONF_MAX_ERRORS problems. */
static void test_overflow(void)
{
	struct conf *c;
	struct conf_errors *errs;

	if (!alloc_conf(&c, &errs))
		return;
	base(c);
	c->nknock = 40;
	for (size_t i = 0; i < c->nknock; i++) {
		c->knock[i] = c->knock[0];
		c->knock[i].key = 3;	/* no such key */
		c->knock[i].dst.addr[3] = (uint8_t)i;
	}
	CHECK_EQ_U(conf_validate(c, errs), 40, "overflow: count includes the dropped ones");
	CHECK_EQ_U(errs->n, CONF_MAX_ERRORS, "overflow: recorded");
	CHECK(errs->overflow, "overflow: flagged");
	free(c);
	free(errs);
}

/* ------------------------------------------------------------------ */
/* The loader: every single setting through the schema, from text */

#define KEYS "keys = ( { name = \"k\"; secret = \"0123456789abcdef0123456789abcdef\"; } );\n"
#define PROTECT(x) "protect = ( { port = 22; mode = \"native\"; keys = [ \"k\" ]; " x " } );\n"
#define KNOCK(x) "knock = ( { dst = \"192.0.2.1\"; port = 22; mode = \"native\"; key = \"k\"; " x " } );\n"
#define A8 "aaaaaaaa"
#define A32 A8 A8 A8 A8
#define A100 A32 A32 A32 "aaaa"
#define K17 "\"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\", \"k\""
#define ADDR17 "\"10.0.0.1\", \"10.0.0.2\", \"10.0.0.3\", \"10.0.0.4\", \"10.0.0.5\", \"10.0.0.6\", " \
	"\"10.0.0.7\", \"10.0.0.8\", \"10.0.0.9\", \"10.0.0.10\", \"10.0.0.11\", \"10.0.0.12\", " \
	"\"10.0.0.13\", \"10.0.0.14\", \"10.0.0.15\", \"10.0.0.16\", \"10.0.0.17\""

static const struct load_row {
	int id;
	const char *text;
	size_t want_errors;
	const char *want_first;	/* exact first message when want_errors > 0 */
} load_rows[] = {
	{ 1, "", 0, NULL },
	{ 2, KEYS PROTECT("") KNOCK(""), 0, NULL },
	{ 3, "queue = { count = 0; };", 1, "t.conf:1: queue.count 0 out of range 1..16" },
	{ 4, "queue = { count = 17; };", 1, "t.conf:1: queue.count 17 out of range 1..16" },
	{ 5, "queue = { maxlen = 15; };", 1, "t.conf:1: queue.maxlen 15 out of range 16..1048576" },
	{ 6, "queue = { num = 65536; };", 1, "t.conf:1: queue.num 65536 out of range 0..65535" },
	{ 7, "rules = { table = \"\"; };", 1, "t.conf:1: table \"\" must be 1..32 characters of A-Z a-z 0-9 _" },
	{ 8, "rules = { table = \"knock-gw\"; };", 1, "t.conf:1: table \"knock-gw\" must be 1..32 characters of A-Z a-z 0-9 _" },
	{ 9, "rules = { table = \"" A32 "\"; };", 0, NULL },
	{ 10, "rules = { table = \"" A32 "a\"; };", 1, "t.conf:1: table \"" A32 "a\" must be 1..32 characters of A-Z a-z 0-9 _" },
	{ 11, "control_socket = \"x.sock\";", 1, "t.conf:1: control_socket \"x.sock\" must be an absolute path" },
	{ 12, "control_socket = \"/" A100 "aaaaaa\";", 0, NULL },	/* 107 and the NUL */
	{ 13, "control_socket = \"/" A100 "aaaaaaa\";", 1, "t.conf:1: control_socket \"/" A100 "aaaaaaa\" does not fit the 108 bytes of sun_path" },
	{ 14, "limits = { flows = 63; };", 1, "t.conf:1: limits.flows 63 out of range 64..4194304" },
	{ 15, "limits = { replay = 4194305; };", 1, "t.conf:1: limits.replay 4194305 out of range 64..4194304" },
	{ 16, "limits = { integrity_timeout = 0; };", 1, "t.conf:1: limits.integrity_timeout 0 out of range 1..300" },
	{ 17, "limits = { integrity_timeout = 301; };", 1, "t.conf:1: limits.integrity_timeout 301 out of range 1..300" },
	{ 18, "limits = { hold_bytes = 4095; };", 1, "t.conf:1: limits.hold_bytes 4095 out of range 4096..1073741824" },
	{ 19, "limits = {\n hold_bytes = 4096;\n hold_flow_bytes = 8192;\n};", 1, "t.conf:3: limits.hold_flow_bytes 8192 exceeds limits.hold_bytes 4096" },
	{ 20, "queue = {\n num = 65535;\n count = 2;\n};", 1, "t.conf:3: queue.num 65535 + queue.count 2 - 1 is above the last queue number 65535" },
	{ 21, "keys = ( { name = \"k 19\"; secret = \"x\"; } );", 1, "t.conf:1: key name \"k 19\" must be 1..32 characters of A-Z a-z 0-9 _ . -" },
	{ 22, "keys = ( { name = \"a.b-c_D9\"; secret = \"x\"; } );", 0, NULL },
	{ 23, "keys = ( { name = \"" A32 "a\"; secret = \"x\"; } );", 1, "t.conf:1: key name \"" A32 "a\" must be 1..32 characters of A-Z a-z 0-9 _ . -" },
	{ 24, KEYS "protect = ( { port = 0; mode = \"native\"; keys = [ \"k\" ]; } );", 1, "t.conf:2: port 0 out of range 1..65535" },
	{ 25, KEYS "protect = ( { port = 22; mode = \"native\"; keys = [ ]; } );", 1, "t.conf:2: protect entry names 0 keys; it needs 1..16" },
	{ 26, KEYS "protect = ( { port = 22; mode = \"knock\"; keys = [ " K17 " ]; } );", 1, "t.conf:2: protect entry names 17 keys; it needs 1..16" },
	{ 27, KEYS PROTECT("window = 86401;"), 1, "t.conf:2: window 86401 out of range 0..86400" },
	{ 28, KEYS PROTECT("replay_ttl = 0;"), 1, "t.conf:2: replay_ttl 0 out of range 1..604800" },
	{ 29, KEYS PROTECT("replay_ttl = 604801;"), 1, "t.conf:2: replay_ttl 604801 out of range 1..604800" },
	{ 30, KEYS PROTECT("integrity_len = 2049;"), 1, "t.conf:2: integrity_len 2049 out of range 0..2048" },
	{ 31, KEYS KNOCK("integrity_len = 2049;"), 1, "t.conf:2: integrity_len 2049 out of range 0..2048" },
	{ 32, KEYS PROTECT("addresses = [ " ADDR17 " ];"), 1, "t.conf:2: protect entry has 17 addresses; at most 16" },
	{ 33, KEYS "protect = ( { port = 22; mode = \"native\"; keys = [ \"k\" ];\n window = 30;\n replay_ttl = 60; } );", 1, "t.conf:4: replay_ttl 60 is below 3 windows (90 seconds) of mode \"native\"" },
	{ 34, KEYS "protect = ( { port = 22; mode = \"knock\"; keys = [ \"k\" ];\n window = 30; } );", 1, "t.conf:3: \"window\" applies only to mode \"native\"" },
	{ 35, KEYS PROTECT("") "protect += ( );", 1, NULL },	/* a syntax error */
	{ 36, KEYS "protect = ( { mode = \"native\"; keys = [ \"k\" ]; } );", 1, "t.conf:2: protect entry is missing \"port\"" },
	{ 37, KEYS "protect = ( { port = 22; keys = [ \"k\" ]; } );", 1, "t.conf:2: protect entry is missing \"mode\"" },
	{ 38, KEYS "protect = ( { port = 22; mode = \"knock\"; } );", 1, "t.conf:2: protect entry is missing \"keys\"" },
	{ 39, KEYS "knock = ( { port = 22; mode = \"knock\"; key = \"k\"; } );", 1, "t.conf:2: knock entry is missing \"dst\"" },
	{ 40, KEYS "knock = ( { dst = \"192.0.2.1\"; port = 22; mode = \"knock\"; } );", 1, "t.conf:2: knock entry is missing \"key\"" },
	{ 41, "queue = { fail_open = 1; };", 1, "t.conf:1: \"queue.fail_open\" must be a boolean (true or false)" },
	{ 42, "queue = { num = \"1\"; };", 1, "t.conf:1: \"queue.num\" must be an integer" },
	{ 43, "log_level = 1;", 1, "t.conf:1: \"log_level\" must be a string" },
	{ 44, KEYS "protect = ( { port = 22; mode = \"knock\"; keys = \"k\"; } );", 1, "t.conf:2: \"protect.keys\" must be an array of strings" },
	{ 45, "queue = 1;", 1, "t.conf:1: \"queue\" must be a group { ... }" },
	{ 46, "protect = 1;", 1, "t.conf:1: \"protect\" must be a list ( { ... }, ... )" },
	{ 47, "protect = [ ];", 0, NULL },
	{ 48, KEYS PROTECT("on_fail = \"x\";"), 1, "t.conf:2: unknown on_fail \"x\" (use \"reset\" or \"drop\")" },
	{ 49, "log_level = \"x\";", 1, "t.conf:1: unknown log_level \"x\" (use \"debug\", \"info\", \"notice\", \"warning\" or \"error\")" },
	{ 50, "queue = { foo = 1; };", 1, "t.conf:1: unknown setting \"foo\" in queue" },
	{ 51, "foo = 1;", 1, "t.conf:1: unknown setting \"foo\"" },
	{ 52, KEYS PROTECT("foo = 1;"), 1, "t.conf:2: unknown setting \"foo\" in protect" },
	{ 53, "rules = { mark_mask = 0x0f0f0000; };", 1, "t.conf:1: rules.mark_mask 0x0f0f0000 must be one run of at least 3 bits" },
	{ 54, "rules = { ct_mark_bit = 3; };", 1, "t.conf:1: rules.ct_mark_bit 0x00000003 must be exactly one bit" },
	{ 55, "rules = { mark_mask = 0; };", 1, "t.conf:1: rules.mark_mask 0 out of range 1..4294967295" },
	{ 56, "protect = ( 1 );", 1, "t.conf:1: \"protect\" entries must be groups { port = ...; ... }" },
	{ 57, "knock = ( 1 );", 1, "t.conf:1: \"knock\" entries must be groups { dst = ...; ... }" },
	{ 58, KEYS "knock = ( { dst = \"192.0.2.1\"; port = 22; mode = \"knock\"; key = \"zz\"; } );", 1, "t.conf:2: knock entry names unknown key \"zz\"" },
	{ 59, KEYS "protect = ( { port = 22; mode = \"knock\"; keys = [ \"k\", \"zz\" ]; } );", 1, "t.conf:2: protect entry names unknown key \"zz\"" },
	{ 60, KEYS "knock = ( { dst = \"x\"; port = 22; mode = \"knock\"; key = \"k\"; } );", 1, "t.conf:2: dst \"x\" is not an IPv4 or IPv6 address" },
	{ 61, KEYS "knock = ( { dst = \"10.0.0.0/33\"; port = 22; mode = \"knock\"; key = \"k\"; } );", 1, "t.conf:2: dst \"10.0.0.0/33\" has a prefix length out of range 0..32" },
	{ 62, KEYS PROTECT("addresses = [ \"2001:db8::/129\" ];"), 1, "t.conf:2: address \"2001:db8::/129\" has a prefix length out of range 0..128" },
	{ 63, KEYS "keys += ( );", 1, NULL },	/* a syntax error */
	{ 64, KEYS PROTECT("") "protect2 = 1;", 1, "t.conf:3: unknown setting \"protect2\"" },
	{ 65, KEYS "protect = (\n { port = 22; mode = \"knock\"; keys = [ \"k\" ]; },\n { port = 22; mode = \"knock\"; keys = [ \"k\" ]; } );", 1, "t.conf:4: duplicate protect entry for port 22 (first at line 3)" },
	{ 66, KEYS "keys = ( { name = \"k\"; } );", 1, NULL },	/* keys twice: libconfig's duplicate */
	{ 67, "keys = ( { name = \"k\"; } );", 1, "t.conf:1: key \"k\" needs exactly one of \"file\" or \"secret\"" },
	{ 68, "keys = ( { secret = \"x\"; } );", 1, "t.conf:1: key entry is missing \"name\"" },
	{ 69, "guessing = { window = 0; };", 1, "t.conf:1: guessing.window 0 out of range 1..86400" },
	{ 70, "queue = { num = 4294967318L; };", 1, "t.conf:1: queue.num 4294967318 out of range 0..65535" },
	{ 71, KEYS PROTECT("public = [ \"198.51.100.1\", \"198.51.100.1:2200\", \"[2001:db8::1]:22\", \"2001:db8::2\" ];"), 0, NULL },
	{ 72, KEYS PROTECT("public = [ ];"), 0, NULL },
	{ 73, KEYS PROTECT("public = [ \"x\" ];"), 1, "t.conf:2: public \"x\" is not an IP address, \"IPv4:port\" or \"[IPv6]:port\"" },
	{ 74, KEYS PROTECT("public = [ \"198.51.100.1:0\" ];"), 1, "t.conf:2: public \"198.51.100.1:0\" has port 0; ports are 1..65535" },
	{ 75, KEYS PROTECT("public = [ \"198.51.100.1:65536\" ];"), 1, "t.conf:2: public \"198.51.100.1:65536\" has a port that is not a number 1..65535" },
	{ 76, KEYS PROTECT("public = [ " ADDR17 " ];"), 1, "t.conf:2: protect entry has 17 public destinations; at most 16" },
	{ 77, KEYS PROTECT("public = [ \"[2001:db8::1]\" ];"), 1, "t.conf:2: public \"[2001:db8::1]\" has brackets but no port: write \"[address]:port\", or the address alone" },
	{ 78, KEYS PROTECT("public = [ \"2001:db8:1:2:3:4:5:6:22\" ];"), 1, "t.conf:2: public \"2001:db8:1:2:3:4:5:6:22\" is an IPv6 address and a port: write \"[address]:port\"" },
	{ 79, KEYS PROTECT("public = [\n \"198.51.100.1\",\n \"198.51.100.1:22\" ];"), 1, "t.conf:4: public destination 198.51.100.1 port 22 is listed twice (first at line 3)" },
	{ 80, KEYS PROTECT("public = \"198.51.100.1\";"), 1, "t.conf:2: \"protect.public\" must be an array of strings" },
	{ 81, KEYS PROTECT("public = [ \"x\", \"198.51.100.1:0\" ];"), 2, "t.conf:2: public \"x\" is not an IP address, \"IPv4:port\" or \"[IPv6]:port\"" },
	/* Gateway client role: from in a knock entry. */
	{ 101, KEYS KNOCK("from = [ \"10.0.0.0/24\", \"fd00::/64\" ];"), 0, NULL },
	{ 102, KEYS KNOCK("from = [ \"10.0.0.0/33\" ];"), 1, "t.conf:2: from \"10.0.0.0/33\" has a prefix length out of range 0..32" },
	{ 103, KEYS KNOCK("from = [ \"10.0.0.x\" ];"), 1, "t.conf:2: from \"10.0.0.x\" is not an IPv4 or IPv6 address" },
	{ 104, KEYS KNOCK("from = [ " ADDR17 " ];"), 1, "t.conf:2: knock entry has 17 from prefixes; at most 16" },
	{ 105, KEYS KNOCK("from = [ \"10.0.0.0/24\", \"10.0.0.7\" ];"), 1, "t.conf:2: from \"10.0.0.7\" overlaps from \"10.0.0.0/24\" of the same entry" },
	{ 106, KEYS KNOCK("from = \"10.0.0.0/24\";"), 1, "t.conf:2: \"knock.from\" must be an array of strings" },
	{ 107, KEYS KNOCK("integrity_len = 8; from = [ \"10.0.0.0/24\" ];"), 1, "t.conf:2: from needs integrity_len 0: the hosts a gateway knocks for cannot give it their first bytes" },
	{ 108, KEYS KNOCK("from = [ \"fd00::/64\" ];"), 1, "t.conf:2: from has no IPv4 prefix, and dst is IPv4: the entry would knock for no routed host" },
	{ 109, KEYS "knock = ( { dst = \"192.0.2.1\"; port = 22; mode = \"native\"; key = \"k\";\n from = [ \"10.0.0.0/24\",\n \"10.0.0.0/25\" ]; } );", 1, "t.conf:4: from \"10.0.0.0/25\" overlaps from \"10.0.0.0/24\" of the same entry" },
	{ 110, KEYS KNOCK("from = [ \"10.0.0.0/24\", \"10.0.0.0/24\" ];"), 1, "t.conf:2: from \"10.0.0.0/24\" overlaps from \"10.0.0.0/24\" of the same entry" },
	{ 111, KEYS KNOCK("from = [ ];"), 0, NULL },
	/* The user path's conntrack label bits: 33 from ct_label on, within 128. */
	{ 151, "rules = { ct_label = 96; };", 1, "t.conf:1: rules.ct_label 96 out of range 0..95" },
	{ 152, "rules = { ct_label = -1; };", 1, "t.conf:1: rules.ct_label -1 out of range 0..95" },
	{ 153, KEYS "rules = { ct_label = 0; };", 0, NULL },
};

static void test_load(void)
{
	struct conf *c;
	struct conf_errors *errs;

	if (!alloc_conf(&c, &errs))
		return;
	for (size_t i = 0; i < sizeof(load_rows) / sizeof(load_rows[0]); i++) {
		const struct load_row *r = &load_rows[i];
		int rc = conf_load_text("t.conf", r->text, c, errs);

		CHECK_EQ_U(errs->n, r->want_errors, "load row %d: errors (first: %s)", r->id,
			   errs->n ? errs->msg[0] : "none");
		CHECK_EQ_U((unsigned)rc, r->want_errors ? (unsigned)-EINVAL : 0u, "load row %d: rc",
			   r->id);
		if (r->want_first && errs->n)
			CHECK(strcmp(errs->msg[0], r->want_first) == 0,
			      "load row %d: got \"%s\", want \"%s\"", r->id, errs->msg[0],
			      r->want_first);
		conf_free(c);
	}
	/* The lifecycle's defaults: hide on stop, refuse to port 1; labels 95..127. */
	CHECK(conf_load_text("t.conf", KEYS, c, errs) == 0 && c->on_stop == ON_STOP_HIDE &&
		      c->refuse_port == 1 && !c->fail_open && c->ct_label == 95,
	      "defaults: on_stop hide, refuse_port 1, ct_label 95");
	conf_free(c);
	free(c);
	free(errs);
}

/* Where the schema puts values, the defaults it leaves, the lines it records. */
static void test_load_values(void)
{
	static const char text[] =
		KEYS
		"queue = { num = 7; count = 2; fail_open = true; maxlen = 100; };\n"
		"rules = { manage = false; table = \"t1\"; mark_mask = 0x00700000; ct_mark_bit = 0x10;"
		" refuse_port = 9; ct_label = 7; };\n"
		"log_level = \"debug\"; translate = \"user\"; closed_ports = \"daemon\";"
		" on_stop = \"open\";\n"
		"control_socket = \"/tmp/k.sock\";\n"
		"limits = { flows = 100; replay = 200; hold_bytes = 8192; hold_flow_bytes = 2048;\n"
		"           integrity_timeout = 5; };\n"
		"guessing = { threshold = 0; window = 9; penalty = 11; };\n"
		"protect = (\n"
		"  { port = 22; mode = \"native\"; keys = [ \"k\" ];\n"
		"    window = 10; integrity_len = 20; on_fail = \"drop\"; replay = false;\n"
		"    addresses = [ \"192.0.2.0/24\", \"2001:db8::1\" ];\n"
		"    public = [ \"198.51.100.1\",\n"
		"               \"[2001:db8::1]:2200\" ]; },\n"
		"  { port = 23; mode = \"knock\"; keys = [ \"k\" ]; },\n"
		"  { port = 24; mode = \"native\"; keys = [ \"k\" ]; window = 0; } );\n"
		"knock = ( { dst = \"192.0.2.0/24\"; port = 22; mode = \"knock\"; key = \"k\";\n"
		"            integrity_len = 8; } );\n";
	struct conf *c;
	struct conf_errors *errs;

	if (!alloc_conf(&c, &errs))
		return;
	CHECK(conf_load_text("t.conf", text, c, errs) == 0, "values: loads (%s)",
	      errs->n ? errs->msg[0] : "");
	CHECK(c->queue_num == 7 && c->queue_count == 2 && c->fail_open && c->queue_maxlen == 100,
	      "values: queue");
	CHECK(!c->rules_manage && strcmp(c->table, "t1") == 0 && c->mark_mask == 0x00700000 &&
		      c->ct_mark_bit == 0x10 && c->marks.ct_integ == 0x10 &&
		      c->marks.integ == 0x00100000 && c->refuse_port == 9 &&
		      c->on_stop == ON_STOP_OPEN && c->ct_label == 7,
	      "values: rules and the marks made from them, refuse_port, ct_label, on_stop");
	CHECK(c->log_level == LOG_DEBUG && c->translate == TRANSLATE_USER &&
		      c->closed_ports == CLOSED_DAEMON &&
		      strcmp(c->control_socket, "/tmp/k.sock") == 0,
	      "values: words and the socket");
	CHECK(c->max_flows == 100 && c->max_replay == 200 && c->hold_bytes == 8192 &&
		      c->hold_flow_bytes == 2048 && c->integrity_timeout == 5,
	      "values: limits");
	CHECK(c->guess_threshold == 0 && c->guess_window == 9 && c->guess_penalty == 11,
	      "values: guessing");
	CHECK_EQ_U(c->nkeys, 1, "values: keys");
	CHECK(c->keys[0].len == 32 && !c->keys[0].from_file && c->keys[0].line == 1,
	      "values: key k");
	CHECK_EQ_U(c->nprotect, 3, "values: protect entries");
	CHECK(c->protect[0].port == 22 && c->protect[0].mode == KG_MODE_NATIVE &&
		      c->protect[0].nkeys == 1 && c->protect[0].keys[0] == 0 &&
		      c->protect[0].window == 10 && c->protect[0].has_window &&
		      c->protect[0].integrity_len == 20 && c->protect[0].on_fail == ON_FAIL_DROP &&
		      !c->protect[0].replay && c->protect[0].naddrs == 2,
	      "values: protect entry 1");
	CHECK_EQ_U(c->protect[0].replay_ttl, 30, "values: native replay_ttl defaults to 3 windows");
	CHECK(c->protect[0].npublic == 2 && c->protect[0].pub[0].dst.family == AF_INET &&
		      c->protect[0].pub[0].dst.port == 0 && c->protect[0].pub[0].line == 13 &&
		      memcmp(c->protect[0].pub[0].dst.addr, "\xc6\x33\x64\x01", 4) == 0 &&
		      c->protect[0].pub[1].dst.family == AF_INET6 &&
		      c->protect[0].pub[1].dst.port == 2200 && c->protect[0].pub[1].line == 14,
	      "values: public destinations and their lines");
	CHECK(c->protect[1].on_fail == ON_FAIL_RESET && c->protect[1].replay &&
		      c->protect[1].window == 30 && !c->protect[1].has_window &&
		      c->protect[1].naddrs == 0 && c->protect[1].npublic == 0,
	      "values: protect entry 2 defaults");
	CHECK_EQ_U(c->protect[1].replay_ttl, 3600, "values: knock replay_ttl defaults to an hour");
	CHECK_EQ_U(c->protect[2].replay_ttl, 3600, "values: native window 0: an hour");
	CHECK(c->protect[0].line == 10 && c->protect[0].lines[EL_PORT] == 10 &&
		      c->protect[0].lines[EL_WINDOW] == 11 &&
		      c->protect[0].lines[EL_INTEGRITY_LEN] == 11 &&
		      c->protect[0].lines[EL_REPLAY_TTL] == 0,
	      "values: protect lines");
	CHECK_EQ_U(c->nknock, 1, "values: knock entries");
	CHECK(c->knock[0].key == 0 && c->knock[0].integrity_len == 8 && c->knock[0].dst.len == 24 &&
		      c->knock[0].window == 30 && !c->knock[0].has_window &&
		      c->knock[0].lines[EL_DST] == 17 && c->knock[0].lines[EL_KEY] == 17,
	      "values: knock entry");
	CHECK(c->lines[CL_QUEUE_NUM] == 2 && c->lines[CL_HOLD_BYTES] == 6 &&
		      c->lines[CL_HOLD_FLOW_BYTES] == 6,
	      "values: global lines");
	CHECK_EQ_U(conf_validate(c, errs), 0, "values: a loaded config validates again");
	conf_free(c);
	free(c);
	free(errs);
}

/* ------------------------------------------------------------------ */
/* The per-packet lookups */

static const struct match_row {
	int id;
	const char *addr;
	uint16_t port;
	int want_protect;	/* index, -1 none */
	int want_reply;		/* as a reply from (addr, port) */
	int want_knock;		/* index, -1 none */
} match_rows[] = {
	{ 1, "192.0.2.10", 22, 0, -1, 1 },	/* the /32 beats the /24 */
	{ 2, "192.0.2.11", 22, 0, -1, 2 },
	{ 3, "192.0.2.11", 23, 1, 1, -1 },
	{ 4, "10.0.0.1", 23, -1, -1, -1 },	/* entry 2 is only for 192.0.2.0/25 */
	{ 5, "192.0.2.200", 23, -1, -1, -1 },
	{ 6, "2001:db8::1", 23, 2, -1, -1 },
	{ 7, "2001:db8::1", 22, 0, -1, -1 },
	{ 8, "192.0.2.10", 24, -1, -1, -1 },
};

static void test_match(void)
{
	struct conf *c = malloc(sizeof(*c));

	if (!c) {
		CHECK(0, "out of memory");
		return;
	}
	base(c);
	add_protect(c, 23)->integrity_len = 20;
	c->protect[1].naddrs = 1;
	prefix_parse("192.0.2.0/25", &c->protect[1].addrs[0]);
	add_protect(c, 23)->naddrs = 1;
	prefix_parse("2001:db8::/32", &c->protect[2].addrs[0]);
	prefix_parse("192.0.2.0/24", &c->knock[0].dst);
	add_knock(c, "192.0.2.10", 22);
	add_knock(c, "192.0.2.0/30", 22)->dst.len = 30;
	prefix_parse("192.0.2.8/30", &c->knock[2].dst);
	for (size_t i = 0; i < sizeof(match_rows) / sizeof(match_rows[0]); i++) {
		const struct match_row *r = &match_rows[i];
		int family = strchr(r->addr, ':') ? AF_INET6 : AF_INET;
		uint8_t addr[16] = { 0 };
		const struct conf_knock *k;

		inet_pton(family, r->addr, addr);
		k = match_knock(c, family, addr, r->port);
		CHECK_EQ_U((unsigned)match_protect(c, family, addr, r->port),
			   (unsigned)r->want_protect, "match row %d: protect", r->id);
		CHECK_EQ_U((unsigned)match_reply(c, family, addr, r->port),
			   (unsigned)r->want_reply, "match row %d: reply", r->id);
		CHECK_EQ_U((unsigned)(k ? (int)(k - c->knock) : -1), (unsigned)r->want_knock,
			   "match row %d: knock", r->id);
	}
	/*
	 * A router's own port 22 (every local address) and the hosts it
	 * routes to on 22 (forward): a routed host's SYN is the forward
	 * entry's, though the local entry, listed first, covers every address.
	 */
	base(c);
	{
		struct conf_protect *f = add_protect(c, 22);
		uint8_t routed[4] = { 203, 0, 113, 9 }, local[4] = { 192, 0, 2, 2 };

		f->forward = true;
		f->naddrs = 1;
		prefix_parse("203.0.113.0/24", &f->addrs[0]);
		CHECK_EQ_U((unsigned)match_protect(c, AF_INET, routed, 22), 1u,
			   "forward: a routed host's SYN is the forward entry's");
		CHECK_EQ_U((unsigned)match_protect(c, AF_INET, local, 22), 0u,
			   "forward: a local address's is the local entry's");
	}
	free(c);
}

static const struct prefix_row {
	int id;
	const char *text;
	int want_rc;
	int family;
	unsigned len;
	const char *want_addr;	/* the stored (masked) address */
} prefix_rows[] = {
	{ 1, "192.0.2.1", 0, AF_INET, 32, "192.0.2.1" },
	{ 2, "192.0.2.10/24", 0, AF_INET, 24, "192.0.2.0" },
	{ 3, "192.0.2.255/25", 0, AF_INET, 25, "192.0.2.128" },
	{ 4, "10.9.8.7/0", 0, AF_INET, 0, "0.0.0.0" },
	{ 5, "10.0.0.0/32", 0, AF_INET, 32, "10.0.0.0" },
	{ 6, "2001:db8::1", 0, AF_INET6, 128, "2001:db8::1" },
	{ 7, "2001:db8::ff/120", 0, AF_INET6, 120, "2001:db8::" },
	{ 8, "2001:db8:1:2:3:4:5:6/33", 0, AF_INET6, 33, "2001:db8::" },
	{ 9, "::/0", 0, AF_INET6, 0, "::" },
	{ 10, "::ffff:192.0.2.1", 0, AF_INET6, 128, "::ffff:192.0.2.1" },
	{ 11, "2001:db8::1/129", -EINVAL, 0, 0, NULL },
	{ 12, "10.0.0.0/33", -EINVAL, 0, 0, NULL },
	{ 13, "", -EINVAL, 0, 0, NULL },
	{ 14, "/24", -EINVAL, 0, 0, NULL },
	{ 15, "10.0.0.0/", -EINVAL, 0, 0, NULL },
	{ 16, "10.0.0.0/2a", -EINVAL, 0, 0, NULL },
	{ 17, "10.0.0.0/ 8", -EINVAL, 0, 0, NULL },
	{ 18, "10.0.0.0/+8", -EINVAL, 0, 0, NULL },
	{ 19, "10.0.0.0/-1", -EINVAL, 0, 0, NULL },
	{ 20, "10.0.0.0/0008", -EINVAL, 0, 0, NULL },
	{ 21, "10.0.0.0/8/8", -EINVAL, 0, 0, NULL },
	{ 22, "1.2.3", -EINVAL, 0, 0, NULL },
	{ 23, "300.1.1.1", -EINVAL, 0, 0, NULL },
	{ 24, " 10.0.0.1", -EINVAL, 0, 0, NULL },
	{ 25, "fe80::1%eth0", -EINVAL, 0, 0, NULL },
	{ 26, "example.com", -EINVAL, 0, 0, NULL },
	{ 27, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255:1/64", -EINVAL, 0, 0, NULL },
	{ 28, "2001:0db8:0000:0000:0000:0000:0000:0001/064", 0, AF_INET6, 64, "2001:db8::" },
};

static void test_prefix_parse(void)
{
	for (size_t i = 0; i < sizeof(prefix_rows) / sizeof(prefix_rows[0]); i++) {
		const struct prefix_row *r = &prefix_rows[i];
		struct prefix p, untouched;
		uint8_t want[16] = { 0 };
		int rc;

		memset(&p, 0xa5, sizeof(p));
		untouched = p;
		rc = prefix_parse(r->text, &p);
		CHECK_EQ_U((unsigned)rc, (unsigned)r->want_rc, "prefix row %d \"%s\": rc", r->id,
			   r->text);
		if (r->want_rc != 0) {
			CHECK(memcmp(&p, &untouched, sizeof(p)) == 0,
			      "prefix row %d: output written on failure", r->id);
			continue;
		}
		inet_pton(r->family, r->want_addr, want);
		CHECK_EQ_U(p.family, r->family, "prefix row %d: family", r->id);
		CHECK_EQ_U(p.len, r->len, "prefix row %d: len", r->id);
		CHECK(memcmp(p.addr, want, r->family == AF_INET ? 4 : 16) == 0,
		      "prefix row %d: address", r->id);
	}
}

static const struct contains_row {
	int id;
	const char *prefix;
	const char *addr;
	bool want;
} contains_rows[] = {
	{ 1, "10.0.0.0/8", "10.255.1.1", true },
	{ 2, "10.0.0.0/8", "11.0.0.1", false },
	{ 3, "192.0.2.0/25", "192.0.2.127", true },
	{ 4, "192.0.2.0/25", "192.0.2.128", false },
	{ 5, "0.0.0.0/0", "203.0.113.9", true },
	{ 6, "0.0.0.0/0", "::1", false },
	{ 7, "192.0.2.1", "192.0.2.1", true },
	{ 8, "192.0.2.1", "192.0.2.2", false },
	{ 9, "2001:db8::/32", "2001:db8:ffff::1", true },
	{ 10, "2001:db8::/32", "2001:db9::", false },
	{ 11, "2001:db8::1", "2001:db8::1", true },
	{ 12, "2001:db8::1", "2001:db8::2", false },
	{ 13, "::/0", "fe80::1", true },
	{ 14, "::/0", "10.0.0.1", false },
	{ 15, "2001:db8::/127", "2001:db8::1", true },
	{ 16, "2001:db8::/127", "2001:db8::2", false },
	{ 17, "::ffff:0:0/96", "10.0.0.1", false },	/* families never mix */
};

static void test_prefix_contains(void)
{
	for (size_t i = 0; i < sizeof(contains_rows) / sizeof(contains_rows[0]); i++) {
		const struct contains_row *r = &contains_rows[i];
		struct prefix p;
		uint8_t addr[16] = { 0 };
		int family = strchr(r->addr, ':') ? AF_INET6 : AF_INET;

		CHECK(prefix_parse(r->prefix, &p) == 0, "contains row %d: parse", r->id);
		CHECK(inet_pton(family, r->addr, addr) == 1, "contains row %d: address", r->id);
		CHECK(prefix_contains(&p, family, addr) == r->want, "contains row %d: %s in %s",
		      r->id, r->addr, r->prefix);
	}
}

static const struct dest_row {
	int id;
	const char *text;
	enum dest_err want;
	int family;
	const char *want_addr;
	uint16_t port;
} dest_rows[] = {
	{ 1, "198.51.100.1", DEST_OK, AF_INET, "198.51.100.1", 0 },
	{ 2, "198.51.100.1:2200", DEST_OK, AF_INET, "198.51.100.1", 2200 },
	{ 3, "198.51.100.1:65535", DEST_OK, AF_INET, "198.51.100.1", 65535 },
	{ 4, "[2001:db8::1]:22", DEST_OK, AF_INET6, "2001:db8::1", 22 },
	{ 5, "2001:db8::1", DEST_OK, AF_INET6, "2001:db8::1", 0 },
	/* A bare IPv6 address is an address, whatever its last group looks like. */
	{ 6, "2001:db8::1:22", DEST_OK, AF_INET6, "2001:db8::1:22", 0 },
	{ 7, "::1", DEST_OK, AF_INET6, "::1", 0 },
	{ 8, "[::]:1", DEST_OK, AF_INET6, "::", 1 },
	{ 9, "198.51.100.1:022", DEST_OK, AF_INET, "198.51.100.1", 22 },
	{ 10, "198.51.100.1:0", DEST_PORT_ZERO, 0, NULL, 0 },
	{ 11, "[2001:db8::1]:0", DEST_PORT_ZERO, 0, NULL, 0 },
	{ 12, "198.51.100.1:65536", DEST_BAD_PORT, 0, NULL, 0 },
	{ 13, "198.51.100.1:", DEST_BAD_PORT, 0, NULL, 0 },
	{ 14, "198.51.100.1:+22", DEST_BAD_PORT, 0, NULL, 0 },
	{ 15, "198.51.100.1:100000", DEST_BAD_PORT, 0, NULL, 0 },
	{ 16, "[2001:db8::1]:x", DEST_BAD_PORT, 0, NULL, 0 },
	{ 17, "[2001:db8::1]", DEST_BRACKETS_ALONE, 0, NULL, 0 },
	{ 18, "[198.51.100.1]:22", DEST_BRACKETS_V4, 0, NULL, 0 },
	{ 19, "2001:db8:1:2:3:4:5:6:22", DEST_V6_PORT, 0, NULL, 0 },
	{ 20, "2001:db8:1:2:3:4:5:6:0", DEST_V6_PORT, 0, NULL, 0 },
	{ 21, "::ffff:198.51.100.1", DEST_MAPPED, 0, NULL, 0 },
	{ 22, "[::ffff:198.51.100.1]:22", DEST_MAPPED, 0, NULL, 0 },
	{ 23, "198.51.100.0/24", DEST_PREFIX, 0, NULL, 0 },
	{ 24, "2001:db8::1/128", DEST_PREFIX, 0, NULL, 0 },
	{ 25, "198.51.100.1/33", DEST_BAD_ADDR, 0, NULL, 0 },
	{ 26, "", DEST_BAD_ADDR, 0, NULL, 0 },
	{ 27, ":22", DEST_BAD_ADDR, 0, NULL, 0 },
	{ 28, "[2001:db8::1", DEST_BAD_ADDR, 0, NULL, 0 },
	{ 29, "[2001:db8::1]22", DEST_BAD_ADDR, 0, NULL, 0 },
	{ 30, "[]:22", DEST_BAD_ADDR, 0, NULL, 0 },
	{ 31, "example.com:22", DEST_BAD_ADDR, 0, NULL, 0 },
	{ 32, "198.51.100.1:22:22", DEST_BAD_ADDR, 0, NULL, 0 },
	{ 33, " 198.51.100.1", DEST_BAD_ADDR, 0, NULL, 0 },
	{ 34, "fe80::1%eth0", DEST_BAD_ADDR, 0, NULL, 0 },
};

static void test_dest_read(void)
{
	for (size_t i = 0; i < sizeof(dest_rows) / sizeof(dest_rows[0]); i++) {
		const struct dest_row *r = &dest_rows[i];
		struct dest d, untouched;
		uint8_t want[16] = { 0 };
		enum dest_err e;

		memset(&d, 0xa5, sizeof(d));
		untouched = d;
		e = dest_read(r->text, &d);
		CHECK_EQ_U(e, r->want, "dest row %d \"%s\"", r->id, r->text);
		if (r->want != DEST_OK) {
			CHECK(memcmp(&d, &untouched, sizeof(d)) == 0,
			      "dest row %d: output written on failure", r->id);
			continue;
		}
		inet_pton(r->family, r->want_addr, want);
		CHECK(d.family == r->family && d.port == r->port &&
			      memcmp(d.addr, want, sizeof(want)) == 0,
		      "dest row %d: family, address (unused bytes zero) and port", r->id);
	}
}

/*
 * The candidates of a SYN: its own destination first, then the entry's
 * public ones in their order, an address alone with the entry's port.
 */
static void test_knock_dests(void)
{
	static const char *const pub[] = { "198.51.100.1", "198.51.100.1:2200",
					   "[2001:db8::1]:443", "2001:db8::2" };
	static const struct {
		int family;
		const char *addr;
		uint16_t port;
	} want[] = {
		{ AF_INET, "192.0.2.10", 22 }, { AF_INET, "198.51.100.1", 22 },
		{ AF_INET, "198.51.100.1", 2200 }, { AF_INET6, "2001:db8::1", 443 },
		{ AF_INET6, "2001:db8::2", 22 },
	};
	struct conf *c = malloc(sizeof(*c));
	struct dest d[MATCH_MAX_DESTS];
	uint8_t own[4] = { 192, 0, 2, 10 };
	size_t n;

	if (!c) {
		CHECK(0, "out of memory");
		return;
	}
	base(c);
	n = match_knock_dests(&c->protect[0], AF_INET, own, 22, d);
	CHECK(n == 1 && d[0].family == AF_INET && d[0].port == 22 &&
		      memcmp(d[0].addr, own, 4) == 0,
	      "knock dests: no public list, the packet's own only");
	for (size_t i = 0; i < sizeof(pub) / sizeof(pub[0]); i++)
		CHECK(dest_read(pub[i], &c->protect[0].pub[i].dst) == DEST_OK, "knock dests: %s",
		      pub[i]);
	c->protect[0].npublic = sizeof(pub) / sizeof(pub[0]);
	n = match_knock_dests(&c->protect[0], AF_INET, own, 22, d);
	CHECK_EQ_U(n, sizeof(want) / sizeof(want[0]), "knock dests: count");
	for (size_t i = 0; i < n && i < sizeof(want) / sizeof(want[0]); i++) {
		uint8_t a[16] = { 0 };

		inet_pton(want[i].family, want[i].addr, a);
		CHECK(d[i].family == want[i].family && d[i].port == want[i].port &&
			      memcmp(d[i].addr, a, want[i].family == AF_INET ? 4 : 16) == 0,
		      "knock dests: candidate %zu is %s port %u", i, want[i].addr,
		      (unsigned)want[i].port);
	}
	/* A count past the array is never read past it. */
	c->protect[0].npublic = CONF_MAX_PUBLIC + 5;
	CHECK_EQ_U(match_knock_dests(&c->protect[0], AF_INET, own, 22, d), MATCH_MAX_DESTS,
		   "knock dests: bounded");
	free(c);
}

static const struct b64_row {
	int id;
	const char *text;
	int want_rc;
	size_t want_len;
	const char *want_err;
} b64_rows[] = {
	{ 1, "TWFnaWMgc2VjcmV0IHN0cmluZw==", 0, 19, NULL },
	{ 2, "TWFnaWMgc2VjcmV0IHN0cmluZw==\n", 0, 19, NULL },
	{ 3, "  TWFnaWMgc2VjcmV0IHN0cmluZw==\r\n\n", 0, 19, NULL },
	{ 4, "TWFnaWMgc2VjcmV0IHN0cmluZw", -EINVAL, 0,
	  "is not one line of standard base64 (RFC 4648, with padding)" },
	{ 5, "TWFnaWMgc2Vj\ncmV0IHN0cmluZw==", -EINVAL, 0,
	  "is not one line of standard base64 (RFC 4648, with padding)" },
	{ 6, "TWFnaWMgc2VjcmV0IHN0cmluZw-_", -EINVAL, 0,
	  "is not one line of standard base64 (RFC 4648, with padding)" },
	{ 7, "", -EINVAL, 0, "is empty" },
	{ 8, " \n", -EINVAL, 0, "is empty" },
	{ 9, "QQ==", 0, 1, NULL },
	{ 10, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
	  0, 64, NULL },
	{ 11, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
	  -EINVAL, 0, "holds 65 bytes; a key is 1..64 bytes" },
	{ 12, "====", -EINVAL, 0, "is not one line of standard base64 (RFC 4648, with padding)" },
};

static void test_key_decode(void)
{
	for (size_t i = 0; i < sizeof(b64_rows) / sizeof(b64_rows[0]); i++) {
		const struct b64_row *r = &b64_rows[i];
		uint8_t out[KG_KEY_MAX];
		size_t len = 12345;
		char err[128] = "";
		int rc = key_decode_base64(r->text, strlen(r->text), out, &len, err, sizeof(err));

		CHECK_EQ_U((unsigned)rc, (unsigned)r->want_rc, "base64 row %d: rc (%s)", r->id,
			   err);
		if (r->want_rc == 0) {
			CHECK_EQ_U(len, r->want_len, "base64 row %d: length", r->id);
		} else {
			CHECK_EQ_U(len, 12345, "base64 row %d: length written on failure", r->id);
			CHECK(strcmp(err, r->want_err) == 0, "base64 row %d: \"%s\"", r->id, err);
		}
	}
	{
		uint8_t out[KG_KEY_MAX];
		size_t len = 0;
		int rc = key_decode_base64("TWFnaWMgc2VjcmV0IHN0cmluZw==", 28, out, &len, NULL, 0);

		CHECK(rc == 0 && len == 19 && memcmp(out, "Magic secret string", 19) == 0,
		      "base64: decoded bytes");
	}
}

static void test_names(void)
{
	CHECK(strcmp(kg_mode_name(KG_MODE_KNOCK), "knock") == 0, "kg_mode_name knock");
	CHECK(strcmp(kg_mode_name(KG_MODE_NATIVE), "native") == 0, "kg_mode_name native");
}

/*
 * Owners and modes: a file holding a secret (a key file, or a configuration
 * with a text secret) may be neither read nor written by group or others; any
 * configuration may be read by them but not written; root's files and the
 * running user's own pass, nobody else's.
 */
static void test_file_rule(void)
{
	static const struct {
		int n;
		mode_t mode;		/* type and permission bits */
		uid_t uid, euid;
		mode_t forbidden;
		enum file_rule want;
	} rows[] = {
		{ 1, S_IFREG | 0600, 0, 0, FILE_SECRET_FORBIDDEN, FILE_OK },
		{ 2, S_IFREG | 0400, 0, 0, FILE_SECRET_FORBIDDEN, FILE_OK },
		{ 3, S_IFREG | 0644, 0, 0, FILE_SECRET_FORBIDDEN, FILE_MODE },
		{ 4, S_IFREG | 0640, 0, 0, FILE_SECRET_FORBIDDEN, FILE_MODE },
		{ 5, S_IFREG | 0604, 0, 0, FILE_SECRET_FORBIDDEN, FILE_MODE },
		{ 6, S_IFREG | 0620, 0, 0, FILE_SECRET_FORBIDDEN, FILE_MODE },
		{ 7, S_IFREG | 0601, 0, 0, FILE_SECRET_FORBIDDEN, FILE_MODE },
		/* A secret in a file someone else owns: they can read it, or swap it. */
		{ 8, S_IFREG | 0600, 65534, 0, FILE_SECRET_FORBIDDEN, FILE_OWNER },
		{ 9, S_IFREG | 0600, 65534, 1000, FILE_SECRET_FORBIDDEN, FILE_OWNER },
		/* knockgw -n as a user, on a file of that user's or of root's. */
		{ 10, S_IFREG | 0600, 1000, 1000, FILE_SECRET_FORBIDDEN, FILE_OK },
		{ 11, S_IFREG | 0600, 0, 1000, FILE_SECRET_FORBIDDEN, FILE_OK },
		{ 12, S_IFREG | 0644, 1000, 1000, FILE_SECRET_FORBIDDEN, FILE_MODE },
		/* The owner is checked before the mode: chmod would not help. */
		{ 13, S_IFREG | 0666, 65534, 0, FILE_SECRET_FORBIDDEN, FILE_OWNER },
		{ 14, S_IFIFO | 0600, 0, 0, FILE_SECRET_FORBIDDEN, FILE_NOT_REGULAR },
		{ 15, S_IFDIR | 0700, 0, 0, FILE_SECRET_FORBIDDEN, FILE_NOT_REGULAR },
		{ 16, S_IFCHR | 0600, 0, 0, FILE_CONFIG_FORBIDDEN, FILE_NOT_REGULAR },
		/* A configuration without a secret: 0644 as /etc has it, never writable by others. */
		{ 17, S_IFREG | 0644, 0, 0, FILE_CONFIG_FORBIDDEN, FILE_OK },
		{ 18, S_IFREG | 0600, 0, 0, FILE_CONFIG_FORBIDDEN, FILE_OK },
		{ 19, S_IFREG | 0664, 0, 0, FILE_CONFIG_FORBIDDEN, FILE_MODE },
		{ 20, S_IFREG | 0646, 0, 0, FILE_CONFIG_FORBIDDEN, FILE_MODE },
		{ 21, S_IFREG | 0644, 65534, 0, FILE_CONFIG_FORBIDDEN, FILE_OWNER },
		{ 22, S_IFREG | 0644, 1000, 1000, FILE_CONFIG_FORBIDDEN, FILE_OK },
		{ 23, S_IFREG | 0644, 1000, 1001, FILE_CONFIG_FORBIDDEN, FILE_OWNER },
		/* Set-id and sticky bits grant no access: they are not group/other bits. */
		{ 24, S_IFREG | 04600, 0, 0, FILE_SECRET_FORBIDDEN, FILE_OK },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct stat st;

		memset(&st, 0, sizeof(st));
		st.st_mode = rows[i].mode;
		st.st_uid = rows[i].uid;
		CHECK_EQ_U(file_rule_check(&st, rows[i].euid, rows[i].forbidden), rows[i].want,
			   "file rule row %d", rows[i].n);
	}
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	test_validate();
	test_load();
	test_load_values();
	test_match();
	test_overflow();
	test_prefix_parse();
	test_prefix_contains();
	test_dest_read();
	test_knock_dests();
	test_key_decode();
	test_names();
	test_file_rule();
	return unit_done("conf");
}
