/*
 * log.c - stderr, syslog or the journal, after OpenBSD's log.c.
 *
 * The only state is where messages go, set once by log_init() before any
 * thread starts, and the level, which a reload changes while the queue
 * threads log: it is read and written atomically (relaxed: a message near
 * the switch may go by either level, nothing else depends on it).
 *
 * The journal gets every message through sd_journal_sendv() (thread-safe)
 * with its PRIORITY and SYSLOG_IDENTIFIER, and an event's fields with it;
 * MESSAGE is the text stderr or syslog would have had.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* The location fields would name this file, not the event's: left out. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "common/log.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

enum { LOG_MSG_MAX = 2048 };

static int log_to_stderr = 1;
static bool log_to_journal;
static char log_ident[32] = "knockgw";
static int log_level = LOG_INFO;	/* __atomic_* only */

/*
 * KNOCKGW_EVENT and MESSAGE_ID of each kind.  The ids were made once
 * (systemd-id128 new) and never change: journalctl MESSAGE_ID=... and the
 * fail2ban jail select by them.
 */
static const struct {
	const char *name, *id;
} events[LOG_EV_MAX] = {
	[LOG_EV_KNOCK_ACCEPTED] = { "knock_accepted", "05452ce00cb4492cbc214f7e34694e22" },
	[LOG_EV_KNOCK_REFUSED] = { "knock_refused", "7cad351ebd12455fad583a1280dc39f0" },
	[LOG_EV_GUESSING] = { "guessing", "ae3f7f7271c24a6ca5c6a7ab20a1e5f7" },
	[LOG_EV_INTEGRITY_FAILED] = { "integrity_failed", "4973a8cfc7ae4d808618804e746dc37c" },
	[LOG_EV_RELOADED] = { "reloaded", "052c55609ca4416abea51354da7dca87" },
	[LOG_EV_RELOAD_REFUSED] = { "reload_refused", "b5e6aea846304819a789b32f6cbdd2d2" },
};

const char *log_event_name(enum log_event_kind k)
{
	return k < LOG_EV_MAX ? events[k].name : "unknown";
}

const char *log_event_id(enum log_event_kind k)
{
	return k < LOG_EV_MAX ? events[k].id : "00000000000000000000000000000000";
}

