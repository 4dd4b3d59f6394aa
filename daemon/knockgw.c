/*
 * knockgw - silent port knocking in user space.
 *
 *   knockgw [-c FILE] [-f] [-n] [-v]   run, or with -n check the config
 *   knockgw genkey                     print a new base64 32-byte key
 *   knockgw print-rules [-c FILE]      print the nft ruleset it would install
 *   knockgw status [-c FILE] [--json]  counters and flows of the running daemon
 *   knockgw flush [-c FILE]            remove the table a stopped daemon left
 *
 * This file is the command line: the subcommands, and the `status` client.
 * Running the daemon is daemon.h; the queue threads are workers.h; the
 * counters and their views are stats.h.  Without -f the daemon logs to
 * syslog; it does not fork (systemd Type=notify).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <sodium.h>

#include "conf.h"
#include "ctlclient.h"
#include "daemon.h"
#include "keys.h"
#include "log.h"
#include "nftrules.h"
#include "stats.h"

#define DEFAULT_CONF "/etc/knockgw/knockgw.conf"

static void usage(FILE *f)
{
	fprintf(f, "usage: knockgw [-c FILE] [-f] [-n] [-v]\n"
		   "       knockgw genkey\n"
		   "       knockgw print-rules [-c FILE]\n"
		   "       knockgw status [-c FILE] [--json]\n"
		   "       knockgw flush [-c FILE]\n");
}

/* Secrets must not leak through a core dump or a ptrace by another user. */
static void harden_process(void)
{
	struct rlimit rl = { 0, 0 };

	setrlimit(RLIMIT_CORE, &rl);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

static int cmd_genkey(void)
{
	char b64[64];

	if (key_generate_base64(b64, sizeof(b64)) < 0) {
		fprintf(stderr, "knockgw: cannot encode the key\n");
		return 1;
	}
	fputs(b64, stdout);
	sodium_memzero(b64, sizeof(b64));
	return fflush(stdout) == 0 ? 0 : 1;
}

/* ------------------------------------------------------------- status */

/*
 * Sends STATUS to the daemon at sock and hands each line of the reply to fn
 * (ctlclient.h).  0; 3 when no daemon listens there; 1 on any other failure
 * (said on stderr).
 */
static int status_request(const char *sock, ctlclient_line_fn *fn, void *arg)
{
	enum ctl_status st;
	int r = ctlclient_status(sock, CTLCLIENT_WAIT_MS, fn, arg, &st);

	if (r < 0 && ctlclient_no_daemon(r)) {
		fprintf(stderr, "knockgw: knockgw is not running (no control socket at %s)\n", sock);
		return 3;
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

static int print_line(const char *line, size_t len, void *arg)
{
	return fwrite(line, 1, len, arg) == len ? 0 : -EIO;
}

/* --json: the reply read back into the stats (stats.h), lines it does not know skipped. */
static int read_line(const char *line, size_t len, void *arg)
{
	char buf[CTLCLIENT_LINE_MAX + 1];
	int r;

	if (len > CTLCLIENT_LINE_MAX)
		return -EPROTO;
	memcpy(buf, line, len);
	buf[len] = '\0';
	r = stats_parse_line(arg, buf);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		fprintf(stderr, "knockgw: cannot read the daemon's status line: %s", buf);
	return r;
}

/* `knockgw status [--json]`: asks the running daemon over its control socket. */
static int cmd_status(const char *path, bool json)
{
	struct conf *c = daemon_load_conf(path, false);
	char sock[sizeof(c->control_socket)];
	struct stats *s;
	int r;

	if (!c)
		return 1;
	snprintf(sock, sizeof(sock), "%s", c->control_socket);
	daemon_free_conf(c);
	if (!json)
		return status_request(sock, print_line, stdout);
	s = calloc(1, sizeof(*s));
	if (!s) {
		fprintf(stderr, "knockgw: out of memory\n");
		return 1;
	}
	r = status_request(sock, read_line, s);
	if (r == 0)
		stats_json(s, stdout);
	free(s);
	return r;
}

/* ------------------------------------------------------------- flush */

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

/*
 * `knockgw flush`: removes the table a stopped daemon left to hide its
 * ports (on_stop "hide"), by hand.  Not under a running daemon, which
 * would put it back at its next check: that is `systemctl stop`'s job.
 */
static int cmd_flush(const char *path)
{
	struct conf *c = daemon_load_conf(path, false);
	int r;

	if (!c)
		return 1;
	if (daemon_listening(c->control_socket)) {
		fprintf(stderr, "knockgw: a daemon answers on %s and would put table inet %s back; "
				"stop it first (systemctl stop knockgw)\n",
			c->control_socket, c->table);
		daemon_free_conf(c);
		return 1;
	}
	r = nftrules_present(c->table);
	if (r == 0) {
		printf("no table inet %s: nothing to remove\n", c->table);
	} else if (r > 0 && (r = nftrules_remove(c->table)) == 0) {
		printf("table inet %s removed: protected ports are now as their services make "
		       "them (open where one listens)\n", c->table);
	} else {
		fprintf(stderr, "knockgw: cannot remove table inet %s: %s\n", c->table,
			strerror(-r));
		daemon_free_conf(c);
		return 1;
	}
	daemon_free_conf(c);
	return 0;
}

int main(int argc, char **argv)
{
	const char *conf_path = DEFAULT_CONF;
	bool foreground = false, check_only = false, print_rules = false, status = false;
	bool flush = false;
	bool json = false;
	int verbose = 0;
	int ch;

	harden_process();
	if (sodium_init() < 0) {
		fprintf(stderr, "knockgw: libsodium failed to initialise\n");
		return 1;
	}
	if (argc >= 2 && strcmp(argv[1], "genkey") == 0) {
		if (argc != 2) {
			usage(stderr);
			return 2;
		}
		return cmd_genkey();
	}
	if (argc >= 2 && strcmp(argv[1], "print-rules") == 0) {
		print_rules = true;
		argc--;
		argv++;
	} else if (argc >= 2 && strcmp(argv[1], "flush") == 0) {
		flush = true;
		argc--;
		argv++;
	} else if (argc >= 2 && strcmp(argv[1], "status") == 0) {
		status = true;
		argc--;
		argv++;
		/* --json, wherever it stands: getopt knows short options only. */
		for (int i = 1; i < argc; i++) {
			if (strcmp(argv[i], "--json") == 0) {
				json = true;
				memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(*argv));
				argc--;
				break;
			}
		}
	}

	while ((ch = getopt(argc, argv, "c:fnvh")) != -1) {
		switch (ch) {
		case 'c':
			conf_path = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'n':
			check_only = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (status)
		return cmd_status(conf_path, json);
	if (flush)
		return cmd_flush(conf_path);

	struct conf *conf = daemon_load_conf(conf_path, false);
	if (!conf)
		return 1;
	if (check_only) {
		printf("configuration OK\n");
		/*
		 * -n -v also says whether the daemon would do anything: with
		 * no protect and no knock entry it would not.  Scripts read
		 * this line (the Debian postinst starts knockgw only when one
		 * count is not 0); keep its format.
		 */
		if (verbose)
			printf("entries: protect %zu, knock %zu\n", conf->nprotect, conf->nknock);
		daemon_free_conf(conf);
		return 0;
	}
	if (print_rules) {
		enum nft_queue_kind kind = NFT_QUEUE_COMPAT;

		/* Without privileges the probe fails: show the portable form. */
		if (nftrules_probe(&kind) < 0)
			kind = NFT_QUEUE_COMPAT;
		nftrules_print(conf, kind, stdout);
		daemon_free_conf(conf);
		return 0;
	}

	log_init(foreground, verbose ? LOG_DEBUG : conf->log_level, "knockgw");
	struct knockgw *kg = calloc(1, sizeof(*kg));
	if (!kg) {
		daemon_free_conf(conf);
		return 1;
	}
	kg->conf = conf;
	kg->conf_path = conf_path;
	kg->verbose = verbose > 0;
	int ret = daemon_run(kg);
	daemon_free_conf(kg->conf);
	free(kg);
	return ret;
}
