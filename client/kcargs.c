/*
 * kcargs.c - knock-connect's command line (see kcargs.h) and its usage.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "kcargs.h"

void kc_usage(FILE *f)
{
	fprintf(f,
		"usage: knock-connect [-c FILE] [-s SOCKET] [-w SECONDS] HOST PORT\n"
		"       knock-connect isn --mode knock|native (--secret TEXT | --key-file FILE) "
		"--dst ADDR --port N [--tsval N | --nonce N] [--integrity-len N --payload-file FILE] "
		"[--time UNIX_SECONDS] [--window N]\n"
		"       knock-connect --help | --version\n"
		"\n"
		"Relays stdin/stdout to HOST PORT through the knock knockgw has configured\n"
		"for it, e.g. ssh -o ProxyCommand='knock-connect %%h %%p'.\n"
		"  -c FILE     read control_socket from this knockgw.conf (default: "
		CONF_DEFAULT_PATH ", if readable)\n"
		"  -s SOCKET   knockgw's control socket (default: " CONF_DEFAULT_SOCKET ")\n"
		"  -w SECONDS  connect timeout (default: %d)\n"
		"  -h, --help  this text;  --version  the version\n"
		"isn: --integrity-len is 1..%d, the daemon's limit; --nonce 0..255 gives the nonce\n"
		"form of a native knock for a SYN without a TCP timestamp.\n"
		"Exit status: %d relay ended cleanly, %d error, %d usage, %d knockgw is not running,\n"
		"%d no knock is configured for HOST PORT, %d connection refused, %d timed out.\n",
		KC_DEFAULT_WAIT, KC_INTEG_MAX, KC_OK, KC_ERROR, KC_USAGE, KC_NO_DAEMON,
		KC_NO_KNOCK, KC_REFUSED, KC_TIMEOUT);
}

int kc_parse_number(const char *s, uint64_t max, uint64_t *ret)
{
	int base = 10;
	char *end;
	unsigned long long v;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	/* strtoull alone would also take white space, a sign, and "0x" again. */
	if (*s == '\0')
		return -EINVAL;
	for (const char *p = s; *p; p++)
		if (base == 16 ? !isxdigit((unsigned char)*p) : !isdigit((unsigned char)*p))
			return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end != '\0' || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int kc_parse_connect_args(int argc, char **argv, struct kc_connect_args *ret)
{
	enum { O_VERSION = 256 };
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct kc_connect_args a = { .wait = KC_DEFAULT_WAIT };
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+c:s:w:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			a.conf_path = optarg;
			break;
		case 's':
			a.sock_path = optarg;
			break;
		case 'w':
			if (kc_parse_number(optarg, KC_MAX_WAIT, &a.wait) < 0 || a.wait == 0) {
				fprintf(stderr, "knock-connect: -w takes 1..%d seconds\n",
					KC_MAX_WAIT);
				return KC_USAGE;
			}
			break;
		case 'h':
			kc_usage(stdout);
			return KC_PARSE_HELP;
		case O_VERSION:
			cli_version(stdout, "knock-connect");
			return KC_PARSE_HELP;
		default:
			kc_usage(stderr);
			return KC_USAGE;
		}
	}
	if (argc - optind != 2) {
		kc_usage(stderr);
		return KC_USAGE;
	}
	a.host = argv[optind];
	a.port = argv[optind + 1];
	if (a.sock_path && (a.sock_path[0] != '/' ||
			    strlen(a.sock_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))) {
		fprintf(stderr, "knock-connect: -s needs an absolute path shorter than %zu bytes\n",
			sizeof(((struct sockaddr_un *)0)->sun_path));
		return KC_USAGE;
	}
	*ret = a;
	return KC_PARSE_RUN;
}
