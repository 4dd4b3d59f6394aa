/*
 * test_confschema.c - what is derived from the schema's rows
 * (conf_schema.c) against behaviour stated here, independently of them:
 *
 *   - every setting is one row of this file's table, and every row of the
 *     schema one setting here, so a new row cannot go untested;
 *   - defaults: an empty configuration (and an entry with its required
 *     settings only) loads with each row's default; writing the default
 *     out loads the same value (the default is in range and a valid word);
 *   - restarts: a configuration with the one setting changed to another
 *     valid value needs a restart, named as this table says, exactly when
 *     this table says so (either way round), and the row agrees.
 *
 * Loads run on text (conf_load_text()); no root, no files.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/conf.h"
#include "config/read/conf_schema.h"
#include "unit.h"

enum where { AT_ROOT, AT_PROTECT, AT_KNOCK };

/*
 * Every setting: where it is, its full name, its default as it would be
 * written (knockgw.conf(5) documents the same), and a text that changes it
 * to another valid value (in the root, inside the protect entry or inside
 * the knock entry, as where says; the lists: see base_text()), and the
 * restart reason a reload gives for the change (NULL: a reload takes it).
 */
static const struct setting {
	enum where where;
	const char *name;
	const char *def;	/* written out as a setting's value; NULL: none */
	const char *change;
	const char *restart;
} settings[] = {
	{ AT_ROOT, "queue.num", "0", "queue = { num = 7; };", "queue" },
	{ AT_ROOT, "queue.count", "1", "queue = { count = 2; };", "queue" },
	{ AT_ROOT, "queue.fail_open", "false",
	  "queue = { fail_open = true; }; on_stop = \"open\";", "queue" },
	{ AT_ROOT, "queue.maxlen", "4096", "queue = { maxlen = 1024; };", "queue" },
	{ AT_ROOT, "rules.manage", "true", "rules = { manage = false; };", "rules.manage" },
	{ AT_ROOT, "rules.mark_mask", "2130706432", "rules = { mark_mask = 0x0f000000; };",
	  "rules.mark_mask/ct_mark_bit" },
	{ AT_ROOT, "rules.ct_mark_bit", "1073741824", "rules = { ct_mark_bit = 0x20000000; };",
	  "rules.mark_mask/ct_mark_bit" },
	{ AT_ROOT, "rules.ct_label", "95", "rules = { ct_label = 40; };", "rules.ct_label" },
	{ AT_ROOT, "rules.table", "\"knockgw\"", "rules = { table = \"kg2\"; };", NULL },
	{ AT_ROOT, "rules.refuse_port", "1", "rules = { refuse_port = 9; };", NULL },
	{ AT_ROOT, "log_level", "\"info\"", "log_level = \"debug\";", NULL },
	{ AT_ROOT, "translate", "\"kernel\"", "translate = \"user\";", "translate" },
	{ AT_ROOT, "closed_ports", "\"daemon\"", "closed_ports = \"kernel\";", NULL },
	{ AT_ROOT, "on_stop", "\"hide\"", "on_stop = \"open\";", NULL },
	{ AT_ROOT, "control_socket", "\"/run/knockgw/control.sock\"",
	  "control_socket = \"/run/kg2.sock\";", "control_socket" },
	{ AT_ROOT, "limits.flows", "65536", "limits = { flows = 1024; };", "limits" },
	{ AT_ROOT, "limits.replay", "65536", "limits = { replay = 1024; };", "limits" },
	{ AT_ROOT, "limits.hold_bytes", "4194304", "limits = { hold_bytes = 131072; };", NULL },
	{ AT_ROOT, "limits.hold_flow_bytes", "65536",
	  "limits = { hold_flow_bytes = 2048; };", NULL },
	{ AT_ROOT, "limits.integrity_timeout", "10",
	  "limits = { integrity_timeout = 20; };", NULL },
	{ AT_ROOT, "guessing.threshold", "100", "guessing = { threshold = 5; };", NULL },
	{ AT_ROOT, "guessing.window", "60", "guessing = { window = 5; };", NULL },
	{ AT_ROOT, "guessing.penalty", "0", "guessing = { penalty = 5; };", NULL },
	/* The lists: a second key; no protect list; no knock list (the client role goes). */
	{ AT_ROOT, "keys", NULL, "@key", NULL },
	{ AT_ROOT, "protect", NULL, "@noprotect", NULL },
	{ AT_ROOT, "knock", NULL, "@noknock", "translate" },
	{ AT_PROTECT, "port", NULL, "!port = 23; mode = \"knock\"; keys = [ \"k\" ];", NULL },
	{ AT_PROTECT, "mode", NULL, "!port = 22; mode = \"native\"; keys = [ \"k32\" ];", NULL },
	{ AT_PROTECT, "keys", NULL,
	  "!port = 22; mode = \"knock\"; keys = [ \"k\", \"k32\" ];", NULL },
	{ AT_PROTECT, "integrity_len", "0", "integrity_len = 20;", NULL },
	{ AT_PROTECT, "on_fail", "\"reset\"", "on_fail = \"drop\";", NULL },
	{ AT_PROTECT, "window", "30",
	  "!port = 22; mode = \"native\"; keys = [ \"k32\" ]; window = 60;", NULL },
	{ AT_PROTECT, "replay", "true", "replay = false;", NULL },
	{ AT_PROTECT, "replay_ttl", NULL, "replay_ttl = 60;", NULL },
	{ AT_PROTECT, "addresses", NULL, "addresses = [ \"192.0.2.9\" ];", NULL },
	{ AT_PROTECT, "forward", "false", "addresses = [ \"192.0.2.9\" ]; forward = true;", NULL },
	{ AT_PROTECT, "public", NULL, "public = [ \"198.51.100.1\" ];", NULL },
	{ AT_PROTECT, "timestamps", "\"optional\"", "timestamps = \"required\";", NULL },
	{ AT_KNOCK, "dst", NULL,
	  "!dst = \"192.0.2.2\"; port = 22; mode = \"knock\"; key = \"k\";", NULL },
	{ AT_KNOCK, "port", NULL,
	  "!dst = \"192.0.2.1\"; port = 23; mode = \"knock\"; key = \"k\";", NULL },
	{ AT_KNOCK, "mode", NULL,
	  "!dst = \"192.0.2.1\"; port = 22; mode = \"native\"; key = \"k32\";", NULL },
	{ AT_KNOCK, "key", NULL,
	  "!dst = \"192.0.2.1\"; port = 22; mode = \"knock\"; key = \"k32\";", NULL },
	{ AT_KNOCK, "integrity_len", "0", "integrity_len = 20;", NULL },
	{ AT_KNOCK, "window", "30",
	  "!dst = \"192.0.2.1\"; port = 22; mode = \"native\"; key = \"k32\"; window = 60;", NULL },
	{ AT_KNOCK, "from", NULL, "from = [ \"10.0.0.0/8\" ];", NULL },
	{ AT_KNOCK, "from_interfaces", NULL,
	  "from = [ \"10.0.0.0/8\" ]; from_interfaces = [ \"eth1\" ];", NULL },
};

