/*
 * conf_text.h - the text of a configuration before libconfig sees it.
 *
 * libconfig parses one text: the main file with every "@include" line
 * replaced by the file it names.  This module reads each file itself (so
 * that the checks see exactly the text libconfig parses), holds each to the
 * ownership and mode rule of configuration files, follows the @include
 * lines (resolved against the including file's directory; bounded in
 * number, depth and total size; cycles refused), refuses what libconfig 1.5
 * gets wrong without a word (integer literals that would wrap, unterminated
 * comments and strings, NUL bytes, any other '@'), and keeps a map from the
 * joined text's lines back to each file's own, so that messages name the
 * file an administrator has to edit.  Internal to the conf*.c modules.
 */
#ifndef KNOCKGW_CONF_TEXT_H
#define KNOCKGW_CONF_TEXT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "conf.h"

struct source {
	char path[PATH_MAX];	/* as messages name it; its includes resolve against its directory */
	struct stat st;		/* of the text that was read: the rules are checked on it */
	int parent;		/* the including file; -1 for the main one */
	bool secret_checked;	/* a text secret in it was held to the key file rule */
	char *text;		/* its own text, NUL-terminated, when kept (srcmap_read_opts) */
	size_t len;
};

/* From line first of the joined text on, the lines are file's, starting at line. */
struct segment {
	int first;
	int file;
	int line;
};

struct srcmap {
	const struct conf_overlay *ov;	/* while reading: texts in place of files' */
	bool keep;		/* keep each file's own text */
	size_t nsrc;
	struct source src[CONF_MAX_INCLUDES + 1];	/* src[0] is the main file */
	size_t nseg;
	struct segment seg[2 * CONF_MAX_INCLUDES + 1];
	size_t total;		/* bytes read from every file */
	char *out;		/* the joined text, NUL-terminated */
	size_t len, cap;
	int out_line;		/* the line out's end is on */
};

/*
 * srcmap_read() with options: ov (NULL: none) replaces files' texts; keep
 * keeps each file's own text in m->src[i].text (wiped by srcmap_free()).
 */
struct srcmap *srcmap_read_opts(const char *path, const struct conf_overlay *ov, bool keep,
				struct conf_errors *errs, int *ret);

/*
 * A map for the main file path: reads it and what it includes into the
 * joined text (m->out).  0, or -errno with the reasons in errs; NULL (out of
 * memory, reported) when nothing could be allocated.  srcmap_free() it
 * either way.
 */
struct srcmap *srcmap_read(const char *path, struct conf_errors *errs, int *ret);

/*
 * The same for text given in memory, named path in messages and taken as a
 * file of the caller's own with mode 0600 (its @include lines still name
 * real files, relative to path).  For the unit tests of the loader.
 */
struct srcmap *srcmap_read_text(const char *path, const char *text, struct conf_errors *errs,
				int *ret);

/* Wipes the joined text (it may hold secret = "..." lines) and frees m; NULL is fine. */
void srcmap_free(struct srcmap *m);

/*
 * The line of its own file a line of the joined text is, and that file (an
 * index into m->src) in *ret_file.  m NULL: the line is the main file's.
 */
int srcmap_line(const struct srcmap *m, int line, int *ret_file);

/* An "@include" line: where it is in its file and the name it quotes. */
struct incl {
	int line;
	size_t start, end;	/* the whole line, its newline included */
	size_t name, name_len;	/* between the quotes */
};

/*
 * Checks libconfig 1.5 gets wrong without a word, on the text of each file
 * (t, NUL-terminated, named path) before it is joined (conf_prescan.c):
 * integer literals that would wrap, unterminated comments and strings, any
 * '@' but an @include line; those go to incs (at most max, *ret_n of
 * them).  Returns the number of errors reported (0 or 1).
 */
int conf_prescan(const char *t, const char *path, struct conf_errors *errs, struct incl *incs,
		 size_t max, size_t *ret_n);

/* Relative key and include paths are relative to the file that names them, not to the cwd. */
int conf_resolve_path(char out[static PATH_MAX], const char *base, const char *p);

#endif
