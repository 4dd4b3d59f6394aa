/*
 * keys.h - key files and the locked keyring.
 *
 * A key file holds one line of standard base64 (RFC 4648, with padding): 32
 * bytes for native mode, 1..64 bytes for knock mode.  key_file_read() refuses
 * files that are not regular, are not owned by root or the effective uid, or
 * that group or others may read or write (a secret others could read is no
 * secret), and never puts key bytes into an error message.  The same rule,
 * file_rule_check(), decides whether a configuration file may hold a text
 * secret, and its weaker form whether a configuration may be read at all.
 *
 * The keyring is one sodium_malloc() block: locked in RAM (mlock), guarded,
 * excluded from core dumps, and wiped by keyring_free().
 */
#ifndef KNOCKGW_KEYS_H
#define KNOCKGW_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/isn.h"

enum { KEYFILE_MAX_BYTES = 4096 };

/*
 * Mode bits a file may not have: one holding a secret may be neither read
 * nor written by group or others; a configuration without one may be read
 * by them (it is 0644 in /etc like any other) but not written, since whoever
 * writes it decides which ports stay hidden and which keys open them.
 */
enum {
	FILE_SECRET_FORBIDDEN = 077,
	FILE_CONFIG_FORBIDDEN = 022,
};

enum file_rule {
	FILE_OK,
	FILE_NOT_REGULAR,
	FILE_OWNER,		/* owned by neither root nor euid */
	FILE_MODE,		/* has a bit of forbidden */
};

/*
 * Ownership and mode of an open file (its fstat), after OpenBSD's
 * check_file_secrecy(): a regular file owned by root or by euid, without
 * any bit of forbidden.  Pure; the caller words the refusal.
 */
enum file_rule file_rule_check(const struct stat *st, uid_t euid, mode_t forbidden);

/*
 * Reads and checks a key file.  On success writes the decoded bytes to out
 * and their count to *ret_len and returns 0.  On failure returns -errno (or
 * -EINVAL for bad content) and writes a one-line reason (no secret) to err.
 */
int key_file_read(const char *path, uint8_t out[static KG_KEY_MAX], size_t *ret_len, char *err,
		  size_t errlen);

/* Decodes one line of base64 key text; 0 or -EINVAL (with reason in err). */
int key_decode_base64(const char *text, size_t textlen, uint8_t out[static KG_KEY_MAX],
		      size_t *ret_len, char *err, size_t errlen);

struct keyring {
	size_t n;
	struct kg_key *keys;	/* sodium_allocarray(n), read-only once loaded */
};

/* 0 or -ENOMEM.  The keys are zeroed and writable until keyring_seal(). */
int keyring_alloc(struct keyring *kr, size_t n);
void keyring_seal(struct keyring *kr);
void keyring_free(struct keyring *kr);

/* Writes a fresh 32-byte key as base64 plus newline to buf; 0 or -ENOSPC. */
int key_generate_base64(char *buf, size_t buflen);

#endif
