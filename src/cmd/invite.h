/*
 * invite.h - `knockgw invite` (invite_main(), commands.h): the key, the
 * change to the server's configuration, the text (invite_text.h says what
 * the command does and prints).
 *
 * And the new key file it writes, which the unit tests exercise alone.
 *
 * The key file is what key_file_read() (keys.h) accepts: one line of base64,
 * a regular file owned by the caller (root, for the daemon), mode 0600.
 * It is created, never replaced (O_EXCL: an existing key may be in use),
 * in a directory that only its owner may change, made 0700 when missing,
 * and synced before success is reported.  Messages never hold key bytes.
 */
#ifndef KNOCKGW_INVITE_H
#define KNOCKGW_INVITE_H

#include <stddef.h>

/*
 * Creates dir/file holding text.  dir is created (mode 0700) when missing,
 * its parent must exist; an existing dir must be a directory owned by root
 * or the caller that group and others may not write to.  Returns 0, or
 * -errno with a one-line reason in err (-EEXIST when the file exists); a
 * failure leaves no file behind that this call made.
 */
int invite_write_key(const char *dir, const char *file, const char *text, char *err, size_t errlen);

#endif
