/*
 * ctlsock.h - the control socket's file: its directory, a stale file left
 * by a daemon that died, the listening socket, and removing the file again.
 *
 * The socket file is mode 0666 in a directory only root (or the running
 * user) can change: every local user may connect, and each request is
 * authorised on its own (ctlserve.h).  Nobody else may change the
 * directory's entries, so no one can swap the file for a symlink between
 * the moment it is made and the moment it is used; and the mode is the
 * socket's own at bind, never set afterwards through the path.  Only a
 * file this daemon made is ever removed: a daemon started after us may
 * own the path by now.  Logs the reason for every failure.
 */
#ifndef KNOCKGW_CTLSOCK_H
#define KNOCKGW_CTLSOCK_H

#include <sys/stat.h>
#include <sys/types.h>

/* Why a directory may not hold the control socket. */
enum ctlsock_dir {
	CTLSOCK_DIR_OK,
	CTLSOCK_DIR_NOT_DIR,	/* not a directory */
	CTLSOCK_DIR_WRITABLE,	/* group or others may write to it (sticky or not) */
	CTLSOCK_DIR_FOREIGN,	/* owned by neither root nor euid */
};

/*
 * Judges the directory st describes for a daemon running as euid: it must
 * be a directory owned by root or euid that no group and no other user may
 * write to.  Pure.
 */
enum ctlsock_dir ctlsock_dir_check(const struct stat *st, uid_t euid);

/*
 * Makes path's directory (0755) when missing and opens it, refuses it
 * unless ctlsock_dir_check() passes (-EPERM), replaces a stale socket file
 * there (not a live one: -EADDRINUSE, nor anything that is not a socket:
 * -EEXIST), binds a non-blocking unix stream socket in that directory with
 * mode 0666 from the start, and listens.  path is absolute and fits
 * sun_path.  Returns the listening descriptor, with the file's identity in
 * *ret_dev, *ret_ino; or -errno, with no file of ours left behind.  Runs
 * before any other thread of the daemon: it changes the process's working
 * directory and umask for the moment of the bind.
 */
int ctlsock_listen(const char *path, int backlog, dev_t *ret_dev, ino_t *ret_ino);

/* Removes path if it is still the file (dev, ino) that ctlsock_listen() made. */
void ctlsock_unlink(const char *path, dev_t dev, ino_t ino);

#endif
