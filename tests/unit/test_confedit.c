/*
 * test_confedit.c - a key added to and removed from a configuration's
 * text (confedit.[ch]) and the diff shown for it (udiff.[ch]).
 *
 * Tables of texts: what invite and revoke make of each (byte for byte:
 * every other byte and comment stays), or why they refuse; each result
 * must parse.  Then the round trip, revoke after invite, which must give
 * back the text it started from wherever the key joins an entry that was
 * there; a text spread over an @include (the edits land in the file that
 * holds the list); and udiff against an applier of its own hunks.  The
 * texts are written to files in a temporary directory, as the loader
 * reads them: no root needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/conf.h"
#include "config/edit/confedit.h"
#include "config/edit/udiff.h"
#include "unit.h"

static char dir[64];

#define KP "/k/alice.key"

struct row {
	int n;
	const char *text;
	const char *want;	/* NULL: refused with want_r */
	int want_r;
};

static const struct confedit_invite alice = { "alice", KP, 22, "native", 0 };

static const struct row invites[] = {
	/* the example file's shape: empty lists of comments */
	{ 1,
	  "keys = (\n\t# { name = \"x\"; file = \"x\"; },\n);\n\nprotect = (\n\t# { port = 22; },\n);\n",
	  "keys = (\n\t# { name = \"x\"; file = \"x\"; },\n\t{ name = \"alice\"; file = \"" KP "\"; }\n);\n"
	  "\nprotect = (\n\t# { port = 22; },\n\t{ port = 22; mode = \"native\"; keys = [ \"alice\" ]; }\n);\n",
	  0 },
	/* an entry there: a line after it, indented alike; the name into its array */
	{ 2,
	  "keys = (\n    { name = \"bob\"; file = \"/k/bob.key\"; }\t# bob's\n);\n"
	  "protect = (\n  { port = 22; mode = \"native\"; keys = [ \"bob\" ]; window = 60; }\n);\n",
	  "keys = (\n    { name = \"bob\"; file = \"/k/bob.key\"; },\t# bob's\n"
	  "    { name = \"alice\"; file = \"" KP "\"; }\n);\n"
	  "protect = (\n  { port = 22; mode = \"native\"; keys = [ \"bob\", \"alice\" ]; window = 60; }\n);\n",
	  0 },
	/* one-line lists stay on their line */
	{ 3,
	  "keys = ( { name = \"bob\"; file = \"/k/bob.key\"; } );\nprotect = ( { port = 2222; mode = \"native\"; keys = [ \"bob\" ]; } );",
	  "keys = ( { name = \"bob\"; file = \"/k/bob.key\"; }, { name = \"alice\"; file = \"" KP "\"; } );\n"
	  "protect = ( { port = 2222; mode = \"native\"; keys = [ \"bob\" ]; }, { port = 22; mode = \"native\"; keys = [ \"alice\" ]; } );",
	  0 },
	/* no lists: appended, after the newline the file lacked */
	{ 4, "log_level = \"info\";",
	  "log_level = \"info\";\n\nkeys = (\n\t{ name = \"alice\"; file = \"" KP "\"; }\n);\n"
	  "\nprotect = (\n\t{ port = 22; mode = \"native\"; keys = [ \"alice\" ]; }\n);\n", 0 },
	{ 5, "keys = ();\nprotect = [ ];\n",
	  "keys = ( { name = \"alice\"; file = \"" KP "\"; } );\nprotect = ( { port = 22; mode = \"native\"; keys = [ \"alice\" ]; } );\n", 0 },
	/* refusals */
	{ 10, "keys = ( { name = \"alice\"; secret = \"x\"; } );", NULL, -EEXIST },
	{ 11, "keys = ( );\nprotect = ( { port = 22; mode = \"knock\"; keys = [ \"b\" ]; } );", NULL, -EINVAL },
	{ 12, "keys = ( );\nprotect = ( { port = 22; mode = \"native\"; keys = [ \"b\" ]; integrity_len = 21; } );", NULL, -EINVAL },
	{ 13, "keys = ( );\nprotect = ( { port = 22; mode = \"native\"; keys = [ \"b\" ]; addresses = [ \"192.0.2.1\" ]; },\n"
	  "{ port = 22; mode = \"native\"; keys = [ \"b\" ]; addresses = [ \"192.0.2.2\" ]; } );", NULL, -EINVAL },
	{ 14, "keys = 1;", NULL, -EINVAL },
	{ 15, "keys = ( );\nprotect = ( { port = 22; mode = \"native\"; keys = \"b\"; } );", NULL, -EINVAL },
};

