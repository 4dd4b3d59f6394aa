/*
 * cli.h - what the command lines of knockgw and knock-connect share: the
 * version they print and the words for a bad option; and the plain
 * options of knockgw's simplest commands.
 *
 * The conventions (README, man pages): --help and --version print on
 * stdout and exit 0; a usage error says what is wrong on stderr and exits
 * CLI_USAGE.  Nothing here exits: the callers return their status.
 */
#ifndef KNOCKGW_CLI_H
#define KNOCKGW_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* The Makefile passes the top-level VERSION file's line; other builds (the
 * fuzzers, the analyzer) do not need it. */
#ifndef KNOCKGW_VERSION
#define KNOCKGW_VERSION "unknown"
#endif

enum { CLI_OK = 0, CLI_ERROR = 1, CLI_USAGE = 2 };

/*
 * After getopt_long() returned '?' or ':' (the latter needs an optstring
 * that starts with ':'), says on stderr which option was wrong and how:
 * "PROG: unknown option -x", "PROG: option --dst needs an argument".
 * Reads getopt's optopt and optind, and argv for a long option's text.
 */
void cli_bad_option(const char *prog, int ch, char *const argv[]);

/*
 * The options of a command that takes no operands: -h/--help, -c FILE
 * where conf is not NULL (*conf set), --json where json is not NULL (*json
 * set).  -h prints "usage: knockgw SYNOPSIS" and the summary on stdout.
 * -1 to run, 0 after --help, or CLI_USAGE (why on stderr, as "knockgw
 * NAME: ...").  Resets getopt.
 */
int cli_plain_options(const char *name, const char *synopsis, const char *summary, int argc,
		      char **argv, const char **conf, bool *json);

/* "PROG VERSION\n" on f (stdout for --version). */
void cli_version(FILE *f, const char *prog);

#endif
