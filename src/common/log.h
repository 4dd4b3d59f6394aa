/*
 * log.h - the daemon's logging, after OpenBSD's log.c.
 *
 * stderr in the foreground (-f), syslog(LOG_DAEMON) otherwise; the systemd
 * journal instead, through its native protocol, where it is there: in the
 * foreground when stderr is the journal's stream (systemd says so in
 * $JOURNAL_STREAM: a service's stderr), otherwise when journald's socket
 * exists.  A terminal under -f gets stderr, never the journal.  A message
 * the journal does not take goes the other way.  log_warn appends
 * strerror(errno); log_warnx does not.  Messages a peer can trigger go
 * through log_peer(), which is debug level and rate limited, and each one
 * is also a counter somewhere.  Never pass a secret.
 *
 * Threads: every function may be called from any thread.  log_init() runs
 * once, before any thread starts; the level is atomic, so log_setlevel() (a
 * reload, in the main thread) may run while queue threads log.
 */
#ifndef KNOCKGW_LOG_H
#define KNOCKGW_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

void log_init(int foreground, int level, const char *ident);
void log_setlevel(int level);
int log_getlevel(void);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Rate limit for messages peers can trigger: at most burst messages per
 * interval seconds; the state lives in the caller's context, not here.
 */
struct log_ratelimit {
	uint64_t window_start;
	uint32_t interval, burst, printed, suppressed;
};

void log_peer(struct log_ratelimit *rl, uint64_t now, int level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Events a log tool acts on (fail2ban, an alert): logged as their plain
 * message, the same text as any other, and in the journal with fields:
 * KNOCKGW_EVENT (log_event_name()), KNOCKGW_SOURCE (an address, or a
 * prefix "addr/len" for a guessing source), KNOCKGW_PORT (the protected
 * port), KNOCKGW_KEY (the key's name), each only when the event has it,
 * and MESSAGE_ID, one fixed 128-bit id per kind (log_event_id(); listed
 * in knockgw(8)).
 */
enum log_event_kind {
	LOG_EV_KNOCK_ACCEPTED,
	LOG_EV_KNOCK_REFUSED,
	LOG_EV_GUESSING,		/* a source crossed the guessing threshold */
	LOG_EV_INTEGRITY_FAILED,
	LOG_EV_RELOADED,
	LOG_EV_RELOAD_REFUSED,
	LOG_EV_MAX
};

struct log_event {
	enum log_event_kind kind;
	const char *source;		/* NULL: none */
	unsigned port;			/* 0: none */
	const char *key;		/* NULL: none */
};

const char *log_event_name(enum log_event_kind k);
const char *log_event_id(enum log_event_kind k);	/* 32 lowercase hex digits */

void log_event(int pri, const struct log_event *ev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* log_peer() for an event: the same rate limit, the event's fields. */
void log_peer_event(struct log_ratelimit *rl, uint64_t now, int level, const struct log_event *ev,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Messages a queue thread holds until the packets that caused them have
 * their verdicts: a write to the journal or stderr takes microseconds
 * (about 8 us per accepted knock on the bench's machine) that a knock
 * should not wait for.  log_peer_event_later() takes the rate limit's turn
 * and formats the message now, copying the event's strings; the caller
 * writes what it held with log_later_flush() once its verdicts are out.
 * The holder is the caller's (one per queue thread); when it is full a
 * message goes out at once.
 */
enum { LOG_LATER_MAX = 8, LOG_LATER_LEN = 256, LOG_LATER_FIELD = 64 };

struct log_later_msg {
	int pri;
	bool has_event;
	struct log_event ev;		/* source and key point into the copies */
	char source[LOG_LATER_FIELD], key[LOG_LATER_FIELD];
	char msg[LOG_LATER_LEN];
};

struct log_later {
	unsigned n;
	struct log_later_msg m[LOG_LATER_MAX];
};

void log_peer_event_later(struct log_later *l, struct log_ratelimit *rl, uint64_t now, int level,
			  const struct log_event *ev, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Writes what l holds, in the order it came, and empties it. */
void log_later_flush(struct log_later *l);

#endif
