/*
 * status.c - `knockgw status [-c FILE] [--json]`: the running daemon's
 * state and counters, asked over its control socket (FILE's
 * control_socket; ctlclient.h).  Plain: the daemon's reply as it is.
 * --json: the reply read back into the counters (stats.h) and printed as
 * one JSON object.  Exit status 3 when no daemon listens (ctlask.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/ctlask.h"
#include "config/conf.h"
#include "ctl/ctlclient.h"
#include "daemon/stats.h"

/*
 * Sends STATUS to the daemon at sock and hands each line of the reply to fn
 * (ctlclient.h).  0; 3 when no daemon listens there; 1 on any other failure
 * (said on stderr).
 */
static int status_request(const char *sock, ctlclient_line_fn *fn, void *arg)
{
	enum ctl_status st = CTL_S_OK;
	int r = ctlclient_status(sock, CTLCLIENT_WAIT_MS, fn, arg, &st);

	return ctlask_report(sock, r, st);
}

static int print_line(const char *line, size_t len, void *arg)
{
	return fwrite(line, 1, len, arg) == len ? 0 : -EIO;
}

int status_main(int argc, char **argv)
{
	const char *path = CONF_DEFAULT_PATH;
	bool json = false;
	struct conf *c;
	char sock[sizeof(c->control_socket)];
	struct stats *s;
	int r = cli_plain_options("status", STATUS_SYNOPSIS, STATUS_SUMMARY, argc, argv, &path,
				  &json);

	if (r >= 0)
		return r;
	c = conf_load_file(path, false);
	if (!c)
		return 1;
	snprintf(sock, sizeof(sock), "%s", c->control_socket);
	conf_destroy(c);
	if (!json)
		return status_request(sock, print_line, stdout);
	s = calloc(1, sizeof(*s));
	if (!s) {
		fprintf(stderr, "knockgw: out of memory\n");
		return 1;
	}
	r = status_request(sock, ctlask_stats_line, s);
	if (r == 0)
		stats_json(s, stdout);
	free(s);
	return r;
}
