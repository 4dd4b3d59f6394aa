/*
 * genkey.c - `knockgw genkey`: a new native key, 32 random bytes from
 * libsodium, printed as one line of base64 (what a key file holds).  The
 * key is wiped from memory once printed.
 */
#include <stdio.h>

#include <sodium.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "config/keys.h"

int genkey_main(int argc, char **argv)
{
	char b64[64];
	int r = cli_plain_options("genkey", GENKEY_SYNOPSIS, GENKEY_SUMMARY, argc, argv, NULL, NULL);

	if (r >= 0)
		return r;
	if (key_generate_base64(b64, sizeof(b64)) < 0) {
		fprintf(stderr, "knockgw: cannot encode the key\n");
		return 1;
	}
	fputs(b64, stdout);
	sodium_memzero(b64, sizeof(b64));
	return fflush(stdout) == 0 ? 0 : 1;
}
