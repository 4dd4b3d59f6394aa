/*
 * conf_syntax.c - libconfig's scanner and grammar, with positions (conf_syntax.h).
 *
 * The scanner follows libconfig 1.5's scanner.l: names [A-Za-z*][-A-Za-z0-9_*]*
 * (true and false, in any case, are booleans), integers with an optional
 * sign, hex and an L suffix, floats, strings with backslash escapes and
 * the punctuation; any other character is garbage.  The parser is a
 * recursive descent over the grammar in the header, stopping at the first
 * token the grammar has no place for, where libconfig's parser stops too.
 * Reading the tree it builds (names, members, values): conf_syntax_read.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/read/conf_syntax.h"

struct tok {
	enum cs_tok kind;
	size_t off, len;
	int line, end_line;
};

struct parser {
	const char *t;
	size_t len;
	size_t pos;		/* the scanner's */
	int line;
	struct tok cur, prev;	/* the lookahead, the last one taken */
	struct cs_tree *tree;
	struct cs_error *err;
	int depth;
	bool oom;		/* the tree could not grow */
	struct tok runon;	/* the first string that ran over a line end; len 0: none */
	struct tok glued;	/* the last string with a word glued to its end; len 0: none */
};

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '*';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

static char at(const struct parser *p, size_t i)
{
	return i < p->len ? p->t[i] : '\0';
}

/* Blanks and comments; an unterminated C comment runs to the end (conf_text refuses it first). */
static void skip_space(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->t[p->pos];

		if (c == '\n') {
			p->line++;
			p->pos++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			p->pos++;
		} else if (c == '#' || (c == '/' && at(p, p->pos + 1) == '/')) {
			while (p->pos < p->len && p->t[p->pos] != '\n')
				p->pos++;
		} else if (c == '/' && at(p, p->pos + 1) == '*') {
			for (p->pos += 2; p->pos < p->len && !(p->t[p->pos] == '*' &&
							       at(p, p->pos + 1) == '/'); p->pos++)
				p->line += p->t[p->pos] == '\n';
			p->pos = p->pos < p->len ? p->pos + 2 : p->len;
		} else {
			return;
		}
	}
}

/*
 * The length of a number at i as libconfig's rules take one (integer, hex,
 * float, an L or LL suffix on integers); 0: none.
 */
static size_t number_len(const struct parser *p, size_t i)
{
	size_t s = i, d;
	bool frac = false;

	if (at(p, i) == '-' || at(p, i) == '+')
		i++;
	if (at(p, i) == '0' && (at(p, i + 1) | 0x20) == 'x' && isxdigit((unsigned char)at(p, i + 2))) {
		for (i += 2; isxdigit((unsigned char)at(p, i)); i++)
			;
	} else {
		for (d = i; digit(at(p, i)); i++)
			;
		if (at(p, i) == '.') {
			frac = true;
			for (i++; digit(at(p, i)); i++)
				;
		}
		if (i == d)
			return 0;
		if ((at(p, i) | 0x20) == 'e') {
			size_t e = i + 1;

			if (at(p, e) == '-' || at(p, e) == '+')
				e++;
			if (digit(at(p, e))) {
				for (i = e; digit(at(p, i)); i++)
					;
				frac = true;
			}
		}
		if (frac)
			return i - s;
	}
	if (at(p, i) == 'L')
		i += at(p, i + 1) == 'L' ? 2 : 1;
	return i - s;
}

static struct tok scan(struct parser *p)
{
	struct tok k;
	char c;
	size_t n;

	skip_space(p);
	k.off = p->pos;
	k.line = k.end_line = p->line;
	k.len = 1;
	if (p->pos >= p->len) {
		k.kind = T_EOF;
		k.len = 0;
		return k;
	}
	c = p->t[p->pos];
	switch (c) {
	case '=':
	case ':':
		k.kind = T_EQUALS;
		break;
	case ';':
		k.kind = T_SEMI;
		break;
	case ',':
		k.kind = T_COMMA;
		break;
	case '(':
		k.kind = T_LPAREN;
		break;
	case ')':
		k.kind = T_RPAREN;
		break;
	case '[':
		k.kind = T_LBRACK;
		break;
	case ']':
		k.kind = T_RBRACK;
		break;
	case '{':
		k.kind = T_LBRACE;
		break;
	case '}':
		k.kind = T_RBRACE;
		break;
	case '"': {
		size_t i = p->pos + 1;

		for (; i < p->len && p->t[i] != '"'; i++) {
			if (p->t[i] == '\\' && i + 1 < p->len)
				i++;
			p->line += p->t[i] == '\n';
		}
		k.kind = T_STRING;
		k.len = (i < p->len ? i + 1 : i) - p->pos;
		k.end_line = p->line;
		break;
	}
	default:
		if (name_start(c)) {
			for (n = 1; name_char(at(p, p->pos + n)); n++)
				;
			k.len = n;
			k.kind = (n == 4 && strncasecmp(p->t + p->pos, "true", 4) == 0) ||
					 (n == 5 && strncasecmp(p->t + p->pos, "false", 5) == 0)
				 ? T_BOOL
				 : T_NAME;
		} else if ((n = number_len(p, p->pos)) > 0) {
			k.kind = T_NUMBER;
			k.len = n;
		} else {
			k.kind = T_GARBAGE;
		}
	}
	p->pos += k.len;
	return k;
}

