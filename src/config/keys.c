/*
 * keys.c - key files and the locked keyring (keys.h).
 *
 * The file checks follow OpenBSD's check_file_secrecy() and WireGuard's
 * parse_keyfile(): a key others can read is no longer a key, so such a file
 * is refused rather than warned about.  Nothing here logs; callers get a
 * one-line reason that names the file but never its content.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "config/keys.h"

/* Error text stays one line even when a path holds control characters. */
static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	for (char *p = err; *p; p++) {
		if (iscntrl((unsigned char)*p))
			*p = '?';
	}
}

int key_decode_base64(const char *text, size_t textlen, uint8_t out[static KG_KEY_MAX],
		      size_t *ret_len, char *err, size_t errlen)
{
	/*
	 * Room for all a key file may hold, so that a long key is reported with
	 * its length: sodium's ERANGE also means "padding missing".
	 */
	uint8_t buf[KEYFILE_MAX_BYTES / 4 * 3 + 3];
	size_t len = 0;
	int r;

	/* The newline an editor or `knockgw genkey > file` adds is not key text. */
	while (textlen > 0 && isspace((unsigned char)text[textlen - 1]))
		textlen--;
	while (textlen > 0 && isspace((unsigned char)*text)) {
		text++;
		textlen--;
	}
	if (textlen == 0) {
		set_err(err, errlen, "is empty");
		return -EINVAL;
	}
	if (textlen > KEYFILE_MAX_BYTES) {
		set_err(err, errlen, "is longer than %d characters", KEYFILE_MAX_BYTES);
		return -EINVAL;
	}
	/*
	 * libsodium 1.0.18 decodes every byte >= 0x80 as '/' (its constant-time
	 * table assumes 7-bit input): only the alphabet and padding of RFC 4648
	 * section 4 may reach it, or a damaged file would load as another key.
	 */
	for (size_t i = 0; i < textlen; i++) {
		unsigned char ch = (unsigned char)text[i];

		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9') || ch == '+' || ch == '/' || ch == '=')) {
			set_err(err, errlen,
				"is not one line of standard base64 (RFC 4648, with padding)");
			return -EINVAL;
		}
	}

	/*
	 * No ignore set and no end pointer: sodium then rejects anything it did
	 * not consume, so a second line or stray character is an error rather
	 * than a silently shorter key.
	 */
	r = sodium_base642bin(buf, sizeof(buf), text, textlen, NULL, &len, NULL,
			      sodium_base64_VARIANT_ORIGINAL);
	if (r != 0 || len == 0) {
		set_err(err, errlen, "is not one line of standard base64 (RFC 4648, with padding)");
		r = -EINVAL;
	} else if (len > KG_KEY_MAX) {
		set_err(err, errlen, "holds %zu bytes; a key is 1..%d bytes", len, KG_KEY_MAX);
		r = -EINVAL;
	} else {
		memcpy(out, buf, len);
		*ret_len = len;
	}
	sodium_memzero(buf, sizeof(buf));
	return r;
}

enum file_rule file_rule_check(const struct stat *st, uid_t euid, mode_t forbidden)
{
	if (!S_ISREG(st->st_mode))
		return FILE_NOT_REGULAR;
	if (st->st_uid != 0 && st->st_uid != euid)
		return FILE_OWNER;
	if (st->st_mode & forbidden)
		return FILE_MODE;
	return FILE_OK;
}

