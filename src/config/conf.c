/*
 * conf.c - the ground floor of the config module (conf.h): the error list
 * every stage writes to, and the small readings of a loaded struct conf.
 * It calls no other conf*.c file; they all stand on it.  The loader itself
 * is conf_load.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/conf.h"
#include "config/keys.h"

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

