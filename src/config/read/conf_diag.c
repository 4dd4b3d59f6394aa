/*
 * conf_diag.c - what libconfig's syntax errors most likely mean (conf_diag.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config/read/conf_diag.h"
#include "config/read/conf_syntax.h"

enum { SHOW_MAX = 120 };	/* of a line quoted in a message */

/* Where line `line` of the joined text starts, and its length; false past the end. */
static bool line_span(const char *text, size_t len, int line, size_t *ret_off, size_t *ret_len)
{
	size_t off = 0, end;

	for (int l = 1; l < line; l++) {
		const char *nl = memchr(text + off, '\n', len - off);

		if (!nl)
			return false;
		off = (size_t)(nl - text) + 1;
	}
	if (line < 1 || off > len)
		return false;
	for (end = off; end < len && text[end] != '\n'; end++)
		;
	*ret_off = off;
	*ret_len = end - off;
	return true;
}

/* Where the word "secret" starts in s (n bytes), in any case; n when it is not there. */
static size_t secret_at(const char *s, size_t n)
{
	for (size_t i = 0; i + 6 <= n; i++)
		if (strncasecmp(s + i, "secret", 6) == 0)
			return i;
	return n;
}

static bool keep_char(char c)
{
	return c == ' ' || c == '\t' || c == ';' || c == ',' || c == '=' || c == ':' || c == '{' ||
	       c == '}' || c == '(' || c == ')' || c == '[' || c == ']';
}

void conf_diag_show_line(const char *text, size_t len, int line, char *out, size_t size)
{
	size_t off, n, o = 0, sec;
	const char *s;

	if (size == 0)
		return;
	out[0] = '\0';
	if (!text || !line_span(text, len, line, &off, &n))
		return;
	s = text + off;
	while (n > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	/*
	 * Past the word "secret" every value is "...": a quoted run (to its
	 * closing quote, or the end of the line when a quote is missing) or
	 * any other run of characters but blanks and punctuation.  The quotes
	 * may pair up wrongly on a broken line, so nothing after the word is
	 * trusted to be outside the secret.
	 */
	sec = secret_at(s, n);
	for (size_t i = 0; i < n && o + 4 < size && o < SHOW_MAX; i++) {
		char c = s[i];

		if (i >= sec + 6 && !keep_char(c)) {
			if (c == '"') {
				for (i++; i < n && s[i] != '"'; i++)
					i += s[i] == '\\';
			} else {
				while (i + 1 < n && !keep_char(s[i + 1]) && s[i + 1] != '"')
					i++;
			}
			memcpy(out + o, "...", 3);
			o += 3;
			continue;
		}
		out[o++] = (unsigned char)c < 0x20 || c == 0x7f ? ' ' : c;
		if (o >= SHOW_MAX && i + 1 < n && o + 4 < size) {
			memcpy(out + o, "...", 3);
			o += 3;
		}
	}
	out[o] = '\0';
}

/* The line holds a secret: tokens from it stay out of messages too. */
static bool line_has_secret(const char *text, size_t len, int line)
{
	size_t off, n;

	return text && line_span(text, len, line, &off, &n) && secret_at(text + off, n) < n;
}

/* snprintf, where a message cut short is a message still: no warning for the cut. */
static void say(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, size, fmt, ap);
	va_end(ap);
}

/* "line N" when line is in file, else "FILE:N": the other end of a message. */
static void where(const struct srcmap *m, int file, int jline, char *out, size_t size)
{
	int f, line = srcmap_line(m, jline, &f);

	if (f == file)
		snprintf(out, size, "line %d", line);
	else
		say(out, size, "%s:%d", m->src[f].path, line);
}

static char closer_of(char open)
{
	return open == '(' ? ')' : open == '[' ? ']' : '}';
}

static const char *container(char open)
{
	return open == '(' ? "list" : open == '[' ? "array" : "group";
}

