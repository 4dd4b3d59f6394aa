/*
 * conf_schema.c - the schema of knockgw.conf as one table of rows
 * (struct srow, conf_walk.h), and what the rows cannot say by themselves.
 *
 * Each setting is checked once, here, at its own line: its type, its range
 * or words, and the one rule beyond a range that a few have (a table name's
 * characters, a mark's bits, an absolute socket path, a key name that
 * exists).  conf_validate() is left with what involves more than one
 * setting.  An entry that failed to load is not stored, so conf_validate()
 * never reports the same mistake again in other words.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <syslog.h>

#include "config/read/conf_keys.h"
#include "config/read/conf_schema.h"
#include "common/isn.h"

enum {
	DEFAULT_WINDOW = 30,
	DEFAULT_REPLAY_TTL = 3600,	/* knock mode: one hour */
};

/* Words are stored as 32-bit values (store_uint in conf_walk.c). */
_Static_assert(sizeof(enum kg_mode) == 4 && sizeof(enum on_fail) == 4 &&
		       sizeof(enum translate) == 4 && sizeof(enum closed_ports) == 4 &&
		       sizeof(enum timestamps) == 4 &&
		       sizeof(int) == 4,
	       "words are stored as 32-bit values");
_Static_assert(sizeof(((struct conf *)0)->control_socket) ==
		       sizeof(((struct sockaddr_un *)0)->sun_path),
	       "control_socket must match sun_path");

/* Where a row's value goes: a field of the struct T being loaded. */
#define AT(T, F) .off = offsetof(T, F), .size = sizeof(((T *)0)->F)
#define INT(T, F, lo, hi) .type = ST_INT, .min = (lo), .max = (hi), AT(T, F)
#define WORD(T, F, w) .type = ST_WORD, .words = (w), AT(T, F)
#define BOOL(T, F) .type = ST_BOOL, AT(T, F)
#define STR(T, F) .type = ST_STRING, AT(T, F)
/* The value an unwritten setting has (a string's for STR rows). */
#define DEF(v) .has_def = true, .def = (v)
#define DEFS(v) .has_def = true, .def_str = (v)
#define END { .name = NULL }

static const struct word mode_words[] = {
	{ "knock", KG_MODE_KNOCK }, { "native", KG_MODE_NATIVE }, { NULL, 0 },
};
static const struct word on_fail_words[] = {
	{ "reset", ON_FAIL_RESET }, { "drop", ON_FAIL_DROP }, { NULL, 0 },
};
static const struct word translate_words[] = {
	{ "kernel", TRANSLATE_KERNEL }, { "user", TRANSLATE_USER }, { NULL, 0 },
};
static const struct word closed_words[] = {
	{ "kernel", CLOSED_KERNEL }, { "daemon", CLOSED_DAEMON }, { NULL, 0 },
};
static const struct word on_stop_words[] = {
	{ "hide", ON_STOP_HIDE }, { "open", ON_STOP_OPEN }, { NULL, 0 },
};
static const struct word timestamps_words[] = {
	{ "optional", TIMESTAMPS_OPTIONAL }, { "required", TIMESTAMPS_REQUIRED }, { NULL, 0 },
};
static const struct word log_words[] = {
	{ "debug", LOG_DEBUG }, { "info", LOG_INFO }, { "notice", LOG_NOTICE },
	{ "warning", LOG_WARNING }, { "error", LOG_ERR }, { NULL, 0 },
};

/* ------------------------------------------------------------------ */
/* Rules beyond a range */

static bool check_mark_mask(struct loader *ld, const config_setting_t *s, long long v)
{
	struct marks mk;

	if (marks_make((uint32_t)v, MARKS_CTMARK_DEFAULT, &mk) == 0)
		return true;
	conf_lerr(ld, s, "rules.mark_mask 0x%08x must be one run of at least %d bits", (unsigned)v,
		  MARKS_MARK_BITS_MIN);
	return false;
}

static bool check_ct_mark_bit(struct loader *ld, const config_setting_t *s, long long v)
{
	struct marks mk;

	if (marks_make(MARKS_MARK_MASK_DEFAULT, (uint32_t)v, &mk) == 0)
		return true;
	conf_lerr(ld, s, "rules.ct_mark_bit 0x%08x must be exactly one bit", (unsigned)v);
	return false;
}

