/*
 * cli.c - the command-line words knockgw and knock-connect share (cli.h).
 */
#include <getopt.h>

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
