/*
 * test_confsyntax.c - the second reading of libconfig's syntax
 * (conf_syntax.[ch]) and the messages made from it (conf_diag.[ch]).
 *
 * Tables: texts with the error kind and lines the parser must find, each
 * also given to libconfig itself, which must stop on the same line (or
 * accept the text when the parser does); the trees of valid texts
 * (offsets, names, values); lines as a message shows them (secrets
 * blanked); and the one-line messages conf_diag_libconfig() makes.  Then
 * a differential run: a valid text mutated at random (a fixed seed), where
 * libconfig and the parser must agree on every syntax error's line.
 */
#include <errno.h>
#include <stdlib.h>

#include <libconfig.h>

#include "config/read/conf_diag.h"
#include "config/read/conf_syntax.h"
#include "unit.h"

struct parse_row {
	int n;
	const char *text;
	enum cs_err_kind kind;		/* CSE_NONE: valid */
	int line, at_line, other_line;	/* of the error */
	const char *name;		/* NULL: not checked */
};

static const struct parse_row parses[] = {
	{ 1, "", CSE_NONE, 0, 0, 0, NULL },
	{ 2, "a = 1; b = \"x\" \"y\"; c = ( ); d = [ ]; e = { };", CSE_NONE, 0, 0, 0, NULL },
	{ 3, "a = 1\nb : 2,\nc = 0x1fL; d = -1.5e3; e = .5; f = TRUE; g = 22LL;", CSE_NONE, 0, 0, 0, NULL },
	{ 4, "# c\n// c\n/* c\n c */ a = 1; # \"x\n", CSE_NONE, 0, 0, 0, NULL },
	{ 5, "a = ( { b = 1; }, ( 1, \"x\" ), [ 1, 2 ] );", CSE_NONE, 0, 0, 0, NULL },
	{ 6, "a = \"x\\\"y\";", CSE_NONE, 0, 0, 0, NULL },
	/* the mistakes */
	{ 10, "a = (\n { x = 1; },\n);\n", CSE_TRAILING_COMMA, 3, 2, 1, "a" },
	{ 11, "a = [ \"x\", ];", CSE_TRAILING_COMMA, 1, 1, 1, "a" },
	{ 12, "a = (\n { x = 1; };\n { x = 1; }\n);", CSE_SEMI_IN_LIST, 2, 2, 1, "a" },
	{ 13, "a = (\n { x = 1; }\n { x = 1; }\n);", CSE_MISSING_COMMA, 3, 3, 2, "a" },
	{ 14, "a = [ \"x\" 1 ];", CSE_MISSING_COMMA, 1, 1, 1, "a" },
	{ 15, "a = (\n x = 1;\n);", CSE_SETTING_IN_LIST, 2, 2, 1, "a" },
	{ 16, "a = { \"x\" };", CSE_VALUE_IN_GROUP, 1, 1, 1, "a" },
	{ 17, "a = (\n { p = 1;\n { p = 3; }\n);", CSE_GROUP_NOT_CLOSED, 3, 3, 2, "a" },
	{ 18, "a mode;", CSE_MISSING_EQUALS, 1, 1, 0, "a" },
	{ 19, "a = 1;\nb = ;", CSE_MISSING_VALUE, 2, 2, 0, "b" },
	{ 20, "a = native;", CSE_UNQUOTED_WORD, 1, 1, 0, "a" },
	{ 21, "a = [ x ];", CSE_UNQUOTED_WORD, 1, 1, 0, "a" },
	{ 22, "a = (\n\n", CSE_NOT_CLOSED, 3, 1, 1, "a" },
	{ 23, "a = {\n x = 1;\n", CSE_NOT_CLOSED, 3, 1, 1, "a" },
	{ 24, "a = (\n { x = 1; }\n };", CSE_WRONG_CLOSE, 3, 3, 1, "a" },
	{ 25, "a = (\n { p = 1;\n);", CSE_WRONG_CLOSE, 3, 3, 2, "a" },
	{ 26, "a = ( 1 );\n)", CSE_STRAY_CLOSE, 2, 2, 0, NULL },
	{ 27, "a = \"x\ny\";\nb = 2 3;", CSE_STRING_RUNS_ON, 3, 1, 2, NULL },
	{ 28, "a = ( { b = \"al; c = \"x.key\"; } );", CSE_TEXT_AFTER_STRING, 1, 1, 0, NULL },
	{ 29, "a = 'x';", CSE_SINGLE_QUOTE, 1, 1, 0, "a" },
	{ 30, "a = 1;\n$", CSE_GARBAGE, 2, 2, 1, NULL },
	{ 31, "a = [ { x = 1; } ];", CSE_NESTED_IN_ARRAY, 1, 1, 1, "a" },
	{ 32, "a = 1;\nb = 2;\na = 3;", CSE_DUPLICATE, 3, 3, 1, "a" },
	{ 33, "g = { a = 1;\n a = 2; };", CSE_DUPLICATE, 2, 2, 1, "a" },
	{ 34, "a = 1;\n;", CSE_OTHER, 2, 2, 0, NULL },
	{ 35, "a = [ \"a\", , \"b\" ];", CSE_MISSING_VALUE, 1, 1, 0, "a" },
	/* a string over lines: libconfig counts to its end */
	{ 36, "\"#\n\"x", CSE_VALUE_IN_GROUP, 2, 1, 1, NULL },
	{ 37, "a = ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((",
	  CSE_TOO_DEEP, 1, 1, 0, NULL },
};

