/*
 * conf_keys.h - the keys section of knockgw.conf (conf_keys.c): key
 * entries, key files and text secrets, into the struct and its keyring.
 * Internal to the conf*.c modules.
 */
#ifndef KNOCKGW_CONF_KEYS_H
#define KNOCKGW_CONF_KEYS_H

#include "config/read/conf_walk.h"

/* The keys section (conf_keys.c): every entry into c->keys and the keyring. */
void conf_load_keys(struct loader *ld, const config_setting_t *list);

/* The index of key name in c->keys, or -1. */
int conf_find_key(const struct conf *c, const char *name);

#endif
