/*
 * conf_keys.c - the keys section: key entries, key files and text secrets.
 *
 * A key's bytes go straight from the file (or libconfig's string) into its
 * locked keyring slot, and every temporary copy is wiped.  A key that failed
 * to load is marked broken, so that conf_validate() skips it rather than
 * report the same mistake again.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "common/isn.h"
#include "config/keys.h"
#include "config/read/conf_keys.h"
#include "config/read/conf_text.h"

int conf_find_key(const struct conf *c, const char *name)
{
	if (!*name)
		return -1;
	for (size_t i = 0; i < c->nkeys; i++) {
		if (strcmp(c->keys[i].name, name) == 0)
			return (int)i;
	}
	return -1;
}


/*
 * libconfig frees its strings without wiping them; a text secret should not
 * linger in the heap of a long-running daemon.
 */
static void wipe_secret(config_setting_t *key)
{
	config_setting_t *ss = config_setting_is_group(key) ?
				       config_setting_get_member(key, "secret") : NULL;

	if (ss && config_setting_type(ss) == CONFIG_TYPE_STRING && ss->value.sval)
		sodium_memzero(ss->value.sval, strlen(ss->value.sval));
}

/*
 * A text secret makes the file it is written in as sensitive as a key file,
 * so that file must pass the key file rule, checked on the fstat of the text
 * that was parsed.  Once per file: a second secret there says nothing new.
 */
static void check_secret_file(struct loader *ld, const config_setting_t *ss, const char *name)
{
	uid_t euid = geteuid();
	struct source *src;
	int f;

	srcmap_line(ld->map, conf_setting_line(ss), &f);
	src = &ld->map->src[f];
	if (src->secret_checked)
		return;
	src->secret_checked = true;
	if (!name)
		name = "?";
	switch (file_rule_check(&src->st, euid, FILE_SECRET_FORBIDDEN)) {
	case FILE_OK:
		break;
	case FILE_NOT_REGULAR:
		conf_lerr(ld, ss,
			  "key \"%s\": a secret must be in a regular file, and \"%s\" is not",
			  name, src->path);
		break;
	case FILE_OWNER:
		if (euid == 0)
			conf_lerr(ld, ss,
				  "key \"%s\": a file holding a secret must be owned by root, "
				  "and \"%s\" is owned by uid %u",
				  name, src->path, (unsigned)src->st.st_uid);
		else
			conf_lerr(ld, ss,
				  "key \"%s\": a file holding a secret must be owned by root or "
				  "uid %u, and \"%s\" is owned by uid %u",
				  name, (unsigned)euid, src->path, (unsigned)src->st.st_uid);
		break;
	case FILE_MODE:
		conf_lerr(ld, ss,
			  "key \"%s\": a file holding a secret may be readable by its owner only, "
			  "and \"%s\" has mode %04o; chmod 600 it, or move the secret to a key "
			  "file",
			  name, src->path, (unsigned)(src->st.st_mode & 07777));
		break;
	}
}

/*
 * One key: its bytes go straight into the locked keyring slot and the
 * temporary copy is wiped (libconfig's copy: wipe_secret()).
 */
static void load_key(struct loader *ld, config_setting_t *s, struct conf_key *k,
		     struct kg_key *slot)
{
	static const char *const names[] = { "name", "file", "secret", NULL };
	static const struct scope sc = { "keys", true };
	size_t before = ld->nerr;
	config_setting_t *ns = NULL, *fs, *ss;
	const char *name = NULL, *str;
	uint8_t raw[KG_KEY_MAX];
	char why[CONF_ERR_LEN];
	size_t len = 0;

	k->line = conf_setting_line(s);
	k->broken = true;
	if (!config_setting_is_group(s)) {
		conf_lerr(ld, s, "\"keys\" entries must be groups { name = ...; ... }");
		return;
	}
	conf_check_unknown(ld, s, names, "keys");

	switch (conf_get_string(ld, s, &sc, "name", &name, &ns)) {
	case GOT_NONE:
		conf_lerr(ld, s, "key entry is missing \"name\"");
		break;
	case GOT_OK:
		/* Kept when it fits even if refused, so entries naming it find it. */
		if (strlen(name) < sizeof(k->name)) {
			snprintf(k->name, sizeof(k->name), "%s", name);
			k->line = conf_setting_line(ns);
		}
		if (!conf_name_ok(name, sizeof(k->name) - 1, "_.-"))
			conf_lerr(ld, ns,
				  "key name \"%s\" must be 1..32 characters of A-Z a-z 0-9 _ . -",
				  name);
		break;
	case GOT_BAD:
		break;
	}

	fs = config_setting_get_member(s, "file");
	ss = config_setting_get_member(s, "secret");
	if (!fs == !ss) {
		if (name)
			conf_lerr(ld, s, "key \"%s\" needs exactly one of \"file\" or \"secret\"",
				  name);
		else
			conf_lerr(ld, s, "key entry needs exactly one of \"file\" or \"secret\"");
		return;
	}
	if (fs) {
		if (conf_get_string(ld, s, &sc, "file", &str, &fs) != GOT_OK)
			return;
		/* Resolved relative to the config's directory; needed only here. */
		char file[PATH_MAX];

		if (conf_resolve_path(file, conf_setting_file(ld, fs), str) < 0) {
			conf_lerr(ld, fs, "key file path \"%s\" is too long", str);
			return;
		}
		k->from_file = true;
		if (key_file_read(file, raw, &len, why, sizeof(why)) < 0) {
			conf_lerr(ld, fs, "%s", why);
			return;
		}
	} else {
		check_secret_file(ld, ss, name);
		if (conf_get_string(ld, s, &sc, "secret", &str, &ss) != GOT_OK)
			return;
		len = strlen(str);
		if (len < 1 || len > KG_KNOCK_SECRET_MAX) {
			conf_lerr(ld, ss, "secret of key \"%s\" is %zu bytes; it must be 1..%d",
				  name ? name : "?", len, KG_KNOCK_SECRET_MAX);
			return;
		}
		memcpy(raw, str, len);
	}
	if (ld->nerr == before) {
		isn_key_init(slot, raw, len);
		k->len = len;
		k->broken = false;
	}
	sodium_memzero(raw, sizeof(raw));
}

void conf_load_keys(struct loader *ld, const config_setting_t *list)
{
	struct conf *c = ld->c;
	int n = config_setting_length(list);

	if (n > CONF_MAX_KEYS)
		n = CONF_MAX_KEYS;
	if (keyring_alloc(&c->keyring, (size_t)n) < 0) {
		conf_lerr(ld, list, "cannot allocate locked memory for %d keys", n);
		return;
	}
	for (int i = 0; i < n; i++) {
		config_setting_t *s = config_setting_get_elem(list, (unsigned)i);

		load_key(ld, s, &c->keys[i], &c->keyring.keys[i]);
		wipe_secret(s);
	}
	c->nkeys = (size_t)n;
}