/* nft takes more in a table name; these survive any shell and log line unquoted. */
bool conf_table_ok(const char *s)
{
	return conf_name_ok(s, CONF_NAME_MAX - 1, "_");
}

const char *conf_socket_why(const char *s)
{
	if (strlen(s) >= sizeof(((struct conf *)0)->control_socket))
		return "does not fit the 108 bytes of sun_path";
	if (s[0] != '/')
		return "must be an absolute path";
	return NULL;
}

static bool store_table(struct loader *ld, const config_setting_t *s, const char *str, void *obj)
{
	struct conf *c = obj;

	if (!conf_table_ok(str)) {
		conf_lerr(ld, s, "table \"%s\" must be 1..32 characters of A-Z a-z 0-9 _", str);
		return false;
	}
	snprintf(c->table, sizeof(c->table), "%s", str);
	return true;
}

static bool store_socket(struct loader *ld, const config_setting_t *s, const char *str, void *obj)
{
	struct conf *c = obj;
	const char *why = conf_socket_why(str);

	if (why) {
		conf_lerr(ld, s, "control_socket \"%s\" %s", str, why);
		return false;
	}
	snprintf(c->control_socket, sizeof(c->control_socket), "%s", str);
	return true;
}

/* Names in "keys = [ ... ]" to indexes; unknown ones are errors at their own line. */
static bool store_entry_keys(struct loader *ld, const config_setting_t *arr, const char *str,
			     void *obj)
{
	struct conf_protect *p = obj;
	size_t n = (size_t)config_setting_length(arr);
	bool ok = true;

	(void)str;
	if (n < 1 || n > CONF_MAX_ENTRY_KEYS) {
		conf_lerr(ld, arr, "protect entry names %zu keys; it needs 1..%d", n,
			  CONF_MAX_ENTRY_KEYS);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(arr, (unsigned)i);
		const char *name = config_setting_get_string(e);
		int idx = conf_find_key(ld->c, name);

		if (idx < 0) {
			conf_lerr(ld, e, "protect entry names unknown key \"%s\"", name);
			ok = false;
		}
		p->keys[i] = idx;
	}
	p->nkeys = n;
	return ok;
}

static bool load_prefix(struct loader *ld, const config_setting_t *s, const char *what,
			const char *text, struct prefix *ret)
{
	switch (prefix_read(text, ret)) {
	case PREFIX_OK:
		return true;
	case PREFIX_BAD_ADDR:
		conf_lerr(ld, s, "%s \"%s\" is not an IPv4 or IPv6 address", what, text);
		break;
	case PREFIX_BAD_LEN:
		conf_lerr(ld, s, "%s \"%s\" has a prefix length out of range 0..%u", what, text,
			  strchr(text, ':') ? 128u : 32u);
		break;
	}
	return false;
}

static bool store_addresses(struct loader *ld, const config_setting_t *arr, const char *str,
			    void *obj)
{
	struct conf_protect *p = obj;
	size_t n = (size_t)config_setting_length(arr);
	bool ok = true;

	(void)str;
	if (n > CONF_MAX_ADDRS) {
		conf_lerr(ld, arr, "protect entry has %zu addresses; at most %d", n,
			  CONF_MAX_ADDRS);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(arr, (unsigned)i);

		ok &= load_prefix(ld, e, "address", config_setting_get_string(e), &p->addrs[i]);
	}
	p->naddrs = n;
	return ok;
}

/*
 * "public": destinations clients dial that a NAT outside this host rewrites
 * (match.h dest_read); each element is checked at its own line.  Duplicates
 * depend on the entry's port, so conf_validate() looks for them.
 */
