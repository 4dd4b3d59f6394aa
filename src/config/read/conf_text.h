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
 * comments and strings, NUL bytes, any other '@': conf_prescan.h), and
 * keeps a map from the joined text's lines back to each file's own
 * (conf_srcmap.h), so that messages name the file an administrator has to
 * edit.  Internal to the conf*.c modules.
 */
#ifndef KNOCKGW_CONF_TEXT_H
#define KNOCKGW_CONF_TEXT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "config/conf.h"
#include "config/read/conf_srcmap.h"

/*
 * conf_text_read() with options: ov (NULL: none) replaces files' texts; keep
 * keeps each file's own text in m->src[i].text (wiped by srcmap_free()).
 */
struct srcmap *conf_text_read_opts(const char *path, const struct conf_overlay *ov, bool keep,
				   struct conf_errors *errs, int *ret);

/*
 * A map for the main file path: reads it and what it includes into the
 * joined text (m->out).  0, or -errno with the reasons in errs; NULL (out of
 * memory, reported) when nothing could be allocated.  srcmap_free() it
 * either way.
 */
struct srcmap *conf_text_read(const char *path, struct conf_errors *errs, int *ret);

/*
 * The same for text given in memory, named path in messages and taken as a
 * file of the caller's own with mode 0600 (its @include lines still name
 * real files, relative to path).  For the unit tests of the loader.
 */
struct srcmap *conf_text_from(const char *path, const char *text, struct conf_errors *errs,
			      int *ret);

/* Relative key and include paths are relative to the file that names them, not to the cwd. */
int conf_resolve_path(char out[static PATH_MAX], const char *base, const char *p);

#endif
