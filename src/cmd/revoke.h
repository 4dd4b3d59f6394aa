/*
 * revoke.h - `knockgw revoke`: a key taken out of the configuration.
 *
 *   knockgw revoke NAME [-c FILE] [--apply] [--remove-key]
 *
 * takes key NAME out of FILE's keys, out of the keys of every protect
 * entry, and takes out every knock entry that uses it (confedit.h says
 * how, and what it refuses: a protect entry NAME alone opens).  Without
 * --apply it prints the change as a diff and writes nothing; with it, the
 * change is checked with the daemon's loader, written (the old file stays
 * as FILE.bak) and the daemon reloaded (conf_apply.h).  The key file
 * stays unless --remove-key asks for it to go (once the configuration no
 * longer names it, and only when no other key entry names the same file);
 * a text secret goes with its entry.  It says which.
 *
 * Here: the command line, pure (apart from getopt's state and the usage
 * messages on stderr); revokecmd.c runs it.
 */
#ifndef KNOCKGW_REVOKE_H
#define KNOCKGW_REVOKE_H

#include <stdbool.h>
#include <stdio.h>

#define REVOKE_SYNOPSIS "revoke NAME [-c FILE] [--apply] [--remove-key]"

struct revoke_args {
	const char *name;
	const char *conf;	/* NULL: the default */
	bool apply;
	bool remove_key;
};

enum { REVOKE_RUN = 0, REVOKE_HELP = -1 };

/*
 * The command line after "revoke" (argv[0] is "revoke"): REVOKE_RUN with
 * *ret filled, REVOKE_HELP (usage on stdout) or CLI_USAGE (why on stderr).
 */
int revoke_parse_args(int argc, char **argv, struct revoke_args *ret);

void revoke_usage(FILE *f);

#endif
