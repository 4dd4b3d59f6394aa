/*
 * kcconf.h - where knock-connect finds the control socket: control_socket
 * in a knockgw.conf.
 */
#ifndef KNOCKGW_KCCONF_H
#define KNOCKGW_KCCONF_H

#include <stdbool.h>
#include <stddef.h>

enum { KC_CONF_FILE_MAX = 1 << 20 };

/*
 * control_socket from a knockgw.conf.  Only that one setting is read, with
 * libconfig directly rather than conf_load(): conf_load() also reads and
 * checks every key file, which are root's alone, and a user only needs to
 * know where the socket is.  The file is read like conf.c does (no FIFO
 * hang, bounded size) and wiped afterwards: it may hold secret = "..." lines.
 * Without -c the default config is consulted only if it is readable, and
 * any problem with it leaves the default socket path.
 *
 * Writes out (outlen bytes) only with an absolute path that fits; 0, or
 * -errno after saying why on stderr (only when explicit).
 */
int kc_socket_from_conf(const char *path, bool explicit, char *out, size_t outlen);

#endif
