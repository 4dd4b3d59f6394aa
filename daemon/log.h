/*
 * log.h - the daemon's logging, after OpenBSD's log.c.
 *
 * stderr in the foreground (-f), syslog(LOG_DAEMON) otherwise.  log_warn and
 * fatal append strerror(errno); the x variants do not.  fatal/fatalx are for
 * startup and broken invariants only, never for packet content.  Messages a
 * peer can trigger go through log_peer(), which is debug level and rate
 * limited, and each one is also a counter somewhere.  Never pass a secret.
 *
 * Threads: every function may be called from any thread.  log_init() runs
 * once, before any thread starts; the level is atomic, so log_setlevel() (a
 * reload, in the main thread) may run while queue threads log.
 */
#ifndef KNOCKGW_LOG_H
#define KNOCKGW_LOG_H

#include <stdarg.h>
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
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

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

#endif
