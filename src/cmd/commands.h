/*
 * commands.h - the subcommands of `knockgw`, one file each, and the one
 * table that dispatches them (knockgw.c).
 *
 *   file              command
 *   run.c             knockgw [-c FILE] [-f] [-n] [-v]   the daemon, or -n
 *   genkey.c          knockgw genkey
 *   print_rules.c     knockgw print-rules [-c FILE]
 *   status.c          knockgw status [-c FILE] [--json]
 *   flush.c           knockgw flush [-c FILE]
 *   hide.c            knockgw hide [-s STATE]
 *   invite.c          knockgw invite NAME --dst HOST ...   (invite_text.h: its text)
 *   revoke.c          knockgw revoke NAME [--apply]
 *   metrics.c         knockgw metrics [-c FILE] [-o FILE]  (metrics_text.h: its text)
 *   check_firewall.c  knockgw check-firewall [-c FILE]     (check_firewall.h)
 *
 * Each NAME_main() takes the command line after "knockgw" (argv[0] is the
 * command's name, "knockgw" for run_main) and returns the exit status: 0,
 * 1 an error (said on stderr), 2 a usage error (CLI_USAGE), or a status
 * of the command's own (its file's header says which).  Each takes
 * -h/--help.  The synopsis and summary of each are here, for the table's
 * --help and for the commands that print them as their own help.
 */
#ifndef KNOCKGW_COMMANDS_H
#define KNOCKGW_COMMANDS_H

/* run_main's answer to -h/--help: main prints every command's usage. */
enum { COMMANDS_HELP = -1 };

#define RUN_SYNOPSIS "[-c FILE] [-f] [-n] [-v]"
#define RUN_SUMMARY "Run the daemon (-f: in the foreground, logging to stderr; -v: at debug),\n" \
		    "or with -n check the configuration and exit."
#define GENKEY_SYNOPSIS "genkey"
#define GENKEY_SUMMARY "Print a new native key: 32 random bytes, base64."
#define PRINT_RULES_SYNOPSIS "print-rules [-c FILE]"
#define PRINT_RULES_SUMMARY "Print the nftables ruleset the daemon would install."
#define STATUS_SYNOPSIS "status [-c FILE] [--json]"
#define STATUS_SUMMARY "Print the running daemon's state and counters."
#define FLUSH_SYNOPSIS "flush [-c FILE]"
#define FLUSH_SUMMARY "Remove the table a stopped daemon left to hide its ports."
#define HIDE_SYNOPSIS "hide [-s STATE]"
#define HIDE_SUMMARY "Install the hiding table the daemon's last good start saved, unless a\n" \
		     "table is in place (knockgw.service runs it before every start)."
#define INVITE_SYNOPSIS                                                           \
	"invite NAME --dst HOST [--port N] [--mode native|knock] [--integrity-len N] " \
	"[--keys-dir DIR] [--show-key] [-c FILE] [--apply]"
#define INVITE_SUMMARY "Write a new key and print the configuration a client and this server need\n" \
		       "(--apply: change this server's and reload it)."
#define REVOKE_SYNOPSIS "revoke NAME [-c FILE] [--apply] [--remove-key]"
#define REVOKE_SUMMARY "Take a key out of the configuration (--apply: write it and reload)."
#define METRICS_SYNOPSIS "metrics [-c FILE] [-o FILE]"
#define METRICS_SUMMARY "Print the running daemon's counters for Prometheus (-o: write FILE " \
			"atomically)."
#define CHECK_FIREWALL_SYNOPSIS "check-firewall [-c FILE]"
#define CHECK_FIREWALL_SUMMARY "Tell whether refused SYNs look like this host's unused ports " \
			       "under its firewall."

int run_main(int argc, char **argv);
int genkey_main(int argc, char **argv);
int print_rules_main(int argc, char **argv);
int status_main(int argc, char **argv);
int flush_main(int argc, char **argv);
int hide_main(int argc, char **argv);
int invite_main(int argc, char **argv);
int revoke_main(int argc, char **argv);
int metrics_main(int argc, char **argv);
int check_firewall_main(int argc, char **argv);

#endif
