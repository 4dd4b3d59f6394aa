/*
 * test_invite.c - `knockgw invite`'s command line and text (invite.[ch]).
 *
 * Three tables: names (safe as key names and file names or not), command
 * lines (what they parse to, or the usage error), and the printed text
 * (pieces that must be there, pieces that must not: the key without
 * --show-key, a ProxyCommand without integrity).  No file is made.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/invite_text.h"
#include "unit.h"

#define KEY "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE=\n"
#define PATH "/etc/knockgw/keys/alice.key"

static const struct {
	const char *name;
	bool ok;
} names[] = {
	{ "alice", true },
	{ "a", true },
	{ "Bob_2.laptop-x", true },
	{ "_x", true },
	{ "0123456789abcdef0123456789abcdef", true },	/* 32 */
	{ "0123456789abcdef0123456789abcdefX", false },	/* 33 */
	{ "", false },
	{ ".", false },
	{ "..", false },
	{ ".hidden", false },
	{ "-rf", false },
	{ "a/b", false },
	{ "../etc", false },
	{ "a b", false },
	{ "a\"b", false },
	{ "caf\xc3\xa9", false },
};

/* A command line after "invite", NULL-terminated; what it must parse to. */
struct parse_row {
	const char *argv[12];
	int want;		/* INVITE_RUN, INVITE_HELP or CLI_USAGE */
	const char *name, *dst, *mode, *dir;
	unsigned port, ilen;
	bool show;
	bool apply;
	const char *conf;
};

/* A usage error; --help. */
#define U(...) { .argv = { __VA_ARGS__ }, .want = CLI_USAGE }
#define H(...) { .argv = { __VA_ARGS__ }, .want = INVITE_HELP }

static const struct parse_row parses[] = {
	{ { "alice", "--dst", "192.0.2.2" }, INVITE_RUN, "alice", "192.0.2.2", "native",
	  INVITE_KEYS_DIR, 22, 0, false, false, NULL },
	{ { "--dst", "2001:db8::2", "bob", "--port", "2222", "--mode", "knock", "--integrity-len",
	    "21", "--keys-dir", "/tmp/k", "--show-key" },
	  INVITE_RUN, "bob", "2001:db8::2", "knock", "/tmp/k", 2222, 21, true, false, NULL },
	{ { "a", "--dst=192.0.2.2", "--port=65535", "--integrity-len=2048" }, INVITE_RUN, "a",
	  "192.0.2.2", "native", INVITE_KEYS_DIR, 65535, 2048, false, false, NULL },
	{ { "a", "--dst", "192.0.2.2", "--integrity-len", "0" }, INVITE_RUN, "a", "192.0.2.2",
	  "native", INVITE_KEYS_DIR, 22, 0, false, false, NULL },
	{ { "a", "--dst", "192.0.2.2", "--apply", "-c", "/srv/k.conf" }, INVITE_RUN, "a", "192.0.2.2",
	  "native", INVITE_KEYS_DIR, 22, 0, false, true, "/srv/k.conf" },
	H("--help"),
	H("-h", "alice"),
	H("alice", "--dst", "192.0.2.2", "-h"),
	/* usage errors */
	U(NULL),
	U("alice"),				/* no --dst */
	U("--dst", "192.0.2.2"),		/* no NAME */
	U("a", "b", "--dst", "192.0.2.2"),	/* two NAMEs */
	U("../a", "--dst", "192.0.2.2"),
	U("a", "--dst", "host.example"),	/* a name, not an address */
	U("a", "--dst", "192.0.2.0/24"),	/* a prefix */
	U("a", "--dst", "192.0.2.300"),
	U("a", "--dst"),			/* missing argument */
	U("a", "--dst", "192.0.2.2", "--port", "0"),
	U("a", "--dst", "192.0.2.2", "--port", "65536"),
	U("a", "--dst", "192.0.2.2", "--port", "22x"),
	U("a", "--dst", "192.0.2.2", "--port", "-1"),
	U("a", "--dst", "192.0.2.2", "--port", " 22"),
	U("a", "--dst", "192.0.2.2", "--port", "0x16"),
	U("a", "--dst", "192.0.2.2", "--mode", "sodium"),
	U("a", "--dst", "192.0.2.2", "--integrity-len", "2049"),
	U("a", "--dst", "192.0.2.2", "--integrity-len", "99999999999999999999"),
	U("a", "--dst", "192.0.2.2", "--keys-dir", ""),
	U("a", "--dst", "192.0.2.2", "--keys-dir", "/tmp/my keys"),
	U("a", "--dst", "192.0.2.2", "--keys-dir", "/tmp/\"k"),
	U("a", "--dst", "192.0.2.2", "--keys-dir", "/tmp/'k"),
	U("a", "--dst", "192.0.2.2", "--bogus"),
	U("a", "--dst", "192.0.2.2", "-x"),
	U("a", "--dst", "192.0.2.2", "--show-key=yes"),
	U("a", "--dst", "192.0.2.2", "--apply=yes"),
	U("a", "--dst", "192.0.2.2", "-c"),
};

