/*
 * keywrite.c - a new key file, created safely (keywrite.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/keywrite.h"

/* The directory, opened; made 0700 when missing.  fd or -errno (err set). */
static int open_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int dfd;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(e));
		return -e;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot open %s: %s", dir, strerror(e));
		return -e;
	}
	/*
	 * Whoever may write the directory may swap the key for one of theirs
	 * after we wrote it: the directory must be as private as the key.
	 */
	if (fstat(dfd, &st) < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot stat %s: %s", dir, strerror(e));
		close(dfd);
		return -e;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s is owned by uid %u, neither root nor you: refusing to put "
			 "a key there", dir, (unsigned)st.st_uid);
		close(dfd);
		return -EPERM;
	}
	if (st.st_mode & 022) {
		snprintf(err, errlen, "%s is writable by group or others (mode %04o): refusing to put "
			 "a key there (chmod 700 %s)", dir, (unsigned)(st.st_mode & 07777), dir);
		close(dfd);
		return -EPERM;
	}
	return dfd;
}

int keywrite_new(const char *dir, const char *file, const char *text, char *err, size_t errlen)
{
	size_t len = strlen(text), done = 0;
	int dfd, fd, e = 0;

	dfd = open_dir(dir, err, errlen);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
		    0600);
	if (fd < 0) {
		e = errno;
		if (e == EEXIST)
			snprintf(err, errlen, "%s/%s exists: a key is never replaced (remove it "
				 "first, or choose another name)", dir, file);
		else
			snprintf(err, errlen, "cannot create %s/%s: %s", dir, file, strerror(e));
		close(dfd);
		return -e;
	}
	/* The umask could only take bits away; 0600 exactly is what the loader wants. */
	if (fchmod(fd, 0600) < 0)
		e = errno;
	while (!e && done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			e = n < 0 ? errno : EIO;
		else
			done += (size_t)n;
	}
	if (!e && fsync(fd) < 0)
		e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	if (!e && fsync(dfd) < 0)
		e = errno;
	if (e) {
		snprintf(err, errlen, "cannot write %s/%s: %s", dir, file, strerror(e));
		unlinkat(dfd, file, 0);
	}
	close(dfd);
	return -e;
}
