/*
 * ctlsock.c - the control socket's file (see ctlsock.h).
 *
 * Every step after the directory is opened names the file relative to that
 * open directory (the *at() calls, and bind and connect with the directory
 * as the working directory), so the directory that was checked is the one
 * the socket lands in, whatever happens to the path's other components.
 * The directory itself may be reached through a symlink (/var/run is one):
 * the check holds for the directory that was opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "ctl/ctlsock.h"

enum { SOCK_MODE = 0666, DIR_MODE = 0755 };

enum ctlsock_dir ctlsock_dir_check(const struct stat *st, uid_t euid)
{
	if (!S_ISDIR(st->st_mode))
		return CTLSOCK_DIR_NOT_DIR;
	if (st->st_uid != 0 && st->st_uid != euid)
		return CTLSOCK_DIR_FOREIGN;
	/*
	 * The sticky bit is no help: it keeps others from removing our file,
	 * not from placing theirs under the name before we bind, nor from
	 * filling the directory.
	 */
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return CTLSOCK_DIR_WRITABLE;
	return CTLSOCK_DIR_OK;
}

/*
 * Opens path's directory, making it (DIR_MODE) when missing, and checks it.
 * The directory's descriptor, or -errno (said).
 */
static int open_dir(const char *path, char *base, size_t base_len)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *slash = strrchr(path, '/');
	struct stat st;
	bool made = false;
	int fd, r;

	if (!slash || !slash[1] || (size_t)(slash - path) >= sizeof(dir))
		return -EINVAL;
	snprintf(base, base_len, "%s", slash + 1);
	if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (mkdir(dir, DIR_MODE) == 0)
		made = true;
	else if (errno != EEXIST) {
		r = -errno;
		log_warn("control socket: cannot create directory \"%s\"", dir);
		return r;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOTDIR)
			log_warnx("control socket: \"%s\" is not a directory", dir);
		else
			log_warn("control socket: cannot open directory \"%s\"", dir);
		return r;
	}
	/* mkdir's mode went through the umask; the contract says DIR_MODE. */
	if (made && fchmod(fd, DIR_MODE) < 0) {
		r = -errno;
		log_warn("control socket: cannot chmod \"%s\"", dir);
		close(fd);
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		log_warn("control socket: cannot stat \"%s\"", dir);
		close(fd);
		return r;
	}
	switch (ctlsock_dir_check(&st, geteuid())) {
	case CTLSOCK_DIR_OK:
		return fd;
	case CTLSOCK_DIR_NOT_DIR:
		log_warnx("control socket: \"%s\" is not a directory", dir);
		break;
	case CTLSOCK_DIR_FOREIGN:
		log_warnx("control socket: directory \"%s\" is owned by uid %u, neither root nor "
			  "this process's; refusing to make the socket there", dir,
			  (unsigned)st.st_uid);
		break;
	case CTLSOCK_DIR_WRITABLE:
		log_warnx("control socket: directory \"%s\" is writable by %s (mode %04o); refusing "
			  "to make the socket there (anyone who can write to it could swap the "
			  "file); use a directory only root can change, such as /run/knockgw",
			  dir, st.st_mode & S_IWOTH ? "others" : "its group",
			  (unsigned)(st.st_mode & 07777));
		break;
	}
	close(fd);
	return -EPERM;
}

/*
 * A socket file left by a daemon that died is removed; a live one (another
 * knockgw answers) and anything that is not a socket are not ours to take.
 * Runs with dirfd as the working directory.
 */
static int remove_stale(int dirfd, const char *path, const struct sockaddr_un *rel)
{
	struct stat st;
	int fd, r, err;

	if (fstatat(dirfd, rel->sun_path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_warnx("control socket: \"%s\" exists and is not a socket; not replacing it",
			  path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)rel, sizeof(*rel));
	err = errno;
	close(fd);
	if (r == 0 || err == EAGAIN) {
		log_warnx("control socket: another process listens on \"%s\"", path);
		return -EADDRINUSE;
	}
	if (unlinkat(dirfd, rel->sun_path, 0) < 0 && errno != ENOENT) {
		log_warn("control socket: cannot remove stale \"%s\"", path);
		return -errno;
	}
	return 0;
}

/*
 * Binds fd to rel's name in the working directory (dirfd), born with mode
 * SOCK_MODE: the file takes the socket's own mode, less the umask, at
 * bind.  A chmod afterwards would go through the path, and a chmod of the
 * socket's descriptor does not reach the file.  The file's identity goes
 * to *st.
 */
static int bind_in_dir(int fd, int dirfd, const char *path, const struct sockaddr_un *rel,
		       struct stat *st)
{
	mode_t old;
	int r;

	if (fchmod(fd, SOCK_MODE) < 0) {
		r = -errno;
		log_warn("control socket: cannot set the socket's mode");
		return r;
	}
	old = umask(0);
	r = bind(fd, (const struct sockaddr *)rel, sizeof(*rel));
	if (r < 0)
		r = -errno;
	umask(old);
	if (r < 0) {
		errno = -r;
		log_warn("control socket: cannot bind \"%s\"", path);
		return r;
	}
	if (fstatat(dirfd, rel->sun_path, st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = -errno;
		log_warn("control socket: cannot stat \"%s\"", path);
		return r;	/* without its identity the file cannot be told ours */
	}
	/*
	 * A default ACL on the directory overrides the umask.  Nobody else
	 * can change the directory's entries, so the name is still ours.
	 */
	if (!S_ISSOCK(st->st_mode) || (st->st_mode & 07777) != SOCK_MODE) {
		log_warnx("control socket: \"%s\" was made with mode %04o, not %04o (a default "
			  "ACL on its directory?)", path, (unsigned)(st->st_mode & 07777),
			  (unsigned)SOCK_MODE);
		unlinkat(dirfd, rel->sun_path, 0);
		return -EPERM;
	}
	return 0;
}

int ctlsock_listen(const char *path, int backlog, dev_t *ret_dev, ino_t *ret_ino)
{
	struct sockaddr_un rel = { .sun_family = AF_UNIX };
	struct stat st;
	int fd = -1, dirfd, cwd, r;

	if (path[0] != '/' || strlen(path) >= sizeof(rel.sun_path))
		return -EINVAL;
	dirfd = open_dir(path, rel.sun_path, sizeof(rel.sun_path));
	if (dirfd < 0)
		return dirfd;
	/* connect() and bind() take no directory: the checked one becomes the cwd. */
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || fchdir(dirfd) < 0) {
		r = -errno;
		log_warn("control socket: cannot enter the socket's directory");
		goto out;
	}
	r = remove_stale(dirfd, path, &rel);
	if (r < 0)
		goto back;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		log_warn("control socket: socket");
		goto back;
	}
	r = bind_in_dir(fd, dirfd, path, &rel, &st);
	if (r < 0)
		goto back;
	if (listen(fd, backlog) < 0) {
		r = -errno;
		log_warn("control socket: listen");
		unlinkat(dirfd, rel.sun_path, 0);	/* ours: nobody else can change the directory */
		goto back;
	}
back:
	if (fchdir(cwd) < 0 && r == 0) {
		r = -errno;
		log_warn("control socket: cannot return to the working directory");
		unlinkat(dirfd, rel.sun_path, 0);
	}
out:
	if (cwd >= 0)
		close(cwd);
	close(dirfd);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	*ret_dev = st.st_dev;
	*ret_ino = st.st_ino;
	return fd;
}

void ctlsock_unlink(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;

	if (lstat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
		unlink(path);
}
