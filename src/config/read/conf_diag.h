/*
 * conf_diag.h - libconfig's "syntax error" and "duplicate setting name",
 * explained.
 *
 * libconfig 1.5 stops at the first token its grammar has no place for and
 * says "syntax error" and the line, or "duplicate setting name" and the
 * line of the second one.  Here the same text is read again
 * (conf_syntax.h) to say what is likely wrong and where to fix it: a ','
 * after a list's last element (reported at the comma's line), a ';'
 * between list elements, a missing ',' or '=' or value, a string without
 * quotes or with single ones, a string that runs over a line end (a '"'
 * missing), a bracket never closed (reported at the bracket) or closed by
 * the wrong one, a setting where a list wants a group; and for a duplicate,
 * the name and the line where it was first set.  A syntax error also shows
 * its line, trimmed, with any string after the word "secret" on it blanked
 * out, since the message may go to a log.  Where the second reading does
 * not stop on the line libconfig stopped on, libconfig's own words stand,
 * with the line shown.
 *
 * Pure: writes into a struct conf_errors.  Internal to the conf*.c modules.
 */
#ifndef KNOCKGW_CONF_DIAG_H
#define KNOCKGW_CONF_DIAG_H

#include <stddef.h>

#include "config/conf.h"
#include "config/read/conf_srcmap.h"

/*
 * Reports libconfig's error msg at line (a line of m's joined text) as one
 * "FILE:LINE: message" in errs, explained where the text shows why.
 */
void conf_diag_libconfig(const struct srcmap *m, int line, const char *msg,
			 struct conf_errors *errs);

/*
 * Line `line` of text (len bytes) as a message quotes it: blanks at both
 * ends trimmed, tabs and other control characters as blanks, a string
 * after the word "secret" as "...", cut to fit size (with "..." at the
 * end).  "" when the line is blank or past the end.
 */
void conf_diag_show_line(const char *text, size_t len, int line, char *out, size_t size);

#endif
