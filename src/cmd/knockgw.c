/*
 * knockgw - silent port knocking in user space.
 *
 *   knockgw [-c FILE] [-f] [-n] [-v]   run, or with -n check the config
 *   knockgw genkey                     print a new base64 32-byte key
 *   knockgw print-rules [-c FILE]      print the nft ruleset it would install
 *   knockgw status [-c FILE] [--json]  counters and flows of the running daemon
 *   knockgw flush [-c FILE]            remove the table a stopped daemon left
 *   knockgw hide [-s STATE]            the saved hiding table, when none is in place
 *   knockgw invite NAME --dst HOST ... a new key and the configuration for it
 *   knockgw revoke NAME [--apply]      a key taken out of the configuration
 *   knockgw metrics [-c FILE] [-o FILE] the counters for Prometheus (metricscmd.h)
 *   knockgw check-firewall [-c FILE]   do refusals look like unused ports here (fwcheck.h)
 *   knockgw --help | --version
 *
 * This file is the command line: the subcommands, and the `status` client.
 * Every command takes -h/--help (stdout, exit 0); a usage error says why on
 * stderr and exits 2 (cli.h).  Running the daemon is daemon.h; the queue
 * threads are workers.h; the counters and their views are stats.h; invite
 * is invite.h and keywrite.h, revoke is revoke.h, their commands invitecmd.h;
 * hide is hidecmd.h.  Without -f the daemon logs to syslog (the journal
 * where there is one: log.h); it does not fork (systemd Type=notify).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <sodium.h>

#include "cmd/cli.h"
#include "cmd/ctlask.h"
#include "cmd/flushcmd.h"
#include "cmd/fwcheck.h"
#include "cmd/hidecmd.h"
#include "cmd/invite.h"
#include "cmd/invitecmd.h"
#include "cmd/metricscmd.h"
#include "cmd/revoke.h"
#include "common/log.h"
#include "config/conf.h"
#include "config/hidestate.h"
#include "config/keys.h"
#include "ctl/ctlclient.h"
#include "daemon/daemon.h"
#include "daemon/stats.h"
#include "kernel/nft/nftrules.h"

enum { CMD_DAEMON, CMD_GENKEY, CMD_PRINT_RULES, CMD_STATUS, CMD_FLUSH, CMD_HIDE, CMD_INVITE, CMD_REVOKE,
       CMD_METRICS, CMD_CHECK_FIREWALL, CMD_COUNT };

/* One line per command in --help; each command's own --help repeats its line. */
struct command {
	const char *name;	/* argv[1]; NULL for the daemon itself */
	const char *synopsis;	/* after "knockgw " */
	const char *summary;
	int (*run)(int argc, char **argv);	/* argv[0] is the name */
};

static const struct command commands[CMD_COUNT];
static void usage(FILE *f);

static int usage_error(const char *prog)
{
	fprintf(stderr, "Try '%s --help'.\n", prog);
	return CLI_USAGE;
}

/*
 * The options of genkey, print-rules and status: -h/--help, -c FILE
 * where conf is not NULL, --json where json is not NULL; no operands.  -1
 * to run, 0 after --help (the command's synopsis on stdout), or CLI_USAGE.
 */
static int conf_options(const struct command *cmd, int argc, char **argv, const char **conf,
			bool *json)
{
	enum { O_JSON = 256 };
	static const struct option plain[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option with_json[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, O_JSON },
		{ NULL, 0, NULL, 0 },
	};
	char prog[64];
	int ch;

	snprintf(prog, sizeof(prog), "knockgw %s", cmd->name);
	optind = 0;	/* 0: a full reset of getopt */
	opterr = 0;	/* cli_bad_option() says it, with the command's name */
	while ((ch = getopt_long(argc, argv, conf ? ":c:h" : ":h", json ? with_json : plain,
				 NULL)) != -1) {
		switch (ch) {
		case 'c':	/* only in the optstring when conf is given */
			if (conf)
				*conf = optarg;
			break;
		case O_JSON:	/* only in the table when json is given */
			if (json)
				*json = true;
			break;
		case 'h':
			printf("usage: knockgw %s\n%s\n", cmd->synopsis, cmd->summary);
			return 0;
		default:
			cli_bad_option(prog, ch, argv);
			return usage_error(prog);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument \"%s\"\n", prog, argv[optind]);
		return usage_error(prog);
	}
	return -1;
}

