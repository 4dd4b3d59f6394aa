/*
 * cli.c - the command-line words knockgw and knock-connect share (cli.h).
 */
#include <getopt.h>
#include <stdio.h>

#include "cmd/cli.h"

void cli_bad_option(const char *prog, int ch, char *const argv[])
{
	/*
	 * A short option's letter is in optopt; for a long option optopt is 0
	 * (unknown) or its val, which we keep out of the letters, and the text
	 * as given is the argument getopt just stepped over.
	 */
	char shortopt[3] = { '-', (char)optopt, '\0' };
	const char *text = optopt > ' ' && optopt < 127 ? shortopt :
			   optind > 0 ? argv[optind - 1] : "?";

	if (ch == ':')
		fprintf(stderr, "%s: option %s needs an argument\n", prog, text);
	else
		fprintf(stderr, "%s: unknown option %s\n", prog, text);
}

void cli_version(FILE *f, const char *prog)
{
	fprintf(f, "%s %s\n", prog, KNOCKGW_VERSION);
}

int cli_plain_options(const char *name, const char *synopsis, const char *summary, int argc,
		      char **argv, const char **conf, bool *json)
{
	enum { O_JSON = 256 };
	static const struct option plain[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option with_json[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, O_JSON },
		{ NULL, 0, NULL, 0 },
	};
	char prog[64];
	int ch;

	snprintf(prog, sizeof(prog), "knockgw %s", name);
	optind = 0;	/* 0: a full reset of getopt */
	opterr = 0;	/* cli_bad_option() says it, with the command's name */
	while ((ch = getopt_long(argc, argv, conf ? ":c:h" : ":h", json ? with_json : plain,
				 NULL)) != -1) {
		switch (ch) {
		case 'c':	/* only in the optstring when conf is given */
			if (conf)
				*conf = optarg;
			break;
		case O_JSON:	/* only in the table when json is given */
			if (json)
				*json = true;
			break;
		case 'h':
			printf("usage: knockgw %s\n%s\n", synopsis, summary);
			return 0;
		default:
			cli_bad_option(prog, ch, argv);
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return CLI_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument \"%s\"\n", prog, argv[optind]);
		fprintf(stderr, "Try '%s --help'.\n", prog);
		return CLI_USAGE;
	}
	return -1;
}
