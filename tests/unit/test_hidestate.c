/*
 * test_hidestate.c - the saved hiding state (hidestate.h): for each
 * configuration of the table below, the state hidestate_print() writes
 * loads with the configuration loader, and the tables made from it, the
 * running one and the hiding one, are the configuration's own, rule for
 * rule (nftplan) and as print-rules shows them.  Then hidestate_save(),
 * hidestate_table() and hidestate_remove() on a directory: mode 0600, no
 * temporary file left, a fresh secret each time, conf_load() takes the
 * file, the table it names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "config/conf.h"
#include "config/hidestate.h"
#include "kernel/nft/nftplan.h"
#include "kernel/nft/nftprint.h"
#include "kernel/nft/nftrules.h"
#include "unit.h"

#define KEYS "keys = ( { name = \"k\"; secret = \"s\"; } );\n"

struct row {
	int id;
	const char *text;	/* NULL: made by the test (max_conf) */
};

static const struct row rows[] = {
	{ 1, KEYS },
	{ 2, KEYS "protect = ( { port = 22; mode = \"knock\"; keys = [ \"k\" ]; } );\n" },
	{ 3, KEYS "protect = (\n"
		  " { port = 22; mode = \"knock\"; keys = [ \"k\" ];\n"
		  "   addresses = [ \"192.0.2.2\", \"2001:db8::/64\", \"198.51.100.7/24\" ]; },\n"
		  " { port = 2222; mode = \"knock\"; keys = [ \"k\" ]; integrity_len = 16; },\n"
		  " { port = 23; mode = \"knock\"; keys = [ \"k\" ]; on_fail = \"drop\"; },\n"
		  " { port = 443; mode = \"knock\"; keys = [ \"k\" ]; forward = true;\n"
		  "   addresses = [ \"203.0.113.5\", \"2001:db8:5::5\" ]; },\n"
		  " { port = 80; mode = \"knock\"; keys = [ \"k\" ];\n"
		  "   public = [ \"198.51.100.1\", \"[2001:db8::1]:8080\" ]; }\n"
		  ");\n" },
	{ 4, "queue = { num = 7; count = 3; maxlen = 100; };\n"
	     "rules = { table = \"kgw_2\"; mark_mask = 0x0ff00000; ct_mark_bit = 0x00080000;\n"
	     "          refuse_port = 9; ct_label = 40; };\n"
	     "translate = \"user\";\n"
	     "closed_ports = \"daemon\";\n"
	     "log_level = \"debug\";\n"
	     KEYS
	     "protect = ( { port = 22; mode = \"knock\"; keys = [ \"k\" ]; integrity_len = 8; },\n"
	     "            { port = 25; mode = \"knock\"; keys = [ \"k\" ]; on_fail = \"drop\"; } );\n"
	     "knock = ( { dst = \"192.0.2.10\"; port = 22; mode = \"knock\"; key = \"k\"; },\n"
	     "          { dst = \"198.51.100.0/24\"; port = 2222; mode = \"knock\"; key = \"k\";\n"
	     "            from = [ \"10.0.0.0/8\", \"fd00::/64\" ]; },\n"
	     "          { dst = \"2001:db8::10\"; port = 22; mode = \"knock\"; key = \"k\";\n"
	     "            integrity_len = 32; } );\n" },
	{ 5, "rules = { mark_mask = 0x00ff0000; };\n"
	     KEYS
	     "knock = ( { dst = \"2001:db8::/48\"; port = 443; mode = \"knock\"; key = \"k\";\n"
	     "            from = [ \"fd00:1::/64\", \"10.1.0.0/16\" ]; },\n"
	     "          { dst = \"203.0.113.0/24\"; port = 22; mode = \"knock\"; key = \"k\";\n"
	     "            from = [ \"10.2.0.0/16\" ]; from_interfaces = [ \"lan0\", \"wlan.7\" ]; } );\n" },
	{ 6, NULL },
};

/* Every protect entry there may be, each with every address it may have. */
static char *max_conf(void)
{
	size_t cap = 64 + (size_t)CONF_MAX_PROTECT * (120 + CONF_MAX_ADDRS * 24), off = 0;
	char *t = malloc(cap);

	if (!t)
		return NULL;
	off += (size_t)snprintf(t + off, cap - off, "%sprotect = (\n", KEYS);
	for (int i = 0; i < CONF_MAX_PROTECT; i++) {
		off += (size_t)snprintf(t + off, cap - off,
					" { port = %d; mode = \"knock\"; keys = [ \"k\" ]; addresses = [",
					1000 + i);
		for (int a = 0; a < CONF_MAX_ADDRS; a++)
			off += (size_t)snprintf(t + off, cap - off, "%s\"2001:db8:%x::%x\"",
						a ? ", " : "", i, a + 1);
		off += (size_t)snprintf(t + off, cap - off, "]; }%s\n",
					i + 1 < CONF_MAX_PROTECT ? "," : "");
	}
	snprintf(t + off, cap - off, ");\n");
	return t;
}

