/*
 * conf_walk.c - the loader's engine: settings by schema row (conf_walk.h),
 * typed, range-checked and stored, every problem reported at the setting's
 * own line; and what else the rows say by themselves: their defaults, and
 * which changes a reload cannot take.  The rows themselves are in
 * conf_schema.c.  The walk loads no list of entries: it hands each back to
 * its caller, which loads it.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config/read/conf_walk.h"

enum {
	MAX_ROWS = 16,			/* rows of one group, for the list of known names */
};

/* ------------------------------------------------------------------ */
/* Settings and their messages */

int conf_setting_line(const config_setting_t *s)
{
	return (int)config_setting_source_line(s);
}

const char *conf_setting_file(const struct loader *ld, const config_setting_t *s)
{
	int f;

	srcmap_line(ld->map, conf_setting_line(s), &f);
	return ld->map->src[f].path;
}

void conf_lerr(struct loader *ld, const config_setting_t *s, const char *fmt, ...)
{
	va_list ap;
	int f;
	int line = srcmap_line(ld->map, conf_setting_line(s), &f);

	va_start(ap, fmt);
	conf_verror(ld->errs, ld->map->src[f].path, line, fmt, ap);
	va_end(ap);
	ld->nerr++;
}

static void type_error(struct loader *ld, const config_setting_t *s, const struct scope *sc,
		       const char *name, const char *want)
{
	if (sc->name)
		conf_lerr(ld, s, "\"%s.%s\" must be %s", sc->name, name, want);
	else
		conf_lerr(ld, s, "\"%s\" must be %s", name, want);
}

void conf_check_unknown(struct loader *ld, const config_setting_t *group, const char *const *names,
			const char *where)
{
	int n = config_setting_length(group);

	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(group, (unsigned)i);
		const char *name = s ? config_setting_name(s) : NULL;
		bool known = false;

		if (!name)
			continue;
		for (const char *const *k = names; *k && !known; k++)
			known = strcmp(*k, name) == 0;
		if (known)
			continue;
		if (where)
			conf_lerr(ld, s, "unknown setting \"%s\" in %s", name, where);
		else
			conf_lerr(ld, s, "unknown setting \"%s\"", name);
	}
}

void conf_check_unknown_rows(struct loader *ld, const config_setting_t *group,
			       const struct srow *rows, const char *where)
{
	const char *names[MAX_ROWS + 1];
	size_t n = 0;

	for (const struct srow *r = rows; r->name && n < MAX_ROWS; r++)
		names[n++] = r->name;
	names[n] = NULL;
	conf_check_unknown(ld, group, names, where);
}

enum got conf_get_string(struct loader *ld, const config_setting_t *g, const struct scope *sc,
			 const char *name, const char **ret, config_setting_t **ret_s)
{
	config_setting_t *s = config_setting_get_member(g, name);

	if (!s)
		return GOT_NONE;
	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		type_error(ld, s, sc, name, "a string");
		return GOT_BAD;
	}
	*ret = config_setting_get_string(s);
	*ret_s = s;
	return GOT_OK;
}

