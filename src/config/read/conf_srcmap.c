/*
 * conf_srcmap.c - the joined text's lines as lines of their own files
 * (conf_srcmap.h).
 */
#include <stdlib.h>

#include <sodium.h>

#include "config/read/conf_srcmap.h"

int srcmap_line(const struct srcmap *m, int line, int *ret_file)
{
	size_t i;

	*ret_file = 0;
	if (!m || m->nseg == 0 || line <= 0)
		return line;
	for (i = m->nseg - 1; i > 0 && m->seg[i].first > line; i--)
		;
	*ret_file = m->seg[i].file;
	return m->seg[i].line + (line - m->seg[i].first);
}

void srcmap_free(struct srcmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nsrc; i++) {
		if (m->src[i].text) {
			sodium_memzero(m->src[i].text, m->src[i].len + 1);
			free(m->src[i].text);
		}
	}
	if (m->out) {
		sodium_memzero(m->out, m->cap);
		free(m->out);
	}
	free(m);
}