/* invite_print: text that must appear, and text that must not. */
struct print_row {
	const char *what;
	struct invite_args a;
	const char *key;	/* passed as key_b64 */
	const char *has[8];
	const char *lacks[4];
};

static const struct print_row prints[] = {
	{ "plain native",
	  { "alice", "192.0.2.2", 22, "native", 0, INVITE_KEYS_DIR, false, false, NULL, false, 0 }, NULL,
	  { "# === server: /etc/knockgw/knockgw.conf\n"
	    "# Where the file has a keys list",
	    "keys = (\n\t{ name = \"alice\"; file = \"" PATH "\"; }\n);\n"
	    "protect = (\n\t{ port = 22; mode = \"native\"; keys = [ \"alice\" ]; }\n);\n",
	    "# === client: " PATH "\n",
	    "cat > " PATH "' < " PATH "\n",
	    "knock = (\n\t{ dst = \"192.0.2.2\"; port = 22; mode = \"native\"; key = \"alice\"; }\n);\n",
	    "# === client: ~/.ssh/config\n",
	    "Host 192.0.2.2\n\tPort 22\n" },
	  { "ProxyCommand", "integrity_len", "Zm9v" } },
	{ "the key is never there unless asked for",
	  { "alice", "192.0.2.2", 22, "native", 0, INVITE_KEYS_DIR, false, false, NULL, false, 0 }, KEY,
	  { "mkdir -p /etc/knockgw/keys &&" }, { "Zm9v" } },
	{ "--show-key: the key line, and no copy command",
	  { "alice", "192.0.2.2", 22, "native", 0, INVITE_KEYS_DIR, true, false, NULL, false, 0 }, KEY,
	  { "# === client: " PATH "\n", "\n" KEY "\n# === client: /etc/knockgw/knockgw.conf" },
	  { "ssh root@CLIENT" } },
	{ "--show-key with a line without its newline",
	  { "alice", "192.0.2.2", 22, "native", 0, INVITE_KEYS_DIR, true, false, NULL, false, 0 },
	  "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE=",
	  { "\nZm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE=\n\n# === client:" }, { NULL } },
	{ "integrity, knock mode, IPv6, another port",
	  { "bob", "2001:db8::2", 2222, "knock", 21, "/srv/k", false, false, NULL, false, 0 }, NULL,
	  { "protect = (\n\t{ port = 2222; mode = \"knock\"; keys = [ \"bob\" ]; integrity_len = 21; }\n",
	    "knock = (\n\t{ dst = \"2001:db8::2\"; port = 2222; mode = \"knock\"; key = \"bob\"; "
	    "integrity_len = 21; }\n",
	    "Host 2001:db8::2\n\tPort 2222\n\tProxyCommand knock-connect %h %p\n",
	    "protect entry for port 2222, add \"bob\"",
	    "# === client: /srv/k/bob.key\n", "mkdir -p /srv/k &&" }, { NULL } },
	{ "the server entry's window goes to the client's knock",
	  { "alice", "192.0.2.2", 22, "native", 0, INVITE_KEYS_DIR, false, true, NULL, true, 60 }, NULL,
	  { "key = \"alice\"; window = 60; }\n" }, { NULL } },
	{ "a window is native mode's only",
	  { "alice", "192.0.2.2", 22, "knock", 0, INVITE_KEYS_DIR, false, true, NULL, true, 60 }, NULL,
	  { "key = \"alice\"; }\n" }, { "window" } },
	{ "a key in /",
	  { "k", "192.0.2.2", 22, "native", 0, "/", false, false, NULL, false, 0 }, NULL, { "mkdir -p / && cat > /k.key'" }, { NULL } },
};

