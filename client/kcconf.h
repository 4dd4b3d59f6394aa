/*
 * kcconf.h - where knock-connect finds the control socket: control_socket
 * in a knockgw.conf.
 */
#ifndef KNOCKGW_KCCONF_H
#define KNOCKGW_KCCONF_H

#include <stdbool.h>
#include <stddef.h>

/*
 * control_socket from a knockgw.conf, read as the daemon's config module
 * reads it (conf_peek(): the same file rules, @include and syntax; no key
 * file, since those are root's alone and a user only needs to know where
 * the socket is).  The text is wiped afterwards: it may hold
 * secret = "..." lines.  Without -c (explicit false) the default config is
 * consulted only if it is readable, and any problem with it leaves the
 * default socket path.
 *
 * Writes out (outlen bytes) only with an absolute path that fits; 0, or
 * -errno after saying why on stderr (only when explicit).
 */
int kc_socket_from_conf(const char *path, bool explicit, char *out, size_t outlen);

#endif