/* Secrets must not leak through a core dump or a ptrace by another user. */
static void harden_process(void)
{
	struct rlimit rl = { 0, 0 };

	setrlimit(RLIMIT_CORE, &rl);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

static int cmd_genkey(int argc, char **argv)
{
	char b64[64];
	int r = conf_options(&commands[CMD_GENKEY], argc, argv, NULL, NULL);

	if (r >= 0)
		return r;
	if (key_generate_base64(b64, sizeof(b64)) < 0) {
		fprintf(stderr, "knockgw: cannot encode the key\n");
		return 1;
	}
	fputs(b64, stdout);
	sodium_memzero(b64, sizeof(b64));
	return fflush(stdout) == 0 ? 0 : 1;
}

/* `knockgw print-rules`: the ruleset for the configuration, in nft syntax. */
static int cmd_print_rules(int argc, char **argv)
{
	enum nft_queue_kind kind = NFT_QUEUE_COMPAT;
	const char *path = CONF_DEFAULT_PATH;
	struct conf *c;
	int r = conf_options(&commands[CMD_PRINT_RULES], argc, argv, &path, NULL);

	if (r >= 0)
		return r;
	c = conf_load_file(path, false);
	if (!c)
		return 1;
	/* Without privileges the probe fails: show the portable form. */
	if (nftrules_probe(&kind) < 0)
		kind = NFT_QUEUE_COMPAT;
	nftrules_print(c, kind, stdout);
	conf_destroy(c);
	return 0;
}

/* ------------------------------------------------------------- status */

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

/* `knockgw status [--json]`: asks the running daemon over its control socket. */
static int cmd_status(int argc, char **argv)
{
	const char *path = CONF_DEFAULT_PATH;
	bool json = false;
	struct conf *c;
	char sock[sizeof(c->control_socket)];
	struct stats *s;
	int r = conf_options(&commands[CMD_STATUS], argc, argv, &path, &json);

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

/* ------------------------------------------------------------- flush */

/* `knockgw flush`: its own module (flushcmd.h). */
static int cmd_flush(int argc, char **argv)
{
	return flush_main(argc, argv, CONF_DEFAULT_PATH);
}

/* `knockgw check-firewall`: its own module (fwcheck.h). */
static int cmd_check_firewall(int argc, char **argv)
{
	return fwcheck_main(argc, argv, CONF_DEFAULT_PATH);
}

/* ------------------------------------------------------------- invite, revoke */

/* `knockgw invite` and `knockgw revoke`: their own modules (invitecmd.h). */
static int cmd_invite(int argc, char **argv)
{
	return invite_main(argc, argv, CONF_DEFAULT_PATH);
}

static int cmd_revoke(int argc, char **argv)
{
	return revoke_main(argc, argv, CONF_DEFAULT_PATH);
}

/* `knockgw metrics`: its own module (metricscmd.h). */
static int cmd_metrics(int argc, char **argv)
{
	return metrics_main(argc, argv, CONF_DEFAULT_PATH);
}

/* ------------------------------------------------------------- the daemon */

/* `knockgw [-c FILE] [-f] [-n] [-v]`: run, or check the configuration. */
static int cmd_daemon(int argc, char **argv)
{
	enum { O_VERSION = 256 };
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf_path = CONF_DEFAULT_PATH;
	bool foreground = false, check_only = false;
	int verbose = 0;
	int ch;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":c:fnvh", opts, NULL)) != -1) {
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
		case O_VERSION:
			cli_version(stdout, "knockgw");
			return 0;
		default:
			cli_bad_option("knockgw", ch, argv);
			return usage_error("knockgw");
		}
	}
	if (optind != argc) {
		fprintf(stderr, "knockgw: unknown command \"%s\"\n", argv[optind]);
		return usage_error("knockgw");
	}

	struct conf *conf = conf_load_file(conf_path, false);
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
		if (verbose) {
			printf("entries: protect %zu, knock %zu\n", conf->nprotect, conf->nknock);
			/* Whether refusals will look like unused ports here (fwcheck.h). */
			fwcheck_summary(conf, stdout);
		}
		conf_destroy(conf);
		return 0;
	}

	log_init(foreground, verbose ? LOG_DEBUG : conf->log_level, "knockgw");
	struct knockgw *kg = calloc(1, sizeof(*kg));
	if (!kg) {
		conf_destroy(conf);
		return 1;
	}
	kg->conf = conf;
	kg->conf_path = conf_path;
	/* Saved only under the unit, which gives the directory (StateDirectory=). */
	char state_dir[PATH_MAX];
	kg->state_dir = hidestate_dir(state_dir, sizeof(state_dir), NULL);
	kg->verbose = verbose > 0;
	int ret = daemon_run(kg);
	conf_destroy(kg->conf);
	free(kg);
	return ret;
}