/* ' "NAME"' or "" when the setting has no name. */
static void quoted(const char *name, char *out, size_t size)
{
	if (name[0])
		snprintf(out, size, " \"%s\"", name);
	else
		out[0] = '\0';
}

/* The container e is about: 'list "keys"', '"protect" entry', 'group'. */
static void what(const struct cs_error *e, char open, char *out, size_t size)
{
	if (e->element && e->name[0])
		say(out, size, "\"%s\" entry", e->name);
	else if (e->name[0])
		say(out, size, "%s \"%s\"", container(open), e->name);
	else
		say(out, size, "%s", container(open));
}

/*
 * The explanation of e, a syntax error at joined line e->line, into msg;
 * *ret_line is the joined line to report it at.  false: no explanation
 * (libconfig's words stand).
 */
static bool explain(const struct srcmap *m, const struct cs_error *e, char *msg, size_t size,
		    int *ret_line)
{
	char other[PATH_MAX + 16], q[CS_NAME_MAX + 4], w[CS_NAME_MAX + 16];
	int file;

	*ret_line = e->at_line;
	srcmap_line(m, e->at_line, &file);
	where(m, file, e->other_line, other, sizeof(other));
	quoted(e->name, q, sizeof(q));
	switch (e->kind) {
	case CSE_TRAILING_COMMA:
		say(msg, size, "',' after the last element of the %s%s: remove it "
			 "(libconfig takes no ',' before '%c')", container(e->open), q,
			 closer_of(e->open));
		return true;
	case CSE_SEMI_IN_LIST:
		say(msg, size, "';' after an element of the list%s: elements are separated "
			 "by ',', and the last one takes none", q);
		return true;
	case CSE_MISSING_COMMA:
		say(msg, size, "missing ',' between two elements of the list%s (after the one "
			 "that ends at %s)", q, other);
		return true;
	case CSE_SETTING_IN_LIST:
		say(msg, size, "a setting (%s = ...) directly in the list%s: each element is "
			 "a group in braces, { %s = ...; ... }", e->tok, q, e->tok);
		return true;
	case CSE_VALUE_IN_GROUP:
		if (e->name[0])
			say(msg, size, "%s where a setting (name = value) belongs, in the "
				 "group%s: a list of values goes in ( ) or [ ]", e->tok, q);
		else
			say(msg, size, "%s where a setting (name = value) belongs", e->tok);
		return true;
	case CSE_GROUP_NOT_CLOSED:
		what(e, '{', w, sizeof(w));
		say(msg, size, "'%s' inside the %s opened at %s, which is not closed: "
			 "a '}' is missing before it", e->tok, w, other);
		return true;
	case CSE_MISSING_EQUALS:
		say(msg, size, "missing '=' after \"%s\"", e->name);
		return true;
	case CSE_MISSING_VALUE:
		if (e->name[0])
			say(msg, size, "no value for \"%s\" before '%s'", e->name, e->tok);
		else
			say(msg, size, "no value before '%s'", e->tok);
		return true;
	case CSE_UNQUOTED_WORD:
		say(msg, size, "%s is not a value: a string goes in double quotes, \"%s\"",
			 e->tok, e->tok);
		return true;
	case CSE_NOT_CLOSED:
		what(e, e->open, w, sizeof(w));
		say(msg, size, "the %s opened here is never closed: a '%c' is missing", w,
			 closer_of(e->open));
		return true;
	case CSE_WRONG_CLOSE:
		what(e, e->open, w, sizeof(w));
		say(msg, size, "'%c' where '%c' belongs: the %s opened at %s is still open",
			 e->close, closer_of(e->open), w, other);
		return true;
	case CSE_STRAY_CLOSE:
		say(msg, size, "'%s' closes nothing: one too many, or its opening bracket is "
			 "missing", e->tok);
		return true;
	case CSE_STRING_RUNS_ON:
		where(m, file, e->other_line, other, sizeof(other));
		say(msg, size, "the string that starts here runs on to %s: a closing '\"' is "
			 "missing", other);
		return true;
	case CSE_TEXT_AFTER_STRING:
		say(msg, size, "text right after the string %s: a '\"' is missing, or one too "
			 "many", e->tok);
		return true;
	case CSE_SINGLE_QUOTE:
		say(msg, size, "strings go in double quotes (\"...\"), not single ones");
		return true;
	case CSE_GARBAGE:
		say(msg, size, "unexpected character '%s'", e->tok);
		return true;
	case CSE_NESTED_IN_ARRAY:
		say(msg, size, "an array [ ] holds only strings, numbers or booleans: a group "
			 "or list goes in a list ( ), the array%s", q);
		return true;
	case CSE_OTHER:
		if (e->tok[0] == ';' || e->tok[0] == ',') {
			say(msg, size, "'%s' with no setting before it: one too many", e->tok);
			return true;
		}
		return false;
	default:
		return false;
	}
}