static void advance(struct parser *p)
{
	p->prev = p->cur;
	if (p->prev.kind == T_STRING && p->prev.end_line != p->prev.line && !p->runon.len)
		p->runon = p->prev;
	p->cur = scan(p);
	if (p->prev.kind == T_STRING && p->cur.off == p->prev.off + p->prev.len &&
	    (p->cur.kind == T_NAME || p->cur.kind == T_NUMBER || p->cur.kind == T_BOOL ||
	     (p->cur.kind == T_GARBAGE && p->t[p->cur.off] != '\'')))
		p->glued = p->prev;
}

/* The token after the lookahead, without taking either. */
static struct tok peek2(struct parser *p)
{
	size_t pos = p->pos;
	int line = p->line;
	struct tok k = scan(p);

	p->pos = pos;
	p->line = line;
	return k;
}

static void copy_text(char *out, size_t size, const char *s, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/*
 * The name of the setting node i is, or of the nearest one it is in; *element:
 * i itself is an element of that one (an entry of a list), not the setting.
 */
static void context_name(const struct parser *p, int i, char *out, size_t size, bool *element)
{
	const struct cs_tree *t = p->tree;

	out[0] = '\0';
	*element = i > 0 && !t->node[i].name_len;
	for (; i > 0; i = t->node[i].parent) {
		if (t->node[i].name_len) {
			copy_text(out, size, t->text + t->node[i].name_off, t->node[i].name_len);
			return;
		}
	}
}

/*
 * The first error: at the lookahead token, unless the text shows a likelier
 * cause (a string that ran over a line end to where the parse broke, or
 * text glued to the end of a string).
 */
static bool fail(struct parser *p, enum cs_err_kind kind, int node, int at_line, int other_line)
{
	struct cs_error *e = p->err;

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->line = p->cur.end_line;	/* libconfig counts lines to the end of the token */
	e->at_line = at_line ? at_line : p->cur.line;
	e->other_line = other_line;
	if (node >= 0)
		context_name(p, node, e->name, sizeof(e->name), &e->element);
	copy_text(e->tok, sizeof(e->tok), p->t + p->cur.off, p->cur.len);
	if (kind == CSE_DUPLICATE || kind == CSE_TOO_DEEP)
		return false;
	if (p->runon.len) {
		/* No setting takes text over several lines: the first such string is the likeliest cause. */
		e->kind = CSE_STRING_RUNS_ON;
		e->at_line = p->runon.line;
		e->other_line = p->runon.end_line;
	} else if (p->glued.len && p->glued.end_line == p->cur.line) {
		e->kind = CSE_TEXT_AFTER_STRING;
		copy_text(e->tok, sizeof(e->tok), p->t + p->glued.off, p->glued.len);
	} else if (p->cur.kind == T_GARBAGE && p->t[p->cur.off] == '\'') {
		e->kind = CSE_SINGLE_QUOTE;
	} else if (p->cur.kind == T_GARBAGE) {
		e->kind = CSE_GARBAGE;
	}
	return false;
}

static int new_node(struct parser *p, enum cs_kind kind, int parent)
{
	struct cs_tree *t = p->tree;
	struct cs_node *n;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct cs_node *grown;

		if (cap > CS_MAX_NODES)
			return -E2BIG;
		grown = realloc(t->node, cap * sizeof(*grown));
		if (!grown) {
			p->oom = true;
			return -ENOMEM;
		}
		t->node = grown;
		t->cap = cap;
	}
	n = &t->node[t->n];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->parent = parent;
	n->first = n->next = -1;
	if (parent >= 0) {
		struct cs_node *par = &t->node[parent];

		if (par->first < 0) {
			par->first = (int)t->n;
		} else {
			int c = par->first;

			/* Appending walks the siblings: groups and lists are short, as libconfig's are. */
			while (t->node[c].next >= 0)
				c = t->node[c].next;
			t->node[c].next = (int)t->n;
		}
		par->nchild++;
	}
	return (int)t->n++;
}

