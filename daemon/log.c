/*
 * log.c - stderr or syslog, after OpenBSD's log.c.
 *
 * The only state is where messages go, set once by log_init() before any
 * thread starts, and the level, which a reload changes while the queue
 * threads log: it is read and written atomically (relaxed: a message near
 * the switch may go by either level, nothing else depends on it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static int log_to_stderr = 1;
static int log_level = LOG_INFO;	/* __atomic_* only */

void log_init(int foreground, int level, const char *ident)
{
	log_to_stderr = foreground;
	__atomic_store_n(&log_level, level, __ATOMIC_RELAXED);
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_setlevel(int level)
{
	__atomic_store_n(&log_level, level, __ATOMIC_RELAXED);
}

int log_getlevel(void)
{
	return __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

static void vlog(int pri, const char *fmt, va_list ap)
{
	if (pri > log_getlevel())
		return;
	if (log_to_stderr) {
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		fflush(stderr);
	} else {
		vsyslog(pri, fmt, ap);
	}
}

/* Appends ": strerror(errno)" while keeping errno for the caller. */
static void vlog_errno(int pri, const char *fmt, va_list ap)
{
	int saved = errno;
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (pri <= log_getlevel()) {
		if (log_to_stderr) {
			fprintf(stderr, "%s: %s\n", msg, strerror(saved));
			fflush(stderr);
		} else {
			syslog(pri, "%s: %s", msg, strerror(saved));
		}
	}
	errno = saved;
}

#define LOG_FN(name, pri, body)                 \
	void name(const char *fmt, ...)          \
	{                                        \
		va_list ap;                      \
		va_start(ap, fmt);               \
		body(pri, fmt, ap);              \
		va_end(ap);                      \
	}

LOG_FN(log_warn, LOG_WARNING, vlog_errno)
LOG_FN(log_warnx, LOG_WARNING, vlog)
LOG_FN(log_notice, LOG_NOTICE, vlog)
LOG_FN(log_info, LOG_INFO, vlog)
LOG_FN(log_debug, LOG_DEBUG, vlog)

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_errno(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}

void log_peer(struct log_ratelimit *rl, uint64_t now, int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_getlevel())
		return;
	if (now >= rl->window_start + rl->interval) {
		if (rl->suppressed)
			log_info("%u similar messages suppressed", rl->suppressed);
		rl->window_start = now;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	if (rl->printed >= rl->burst) {
		rl->suppressed++;
		return;
	}
	rl->printed++;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}
