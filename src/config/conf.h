/*
 * conf.h - knockgw.conf: load with libconfig, then validate.
 *
 * conf_load() reads the text (conf_text.c: files, @include, checks libconfig
 * would get wrong), parses it with libconfig and loads it through one schema
 * table (conf_schema.c: names, types, ranges, words, where each value goes),
 * so that every single setting is checked once, at its own line.  Then
 * conf_validate() (conf_validate.c) checks what involves more than one
 * setting - duplicates, references, key lengths per mode, limits against
 * each other - on the struct alone; it is pure.  Every problem is recorded
 * as one line "FILE:LINE: message" quoting the bad value; any error rejects
 * the whole file.  A struct conf owns its keyring (locked memory);
 * conf_free() wipes it.  Settings and their meaning: conf/knockgw.conf and
 * knockgw.conf(5); the per-packet lookups over a loaded struct: match.h.
 *
 * Files: conf_load() itself follows "@include "FILE"" lines (alone on their
 * line; FILE relative to the including file's directory), at most
 * CONF_MAX_INCLUDES of them and CONF_MAX_DEPTH files deep, a cycle being an
 * error, and gives each file the checks the main one gets, with messages
 * naming that file and its lines.  Every file must be owned by root or the
 * effective uid and not be writable by group or others; a file holding a
 * text secret must also pass the key file rule (no group or other access).
 * The struct's line numbers are lines of the file each setting was in.
 *
 * Schema: the rows of conf_schema.c, one per setting, each with its name,
 * type, range or words, default, and whether a reload may change it
 * (conf_defaults() and conf_restart_reason() are derived from them).  The
 * reference is knockgw.conf(5); conf/knockgw.conf names every setting, and
 * tests/conf checks both against the rows.
 */
#ifndef KNOCKGW_CONF_H
#define KNOCKGW_CONF_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/isn.h"
#include "common/marks.h"
#include "config/conf_paths.h"
#include "config/keys.h"
#include "config/match.h"

enum {
	CONF_NAME_MAX = 33,		/* 32 characters and NUL */
	CONF_MAX_KEYS = 256,
	CONF_MAX_PROTECT = 256,
	CONF_MAX_KNOCK = 256,
	CONF_MAX_ENTRY_KEYS = 16,
	CONF_MAX_ADDRS = 16,
	CONF_MAX_FROM = 16,		/* source prefixes a knock entry knocks for */
	CONF_MAX_FROM_IFACES = 16,	/* interfaces such SYNs may arrive on */
	CONF_IFNAME_MAX = 16,		/* IFNAMSIZ: 15 characters and NUL */
	CONF_MAX_PUBLIC = MATCH_MAX_PUBLIC,	/* public destinations of a protect entry */
	CONF_MAX_ERRORS = 32,
	CONF_ERR_LEN = 512,
	CONF_MAX_INCLUDES = 32,		/* @include'd files, in all */
	CONF_MAX_DEPTH = 8,		/* files open inside one another, the main one counted */
	CONF_NATIVE_REPLAY_WINDOWS = 3,	/* native: the server accepts epochs e-1, e, e+1 */
};

enum on_fail { ON_FAIL_RESET, ON_FAIL_DROP };
enum translate { TRANSLATE_KERNEL, TRANSLATE_USER };
/*
 * How a probe of a local port nobody listens on is answered: "daemon" (the
 * default) sends it through the queue and the daemon, as a probe of a
 * protected port is, so that the two cannot be told apart by their timing;
 * "kernel" leaves it to the kernel alone, faster than a protected port
 * answers.
 */
enum closed_ports { CLOSED_KERNEL, CLOSED_DAEMON };

/*
 * The three sets of queues, queue.count queues each (nftplan.h has what
 * goes where): SYNs (knocks to protected ports, this host's and routed
 * SYNs to knock destinations), probes (of closed ports, and segments of no
 * connection to protected ports), and data (integrity flows both ways, the
 * client's user path).  A flood of one never fills another's queue.
 */
enum conf_qset { QSET_SYN, QSET_PROBE, QSET_DATA, QSET_MAX };
/*
 * What the table does once the daemon is gone: "hide" keeps it, so that a
 * protected port answers every SYN like a closed port until the next start
 * replaces it; "open" deletes it (the ports are then as the services make
 * them).
 */
enum on_stop { ON_STOP_HIDE, ON_STOP_OPEN };
/*
 * SYNs without a TCP timestamp option under a protect entry: "optional"
 * verifies them (native mode also in the nonce form, isn.h; knock mode
 * without replay protection, since every such knock is the same ISN), and
 * "required" refuses them, so that every knock carries its full MAC.
 */
