/*
 * conf_schema.h - the schema of knockgw.conf as tables of rows
 * (conf_schema.c), and the rules of single settings that conf_peek() holds
 * a file to as well.  Internal to the conf*.c modules (and their tests).
 */
#ifndef KNOCKGW_CONF_SCHEMA_H
#define KNOCKGW_CONF_SCHEMA_H

#include <stdbool.h>

#include "config/read/conf_walk.h"

/* Loads the root group through the schema (conf_schema.c), keys first, then the entries. */
void conf_schema_load(struct loader *ld, const config_setting_t *root);

/* rules.table's rule: 1..32 characters of A-Z a-z 0-9 _ (conf_schema.c). */
bool conf_table_ok(const char *s);

/* control_socket's rule: NULL when s is an absolute path that fits sun_path, else what is wrong. */
const char *conf_socket_why(const char *s);

/* The name of a restart reason, as messages say it ("the queue settings changed"). */
const char *conf_restart_name(enum restart r);

/*
 * The schema's tables, for the tests that hold behaviour against the rows:
 * the root (its groups and lists included) and one protect or knock entry.
 */
extern const struct srow conf_root_rows[], conf_protect_rows[], conf_knock_rows[];

#endif
