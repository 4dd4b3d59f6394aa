/*
 * flush.c - `knockgw flush [-c FILE]`: removes the table a stopped
 * daemon left to hide its ports (on_stop "hide"), by hand.
 *
 * It reads only what it needs from FILE (conf_peek(): rules.table and
 * control_socket), so a file that does not load - a broken key file, a
 * syntax error, the very moment an administrator most needs to open the
 * ports again - does not stop it: where FILE cannot say, it takes the
 * default and says so on stderr, with the reason ("table inet knockgw
 * (default: FILE:LINE: syntax error)").  Not under a running daemon (one
 * answers on the control socket), which would put the table back: that is
 * `systemctl stop`'s job.
 *
 * Exit codes: 0 removed, or there was nothing to remove; 1 a daemon
 * answers, or the table could not be removed; 2 usage.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "config/conf.h"
#include "kernel/nft/nftrules.h"

/* Does a daemon listen on the control socket at path? */
static bool daemon_listening(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool up;

	if (fd < 0)
		return false;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	up = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return up;
}

static int run(const char *conf_path)
{
	struct conf_peek p;
	int r;

	conf_peek(conf_path, &p);
	if (p.failed) {
		fprintf(stderr, "knockgw flush: %s\n", p.table_from);
		return CLI_ERROR;
	}
	if (p.assumed)
		fprintf(stderr, "knockgw flush: going on with what could be read of %s "
				"(`knockgw -n -c %s` shows every error):\n"
				"  table inet %s (%s)\n  control socket %s (%s)\n",
			conf_path, conf_path, p.table, p.table_from, p.control_socket,
			p.socket_from);
	if (daemon_listening(p.control_socket)) {
		fprintf(stderr, "knockgw: a daemon answers on %s and would put table inet %s back; "
				"stop it first (systemctl stop knockgw)\n",
			p.control_socket, p.table);
		return CLI_ERROR;
	}
	r = nftrules_present(p.table);
	if (r == 0) {
		printf("no table inet %s: nothing to remove\n", p.table);
	} else if (r > 0 && (r = nftrules_remove(p.table)) == 0) {
		printf("table inet %s removed: protected ports are now as their services make "
		       "them (open where one listens)\n", p.table);
	} else {
		fprintf(stderr, "knockgw: cannot remove table inet %s: %s\n", p.table,
			strerror(-r));
		return CLI_ERROR;
	}
	return CLI_OK;
}

int flush_main(int argc, char **argv)
{
	const char *conf_path = CONF_DEFAULT_PATH;
	int r = cli_plain_options("flush", FLUSH_SYNOPSIS, FLUSH_SUMMARY, argc, argv, &conf_path, NULL);

	return r >= 0 ? r : run(conf_path);
}
