/*
 * ctlask.c - the command line's side of a STATUS or METRICS exchange
 * (see ctlask.h for the contract).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/ctlask.h"
#include "ctl/ctlclient.h"
#include "daemon/stats.h"

int ctlask_stats_line(const char *line, size_t len, void *stats)
{
	char buf[CTLCLIENT_LINE_MAX + 1];
	int r;

	if (len > CTLCLIENT_LINE_MAX)
		return -EPROTO;
	memcpy(buf, line, len);
	buf[len] = '\0';
	r = stats_parse_line(stats, buf);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		fprintf(stderr, "knockgw: cannot read the daemon's status line: %s", buf);
	return r;
}

int ctlask_report(const char *sock, int r, enum ctl_status st)
{
	if (r < 0 && ctlclient_no_daemon(r)) {
		fprintf(stderr, "knockgw: knockgw is not running (no control socket at %s)\n", sock);
		return CTLASK_NO_DAEMON;
	}
	if (r < 0) {
		fprintf(stderr, "knockgw: cannot talk to the daemon at %s: %s\n", sock, strerror(-r));
		return 1;
	}
	if (st != CTL_S_OK) {
		fprintf(stderr, "knockgw: the daemon refused: %s\n", ctlproto_status_word(st));
		return 1;
	}
	return 0;
}
