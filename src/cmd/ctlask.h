/*
 * ctlask.h - the command line's side of a STATUS or METRICS exchange
 * (`knockgw status`, `knockgw metrics`): reading the reply's lines into
 * the counters, and saying on stderr what went wrong, as one exit status.
 *
 * ctlclient.h does the exchange and prints nothing; this is the wording
 * both commands share, so that they fail alike.
 */
#ifndef KNOCKGW_CTLASK_H
#define KNOCKGW_CTLASK_H

#include <stddef.h>

#include "ctl/ctlproto.h"

enum { CTLASK_NO_DAEMON = 3 };	/* exit status: no daemon listens on the socket */

/*
 * A ctlclient_line_fn: one line of the reply into the struct stats at
 * stats (stats_parse_line); lines it does not know are skipped, one it
 * cannot read is said on stderr.  0 or -errno.
 */
int ctlask_stats_line(const char *line, size_t len, void *stats);

/*
 * The exit status for an exchange with the daemon at sock that returned r
 * with status st (ctlclient_status, ctlclient_metrics): 0 when it
 * answered OK; otherwise said on stderr, and CTLASK_NO_DAEMON when nobody
 * listens there, 1 for anything else.
 */
int ctlask_report(const char *sock, int r, enum ctl_status st);

#endif
