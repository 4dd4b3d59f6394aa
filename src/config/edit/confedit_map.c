/*
 * confedit_map.c - the edits of a plan in each file's own text, and
 * applied (confedit_map() and confedit_apply() of confedit.h).
 *
 * The joined text is each file's lines in order, an @include line replaced
 * by the included file's lines (and a newline when that file lacks its
 * last one), so a byte of the joined text is a byte of the file its line
 * is from, at the same column: the source map's segments say which file
 * and line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/edit/confedit.h"

/* The offset line (1-based) of s starts at; len when s has fewer lines. */
static size_t line_off(const char *s, size_t len, int line)
{
	size_t off = 0;

	for (int l = 1; l < line; l++) {
		const char *nl = memchr(s + off, '\n', len - off);

		if (!nl)
			return len;
		off = (size_t)(nl - s) + 1;
	}
	return off;
}

/*
 * Byte off of the joined text as file *ret_file, offset *ret_off.  A
 * position at the end of a file's last line maps to the file's end, also
 * when the newline there is the one joining added.  false: no such byte.
 */
static bool map_off(const struct srcmap *m, size_t off, int *ret_file, size_t *ret_off)
{
	const struct source *src;
	size_t jls, fls, fle;
	int jline = 1, fline, f;

	if (off > m->len)
		return false;
	for (size_t i = 0; i < off; i++)
		jline += m->out[i] == '\n';
	for (jls = off; jls > 0 && m->out[jls - 1] != '\n'; jls--)
		;
	fline = srcmap_line(m, jline, &f);
	src = &m->src[f];
	if (!src->text)
		return false;
	fls = line_off(src->text, src->len, fline);
	for (fle = fls; fle < src->len && src->text[fle] != '\n'; fle++)
		;
	if (off - jls > fle - fls)
		return false;
	*ret_file = f;
	*ret_off = fls + (off - jls);
	return true;
}

static int by_off(const void *a, const void *b)
{
	const struct confedit *x = a, *y = b;

	if (x->append != y->append)
		return x->append ? 1 : -1;
	return x->off < y->off ? -1 : x->off > y->off;
}

int confedit_map(const struct srcmap *m, const struct confedit_plan *plan, int f, struct confedit *out,
		 size_t *ret_n)
{
	const struct source *src = &m->src[f];
	size_t n = 0;

	for (size_t i = 0; i < plan->n; i++) {
		const struct confedit *e = &plan->e[i];
		size_t a, b = 0;
		int fa, fb;

		if (e->append) {
			if (f == 0)
				out[n++] = *e;
			continue;
		}
		if (!map_off(m, e->off, &fa, &a))
			return -EINVAL;
		if (e->del) {
			if (!map_off(m, e->off + e->del - 1, &fb, &b) || fb != fa)
				return -EINVAL;
			b++;
			/* A newline joining added is no byte of the file: nothing there to delete. */
			if (b > src->len && fa == f)
				b = src->len;
			if (fa == f && (b < a || memcmp(src->text + a, m->out + e->off, b - a) != 0))
				return -EINVAL;
		}
		if (fa != f)
			continue;
		out[n] = *e;
		out[n].off = a;
		out[n].del = e->del ? b - a : 0;
		n++;
	}
	qsort(out, n, sizeof(*out), by_off);
	for (size_t i = 1; i < n; i++)
		if (!out[i].append && out[i].off < out[i - 1].off + out[i - 1].del)
			return -EINVAL;
	*ret_n = n;
	return 0;
}

int confedit_apply(const char *text, size_t len, const struct confedit *e, size_t n, char **ret,
		   size_t *ret_len)
{
	size_t cap = len + 2, o = 0, pos = 0;
	char *out;

	for (size_t i = 0; i < n; i++)
		cap += strlen(e[i].ins);
	out = malloc(cap);
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t at = e[i].append ? len : e[i].off;

		memcpy(out + o, text + pos, at - pos);
		o += at - pos;
		pos = at + (e[i].append ? 0 : e[i].del);
		if (e[i].append && o > 0 && out[o - 1] != '\n')
			out[o++] = '\n';
		memcpy(out + o, e[i].ins, strlen(e[i].ins));
		o += strlen(e[i].ins);
	}
	memcpy(out + o, text + pos, len - pos);
	o += len - pos;
	out[o] = '\0';
	*ret = out;
	*ret_len = o;
	return 0;
}
