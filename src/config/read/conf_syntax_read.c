/*
 * conf_syntax_read.c - reading the tree cs_parse() built (conf_syntax.h):
 * a member by name, and a scalar's value as libconfig 1.5 reads it (a
 * string's escapes undone and adjacent strings joined; an integer in
 * decimal or hex with an optional L).  Pure lookups over the tree and its
 * text: nothing here knows the scanner or the grammar.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/read/conf_syntax.h"

int cs_line_of(const char *text, size_t len, size_t off)
{
	int line = 1;

	for (size_t i = 0; i < off && i < len; i++)
		line += text[i] == '\n';
	return line;
}

bool cs_named(const struct cs_tree *t, int i, const char *name)
{
	size_t n = strlen(name);

	return i >= 0 && (size_t)i < t->n && t->node[i].name_len == n &&
	       memcmp(t->text + t->node[i].name_off, name, n) == 0;
}

int cs_member(const struct cs_tree *t, int g, const char *name)
{
	if (g < 0 || (size_t)g >= t->n || t->node[g].kind != CS_GROUP)
		return -1;
	for (int c = t->node[g].first; c >= 0; c = t->node[c].next)
		if (cs_named(t, c, name))
			return c;
	return -1;
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

bool cs_string(const struct cs_tree *t, int i, char *out, size_t size)
{
	const struct cs_node *n;
	size_t o = 0;

	if (i < 0 || (size_t)i >= t->n || size == 0)
		return false;
	n = &t->node[i];
	if (n->kind != CS_SCALAR || n->scalar != T_STRING)
		return false;
	for (size_t p = n->val_off; p < n->val_end; p++) {
		char c = t->text[p];

		if (c != '"')
			continue;	/* blanks and comments between joined strings */
		for (p++; p < n->val_end && t->text[p] != '"'; p++) {
			c = t->text[p];
			if (c == '\\' && p + 1 < n->val_end) {
				char e = t->text[++p];

				if (e == 'n')
					c = '\n';
				else if (e == 't')
					c = '\t';
				else if (e == 'r')
					c = '\r';
				else if (e == 'f')
					c = '\f';
				else if (e == 'x' && p + 2 < n->val_end &&
					 isxdigit((unsigned char)t->text[p + 1]) &&
					 isxdigit((unsigned char)t->text[p + 2])) {
					c = (char)(hexval(t->text[p + 1]) * 16 + hexval(t->text[p + 2]));
					p += 2;
				} else if (e == '"' || e == '\\') {
					c = e;
				} else {
					/* libconfig keeps an unknown escape's backslash */
					if (o + 1 >= size)
						return false;
					out[o++] = '\\';
					c = e;
				}
			}
			if (o + 1 >= size)
				return false;
			out[o++] = c;
		}
	}
	out[o] = '\0';
	return true;
}

bool cs_int(const struct cs_tree *t, int i, long long *ret)
{
	const struct cs_node *n;
	char buf[32];
	char *end;
	long long v;
	size_t len;

	if (i < 0 || (size_t)i >= t->n)
		return false;
	n = &t->node[i];
	len = n->val_end - n->val_off;
	if (n->kind != CS_SCALAR || n->scalar != T_NUMBER || len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, t->text + n->val_off, len);
	buf[len] = '\0';
	while (len > 0 && buf[len - 1] == 'L')
		buf[--len] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 0);
	if (errno || *end || end == buf)
		return false;
	*ret = v;
	return true;
}
