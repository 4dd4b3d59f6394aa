/*
 * test_conf.c - conf_validate() on structs built here, prefix_parse() and
 * prefix_contains(), and the base64 key decoder.
 *
 * conf_validate() is pure, so every row starts from one valid struct, changes
 * one thing and states how many errors it must produce and what the first one
 * says.  No files, no keyring: the validator only looks at key lengths.  The
 * ownership and mode rule of key and configuration files is pure as well
 * (file_rule_check() on a struct stat), so other owners need no chown here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "conf.h"
#include "keys.h"
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
		.line = 20, .line_port = 21, .line_keys = 22, .port = 22, .mode = KG_MODE_NATIVE,
		.nkeys = 1, .keys = { K32 }, .on_fail = ON_FAIL_RESET, .window = 30,
		.replay = true, .replay_ttl = 90,
	};
	c->nknock = 1;
	c->knock[0] = (struct conf_knock){
		.line = 30, .line_dst = 31, .port = 22, .mode = KG_MODE_NATIVE, .key = K32,
		.window = 30,
	};
	prefix_parse("192.0.2.10", &c->knock[0].dst);
}

/* A second protect entry like the first, on another line. */
static struct conf_protect *add_protect(struct conf *c, uint16_t port)
{
	struct conf_protect *p = &c->protect[c->nprotect++];

	*p = c->protect[0];
	p->line = 40;
	p->line_port = 41;
	p->port = port;
	return p;
}

static struct conf_knock *add_knock(struct conf *c, const char *dst, uint16_t port)
{
	struct conf_knock *k = &c->knock[c->nknock++];

	*k = c->knock[0];
	k->line = 50;
	k->line_dst = 51;
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
	c->line_queue_count = 3;
}

static void queue_15_2(struct conf *c)
{
	c->queue_num = 65534;
	c->queue_count = 2;
}

static void queue_count0(struct conf *c)
{
	c->queue_count = 0;
	c->line_queue_count = 3;
}

static void queue_count17(struct conf *c)
{
	c->queue_count = 17;
}

static void queue_maxlen15(struct conf *c)
{
	c->queue_maxlen = 15;
}

static void table_empty(struct conf *c)
{
	c->table[0] = '\0';
	c->line_table = 5;
}

static void table_dash(struct conf *c)
{
	snprintf(c->table, sizeof(c->table), "knock-gw");
}

static void table_32(struct conf *c)
{
	memset(c->table, 'a', 32);
	c->table[32] = '\0';
}

static void table_unterminated(struct conf *c)
{
	memset(c->table, 'a', sizeof(c->table));
}

static void sock_relative(struct conf *c)
{
	snprintf(c->control_socket, sizeof(c->control_socket), "x.sock");
}

static void sock_107(struct conf *c)
{
	memset(c->control_socket, 'a', 107);
	c->control_socket[0] = '/';
	c->control_socket[107] = '\0';
}
static void sock_unterminated(struct conf *c)
{
	memset(c->control_socket, 'a', sizeof(c->control_socket));
	c->control_socket[0] = '/';
}

static void flows_63(struct conf *c)
{
	c->max_flows = 63;
}

static void replay_big(struct conf *c)
{
	c->max_replay = 4194305;
}

static void timeout_0(struct conf *c)
{
	c->integrity_timeout = 0;
}

static void timeout_301(struct conf *c)
{
	c->integrity_timeout = 301;
}

static void hold_small(struct conf *c)
{
	c->hold_bytes = 4095;
}

