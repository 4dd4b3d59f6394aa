/*
 * kcisn.h - `knock-connect isn`: prints the ISN a client puts in its SYN
 * (mode knock or native, key from --secret or --key-file, destination,
 * TCP timestamp, integrity bytes from a file, time and epoch window; or,
 * with --nonce, native mode's nonce form for a SYN without a timestamp) as
 * 8 lowercase hex digits.  Needs no daemon.  --secret exists for Knock-style
 * text secrets and tests; it puts the secret on the command line, where
 * other local users can read it, so real use takes --key-file.
 */
#ifndef KNOCKGW_KCISN_H
#define KNOCKGW_KCISN_H

/*
 * argv[0] is "isn".  Returns the exit code: KC_OK (the ISN printed on
 * stdout, or usage for --help), KC_USAGE or KC_ERROR (said why on stderr).
 * The key lives in locked memory and is wiped on every path out.
 */
int kc_cmd_isn(int argc, char **argv);

#endif
