/*
 * conf_prescan.h - what libconfig 1.5 gets wrong without a word, found on
 * each file's own text before conf_text.c joins them: @include lines are
 * listed for it to follow, and the rest is refused with a message.
 * Internal to the conf*.c modules.
 */
#ifndef KNOCKGW_CONF_PRESCAN_H
#define KNOCKGW_CONF_PRESCAN_H

#include <stddef.h>

#include "config/conf.h"

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

#endif
