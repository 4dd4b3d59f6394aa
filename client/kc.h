/*
 * kc.h - what the parts of knock-connect share: its exit codes and the
 * limit it shares with the daemon.  Its default config file and control
 * socket are the daemon's (conf_paths.h).
 *
 * One exit-code space for the relay and for `knock-connect isn` (which
 * uses KC_OK, KC_ERROR and KC_USAGE only); man/knock-connect.1 (EXIT
 * STATUS) and the usage text list them, and scripts depend on them: the
 * values never change.
 */
#ifndef KNOCKGW_KC_H
#define KNOCKGW_KC_H

#include <stdio.h>

#include "config/conf_paths.h"
#include "common/isn.h"

enum kc_exit {
	KC_OK = 0,		/* the relay ended cleanly; isn: the ISN was printed */
	KC_ERROR = 1,		/* anything else that went wrong */
	KC_USAGE = 2,		/* a bad command line */
	KC_NO_DAEMON = 3,	/* nothing serves the control socket */
	KC_NO_KNOCK = 4,	/* no knock for any address of HOST PORT */
	KC_REFUSED = 5,		/* the connection was refused */
	KC_TIMEOUT = 6,		/* the connection timed out */
};

/*
 * The most bytes an integrity knock can cover: the daemon's limit, so that
 * `isn` computes nothing the daemon would refuse to check.
 */
enum { KC_INTEG_MAX = INTEG_MAX_LEN };

/* Both synopses, the options and the exit codes (kcargs.c). */
void kc_usage(FILE *f);

#endif
