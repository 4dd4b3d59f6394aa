/*
 * metrics.c - `knockgw metrics [-c FILE] [-o FILE]`: the running
 * daemon's counters in the Prometheus text format (metrics_text.h), on stdout
 * or written atomically to a file for node_exporter's textfile collector.
 *
 * It asks the daemon over the control socket with METRICS (ctlproto.h:
 * STATUS's lines and the per-key ones; STATUS from a daemon that predates
 * it), so it needs root as `knockgw status` does; it never opens a network
 * socket.  With -o, the text goes to a temporary file in the same
 * directory (".NAME.XXXXXX", which the textfile collector ignores: it reads
 * *.prom), fsync'ed, mode 0644, then renamed over FILE: a reader sees the
 * old file or the new one, never part of one.  When no daemon runs, -o
 * still replaces FILE, with knockgw_up 0, so no stale counters stay behind.
 *
 * Exit codes: 0 written; 3 no daemon listens on the control socket (as
 * `knockgw status`); 1 any other error; 2 usage.
 *
 * Here: its options, the exchange, and the atomic write of the file; the
 * text itself is metrics_text.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/ctlask.h"
#include "cmd/commands.h"
#include "cmd/metrics_text.h"
#include "ctl/ctlclient.h"
#include "daemon/daemon.h"
#include "daemon/stats.h"


static void usage(FILE *f)
{
	fprintf(f, "usage: knockgw metrics [-c FILE] [-o|--output FILE]\n"
		   "Prints the running daemon's counters in the Prometheus text format;\n"
		   "with --output, replaces FILE atomically (mode 0644) instead.\n");
}

/*
 * 0 with s filled, CTLASK_NO_DAEMON, or 1 (said on stderr).  METRICS first;
 * a daemon that does not know it yet (one still running from before an
 * upgrade) refuses it as a bad request: then STATUS, without the per-key
 * lines.
 */
static int ask(const char *sock, struct stats *s)
{
	enum ctl_status st = CTL_S_OK;
	int r = ctlclient_metrics(sock, CTLCLIENT_WAIT_MS, ctlask_stats_line, s, &st);

	if (r == 0 && st == CTL_S_BAD_REQUEST) {
		memset(s, 0, sizeof(*s));
		r = ctlclient_status(sock, CTLCLIENT_WAIT_MS, ctlask_stats_line, s, &st);
	}

	return ctlask_report(sock, r, st);
}

/* The text: every family when s is given, only knockgw_up 0 without. */
static void render(const struct stats *s, FILE *out)
{
	if (s)
		metrics_write(s, out);
	else
		metrics_write_down(out);
}

/*
 * Writes the text to a temporary file beside path, then renames it over
 * path.  0 or 1 (said on stderr); the temporary file never stays.
 */
static int write_atomic(const char *path, const struct stats *s)
{
	char *dcopy = strdup(path), *bcopy = strdup(path);
	char tmp[PATH_MAX];
	bool created = false;
	FILE *f = NULL;
	int fd, ret = 1;

	if (!dcopy || !bcopy) {
		fprintf(stderr, "knockgw: out of memory\n");
		goto out;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dirname(dcopy),
			     basename(bcopy)) >= sizeof(tmp)) {
		fprintf(stderr, "knockgw: %s: path too long\n", path);
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "knockgw: cannot create a file beside %s: %s\n", path,
			strerror(errno));
		goto out;
	}
	created = true;
	/* Read by node_exporter, which runs as its own user. */
	if (fchmod(fd, 0644) < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "knockgw: %s: %s\n", tmp, strerror(errno));
		close(fd);
		goto out;
	}
	render(s, f);
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) < 0) {
		fprintf(stderr, "knockgw: cannot write %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	if (fclose(f) != 0) {
		f = NULL;
		fprintf(stderr, "knockgw: cannot write %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	f = NULL;
	if (rename(tmp, path) < 0) {
		fprintf(stderr, "knockgw: cannot rename %s to %s: %s\n", tmp, path,
			strerror(errno));
		goto out;
	}
	created = false;
	ret = 0;
out:
	if (f)
		fclose(f);
	if (created)
		unlink(tmp);
	free(dcopy);
	free(bcopy);
	return ret;
}

static int run(const char *conf_path, const char *output)
{
	struct conf *c = conf_load_file(conf_path, false);
	char sock[sizeof(c->control_socket)];
	struct stats *s;
	int r;

	if (!c)
		return 1;
	snprintf(sock, sizeof(sock), "%s", c->control_socket);
	conf_destroy(c);
	s = calloc(1, sizeof(*s));
	if (!s) {
		fprintf(stderr, "knockgw: out of memory\n");
		return 1;
	}
	r = ask(sock, s);
	if (r == 0 || (r == CTLASK_NO_DAEMON && output)) {
		const struct stats *what = r == 0 ? s : NULL;

		if (output) {
			if (write_atomic(output, what) != 0)
				r = 1;
		} else {
			render(what, stdout);
			if (fflush(stdout) != 0 || ferror(stdout)) {
				fprintf(stderr, "knockgw: cannot write the metrics: %s\n",
					strerror(errno));
				r = 1;
			}
		}
	}
	free(s);
	return r;
}

int metrics_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf_path = CONF_DEFAULT_PATH, *output = NULL;
	int ch;

	optind = 0;
	opterr = 0;	/* said by cli_bad_option(), the knockgw way */
	while ((ch = getopt_long(argc, argv, ":c:o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			conf_path = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			cli_bad_option("knockgw metrics", ch, argv);
			fprintf(stderr, "Try 'knockgw metrics --help'.\n");
			return CLI_USAGE;
		}
	}
	if (optind != argc || (output && !output[0])) {
		fprintf(stderr, "knockgw metrics: %s\nTry 'knockgw metrics --help'.\n",
			optind != argc ? "takes no operands" : "--output needs a file name");
		return CLI_USAGE;
	}
	return run(conf_path, output);
}