static const struct row revokes[] = {
	/* alone on its line: the line goes, comment and all; the ',' before the last one too */
	{ 1,
	  "keys = (\n\t# keys\n\t{ name = \"bob\"; file = \"b\"; },\n\t{ name = \"alice\"; file = \"a\"; }\t# hers\n);\n"
	  "protect = ( { port = 22; mode = \"native\"; keys = [ \"bob\", \"alice\" ]; } );\n",
	  "keys = (\n\t# keys\n\t{ name = \"bob\"; file = \"b\"; }\n);\n"
	  "protect = ( { port = 22; mode = \"native\"; keys = [ \"bob\" ]; } );\n", 0 },
	/* first of several, inline and on lines */
	{ 2,
	  "keys = (\n\t{ name = \"alice\"; file = \"a\"; },\n\t{ name = \"bob\"; file = \"b\"; }\n);\n"
	  "protect = (\n\t{ port = 22; mode = \"native\"; keys = [ \"alice\", \"bob\" ]; },\n"
	  "\t{ port = 23; mode = \"native\"; keys = [\n\t\t\"alice\",\n\t\t\"bob\"\n\t]; }\n);\n",
	  "keys = (\n\t{ name = \"bob\"; file = \"b\"; }\n);\n"
	  "protect = (\n\t{ port = 22; mode = \"native\"; keys = [ \"bob\" ]; },\n"
	  "\t{ port = 23; mode = \"native\"; keys = [\n\t\t\"bob\"\n\t]; }\n);\n", 0 },
	/* knock entries that use it go; one-line lists */
	{ 3,
	  "keys = ( { name = \"b\"; secret = \"x\"; }, { name = \"alice\"; file = \"a\"; }, { name = \"c\"; secret = \"y\"; } );\n"
	  "knock = ( { dst = \"192.0.2.1\"; port = 22; mode = \"native\"; key = \"alice\"; },\n"
	  "          { dst = \"192.0.2.2\"; port = 22; mode = \"knock\"; key = \"b\"; },\n"
	  "          { dst = \"192.0.2.3\"; port = 22; mode = \"native\"; key = \"alice\"; } );\n",
	  "keys = ( { name = \"b\"; secret = \"x\"; }, { name = \"c\"; secret = \"y\"; } );\n"
	  "knock = (\n"
	  "          { dst = \"192.0.2.2\"; port = 22; mode = \"knock\"; key = \"b\"; }\n );\n", 0 },
	{ 4, "keys = ( { name = \"alice\"; file = \"a\"; } );\n", "keys = ( );\n", 0 },
	/* refusals */
	{ 10, "keys = ( { name = \"bob\"; file = \"b\"; } );", NULL, -ENOENT },
	{ 11, "keys = ( { name = \"alice\"; file = \"a\"; } );\nprotect = ( { port = 22; mode = \"native\"; keys = [ \"alice\" ]; } );", NULL, -EINVAL },
};

/* path holding text, mode 0600 (a configuration must not be group- or world-writable). */
static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("not ok cannot write %s\n", path);
		exit(1);
	}
	chmod(path, 0600);
}

/*
 * invite (name != NULL: revoke of name) on the files already written, main
 * file main: the result of file f in *out (malloc'd) or the plan's error.
 */