static void test_names(void)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(invite_name_ok(names[i].name) == names[i].ok, "name \"%s\"", names[i].name);
}

static void test_parse(void)
{
	for (size_t i = 0; i < sizeof(parses) / sizeof(parses[0]); i++) {
		const struct parse_row *t = &parses[i];
		char *argv[14] = { (char *)(uintptr_t)"invite" };
		struct invite_args a = { 0 };
		int argc = 1, r;

		/* A row may fill every slot: no NULL after its last word then. */
		for (; argc - 1 < (int)(sizeof(t->argv) / sizeof(t->argv[0])) && t->argv[argc - 1];
		     argc++)
			argv[argc] = (char *)(uintptr_t)t->argv[argc - 1];
		r = invite_parse_args(argc, argv, &a);
		CHECK_EQ_U(r + 1, t->want + 1, "parse row %zu (%s ...)", i,
			   t->argv[0] ? t->argv[0] : "");
		if (r != INVITE_RUN || t->want != INVITE_RUN)
			continue;
		CHECK(strcmp(a.name, t->name) == 0, "row %zu name %s", i, a.name);
		CHECK(strcmp(a.dst, t->dst) == 0, "row %zu dst %s", i, a.dst);
		CHECK(strcmp(a.mode, t->mode) == 0, "row %zu mode %s", i, a.mode);
		CHECK(strcmp(a.keys_dir, t->dir) == 0, "row %zu dir %s", i, a.keys_dir);
		CHECK_EQ_U(a.port, t->port, "row %zu port", i);
		CHECK_EQ_U(a.integrity_len, t->ilen, "row %zu integrity_len", i);
		CHECK(a.show_key == t->show, "row %zu show_key", i);
		CHECK(a.apply == t->apply, "row %zu apply", i);
		CHECK((!a.conf && !t->conf) || (a.conf && t->conf && strcmp(a.conf, t->conf) == 0),
		      "row %zu conf", i);
	}
}

static void test_print(void)
{
	for (size_t i = 0; i < sizeof(prints) / sizeof(prints[0]); i++) {
		const struct print_row *t = &prints[i];
		char path[256], *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int r;

		snprintf(path, sizeof(path), "%s%s%s.key", t->a.keys_dir,
			 strcmp(t->a.keys_dir, "/") ? "/" : "", t->a.name);
		if (!f) {
			CHECK(f != NULL, "open_memstream");
			return;
		}
		r = invite_print(f, &t->a, path, t->a.show_key ? t->key : NULL);
		fclose(f);
		CHECK(r == 0, "%s: invite_print", t->what);
		for (size_t j = 0; j < 8 && t->has[j]; j++)
			CHECK(strstr(buf, t->has[j]) != NULL, "%s: has \"%s\"", t->what, t->has[j]);
		for (size_t j = 0; j < 4 && t->lacks[j]; j++)
			CHECK(strstr(buf, t->lacks[j]) == NULL, "%s: lacks \"%s\"", t->what,
			      t->lacks[j]);
		free(buf);
	}
}

int main(void)
{
	/* The usage errors say why on stderr: not in the test's output. */
	if (!freopen("/dev/null", "w", stderr))
		return 1;
	test_names();
	/* Nor the usage that --help prints on stdout. */
	{
		int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);

		if (saved < 0 || null < 0)
			return 1;
		fflush(stdout);
		dup2(null, STDOUT_FILENO);
		test_parse();
		fflush(stdout);
		dup2(saved, STDOUT_FILENO);
		close(saved);
		close(null);
	}
	test_print();
	return unit_done("invite");
}