/* systemd.exec(5): $JOURNAL_STREAM is "DEVICE:INODE" of the stream a service's stderr is. */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char tail;

	if (!e || sscanf(e, "%llu:%llu%c", &dev, &ino, &tail) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(int foreground, int level, const char *ident)
{
	log_to_stderr = foreground;
	snprintf(log_ident, sizeof(log_ident), "%s", ident);
	log_to_journal = foreground ? stderr_is_journal() : access(JOURNAL_SOCKET, F_OK) == 0;
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

/* One field "NAME=value" into iov[*n], formatted into buf (size bytes). */
static void field(struct iovec *iov, int *n, char *buf, size_t size, const char *name,
		  const char *value)
{
	int len = snprintf(buf, size, "%s=%s", name, value);

	if (len < 0)
		return;
	iov[*n].iov_base = buf;
	iov[*n].iov_len = (size_t)len < size ? (size_t)len : size - 1;
	(*n)++;
}

static int journal_send(int pri, const struct log_event *ev, const char *msg)
{
	char m[LOG_MSG_MAX + 16], prio[24], ident[64], mid[64], name[48], src[80], port[24];
	char key[64], v[12];
	struct iovec iov[8];
	int n = 0;

	field(iov, &n, m, sizeof(m), "MESSAGE", msg);
	snprintf(v, sizeof(v), "%d", pri);
	field(iov, &n, prio, sizeof(prio), "PRIORITY", v);
	field(iov, &n, ident, sizeof(ident), "SYSLOG_IDENTIFIER", log_ident);
	if (ev && ev->kind < LOG_EV_MAX) {
		field(iov, &n, mid, sizeof(mid), "MESSAGE_ID", events[ev->kind].id);
		field(iov, &n, name, sizeof(name), "KNOCKGW_EVENT", events[ev->kind].name);
		if (ev->source)
			field(iov, &n, src, sizeof(src), "KNOCKGW_SOURCE", ev->source);
		if (ev->port) {
			snprintf(v, sizeof(v), "%u", ev->port);
			field(iov, &n, port, sizeof(port), "KNOCKGW_PORT", v);
		}
		if (ev->key)
			field(iov, &n, key, sizeof(key), "KNOCKGW_KEY", ev->key);
	}
	return sd_journal_sendv(iov, n);
}

/* One message, already at or above the level: the journal, else stderr or syslog. */
static void emit(int pri, const struct log_event *ev, const char *msg)
{
	if (log_to_journal && journal_send(pri, ev, msg) >= 0)
		return;
	if (log_to_stderr) {
		fprintf(stderr, "%s\n", msg);
		fflush(stderr);
	} else {
		syslog(pri, "%s", msg);
	}
}

static void vlog_event(int pri, const struct log_event *ev, const char *fmt, va_list ap)
{
	char msg[LOG_MSG_MAX];

	if (pri > log_getlevel())
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	emit(pri, ev, msg);
}

static void vlog(int pri, const char *fmt, va_list ap)
{
	vlog_event(pri, NULL, fmt, ap);
}

/* Appends ": strerror(errno)" while keeping errno for the caller. */
static void vlog_errno(int pri, const char *fmt, va_list ap)
{
	int saved = errno;
	char msg[LOG_MSG_MAX], full[LOG_MSG_MAX + 128];

	if (pri <= log_getlevel()) {
		vsnprintf(msg, sizeof(msg), fmt, ap);
		snprintf(full, sizeof(full), "%s: %s", msg, strerror(saved));
		emit(pri, NULL, full);
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

void log_event(int pri, const struct log_event *ev, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_event(pri, ev, fmt, ap);
	va_end(ap);
}

/* The rate limit's turn: true when this message may go out. */
static bool peer_turn(struct log_ratelimit *rl, uint64_t now, int level)
{
	if (level > log_getlevel())
		return false;
	if (now >= rl->window_start + rl->interval) {
		if (rl->suppressed)
			log_info("%u similar messages suppressed", rl->suppressed);
		rl->window_start = now;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	if (rl->printed >= rl->burst) {
		rl->suppressed++;
		return false;
	}
	rl->printed++;
	return true;
}

void log_peer(struct log_ratelimit *rl, uint64_t now, int level, const char *fmt, ...)
{
	va_list ap;

	if (!peer_turn(rl, now, level))
		return;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

void log_peer_event(struct log_ratelimit *rl, uint64_t now, int level, const struct log_event *ev,
		    const char *fmt, ...)
{
	va_list ap;

	if (!peer_turn(rl, now, level))
		return;
	va_start(ap, fmt);
	vlog_event(level, ev, fmt, ap);
	va_end(ap);
}

void log_peer_event_later(struct log_later *l, struct log_ratelimit *rl, uint64_t now, int level,
			  const struct log_event *ev, const char *fmt, ...)
{
	struct log_later_msg *m;
	va_list ap;

	if (!peer_turn(rl, now, level))
		return;
	va_start(ap, fmt);
	if (l->n >= LOG_LATER_MAX) {
		vlog_event(level, ev, fmt, ap);
		va_end(ap);
		return;
	}
	m = &l->m[l->n++];
	m->pri = level;
	m->has_event = ev != NULL;
	if (ev) {
		m->ev = *ev;
		snprintf(m->source, sizeof(m->source), "%s", ev->source ? ev->source : "");
		snprintf(m->key, sizeof(m->key), "%s", ev->key ? ev->key : "");
		m->ev.source = ev->source ? m->source : NULL;
		m->ev.key = ev->key ? m->key : NULL;
	}
	vsnprintf(m->msg, sizeof(m->msg), fmt, ap);
	va_end(ap);
}

void log_later_flush(struct log_later *l)
{
	/* The level was the rate limit's turn to check, when it was held. */
	for (unsigned i = 0; i < l->n && i < LOG_LATER_MAX; i++) {
		const struct log_later_msg *m = &l->m[i];

		emit(m->pri, m->has_event ? &m->ev : NULL, m->msg);
	}
	l->n = 0;
}
