/*
 * conf_syntax.h - libconfig's syntax read a second time, with positions.
 *
 * libconfig 1.5 parses a configuration into values with line numbers and
 * says no more than "syntax error" and a line when it cannot.  This module
 * reads the same text the way libconfig's scanner and grammar do, and
 * either builds a tree of the settings, lists, arrays and groups with the
 * byte offsets of each (for editing the text in place: confedit.h), or
 * stops at the first token libconfig would refuse and says what is likely
 * wrong there (for the messages: conf_diag.h).
 *
 * The grammar (libconfig 1.5): a setting is NAME ('=' | ':') VALUE, then
 * an optional ';' or ','; a group { } holds settings, a list ( ) values
 * separated by ',' (none after the last: 1.5 refuses it), an array [ ]
 * plain values (strings, numbers, booleans) separated the same way;
 * adjacent strings are one.  Comments: #, //, and C's.  @include lines are
 * gone by the time this runs (conf_text.h joins the files).
 *
 * Pure: no I/O, no logging.  Nesting is bounded (CS_MAX_DEPTH) so that the
 * recursion is; a text nested deeper is refused as CSE_TOO_DEEP.
 */
#ifndef KNOCKGW_CONF_SYNTAX_H
#define KNOCKGW_CONF_SYNTAX_H

#include <stdbool.h>
#include <stddef.h>

enum {
	CS_MAX_DEPTH = 64,
	CS_MAX_NODES = 1 << 18,		/* a 1 MiB file has fewer values than this */
	CS_NAME_MAX = 64,		/* of the names kept for messages */
};

enum cs_tok {
	T_EOF, T_NAME, T_STRING, T_NUMBER, T_BOOL, T_EQUALS, T_SEMI, T_COMMA,
	T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_LBRACE, T_RBRACE, T_GARBAGE,
};

enum cs_kind { CS_GROUP, CS_LIST, CS_ARRAY, CS_SCALAR };

/*
 * One value: a member of a group (a setting, with its name) or an element
 * of a list or array (no name).  Offsets are into the text parsed.
 */
struct cs_node {
	enum cs_kind kind;
	enum cs_tok scalar;		/* CS_SCALAR: the kind of its first token */
	int parent;			/* -1: the root group */
	int first, next;		/* first child, next sibling; -1: none */
	int nchild;
	size_t name_off, name_len;	/* a setting's name; name_len 0: an element */
	size_t start;			/* the name, or an element's value */
	size_t val_off, val_end;	/* the value: its tokens, brackets included */
	size_t end;			/* after a setting's ';' or ',' when it has one */
	int line, val_line, end_line;	/* of start, of val_off, of val_end's last byte */
};

struct cs_tree {
	const char *text;
	size_t len;
	struct cs_node *node;		/* node[0] is the root group */
	size_t n, cap;
};

/* What libconfig would stop at, most likely, and why. */
enum cs_err_kind {
	CSE_NONE,
	CSE_TRAILING_COMMA,	/* ',' then ')' or ']' */
	CSE_SEMI_IN_LIST,	/* ';' after an element of a list or array */
	CSE_MISSING_COMMA,	/* two elements with nothing between them */
	CSE_SETTING_IN_LIST,	/* NAME = ... directly in a list or array */
	CSE_VALUE_IN_GROUP,	/* a value where a group wants a setting */
	CSE_GROUP_NOT_CLOSED,	/* '{' or '(' where a group wants a setting: its '}' is missing */
	CSE_MISSING_EQUALS,	/* NAME then no '=' */
	CSE_MISSING_VALUE,	/* NAME = then no value */
	CSE_UNQUOTED_WORD,	/* NAME = word: a string without quotes */
	CSE_NOT_CLOSED,		/* the text ends inside a group, list or array */
	CSE_WRONG_CLOSE,	/* ')' or ']' or '}' that is not the one open */
	CSE_STRAY_CLOSE,	/* a closing bracket with nothing open */
	CSE_STRING_RUNS_ON,	/* a string over several lines: a '"' is missing */
	CSE_TEXT_AFTER_STRING,	/* text right after a string: a '"' missing or one too many */
	CSE_SINGLE_QUOTE,	/* 'text' */
	CSE_GARBAGE,		/* a character libconfig knows nothing of */
	CSE_NESTED_IN_ARRAY,	/* a group, list or array in an array */
	CSE_DUPLICATE,		/* a name set twice in one group */
	CSE_TOO_DEEP,
	CSE_OTHER,
};

struct cs_error {
	enum cs_err_kind kind;
	int line;		/* the token libconfig stops at: the line it reports */
	int at_line;		/* the line to point the reader at (the stray ',', an opener) */
	int other_line;		/* the bracket still open; the first setting of a name */
	char name[CS_NAME_MAX];	/* the setting concerned (the list, the group, the name) */
	bool element;		/* the group, list or array concerned is an entry of name */
	char tok[CS_NAME_MAX];	/* the text of the token in question, cut short */
	char close;		/* CSE_WRONG_CLOSE: the bracket found; open: the one wanted */
	char open;
};

/*
 * Parses len bytes of text (which must stay alive as long as *t is used).
 * 0 with the tree in *t; -EINVAL with the first error in *err (*t then
 * holds what was read before it); -ENOMEM.  cs_free() *t either way.
 */
int cs_parse(const char *text, size_t len, struct cs_tree *t, struct cs_error *err);

void cs_free(struct cs_tree *t);

/* The line (1-based) byte off is on. */
int cs_line_of(const char *text, size_t len, size_t off);

/* Child of group node g named name (NUL-terminated), or -1. */
int cs_member(const struct cs_tree *t, int g, const char *name);

/* The node's name equals name. */
bool cs_named(const struct cs_tree *t, int i, const char *name);

/*
 * A scalar's value: a string's text with libconfig's escapes undone and
 * adjacent strings joined (at most size-1 bytes, false if longer or not a
 * string), or an integer (decimal or hex, an optional L; false otherwise).
 */
bool cs_string(const struct cs_tree *t, int i, char *out, size_t size);
bool cs_int(const struct cs_tree *t, int i, long long *ret);

#endif
