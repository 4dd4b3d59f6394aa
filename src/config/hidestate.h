/*
 * hidestate.h - the saved hiding state: what hides the protected ports
 * after a reboot whose start fails.
 *
 * The nftables table does not survive a reboot.  So that a daemon that
 * cannot start (a broken configuration or key file) still leaves the last
 * good protected ports answering like closed ports, every successful start
 * and reload saves this state in the unit's state directory
 * ($STATE_DIRECTORY, /var/lib/knockgw), and the unit's first step, `knockgw
 * hide` (cmd/hide.c), installs the hiding table from it before anything
 * else, when no table of the daemon's is in place.
 *
 * The state is itself a knockgw configuration, holding exactly the
 * settings the hiding table is made from (queue num, count and fail_open;
 * rules.table, mark_mask, ct_mark_bit and refuse_port; translate;
 * closed_ports; each protect entry's port, addresses, forward, on_fail and
 * integrity_len; each knock entry's dst, port, integrity_len, from and
 * from_interfaces).  It
 * is loaded by the same loader, with the same checks, as knockgw.conf, and
 * the binary that loads it makes the table from it as the daemon does at a
 * stop (nftplan_make_hiding), so the two cannot differ.  It holds no key
 * of the configuration's: every entry names one text secret drawn at
 * random when the file is written and given to no one (a daemon run on
 * this file would let no knock in).
 *
 * hidestate_save() writes a temporary file beside it (mode 0600, as a file
 * holding a secret must be), fsyncs it, renames it over the state and
 * fsyncs the directory: after a crash or a power loss the state is the old
 * one or the new one, never part of one.
 */
#ifndef KNOCKGW_HIDESTATE_H
#define KNOCKGW_HIDESTATE_H

#include <stddef.h>
#include <stdio.h>

#include "config/conf.h"

/* The file in the state directory. */
#define HIDESTATE_FILE "hiding.conf"

/*
 * The state's text for c on f; secret names the one key (printable, no
 * '"' or '\\'; hidestate_save() draws it).  0, or -EIO when f failed.
 */
int hidestate_print(const struct conf *c, const char *secret, FILE *f);

/* Where the unit keeps its state, when no directory is named. */
#define HIDESTATE_DEFAULT_DIR "/var/lib/knockgw"

/*
 * The state directory systemd gives the unit (StateDirectory=): the first
 * of $STATE_DIRECTORY's colon-separated directories, copied into buf.
 * Without it, fallback (which may be NULL).
 */
const char *hidestate_dir(char *buf, size_t buflen, const char *fallback);

/*
 * dir/HIDESTATE_FILE into path: 0, or -ENAMETOOLONG.
 */
int hidestate_path(const char *dir, char *path, size_t pathlen);

/*
 * Saves c's state as dir/HIDESTATE_FILE, atomically; 0, or -errno with
 * the reason in err (the old state, if any, stays).
 */
int hidestate_save(const struct conf *c, const char *dir, char *err, size_t errlen);

/*
 * The table the state in dir names, into table (CONF_NAME_MAX bytes): 0;
 * -ENOENT when there is no state, -EINVAL when it does not load.
 */
int hidestate_table(const char *dir, char table[static CONF_NAME_MAX]);

/*
 * Removes dir/HIDESTATE_FILE: 1 removed, 0 there was none, or -errno.
 */
int hidestate_remove(const char *dir);

#endif