static bool prefix_same(const struct prefix *a, const struct prefix *b)
{
	if (!a || !b)
		return a == b;
	return prefix_equal(a, b);
}

/* The two plans make the same rules (their configuration lines aside). */
static bool plans_equal(const struct nftplan *a, const struct nftplan *b, int id, const char *what)
{
	if (a->n != b->n || memcmp(a->qnum, b->qnum, sizeof(a->qnum)) != 0 || a->qtotal != b->qtotal ||
	    a->bypass != b->bypass || a->refuse_port != b->refuse_port || a->hiding != b->hiding ||
	    memcmp(&a->m, &b->m, sizeof(a->m)) != 0 || memcmp(a->used, b->used, sizeof(a->used))) {
		printf("# row %d, %s: plans differ: %zu rules and %zu\n", id, what, a->n, b->n);
		return false;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct nftplan_rule *x = &a->r[i], *y = &b->r[i];

		if (x->kind != y->kind || x->chain != y->chain || x->port != y->port ||
		    !prefix_same(x->addr, y->addr) || !prefix_same(x->from, y->from) ||
		    x->addr_is_src != y->addr_is_src || x->local != y->local ||
		    x->rpf != y->rpf || !x->iif != !y->iif || (x->iif && strcmp(x->iif, y->iif)) ||
		    x->forward != y->forward || x->bypass != y->bypass || x->value != y->value ||
		    x->qset != y->qset) {
			printf("# row %d, %s: rule %zu differs\n", id, what, i);
			return false;
		}
	}
	return true;
}

static bool same_plan(const struct conf *a, const struct conf *b, bool hiding, int id)
{
	struct nftplan pa, pb;
	bool same;

	if ((hiding ? nftplan_make_hiding(a, &pa) : nftplan_make(a, &pa)) < 0)
		return false;
	if ((hiding ? nftplan_make_hiding(b, &pb) : nftplan_make(b, &pb)) < 0) {
		nftplan_free(&pa);
		return false;
	}
	same = plans_equal(&pa, &pb, id, hiding ? "hiding" : "running");
	nftplan_free(&pa);
	nftplan_free(&pb);
	return same;
}

/* print-rules' text from "table inet" on (its first line names the file). */
static char *printed(const struct conf *c)
{
	char *buf = NULL, *body;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	nftprint_ruleset(c, NFT_QUEUE_COMPAT, f);
	fclose(f);
	body = strstr(buf, "table inet");
	body = strdup(body ? body : "");
	free(buf);
	return body;
}