static int run(const char *main, const char *name, int f, char **out, char *why, size_t whylen)
{
	struct conf_errors errs;
	struct confedit_plan *plan = calloc(1, sizeof(*plan));
	struct confedit *e = calloc(CONFEDIT_MAX, sizeof(*e));
	struct srcmap *m;
	struct cs_tree t = { 0 };
	struct cs_error err;
	size_t n = 0, len;
	int r;

	*out = NULL;
	m = conf_text_read_opts(main, NULL, true, &errs, &r);
	if (r == 0)
		r = cs_parse(m->out, m->len, &t, &err);
	if (r == 0)
		r = name ? confedit_revoke(&t, m, name, plan) : confedit_invite(&t, m, &alice, plan);
	snprintf(why, whylen, "%s", plan->why);
	if (r == 0)
		r = confedit_map(m, plan, f, e, &n);
	if (r == 0)
		r = confedit_apply(m->src[f].text, m->src[f].len, e, n, out, &len);
	confedit_free(plan);
	cs_free(&t);
	srcmap_free(m);
	free(plan);
	free(e);
	return r;
}

static bool parses(const char *text)
{
	struct cs_tree t;
	struct cs_error e;
	int r = cs_parse(text, strlen(text), &t, &e);

	cs_free(&t);
	return r == 0;
}

static void table(const char *what, const struct row *rows, size_t n, const char *name)
{
	char path[128], why[CONFEDIT_MSG], *out;

	snprintf(path, sizeof(path), "%s/t.conf", dir);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		int rc;

		put(path, r->text);
		rc = run(path, name, 0, &out, why, sizeof(why));
		if (r->want) {
			CHECK(rc == 0 && out && strcmp(out, r->want) == 0, "%s row %d: rc %d, got:\n%s",
			      what, r->n, rc, out ? out : why);
			CHECK(out && parses(out), "%s row %d: the result parses", what, r->n);
		} else {
			CHECK(rc == r->want_r && why[0], "%s row %d: refused (%d, want %d): %s", what,
			      r->n, rc, r->want_r, why);
			printf("# %s row %d: %s\n", what, r->n, why);
		}
		free(out);
	}
}

/* Invite into an entry that is there, then revoke: the text it started from, byte for byte. */
static void round_trip(void)
{
	static const char *const texts[] = {
		invites[1].text,
		"keys = ( { name = \"bob\"; file = \"/k/bob.key\"; } );\nprotect = ( { port = 22; mode = \"native\"; keys = [ \"bob\" ]; } );",
		"# head\nkeys = (\n\t{ name = \"bob\"; file = \"/k/bob.key\"; }\t# b\n\t/* c */\n);\n"
		"protect = (\n\t{ port = 22; mode = \"native\";\n\t  keys = [\n\t\t\"bob\"\n\t  ];\n\t}\n);\n",
	};
	char path[128], why[CONFEDIT_MSG], *once, *back;

	snprintf(path, sizeof(path), "%s/rt.conf", dir);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		put(path, texts[i]);
		CHECK(run(path, NULL, 0, &once, why, sizeof(why)) == 0, "round trip %zu: invite (%s)", i,
		      why);
		if (!once)
			continue;
		put(path, once);
		CHECK(run(path, "alice", 0, &back, why, sizeof(why)) == 0, "round trip %zu: revoke (%s)",
		      i, why);
		CHECK(back && strcmp(back, texts[i]) == 0, "round trip %zu gives the text back:\n%s", i,
		      back ? back : "");
		free(once);
		free(back);
	}
}

/* The lists in an included file: that file gets the edits, the main one stays. */
static void include(void)
{
	static const char main_text[] = "# main\n@include \"inc.conf\"\nlog_level = \"info\";\n";
	static const char inc_text[] =
		"keys = (\n\t{ name = \"bob\"; file = \"/k/bob.key\"; }\n);\n"
		"protect = ( { port = 22; mode = \"native\"; keys = [ \"bob\" ]; } );";
	char path[128], inc[128], why[CONFEDIT_MSG], *out;

	snprintf(path, sizeof(path), "%s/main.conf", dir);
	snprintf(inc, sizeof(inc), "%s/inc.conf", dir);
	put(path, main_text);
	put(inc, inc_text);
	CHECK(run(path, NULL, 0, &out, why, sizeof(why)) == 0 && out && strcmp(out, main_text) == 0,
	      "include: the main file is unchanged (%s)", why);
	free(out);
	CHECK(run(path, NULL, 1, &out, why, sizeof(why)) == 0 && out &&
		      strcmp(out, "keys = (\n\t{ name = \"bob\"; file = \"/k/bob.key\"; },\n"
				  "\t{ name = \"alice\"; file = \"" KP "\"; }\n);\n"
				  "protect = ( { port = 22; mode = \"native\"; keys = [ \"bob\", \"alice\" ]; } );") == 0,
	      "include: the included file gets both edits:\n%s", out ? out : why);
	free(out);
}

