/*
 * kcargs.h - knock-connect's command line: numbers, and the relay's
 * options and operands.  Pure apart from getopt's state and the messages
 * on stderr that say what is wrong; nothing is looked up or opened.
 */
#ifndef KNOCKGW_KCARGS_H
#define KNOCKGW_KCARGS_H

#include <stdint.h>

#include "kc.h"

enum {
	KC_DEFAULT_WAIT = 10,		/* seconds for connect() */
	KC_MAX_WAIT = 86400,
};

/* Decimal or 0x-hex, the whole string, within [0, max]; 0 or -EINVAL. */
int kc_parse_number(const char *s, uint64_t max, uint64_t *ret);

/* What `knock-connect [-c FILE] [-s SOCKET] [-w SECONDS] HOST PORT` asks for. */
struct kc_connect_args {
	const char *conf_path;	/* -c, or NULL: the default, which may be absent */
	const char *sock_path;	/* -s, or NULL: from the configuration */
	const char *host, *port;
	uint64_t wait;		/* -w, 1..KC_MAX_WAIT seconds */
};

enum { KC_PARSE_RUN = 0, KC_PARSE_HELP = -1 };

/*
 * The relay's command line: KC_PARSE_RUN (*ret filled), KC_PARSE_HELP
 * (usage or, for --version, the version printed on stdout) or KC_USAGE
 * (said why on stderr).  Starts getopt over (optind = 1).
 */
int kc_parse_connect_args(int argc, char **argv, struct kc_connect_args *ret);

#endif
