/*
 * invite_text.c - `knockgw invite`'s command line and text (invite_text.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/invite_text.h"
#include "config/conf.h"
#include "common/isn.h"

#define PROG "knockgw invite"

void invite_usage(FILE *f)
{
	fprintf(f,
		"usage: knockgw " INVITE_SYNOPSIS "\n"
		"\n"
		"Writes a new key DIR/NAME.key (mode 0600; an existing file is never replaced)\n"
		"and prints, ready to paste, the server's keys and protect lists, the client's\n"
		"keys and knock lists and an ssh_config Host block for HOST.\n"
		"  NAME               the key's name and file name: 1..%d of A-Z a-z 0-9 _ . -\n"
		"  --dst HOST         the address the client dials, IPv4 or IPv6 (required)\n"
		"  --port N           the protected port (default 22)\n"
		"  --mode MODE        native (default) or knock\n"
		"  --integrity-len N  the knock also covers the first N bytes the client sends,\n"
		"                     1..%d (default 0: none); ssh then needs knock-connect\n"
		"  --keys-dir DIR     where the key goes (default " INVITE_KEYS_DIR ")\n"
		"  --show-key         print the key itself too (otherwise it never is)\n"
		"  -c FILE            the server's configuration (default " CONF_DEFAULT_PATH ")\n"
		"  --apply            add the key to FILE's keys and to its protect entry for the\n"
		"                     port (or a new one), check the result as the daemon loads\n"
		"                     it, write it (the old file stays as FILE.bak) and reload\n"
		"                     the daemon; without it, the change is shown as a diff\n",
		INVITE_NAME_MAX, INTEG_MAX_LEN);
}

bool invite_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > INVITE_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)name[i];

		if (!isalnum(ch) && ch != '_' && ch != '.' && ch != '-')
			return false;
	}
	return true;
}

const char *invite_name_arg(const char *prog, int argc, char **argv, int first)
{
	if (argc - first != 1) {
		fprintf(stderr, "%s: %s\n", prog, argc - first ? "one NAME only" : "NAME is missing");
		return NULL;
	}
	if (!invite_name_ok(argv[first])) {
		fprintf(stderr, "%s: NAME is 1..%d characters of A-Z a-z 0-9 _ . -, not starting "
				"with . or -\n", prog, INVITE_NAME_MAX);
		return NULL;
	}
	return argv[first];
}

/* Decimal only, the whole string, in [min, max]. */
static bool parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)s[0]) || strlen(s) > 9)
		return false;
	v = strtoul(s, &end, 10);
	if (*end != '\0' || v < min || v > max)
		return false;
	*ret = (unsigned)v;
	return true;
}

/*
 * The directory's name goes into configuration strings and shell command
 * lines as it is: no blank, quote, backslash or control character.
 */
static bool dir_ok(const char *s)
{
	if (s[0] == '\0')
		return false;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= ' ' || ch >= 127 || ch == '"' || ch == '\'' || ch == '\\')
			return false;
	}
	return true;
}

static int usage_error(void)
{
	fprintf(stderr, "Try 'knockgw invite --help'.\n");
	return CLI_USAGE;
}

int invite_parse_args(int argc, char **argv, struct invite_args *ret)
{
	/* Long-only; vals above the letters, so cli_bad_option() names them. */
	enum { O_DST = 256, O_PORT, O_MODE, O_ILEN, O_DIR, O_SHOW, O_APPLY };
	static const struct option opts[] = {
		{ "dst", required_argument, NULL, O_DST },
		{ "port", required_argument, NULL, O_PORT },
		{ "mode", required_argument, NULL, O_MODE },
		{ "integrity-len", required_argument, NULL, O_ILEN },
		{ "keys-dir", required_argument, NULL, O_DIR },
		{ "show-key", no_argument, NULL, O_SHOW },
		{ "apply", no_argument, NULL, O_APPLY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct invite_args a = { .port = 22, .mode = "native", .keys_dir = INVITE_KEYS_DIR };
	int ch;

	optind = 0;	/* 0: a full reset, also of a half-read option group */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hc:", opts, NULL)) != -1) {
		switch (ch) {
		case O_DST:
			a.dst = optarg;
			break;
		case O_PORT:
			if (!parse_uint(optarg, 1, 65535, &a.port)) {
				fprintf(stderr, PROG ": --port takes 1..65535, not \"%s\"\n", optarg);
				return usage_error();
			}
			break;
		case O_MODE:
			if (strcmp(optarg, "native") != 0 && strcmp(optarg, "knock") != 0) {
				fprintf(stderr, PROG ": --mode is native or knock, not \"%s\"\n",
					optarg);
				return usage_error();
			}
			a.mode = optarg;
			break;
		case O_ILEN:
			if (!parse_uint(optarg, 0, INTEG_MAX_LEN, &a.integrity_len)) {
				fprintf(stderr, PROG ": --integrity-len takes 0..%d, not \"%s\"\n",
					INTEG_MAX_LEN, optarg);
				return usage_error();
			}
			break;
		case O_DIR:
			if (!dir_ok(optarg)) {
				fprintf(stderr, PROG ": --keys-dir: a path without blanks, quotes or "
						    "backslashes, please\n");
				return usage_error();
			}
			a.keys_dir = optarg;
			break;
		case O_SHOW:
			a.show_key = true;
			break;
		case O_APPLY:
			a.apply = true;
			break;
		case 'c':
			a.conf = optarg;
			break;
		case 'h':
			invite_usage(stdout);
			return INVITE_HELP;
		default:
			cli_bad_option(PROG, ch, argv);
			return usage_error();
		}
	}
	a.name = invite_name_arg(PROG, argc, argv, optind);
	if (!a.name)
		return usage_error();
	if (!a.dst) {
		fprintf(stderr, PROG ": --dst HOST is missing\n");
		return usage_error();
	}
	{
		unsigned char buf[16];

		/* Knock entries match addresses: a name would be resolved once, here, and go stale. */
		if (inet_pton(AF_INET, a.dst, buf) != 1 && inet_pton(AF_INET6, a.dst, buf) != 1) {
			fprintf(stderr, PROG ": --dst takes an IPv4 or IPv6 address, not \"%s\" "
					    "(knock entries match addresses, not names)\n", a.dst);
			return usage_error();
		}
	}
	*ret = a;
	return INVITE_RUN;
}

/* ------------------------------------------------------------- the text */

static void print_key_list(FILE *f, const struct invite_args *a, const char *key_path)
{
	fprintf(f, "keys = (\n\t{ name = \"%s\"; file = \"%s\"; }\n);\n", a->name, key_path);
}

/* The length of path's directory part ("/" for "/k.key"), for %.*s. */
static int dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash > path ? (int)(slash - path) : 1;
}

