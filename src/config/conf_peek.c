/*
 * conf_peek.c - the two settings `knockgw flush` and knock-connect need,
 * from a file that may not load (see conf.h, conf_peek()).
 *
 * The file is read as conf_load() reads it (conf_text.c: the ownership and
 * mode rule, @include, the checks libconfig needs), and parsed by
 * libconfig; then only rules.table and control_socket are looked at, each
 * held to its own schema rule.  Nothing else is checked: a key file that
 * does not load, an entry with a bad value, an unknown setting change
 * nothing here.  Where the file cannot say (unreadable, refused by the
 * file rule, a syntax error, a bad value of that very setting), the
 * default stands and the reason is kept, so that the command says what it
 * assumed.  A file that fails the ownership rule is not read at all: what
 * someone else could have written must not pick the table to delete.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "config/read/conf_schema.h"
#include "config/read/conf_text.h"

/* "FILE:LINE" of a setting, in its own file. */
static void where(const struct srcmap *m, const config_setting_t *s, char *out, size_t len)
{
	int f, line = srcmap_line(m, conf_setting_line(s), &f);

	snprintf(out, len, "%s:%d", m->src[f].path, line);
}

/*
 * One string setting: stored when it is a string that passes ok; else the
 * default stays, from says why, and so does bad ("FILE:LINE: message";
 * NULL: not wanted).  ok returns NULL or what is wrong.
 */
static void peek_string(const struct srcmap *m, const config_setting_t *s, const char *name,
			const char *(*ok)(const char *), char *val, size_t vlen, char *from,
			size_t flen, bool *assumed, char *bad, size_t blen)
{
	char at[CONF_ERR_LEN / 2];
	const char *str, *why;

	if (!s) {
		snprintf(from, flen, "default: not set");
		return;
	}
	where(m, s, at, sizeof(at));
	str = config_setting_get_string(s);
	why = str ? ok(str) : "must be a string";
	if (why) {
		snprintf(from, flen, "default: %s: %s %s", at, name, why);
		if (bad)
			snprintf(bad, blen, "%s: %s %s", at, name, why);
		*assumed = true;
		return;
	}
	snprintf(val, vlen, "%s", str);
	snprintf(from, flen, "%s", at);
}

static const char *table_why(const char *s)
{
	return conf_table_ok(s) ? NULL : "must be 1..32 characters of A-Z a-z 0-9 _";
}

/* The two settings from a parsed text; before: the syntax error the text stops short of. */
static void peek_settings(const struct srcmap *m, config_t *cfg, const char *before,
			  struct conf_peek *p)
{
	const config_setting_t *root = config_root_setting(cfg), *rules, *table;

	rules = config_setting_get_member(root, "rules");
	if (rules && !config_setting_is_group(rules)) {
		char at[CONF_ERR_LEN / 2];

		where(m, rules, at, sizeof(at));
		snprintf(p->table_from, sizeof(p->table_from),
			 "default: %s: \"rules\" must be a group { ... }", at);
		p->assumed = true;
	} else {
		table = rules ? config_setting_get_member(rules, "table") : NULL;
		peek_string(m, table, "rules.table", table_why, p->table, sizeof(p->table),
			    p->table_from, sizeof(p->table_from), &p->assumed, NULL, 0);
	}
	peek_string(m, config_setting_get_member(root, "control_socket"), "control_socket",
		    conf_socket_why, p->control_socket, sizeof(p->control_socket), p->socket_from,
		    sizeof(p->socket_from), &p->assumed, p->socket_why, sizeof(p->socket_why));
	if (!before)
		return;
	/* Read from the part before the error, or not there at all: either way, said. */
	p->assumed = true;
	if (!p->socket_why[0])
		snprintf(p->socket_why, sizeof(p->socket_why), "%s", before);
	if (strncmp(p->table_from, "default", 7) == 0)
		snprintf(p->table_from, sizeof(p->table_from), "default: %s, not set before it",
			 before);
	else
		strncat(p->table_from, ", above the parse error", sizeof(p->table_from) -
			strlen(p->table_from) - 1);
	if (strncmp(p->socket_from, "default", 7) == 0)
		snprintf(p->socket_from, sizeof(p->socket_from), "default: %s, not set before it",
			 before);
	else
		strncat(p->socket_from, ", above the parse error", sizeof(p->socket_from) -
			strlen(p->socket_from) - 1);
}

