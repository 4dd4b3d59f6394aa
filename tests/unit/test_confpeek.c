/*
 * test_confpeek.c - what `knockgw flush` reads of a file that may not load
 * (conf_peek(), on text: conf_peek_text()).  Each row is a configuration
 * text and the table, control socket and "where from" it must give, and
 * whether the command must say it assumed something.  Table-driven; no
 * root, no files but what the text names.
 */
#include <stdbool.h>
#include <string.h>

#include "config/conf.h"
#include "unit.h"

#define DEF_TABLE "knockgw"
#define DEF_SOCK "/run/knockgw/control.sock"

static const struct row {
	const char *what;
	const char *text;
	const char *table, *table_from;		/* from: a prefix of the text kept */
	const char *sock, *sock_from;
	bool assumed;
} rows[] = {
	{ "an empty file: the defaults, nothing assumed", "",
	  DEF_TABLE, "default: not set", DEF_SOCK, "default: not set", false },
	{ "both set", "rules = { table = \"kg2\"; };\ncontrol_socket = \"/run/kg2.sock\";\n",
	  "kg2", "t.conf:1", "/run/kg2.sock", "t.conf:2", false },
	{ "the file does not load (a key file missing, an unknown setting, a bad entry): "
	  "flush reads its two settings all the same",
	  "bogus = 1;\nrules = { table = \"kg2\"; manage = 7; };\n"
	  "keys = ( { name = \"a\"; file = \"/nonexistent/a.key\"; } );\n"
	  "protect = ( { port = 0; mode = \"sodium\"; keys = [ \"b\" ]; } );\n",
	  "kg2", "t.conf:2", DEF_SOCK, "default: not set", false },
	{ "a bad table name: the default, and why",
	  "rules = { table = \"kg-2\"; };\n",
	  DEF_TABLE, "default: t.conf:1: rules.table must be 1..32 characters", DEF_SOCK,
	  "default: not set", true },
	{ "a table that is not a string", "rules = { table = 5; };\n",
	  DEF_TABLE, "default: t.conf:1: rules.table must be a string", DEF_SOCK,
	  "default: not set", true },
	{ "rules that is not a group", "rules = 5;\ncontrol_socket = \"/run/x.sock\";\n",
	  DEF_TABLE, "default: t.conf:1: \"rules\" must be a group", "/run/x.sock", "t.conf:2",
	  true },
	{ "a relative control socket", "control_socket = \"x.sock\";\n",
	  DEF_TABLE, "default: not set", DEF_SOCK,
	  "default: t.conf:1: control_socket must be an absolute path", true },
	{ "a syntax error after the settings: they are read, and that is said",
	  "rules = {\n  table = \"kg2\";\n  manage = true;\n};\n"
	  "control_socket = \"/run/kg2.sock\";\n"
	  "protect = ( { port = 22; mode = \"native\" ;;; } );\n",
	  "kg2", "t.conf:2, above the parse error", "/run/kg2.sock",
	  "t.conf:5, above the parse error", true },
	{ "a syntax error between them: the one before is read",
	  "rules = { table = \"kg2\"; };\nprotect = ( { port = 22 ;;; } );\n"
	  "control_socket = \"/run/kg2.sock\";\n",
	  "kg2", "t.conf:1, above the parse error", DEF_SOCK,
	  "default: t.conf:2: syntax error, not set before it", true },
	{ "a syntax error first: the defaults, and why",
	  "protect = ( { port = 22 ;;; } );\nrules = { table = \"kg2\"; };\n",
	  DEF_TABLE, "default: t.conf:1: syntax error", DEF_SOCK,
	  "default: t.conf:1: syntax error", true },
	{ "a syntax error inside the rules group: the table is not guessed",
	  "control_socket = \"/run/kg2.sock\";\nrules = {\n  table = \"kg2\";\n  manage = ;\n};\n",
	  DEF_TABLE, "default: t.conf:4: syntax error, not set before it", "/run/kg2.sock",
	  "t.conf:1, above the parse error", true },
	{ "a setting given twice after them: read from above the second",
	  "rules = { table = \"kg2\"; };\nlog_level = \"info\";\nlog_level = \"debug\";\n",
	  "kg2", "t.conf:1, above the parse error", DEF_SOCK,
	  "default: t.conf:3: duplicate setting name, not set before it", true },
	{ "a group left open at the end", "rules = { table = \"kg2\"; };\nqueue = {\n",
	  "kg2", "t.conf:1, above the parse error", DEF_SOCK,
	  "default: t.conf:3: syntax error, not set before it", true },
	{ "an @include that is missing: nothing is read",
	  "rules = { table = \"kg2\"; };\n@include \"/nonexistent/more.conf\"\n",
	  DEF_TABLE, "default: t.conf:2: ", DEF_SOCK, "default: t.conf:2: ", true },
};

/*
 * What knock-connect -c reports: socket_why is empty exactly when the
 * socket is what the file says (set, or not set in a text read whole).
 */
static const struct why_row {
	const char *text;
	const char *why;		/* a prefix; "" none */
} why_rows[] = {
	{ "", "" },
	{ "control_socket = \"/run/kg2.sock\";\n", "" },
	{ "rules = 5;\ncontrol_socket = \"/run/x.sock\";\n", "" },
	{ "rules = { table = \"kg-2\"; };\n", "" },
	{ "control_socket = \"x.sock\";\n", "t.conf:1: control_socket must be an absolute path" },
	{ "control_socket = 5;\n", "t.conf:1: control_socket must be a string" },
	{ "control_socket = \"/run/kg2.sock\";\nprotect = ( { port = 22 ;;; } );\n",
	  "t.conf:2: syntax error" },
	{ "protect = ( { port = 22 ;;; } );\n", "t.conf:1: syntax error" },
	{ "@include \"/nonexistent/more.conf\"\n", "t.conf:1: " },
};

static void test_socket_why(void)
{
	for (size_t i = 0; i < sizeof(why_rows) / sizeof(why_rows[0]); i++) {
		const struct why_row *r = &why_rows[i];
		struct conf_peek p;

		conf_peek_text("t.conf", r->text, &p);
		if (!r->why[0])
			CHECK(p.socket_why[0] == '\0', "why row %zu: none, got \"%s\"", i,
			      p.socket_why);
		else
			CHECK(strncmp(p.socket_why, r->why, strlen(r->why)) == 0,
			      "why row %zu: \"%s\", want \"%s...\"", i, p.socket_why, r->why);
	}
}

int main(void)
{
	test_socket_why();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct conf_peek p;

		conf_peek_text("t.conf", r->text, &p);
		CHECK(!p.failed, "%s: not failed", r->what);
		CHECK(strcmp(p.table, r->table) == 0, "%s: table \"%s\", want \"%s\"", r->what,
		      p.table, r->table);
		CHECK(strncmp(p.table_from, r->table_from, strlen(r->table_from)) == 0,
		      "%s: table from \"%s\", want \"%s...\"", r->what, p.table_from,
		      r->table_from);
		CHECK(strcmp(p.control_socket, r->sock) == 0, "%s: socket \"%s\", want \"%s\"",
		      r->what, p.control_socket, r->sock);
		CHECK(strncmp(p.socket_from, r->sock_from, strlen(r->sock_from)) == 0,
		      "%s: socket from \"%s\", want \"%s...\"", r->what, p.socket_from,
		      r->sock_from);
		CHECK(p.assumed == r->assumed, "%s: assumed %d, want %d", r->what, p.assumed,
		      r->assumed);
	}
	return unit_done("confpeek");
}