/* Ownership and mode as check_file_secrecy() in OpenBSD's parse.y. */
static int check_secrecy(const char *path, const struct stat *st, char *err, size_t errlen)
{
	uid_t euid = geteuid();

	switch (file_rule_check(st, euid, FILE_SECRET_FORBIDDEN)) {
	case FILE_OK:
		break;
	case FILE_NOT_REGULAR:
		set_err(err, errlen, "key file \"%s\" is not a regular file", path);
		return -EINVAL;
	case FILE_OWNER:
		if (euid == 0)
			set_err(err, errlen,
				"key file \"%s\" is owned by uid %u; it must be owned by root",
				path, (unsigned)st->st_uid);
		else
			set_err(err, errlen,
				"key file \"%s\" is owned by uid %u; "
				"it must be owned by root or uid %u",
				path, (unsigned)st->st_uid, (unsigned)euid);
		return -EPERM;
	case FILE_MODE:
		set_err(err, errlen,
			"key file \"%s\" is readable or writable by group or others (mode %04o); "
			"chmod 600 it",
			path, (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	if (st->st_size > KEYFILE_MAX_BYTES) {
		set_err(err, errlen, "key file \"%s\" is larger than %d bytes", path,
			KEYFILE_MAX_BYTES);
		return -EFBIG;
	}
	return 0;
}

int key_file_read(const char *path, uint8_t out[static KG_KEY_MAX], size_t *ret_len, char *err,
		  size_t errlen)
{
	char text[KEYFILE_MAX_BYTES + 1];
	char why[128];
	struct stat st;
	size_t n = 0;
	int fd, r;

	/*
	 * O_NOFOLLOW: the checks below must describe the file we read, not a
	 * link someone else may point anywhere.  O_NONBLOCK: a FIFO in place of
	 * the key must be refused by fstat, not hang the daemon in open().
	 */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		if (r == -ELOOP)
			set_err(err, errlen, "key file \"%s\" is a symbolic link", path);
		else
			set_err(err, errlen, "cannot open key file \"%s\": %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		set_err(err, errlen, "cannot stat key file \"%s\": %s", path, strerror(-r));
		goto out;
	}
	r = check_secrecy(path, &st, err, errlen);
	if (r < 0)
		goto out;

	/* Read one byte more than allowed so that a file that grew is caught. */
	while (n < sizeof(text)) {
		ssize_t got = read(fd, text + n, sizeof(text) - n);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			set_err(err, errlen, "cannot read key file \"%s\": %s", path, strerror(-r));
			goto out;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if (n > KEYFILE_MAX_BYTES) {
		set_err(err, errlen, "key file \"%s\" is larger than %d bytes", path,
			KEYFILE_MAX_BYTES);
		r = -EFBIG;
		goto out;
	}
	r = key_decode_base64(text, n, out, ret_len, why, sizeof(why));
	if (r < 0)
		set_err(err, errlen, "key file \"%s\" %s", path, why);
out:
	sodium_memzero(text, sizeof(text));
	close(fd);
	return r;
}

int keyring_alloc(struct keyring *kr, size_t n)
{
	struct kg_key *keys;

	if (n == 0) {
		kr->n = 0;
		kr->keys = NULL;
		return 0;
	}
	/* sodium_malloc() needs the page size that sodium_init() looks up. */
	if (sodium_init() < 0)
		return -ENOMEM;
	keys = sodium_allocarray(n, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	/* sodium_malloc() fills with 0xdb so that use before init shows; we promise zeros. */
	sodium_memzero(keys, n * sizeof(*keys));
	kr->n = n;
	kr->keys = keys;
	return 0;
}

void keyring_seal(struct keyring *kr)
{
	if (kr->keys)
		sodium_mprotect_readonly(kr->keys);
}

void keyring_free(struct keyring *kr)
{
	/* sodium_free() makes the pages writable again, wipes and unlocks them. */
	if (kr->keys)
		sodium_free(kr->keys);
	kr->keys = NULL;
	kr->n = 0;
}

int key_generate_base64(char *buf, size_t buflen)
{
	enum { B64_LEN = sodium_base64_ENCODED_LEN(KG_NATIVE_KEY_LEN,
						   sodium_base64_VARIANT_ORIGINAL) };
	uint8_t key[KG_NATIVE_KEY_LEN];
	size_t len;

	/* Text, newline and NUL; B64_LEN counts the NUL already. */
	if (buflen < B64_LEN + 1)
		return -ENOSPC;
	if (sodium_init() < 0)
		return -ENOMEM;
	randombytes_buf(key, sizeof(key));
	sodium_bin2base64(buf, buflen, key, sizeof(key), sodium_base64_VARIANT_ORIGINAL);
	sodium_memzero(key, sizeof(key));
	len = strlen(buf);
	buf[len] = '\n';
	buf[len + 1] = '\0';
	return 0;
}
