/*
 * hide.c - `knockgw hide [-s STATE]`: the hiding table from the saved
 * state (hidestate.h), when no table of the daemon's is in place.
 *
 * knockgw.service runs it before every start, ahead of the configuration's
 * check: after a reboot there is no table, and if the daemon then cannot
 * start (a broken configuration or key file), the protected ports of its
 * last successful start or reload still answer every SYN like closed
 * ports, through the kernel alone, as after a stop with on_stop "hide".
 * It reads the saved state only, never knockgw.conf or a key file.  A
 * table already in place (one a stopped or killed daemon left, or a
 * running daemon's) is left as it is: it is the newer.  The next start
 * replaces the table in one step, as it replaces any table.
 *
 * STATE is DIR/hiding.conf, DIR being $STATE_DIRECTORY (set by the unit's
 * StateDirectory=) or /var/lib/knockgw.  Exit codes: 0 installed, or
 * nothing to do (no saved state: no start has succeeded yet; a table in
 * place), each said on stdout; 1 the state does not load or the table
 * cannot be installed (said on stderr); 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "common/log.h"
#include "config/hidestate.h"
#include "daemon/daemon.h"
#include "kernel/nft/nftrules.h"
#include "kernel/tablelife.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: knockgw hide [-s STATE]\n"
		   "Install the hiding table saved by the daemon's last successful start or\n"
		   "reload, unless a table is in place (knockgw.service runs it first).\n");
}

/* The ports the state hides, for the message: "22, 2222" (at most len). */
static void ports(const struct conf *c, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < c->nprotect && off < len; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = c->protect[j].port == c->protect[i].port;
		if (!seen)
			off += (size_t)snprintf(buf + off, len - off, "%s%u", off ? ", " : "",
						(unsigned)c->protect[i].port);
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

static int hide(const char *path)
{
	enum nft_queue_kind kind;
	struct conf *c;
	struct stat st;
	char err[512], list[256];
	int r;

	if (stat(path, &st) < 0 && errno == ENOENT) {
		printf("knockgw hide: no saved state %s (no start has succeeded yet): nothing to "
		       "hide\n", path);
		return 0;
	}
	c = conf_load_file(path, false);
	if (!c) {
		fprintf(stderr, "knockgw hide: the saved state %s does not load; nothing "
				"installed\n", path);
		return 1;
	}
	r = nftrules_present(c->table);
	if (r > 0) {
		printf("knockgw hide: table inet %s is in place: left as it is\n", c->table);
		conf_destroy(c);
		return 0;
	}
	if (r < 0) {
		fprintf(stderr, "knockgw hide: cannot tell whether table inet %s exists: %s\n",
			c->table, strerror(-r));
		conf_destroy(c);
		return 1;
	}
	r = nftrules_probe(&kind);
	if (r < 0) {
		fprintf(stderr, "knockgw hide: this kernel takes no queue rule: %s\n",
			strerror(-r));
		conf_destroy(c);
		return 1;
	}
	/* Said, not held against it: hiding with it beats not hiding at all. */
	tablelife_refuse_port_ok(c);
	if (nftrules_install_hiding(c, kind, err, sizeof(err)) < 0) {
		fprintf(stderr, "knockgw hide: cannot install table inet %s: %s\n", c->table, err);
		conf_destroy(c);
		return 1;
	}
	ports(c, list, sizeof(list));
	printf("knockgw hide: table inet %s installed from %s: protected port(s) %s answer "
	       "like closed ports until knockgw starts\n", c->table, path, list);
	conf_destroy(c);
	return 0;
}

int hide_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char dir[PATH_MAX], path[PATH_MAX];
	const char *file = NULL;
	int ch;

	optind = 0;
	opterr = 0;	/* said by cli_bad_option(), the knockgw way */
	while ((ch = getopt_long(argc, argv, ":s:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			file = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			cli_bad_option("knockgw hide", ch, argv);
			fprintf(stderr, "Try 'knockgw hide --help'.\n");
			return CLI_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "knockgw hide: unexpected argument \"%s\"\n", argv[optind]);
		fprintf(stderr, "Try 'knockgw hide --help'.\n");
		return CLI_USAGE;
	}
	if (!file) {
		if (hidestate_path(hidestate_dir(dir, sizeof(dir), HIDESTATE_DEFAULT_DIR), path,
				   sizeof(path)) < 0) {
			fprintf(stderr, "knockgw hide: $STATE_DIRECTORY is too long\n");
			return 1;
		}
		file = path;
	}
	/* What the table code says goes to stderr, with the rest. */
	log_init(1, LOG_INFO, "knockgw");
	return hide(file);
}
