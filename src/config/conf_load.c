/*
 * conf_load.c - the loader: conf_load() and its variants (conf.h).
 *
 * conf_load() runs the stages in order: the text (conf_text.c), libconfig's
 * parse, the schema walk (conf_schema.c, conf_keys.c), the cross-field
 * checks (conf_validate.c).  Every stage reports every problem it finds as
 * "FILE:LINE: message", and any one of them rejects the file, because a
 * daemon that guesses what a broken config meant may open a port the admin
 * meant to keep closed.  The stages return what they found; only this file
 * calls them, and none of them calls back here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "common/log.h"
#include "config/keys.h"
#include "config/read/conf_diag.h"
#include "config/read/conf_schema.h"
#include "config/read/conf_text.h"
#include "config/read/conf_validate.h"

/* The struct's lines, numbers in the joined text until now, become lines of their own files. */
static void remap_lines(struct conf *c, const struct srcmap *m)
{
	int f;

	for (size_t i = 0; i < CL_MAX; i++)
		c->lines[i] = srcmap_line(m, c->lines[i], &f);
	for (size_t i = 0; i < c->nkeys; i++)
		c->keys[i].line = srcmap_line(m, c->keys[i].line, &f);
	for (size_t i = 0; i < c->nprotect; i++) {
		struct conf_protect *p = &c->protect[i];

		p->line = srcmap_line(m, p->line, &f);
		for (size_t j = 0; j < EL_MAX; j++)
			p->lines[j] = srcmap_line(m, p->lines[j], &f);
		for (size_t j = 0; j < p->npublic; j++)
			p->pub[j].line = srcmap_line(m, p->pub[j].line, &f);
	}
	for (size_t i = 0; i < c->nknock; i++) {
		struct conf_knock *k = &c->knock[i];

		k->line = srcmap_line(m, k->line, &f);
		for (size_t j = 0; j < EL_MAX; j++)
			k->lines[j] = srcmap_line(m, k->lines[j], &f);
	}
}

/* libconfig's parse of the joined text, the schema, the cross-field checks. */
static int load_map(struct conf *c, struct conf_errors *errs, struct srcmap *m)
{
	struct loader ld = { c, errs, 0, m };
	config_t cfg;

	/*
	 * No include directory is set: the joined text has no @include left,
	 * and libconfig must not open a file of its own.
	 */
	config_init(&cfg);
	if (!config_read_string(&cfg, m->out)) {
		/* libconfig says little; the diagnosis says what is likely wrong, and where. */
		conf_diag_libconfig(m, config_error_line(&cfg), config_error_text(&cfg), errs);
		config_destroy(&cfg);
		return -EINVAL;
	}
	conf_schema_load(&ld, config_root_setting(&cfg));
	config_destroy(&cfg);

	ld.nerr += conf_validate_map(c, errs, m);
	if (ld.nerr)
		return -EINVAL;
	remap_lines(c, m);
	marks_make(c->mark_mask, c->ct_mark_bit, &c->marks);	/* validated */
	return 0;
}

/*
 * Every entry point: path names the text in messages; text NULL reads the
 * file, with the texts of ov (NULL: none) in place of some files'.
 */
static int load(const char *path, const char *text, const struct conf_overlay *ov,
		struct conf *c, struct conf_errors *errs)
{
	struct srcmap *m;
	int r;

	errs->n = 0;
	errs->overflow = false;
	conf_defaults(c);
	if (strlen(path) >= sizeof(c->path)) {
		conf_error(errs, "knockgw", 0, "configuration path is too long");
		return -ENAMETOOLONG;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);

	m = text ? conf_text_from(path, text, errs, &r) : conf_text_read_opts(path, ov, false, errs, &r);
	if (r == 0)
		r = load_map(c, errs, m);
	srcmap_free(m);
	if (r < 0) {
		conf_free(c);
		return r;
	}
	keyring_seal(&c->keyring);
	return 0;
}

int conf_load(const char *path, struct conf *c, struct conf_errors *errs)
{
	return load(path, NULL, NULL, c, errs);
}

int conf_load_overlay(const char *path, const struct conf_overlay *ov, struct conf *c,
		      struct conf_errors *errs)
{
	return load(path, NULL, ov, c, errs);
}

int conf_load_text(const char *path, const char *text, struct conf *c, struct conf_errors *errs)
{
	return load(path, text, NULL, c, errs);
}

struct conf *conf_load_file(const char *path, bool to_log)
{
	struct conf *c = calloc(1, sizeof(*c));
	struct conf_errors *errs = calloc(1, sizeof(*errs));

	if (!c || !errs) {
		fprintf(stderr, "knockgw: out of memory\n");
		free(c);
		free(errs);
		return NULL;
	}
	if (conf_load(path, c, errs) < 0) {
		for (size_t i = 0; i < errs->n; i++) {
			if (to_log)
				log_warnx("%s", errs->msg[i]);
			else
				fprintf(stderr, "%s\n", errs->msg[i]);
		}
		if (errs->overflow) {
			if (to_log)
				log_warnx("%s: too many errors, stopped", path);
			else
				fprintf(stderr, "%s: too many errors, stopped\n", path);
		}
		free(c);
		c = NULL;
	}
	free(errs);
	return c;
}

void conf_destroy(struct conf *c)
{
	if (c) {
		conf_free(c);	/* wipes the keyring */
		free(c);
	}
}
