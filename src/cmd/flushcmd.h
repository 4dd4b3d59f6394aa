/*
 * flushcmd.h - `knockgw flush [-c FILE]`: removes the table a stopped
 * daemon left to hide its ports (on_stop "hide"), by hand.
 *
 * It reads only what it needs from FILE (conf_peek(): rules.table and
 * control_socket), so a file that does not load - a broken key file, a
 * syntax error, the very moment an administrator most needs to open the
 * ports again - does not stop it: where FILE cannot say, it takes the
 * default and says so on stderr, with the reason ("table inet knockgw
 * (default: FILE:LINE: syntax error)").  Not under a running daemon (one
 * answers on the control socket), which would put the table back: that is
 * `systemctl stop`'s job.
 *
 * Exit codes: 0 removed, or there was nothing to remove; 1 a daemon
 * answers, or the table could not be removed; 2 usage.
 */
#ifndef KNOCKGW_FLUSHCMD_H
#define KNOCKGW_FLUSHCMD_H

/* argv[0] is "flush"; default_conf is used without -c. */
int flush_main(int argc, char **argv, const char *default_conf);

#endif
