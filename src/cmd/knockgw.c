/*
 * knockgw - silent port knocking in user space.
 *
 * This file is the command line's one table: each subcommand, its synopsis
 * and summary for --help, and the file that runs it (commands.h lists
 * them); a command line whose first word names none of them runs the
 * daemon (run.c).  Every command takes -h/--help (stdout, exit 0); a usage
 * error says why on stderr and exits 2 (cli.h).  Before any command runs,
 * the process is made undumpable (keys must not leak through a core dump
 * or a ptrace by another user) and libsodium is initialised.
 */
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <sodium.h>

#include "cmd/commands.h"
#include "config/conf.h"

struct command {
	const char *name;	/* argv[1]; NULL for the daemon itself */
	const char *synopsis;	/* after "knockgw " */
	const char *summary;
	int (*run)(int argc, char **argv);	/* argv[0] is the name */
};

/* In --help's order; the daemon first. */
static const struct command commands[] = {
	{ NULL, RUN_SYNOPSIS, RUN_SUMMARY, run_main },
	{ "genkey", GENKEY_SYNOPSIS, GENKEY_SUMMARY, genkey_main },
	{ "print-rules", PRINT_RULES_SYNOPSIS, PRINT_RULES_SUMMARY, print_rules_main },
	{ "status", STATUS_SYNOPSIS, STATUS_SUMMARY, status_main },
	{ "flush", FLUSH_SYNOPSIS, FLUSH_SUMMARY, flush_main },
	{ "hide", HIDE_SYNOPSIS, HIDE_SUMMARY, hide_main },
	{ "invite", INVITE_SYNOPSIS, INVITE_SUMMARY, invite_main },
	{ "revoke", REVOKE_SYNOPSIS, REVOKE_SUMMARY, revoke_main },
	{ "metrics", METRICS_SYNOPSIS, METRICS_SUMMARY, metrics_main },
	{ "check-firewall", CHECK_FIREWALL_SYNOPSIS, CHECK_FIREWALL_SUMMARY, check_firewall_main },
};
enum { NCOMMANDS = sizeof(commands) / sizeof(commands[0]) };

static void usage(FILE *f)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "%s knockgw %s\n", i ? "      " : "usage:", commands[i].synopsis);
	fprintf(f, "       knockgw --help | --version\n\n");
	for (i = 0; i < NCOMMANDS; i++) {
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

/* Secrets must not leak through a core dump or a ptrace by another user. */
static void harden_process(void)
{
	struct rlimit rl = { 0, 0 };

	setrlimit(RLIMIT_CORE, &rl);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int main(int argc, char **argv)
{
	int r;

	harden_process();
	if (sodium_init() < 0) {
		fprintf(stderr, "knockgw: libsodium failed to initialise\n");
		return 1;
	}
	for (size_t i = 1; argc >= 2 && i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	r = run_main(argc, argv);
	if (r == COMMANDS_HELP) {
		usage(stdout);
		return 0;
	}
	return r;
}
