/*
 * test_ctlsock.c - the control socket's file (ctlsock.[ch]).
 *
 * First the directory rule (ctlsock_dir_check), row by row on made-up stat
 * results: owner root or the running user, no write for group or others.
 * Then ctlsock_listen() in directories under a fresh temporary one (made
 * by it, private, open to the group or to all, sticky, a file or a symlink
 * already at the name, a stale socket): the result, the socket file's mode
 * 0666, and that a refusal leaves the directory as it was and a symlink's
 * target untouched.  Needs no root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl/ctlsock.h"
#include "unit.h"

static const struct {
	mode_t mode;
	uid_t uid, euid;
	enum ctlsock_dir want;
} dir_rows[] = {
	{ S_IFDIR | 0755, 0, 0, CTLSOCK_DIR_OK },
	{ S_IFDIR | 0700, 0, 0, CTLSOCK_DIR_OK },
	{ S_IFDIR | 0755, 1000, 1000, CTLSOCK_DIR_OK },		/* the running user's */
	{ S_IFDIR | 0755, 0, 1000, CTLSOCK_DIR_OK },		/* root's, daemon not root */
	{ S_IFDIR | 0555, 0, 0, CTLSOCK_DIR_OK },
	{ S_IFDIR | 0775, 0, 0, CTLSOCK_DIR_WRITABLE },
	{ S_IFDIR | 0757, 0, 0, CTLSOCK_DIR_WRITABLE },
	{ S_IFDIR | 0777, 0, 0, CTLSOCK_DIR_WRITABLE },
	{ S_IFDIR | 01777, 0, 0, CTLSOCK_DIR_WRITABLE },	/* /tmp: sticky is no help */
	{ S_IFDIR | 0755, 65534, 0, CTLSOCK_DIR_FOREIGN },	/* nobody's */
	{ S_IFDIR | 0700, 1000, 0, CTLSOCK_DIR_FOREIGN },	/* a user's, daemon root */
	{ S_IFDIR | 0755, 1001, 1000, CTLSOCK_DIR_FOREIGN },
	{ S_IFDIR | 0777, 65534, 0, CTLSOCK_DIR_FOREIGN },	/* both: the owner is said */
	{ S_IFREG | 0644, 0, 0, CTLSOCK_DIR_NOT_DIR },
	{ S_IFLNK | 0777, 0, 0, CTLSOCK_DIR_NOT_DIR },
};

enum prep { MADE, PRIVATE, OPEN_GROUP, OPEN_ALL, STICKY_ALL, A_FILE, A_SYMLINK, STALE, NOT_DIR };

static const struct {
	const char *what;
	enum prep prep;
	int want;		/* 0 or -errno */
} listen_rows[] = {
	{ "a missing directory is made, the socket 0666", MADE, 0 },
	{ "a private directory", PRIVATE, 0 },
	{ "a group-writable directory is refused", OPEN_GROUP, -EPERM },
	{ "a world-writable directory is refused", OPEN_ALL, -EPERM },
	{ "a sticky /tmp-like directory is refused", STICKY_ALL, -EPERM },
	{ "a file at the name is not replaced", A_FILE, -EEXIST },
	{ "a symlink at the name is not followed", A_SYMLINK, -EEXIST },
	{ "a stale socket is replaced", STALE, 0 },
	{ "a file where the directory should be", NOT_DIR, -ENOTDIR },
};