static bool store_public(struct loader *ld, const config_setting_t *arr, const char *str,
			 void *obj)
{
	static const char *const why[] = {
		[DEST_BAD_ADDR] = "is not an IP address, \"IPv4:port\" or \"[IPv6]:port\"",
		[DEST_PREFIX] = "is a prefix; a public destination is one address",
		[DEST_BAD_PORT] = "has a port that is not a number 1..65535",
		[DEST_PORT_ZERO] = "has port 0; ports are 1..65535",
		[DEST_V6_PORT] = "is an IPv6 address and a port: write \"[address]:port\"",
		[DEST_BRACKETS_ALONE] = "has brackets but no port: write \"[address]:port\", "
					"or the address alone",
		[DEST_BRACKETS_V4] = "is an IPv4 address in brackets: write \"address:port\"",
		[DEST_MAPPED] = "is an IPv4-mapped IPv6 address, which no packet carries: "
				"write the IPv4 address",
	};
	struct conf_protect *p = obj;
	size_t n = (size_t)config_setting_length(arr);
	bool ok = true;

	(void)str;
	if (n > CONF_MAX_PUBLIC) {
		conf_lerr(ld, arr, "protect entry has %zu public destinations; at most %d", n,
			  CONF_MAX_PUBLIC);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(arr, (unsigned)i);
		const char *text = config_setting_get_string(e);
		enum dest_err r = dest_read(text, &p->pub[i].dst);

		p->pub[i].line = conf_setting_line(e);
		if (r != DEST_OK) {
			conf_lerr(ld, e, "public \"%s\" %s", text, why[r]);
			ok = false;
		}
	}
	p->npublic = n;
	return ok;
}

static bool store_dst(struct loader *ld, const config_setting_t *s, const char *str, void *obj)
{
	return load_prefix(ld, s, "dst", str, &((struct conf_knock *)obj)->dst);
}

/*
 * The sources a gateway knocks for: each a prefix, at most CONF_MAX_FROM,
 * no two sharing an address (one would be dead, or a typo), each reported
 * at its own line.
 */
static bool store_from(struct loader *ld, const config_setting_t *arr, const char *str, void *obj)
{
	struct conf_knock *k = obj;
	size_t n = (size_t)config_setting_length(arr);
	bool ok = true;

	(void)str;
	if (n > CONF_MAX_FROM) {
		conf_lerr(ld, arr, "knock entry has %zu from prefixes; at most %d", n,
			  CONF_MAX_FROM);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(arr, (unsigned)i);
		const char *text = config_setting_get_string(e);

		if (!load_prefix(ld, e, "from", text, &k->from[i])) {
			ok = false;
			continue;
		}
		for (size_t j = 0; j < i; j++) {
			if (k->from[j].family != 0 && prefix_overlap(&k->from[j], &k->from[i])) {
				char a[INET6_ADDRSTRLEN + 4];

				prefix_format(&k->from[j], a, sizeof(a));
				conf_lerr(ld, e,
					  "from \"%s\" overlaps from \"%s\" of the same entry",
					  text, a);
				ok = false;
				break;
			}
		}
	}
	k->nfrom = n;
	return ok;
}

/*
 * The interfaces a gateway's `from` SYNs may arrive on: names as the kernel
 * allows them (1..15 characters, here of A-Z a-z 0-9 _ . -), at most
 * CONF_MAX_FROM_IFACES, no duplicates, each reported at its own line.
 */
static bool store_from_ifaces(struct loader *ld, const config_setting_t *arr, const char *str,
			      void *obj)
{
	struct conf_knock *k = obj;
	size_t n = (size_t)config_setting_length(arr);
	bool ok = true;

	(void)str;
	if (n > CONF_MAX_FROM_IFACES) {
		conf_lerr(ld, arr, "knock entry has %zu from_interfaces; at most %d", n,
			  CONF_MAX_FROM_IFACES);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(arr, (unsigned)i);
		const char *name = config_setting_get_string(e);

		if (!conf_name_ok(name, CONF_IFNAME_MAX - 1, "_.-") || strcmp(name, ".") == 0 ||
		    strcmp(name, "..") == 0) {
			conf_lerr(ld, e,
				  "from_interfaces \"%s\" is no interface name (1..%d characters "
				  "of A-Z a-z 0-9 _ . -)", name, CONF_IFNAME_MAX - 1);
			ok = false;
			continue;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(k->ifaces[j], name) == 0) {
				conf_lerr(ld, e, "from_interfaces names \"%s\" twice", name);
				ok = false;
				break;
			}
		}
		snprintf(k->ifaces[i], sizeof(k->ifaces[i]), "%s", name);
	}
	k->nifaces = n;
	return ok;
}

