/*
 * revoke.c - `knockgw revoke`'s command line (revoke.h).
 */
#include <getopt.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/invite.h"
#include "cmd/revoke.h"
#include "config/conf.h"

#define PROG "knockgw revoke"

void revoke_usage(FILE *f)
{
	fprintf(f,
		"usage: knockgw " REVOKE_SYNOPSIS "\n"
		"\n"
		"Takes key NAME out of FILE: out of keys, out of the keys of every protect entry,\n"
		"and takes out every knock entry that uses it.  Refuses when NAME is the only key\n"
		"of a protect entry (the entry needs one; without the entry its port is open).\n"
		"  NAME          the key's name\n"
		"  -c FILE       the configuration (default " CONF_DEFAULT_PATH ")\n"
		"  --apply       check the change as the daemon loads it, write it (the old file\n"
		"                stays as FILE.bak) and reload the daemon; without it, the change\n"
		"                is printed as a diff and nothing is written\n"
		"  --remove-key  remove the key file too, once FILE no longer names it (otherwise\n"
		"                it stays)\n");
}

static int usage_error(void)
{
	fprintf(stderr, "Try 'knockgw revoke --help'.\n");
	return CLI_USAGE;
}

int revoke_parse_args(int argc, char **argv, struct revoke_args *ret)
{
	enum { O_APPLY = 256, O_REMOVE };
	static const struct option opts[] = {
		{ "apply", no_argument, NULL, O_APPLY },
		{ "remove-key", no_argument, NULL, O_REMOVE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct revoke_args a = { 0 };
	int ch;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hc:", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			a.conf = optarg;
			break;
		case O_APPLY:
			a.apply = true;
			break;
		case O_REMOVE:
			a.remove_key = true;
			break;
		case 'h':
			revoke_usage(stdout);
			return REVOKE_HELP;
		default:
			cli_bad_option(PROG, ch, argv);
			return usage_error();
		}
	}
	a.name = invite_name_arg(PROG, argc, argv, optind);
	if (!a.name)
		return usage_error();
	*ret = a;
	return REVOKE_RUN;
}
