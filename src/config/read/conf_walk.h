/*
 * conf_walk.h - the loader's engine (conf_walk.c): the loader's state, the
 * schema row (struct srow) and the walk that loads a group by its rows,
 * reporting every problem at the setting's own line; and what the rows say
 * by themselves (defaults, restarts).  Internal to the conf*.c modules: the
 * rows themselves are conf_schema.c's.
 *
 * Lines: while loading, every line is a line of the joined text
 * (conf_text.h); messages go through the source map (conf_srcmap.h) to
 * name the file and line the setting was written at, and conf_load() turns
 * the lines kept in the struct into lines of their own files once it
 * validated.
 */
#ifndef KNOCKGW_CONF_WALK_H
#define KNOCKGW_CONF_WALK_H

#include <stdbool.h>
#include <stddef.h>

#include <libconfig.h>

#include "config/conf.h"
#include "config/read/conf_srcmap.h"

/* 1..max characters, each alphanumeric or in extra; ASCII only, whatever the locale. */
bool conf_name_ok(const char *s, size_t max, const char *extra);

struct loader {
	struct conf *c;
	struct conf_errors *errs;
	size_t nerr;		/* errors reported, including those past CONF_MAX_ERRORS */
	struct srcmap *map;
};

/* The joined text's line of a setting. */
int conf_setting_line(const config_setting_t *s);

/* The file a setting was written in (its path as messages name it). */
const char *conf_setting_file(const struct loader *ld, const config_setting_t *s);

/* Reports "FILE:LINE: message" at the setting's own file and line. */
void conf_lerr(struct loader *ld, const config_setting_t *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Names settings in messages: "queue.count", "protect.port", "log_level". */
struct scope {
	const char *name;	/* NULL at the top level */
	bool entry;		/* a list element: range messages use the bare name */
};

enum got { GOT_NONE, GOT_OK, GOT_BAD };

/* A string member: GOT_OK with it in *ret and its setting in *ret_s. */
enum got conf_get_string(struct loader *ld, const config_setting_t *g, const struct scope *sc,
			 const char *name, const char **ret, config_setting_t **ret_s);

/* "unknown setting" for each member of group not in names (NULL-terminated). */
void conf_check_unknown(struct loader *ld, const config_setting_t *group, const char *const *names,
			const char *where);

/* A string setting's choices and the value each one stores. */
struct word {
	const char *name;
	int value;
};

enum stype { ST_INT, ST_BOOL, ST_WORD, ST_STRING, ST_STRINGS, ST_GROUP, ST_LIST };

/*
 * Why a reload cannot take a change of a setting: the part of the daemon
 * that was built from it at start.  A row with RS_NONE (the default) may
 * change in a reload.  Listed in the order conf_restart_reason() prefers
 * when several changed at once.
 */
enum restart {
	RS_NONE,
	RS_QUEUE,		/* the queues are bound at start */
	RS_TRANSLATE,		/* the client role's machinery */
	RS_SOCKET,		/* the control socket is bound at start */
	RS_LIMITS,		/* the tables are sized at start */
	RS_MANAGE,		/* who owns the table */
	RS_MARKS,		/* flows in flight carry the old bits in marks and conntrack */
	RS_CT_LABEL,
	RS_MAX
};

/* The lists of the root group, which the walk hands back to its caller to load. */
enum slist { SL_NONE, SL_KEYS, SL_PROTECT, SL_KNOCK, SL_MAX };

/*
 * One setting of the schema (conf_schema.c): its name and type, its range
 * or words, where its value goes (an offset into the struct being loaded),
 * its default, whether a reload may change it, and the slot of that
 * struct's lines array that keeps its line for conf_validate().  A NULL
 * name ends a table.
 */
struct srow {
	const char *name;
	enum stype type;
	long long min, max;		/* ST_INT; ST_LIST: max is the entries read */
	size_t off, size;		/* where the value goes (ST_LIST: the entry count) */
	const struct word *words;	/* ST_WORD */
	bool required;			/* missing: "<entry> entry is missing "<name>"" */
	bool has_def;			/* def (ST_INT, ST_BOOL, ST_WORD) or def_str applies */
	long long def;
	const char *def_str;		/* ST_STRING */
	enum restart restart;		/* RS_NONE: a reload may change it */
	int line;			/* slot in lines[] (enum conf_line / entry_line); 0: none */
	/* ST_INT: a rule beyond the range; reports and returns false when broken. */
	bool (*check)(struct loader *ld, const config_setting_t *s, long long v);
	/* ST_STRING, ST_STRINGS (str NULL): checks the value, reports, stores. */
	bool (*store)(struct loader *ld, const config_setting_t *s, const char *str, void *obj);
	const struct srow *rows;	/* ST_GROUP */
	enum slist list;		/* ST_LIST: where conf_walk() hands the setting back */
};

/*
 * Loads the settings of group g named by rows into obj (lines: obj's lines
 * array): each one is type-checked, range-checked and stored, or reported
 * at its own line; a required one that is missing is reported at g's.  A
 * list (ST_LIST) is only checked to be one, and handed back in
 * ret_lists[row.list] for the caller to load (ret_lists NULL: rows has none).
 */
void conf_walk(struct loader *ld, const config_setting_t *g, const struct srow *rows,
	       const struct scope *sc, void *obj, int *lines, config_setting_t **ret_lists);

/* Stores the default of every row of rows (and of their groups) that has one into obj. */
void conf_rows_defaults(const struct srow *rows, void *obj);

/*
 * The first reason, in enum restart's order, that a row of rows (and of
 * their groups) whose change a reload cannot take differs between a and b;
 * RS_NONE when none does.  A list compares by being empty or not.
 */
enum restart conf_rows_restart(const struct srow *rows, const void *a, const void *b);

/* conf_check_unknown() with the names of rows. */
void conf_check_unknown_rows(struct loader *ld, const config_setting_t *group,
			     const struct srow *rows, const char *where);

#endif
