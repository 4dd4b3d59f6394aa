/*
 * confedit.c - a key added to or removed from a configuration's text (confedit.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/edit/confedit.h"

enum { MAX_LIST = 1024 };	/* elements of a list revoke edits; a valid one has far fewer */

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static size_t line_start(const char *s, size_t off)
{
	while (off > 0 && s[off - 1] != '\n')
		off--;
	return off;
}

/* Where the line off is on ends: its '\n', or len. */
static size_t line_end(const char *s, size_t len, size_t off)
{
	while (off < len && s[off] != '\n')
		off++;
	return off;
}

static bool all_blank(const char *s, size_t a, size_t b)
{
	for (size_t i = a; i < b; i++)
		if (!blank(s[i]))
			return false;
	return true;
}

/* At off: the end of the line, or a comment that runs to it. */
static bool line_done(const char *s, size_t len, size_t off)
{
	return off >= len || s[off] == '\n' || s[off] == '#' ||
	       (s[off] == '/' && off + 1 < len && s[off + 1] == '/');
}

/* The next token's offset from off on: blanks, newlines and comments skipped. */
static size_t next_token(const char *s, size_t len, size_t off)
{
	while (off < len) {
		if (blank(s[off]) || s[off] == '\n' || s[off] == '\f' || s[off] == '\v') {
			off++;
		} else if (s[off] == '#' || (s[off] == '/' && off + 1 < len && s[off + 1] == '/')) {
			off = line_end(s, len, off);
		} else if (s[off] == '/' && off + 1 < len && s[off + 1] == '*') {
			for (off += 2; off + 1 < len && !(s[off] == '*' && s[off + 1] == '/'); off++)
				;
			off = off + 1 < len ? off + 2 : len;
		} else {
			break;
		}
	}
	return off;
}