/* The symlink row's target: a file nobody may change, which must stay 0600. */
static int prepare(const char *top, const char *dir, const char *path, enum prep p)
{
	static const mode_t modes[] = { [PRIVATE] = 0700, [OPEN_GROUP] = 0770, [OPEN_ALL] = 0777,
					[STICKY_ALL] = 01777, [A_FILE] = 0700, [A_SYMLINK] = 0700,
					[STALE] = 0700 };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char target[300];
	int fd;

	switch (p) {
	case MADE:
		return 0;
	case NOT_DIR:
		fd = open(dir, O_WRONLY | O_CREAT | O_EXCL, 0600);
		return fd < 0 ? -1 : close(fd);
	default:
		break;
	}
	if (mkdir(dir, 0700) < 0 || chmod(dir, modes[p]) < 0)
		return -1;
	switch (p) {
	case A_FILE:
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		return fd < 0 ? -1 : close(fd);
	case A_SYMLINK:
		snprintf(target, sizeof(target), "%s/target", top);
		fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || close(fd) < 0)
			return -1;
		return symlink(target, path);
	case STALE:
		/* A socket bound and closed: its file stays, nobody listens. */
		if (strlen(path) >= sizeof(sun.sun_path))
			return -1;
		memcpy(sun.sun_path, path, strlen(path) + 1);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
			return -1;
		return close(fd);
	default:
		return 0;
	}
}

static void listen_row(const char *top, size_t i)
{
	char dir[256], path[300], target[300];
	struct stat st, tst;
	dev_t dev = 0;
	ino_t ino = 0;
	int fd;

	snprintf(dir, sizeof(dir), "%s/%zu", top, i);
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	snprintf(target, sizeof(target), "%s/target", top);
	if (prepare(top, dir, path, listen_rows[i].prep) < 0) {
		CHECK(0, "%s: setting up", listen_rows[i].what);
		return;
	}
	fd = ctlsock_listen(path, 4, &dev, &ino);
	CHECK(fd == listen_rows[i].want || (fd >= 0 && listen_rows[i].want == 0),
	      "%s: got %d, want %d", listen_rows[i].what, fd, listen_rows[i].want);
	if (fd >= 0) {
		CHECK(lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
			      (st.st_mode & 07777) == 0666 && st.st_dev == dev && st.st_ino == ino,
		      "%s: the file is our socket, mode 0666", listen_rows[i].what);
		CHECK(listen_rows[i].prep != MADE ||
			      (stat(dir, &st) == 0 && (st.st_mode & 07777) == 0755),
		      "%s: the directory made is 0755", listen_rows[i].what);
		ctlsock_unlink(path, dev, ino);
		CHECK(lstat(path, &st) < 0 && errno == ENOENT, "%s: unlinked", listen_rows[i].what);
		close(fd);
		return;
	}
	switch (listen_rows[i].prep) {
	case A_SYMLINK:
		CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode),
		      "%s: the symlink stays", listen_rows[i].what);
		CHECK(stat(target, &tst) == 0 && (tst.st_mode & 07777) == 0600,
		      "%s: its target stays 0600", listen_rows[i].what);
		break;
	case A_FILE:
		CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode), "%s: the file stays",
		      listen_rows[i].what);
		break;
	case NOT_DIR:
		break;
	default:
		CHECK(lstat(path, &st) < 0 && errno == ENOENT, "%s: no file made",
		      listen_rows[i].what);
	}
}

int main(void)
{
	char top[] = "/tmp/test_ctlsock-XXXXXX";

	for (size_t i = 0; i < sizeof(dir_rows) / sizeof(dir_rows[0]); i++) {
		struct stat st = { .st_mode = dir_rows[i].mode, .st_uid = dir_rows[i].uid };

		CHECK_EQ_U(ctlsock_dir_check(&st, dir_rows[i].euid), dir_rows[i].want,
			   "dir row %zu (mode %o, uid %u, euid %u)", i + 1,
			   (unsigned)dir_rows[i].mode, (unsigned)dir_rows[i].uid,
			   (unsigned)dir_rows[i].euid);
	}
	if (!mkdtemp(top)) {
		printf("not ok: mkdtemp\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(listen_rows) / sizeof(listen_rows[0]); i++)
		listen_row(top, i);
	/* Best effort: the tree is ours and small. */
	{
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", top);
	}
	return unit_done("ctlsock");
}
