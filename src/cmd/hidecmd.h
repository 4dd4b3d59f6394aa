/*
 * hidecmd.h - `knockgw hide [-s STATE]`: the hiding table from the saved
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
#ifndef KNOCKGW_HIDECMD_H
#define KNOCKGW_HIDECMD_H

/* argv[0] is "hide". */
int hide_main(int argc, char **argv);

#endif