/* libconfig on the same text: 0 when it accepts it, else its error line. */
static int libconfig_line(const char *text, char *msg, size_t size)
{
	config_t cfg;
	int line = 0;

	config_init(&cfg);
	if (!config_read_string(&cfg, text)) {
		line = config_error_line(&cfg);
		snprintf(msg, size, "%s", config_error_text(&cfg));
	}
	config_destroy(&cfg);
	return line;
}

static void test_parse(void)
{
	for (size_t i = 0; i < sizeof(parses) / sizeof(parses[0]); i++) {
		const struct parse_row *r = &parses[i];
		struct cs_tree t;
		struct cs_error e;
		char msg[128] = "";
		int rc = cs_parse(r->text, strlen(r->text), &t, &e);
		int lc = libconfig_line(r->text, msg, sizeof(msg));

		if (r->kind == CSE_NONE) {
			CHECK(rc == 0, "row %d parses (kind %d at %d)", r->n, e.kind, e.line);
			CHECK(lc == 0, "row %d: libconfig accepts it too (%s)", r->n, msg);
		} else {
			CHECK(rc == -EINVAL, "row %d is refused", r->n);
			CHECK_EQ_U(e.kind, r->kind, "row %d: kind", r->n);
			CHECK_EQ_U(e.line, r->line, "row %d: line", r->n);
			CHECK_EQ_U(e.at_line, r->at_line, "row %d: at_line", r->n);
			CHECK_EQ_U(e.other_line, r->other_line, "row %d: other_line", r->n);
			if (r->name)
				CHECK(strcmp(e.name, r->name) == 0, "row %d: name \"%s\"", r->n, e.name);
			if (r->kind != CSE_TOO_DEEP)
				CHECK_EQ_U(lc, r->line, "row %d: libconfig stops on the same line (%s)",
					   r->n, msg);
		}
		cs_free(&t);
	}
}

