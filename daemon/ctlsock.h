/*
 * ctlsock.h - the control socket's file: its directory, a stale file left
 * by a daemon that died, the listening socket, and removing the file again.
 *
 * The socket file is mode 0666 in a 0755 directory: every local user may
 * connect, and each request is authorised on its own (ctlserve.h).  Only
 * a file this daemon made is ever removed: a daemon started after us may
 * own the path by now.  Logs the reason for every failure.
 */
#ifndef KNOCKGW_CTLSOCK_H
#define KNOCKGW_CTLSOCK_H

#include <sys/types.h>

/*
 * Makes path's directory (0755) when missing, replaces a stale socket file
 * (not a live one: -EADDRINUSE, nor anything that is not a socket:
 * -EEXIST), binds a non-blocking unix stream socket there, sets mode 0666
 * and listens.  path is absolute and fits sun_path.  Returns the listening
 * descriptor, with the file's identity in *ret_dev, *ret_ino; or -errno,
 * with no file of ours left behind.
 */
int ctlsock_listen(const char *path, int backlog, dev_t *ret_dev, ino_t *ret_ino);

/* Removes path if it is still the file (dev, ino) that ctlsock_listen() made. */
void ctlsock_unlink(const char *path, dev_t dev, ino_t ino);

#endif
