/*
 * print_rules.c - `knockgw print-rules [-c FILE]`: the nftables ruleset
 * the daemon would install for FILE, in nft syntax (nftrules.h).  Needs no
 * privileges: where the kernel cannot be asked which queue expression it
 * has, it shows the portable (xtables compat) form.
 */
#include <stdio.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "config/conf.h"
#include "kernel/nft/nftprint.h"
#include "kernel/nft/nftrules.h"

int print_rules_main(int argc, char **argv)
{
	enum nft_queue_kind kind = NFT_QUEUE_COMPAT;
	const char *path = CONF_DEFAULT_PATH;
	struct conf *c;
	int r = cli_plain_options("print-rules", PRINT_RULES_SYNOPSIS, PRINT_RULES_SUMMARY, argc,
				  argv, &path, NULL);

	if (r >= 0)
		return r;
	c = conf_load_file(path, false);
	if (!c)
		return 1;
	/* Without privileges the probe fails: show the portable form. */
	if (nftrules_probe(&kind) < 0)
		kind = NFT_QUEUE_COMPAT;
	nftprint_ruleset(c, kind, stdout);
	conf_destroy(c);
	return 0;
}
