/*
 * revokecmd.c - `knockgw revoke`: a key taken out of the configuration
 * (revoke.h says what it does).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/conf_apply.h"
#include "cmd/invitecmd.h"
#include "cmd/revoke.h"

#define PROG "knockgw revoke"

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

int revoke_main(int argc, char **argv, const char *default_conf)
{
	struct revoke_args a;
	struct conf_apply ca;
	const struct cedit_plan *p;
	char key[PATH_MAX];
	struct stat kst;
	bool has_file, shared = false;
	const char *conf;
	int r = revoke_parse_args(argc, argv, &a), f, rc = 1;

	if (r == REVOKE_HELP)
		return 0;
	if (r != REVOKE_RUN)
		return r;
	memset(&ca, 0, sizeof(ca));
	conf = a.conf ? a.conf : default_conf;
	if (conf_apply_open(&ca, PROG, conf, stderr) < 0)
		goto out;
	r = cedit_revoke(&ca.t, ca.m, a.name, ca.plan);
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