enum timestamps { TIMESTAMPS_OPTIONAL, TIMESTAMPS_REQUIRED };

/*
 * The lines of the settings conf_validate() quotes, recorded by the loader
 * in the slot the setting's schema row names (0: not written; messages then
 * quote the entry's own line).  Slot 0 is no slot.
 */
enum conf_line {
	CL_NONE, CL_QUEUE_NUM, CL_QUEUE_COUNT, CL_HOLD_BYTES, CL_HOLD_FLOW_BYTES, CL_FAIL_OPEN,
	CL_ON_STOP, CL_REFUSE_PORT, CL_MAX
};
enum entry_line { EL_NONE, EL_PORT, EL_KEYS, EL_INTEGRITY_LEN, EL_WINDOW, EL_REPLAY_TTL, EL_DST,
		  EL_KEY, EL_FORWARD, EL_FROM, EL_FROM_IFACES, EL_MAX };

struct conf_key {
	char name[CONF_NAME_MAX];
	int line;
	bool from_file;		/* file = ...; otherwise secret = "..." */
	size_t len;		/* raw key length; the bytes are in conf.keyring */
	bool broken;		/* conf_load already reported it; conf_validate skips it */
};

/*
 * A destination clients dial that a NAT outside this host rewrites before
 * it arrives (a protect entry's "public" list): a knock for it is valid too.
 */
struct conf_public {
	struct dest dst;		/* port 0: the entry's port */
	int line;			/* the element's own line */
};

struct conf_protect {
	int line;
	uint16_t port;
	enum kg_mode mode;
	size_t nkeys;
	int keys[CONF_MAX_ENTRY_KEYS];	/* indexes into conf.keys */
	uint16_t integrity_len;
	enum on_fail on_fail;
	uint32_t window;
	bool replay;
	uint32_t replay_ttl;		/* seconds, defaults already applied */
	size_t naddrs;			/* 0 = every local address */
	struct prefix addrs[CONF_MAX_ADDRS];
	bool forward;			/* addrs are hosts this one routes to */
	enum timestamps timestamps;	/* SYNs without a TCP timestamp option */
	size_t npublic;			/* 0: knocks for the packet's own destination only */
	struct conf_public pub[CONF_MAX_PUBLIC];
	bool has_window;		/* "window" was written (knock mode rejects it) */
	int lines[EL_MAX];		/* enum entry_line */
};

struct conf_knock {
	int line;
	struct prefix dst;
	uint16_t port;
	enum kg_mode mode;
	int key;			/* index into conf.keys */
	uint16_t integrity_len;
	uint32_t window;
	bool has_window;		/* "window" was written (knock mode rejects it) */
	/*
	 * Gateway client role: SYNs from these sources that this host routes
	 * to dst:port get the knock too (0: only this host's own SYNs).
	 * Either family; those of dst's family are the ones that apply.
	 */
	size_t nfrom;
	struct prefix from[CONF_MAX_FROM];
	/*
	 * Where such SYNs may arrive: these interfaces (by name), or, with
	 * none given, the one this host routes their source through (a
	 * reverse-path check).  Any other `from` SYN is dropped: a forged
	 * source from elsewhere gets no knock.
	 */
	size_t nifaces;
	char ifaces[CONF_MAX_FROM_IFACES][CONF_IFNAME_MAX];
	int lines[EL_MAX];		/* enum entry_line */
};

struct conf {
	char path[PATH_MAX];

	uint16_t queue_num;
	uint16_t queue_count;
	bool fail_open;
	uint32_t queue_maxlen;

	bool rules_manage;
	char table[CONF_NAME_MAX];
	uint32_t mark_mask, ct_mark_bit;	/* rules.mark_mask, rules.ct_mark_bit */
	uint32_t ct_label;		/* rules.ct_label: our label bits (marks.h) */
	uint16_t refuse_port;		/* rules.refuse_port: where refused SYNs are sent */
	enum on_stop on_stop;
	struct marks marks;		/* made from them once the file is valid */

	int log_level;			/* syslog LOG_* value */
	enum translate translate;
	enum closed_ports closed_ports;
	char control_socket[108];	/* sizeof(sun_path) */

	uint32_t max_flows;
	uint32_t max_replay;
	uint32_t hold_bytes;
	uint32_t hold_flow_bytes;
	uint32_t integrity_timeout;
	/* Refused knocks per source prefix (guess.h). */
	uint32_t guess_threshold, guess_window, guess_penalty;

	size_t nkeys;
	struct conf_key keys[CONF_MAX_KEYS];
	struct keyring keyring;		/* keyring.keys[i] belongs to keys[i] */