/* Applies the hunks of diff (as udiff prints them) to a: must give b. */
static bool patch_gives(const char *a, const char *diff, const char *b)
{
	char out[8192];
	const char *d = strstr(diff, "\n+++ ");
	size_t o = 0;
	char last = 0;
	int aline = 1;

	if (!d)
		return false;
	d = strchr(d + 1, '\n') + 1;
	while (*d) {
		int as, ac, bs, bc;

		if (sscanf(d, "@@ -%d,%d +%d,%d @@", &as, &ac, &bs, &bc) != 4)
			return false;
		if (ac == 0)
			as++;
		for (; aline < as; aline++) {	/* copy unchanged lines */
			const char *nl = strchr(a, '\n');
			size_t l = nl ? (size_t)(nl - a) + 1 : strlen(a);

			memcpy(out + o, a, l);
			o += l;
			a += l;
		}
		d = strchr(d, '\n') + 1;
		while (*d == ' ' || *d == '-' || *d == '+' || *d == '\\') {
			const char *nl = strchr(d, '\n');
			size_t l = (size_t)(nl - d);

			if (*d == '\\') {
				if ((last == ' ' || last == '+') && o > 0 && out[o - 1] == '\n')
					o--;
			} else if (*d != '-') {
				memcpy(out + o, d + 1, l);
				o += l;
			}
			if (*d == ' ' || *d == '-') {
				a = strchr(a, '\n') ? strchr(a, '\n') + 1 : a + strlen(a);
				aline++;
			}
			last = *d;
			d = nl + 1;
		}
	}
	memcpy(out + o, a, strlen(a));
	o += strlen(a);
	out[o] = '\0';
	return strcmp(out, b) == 0;
}

static void diff(void)
{
	static const char *const pairs[][2] = {
		{ "a\nb\nc\n", "a\nB\nc\n" },
		{ "", "x\n" },
		{ "x\n", "" },
		{ "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n",
		  "1\n2a\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14b\n15\n" },
		{ "a\nb", "a\nb\n" },
		{ "k = (\n);\n", "k = (\n\t{ x }\n);\n" },
	};
	char buf[8192];

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		FILE *f = fmemopen(buf, sizeof(buf), "w");

		CHECK(f && udiff_print(f, "a", pairs[i][0], strlen(pairs[i][0]), "b", pairs[i][1],
				       strlen(pairs[i][1])) == 0, "diff %zu prints", i);
		if (f)
			fclose(f);
		CHECK(patch_gives(pairs[i][0], buf, pairs[i][1]), "diff %zu applies:\n%s", i, buf);
	}
	{
		FILE *f = fmemopen(buf, sizeof(buf), "w");

		udiff_print(f, "a", "x\n", 2, "b", "x\n", 2);
		CHECK(ftell(f) == 0, "no diff for the same text");
		fclose(f);
	}
	{
		FILE *f = fmemopen(buf, sizeof(buf), "w");

		udiff_print(f, "a", pairs[3][0], strlen(pairs[3][0]), "b", pairs[3][1],
			    strlen(pairs[3][1]));
		fclose(f);
		CHECK(strstr(buf, "@@ -1,5 +1,5 @@") && strstr(buf, "@@ -11,5 +11,5 @@"),
		      "two hunks, three lines of context:\n%s", buf);
	}
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_confedit.XXXXXX");
	if (!mkdtemp(dir)) {
		printf("not ok mkdtemp\n");
		return 1;
	}
	table("invite", invites, sizeof(invites) / sizeof(invites[0]), NULL);
	table("revoke", revokes, sizeof(revokes) / sizeof(revokes[0]), "alice");
	round_trip();
	include();
	diff();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	return unit_done("test_confedit");
}
