/*
 * invitecmd.h - `knockgw invite` (invite.h says what it does; invitecmd.c
 * how), and `knockgw revoke` (revoke.h).
 */
#ifndef KNOCKGW_INVITECMD_H
#define KNOCKGW_INVITECMD_H

/* The command line after "knockgw" (argv[0] "invite"); default_conf: -c's default.  Exit status. */
int invite_main(int argc, char **argv, const char *default_conf);

/* The same for "revoke" (revokecmd.c). */
int revoke_main(int argc, char **argv, const char *default_conf);

#endif
