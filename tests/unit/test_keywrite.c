/*
 * test_keywrite.c - a new key file, created safely (invite_write_key(), cmd/invite.[ch]).
 *
 * Each row prepares a directory under a fresh temporary one (missing,
 * private, open to others, with the file already there, not a directory),
 * calls invite_write_key() and checks the result, the file's mode and content,
 * and that a refusal leaves no file.  Needs no root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/invite.h"
#include "unit.h"

#define TEXT "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE=\n"

enum prep { MISSING, PRIVATE, OPEN_GROUP, OPEN_ALL, STICKY_ALL, EXISTS, PLAIN_FILE, NO_PARENT };

static const struct {
	const char *what;
	enum prep prep;
	int want;		/* 0 or -errno */
	const char *err;	/* in the message, for a refusal */
} rows[] = {
	{ "a missing directory is made 0700", MISSING, 0, NULL },
	{ "a private directory", PRIVATE, 0, NULL },
	{ "a group-writable directory is refused", OPEN_GROUP, -EPERM, "writable by group" },
	{ "a world-writable directory is refused", OPEN_ALL, -EPERM, "writable by group" },
	{ "a sticky /tmp-like directory is refused", STICKY_ALL, -EPERM, "writable by group" },
	{ "an existing key is never replaced", EXISTS, -EEXIST, "exists" },
	{ "a file where the directory should be", PLAIN_FILE, -ENOTDIR, "cannot open" },
	{ "a missing parent", NO_PARENT, -ENOENT, "cannot create" },
};

static int prepare(const char *dir, enum prep p)
{
	static const mode_t modes[] = { [PRIVATE] = 0700, [OPEN_GROUP] = 0770, [OPEN_ALL] = 0777,
					[STICKY_ALL] = 01777, [EXISTS] = 0700 };
	char path[512];
	int fd;

	switch (p) {
	case MISSING:
	case NO_PARENT:
		return 0;
	case PLAIN_FILE:
		fd = open(dir, O_WRONLY | O_CREAT | O_EXCL, 0600);
		return fd < 0 ? -1 : close(fd);
	default:
		if (mkdir(dir, 0700) < 0 || chmod(dir, modes[p]) < 0)
			return -1;
		if (p != EXISTS)
			return 0;
		snprintf(path, sizeof(path), "%s/k.key", dir);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || write(fd, "old\n", 4) != 4)
			return -1;
		return close(fd);
	}
}

int main(void)
{
	char top[] = "/tmp/test_keywrite-XXXXXX";

	if (!mkdtemp(top)) {
		printf("not ok: mkdtemp\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char dir[256], path[300], err[512] = "", buf[128] = "";
		struct stat st;
		bool had = rows[i].prep == EXISTS;
		int r, fd;
		ssize_t n = 0;

		snprintf(dir, sizeof(dir), "%s/%zu%s", top, i, rows[i].prep == NO_PARENT ? "/x/y" : "");
		snprintf(path, sizeof(path), "%s/k.key", dir);
		if (prepare(dir, rows[i].prep) < 0) {
			CHECK(0, "%s: setting up", rows[i].what);
			continue;
		}
		r = invite_write_key(dir, "k.key", TEXT, err, sizeof(err));
		CHECK(r == rows[i].want, "%s: got %d, want %d (%s)", rows[i].what, r, rows[i].want, err);
		if (rows[i].err)
			CHECK(strstr(err, rows[i].err) != NULL, "%s: message \"%s\"", rows[i].what, err);
		CHECK(strstr(err, "Zm9v") == NULL, "%s: no key in the message", rows[i].what);
		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
		}
		if (rows[i].want == 0) {
			CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 &&
				      st.st_uid == geteuid(), "%s: the file is 0600 and ours", rows[i].what);
			CHECK(n == (ssize_t)strlen(TEXT) && strcmp(buf, TEXT) == 0,
			      "%s: the file holds the text", rows[i].what);
			CHECK(stat(dir, &st) == 0 && (rows[i].prep != MISSING ||
						      (st.st_mode & 07777) == 0700),
			      "%s: the directory's mode", rows[i].what);
		} else if (had) {
			CHECK(n == 4 && strcmp(buf, "old\n") == 0, "%s: the old file is untouched",
			      rows[i].what);
		} else {
			CHECK(fd < 0, "%s: no file left", rows[i].what);
		}
	}
	/* Best effort: the tree is ours and small. */
	{
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", top);
	}
	return unit_done("keywrite");
}
