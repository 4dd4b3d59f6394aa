/*
 * ctlsock.c - the control socket's file (see ctlsock.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctlsock.h"
#include "log.h"

/* The socket's directory: made 0755 when missing, left alone when present. */
static int make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;	/* directly under / */
	*slash = '\0';
	if (mkdir(dir, 0755) == 0) {
		/* mkdir's mode went through the umask; the contract says 0755. */
		if (chmod(dir, 0755) < 0) {
			log_warn("control socket: cannot chmod \"%s\"", dir);
			return -errno;
		}
		return 0;
	}
	if (errno != EEXIST) {
		log_warn("control socket: cannot create directory \"%s\"", dir);
		return -errno;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_warnx("control socket: \"%s\" is not a directory", dir);
		return -ENOTDIR;
	}
	return 0;
}

/*
 * A socket file left by a daemon that died is removed; a live one (another
 * knockgw answers) and anything that is not a socket are not ours to take.
 */
static int remove_stale(const char *path, const struct sockaddr_un *sun)
{
	struct stat st;
	int fd, r, err;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_warnx("control socket: \"%s\" exists and is not a socket; not replacing it",
			  path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	err = errno;
	close(fd);
	if (r == 0 || err == EAGAIN) {
		log_warnx("control socket: another process listens on \"%s\"", path);
		return -EADDRINUSE;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		log_warn("control socket: cannot remove stale \"%s\"", path);
		return -errno;
	}
	return 0;
}

int ctlsock_listen(const char *path, int backlog, dev_t *ret_dev, ino_t *ret_ino)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	size_t len = strlen(path);
	int fd, r;

	if (path[0] != '/' || len >= sizeof(sun.sun_path))
		return -EINVAL;
	memcpy(sun.sun_path, path, len + 1);
	r = make_parent(path);
	if (r == 0)
		r = remove_stale(path, &sun);
	if (r < 0)
		return r;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		log_warn("control socket: socket");
		return r;
	}
	if (bind(fd, (const struct sockaddr *)&sun, sizeof(sun)) < 0) {
		r = -errno;
		log_warn("control socket: cannot bind \"%s\"", path);
		close(fd);
		return r;
	}
	/* From here on the file is ours, to remove on failure. */
	if (lstat(path, &st) < 0) {
		r = -errno;
		log_warn("control socket: cannot stat \"%s\"", path);
		close(fd);	/* without its identity the file cannot be told ours */
		return r;
	}
	/* Every local user may ask; each request is authorised on its own. */
	if (chmod(path, 0666) < 0) {
		r = -errno;
		log_warn("control socket: cannot chmod \"%s\"", path);
		goto fail;
	}
	if (listen(fd, backlog) < 0) {
		r = -errno;
		log_warn("control socket: listen");
		goto fail;
	}
	*ret_dev = st.st_dev;
	*ret_ino = st.st_ino;
	return fd;
fail:
	close(fd);
	ctlsock_unlink(path, st.st_dev, st.st_ino);
	return r;
}

void ctlsock_unlink(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;

	if (lstat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
		unlink(path);
}
