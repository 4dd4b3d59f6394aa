/*
 * invite.c - `knockgw invite`: the key, the change to the server's
 * configuration, the text (invite_text.h; the command's contract is there),
 * and the new key file, created safely (invite.h).
 *
 * Order: the plan first, so that a configuration invite cannot change
 * refuses before any key is written; then the key (read back as the daemon
 * will read it); then the change checked with the daemon's loader; then
 * the text and, with --apply, the change written and the daemon reloaded.
 * A key this run made is removed again when --apply fails: nothing refers
 * to it.  With --apply, a key file of that name that an earlier invite
 * (without --apply) wrote is taken as it is, so that a preview and the
 * --apply after it agree.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cmd/commands.h"
#include "cmd/conf_apply.h"
#include "cmd/invite.h"
#include "cmd/invite_text.h"
#include "config/conf.h"
#include "config/keys.h"

#define PROG "knockgw invite"

/* ------------------------------------------------------------- the key file */

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

int invite_write_key(const char *dir, const char *file, const char *text, char *err, size_t errlen)
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

/* ------------------------------------------------------------- the command */

/*
 * The absolute path the key will have: DIR/NAME.key with DIR resolved
 * (its parent when DIR is still to be made).  The configuration needs it
 * absolute: a relative one would be the configuration's.
 */
