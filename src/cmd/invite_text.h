/*
 * invite_text.h - `knockgw invite`: onboarding one client; its command line
 * and its text.
 *
 *   knockgw invite NAME --dst HOST [--port N] [--mode native|knock]
 *                  [--integrity-len N] [--keys-dir DIR] [--show-key]
 *                  [-c FILE] [--apply]
 *
 * makes a new key DIR/NAME.key (invite.h) and prints, ready to paste, the
 * four pieces that put it to use, each under a line
 *
 *   # === server: /etc/knockgw/knockgw.conf
 *   # === client: PATH-OF-THE-KEY
 *   # === client: /etc/knockgw/knockgw.conf
 *   # === client: ~/.ssh/config
 *
 * the server's keys and protect lists, the key file's content (only with
 * --show-key; otherwise how to copy it), the client's keys and knock lists,
 * and an ssh_config Host block, with knock-connect as its ProxyCommand when
 * the knock has integrity (the daemon refuses a plain connect() then).
 * Each configuration piece passes `knockgw -n` on its own.  Where the
 * server's configuration FILE is there, invite also shows the change that
 * --apply makes to it (conf_apply.h); with --apply it makes it, reloads
 * the daemon, and prints the client's pieces (invite.c).
 *
 * Here: the command line and the text, pure (apart from getopt's state and
 * the usage messages on stderr), so that the unit tests can run them.
 */
#ifndef KNOCKGW_INVITE_TEXT_H
#define KNOCKGW_INVITE_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#define INVITE_KEYS_DIR "/etc/knockgw/keys"

enum { INVITE_NAME_MAX = 32 };

struct invite_args {
	const char *name;	/* key name and file name: see invite_name_ok() */
	const char *dst;	/* an IPv4 or IPv6 address, as given */
	unsigned port;		/* 1..65535, default 22 */
	const char *mode;	/* "native" (default) or "knock" */
	unsigned integrity_len;	/* 0 (default) .. INTEG_MAX_LEN */
	const char *keys_dir;	/* default INVITE_KEYS_DIR */
	bool show_key;
	bool apply;		/* edit the server's configuration, reload the daemon */
	const char *conf;	/* the server's configuration; NULL: the default */
	bool has_window;	/* the client's knock takes the server entry's window */
	unsigned window;
};

enum { INVITE_RUN = 0, INVITE_HELP = -1 };

/*
 * The command line after "invite" (argv[0] is "invite"): INVITE_RUN with
 * *ret filled, INVITE_HELP (the usage printed on stdout) or CLI_USAGE
 * (said why on stderr).  Starts getopt over (optind = 0).
 */
int invite_parse_args(int argc, char **argv, struct invite_args *ret);

/* The usage of `knockgw invite`, with what each option means. */
void invite_usage(FILE *f);

/*
 * A key name that is also a safe file name: 1..32 characters of A-Z a-z
 * 0-9 _ . -, not starting with '.' or '-' (no hidden file, no option).
 */
bool invite_name_ok(const char *name);

/*
 * The one NAME operand left after the options (argv[first..argc)), or
 * NULL when there is none, more than one or it fails invite_name_ok(); the
 * reason is then on stderr, after "PROG: ".
 */
const char *invite_name_arg(const char *prog, int argc, char **argv, int first);

/*
 * Prints the four pieces for a key at key_path (absolute).  key_b64 is the
 * key file's line, printed only when a->show_key; NULL otherwise.  0, or
 * -EIO when f failed.  The same as invite_print_head(), _server() and
 * _client() in a row.
 */
int invite_print(FILE *f, const struct invite_args *a, const char *key_path, const char *key_b64);

/* The opening comment: what was made, where. */
void invite_print_head(FILE *f, const struct invite_args *a, const char *key_path);

/* The server's piece: keys and protect lists to merge by hand. */
void invite_print_server(FILE *f, const struct invite_args *a, const char *key_path);

/* The client's three pieces: the key file, the configuration, ssh's Host block. */
int invite_print_client(FILE *f, const struct invite_args *a, const char *key_path,
			const char *key_b64);

#endif