/* What to do about the second one, by the kind of the first. */
static const char *dup_advice(const struct cs_tree *t, const struct cs_error *e)
{
	for (size_t i = 1; i < t->n; i++) {
		const struct cs_node *n = &t->node[i];

		if (n->line != e->other_line || !cs_named(t, (int)i, e->name))
			continue;
		switch (n->kind) {
		case CS_LIST:
		case CS_ARRAY:
			return "add the entries to that list";
		case CS_GROUP:
			return "merge the two";
		case CS_SCALAR:
			break;
		}
		break;
	}
	return "keep one of them";
}

void conf_diag_libconfig(const struct srcmap *m, int line, const char *msg,
			 struct conf_errors *errs)
{
	char why[CONF_ERR_LEN], shown[SHOW_MAX + 8], other[PATH_MAX + 16];
	bool syntax = strcmp(msg, "syntax error") == 0;
	bool dup = strcmp(msg, "duplicate setting name") == 0;
	struct cs_tree t = { 0 };
	struct cs_error e;
	int f, at = line, fline;

	why[0] = '\0';
	if ((syntax || dup) && m->out &&
	    cs_parse(m->out, m->len, &t, &e) == -EINVAL && e.line == line) {
		if (line_has_secret(m->out, m->len, e.line) ||
		    line_has_secret(m->out, m->len, e.at_line))
			snprintf(e.tok, sizeof(e.tok), "...");
		if (syntax && e.kind != CSE_DUPLICATE) {
			if (!explain(m, &e, why, sizeof(why), &at))
				why[0] = '\0';
		} else if (dup && e.kind == CSE_DUPLICATE) {
			srcmap_line(m, line, &f);
			where(m, f, e.other_line, other, sizeof(other));
			say(why, sizeof(why), "%s is already set at %s: %s", e.name, other,
				 dup_advice(&t, &e));
		}
	}
	cs_free(&t);
	fline = srcmap_line(m, at, &f);
	conf_diag_show_line(m->out, m->len, at, shown, sizeof(shown));
	if (!syntax || !shown[0])
		conf_error(errs, m->src[f].path, fline, "%s%s%s", msg, why[0] ? ": " : "", why);
	else
		conf_error(errs, m->src[f].path, fline, "%s%s%s; the line reads: %s", msg,
			   why[0] ? ": " : "", why, shown);
}

/*
 * libconfig 1.5's parser leaks the string it was building when it stops on
 * a syntax error (its grammar has no %destructor): LeakSanitizer, in the
 * sanitizer builds, is told so here, as the fuzz targets tell it (theirs,
 * not weak, win there).  Nothing calls this in other builds.
 */
const char *__lsan_default_suppressions(void) __attribute__((weak));
const char *__lsan_default_suppressions(void)
{
	return "leak:strbuf_append\nleak:libconfig_yylex\n";
}

/* ... and says nothing of it: a message on stderr stays the one line it was. */
const char *__lsan_default_options(void) __attribute__((weak));
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}