static bool store_key_ref(struct loader *ld, const config_setting_t *s, const char *str,
			  void *obj)
{
	struct conf_knock *k = obj;

	k->key = conf_find_key(ld->c, str);
	if (k->key >= 0)
		return true;
	conf_lerr(ld, s, "knock entry names unknown key \"%s\"", str);
	return false;
}

/* ------------------------------------------------------------------ */
/* The table: settings in the order they are loaded (and reported) */

/*
 * Each row carries its default (DEF, DEFS: what an unwritten setting is;
 * conf_defaults() applies them) and, when a reload cannot take a change of
 * it, why (.restart; conf_restart_reason() compares by them).
 */
static const struct srow queue_rows[] = {
	{ "num", INT(struct conf, queue_num, 0, 65535), DEF(0), .restart = RS_QUEUE,
	  .line = CL_QUEUE_NUM },
	{ "count", INT(struct conf, queue_count, 1, 16), DEF(1), .restart = RS_QUEUE,
	  .line = CL_QUEUE_COUNT },
	{ "fail_open", BOOL(struct conf, fail_open), DEF(false), .restart = RS_QUEUE,
	  .line = CL_FAIL_OPEN },
	{ "maxlen", INT(struct conf, queue_maxlen, 16, 1048576), DEF(4096), .restart = RS_QUEUE },
	END,
};

static const struct srow rules_rows[] = {
	{ "manage", BOOL(struct conf, rules_manage), DEF(true), .restart = RS_MANAGE },
	{ "mark_mask", INT(struct conf, mark_mask, 1, 0xffffffffLL), .check = check_mark_mask,
	  DEF(MARKS_MARK_MASK_DEFAULT), .restart = RS_MARKS },
	{ "ct_mark_bit", INT(struct conf, ct_mark_bit, 1, 0xffffffffLL),
	  .check = check_ct_mark_bit, DEF(MARKS_CTMARK_DEFAULT), .restart = RS_MARKS },
	{ "ct_label", INT(struct conf, ct_label, 0, MARKS_CTLABEL_MAX), DEF(MARKS_CTLABEL_DEFAULT),
	  .restart = RS_CT_LABEL },
	{ "table", STR(struct conf, table), .store = store_table, DEFS("knockgw") },
	{ "refuse_port", INT(struct conf, refuse_port, 1, 65535), DEF(1), .line = CL_REFUSE_PORT },
	END,
};

static const struct srow limits_rows[] = {
	{ "flows", INT(struct conf, max_flows, 64, 4194304), DEF(65536), .restart = RS_LIMITS },
	{ "replay", INT(struct conf, max_replay, 64, 4194304), DEF(65536), .restart = RS_LIMITS },
	{ "hold_bytes", INT(struct conf, hold_bytes, 4096, 1073741824), DEF(4194304),
	  .line = CL_HOLD_BYTES },
	{ "hold_flow_bytes", INT(struct conf, hold_flow_bytes, 1024, 1048576), DEF(65536),
	  .line = CL_HOLD_FLOW_BYTES },
	{ "integrity_timeout", INT(struct conf, integrity_timeout, 1, 300), DEF(10) },
	END,
};

static const struct srow guessing_rows[] = {
	{ "threshold", INT(struct conf, guess_threshold, 0, 1000000), DEF(100) },
	{ "window", INT(struct conf, guess_window, 1, 86400), DEF(60) },
	{ "penalty", INT(struct conf, guess_penalty, 0, 86400), DEF(0) },
	END,
};