static int add(struct confedit_plan *plan, size_t off, size_t del, bool append, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int add(struct confedit_plan *plan, size_t off, size_t del, bool append, const char *fmt, ...)
{
	va_list ap;
	char *ins;
	int r;

	if (plan->n == CONFEDIT_MAX)
		return -E2BIG;
	va_start(ap, fmt);
	r = vasprintf(&ins, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	plan->e[plan->n++] = (struct confedit){ .off = off, .del = del, .ins = ins, .append = append };
	return 0;
}

static void refuse(struct confedit_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(struct confedit_plan *plan, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(plan->why, sizeof(plan->why), fmt, ap);
	va_end(ap);
}

/* "line N" or "FILE:N" (another file than the main one) for a line of the joined text. */
static const char *where(const struct srcmap *m, int jline, char *buf, size_t size)
{
	int f, line = srcmap_line(m, jline, &f);

	if (f == 0)
		snprintf(buf, size, "line %d", line);
	else
		snprintf(buf, size, "%.*s:%d", (int)(size > 24 ? size - 24 : 1), m->src[f].path, line);
	return buf;
}

static int last_child(const struct cs_tree *t, int l)
{
	int c = t->node[l].first;

	while (c >= 0 && t->node[c].next >= 0)
		c = t->node[c].next;
	return c;
}

/* The text of an element at the end of list or array l, where the entry before it puts it. */
static int insert_element(const struct cs_tree *t, struct confedit_plan *plan, int l, const char *elem)
{
	const char *s = t->text;
	size_t len = t->len, open = t->node[l].val_off, close = t->node[l].val_end - 1;
	int last = last_child(t, l);

	if (t->node[l].kind == CS_ARRAY && elem[0] == '{')	/* "protect = [ ];": empty, so a list */
		return add(plan, open, close + 1 - open, false, "( %s )", elem);
	if (last >= 0) {
		size_t p = t->node[last].val_end, eol = line_end(s, len, p);
		size_t ls = line_start(s, t->node[last].start);
		size_t q = next_token(s, len, p);
		bool own_line = all_blank(s, ls, t->node[last].start);
		int r;

		/* The closing bracket on the same line, or a comment that goes on past it: inline. */
		if (q != close || close < eol || memmem(s + p, eol - p, "/*", 2))
			return add(plan, p, 0, false, ", %s", elem);
		/* On a line of its own after the last entry's, indented alike. */
		r = add(plan, p, 0, false, ",");
		if (r == 0)
			r = add(plan, eol, 0, false, "\n%.*s%s", own_line ? (int)(t->node[last].start - ls) : 1,
				own_line ? s + ls : "\t", elem);
		return r;
	}
	if (line_start(s, close) <= open) {
		if (all_blank(s, open + 1, close))
			return add(plan, open + 1, close - open - 1, false, " %s ", elem);
		return add(plan, close, 0, false, " %s ", elem);
	}
	{
		size_t ls = line_start(s, close);

		if (all_blank(s, ls, close))
			return add(plan, ls, 0, false, "%.*s\t%s\n", (int)(close - ls), s + ls, elem);
		return add(plan, close, 0, false, " %s ", elem);
	}
}

/* Element e of list l goes: with its line when it is alone there, with its own ','. */
static int remove_element(const struct cs_tree *t, struct confedit_plan *plan, int e)
{
	const char *s = t->text;
	size_t len = t->len, start = t->node[e].start, end = t->node[e].val_end;
	size_t ls = line_start(s, start), q = end;
	bool comma = false;

	while (q < len && blank(s[q]))
		q++;
	if (q < len && s[q] == ',') {
		comma = true;
		for (q++; q < len && blank(s[q]); q++)
			;
	} else if (t->node[e].next >= 0) {
		/* Its ',' is further on, past a comment: take it, and what is between. */
		q = next_token(s, len, end);
		if (q < len && s[q] == ',')
			comma = true;
		q = comma ? q + 1 : end;
	}
	if (all_blank(s, ls, start) && line_done(s, len, q)) {
		size_t le = line_end(s, len, q);

		return add(plan, ls, (le < len ? le + 1 : le) - ls, false, "%s", "");
	}
	if (!comma || line_done(s, len, q)) {
		while (start > ls && blank(s[start - 1]))
			start--;
	}
	return add(plan, start, (comma ? q : end) - start, false, "%s", "");
}

/*
 * The elements of list l for which gone[i] (i: their place in l) go; the
 * ',' that would then end the list after the last one left goes too.
 */
static int remove_elements(const struct cs_tree *t, struct confedit_plan *plan, int l,
			   const bool *gone)
{
	int c, i, last_left = -1, r = 0;
	bool last_gone = false;

	for (c = t->node[l].first, i = 0; c >= 0 && r == 0; c = t->node[c].next, i++) {
		last_gone = gone[i];
		if (gone[i])
			r = remove_element(t, plan, c);
		else
			last_left = c;
	}
	if (r == 0 && last_gone && last_left >= 0) {
		size_t q = next_token(t->text, t->len, t->node[last_left].val_end);

		if (q < t->len && t->text[q] == ',')
			r = add(plan, q, 1, false, "%s", "");
	}
	return r;
}

static bool is_group_named(const struct cs_tree *t, int el, const char *member, const char *value)
{
	char v[CS_NAME_MAX + 8];

	return t->node[el].kind == CS_GROUP && cs_string(t, cs_member(t, el, member), v, sizeof(v)) &&
	       strcmp(v, value) == 0;
}

/* The top-level list name: -1 when missing; -2 (refused, why said) when it is not a list. */
static int top_list(const struct cs_tree *t, const struct srcmap *m, struct confedit_plan *plan,
		    const char *name)
{
	char at[64];
	int l = cs_member(t, 0, name);

	if (l >= 0 && t->node[l].kind != CS_LIST && !(t->node[l].kind == CS_ARRAY &&
						      t->node[l].nchild == 0)) {
		refuse(plan, "\"%s\" at %s is not a list ( ... ); edit it by hand", name,
		       where(m, t->node[l].line, at, sizeof(at)));
		return -2;
	}
	return l;
}

int confedit_invite(const struct cs_tree *t, const struct srcmap *m, const struct confedit_invite *req,
		    struct confedit_plan *plan)
{
	char elem[4200], entry[256], ilen[32] = "", at[64], v[CS_NAME_MAX + 8];
	int keys, prot, found = -1, count = 0, r;
	long long n;

	memset(plan, 0, sizeof(*plan));
	plan->window = -1;
	snprintf(elem, sizeof(elem), "{ name = \"%s\"; file = \"%s\"; }", req->name, req->key_path);
	if (req->integrity_len)
		snprintf(ilen, sizeof(ilen), " integrity_len = %u;", req->integrity_len);
	snprintf(entry, sizeof(entry), "{ port = %u; mode = \"%s\"; keys = [ \"%s\" ];%s }", req->port,
		 req->mode, req->name, ilen);

	keys = top_list(t, m, plan, "keys");
	prot = top_list(t, m, plan, "protect");
	if (keys == -2 || prot == -2)
		return -EINVAL;
	for (int c = keys >= 0 ? t->node[keys].first : -1; c >= 0; c = t->node[c].next) {
		if (is_group_named(t, c, "name", req->name)) {
			refuse(plan, "keys already has a key named \"%s\" (%s): revoke it first, or "
			       "choose another name", req->name, where(m, t->node[c].line, at, sizeof(at)));
			return -EEXIST;
		}
	}
	for (int c = prot >= 0 ? t->node[prot].first : -1; c >= 0; c = t->node[c].next) {
		if (t->node[c].kind == CS_GROUP && cs_int(t, cs_member(t, c, "port"), &n) &&
		    n == (long long)req->port) {
			count++;
			found = c;
		}
	}
	if (count > 1) {
		refuse(plan, "%d protect entries are for port %u: add \"%s\" to the keys of the one "
		       "you mean by hand", count, req->port, req->name);
		return -EINVAL;
	}
	if (found >= 0) {
		int arr = cs_member(t, found, "keys");
		bool listed = false;

		where(m, t->node[found].line, at, sizeof(at));
		if (!cs_string(t, cs_member(t, found, "mode"), v, sizeof(v)) || strcmp(v, req->mode)) {
			refuse(plan, "the protect entry for port %u (%s) is not mode \"%s\": invite "
			       "with that entry's --mode", req->port, at, req->mode);
			return -EINVAL;
		}
		if (!cs_int(t, cs_member(t, found, "integrity_len"), &n))
			n = 0;
		if (n != (long long)req->integrity_len) {
			refuse(plan, "the protect entry for port %u (%s) has integrity_len %lld: invite "
			       "with --integrity-len %lld", req->port, at, n, n);
			return -EINVAL;
		}
		if (arr < 0 || t->node[arr].kind != CS_ARRAY) {
			refuse(plan, "the protect entry for port %u (%s) has no keys array [ ... ]; edit "
			       "it by hand", req->port, at);
			return -EINVAL;
		}
		if (cs_int(t, cs_member(t, found, "window"), &n))
			plan->window = n;
		plan->entry_line = t->node[found].line;
		for (int c = t->node[arr].first; c >= 0; c = t->node[c].next)
			listed |= cs_string(t, c, v, sizeof(v)) && strcmp(v, req->name) == 0;
		snprintf(v, sizeof(v), "\"%s\"", req->name);
		r = listed ? 0 : insert_element(t, plan, arr, v);
	} else {
		plan->new_entry = true;
		r = prot >= 0 ? insert_element(t, plan, prot, entry) : 0;
	}
	if (r == 0 && keys >= 0) {
		plan->keys_line = t->node[keys].line;
		r = insert_element(t, plan, keys, elem);
	}
	/* A list that is not there at all: at the end of the main file, keys first. */
	if (r == 0 && keys < 0)
		r = add(plan, t->len, 0, true, "\nkeys = (\n\t%s\n);\n", elem);
	if (r == 0 && prot < 0)
		r = add(plan, t->len, 0, true, "\nprotect = (\n\t%s\n);\n", entry);
	return r;
}

int confedit_revoke(const struct cs_tree *t, const struct srcmap *m, const char *name,
		    struct confedit_plan *plan)
{
	bool gone[MAX_LIST];
	char at[64], v[CS_NAME_MAX + 8];
	int keys, prot, knock, key = -1, r = 0, alone = 0;
	size_t nsolo = 0;

	memset(plan, 0, sizeof(*plan));
	plan->window = -1;
	keys = top_list(t, m, plan, "keys");
	prot = top_list(t, m, plan, "protect");
	knock = top_list(t, m, plan, "knock");
	if (keys == -2 || prot == -2 || knock == -2)
		return -EINVAL;
	for (int c = keys >= 0 ? t->node[keys].first : -1; c >= 0; c = t->node[c].next)
		if (is_group_named(t, c, "name", name))
			key = c;
	if (key < 0) {
		refuse(plan, "no key named \"%s\" in keys", name);
		return -ENOENT;
	}
	plan->keys_line = plan->key_file_line = t->node[key].line;
	if (!cs_string(t, cs_member(t, key, "file"), plan->key_file, sizeof(plan->key_file)))
		plan->key_file[0] = '\0';

	/* First every entry it alone opens: then nothing is changed at all. */
	plan->why[0] = '\0';
	for (int c = prot >= 0 ? t->node[prot].first : -1; c >= 0; c = t->node[c].next) {
		int arr = cs_member(t, c, "keys"), mine = 0;
		long long port = 0;

		if (t->node[c].kind != CS_GROUP || arr < 0 || t->node[arr].kind != CS_ARRAY)
			continue;
		for (int k = t->node[arr].first; k >= 0; k = t->node[k].next)
			mine += cs_string(t, k, v, sizeof(v)) && strcmp(v, name) == 0;
		if (mine == 0 || mine < t->node[arr].nchild)
			continue;
		cs_int(t, cs_member(t, c, "port"), &port);
		alone++;
		if (nsolo < sizeof(plan->why) - 200) {
			nsolo += (size_t)snprintf(plan->why + nsolo, sizeof(plan->why) - nsolo, "%sport %lld (%s)",
						  alone > 1 ? ", " : "", port,
						  where(m, t->node[c].line, at, sizeof(at)));
		}
	}
	if (alone) {
		char list[CONFEDIT_MSG];

		snprintf(list, sizeof(list), "%s", plan->why);
		refuse(plan, "\"%s\" is the only key of the protect %s for %s: an entry needs a key, "
		       "and without the entry its port would be open to anyone; add another key to "
		       "it first (knockgw invite NAME ... --apply), or remove the entry by hand",
		       name, alone > 1 ? "entries" : "entry", list);
		return -EINVAL;
	}

	for (int c = prot >= 0 ? t->node[prot].first : -1; c >= 0 && r == 0; c = t->node[c].next) {
		int arr = cs_member(t, c, "keys"), i = 0, mine = 0;

		if (t->node[c].kind != CS_GROUP || arr < 0 || t->node[arr].kind != CS_ARRAY ||
		    t->node[arr].nchild > MAX_LIST)
			continue;
		for (int k = t->node[arr].first; k >= 0; k = t->node[k].next, i++) {
			gone[i] = cs_string(t, k, v, sizeof(v)) && strcmp(v, name) == 0;
			mine += gone[i];
		}
		if (mine) {
			plan->protect_changed++;
			r = remove_elements(t, plan, arr, gone);
		}
	}
	if (r == 0 && knock >= 0 && t->node[knock].nchild <= MAX_LIST) {
		int i = 0;

		for (int c = t->node[knock].first; c >= 0; c = t->node[c].next, i++) {
			gone[i] = is_group_named(t, c, "key", name);
			plan->knock_removed += gone[i];
		}
		if (plan->knock_removed)
			r = remove_elements(t, plan, knock, gone);
	}
	if (r == 0) {
		int i = 0;

		for (int c = t->node[keys].first; c >= 0 && i < MAX_LIST;
		     c = t->node[c].next, i++)
			gone[i] = c == key;
		r = t->node[keys].nchild <= MAX_LIST
			    ? remove_elements(t, plan, keys, gone)
			    : -E2BIG;
	}
	return r;
}

void confedit_free(struct confedit_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		free(plan->e[i].ins);
	plan->n = 0;
}
