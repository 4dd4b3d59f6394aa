/*
 * revoke.c - `knockgw revoke`: a key taken out of the configuration.
 *
 *   knockgw revoke NAME [-c FILE] [--apply] [--remove-key]
 *
 * takes key NAME out of FILE's keys, out of the keys of every protect
 * entry, and takes out every knock entry that uses it (confedit.h says
 * how, and what it refuses: a protect entry NAME alone opens).  Without
 * --apply it prints the change as a diff and writes nothing; with it, the
 * change is checked with the daemon's loader, written (the old file stays
 * as FILE.bak) and the daemon reloaded (conf_apply.h).  The key file
 * stays unless --remove-key asks for it to go (once the configuration no
 * longer names it, and only when no other key entry names the same file);
 * a text secret goes with its entry.  It says which.
 *
 * Order: the command line; the plan (what leaves the file) and its
 * check with the daemon's loader; the diff; with --apply the write, the
 * key file, the reload.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/conf_apply.h"
#include "cmd/invite_text.h"
#include "config/conf.h"

#define PROG "knockgw revoke"

struct revoke_args {
	const char *name;
	const char *conf;	/* NULL: the default */
	bool apply;
	bool remove_key;
};

/* parse_args(): run, or --help was answered. */
enum { REVOKE_RUN = 0, REVOKE_HELP = -1 };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: knockgw " REVOKE_SYNOPSIS "\n"
		"\n"
		"Takes key NAME out of FILE: out of keys, out of the keys of every protect entry,\n"
		"and takes out every knock entry that uses it.  Refuses when NAME is the only key\n"
		"of a protect entry (the entry needs one; without the entry its port is open).\n"
		"  NAME          the key's name\n"
		"  -c FILE       the configuration (default " CONF_DEFAULT_PATH ")\n"
		"  --apply       check the change as the daemon loads it, write it (the old file\n"
		"                stays as FILE.bak) and reload the daemon; without it, the change\n"
		"                is printed as a diff and nothing is written\n"
		"  --remove-key  remove the key file too, once FILE no longer names it (otherwise\n"
		"                it stays)\n");
}

static int usage_error(void)
{
	fprintf(stderr, "Try 'knockgw revoke --help'.\n");
	return CLI_USAGE;
}

static int parse_args(int argc, char **argv, struct revoke_args *ret)
{
	enum { O_APPLY = 256, O_REMOVE };
	static const struct option opts[] = {
		{ "apply", no_argument, NULL, O_APPLY },
		{ "remove-key", no_argument, NULL, O_REMOVE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct revoke_args a = { 0 };
	int ch;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hc:", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			a.conf = optarg;
			break;
		case O_APPLY:
			a.apply = true;
			break;
		case O_REMOVE:
			a.remove_key = true;
			break;
		case 'h':
			usage(stdout);
			return REVOKE_HELP;
		default:
			cli_bad_option(PROG, ch, argv);
			return usage_error();
		}
	}
	a.name = invite_name_arg(PROG, argc, argv, optind);
	if (!a.name)
		return usage_error();
	*ret = a;
	return REVOKE_RUN;
}

/*
 * Another entry of keys than the one revoked names the same file as
 * path (st): then the file stays whatever was asked.
 */
static bool file_shared(const struct conf_apply *ca, const char *name, const struct stat *st)
{
	const struct cs_tree *t = &ca->t;
	int keys = cs_member(t, 0, "keys");

	for (int c = keys >= 0 ? t->node[keys].first : -1; c >= 0; c = t->node[c].next) {
		char n[CS_NAME_MAX + 8], file[PATH_MAX], path[PATH_MAX];
		struct stat other;
		int f;

		if (!cs_string(t, cs_member(t, c, "name"), n, sizeof(n)) || strcmp(n, name) == 0 ||
		    !cs_string(t, cs_member(t, c, "file"), file, sizeof(file)))
			continue;
		srcmap_line(ca->m, t->node[c].line, &f);
		if (conf_resolve_path(path, ca->m->src[f].path, file) == 0 && stat(path, &other) == 0 &&
		    other.st_dev == st->st_dev && other.st_ino == st->st_ino)
			return true;
	}
	return false;
}

int revoke_main(int argc, char **argv)
{
	struct revoke_args a;
	struct conf_apply ca;
	const struct confedit_plan *p;
	char key[PATH_MAX];
	struct stat kst;
	bool has_file, shared = false;
	const char *conf;
	int r = parse_args(argc, argv, &a), f, rc = 1;

	if (r == REVOKE_HELP)
		return 0;
	if (r != REVOKE_RUN)
		return r;
	memset(&ca, 0, sizeof(ca));
	conf = a.conf ? a.conf : CONF_DEFAULT_PATH;
	if (conf_apply_open(&ca, PROG, conf, stderr) < 0)
		goto out;
	r = confedit_revoke(&ca.t, ca.m, a.name, ca.plan);
	if (r < 0) {
		fprintf(stderr, PROG ": %s: %s\n", conf, r == -ENOMEM ? "out of memory" : ca.plan->why);
		goto out;
	}
	if (conf_apply_check(&ca, true, stderr) < 0)
		goto out;
	p = ca.plan;

	/* The key file, named relative to the file its entry is in. */
	srcmap_line(ca.m, p->key_file_line, &f);
	has_file = p->key_file[0] && conf_resolve_path(key, ca.m->src[f].path, p->key_file) == 0;
	if (has_file && stat(key, &kst) == 0)
		shared = file_shared(&ca, a.name, &kst);

	printf("# knockgw revoke %s: out of keys, out of %zu protect entr%s, %zu knock entr%s "
	       "removed\n", a.name, p->protect_changed, p->protect_changed == 1 ? "y" : "ies",
	       p->knock_removed, p->knock_removed == 1 ? "y" : "ies");
	fflush(stdout);
	conf_apply_diff(&ca, stdout);
	if (!a.apply) {
		printf("# Nothing is written: knockgw revoke %s --apply makes this change", a.name);
		if (!has_file)
			printf(" (the key is a text secret: it goes with its entry).\n");
		else if (a.remove_key && !shared)
			printf(" and removes %s.\n", key);
		else
			printf("; %s stays%s.\n", key, shared ? " (another key entry names it)" : "");
		rc = 0;
		goto out;
	}
	if (conf_apply_write(&ca, stdout, stderr) < 0)
		goto out;
	if (!has_file) {
		printf(PROG ": the key was a text secret; it went with its entry\n");
	} else if (a.remove_key && !shared) {
		if (unlink(key) == 0)
			printf(PROG ": removed the key file %s\n", key);
		else
			fprintf(stderr, PROG ": cannot remove %s: %s\n", key, strerror(errno));
	} else {
		printf(PROG ": the key file %s stays%s; the daemon no longer reads it\n", key,
		       shared ? " (another key entry names it)" : " (--remove-key removes it)");
	}
	fflush(stdout);
	rc = conf_apply_reload(&ca, stdout, stderr);
out:
	conf_apply_free(&ca);
	fflush(stdout);
	return rc;
}