static char *state_text(const struct conf *c, const char *secret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	if (!f)
		return NULL;
	r = hidestate_print(c, secret, f);
	fclose(f);
	if (r < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void test_rows(void)
{
	struct conf *c = calloc(1, sizeof(*c)), *s = calloc(1, sizeof(*s));
	struct conf_errors *errs = calloc(1, sizeof(*errs));

	if (!c || !s || !errs) {
		CHECK(0, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		char *made = r->text ? NULL : max_conf();
		const char *text = r->text ? r->text : made;
		char *state, *pc, *ps;

		/* A path that could end the comment it is quoted in. */
		if (!text || conf_load_text("t.conf\nprotect = ();", text, c, errs) < 0) {
			CHECK(0, "row %d: the configuration loads (%s)", r->id,
			      errs->n ? errs->msg[0] : "no memory");
			free(made);
			continue;
		}
		state = state_text(c, "0123456789abcdefABCDEF+/=");
		CHECK(state != NULL, "row %d: the state is written", r->id);
		if (!state || conf_load_text("state.conf", state, s, errs) < 0) {
			CHECK(0, "row %d: the state loads (%s)", r->id,
			      errs->n ? errs->msg[0] : "no text");
			if (state)
				printf("# %s", state);
			conf_free(c);
			free(state);
			free(made);
			continue;
		}
		CHECK(s->on_stop == ON_STOP_HIDE && s->rules_manage, "row %d: hide, managed",
		      r->id);
		CHECK(s->nkeys == 1 && !s->keys[0].from_file,
		      "row %d: the state's one key is a text secret", r->id);
		CHECK(strstr(state, "\"s\"") == NULL, "row %d: the configuration's secret is not in it",
		      r->id);
		CHECK_EQ_U(s->nprotect, c->nprotect, "row %d: protect entries", r->id);
		CHECK_EQ_U(s->nknock, c->nknock, "row %d: knock entries", r->id);
		CHECK(same_plan(c, s, false, r->id), "row %d: the same running table, rule for rule",
		      r->id);
		CHECK(same_plan(c, s, true, r->id), "row %d: the same hiding table, rule for rule",
		      r->id);
		pc = printed(c);
		ps = printed(s);
		CHECK(pc && ps && strcmp(pc, ps) == 0, "row %d: print-rules prints the same",
		      r->id);
		free(pc);
		free(ps);
		conf_free(s);
		conf_free(c);
		free(state);
		free(made);
	}
out:
	free(c);
	free(s);
	free(errs);
}

/* Files in dir but . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	if (f && buf)
		buf[fread(buf, 1, (1 << 16) - 1, f)] = '\0';
	if (f)
		fclose(f);
	return buf;
}

static void test_save(void)
{
	char dir[] = "/tmp/test_hidestate.XXXXXX", path[PATH_MAX], err[512], table[CONF_NAME_MAX];
	struct conf *c = calloc(1, sizeof(*c)), *s = calloc(1, sizeof(*s));
	struct conf_errors *errs = calloc(1, sizeof(*errs));
	char *first = NULL, *second = NULL;
	struct stat st;

	if (!c || !s || !errs || !mkdtemp(dir) ||
	    conf_load_text("t.conf", rows[1].text, c, errs) < 0) {
		CHECK(0, "setup");
		goto out;
	}
	CHECK(hidestate_path(dir, path, sizeof(path)) == 0 &&
		      strcmp(path + strlen(dir), "/" HIDESTATE_FILE) == 0,
	      "save: the path is DIR/" HIDESTATE_FILE);
	CHECK_EQ_U(hidestate_remove(dir), 0, "save: remove with nothing saved: 0");
	CHECK(hidestate_table(dir, table) == -ENOENT, "save: no state, no table: -ENOENT");
	CHECK(hidestate_save(c, dir, err, sizeof(err)) == 0, "save: saved (%s)", err);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && S_ISREG(st.st_mode),
	      "save: a regular file, mode 0600");
	CHECK_EQ_U(entries(dir), 1, "save: nothing else in the directory");
	CHECK(conf_load(path, s, errs) == 0, "save: conf_load takes the file (%s)",
	      errs->n ? errs->msg[0] : "");
	CHECK(s->nprotect == 1 && s->protect[0].port == 22, "save: port 22 in it");
	conf_free(s);
	CHECK(hidestate_table(dir, table) == 0 && strcmp(table, "knockgw") == 0,
	      "save: the state names table knockgw");
	first = slurp(path);
	CHECK(hidestate_save(c, dir, err, sizeof(err)) == 0, "save: saved again (%s)", err);
	second = slurp(path);
	CHECK(first && second && strcmp(first, second) != 0,
	      "save: a new secret each time (the files differ)");
	CHECK_EQ_U(entries(dir), 1, "save: replaced, nothing else in the directory");
	CHECK(hidestate_save(c, "/nonexistent/dir", err, sizeof(err)) == -ENOENT &&
		      strstr(err, "/nonexistent/dir"),
	      "save: a missing directory: -ENOENT, named (%s)", err);
	{
		FILE *f = fopen(path, "w");

		if (f) {
			fputs("this is not libconfig\n", f);
			fclose(f);
		}
	}
	CHECK(hidestate_table(dir, table) == -EINVAL, "save: a state that does not load: -EINVAL");
	CHECK_EQ_U(hidestate_remove(dir), 1, "save: remove: 1");
	CHECK_EQ_U(entries(dir), 0, "save: removed");
	rmdir(dir);
out:
	free(first);
	free(second);
	conf_free(c);
	free(c);
	free(s);
	free(errs);
}

static void test_dir(void)
{
	char buf[64];

	setenv("STATE_DIRECTORY", "/var/lib/knockgw", 1);
	CHECK(strcmp(hidestate_dir(buf, sizeof(buf), NULL), "/var/lib/knockgw") == 0,
	      "dir: $STATE_DIRECTORY");
	setenv("STATE_DIRECTORY", "/var/lib/a:/var/lib/b", 1);
	CHECK(strcmp(hidestate_dir(buf, sizeof(buf), NULL), "/var/lib/a") == 0,
	      "dir: the first of several");
	setenv("STATE_DIRECTORY", "relative", 1);
	CHECK(hidestate_dir(buf, sizeof(buf), NULL) == NULL, "dir: a relative one is none");
	setenv("STATE_DIRECTORY", "/a/very/long/directory/name/that/does/not/fit/in/sixty/four/bytes", 1);
	CHECK(strcmp(hidestate_dir(buf, sizeof(buf), "/fb"), "/fb") == 0,
	      "dir: one that does not fit: the fallback");
	unsetenv("STATE_DIRECTORY");
	CHECK(hidestate_dir(buf, sizeof(buf), NULL) == NULL, "dir: unset: none");
	CHECK(strcmp(hidestate_dir(buf, sizeof(buf), HIDESTATE_DEFAULT_DIR), "/var/lib/knockgw") == 0,
	      "dir: unset: the fallback");
}

int main(void)
{
	test_rows();
	test_save();
	test_dir();
	return unit_done("hidestate");
}