static int key_path_of(const struct invite_args *a, const char *file, char *out, size_t size)
{
	char dir[PATH_MAX], copy[PATH_MAX], parent[PATH_MAX];

	if (!realpath(a->keys_dir, dir)) {
		snprintf(copy, sizeof(copy), "%s", a->keys_dir);
		if (errno != ENOENT || !realpath(dirname(copy), parent))
			return -errno;
		snprintf(copy, sizeof(copy), "%s", a->keys_dir);
		if (snprintf(dir, sizeof(dir), "%s/%s", parent, basename(copy)) >= (int)sizeof(dir))
			return -ENAMETOOLONG;
	}
	if (snprintf(out, size, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", file) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

/* The key file's line, from the key in it (a key an earlier invite wrote). */
static int key_line(const char *path, char *b64, size_t size)
{
	uint8_t key[KG_KEY_MAX];
	char err[PATH_MAX + 256];
	size_t len;
	int r = key_file_read(path, key, &len, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return r;
	}
	if (sodium_base64_encoded_len(len, sodium_base64_VARIANT_ORIGINAL) + 1 > size) {
		sodium_memzero(key, sizeof(key));
		return -ENOSPC;
	}
	sodium_bin2base64(b64, size, key, len, sodium_base64_VARIANT_ORIGINAL);
	strcat(b64, "\n");
	sodium_memzero(key, sizeof(key));
	return 0;
}

/*
 * The change planned on the server's configuration, into *ca: 0; 1 when
 * there is no configuration to change (a preview then shows none); or -1,
 * said on stderr.
 */
static int plan(const struct invite_args *a, const char *conf, const char *key_path,
		struct conf_apply *ca)
{
	struct confedit_invite req = { a->name, key_path, a->port, a->mode, a->integrity_len };
	int r;

	if (!a->apply && access(conf, F_OK) < 0)
		return 1;
	if (conf_apply_open(ca, PROG, conf, stderr) < 0)
		return -1;
	r = confedit_invite(&ca->t, ca->m, &req, ca->plan);
	if (r < 0) {
		fprintf(stderr, PROG ": %s: %s\n", conf, r == -ENOMEM ? "out of memory" : ca->plan->why);
		return -1;
	}
	return 0;
}

int invite_main(int argc, char **argv)
{
	struct invite_args a;
	struct conf_apply ca;
	char path[PATH_MAX + INVITE_NAME_MAX + 8], file[INVITE_NAME_MAX + 8];
	char b64[128], err[PATH_MAX + 256];
	bool made = false;
	const char *conf;
	int r = invite_parse_args(argc, argv, &a), planned, rc = 1;

	if (r == INVITE_HELP)
		return 0;
	if (r != INVITE_RUN)
		return r;
	memset(&ca, 0, sizeof(ca));
	conf = a.conf ? a.conf : CONF_DEFAULT_PATH;
	snprintf(file, sizeof(file), "%s.key", a.name);
	r = key_path_of(&a, file, path, sizeof(path));
	if (r < 0) {
		fprintf(stderr, PROG ": %s: %s\n", a.keys_dir, strerror(-r));
		return 1;
	}
	planned = plan(&a, conf, path, &ca);
	if (planned < 0 && a.apply)
		goto out;
	if (planned < 0) {
		fprintf(stderr, PROG ": note: the change to %s cannot be shown; the pieces below are "
				"to merge by hand\n", conf);
		conf_apply_free(&ca);
	}

	if (key_generate_base64(b64, sizeof(b64)) < 0) {
		fprintf(stderr, PROG ": cannot make a key\n");
		goto out;
	}
	r = invite_write_key(a.keys_dir, file, b64, err, sizeof(err));
	if (r == -EEXIST && a.apply) {
		fprintf(stderr, PROG ": note: using the key already in %s (an earlier invite wrote "
				"it)\n", path);
		r = key_line(path, b64, sizeof(b64));
		if (r < 0)
			goto out;
	} else if (r < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		goto out;
	} else {
		made = true;
		/* Read back as the daemon will read it. */
		uint8_t key[KG_KEY_MAX];
		size_t key_len;

		r = key_file_read(path, key, &key_len, err, sizeof(err));
		sodium_memzero(key, sizeof(key));
		if (r < 0) {
			fprintf(stderr, PROG ": the new key does not load: %s\n", err);
			goto out;
		}
	}
	if (planned == 0) {
		r = conf_apply_check(&ca, false, stderr);
		if (r < 0 && a.apply)
			goto out;
		if (r < 0) {
			fprintf(stderr, PROG ": note: the pieces below are to merge by hand\n");
			planned = -1;
		} else if (ca.plan->window >= 0) {
			a.has_window = true;
			a.window = (unsigned)ca.plan->window;
		}
	}

	invite_print_head(stdout, &a, path);
	if (planned == 0) {
		printf("# === server: %s\n", conf);
		printf("# %s%s\n", a.apply ? "Changed" : "knockgw invite ... --apply makes this change",
		       ca.plan->new_entry ? " (a new protect entry)" : " (the key joins the protect "
								 "entry for the port)");
		fflush(stdout);
		conf_apply_diff(&ca, stdout);
	} else {
		invite_print_server(stdout, &a, path);
	}
	if (a.apply) {
		fflush(stdout);
		if (conf_apply_write(&ca, stdout, stderr) < 0)
			goto out;
		made = false;	/* in use now */
		rc = conf_apply_reload(&ca, stdout, stderr);
		putchar('\n');
	} else {
		rc = 0;
		if (planned == 0)
			putchar('\n');
	}
	r = invite_print_client(stdout, &a, path, a.show_key ? b64 : NULL);
	if (r < 0 || fflush(stdout) != 0) {
		fprintf(stderr, PROG ": cannot write the configuration: %s (the key stays in %s; remove "
				"it to start over)\n", strerror(errno), path);
		rc = 1;
	}
	/* The daemon runs as root and takes key files that are root's only. */
	if (geteuid() != 0)
		fprintf(stderr, PROG ": note: %s is owned by uid %u; the daemon, as root, needs it "
				"root's (chown root %s)\n", path, (unsigned)geteuid(), path);
out:
	if (made && a.apply && rc != 0 && unlink(path) == 0)
		fprintf(stderr, PROG ": removed the new key %s again: nothing refers to it\n", path);
	sodium_memzero(b64, sizeof(b64));
	conf_apply_free(&ca);
	return rc;
}