/* A valid text's tree: what the editor finds in it. */
static void test_tree(void)
{
	static const char text[] =
		"keys = (\n"
		"\t{ name = \"a\\x41\"; file = \"k\" \"/a.key\"; },	# the first\n"
		"\t{ name = \"b\"; secret = \"s\\\"t\"; }\n"
		");\n"
		"protect = ( { port = 0x16; keys = [ \"aA\" ]; } );\n";
	struct cs_tree t;
	struct cs_error e;
	char s[64];
	long long v = 0;
	int keys, prot, el, name, port, arr;

	CHECK(cs_parse(text, sizeof(text) - 1, &t, &e) == 0, "the text parses");
	keys = cs_member(&t, 0, "keys");
	prot = cs_member(&t, 0, "protect");
	CHECK(keys > 0 && t.node[keys].kind == CS_LIST && t.node[keys].nchild == 2, "keys: 2 entries");
	CHECK(cs_member(&t, 0, "knock") < 0, "no knock");
	CHECK(keys > 0 && text[t.node[keys].val_off] == '(' && text[t.node[keys].val_end - 1] == ')',
	      "keys' value is bracket to bracket");
	CHECK(keys > 0 && text[t.node[keys].end - 1] == ';', "keys ends after its ';'");
	CHECK_EQ_U(keys > 0 ? t.node[keys].end_line : 0, 4, "keys ends on line 4");
	el = keys > 0 ? t.node[keys].first : -1;
	CHECK(el > 0 && t.node[el].kind == CS_GROUP && t.node[el].name_len == 0 &&
	      text[t.node[el].start] == '{' && text[t.node[el].val_end - 1] == '}',
	      "the first entry is a group, no name, brace to brace");
	CHECK(el > 0 && t.node[el].line == 2, "on line 2");
	name = cs_member(&t, el, "name");
	CHECK(cs_string(&t, name, s, sizeof(s)) && strcmp(s, "aA") == 0, "\\x41 is undone: %s", s);
	CHECK(cs_string(&t, cs_member(&t, el, "file"), s, sizeof(s)) && strcmp(s, "k/a.key") == 0,
	      "adjacent strings join: %s", s);
	CHECK(!cs_string(&t, cs_member(&t, el, "file"), s, 4), "too long for the buffer: false");
	CHECK(cs_string(&t, cs_member(&t, t.node[el].next, "secret"), s, sizeof(s)) &&
	      strcmp(s, "s\"t") == 0, "\\\" is undone");
	el = prot > 0 ? t.node[prot].first : -1;
	port = cs_member(&t, el, "port");
	CHECK(cs_int(&t, port, &v) && v == 22, "0x16 is 22");
	CHECK(!cs_int(&t, name, &v), "a string is no integer");
	arr = cs_member(&t, el, "keys");
	CHECK(arr > 0 && t.node[arr].kind == CS_ARRAY && t.node[arr].nchild == 1, "an array of 1");
	CHECK(cs_named(&t, arr, "keys") && !cs_named(&t, arr, "key"), "cs_named");
	CHECK_EQ_U(cs_line_of(text, sizeof(text) - 1, t.node[arr].val_off), 5, "cs_line_of");
	cs_free(&t);
}

struct show_row {
	int n;
	const char *text;
	int line;
	const char *want;
};

static const struct show_row shows[] = {
	{ 1, "a\n\t  b = 1;  \nc", 2, "b = 1;" },
	{ 2, "a", 2, "" },
	{ 3, "\n", 1, "" },
	{ 4, "{ name = \"k\"; secret = \"hunter2\"; },", 1, "{ name = \"k\"; secret = ...; }," },
	{ 5, "{ name = \"k; SECRET = \"x\"; } );", 1, "{ name = \"k; SECRET = ...; } );" },
	{ 6, "secret = \"a b\\\" c\", x = y;", 1, "secret = ..., ... = ...;" },
	{ 7, "secret = \"unterminated", 1, "secret = ..." },
	{ 8, "a\tb\x01", 1, "a b " },
};

static void test_show(void)
{
	char out[200], longline[400];

	for (size_t i = 0; i < sizeof(shows) / sizeof(shows[0]); i++) {
		const struct show_row *r = &shows[i];

		conf_diag_show_line(r->text, strlen(r->text), r->line, out, sizeof(out));
		CHECK(strcmp(out, r->want) == 0, "show row %d: \"%s\"", r->n, out);
	}
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	conf_diag_show_line(longline, strlen(longline), 1, out, sizeof(out));
	CHECK(strlen(out) == 123 && strcmp(out + 120, "...") == 0, "a long line is cut: %zu", strlen(out));
	conf_diag_show_line(longline, strlen(longline), 1, out, 10);
	CHECK(strlen(out) < 10, "a small buffer is not overrun");
}

struct msg_row {
	int n;
	const char *text;
	int line;		/* libconfig's */
	const char *msg;	/* libconfig's */
	const char *want;
};

static const struct msg_row msgs[] = {
	{ 1, "keys = (\n { name = \"a\"; file = \"/k\"; },\n);", 3, "syntax error",
	  "t.conf:2: syntax error: ',' after the last element of the list \"keys\": remove it "
	  "(libconfig takes no ',' before ')'); the line reads: { name = \"a\"; file = \"/k\"; }," },
	{ 2, "keys = ( );\nx = 1;\nkeys = ( );", 3, "duplicate setting name",
	  "t.conf:3: duplicate setting name: keys is already set at line 1: add the entries to "
	  "that list" },
	{ 3, "q = { a = 1; };\nq = { };", 2, "duplicate setting name",
	  "t.conf:2: duplicate setting name: q is already set at line 1: merge the two" },
	/* the second reading stops elsewhere: libconfig's words, and the line */
	{ 4, "a = 1;\nb = 2;", 2, "syntax error", "t.conf:2: syntax error; the line reads: b = 2;" },
	{ 5, "a = [ 1, \"x\" ];", 1, "mismatched element type in array",
	  "t.conf:1: mismatched element type in array" },
	{ 6, "{ name = \"k\"; secret = sss; }", 1, "syntax error",
	  "t.conf:1: syntax error: ... where a setting (name = value) belongs; the line reads: "
	  "{ name = \"k\"; secret = ...; }" },
	{ 7, "x = (\n { secret = sss; }\n);", 2, "syntax error",
	  "t.conf:2: syntax error: ... is not a value: a string goes in double quotes, \"...\"; "
	  "the line reads: { secret = ...; }" },
};