/* replay_ttl's default depends on mode and window: default_replay_ttl(). */
const struct srow conf_protect_rows[] = {
	{ "port", INT(struct conf_protect, port, 1, 65535), .required = true, .line = EL_PORT },
	{ "mode", WORD(struct conf_protect, mode, mode_words), .required = true },
	{ "keys", .type = ST_STRINGS, .store = store_entry_keys, .required = true,
	  .line = EL_KEYS },
	{ "integrity_len", INT(struct conf_protect, integrity_len, 0, INTEG_MAX_LEN), DEF(0),
	  .line = EL_INTEGRITY_LEN },
	{ "on_fail", WORD(struct conf_protect, on_fail, on_fail_words), DEF(ON_FAIL_RESET) },
	{ "window", INT(struct conf_protect, window, 0, 86400), DEF(DEFAULT_WINDOW),
	  .line = EL_WINDOW },
	{ "replay", BOOL(struct conf_protect, replay), DEF(true) },
	{ "replay_ttl", INT(struct conf_protect, replay_ttl, 1, 604800), .line = EL_REPLAY_TTL },
	{ "addresses", .type = ST_STRINGS, .store = store_addresses },
	{ "forward", BOOL(struct conf_protect, forward), DEF(false), .line = EL_FORWARD },
	{ "public", .type = ST_STRINGS, .store = store_public },
	{ "timestamps", WORD(struct conf_protect, timestamps, timestamps_words),
	  DEF(TIMESTAMPS_OPTIONAL) },
	END,
};

const struct srow conf_knock_rows[] = {
	{ "dst", .type = ST_STRING, .store = store_dst, .required = true, .line = EL_DST },
	{ "port", INT(struct conf_knock, port, 1, 65535), .required = true },
	{ "mode", WORD(struct conf_knock, mode, mode_words), .required = true },
	{ "key", .type = ST_STRING, .store = store_key_ref, .required = true, .line = EL_KEY },
	{ "integrity_len", INT(struct conf_knock, integrity_len, 0, INTEG_MAX_LEN), DEF(0),
	  .line = EL_INTEGRITY_LEN },
	{ "window", INT(struct conf_knock, window, 0, 86400), DEF(DEFAULT_WINDOW),
	  .line = EL_WINDOW },
	{ "from", .type = ST_STRINGS, .store = store_from, .line = EL_FROM },
	{ "from_interfaces", .type = ST_STRINGS, .store = store_from_ifaces,
	  .line = EL_FROM_IFACES },
	END,
};

/*
 * Keys before the entries, which name them.  A knock list that appears or
 * goes away needs a restart as translate does: it brings or ends the
 * client role's machinery.
 */
const struct srow conf_root_rows[] = {
	{ "queue", .type = ST_GROUP, .rows = queue_rows },
	{ "rules", .type = ST_GROUP, .rows = rules_rows },
	{ "log_level", WORD(struct conf, log_level, log_words), DEF(LOG_INFO) },
	{ "translate", WORD(struct conf, translate, translate_words), DEF(TRANSLATE_KERNEL),
	  .restart = RS_TRANSLATE },
	{ "closed_ports", WORD(struct conf, closed_ports, closed_words), DEF(CLOSED_DAEMON) },
	{ "on_stop", WORD(struct conf, on_stop, on_stop_words), DEF(ON_STOP_HIDE),
	  .line = CL_ON_STOP },
	{ "control_socket", STR(struct conf, control_socket), .store = store_socket,
	  DEFS(CONF_DEFAULT_SOCKET), .restart = RS_SOCKET },
	{ "limits", .type = ST_GROUP, .rows = limits_rows },
	{ "guessing", .type = ST_GROUP, .rows = guessing_rows },
	{ "keys", .type = ST_LIST, .max = CONF_MAX_KEYS, AT(struct conf, nkeys),
	  .list = SL_KEYS },
	{ "protect", .type = ST_LIST, .max = CONF_MAX_PROTECT, AT(struct conf, nprotect),
	  .list = SL_PROTECT },
	{ "knock", .type = ST_LIST, .max = CONF_MAX_KNOCK, AT(struct conf, nknock),
	  .list = SL_KNOCK, .restart = RS_TRANSLATE },
	END,
};

/* ------------------------------------------------------------------ */
/* Entries */

static uint32_t default_replay_ttl(enum kg_mode mode, uint32_t window)
{
	if (mode == KG_MODE_NATIVE && window > 0)
		return CONF_NATIVE_REPLAY_WINDOWS * window;
	return DEFAULT_REPLAY_TTL;
}

