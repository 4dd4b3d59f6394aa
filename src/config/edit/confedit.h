/*
 * confedit.h - adding and removing a key in a configuration's text, so
 * that `knockgw invite --apply` and `knockgw revoke` change what they must
 * and keep every comment and every other byte as it was.
 *
 * libconfig cannot write a file back with its comments, so the text is
 * edited: the tree of conf_syntax.h says where the top-level "keys",
 * "protect" and "knock" lists, their entries and each entry's members are,
 * and the edits are byte ranges replaced in that text.  The text is the
 * joined text of conf_text.h (@include lines replaced by their files);
 * confedit_map() turns each edit into an edit of the one file it falls in.
 *
 * Invite: the key goes at the end of "keys" (an entry { name = "NAME";
 * file = "PATH"; }, on a line of its own, indented like the entry before
 * it), and its name at the end of the "keys" array of the one protect
 * entry for the port; without such an entry a new one goes at the end of
 * "protect" (port, mode, keys, integrity_len when not 0); a list that is
 * not there at all is appended to the main file.  Refused: a key of that
 * name already in "keys"; more than one protect entry for the port; an
 * entry whose mode or integrity_len differ from the invite's (the client's
 * knock would not verify).
 *
 * Revoke: the key's entry leaves "keys", its name leaves the "keys" array
 * of every protect entry, and every knock entry that uses it goes (it
 * cannot knock without its key).  An entry, element or line it occupied
 * alone goes with its line (and a comment on that line: it was about the
 * entry); comments on lines of their own stay.  Refused: a protect entry
 * that has no other key, because an entry needs one and removing the
 * entry would leave its port open to anyone: the administrator adds
 * another key to it first, or removes the entry by hand.
 *
 * Pure: no I/O.  The texts the plans hold are malloc'd: confedit_free().
 */
#ifndef KNOCKGW_CONFEDIT_H
#define KNOCKGW_CONFEDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "config/read/conf_syntax.h"
#include "config/read/conf_text.h"

enum { CONFEDIT_MAX = 2 * 256 + 8, CONFEDIT_MSG = 1024 };

/* Replace del bytes at off with ins (may be empty); append: add ins at the main file's end. */
struct confedit {
	size_t off, del;
	char *ins;
	bool append;
};

struct confedit_plan {
	size_t n;
	struct confedit e[CONFEDIT_MAX];
	char why[CONFEDIT_MSG];		/* a refusal's reason, one line */
	/* What the plan does, for the report. */
	int keys_line;			/* the key's entry (revoke) or "keys" list (invite); 0: none */
	bool new_entry;			/* invite: a new protect entry; else an existing one's */
	int entry_line;			/* invite: that entry's line (a line of the joined text) */
	long long window;		/* invite: the entry's window; -1 when not set */
	size_t protect_changed, knock_removed;	/* revoke */
	char key_file[4096];		/* revoke: the key's "file" as written; "" for a secret */
	int key_file_line;		/* revoke: the line of that entry, to resolve it against */
};

struct confedit_invite {
	const char *name;	/* a name invite_name_ok() took */
	const char *key_path;	/* absolute, without quotes or backslashes */
	unsigned port;
	const char *mode;	/* "native" or "knock" */
	unsigned integrity_len;
};

/*
 * Plans the invite of req into the text tree t of m's joined text (m names
 * files and lines in the reasons; NULL: lines of the text).  0; or
 * -EEXIST, -EINVAL with the reason in plan->why; -ENOMEM.  confedit_free()
 * the plan either way.
 */
int confedit_invite(const struct cs_tree *t, const struct srcmap *m, const struct confedit_invite *req,
		    struct confedit_plan *plan);

/* Plans the revoke of key name.  0; -ENOENT (no such key), -EINVAL (why); -ENOMEM. */
int confedit_revoke(const struct cs_tree *t, const struct srcmap *m, const char *name,
		    struct confedit_plan *plan);

void confedit_free(struct confedit_plan *plan);

/*
 * The edits of plan that fall in file f of map m (m->keep: each file's own
 * text), in that file's offsets, sorted, into out (room for CONFEDIT_MAX; the
 * ins texts are plan's, not copied); their number in *ret_n.  The bytes
 * an edit deletes are checked to be the same in the file as in the joined
 * text.  0, or -EINVAL when an edit would span two files or does not map.
 */
int confedit_map(const struct srcmap *m, const struct confedit_plan *plan, int f, struct confedit *out,
		 size_t *ret_n);

/*
 * text (len bytes) with the n edits (sorted by off, not overlapping; an
 * append edit goes at the end, after a newline the text lacks) into a
 * malloc'd NUL-terminated *ret, its length in *ret_len.  0 or -ENOMEM.
 */
int confedit_apply(const char *text, size_t len, const struct confedit *e, size_t n, char **ret,
		   size_t *ret_len);

#endif