static void hold_flow_above(struct conf *c)
{
	c->hold_bytes = 4096;
	c->hold_flow_bytes = 8192;
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

static void key_name_space(struct conf *c)
{
	snprintf(c->keys[K19].name, sizeof(c->keys[K19].name), "k 19");
}

static void key_name_ok(struct conf *c)
{
	snprintf(c->keys[K19].name, sizeof(c->keys[K19].name), "a.b-c_D9");
}

static void port_0(struct conf *c)
{
	c->protect[0].port = 0;
}

static void port_0_noline(struct conf *c)
{
	c->protect[0].port = 0;
	c->protect[0].line_port = 0;
}

static void nkeys_0(struct conf *c)
{
	c->protect[0].nkeys = 0;
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
static void nkeys_17(struct conf *c)
{
	many_keys(c, 20);
	c->protect[0].nkeys = 17;	/* only 16 fit; the validator must not read on */
	for (int i = 0; i < CONF_MAX_ENTRY_KEYS; i++)
		c->protect[0].keys[i] = 3 + i;
}
static void nkeys_16(struct conf *c)
{
	many_keys(c, 19);
	c->protect[0].nkeys = 16;
	for (int i = 0; i < CONF_MAX_ENTRY_KEYS; i++)
		c->protect[0].keys[i] = 3 + i;
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
	c->protect[0].line_window = 25;
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

static void window_big(struct conf *c)
{
	c->protect[0].window = 86401;
}

static void window_max(struct conf *c)
{
	c->protect[0].window = 86400;
	c->protect[0].replay_ttl = 259200;
}

static void ttl_89(struct conf *c)
{
	c->protect[0].replay_ttl = 89;
	c->protect[0].line_replay_ttl = 26;
}

static void ttl_window0(struct conf *c)
{
	c->protect[0].window = 0;
	c->protect[0].replay_ttl = 1;
}

static void ttl_0(struct conf *c)
{
	c->protect[0].window = 0;
	c->protect[0].replay_ttl = 0;
}

static void ttl_big(struct conf *c)
{
	c->protect[0].replay_ttl = 604801;
}

static void ttl_knock_short(struct conf *c)
{
	c->protect[0].mode = KG_MODE_KNOCK;
	c->protect[0].replay_ttl = 1;
}

static void integ_2049(struct conf *c)
{
	c->protect[0].integrity_len = 2049;
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

static void integ_knock_2049(struct conf *c)
{
	c->knock[0].integrity_len = 2049;
}

static void dup_port(struct conf *c)
{
	add_protect(c, 22);
}

static void other_port(struct conf *c)
{
	add_protect(c, 23);
}

static void dup_port_disjoint(struct conf *c)
{
	struct conf_protect *p = add_protect(c, 22);

	c->protect[0].naddrs = 1;
	prefix_parse("10.0.0.0/8", &c->protect[0].addrs[0]);
	p->naddrs = 2;
	prefix_parse("192.0.2.1", &p->addrs[0]);
	prefix_parse("2001:db8::1", &p->addrs[1]);
}
static void dup_port_overlap(struct conf *c)
{
	struct conf_protect *p = add_protect(c, 22);

	c->protect[0].naddrs = 1;
	prefix_parse("10.0.0.0/8", &c->protect[0].addrs[0]);
	p->naddrs = 2;
	prefix_parse("192.0.2.1", &p->addrs[0]);
	prefix_parse("10.1.2.3", &p->addrs[1]);
}
static void dup_port_v4_v6(struct conf *c)
{
	struct conf_protect *p = add_protect(c, 22);

	c->protect[0].naddrs = 1;
	prefix_parse("0.0.0.0/0", &c->protect[0].addrs[0]);
	p->naddrs = 1;
	prefix_parse("::/0", &p->addrs[0]);
}
static void dup_port_one_all(struct conf *c)
{
	struct conf_protect *p = add_protect(c, 22);

	p->naddrs = 1;
	prefix_parse("2001:db8::1", &p->addrs[0]);
}
static void naddrs_17(struct conf *c)
{
	c->protect[0].naddrs = 17;
}

static void dup_knock(struct conf *c)
{
	add_knock(c, "192.0.2.10", 22);
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
	c->protect[0].port = 0;
	c->knock[0].port = 0;
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
	{ 5, queue_count0, 1, "t.conf:3: queue.count 0 out of range 1..16" },
	{ 6, queue_count17, 1, "t.conf: queue.count 17 out of range 1..16" },
	{ 7, queue_maxlen15, 1, "t.conf: queue.maxlen 15 out of range 16..1048576" },
	{ 8, table_empty, 1, "t.conf:5: table \"\" must be 1..32 characters of A-Z a-z 0-9 _" },
	{ 9, table_dash, 1, "t.conf: table \"knock-gw\" must be 1..32 characters of A-Z a-z 0-9 _" },
	{ 10, table_32, 0, NULL },
	{ 11, table_unterminated, 1, NULL },
	{ 12, sock_relative, 1, "t.conf: control_socket \"x.sock\" must be an absolute path" },
	{ 13, sock_107, 0, NULL },
	{ 14, sock_unterminated, 1, "t.conf: control_socket \"...\" does not fit the 108 bytes of sun_path" },
	{ 15, flows_63, 1, "t.conf: limits.flows 63 out of range 64..4194304" },
	{ 16, replay_big, 1, "t.conf: limits.replay 4194305 out of range 64..4194304" },
	{ 17, timeout_0, 1, "t.conf: limits.integrity_timeout 0 out of range 1..300" },
	{ 18, timeout_301, 1, "t.conf: limits.integrity_timeout 301 out of range 1..300" },
	{ 19, hold_small, 1, "t.conf: limits.hold_bytes 4095 out of range 4096..1073741824" },
	{ 20, hold_flow_above, 1, "t.conf: limits.hold_flow_bytes 8192 exceeds limits.hold_bytes 4096" },
	{ 21, key_len0, 1, "t.conf:11: key \"k19\" is 0 bytes; keys are 1..64 bytes" },
	{ 22, key_len65, 1, "t.conf:11: key \"k19\" is 65 bytes; keys are 1..64 bytes" },
	{ 23, key_broken, 0, NULL },
	{ 24, key_dup, 1, "t.conf:12: duplicate key name \"k32\" (first at line 10)" },
	{ 25, key_name_space, 1, "t.conf:11: key name \"k 19\" must be 1..32 characters of A-Z a-z 0-9 _ . -" },
	{ 26, key_name_ok, 0, NULL },
	{ 27, port_0, 1, "t.conf:21: port 0 out of range 1..65535" },
	{ 28, port_0_noline, 1, "t.conf:20: port 0 out of range 1..65535" },
	{ 29, nkeys_0, 1, "t.conf:22: protect entry names 0 keys; it needs 1..16" },
	{ 30, nkeys_17, 1, "t.conf:22: protect entry names 17 keys; it needs 1..16" },
	{ 31, nkeys_16, 0, NULL },
	{ 32, key_index_neg, 1, "t.conf:22: protect entry names key index -1, which does not exist" },
	{ 33, key_index_big, 1, "t.conf:30: knock entry names key index 3, which does not exist" },
	{ 34, native_k19, 1, "t.conf:22: key \"k19\" is 19 bytes; mode \"native\" needs exactly 32" },
	{ 35, native_k64_knock, 1, "t.conf:30: key \"k64\" is 64 bytes; mode \"native\" needs exactly 32" },
	{ 36, knock_k19, 0, NULL },
	{ 37, knock_window, 1, "t.conf:25: \"window\" applies only to mode \"native\"" },
	{ 38, knock_window_client, 1, "t.conf:30: \"window\" applies only to mode \"native\"" },
	{ 39, native_window_set, 0, NULL },
	{ 40, window_big, 1, "t.conf:20: window 86401 out of range 0..86400" },
	{ 41, window_max, 0, NULL },
	{ 42, ttl_89, 1, "t.conf:26: replay_ttl 89 is below 3 windows (90 seconds) of mode \"native\"" },
	{ 43, ttl_window0, 0, NULL },
	{ 44, ttl_0, 1, "t.conf:20: replay_ttl 0 out of range 1..604800" },
	{ 45, ttl_big, 1, "t.conf:20: replay_ttl 604801 out of range 1..604800" },
	{ 46, ttl_knock_short, 0, NULL },
	{ 47, integ_2049, 1, "t.conf:20: integrity_len 2049 out of range 0..2048" },
	{ 48, integ_2048, 0, NULL },
	{ 49, integ_hold, 1, "t.conf:20: integrity_len 2048 exceeds limits.hold_flow_bytes 1024" },
	{ 50, integ_knock_2049, 1, "t.conf:30: integrity_len 2049 out of range 0..2048" },
	{ 51, dup_port, 1, "t.conf:41: duplicate protect entry for port 22 (first at line 20)" },
	{ 52, other_port, 0, NULL },
	{ 53, dup_port_disjoint, 0, NULL },
	{ 54, dup_port_overlap, 1, "t.conf:41: duplicate protect entry for port 22 (first at line 20)" },
	{ 55, dup_port_v4_v6, 0, NULL },
	{ 56, dup_port_one_all, 1, "t.conf:41: duplicate protect entry for port 22 (first at line 20)" },
	{ 57, naddrs_17, 1, "t.conf:20: protect entry has 17 addresses; at most 16" },
	{ 58, dup_knock, 1, "t.conf:51: duplicate knock entry for 192.0.2.10 port 22 (first at line 30)" },
	{ 59, dup_knock_masked, 1, "t.conf:51: duplicate knock entry for 192.0.2.0/24 port 22 (first at line 30)" },
	{ 60, knock_host_in_prefix, 0, NULL },
	{ 61, knock_other_port, 0, NULL },
	{ 62, knock_v6, 0, NULL },
	{ 63, key_twice, 1, "t.conf:22: key \"k32\" is listed twice" },
	{ 64, two_errors, 2, "t.conf:21: port 0 out of range 1..65535" },
	{ 65, nprotect_big, 1, "t.conf: 257 protect entries; at most 256" },
	{ 66, nknock_big, 1, "t.conf: 257 knock entries; at most 256" },
	{ 67, nkeys_big, 1, "t.conf: 257 keys; at most 256" },
};

static void test_validate(void)
{
	struct conf *c = malloc(sizeof(*c));
	struct conf_errors *errs = malloc(sizeof(*errs));

	if (!c || !errs) {
		CHECK(0, "out of memory");
		free(c);
		free(errs);
		return;
	}
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
	struct conf *c = malloc(sizeof(*c));
	struct conf_errors *errs = calloc(1, sizeof(*errs));

	if (!c || !errs) {
		CHECK(0, "out of memory");
		free(c);
		free(errs);
		return;
	}
	base(c);
	c->nknock = 40;
	for (size_t i = 0; i < c->nknock; i++) {
		c->knock[i] = c->knock[0];
		c->knock[i].port = 0;
		c->knock[i].dst.addr[3] = (uint8_t)i;
	}
	CHECK_EQ_U(conf_validate(c, errs), 40, "overflow: count includes the dropped ones");
	CHECK_EQ_U(errs->n, CONF_MAX_ERRORS, "overflow: recorded");
	CHECK(errs->overflow, "overflow: flagged");
	free(c);
	free(errs);
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
	test_validate();
	test_overflow();
	test_prefix_parse();
	test_prefix_contains();
	test_key_decode();
	test_names();
	test_file_rule();
	return unit_done("conf");
}
