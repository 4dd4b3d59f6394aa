/*
 * run.c - `knockgw [-c FILE] [-f] [-n] [-v]`: run the daemon on FILE, or
 * with -n only load FILE as the daemon would and say whether it is good.
 *
 * Without -f the daemon logs to syslog (the journal where there is one:
 * log.h); it never forks (systemd Type=notify).  What running means is
 * daemon.h's.  `-n -v` also prints how many entries there are and
 * whether refusals look like unused ports under this host's firewall
 * (check_firewall.h): the Debian postinst reads the entries line.
 * -h/--help returns COMMANDS_HELP: the usage of every command is the
 * table's (knockgw.c).
 */
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/check_firewall.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "common/log.h"
#include "config/conf.h"
#include "config/hidestate.h"
#include "daemon/daemon.h"

static int usage_error(void)
{
	fprintf(stderr, "Try 'knockgw --help'.\n");
	return CLI_USAGE;
}

/* -n: the configuration loaded; say so, and with -v what it holds. */
static int check_only(const struct conf *conf, int verbose)
{
	printf("configuration OK\n");
	/*
	 * -n -v also says whether the daemon would do anything: with no
	 * protect and no knock entry it would not.  Scripts read this line
	 * (the Debian postinst starts knockgw only when one count is not 0);
	 * keep its format.
	 */
	if (verbose) {
		printf("entries: protect %zu, knock %zu\n", conf->nprotect, conf->nknock);
		check_firewall_summary(conf, stdout);
	}
	return 0;
}

int run_main(int argc, char **argv)
{
	enum { O_VERSION = 256 };
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf_path = CONF_DEFAULT_PATH;
	bool foreground = false, check = false;
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
			check = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			return COMMANDS_HELP;
		case O_VERSION:
			cli_version(stdout, "knockgw");
			return 0;
		default:
			cli_bad_option("knockgw", ch, argv);
			return usage_error();
		}
	}
	if (optind != argc) {
		fprintf(stderr, "knockgw: unknown command \"%s\"\n", argv[optind]);
		return usage_error();
	}

	struct conf *conf = conf_load_file(conf_path, false);
	if (!conf)
		return 1;
	if (check) {
		int r = check_only(conf, verbose);

		conf_destroy(conf);
		return r;
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