static void test_messages(void)
{
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		const struct msg_row *r = &msgs[i];
		struct conf_errors errs = { 0 };
		struct srcmap m = { .nsrc = 1 };

		snprintf(m.src[0].path, sizeof(m.src[0].path), "t.conf");
		m.out = (char *)(uintptr_t)r->text;
		m.len = strlen(r->text);
		conf_diag_libconfig(&m, r->line, r->msg, &errs);
		CHECK(errs.n == 1 && strcmp(errs.msg[0], r->want) == 0, "message row %d: %s", r->n,
		      errs.n ? errs.msg[0] : "(none)");
	}
}

/*
 * Mutations of a valid text: libconfig and the parser agree on whether it
 * is valid and, for "syntax error" and "duplicate setting name", on the
 * line.  (libconfig takes an unterminated string at the end of its text;
 * the prescan refuses those before libconfig sees them, so they are left
 * out here.)
 */
static void test_differential(void)
{
	static const char base[] =
		"keys = (\n"
		"\t{ name = \"alice\"; file = \"/etc/knockgw/keys/alice.key\"; },\n"
		"\t{ name = \"legacy\"; secret = \"Magic secret string\"; }\n"
		");\n"
		"queue = { num = 0; count = 1; };\n"
		"protect = (\n"
		"\t{ port = 22; mode = \"native\"; keys = [ \"alice\", \"legacy\" ];\n"
		"\t  addresses = [ \"192.0.2.1\" ]; window = 30; },\n"
		"\t{ port = 2222; mode = \"knock\"; keys = [ \"legacy\" ]; }\n"
		");\n";
	static const char ins[] = ",;(){}[]\"=:'x1 \n#";
	uint64_t seed = 23;
	unsigned agree = 0, valid = 0, other = 0, bad = 0;

	for (int it = 0; it < 4000; it++) {
		char text[sizeof(base) + 8], msg[128] = "";
		size_t len = sizeof(base) - 1;
		struct cs_tree t;
		struct cs_error e;
		int rc, lc, quotes = 0;

		memcpy(text, base, sizeof(base));
		for (int k = 0; k < 2; k++) {
			size_t pos = unit_rnd(&seed) % len;

			if (unit_rnd(&seed) & 1) {
				memmove(text + pos, text + pos + 1, len - pos);
				len--;
			} else {
				memmove(text + pos + 1, text + pos, len - pos + 1);
				text[pos] = ins[unit_rnd(&seed) % (sizeof(ins) - 1)];
				len++;
			}
		}
		for (size_t i = 0; i < len; i++)
			quotes += text[i] == '"';
		if (quotes % 2)
			continue;
		rc = cs_parse(text, len, &t, &e);
		lc = libconfig_line(text, msg, sizeof(msg));
		if (rc == 0 && lc == 0) {
			valid++;
		} else if (rc == -EINVAL && lc > 0 && e.line == lc &&
			   ((strcmp(msg, "syntax error") == 0 && e.kind != CSE_DUPLICATE) ||
			    (strcmp(msg, "duplicate setting name") == 0 && e.kind == CSE_DUPLICATE))) {
			agree++;
		} else if (rc == -EINVAL && lc > 0 && strcmp(msg, "syntax error") != 0 &&
			   strcmp(msg, "duplicate setting name") != 0) {
			other++;	/* libconfig's other errors are not the parser's business */
		} else {
			bad++;
			printf("# disagreement: parser %d kind %d line %d, libconfig %d %s:\n%s\n", rc,
			       e.kind, e.line, lc, msg, text);
		}
		cs_free(&t);
	}
	printf("# differential: %u valid, %u agreeing errors, %u other errors\n", valid, agree,
	       other);
	CHECK(bad == 0, "libconfig and the parser agree on every mutation (%u do not)", bad);
	CHECK(agree > 500, "the mutations make syntax errors (%u)", agree);
}

int main(void)
{
	test_parse();
	test_tree();
	test_show();
	test_messages();
	test_differential();
	return unit_done("test_confsyntax");
}