/* "; integrity_len = N" when there is one: both sides must say the same. */
static void print_integrity(FILE *f, const struct invite_args *a)
{
	if (a->integrity_len)
		fprintf(f, " integrity_len = %u;", a->integrity_len);
}

void invite_print_head(FILE *f, const struct invite_args *a, const char *key_path)
{
	fprintf(f, "# knockgw invite %s: a new %s key for %s port %u%s.\n"
		   "# Written to %s (mode 0600).\n"
		   "# Four pieces follow, each under a \"# ===\" line that says where it goes.\n\n",
		a->name, a->mode, a->dst, a->port, a->integrity_len ? " with integrity" : "",
		key_path);
}

void invite_print_server(FILE *f, const struct invite_args *a, const char *key_path)
{
	fprintf(f, "# === server: /etc/knockgw/knockgw.conf\n"
		   "# Where the file has a keys list already, add the key to it; where it has a\n"
		   "# protect entry for port %u, add \"%s\" to that entry's keys instead (two\n"
		   "# entries for one port may not share an address).  Then: knockgw -n, and\n"
		   "# systemctl reload knockgw.  (knockgw invite --apply does all this.)\n",
		a->port, a->name);
	print_key_list(f, a, key_path);
	fprintf(f, "protect = (\n\t{ port = %u; mode = \"%s\"; keys = [ \"%s\" ];", a->port, a->mode,
		a->name);
	print_integrity(f, a);
	fprintf(f, " }\n);\n\n");
}

int invite_print_client(FILE *f, const struct invite_args *a, const char *key_path,
			const char *key_b64)
{
	fprintf(f, "# === client: %s\n", key_path);
	if (key_b64) {
		fprintf(f, "# The key: this one line, in that file, owned by root, mode 0600.  Whoever\n"
			   "# reads it can knock as %s.\n%s", a->name, key_b64);
		if (key_b64[0] && key_b64[strlen(key_b64) - 1] != '\n')
			fputc('\n', f);
	} else {
		fprintf(f, "# The key file itself, owned by root, mode 0600: whoever reads it can knock\n"
			   "# as %s.  Copy it over a channel that keeps it secret (not mail or chat),\n"
			   "# e.g. from this host, with CLIENT the client:\n"
			   "#   ssh root@CLIENT 'umask 077 && mkdir -p %.*s && cat > %s' < %s\n"
			   "# (knockgw invite --show-key prints the key here instead.)\n",
			a->name, dir_len(key_path), key_path, key_path, key_path);
	}
	fputc('\n', f);

	fprintf(f, "# === client: /etc/knockgw/knockgw.conf\n"
		   "# As on the server, merge into lists that exist.  Then: knockgw -n, and\n"
		   "# systemctl reload knockgw (restart it when this is its first knock entry).\n");
	print_key_list(f, a, key_path);
	fprintf(f, "knock = (\n\t{ dst = \"%s\"; port = %u; mode = \"%s\"; key = \"%s\";", a->dst,
		a->port, a->mode, a->name);
	print_integrity(f, a);
	/* The server's entry has its own window: the client's epochs must be the same. */
	if (a->has_window && strcmp(a->mode, "native") == 0)
		fprintf(f, " window = %u;", a->window);
	fprintf(f, " }\n);\n\n");

	fprintf(f, "# === client: ~/.ssh/config\n");
	if (a->integrity_len)
		fprintf(f, "# With integrity the first %u bytes ssh sends (its banner, \"SSH-2.0-...\")\n"
			   "# are part of the knock: ssh connects through knock-connect.\n",
			a->integrity_len);
	else
		fprintf(f, "# The client's knockgw knocks for ssh's own connect(): nothing more needed.\n");
	fprintf(f, "Host %s\n\tPort %u\n", a->dst, a->port);
	if (a->integrity_len)
		fprintf(f, "\tProxyCommand knock-connect %%h %%p\n");
	return ferror(f) ? -EIO : 0;
}

int invite_print(FILE *f, const struct invite_args *a, const char *key_path, const char *key_b64)
{
	invite_print_head(f, a, key_path);
	invite_print_server(f, a, key_path);
	return invite_print_client(f, a, key_path, key_b64);
}