enum { NSETTINGS = sizeof(settings) / sizeof(settings[0]), TEXT_MAX = 2048 };

#define KEY_K "{ name = \"k\"; secret = \"s3cret\"; }"
#define KEY_K32 "{ name = \"k32\"; secret = \"0123456789abcdef0123456789abcdef\"; }"

#define PROTECT_REQ "port = 22; mode = \"knock\"; keys = [ \"k\" ];"
#define KNOCK_REQ "dst = \"192.0.2.1\"; port = 22; mode = \"knock\"; key = \"k\";"

/*
 * An entry: its required settings, then what a change adds; a change that
 * starts with '!' gives the required settings itself.
 */
static void entry_text(const char *req, const char *change, char *out, size_t len)
{
	if (change[0] == '!')
		snprintf(out, len, "%s", change + 1);
	else
		snprintf(out, len, "%s %s", req, change);
}

/* The base configuration, with s's change made (s NULL: none). */
static void base_text(const struct setting *s, char *out, size_t len)
{
	const char *ch = s ? s->change : "";
	bool root = s && s->where == AT_ROOT && ch[0] != '@';
	char protect[256] = "", knock[256] = "", entry[200];

	if (!(s && strcmp(ch, "@noprotect") == 0)) {
		entry_text(PROTECT_REQ, s && s->where == AT_PROTECT ? ch : "", entry,
			   sizeof(entry));
		snprintf(protect, sizeof(protect), "protect = ( { %s } );\n", entry);
	}
	if (!(s && strcmp(ch, "@noknock") == 0)) {
		entry_text(KNOCK_REQ, s && s->where == AT_KNOCK ? ch : "", entry, sizeof(entry));
		snprintf(knock, sizeof(knock), "knock = ( { %s } );\n", entry);
	}
	snprintf(out, len, "keys = ( " KEY_K ", " KEY_K32 "%s );\n%s%s%s\n",
		 s && strcmp(ch, "@key") == 0 ? ", { name = \"k2\"; secret = \"x\"; }" : "",
		 protect, knock, root ? ch : "");
}

