/*
 * conf_apply.h - `knockgw invite --apply` and `knockgw revoke`: the
 * configuration edited in place, checked, written, and the daemon
 * reloaded.
 *
 * conf_apply_open() loads the file as the daemon does (a file with errors
 * is not edited: they are printed) and reads the text of it and of every
 * file it includes; a plan (confedit.h) says what changes.
 * conf_apply_check() makes each file's new text and loads the result with
 * the daemon's own loader, those texts in place of the files'
 * (conf_load_overlay()): nothing is written unless it loads.
 * conf_apply_diff() prints the change as a unified diff per file.
 * conf_apply_write() writes each changed file atomically: a temporary file
 * in the same directory, with the old file's owner and mode, synced, then
 * renamed over it, after the old file was linked to FILE.bak (the one
 * backup: the file as it was before the last edit); a symbolic link is
 * followed, and the file it names is the one replaced.  A file that
 * changed since it was read is not replaced.  When two files change, the
 * one with the keys list goes first for an invite and last for a revoke,
 * so that a crash between the two leaves a configuration that loads.
 * conf_apply_reload() asks the daemon on the new configuration's control
 * socket for its STATUS, sends SIGHUP to that daemon (its pid: the
 * socket's SO_PEERCRED) when it runs this file, and waits for its reload
 * count or refusal count to move.
 *
 * Messages go to the FILE given (stderr for errors), each starting with
 * prog ("knockgw invite").
 */
#ifndef KNOCKGW_CONF_APPLY_H
#define KNOCKGW_CONF_APPLY_H

#include <stdbool.h>
#include <stdio.h>

#include "config/conf.h"
#include "config/edit/confedit.h"
#include "config/edit/udiff.h"
#include "config/read/conf_syntax.h"
#include "config/read/conf_text.h"

enum {
	APPLY_RELOAD_WAIT_MS = 10000,	/* a reload takes at most the switch time and a load */
};

struct conf_apply {
	const char *prog;
	char path[PATH_MAX];		/* the main file, as given */
	struct srcmap *m;		/* every file's own text (keep) */
	struct cs_tree t;
	struct confedit_plan *plan;
	struct conf *cur, *cand;	/* loaded before, and the result (conf_apply_check) */
	char *text[CONF_MAX_INCLUDES + 1];	/* new texts; NULL: the file is unchanged */
	size_t len[CONF_MAX_INCLUDES + 1];
	int keys_file;			/* the file with the keys list's edit */
	bool revoke;
};

/* 0, or -errno with why on err. */
int conf_apply_open(struct conf_apply *a, const char *prog, const char *path, FILE *err);

/*
 * The new texts of the plan a->plan (made by confedit_invite() or
 * confedit_revoke() on a->t and a->m), loaded with the daemon's loader.  0,
 * or -errno with why on err (the loader's messages for a result that does
 * not load).
 */
int conf_apply_check(struct conf_apply *a, bool revoke, FILE *err);

/* The change, one unified diff per changed file, on out. */
int conf_apply_diff(const struct conf_apply *a, FILE *out);

/* Writes the changed files (see above); 0, or -errno with why on err. */
int conf_apply_write(struct conf_apply *a, FILE *out, FILE *err);

/*
 * Reloads the daemon that runs this file, and says how it went on out (or
 * err).  0 when it reloaded or no daemon runs; 1 when the daemon refused
 * or needs a restart, or the reload could not be seen through.
 */
int conf_apply_reload(const struct conf_apply *a, FILE *out, FILE *err);

void conf_apply_free(struct conf_apply *a);

#endif