static void load_protect(struct loader *ld, const config_setting_t *s)
{
	static const struct scope sc = { "protect", true };
	struct conf *c = ld->c;
	struct conf_protect p;
	size_t before = ld->nerr;

	memset(&p, 0, sizeof(p));
	conf_rows_defaults(conf_protect_rows, &p);
	p.line = conf_setting_line(s);
	if (!config_setting_is_group(s)) {
		conf_lerr(ld, s, "\"protect\" entries must be groups { port = ...; ... }");
		return;
	}
	conf_check_unknown_rows(ld, s, conf_protect_rows, "protect");
	conf_walk(ld, s, conf_protect_rows, &sc, &p, p.lines, NULL);
	if (ld->nerr != before)
		return;
	p.has_window = p.lines[EL_WINDOW] != 0;
	if (!p.lines[EL_REPLAY_TTL])
		p.replay_ttl = default_replay_ttl(p.mode, p.window);
	c->protect[c->nprotect++] = p;
}

static void load_knock(struct loader *ld, const config_setting_t *s)
{
	static const struct scope sc = { "knock", true };
	struct conf *c = ld->c;
	struct conf_knock k;
	size_t before = ld->nerr;

	memset(&k, 0, sizeof(k));
	conf_rows_defaults(conf_knock_rows, &k);
	k.line = conf_setting_line(s);
	k.key = -1;		/* none yet: "key" is required, and stores its index */
	if (!config_setting_is_group(s)) {
		conf_lerr(ld, s, "\"knock\" entries must be groups { dst = ...; ... }");
		return;
	}
	conf_check_unknown_rows(ld, s, conf_knock_rows, "knock");
	conf_walk(ld, s, conf_knock_rows, &sc, &k, k.lines, NULL);
	if (ld->nerr != before)
		return;
	k.has_window = k.lines[EL_WINDOW] != 0;
	c->knock[c->nknock++] = k;
}

static void load_protect_list(struct loader *ld, const config_setting_t *list)
{
	for (int i = 0; i < config_setting_length(list) && i < CONF_MAX_PROTECT; i++)
		load_protect(ld, config_setting_get_elem(list, (unsigned)i));
}

static void load_knock_list(struct loader *ld, const config_setting_t *list)
{
	for (int i = 0; i < config_setting_length(list) && i < CONF_MAX_KNOCK; i++)
		load_knock(ld, config_setting_get_elem(list, (unsigned)i));
}

void conf_schema_load(struct loader *ld, const config_setting_t *root)
{
	static const struct scope top = { NULL, false };
	config_setting_t *lists[SL_MAX] = { NULL };

	conf_check_unknown_rows(ld, root, conf_root_rows, NULL);
	conf_walk(ld, root, conf_root_rows, &top, ld->c, ld->c->lines, lists);
	if (lists[SL_KEYS])
		conf_load_keys(ld, lists[SL_KEYS]);
	if (lists[SL_PROTECT])
		load_protect_list(ld, lists[SL_PROTECT]);
	if (lists[SL_KNOCK])
		load_knock_list(ld, lists[SL_KNOCK]);
}

/* ------------------------------------------------------------------ */
/* What the rows say by themselves */

void conf_defaults(struct conf *c)
{
	memset(c, 0, sizeof(*c));
	conf_rows_defaults(conf_root_rows, c);
	marks_make(c->mark_mask, c->ct_mark_bit, &c->marks);
}

const char *conf_restart_name(enum restart r)
{
	static const char *const names[RS_MAX] = {
		[RS_QUEUE] = "queue",
		[RS_TRANSLATE] = "translate",
		[RS_SOCKET] = "control_socket",
		[RS_LIMITS] = "limits",
		[RS_MANAGE] = "rules.manage",
		[RS_MARKS] = "rules.mark_mask/ct_mark_bit",
		[RS_CT_LABEL] = "rules.ct_label",
	};

	return r > RS_NONE && r < RS_MAX ? names[r] : NULL;
}

const char *conf_restart_reason(const struct conf *a, const struct conf *b)
{
	return conf_restart_name(conf_rows_restart(conf_root_rows, a, b));
}