	size_t nprotect;
	struct conf_protect protect[CONF_MAX_PROTECT];
	size_t nknock;
	struct conf_knock knock[CONF_MAX_KNOCK];

	int lines[CL_MAX];		/* enum conf_line */
};

struct conf_errors {
	size_t n;
	bool overflow;			/* more errors than fit */
	char msg[CONF_MAX_ERRORS][CONF_ERR_LEN];	/* "FILE:LINE: message" */
};

/*
 * Sets every default (each schema row's, conf_schema.c); the struct is then
 * a valid empty configuration.
 */
void conf_defaults(struct conf *c);

/*
 * The settings whose change between a and b a reload cannot take, as
 * messages name them ("queue", "control_socket", ...; from the schema
 * rows), or NULL when a reload can take every change.
 */
const char *conf_restart_reason(const struct conf *a, const struct conf *b);

/*
 * Loads path into *c (which conf_load initialises).  Returns 0 when it loaded
 * and validated cleanly; otherwise -EINVAL (or -errno for an unreadable file)
 * with every problem in *errs.  On failure *c holds nothing to free.
 */
int conf_load(const char *path, struct conf *c, struct conf_errors *errs);

/*
 * conf_load() with texts in place of some files' (conf_text.h): each
 * overlay path, named as the loader names it (the main path as given, an
 * included file resolved against its includer's directory), reads as its
 * text.  What an edit would make is checked so before it is written.
 */
struct conf_overlay {
	size_t n;
	const char *const *path;
	const char *const *text;
};
int conf_load_overlay(const char *path, const struct conf_overlay *ov, struct conf *c,
		      struct conf_errors *errs);

/*
 * conf_load() of text in memory named path (conf_text_from()): the unit
 * tests of the schema drive the loader with it, no file needed.
 */
int conf_load_text(const char *path, const char *text, struct conf *c, struct conf_errors *errs);

/*
 * Pure cross-field checks of a loaded struct (every single setting was
 * checked by the loader); never reads past the fixed arrays whatever the
 * counts say.  Returns the number of errors added.
 */
size_t conf_validate(const struct conf *c, struct conf_errors *errs);

/* Appends "file:line: message" (conf.c, the ground floor every stage writes to). */
void conf_error(struct conf_errors *errs, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* conf_error() with a va_list. */
void conf_verror(struct conf_errors *errs, const char *file, int line, const char *fmt,
		 va_list ap) __attribute__((format(printf, 4, 0)));

/*
 * The settings `knockgw flush` and knock-connect need, read leniently from
 * a file that may not load (conf_peek.c; it reads no key file, which may be
 * root's alone): rules.table and control_socket only, each held
 * to its own rule and nothing else checked.  Each comes with where it came
 * from, for the command to say: "FILE:LINE" (set there), "default: not
 * set", or "default: REASON" when the file could not say (unreadable or
 * refused by the file rule, a syntax error, a bad value of that setting:
 * REASON is the "FILE:LINE: message"); assumed is then true.  failed: out
 * of memory, nothing is known.
 */
struct conf_peek {
	char table[CONF_NAME_MAX];
	char control_socket[108];		/* sizeof(sun_path) */
	char table_from[CONF_ERR_LEN + 16];	/* "default: " and an error line */
	char socket_from[CONF_ERR_LEN + 16];
	/*
	 * "" when control_socket is what the file says (set there, or not set
	 * in a file read whole); else the one line that says why it may not
	 * be, "FILE:LINE: message" (knock-connect -c reports it).
	 */
	char socket_why[CONF_ERR_LEN];
	bool assumed;
	bool failed;
};
void conf_peek(const char *path, struct conf_peek *p);

/* conf_peek() of text in memory named path, for the unit tests. */
void conf_peek_text(const char *path, const char *text, struct conf_peek *p);

/* Wipes and frees the keyring; safe on a zeroed or already freed struct. */
void conf_free(struct conf *c);

/*
 * conf_load() into a struct of its own: reports every error as
 * "FILE:LINE: message", to the log (to_log) or stderr.  NULL on any
 * error.  conf_destroy() wipes and frees it (NULL is fine).
 */
struct conf *conf_load_file(const char *path, bool to_log);
void conf_destroy(struct conf *c);

/*
 * The first queue number of a set: the SYN set is queue.num ..
 * num + count - 1, the probe set the count numbers after it and the data
 * set the count after those; where that would pass 65535, the probe and
 * data sets take the 2 x count numbers below num instead.
 */
uint16_t conf_queue_first(const struct conf *c, enum conf_qset set);

#endif