bool conf_name_ok(const char *s, size_t max, const char *extra)
{
	size_t n = strnlen(s, max + 1);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9');

		if (!alnum && !strchr(extra, ch))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* One setting, by its row */

static void store_uint(void *obj, const struct srow *r, unsigned long long v)
{
	uint8_t *p = (uint8_t *)obj + r->off;

	switch (r->size) {
	case sizeof(uint16_t): {
		uint16_t x = (uint16_t)v;

		memcpy(p, &x, sizeof(x));
		break;
	}
	case sizeof(uint32_t): {
		uint32_t x = (uint32_t)v;	/* int-sized enums take their value this way too */

		memcpy(p, &x, sizeof(x));
		break;
	}
	}
}

static bool load_int(struct loader *ld, const config_setting_t *s, const struct scope *sc,
		     const struct srow *r, void *obj)
{
	long long v;

	if (config_setting_type(s) != CONFIG_TYPE_INT &&
	    config_setting_type(s) != CONFIG_TYPE_INT64) {
		type_error(ld, s, sc, r->name, "an integer");
		return false;
	}
	v = config_setting_get_int64(s);
	if (v < r->min || v > r->max) {
		if (sc->name && !sc->entry)
			conf_lerr(ld, s, "%s.%s %lld out of range %lld..%lld", sc->name, r->name, v,
				  r->min, r->max);
		else
			conf_lerr(ld, s, "%s %lld out of range %lld..%lld", r->name, v, r->min,
				  r->max);
		return false;
	}
	if (r->check && !r->check(ld, s, v))
		return false;
	store_uint(obj, r, (unsigned long long)v);
	return true;
}

static bool load_word(struct loader *ld, const config_setting_t *s, const char *str,
		      const struct srow *r, void *obj)
{
	char choices[128];
	size_t off = 0;

	for (const struct word *w = r->words; w->name; w++) {
		if (strcmp(w->name, str) == 0) {
			store_uint(obj, r, (unsigned)w->value);
			return true;
		}
	}
	choices[0] = '\0';
	for (const struct word *w = r->words; w->name && off < sizeof(choices); w++) {
		int n = snprintf(choices + off, sizeof(choices) - off, "%s\"%s\"",
				 w == r->words ? "" : (w[1].name ? ", " : " or "), w->name);

		if (n < 0)
			break;
		off += (size_t)n;
	}
	conf_lerr(ld, s, "unknown %s \"%s\" (use %s)", r->name, str, choices);
	return false;
}

/* [ "a", "b" ] (libconfig array) or ( "a", "b" ) (list) of strings. */
static bool is_strings(const config_setting_t *s)
{
	bool ok = config_setting_type(s) == CONFIG_TYPE_ARRAY ||
		  config_setting_type(s) == CONFIG_TYPE_LIST;

	for (int i = 0; ok && i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		ok = e && config_setting_type(e) == CONFIG_TYPE_STRING;
	}
	return ok;
}

/* A list of groups; an empty [] is taken as the empty list it looks like. */
static bool is_list(const config_setting_t *s)
{
	return config_setting_is_list(s) ||
	       (config_setting_is_array(s) && config_setting_length(s) == 0);
}

/* One row's setting in g: GOT_OK once its value is stored. */
static enum got load_row(struct loader *ld, const config_setting_t *g, const struct scope *sc,
			 const struct srow *r, void *obj, int *lines, config_setting_t **ret_lists)
{
	static const struct scope top = { NULL, false };
	config_setting_t *s = config_setting_get_member(g, r->name);
	bool ok = false;

	if (!s)
		return GOT_NONE;
	switch (r->type) {
	case ST_INT:
		ok = load_int(ld, s, sc, r, obj);
		break;
	case ST_BOOL:
		if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
			type_error(ld, s, sc, r->name, "a boolean (true or false)");
			break;
		}
		*(bool *)((uint8_t *)obj + r->off) = config_setting_get_bool(s) != 0;
		ok = true;
		break;
	case ST_WORD:
	case ST_STRING:
		if (config_setting_type(s) != CONFIG_TYPE_STRING) {
			type_error(ld, s, sc, r->name, "a string");
			break;
		}
		if (r->type == ST_WORD)
			ok = load_word(ld, s, config_setting_get_string(s), r, obj);
		else
			ok = r->store(ld, s, config_setting_get_string(s), obj);
		break;
	case ST_STRINGS:
		if (!is_strings(s)) {
			type_error(ld, s, sc, r->name, "an array of strings");
			break;
		}
		ok = r->store(ld, s, NULL, obj);
		break;
	case ST_GROUP: {
		const struct scope sub = { r->name, false };

		if (!config_setting_is_group(s)) {
			type_error(ld, s, &top, r->name, "a group { ... }");
			break;
		}
		conf_check_unknown_rows(ld, s, r->rows, r->name);
		conf_walk(ld, s, r->rows, &sub, obj, lines, NULL);
		ok = true;
		break;
	}
	case ST_LIST:
		if (!is_list(s)) {
			type_error(ld, s, &top, r->name, "a list ( { ... }, ... )");
			break;
		}
		if (config_setting_length(s) > r->max)
			conf_lerr(ld, s, "\"%s\" has %d entries; at most %lld are read", r->name,
				  config_setting_length(s), r->max);
		if (ret_lists)
			ret_lists[r->list] = s;
		ok = true;
		break;
	}
	if (!ok)
		return GOT_BAD;
	if (r->line)
		lines[r->line] = conf_setting_line(s);
	return GOT_OK;
}

void conf_walk(struct loader *ld, const config_setting_t *g, const struct srow *rows,
	       const struct scope *sc, void *obj, int *lines, config_setting_t **ret_lists)
{
	for (const struct srow *r = rows; r->name; r++) {
		if (load_row(ld, g, sc, r, obj, lines, ret_lists) == GOT_NONE && r->required)
			conf_lerr(ld, g, "%s entry is missing \"%s\"", sc->name, r->name);
	}
}

/* ------------------------------------------------------------------ */
/* What the rows say by themselves */

void conf_rows_defaults(const struct srow *rows, void *obj)
{
	for (const struct srow *r = rows; r->name; r++) {
		uint8_t *p = (uint8_t *)obj + r->off;

		if (r->type == ST_GROUP) {
			conf_rows_defaults(r->rows, obj);
			continue;
		}
		if (!r->has_def)
			continue;
		switch (r->type) {
		case ST_INT:
		case ST_WORD:
			store_uint(obj, r, (unsigned long long)r->def);
			break;
		case ST_BOOL:
			*(bool *)p = r->def != 0;
			break;
		case ST_STRING:
			snprintf((char *)p, r->size, "%s", r->def_str);
			break;
		default:
			break;
		}
	}
}

/* Whether a row's value differs between a and b. */
static bool row_differs(const struct srow *r, const void *a, const void *b)
{
	const uint8_t *pa = (const uint8_t *)a + r->off, *pb = (const uint8_t *)b + r->off;
	size_t na, nb;

	switch (r->type) {
	case ST_STRING:
		return strncmp((const char *)pa, (const char *)pb, r->size) != 0;
	case ST_LIST:
		memcpy(&na, pa, sizeof(na));
		memcpy(&nb, pb, sizeof(nb));
		return (na > 0) != (nb > 0);
	case ST_BOOL:
		return *(const bool *)pa != *(const bool *)pb;
	default:
		return memcmp(pa, pb, r->size) != 0;
	}
}

enum restart conf_rows_restart(const struct srow *rows, const void *a, const void *b)
{
	enum restart first = RS_NONE;

	for (const struct srow *r = rows; r->name; r++) {
		enum restart why = RS_NONE;

		if (r->type == ST_GROUP)
			why = conf_rows_restart(r->rows, a, b);
		else if (r->restart != RS_NONE && row_differs(r, a, b))
			why = r->restart;
		if (why != RS_NONE && (first == RS_NONE || why < first))
			first = why;
	}
	return first;
}
