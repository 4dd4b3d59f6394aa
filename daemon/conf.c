/*
 * conf.c - knockgw.conf: the entry points of conf.h.
 *
 * conf_load() runs the stages in order: the text (conf_text.c), libconfig's
 * parse, the schema walk (conf_schema.c, conf_keys.c), the cross-field
 * checks (conf_validate.c).  Every stage reports every problem it finds as
 * "FILE:LINE: message", and any one of them rejects the file, because a
 * daemon that guesses what a broken config meant may open a port the admin
 * meant to keep closed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <libconfig.h>

#include "conf_diag.h"
#include "conf_int.h"
#include "keys.h"

void conf_verror(struct conf_errors *errs, const char *file, int line, const char *fmt,
		 va_list ap)
{
	char *out;
	int off;

	if (errs->n >= CONF_MAX_ERRORS) {
		errs->overflow = true;
		return;
	}
	out = errs->msg[errs->n++];
	if (!file)
		file = "(config)";
	if (line > 0)
		off = snprintf(out, CONF_ERR_LEN, "%s:%d: ", file, line);
	else
		off = snprintf(out, CONF_ERR_LEN, "%s: ", file);
	if (off >= 0 && off < CONF_ERR_LEN)
		vsnprintf(out + off, CONF_ERR_LEN - (size_t)off, fmt, ap);
	/* One error, one line: quoted user strings may hold anything. */
	for (char *p = out; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
}

void conf_error(struct conf_errors *errs, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_verror(errs, file, line, fmt, ap);
	va_end(ap);
}

const char *kg_mode_name(enum kg_mode m)
{
	switch (m) {
	case KG_MODE_KNOCK:
		return "knock";
	case KG_MODE_NATIVE:
		return "native";
	}
	return "?";
}

/* ------------------------------------------------------------------ */
/* Defaults */

void conf_defaults(struct conf *c)
{
	memset(c, 0, sizeof(*c));
	c->queue_num = 0;
	c->queue_count = 1;
	c->fail_open = false;
	c->queue_maxlen = 4096;
	c->rules_manage = true;
	c->mark_mask = KGW_MARK_MASK_DEFAULT;
	c->ct_mark_bit = KGW_CTMARK_DEFAULT;
	c->ct_label = KGW_CTLABEL_DEFAULT;
	kgw_marks_make(c->mark_mask, c->ct_mark_bit, &c->marks);
	snprintf(c->table, sizeof(c->table), "knockgw");
	c->log_level = LOG_INFO;
	c->translate = TRANSLATE_KERNEL;
	c->closed_ports = CLOSED_DAEMON;
	c->on_stop = ON_STOP_HIDE;
	c->refuse_port = 1;
	snprintf(c->control_socket, sizeof(c->control_socket), "/run/knockgw/control.sock");
	c->max_flows = 65536;
	c->max_replay = 65536;
	c->hold_bytes = 4194304;
	c->hold_flow_bytes = 65536;
	c->integrity_timeout = 10;
	c->guess_threshold = 100;
	c->guess_window = 60;
	c->guess_penalty = 0;
}

uint16_t conf_queue_first(const struct conf *c, enum conf_qset set)
{
	unsigned n = c->queue_count, base = c->queue_num;

	if (set == QSET_SYN)
		return c->queue_num;
	/* count <= 16 and num + count - 1 <= 65535: one of the two fits. */
	if (base + 3 * n - 1 > 65535)
		base -= 3 * n;
	return (uint16_t)(base + (set == QSET_PROBE ? n : 2 * n));
}

void conf_free(struct conf *c)
{
	keyring_free(&c->keyring);
	/* The lengths say nothing secret, but a freed config must not look loaded. */
	c->nkeys = 0;
	c->nprotect = 0;
	c->nknock = 0;
}

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
	kgw_marks_make(c->mark_mask, c->ct_mark_bit, &c->marks);	/* validated */
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

	m = text ? srcmap_read_text(path, text, errs, &r) : srcmap_read_opts(path, ov, false, errs, &r);
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