enum ctx { IN_SETTING, IN_LIST, IN_ARRAY };

static bool parse_value(struct parser *p, int node, enum ctx ctx);

/* After '{' (or at the start, root): settings up to '}' (EOF for the root). */
static bool parse_group(struct parser *p, int g, int open_line)
{
	const struct cs_tree *t = p->tree;
	bool root = g == 0;

	for (;;) {
		struct tok k = p->cur;
		int s;

		if ((root && k.kind == T_EOF) || (!root && k.kind == T_RBRACE))
			return true;
		switch (k.kind) {
		case T_NAME:
			break;
		case T_EOF:
			fail(p, CSE_NOT_CLOSED, g, open_line, open_line);
			p->err->open = '{';
			return false;
		case T_RBRACE:
		case T_RPAREN:
		case T_RBRACK:
			if (root)
				return fail(p, CSE_STRAY_CLOSE, g, 0, 0);
			fail(p, CSE_WRONG_CLOSE, g, 0, open_line);
			p->err->close = p->t[k.off];
			p->err->open = '{';
			return false;
		case T_LBRACE:
		case T_LPAREN:
			if (!root)
				return fail(p, CSE_GROUP_NOT_CLOSED, g, 0, open_line);
			return fail(p, CSE_VALUE_IN_GROUP, g, 0, open_line);
		case T_SEMI:
		case T_COMMA:
			return fail(p, CSE_OTHER, g, 0, 0);
		default:
			return fail(p, CSE_VALUE_IN_GROUP, g, 0, open_line);
		}
		/* libconfig adds the setting as it reads its name: a duplicate stops it there. */
		for (int c = t->node[g].first; c >= 0; c = t->node[c].next) {
			if (t->node[c].name_len == k.len &&
			    memcmp(p->t + t->node[c].name_off, p->t + k.off, k.len) == 0) {
				fail(p, CSE_DUPLICATE, g, 0, t->node[c].line);
				copy_text(p->err->name, sizeof(p->err->name), p->t + k.off, k.len);
				return false;
			}
		}
		s = new_node(p, CS_SCALAR, g);
		if (s < 0)
			return fail(p, CSE_TOO_DEEP, g, 0, 0);
		p->tree->node[s].name_off = k.off;
		p->tree->node[s].name_len = k.len;
		p->tree->node[s].start = k.off;
		p->tree->node[s].line = k.line;
		advance(p);
		if (p->cur.kind != T_EQUALS)
			return fail(p, CSE_MISSING_EQUALS, s, 0, 0);
		advance(p);
		if (!parse_value(p, s, IN_SETTING))
			return false;
		p->tree->node[s].end = p->tree->node[s].val_end;
		if (p->cur.kind == T_SEMI || p->cur.kind == T_COMMA) {
			p->tree->node[s].end = p->cur.off + 1;
			advance(p);
		}
	}
}

