/*
 * conf_srcmap.h - the map from the joined text libconfig parses back to
 * each file's own lines (conf_text.c builds it), so that every message
 * names the file an administrator has to edit.  Internal to the conf*.c
 * modules; it stands below all of them that name a line.
 */
#ifndef KNOCKGW_CONF_SRCMAP_H
#define KNOCKGW_CONF_SRCMAP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "config/conf.h"

struct source {
	char path[PATH_MAX];	/* as messages name it; its includes resolve against its directory */
	struct stat st;		/* of the text that was read: the rules are checked on it */
	int parent;		/* the including file; -1 for the main one */
	bool secret_checked;	/* a text secret in it was held to the key file rule */
	char *text;		/* its own text, NUL-terminated, when kept (conf_text_read_opts) */
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

/* Wipes the joined text (it may hold secret = "..." lines) and frees m; NULL is fine. */
void srcmap_free(struct srcmap *m);

/*
 * The line of its own file a line of the joined text is, and that file (an
 * index into m->src) in *ret_file.  m NULL: the line is the main file's.
 */
int srcmap_line(const struct srcmap *m, int line, int *ret_file);

#endif