/*
 * Where the text may be cut so that what is before is whole settings: the
 * start of the last line before end that begins, in its first column, with
 * a setting's name and "=" or ":" (how every top-level setting is written
 * in practice).  A cut elsewhere only fails to parse.  -1: none.
 */
static long cut_before(const char *text, long end)
{
	for (long i = end - 1; i >= 0; i--) {
		const char *q = text + i;

		if (i > 0 && text[i - 1] != '\n')
			continue;
		if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || *q == '*'))
			continue;
		while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') ||
		       (*q >= '0' && *q <= '9') || *q == '_' || *q == '-' || *q == '*')
			q++;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == '=' || *q == ':')
			return i;
	}
	return -1;
}

/*
 * A syntax error at line err: libconfig reads nothing of such a text, but
 * the settings before the error are whole and mean what they say (a
 * setting cannot be set twice, so nothing later could change them).  So
 * the longest prefix, cut where a top-level setting starts, that parses is
 * read.  Bounded: at most MAX_CUTS parses.
 */
enum { MAX_CUTS = 32 };

static bool peek_prefix(const struct srcmap *m, int err, const char *before,
			struct conf_peek *p)
{
	long end = 0;
	int line = 1;

	/* The byte where line err of the joined text starts: a setting may start there. */
	while (m->out[end] && line < err)
		if (m->out[end++] == '\n')
			line++;
	end++;
	for (int tries = 0; tries < MAX_CUTS; tries++) {
		long cut = cut_before(m->out, end);
		char *prefix;
		config_t cfg;
		bool ok;

		if (cut <= 0)
			return false;
		prefix = strndup(m->out, (size_t)cut);
		if (!prefix)
			return false;
		config_init(&cfg);
		ok = config_read_string(&cfg, prefix);
		if (ok)
			peek_settings(m, &cfg, before, p);
		config_destroy(&cfg);
		free(prefix);
		if (ok)
			return true;
		end = cut;
	}
	return false;
}

static void peek_map(const struct srcmap *m, struct conf_peek *p)
{
	config_t cfg;

	config_init(&cfg);
	if (!config_read_string(&cfg, m->out)) {
		char before[CONF_ERR_LEN];
		int f, err = config_error_line(&cfg);
		int line = srcmap_line(m, err, &f);

		snprintf(before, sizeof(before), "%s:%d: %s", m->src[f].path, line,
			 config_error_text(&cfg));
		config_destroy(&cfg);
		if (peek_prefix(m, err, before, p))
			return;
		snprintf(p->table_from, sizeof(p->table_from), "default: %s", before);
		snprintf(p->socket_from, sizeof(p->socket_from), "default: %s", before);
		snprintf(p->socket_why, sizeof(p->socket_why), "%s", before);
		p->assumed = true;
		return;
	}
	peek_settings(m, &cfg, NULL, p);
	config_destroy(&cfg);
}

/* Both entry points: text NULL reads the file. */
static void peek(const char *path, const char *text, struct conf_peek *p)
{
	struct conf_errors *errs = calloc(1, sizeof(*errs));
	struct conf *c = malloc(sizeof(*c));	/* a large struct: the defaults only */
	struct srcmap *m = NULL;
	int r = -ENOMEM;

	memset(p, 0, sizeof(*p));
	if (!c) {
		free(errs);
		snprintf(p->table_from, sizeof(p->table_from), "out of memory");
		p->failed = true;
		return;
	}
	conf_defaults(c);
	snprintf(p->table, sizeof(p->table), "%s", c->table);
	snprintf(p->control_socket, sizeof(p->control_socket), "%s", c->control_socket);
	free(c);
	if (errs)
		m = text ? conf_text_from(path, text, errs, &r) : conf_text_read(path, errs, &r);
	if (m && r == 0) {
		peek_map(m, p);
	} else {
		snprintf(p->table_from, sizeof(p->table_from), "default: %s",
			 errs && errs->n ? errs->msg[0] : strerror(-r));
		snprintf(p->socket_from, sizeof(p->socket_from), "%s", p->table_from);
		snprintf(p->socket_why, sizeof(p->socket_why), "%s",
			 errs && errs->n ? errs->msg[0] : strerror(-r));
		p->assumed = true;
	}
	srcmap_free(m);
	free(errs);
}

void conf_peek(const char *path, struct conf_peek *p)
{
	peek(path, NULL, p);
}

void conf_peek_text(const char *path, const char *text, struct conf_peek *p)
{
	peek(path, text, p);
}