/* After '(' or '[': elements separated by ',' up to the closing bracket. */
static bool parse_elements(struct parser *p, int l, bool array, int open_line)
{
	enum cs_tok closer = array ? T_RBRACK : T_RPAREN;
	char open = array ? '[' : '(';

	if (p->cur.kind == closer)
		return true;
	for (;;) {
		struct tok k = p->cur;
		int e;

		switch (k.kind) {
		case T_EOF:
			fail(p, CSE_NOT_CLOSED, l, open_line, open_line);
			p->err->open = open;
			return false;
		case T_RPAREN:
		case T_RBRACK:
		case T_RBRACE:
			fail(p, CSE_WRONG_CLOSE, l, 0, open_line);
			p->err->close = p->t[k.off];
			p->err->open = open;
			return false;
		case T_NAME:
			if (peek2(p).kind == T_EQUALS)
				return fail(p, CSE_SETTING_IN_LIST, l, 0, open_line);
			return fail(p, CSE_UNQUOTED_WORD, l, 0, 0);
		case T_LBRACE:
		case T_LPAREN:
		case T_LBRACK:
			if (array)
				return fail(p, CSE_NESTED_IN_ARRAY, l, 0, open_line);
			break;
		case T_SEMI:
		case T_COMMA:
			return fail(p, CSE_MISSING_VALUE, l, 0, 0);
		default:
			break;
		}
		e = new_node(p, CS_SCALAR, l);
		if (e < 0)
			return fail(p, CSE_TOO_DEEP, l, 0, 0);
		p->tree->node[e].start = k.off;
		p->tree->node[e].line = k.line;
		if (!parse_value(p, e, array ? IN_ARRAY : IN_LIST))
			return false;
		p->tree->node[e].end = p->tree->node[e].val_end;
		switch (p->cur.kind) {
		case T_COMMA: {
			int comma_line = p->cur.line;

			advance(p);
			if (p->cur.kind == closer) {
				fail(p, CSE_TRAILING_COMMA, l, comma_line, open_line);
				p->err->open = open;
				return false;
			}
			break;
		}
		case T_RPAREN:
		case T_RBRACK:
			if (p->cur.kind == closer)
				return true;
			/* fall through */
		case T_RBRACE:
			fail(p, CSE_WRONG_CLOSE, l, 0, open_line);
			p->err->close = p->t[p->cur.off];
			p->err->open = open;
			return false;
		case T_SEMI:
			return fail(p, CSE_SEMI_IN_LIST, l, 0, open_line);
		case T_EOF:
			fail(p, CSE_NOT_CLOSED, l, open_line, open_line);
			p->err->open = open;
			return false;
		case T_NAME:
			if (peek2(p).kind == T_EQUALS)
				return fail(p, CSE_SETTING_IN_LIST, l, 0, open_line);
			return fail(p, CSE_MISSING_COMMA, l, 0, p->tree->node[e].end_line);
		default:
			return fail(p, CSE_MISSING_COMMA, l, 0, p->tree->node[e].end_line);
		}
	}
}

/* A value at the lookahead, into node (which exists; its kind is set here). */
static bool parse_value(struct parser *p, int node, enum ctx ctx)
{
	struct cs_node *n = &p->tree->node[node];
	struct tok k = p->cur;
	bool ok;

	n->val_off = k.off;
	n->val_line = k.line;
	switch (k.kind) {
	case T_STRING:
		n->kind = CS_SCALAR;
		n->scalar = T_STRING;
		while (p->cur.kind == T_STRING)
			advance(p);
		break;
	case T_NUMBER:
	case T_BOOL:
		n->kind = CS_SCALAR;
		n->scalar = k.kind;
		advance(p);
		break;
	case T_LBRACE:
	case T_LPAREN:
	case T_LBRACK:
		if (p->depth >= CS_MAX_DEPTH)
			return fail(p, CSE_TOO_DEEP, node, 0, 0);
		n->kind = k.kind == T_LBRACE ? CS_GROUP : k.kind == T_LPAREN ? CS_LIST : CS_ARRAY;
		p->depth++;
		advance(p);
		ok = k.kind == T_LBRACE ? parse_group(p, node, k.line)
					 : parse_elements(p, node, k.kind == T_LBRACK, k.line);
		p->depth--;
		if (!ok)
			return false;
		n = &p->tree->node[node];	/* the array may have moved */
		advance(p);			/* the closing bracket */
		break;
	case T_NAME:
		return fail(p, CSE_UNQUOTED_WORD, node, 0, 0);
	default:
		return fail(p, ctx == IN_SETTING ? CSE_MISSING_VALUE : CSE_OTHER, node, 0, 0);
	}
	n = &p->tree->node[node];
	n->val_end = p->prev.off + p->prev.len;
	n->end_line = p->prev.end_line;
	return true;
}

int cs_parse(const char *text, size_t len, struct cs_tree *t, struct cs_error *err)
{
	struct parser p = { .t = text, .len = len, .line = 1, .tree = t, .err = err };
	int root;

	memset(t, 0, sizeof(*t));
	memset(err, 0, sizeof(*err));
	t->text = text;
	t->len = len;
	root = new_node(&p, CS_GROUP, -1);
	if (root < 0)
		return root;
	t->node[0].line = t->node[0].val_line = 1;
	p.cur = scan(&p);
	if (!parse_group(&p, 0, 1))
		return p.oom ? -ENOMEM : -EINVAL;
	t->node[0].val_end = t->node[0].end = len;
	t->node[0].end_line = p.cur.line;
	return 0;
}

void cs_free(struct cs_tree *t)
{
	free(t->node);
	t->node = NULL;
	t->n = t->cap = 0;
}