/* ------------------------------------------------------------- dispatch */

static const struct command commands[CMD_COUNT] = {
	[CMD_DAEMON] = { NULL, "[-c FILE] [-f] [-n] [-v]",
			 "Run the daemon (-f: in the foreground, logging to stderr; -v: at debug),\n"
			 "or with -n check the configuration and exit.", cmd_daemon },
	[CMD_GENKEY] = { "genkey", "genkey", "Print a new native key: 32 random bytes, base64.",
			 cmd_genkey },
	[CMD_PRINT_RULES] = { "print-rules", "print-rules [-c FILE]",
			      "Print the nftables ruleset the daemon would install.",
			      cmd_print_rules },
	[CMD_STATUS] = { "status", "status [-c FILE] [--json]",
			 "Print the running daemon's state and counters.", cmd_status },
	[CMD_FLUSH] = { "flush", "flush [-c FILE]",
			"Remove the table a stopped daemon left to hide its ports.", cmd_flush },
	[CMD_HIDE] = { "hide", "hide [-s STATE]",
		       "Install the hiding table the daemon's last good start saved, unless a\n"
		       "table is in place (knockgw.service runs it before every start).",
		       hide_main },
	[CMD_INVITE] = { "invite", INVITE_SYNOPSIS,
			 "Write a new key and print the configuration a client and this server need\n"
			 "(--apply: change this server's and reload it).", cmd_invite },
	[CMD_REVOKE] = { "revoke", REVOKE_SYNOPSIS,
			 "Take a key out of the configuration (--apply: write it and reload).",
			 cmd_revoke },
	[CMD_METRICS] = { "metrics", "metrics [-c FILE] [-o FILE]",
			  "Print the running daemon's counters for Prometheus (-o: write FILE "
			  "atomically).", cmd_metrics },
	[CMD_CHECK_FIREWALL] = { "check-firewall", "check-firewall [-c FILE]",
				 "Tell whether refused SYNs look like this host's unused ports "
				 "under its firewall.", cmd_check_firewall },
};

static void usage(FILE *f)
{
	size_t i;

	for (i = 0; i < CMD_COUNT; i++)
		fprintf(f, "%s knockgw %s\n", i ? "      " : "usage:", commands[i].synopsis);
	fprintf(f, "       knockgw --help | --version\n\n");
	for (i = 0; i < CMD_COUNT; i++) {
		const char *s = commands[i].summary;

		fprintf(f, "%-15s ", commands[i].name ? commands[i].name : "(daemon)");
		/* Indent a summary's later lines under its first. */
		for (; *s; s++) {
			fputc(*s, f);
			if (*s == '\n')
				fprintf(f, "%-15s ", "");
		}
		fputc('\n', f);
	}
	fprintf(f, "\nFILE is " CONF_DEFAULT_PATH " unless -c says otherwise.  Every command takes\n"
		   "-h or --help.  Exit status: 0 ok, 1 error, 2 usage.\n");
}

int main(int argc, char **argv)
{
	harden_process();
	if (sodium_init() < 0) {
		fprintf(stderr, "knockgw: libsodium failed to initialise\n");
		return 1;
	}
	for (size_t i = 0; argc >= 2 && i < CMD_COUNT; i++)
		if (commands[i].name && commands[i].run && strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	return cmd_daemon(argc, argv);
}