static const struct srow *rows_of(enum where w)
{
	return w == AT_ROOT ? conf_root_rows : w == AT_PROTECT ? conf_protect_rows :
								 conf_knock_rows;
}

/* Calls fn for every row of rows (a group's rows named "group.name"). */
static void each_row(const struct srow *rows, const char *prefix, enum where w,
		     void (*fn)(const struct srow *r, const char *name, enum where w, void *arg),
		     void *arg)
{
	for (const struct srow *r = rows; r->name; r++) {
		char name[64];

		snprintf(name, sizeof(name), "%.24s%s%.24s", prefix, prefix[0] ? "." : "", r->name);
		if (r->type == ST_GROUP)
			each_row(r->rows, name, w, fn, arg);
		else
			fn(r, name, w, arg);
	}
}

static const struct setting *find_setting(enum where w, const char *name)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		if (settings[i].where == w && strcmp(settings[i].name, name) == 0)
			return &settings[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Every row is a setting here, and every setting a row */

static void count_row(const struct srow *r, const char *name, enum where w, void *arg)
{
	unsigned *seen = arg;
	const struct setting *s = find_setting(w, name);

	(void)r;
	CHECK(s != NULL, "schema row \"%s\" (where %d) has a setting in this test's table", name,
	      (int)w);
	if (s)
		seen[s - settings]++;
}

static void test_complete(void)
{
	unsigned seen[NSETTINGS] = { 0 };

	for (enum where w = AT_ROOT; w <= AT_KNOCK; w++)
		each_row(rows_of(w), "", w, count_row, seen);
	for (size_t i = 0; i < NSETTINGS; i++)
		CHECK_EQ_U(seen[i], 1, "setting \"%s\" (where %d) is one schema row",
			   settings[i].name, (int)settings[i].where);
}

/* ------------------------------------------------------------------ */
/* Defaults */

static unsigned long long read_uint(const void *obj, const struct srow *r)
{
	const uint8_t *p = (const uint8_t *)obj + r->off;
	uint16_t v16;
	uint32_t v32;

	if (r->size == sizeof(v16)) {
		memcpy(&v16, p, sizeof(v16));
		return v16;
	}
	memcpy(&v32, p, sizeof(v32));
	return v32;
}

/* Whether obj holds r's default. */
static bool holds_default(const void *obj, const struct srow *r)
{
	const uint8_t *p = (const uint8_t *)obj + r->off;

	switch (r->type) {
	case ST_BOOL:
		return *(const bool *)p == (r->def != 0);
	case ST_STRING:
		return strncmp((const char *)p, r->def_str, r->size) == 0;
	default:
		return read_uint(obj, r) == (unsigned long long)r->def;
	}
}

struct loaded {
	struct conf *empty;	/* "" */
	struct conf *base;	/* base_text(NULL) */
	struct conf *c;		/* scratch */
	struct conf_errors *errs;
};

static void check_default(const struct srow *r, const char *name, enum where w, void *arg)
{
	struct loaded *l = arg;
	const void *obj = w == AT_ROOT	  ? (const void *)l->empty :
			  w == AT_PROTECT ? (const void *)&l->base->protect[0] :
					    (const void *)&l->base->knock[0];

	const struct setting *s = find_setting(w, name);

	CHECK(s && !s->def == !r->has_def, "\"%s\" has a default exactly when this table says so",
	      name);
	if (!r->has_def)
		return;
	CHECK(r->type == ST_INT || r->type == ST_BOOL || r->type == ST_WORD ||
		      r->type == ST_STRING,
	      "row \"%s\": a default only on a single value", name);
	CHECK(holds_default(obj, r), "unwritten \"%s\" loads as its row's default", name);
	/* Written out, the default is the one stated here, and loads as the same value. */
	char value[160] = "", text[256], *dot;
	const char *leaf = name;

	switch (r->type) {
	case ST_INT:
		snprintf(value, sizeof(value), "%lld", r->def);
		break;
	case ST_BOOL:
		snprintf(value, sizeof(value), "%s", r->def ? "true" : "false");
		break;
	case ST_WORD:
		for (const struct word *wd = r->words; wd->name; wd++)
			if (wd->value == r->def)
				snprintf(value, sizeof(value), "\"%s\"", wd->name);
		break;
	case ST_STRING:
		snprintf(value, sizeof(value), "\"%s\"", r->def_str);
		break;
	default:
		break;
	}
	CHECK(value[0] != '\0', "row \"%s\": its default is one of its words", name);
	CHECK(s && s->def && strcmp(value, s->def) == 0, "\"%s\" defaults to %s, want %s", name,
	      value, s && s->def ? s->def : "(none)");
	if (w != AT_ROOT)
		return;
	dot = strchr(name, '.');
	if (dot) {
		leaf = dot + 1;
		snprintf(text, sizeof(text), "%.*s = { %s = %s; };\n", (int)(dot - name), name,
			 leaf, value);
	} else {
		snprintf(text, sizeof(text), "%s = %s;\n", name, value);
	}
	CHECK(conf_load_text("t.conf", text, l->c, l->errs) == 0,
	      "\"%s\" written as its default loads (%s)", name,
	      l->errs->n ? l->errs->msg[0] : "no message");
	CHECK(holds_default(l->c, r), "\"%s\" written as its default is its default", name);
	conf_free(l->c);
}

static void test_defaults(struct loaded *l)
{
	struct conf *d = malloc(sizeof(*d));

	for (enum where w = AT_ROOT; w <= AT_KNOCK; w++)
		each_row(rows_of(w), "", w, check_default, l);
	/* conf_defaults() is what the loader starts from: the rows, and nothing else. */
	if (d) {
		conf_defaults(d);
		snprintf(d->path, sizeof(d->path), "%s", l->empty->path);
		CHECK(memcmp(d, l->empty, sizeof(*d)) == 0,
		      "conf_defaults() is the empty configuration, loaded");
		free(d);
	}
}

/* ------------------------------------------------------------------ */
/* Restarts */

static void test_restart(struct loaded *l)
{
	char text[TEXT_MAX];

	CHECK(conf_restart_reason(l->base, l->base) == NULL, "the same configuration: no restart");
	for (size_t i = 0; i < NSETTINGS; i++) {
		const struct setting *s = &settings[i];
		const char *ab, *ba;

		base_text(s, text, sizeof(text));
		if (conf_load_text("t.conf", text, l->c, l->errs) < 0) {
			CHECK(false, "\"%s\" changed: the text loads (%s)", s->name,
			      l->errs->msg[0]);
			continue;
		}
		CHECK(memcmp(l->c, l->base, sizeof(*l->c)) != 0,
		      "\"%s\" changed: something changed", s->name);
		ab = conf_restart_reason(l->base, l->c);
		ba = conf_restart_reason(l->c, l->base);
		CHECK(ab == s->restart || (ab && s->restart && strcmp(ab, s->restart) == 0),
		      "\"%s\" changed: restart \"%s\", want \"%s\"", s->name, ab ? ab : "(none)",
		      s->restart ? s->restart : "(none)");
		CHECK(ab == ba || (ab && ba && strcmp(ab, ba) == 0),
		      "\"%s\" changed back: the same restart", s->name);
		conf_free(l->c);
	}
}

/* The rows' own word for it agrees with the table. */
static void check_row_restart(const struct srow *r, const char *name, enum where w, void *arg)
{
	const struct setting *s = find_setting(w, name);
	const char *rs = conf_restart_name(r->restart);

	(void)arg;
	if (!s)
		return;
	CHECK(rs == s->restart || (rs && s->restart && strcmp(rs, s->restart) == 0),
	      "row \"%s\": restart \"%s\", want \"%s\"", name, rs ? rs : "(none)",
	      s->restart ? s->restart : "(none)");
}

/* Several changes at once: the reason named first is the one it has always been. */
static void test_restart_order(struct loaded *l)
{
	static const struct {
		const char *text;
		const char *want;
	} rows[] = {
		{ "queue = { num = 7; }; rules = { manage = false; }; translate = \"user\";",
		  "queue" },
		{ "rules = { manage = false; ct_label = 40; }; translate = \"user\";",
		  "translate" },
		{ "rules = { manage = false; }; control_socket = \"/run/kg2.sock\";",
		  "control_socket" },
		{ "rules = { manage = false; }; limits = { flows = 1024; };", "limits" },
		{ "rules = { manage = false; ct_label = 40; };", "rules.manage" },
		{ "rules = { mark_mask = 0x0f000000; ct_label = 40; };",
		  "rules.mark_mask/ct_mark_bit" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *why;

		if (conf_load_text("t.conf", rows[i].text, l->c, l->errs) < 0) {
			CHECK(false, "order row %zu loads (%s)", i, l->errs->msg[0]);
			continue;
		}
		why = conf_restart_reason(l->empty, l->c);
		CHECK(why && strcmp(why, rows[i].want) == 0, "order row %zu: \"%s\", want \"%s\"",
		      i, why ? why : "(none)", rows[i].want);
		conf_free(l->c);
	}
}

int main(void)
{
	struct loaded l = {
		.empty = calloc(1, sizeof(struct conf)),
		.base = calloc(1, sizeof(struct conf)),
		.c = calloc(1, sizeof(struct conf)),
		.errs = calloc(1, sizeof(struct conf_errors)),
	};
	char text[TEXT_MAX];

	if (!l.empty || !l.base || !l.c || !l.errs) {
		printf("not ok: out of memory\n");
		return 1;
	}
	test_complete();
	CHECK(conf_load_text("t.conf", "", l.empty, l.errs) == 0, "the empty text loads");
	base_text(NULL, text, sizeof(text));
	CHECK(conf_load_text("t.conf", text, l.base, l.errs) == 0, "the base text loads (%s)",
	      l.errs->n ? l.errs->msg[0] : "no message");
	test_defaults(&l);
	test_restart(&l);
	for (enum where w = AT_ROOT; w <= AT_KNOCK; w++)
		each_row(rows_of(w), "", w, check_row_restart, NULL);
	test_restart_order(&l);
	conf_free(l.empty);
	conf_free(l.base);
	free(l.empty);
	free(l.base);
	free(l.c);
	free(l.errs);
	return unit_done("test_confschema");
}
