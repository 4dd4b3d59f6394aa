/*
 * ctl.c - the control socket's transport (see ctl.h): the listening
 * socket, the connection slots, epoll, deadlines and passed descriptors.
 * What a request means is ctlserve.c; the line protocol is ctlproto.c.
 *
 * Reading order: ctl_open() makes the socket; ctl_handle() reads epoll
 * events: a readable connection goes to conn_read() (collect the line and
 * any passed descriptor), then conn_serve() (ctl_serve() decides the reply),
 * then conn_write() until the reply is out; the listener goes to
 * accept_all(), which assigns a slot.  Deadlines are checked first in
 * every call, so that slots silent clients held are free for new ones.
 *
 * A client may pass anything, and fstat() or close() of a file on FUSE
 * waits for the FUSE server, which may be the client itself, never
 * answering.  So the main thread asks getsockopt(SO_TYPE) first, which
 * fails at once for anything that is not a socket, and leaves the close of
 * such a descriptor to the closer thread (ctlcloser.h); and it takes at
 * most one descriptor per connection: recvmsg() with room for one, or for
 * none, makes the kernel drop the rest, which runs no flush and cannot wait.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* struct ucred, accept4, MSG_CMSG_CLOEXEC */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "ctl/ctl.h"
#include "ctl/ctlcloser.h"
#include "ctl/ctlserve.h"
#include "ctl/ctlsock.h"

enum {
	LISTENER = CTL_MAX_CONN,	/* epoll data of the listening socket */
	EVENTS_MAX = 16,
	ACCEPTS_MAX = 128,		/* per call, so a connect flood cannot hold us */
	PAUSE_MS = 100,			/* after accept() found no memory or fd */
};

struct ctl_conn {
	int fd;				/* -1: the slot is free */
	struct ctl_peer peer;		/* who, and the descriptor that came */
	bool writing;
	uint64_t deadline_ms;
	size_t len;
	uint8_t in[CTL_LINE_MAX];
	struct ctl_reply reply;
	const char *out;		/* reply.line or reply.text */
	size_t out_off;
};

_Static_assert(sizeof(((struct ctl *)0)->path) == sizeof(((struct sockaddr_un *)0)->sun_path),
	       "path must match sun_path");

static const char *const counter_names[CTLC_MAX] = {
#define X(name, desc) #name,
	CTL_COUNTERS(X)
#undef X
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void conn_reset(struct ctl_conn *k)
{
	memset(k, 0, sizeof(*k));
	k->fd = -1;
	k->peer.passed_fd = -1;
}

/* ------------------------------------------------------------------ */
/* Opening and closing */

int ctl_open(struct ctl *c, const char *path)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = LISTENER };
	int r;

	memset(c, 0, sizeof(*c));
	c->listen_fd = -1;
	c->epoll_fd = -1;
	c->spare_fd = -1;
	c->rl = (struct log_ratelimit){ .interval = 10, .burst = 20 };
	if (path[0] != '/' || strlen(path) >= sizeof(c->path)) {
		log_warnx("control socket: \"%s\" is not an absolute path that fits sun_path", path);
		return -EINVAL;
	}
	c->conn = calloc(CTL_MAX_CONN, sizeof(*c->conn));
	if (!c->conn) {
		log_warnx("control socket: out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < CTL_MAX_CONN; i++)
		conn_reset(&c->conn[i]);

	c->listen_fd = ctlsock_listen(path, CTL_BACKLOG, &c->dev, &c->ino);
	if (c->listen_fd < 0) {
		r = c->listen_fd;
		goto fail;
	}
	/* From here on the file is ours: ctl_close() removes it. */
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->spare_fd = fcntl(c->listen_fd, F_DUPFD_CLOEXEC, 0);
	c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epoll_fd < 0 || epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, c->listen_fd, &ev) < 0) {
		r = -errno;
		log_warn("control socket: epoll");
		goto fail;
	}
	return 0;
fail:
	ctl_close(c);
	errno = -r;	/* the caller's log_warn() says why */
	return r;
}

int ctl_fd(const struct ctl *c)
{
	return c->epoll_fd;
}

uint64_t ctl_next_deadline_ms(const struct ctl *c)
{
	uint64_t next = UINT64_MAX;

	if (c->epoll_fd < 0 || !c->conn)
		return next;
	if (c->paused_until_ms)
		next = c->paused_until_ms;
	for (size_t i = 0; i < CTL_MAX_CONN; i++)
		if (c->conn[i].fd >= 0 && c->conn[i].deadline_ms < next)
			next = c->conn[i].deadline_ms;
	return next;
}

int ctl_timeout_ms(const struct ctl *c, uint64_t now_ms)
{
	uint64_t next = ctl_next_deadline_ms(c);

	if (next == UINT64_MAX)
		return -1;
	if (next <= now_ms)
		return 0;
	return next - now_ms > INT_MAX ? INT_MAX : (int)(next - now_ms);
}

/* Queues a not-socket for the closer thread; the main thread never closes it. */
static void closer_push(struct ctl *c, int fd, uid_t uid, uint64_t now)
{
	c->cnt[CTLC_nonsocket_fds]++;
	if (!c->closer && ctl_closer_start(&c->closer) < 0) {
		/*
		 * Out of threads or memory: the descriptor is left open rather
		 * than closed here, and the next one tries to start it again.
		 */
		log_peer(&c->rl, now, LOG_WARNING,
			 "control: cannot start the closer thread; a passed descriptor stays open");
		return;
	}
	if (ctl_closer_push(c->closer, fd, uid) < 0)	/* cannot happen: see ctlcloser.h */
		log_peer(&c->rl, now, LOG_WARNING,
			 "control: closer queue full; a passed descriptor stays open");
}

/*
 * A passed descriptor that is not a usable intent socket may be anything:
 * a connected TCP socket with SO_LINGER set and unsent data, whose last
 * close() would block the main thread for the linger time (lingering off
 * makes it return at once; the kernel still sends the data), or a file,
 * whose close() may wait for a FUSE server (the closer thread does it).
 * SO_TYPE tells sockets from the rest without waiting on anyone.  A usable
 * intent socket is unconnected, so its close() never waits.
 */
static void close_passed(struct ctl *c, int fd, uid_t uid, bool usable, uint64_t now)
{
	struct linger lg = { 0, 0 };
	int type;
	socklen_t len = sizeof(type);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0) {
		closer_push(c, fd, uid, now);
		return;
	}
	if (!usable)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

static void conn_close(struct ctl *c, struct ctl_conn *k)
{
	if (k->fd < 0)
		return;
	close_passed(c, k->peer.passed_fd, k->peer.cred.uid, false, mono_ms() / 1000);
	epoll_ctl(c->epoll_fd, EPOLL_CTL_DEL, k->fd, NULL);
	close(k->fd);
	/* The line may hold an INTENT payload: the first bytes of a stream. */
	sodium_memzero(k->in, k->len);
	free(k->reply.text);
	conn_reset(k);
}

void ctl_close(struct ctl *c)
{
	if (c->conn) {
		for (size_t i = 0; i < CTL_MAX_CONN; i++)
			conn_close(c, &c->conn[i]);
		free(c->conn);
		c->conn = NULL;
	}
	if (c->epoll_fd >= 0)
		close(c->epoll_fd);
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	if (c->spare_fd >= 0)
		close(c->spare_fd);
	if (!ctl_closer_stop(c->closer, CTL_TIMEOUT_MS))
		log_warnx("control: a passed descriptor is still being closed; leaving it");
	c->closer = NULL;
	c->epoll_fd = -1;
	c->listen_fd = -1;
	c->spare_fd = -1;
	if (c->path[0])
		ctlsock_unlink(c->path, c->dev, c->ino);
	c->path[0] = '\0';
}

/* ------------------------------------------------------------------ */
/* Connection I/O */

static void conn_write(struct ctl *c, struct ctl_conn *k, uint64_t now);

/* The whole line is in: ctl_serve() decides the reply, which goes out. */
static void conn_serve(struct ctl *c, struct ctl_conn *k, const struct ctl_env *env)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = (uint32_t)(k - c->conn) };
	int r = ctl_serve(c, &k->peer, k->in, k->len, env, &k->reply);

	sodium_memzero(k->in, k->len);
	k->len = 0;
	close_passed(c, k->peer.passed_fd, k->peer.cred.uid, k->reply.fd_used, env->now);
	k->peer.passed_fd = -1;
	if (r < 0) {
		conn_close(c, k);	/* cannot happen: every reply fits */
		return;
	}
	k->out = k->reply.text ? k->reply.text : k->reply.line;
	k->writing = true;
	k->deadline_ms = mono_ms() + CTL_TIMEOUT_MS;
	if (epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, k->fd, &ev) < 0) {
		c->cnt[CTLC_io_errors]++;
		conn_close(c, k);
		return;
	}
	conn_write(c, k, env->now);
}

/*
 * The descriptor recvmsg() installed, if any: at most one (msg had room for
 * one); more, or any when there was no room, show as MSG_CTRUNC.
 */
static void take_fds(struct ctl *c, struct ctl_conn *k, struct msghdr *msg, bool room,
		     uint64_t now)
{
	struct ctl_peer *p = &k->peer;
	struct cmsghdr *cm;

	if (msg->msg_flags & MSG_CTRUNC) {
		if (room)
			p->stray_fds = true;
		else if (p->passed_fd < 0 && !p->stray_fds)
			p->fds_refused = true;	/* the closer's queue was full */
		else
			p->stray_fds = true;
	}
	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		size_t n, i;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len < CMSG_LEN(0))
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			if (p->passed_fd < 0 && !p->stray_fds) {
				p->passed_fd = fd;
			} else {
				close_passed(c, fd, p->cred.uid, false, now);
				p->stray_fds = true;
			}
		}
	}
}

static void conn_read(struct ctl *c, struct ctl_conn *k, const struct ctl_env *env)
{
	for (;;) {
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int))];
		} cbuf;
		struct iovec iov = { k->in + k->len, sizeof(k->in) - k->len };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		/*
		 * Room for exactly one descriptor (CMSG_SPACE would fit two),
		 * and none once this connection has one, or has passed too
		 * many, or its uid's (or everyone's) not-sockets are still
		 * being closed: the kernel drops what does not fit.
		 */
		bool room = k->peer.passed_fd < 0 && !k->peer.stray_fds && !k->peer.fds_refused &&
			    ctl_closer_room(c->closer, k->peer.cred.uid);
		ssize_t r;

		if (room) {
			msg.msg_control = cbuf.buf;
			msg.msg_controllen = CMSG_LEN(sizeof(int));
		}
		if (k->len == sizeof(k->in))
			break;		/* no LF within CTL_LINE_MAX: the parser says so */
		r = recvmsg(k->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;		/* the rest of the line comes later */
		if (r < 0) {
			c->cnt[CTLC_io_errors]++;
			log_peer(&c->rl, env->now, LOG_DEBUG, "control: uid %u: receive: %s, ignoring",
				 (unsigned)k->peer.cred.uid, strerror(errno));
			conn_close(c, k);
			return;
		}
		take_fds(c, k, &msg, room, env->now);
		if (r == 0)
			break;		/* EOF: serve what came */
		k->len += (size_t)r;
		if (memchr(k->in + k->len - (size_t)r, '\n', (size_t)r))
			break;
	}
	conn_serve(c, k, env);
}

static void conn_write(struct ctl *c, struct ctl_conn *k, uint64_t now)
{
	while (k->out_off < k->reply.len) {
		ssize_t w = send(k->fd, k->out + k->out_off, k->reply.len - k->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;		/* EPOLLOUT brings us back */
		if (w < 0) {
			c->cnt[CTLC_io_errors]++;
			log_peer(&c->rl, now, LOG_DEBUG, "control: uid %u: send: %s, ignoring",
				 (unsigned)k->peer.cred.uid, strerror(errno));
			break;
		}
		k->out_off += (size_t)w;
	}
	conn_close(c, k);	/* one request per connection */
}

/*
 * Best effort: the client learns why before the connection goes.  cred is
 * NULL when the daemon is out of descriptors (it could not ask whose it is).
 */
static void refuse_busy(struct ctl *c, int fd, const struct ucred *cred, uint64_t now)
{
	char buf[CTL_REPLY_MAX];
	int n = ctlproto_format_status(buf, sizeof(buf), CTL_S_BUSY);

	if (n > 0 && send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		c->cnt[CTLC_io_errors]++;
	close(fd);
	c->cnt[CTLC_refused_busy]++;
	c->replies[CTL_S_BUSY]++;
	if (cred)
		log_peer(&c->rl, now, LOG_DEBUG,
			 "control: uid %u pid %d: too many connections, refusing",
			 (unsigned)cred->uid, (int)cred->pid);
	else
		log_peer(&c->rl, now, LOG_WARNING,
			 "control: out of descriptors, refusing a connection");
}

/*
 * accept() failed with err.  Returns true when accept_all() may go on (a
 * connection was taken and refused with the spare descriptor).
 */
static bool accept_failed(struct ctl *c, int err, uint64_t now, uint64_t t)
{
	int fd;

	c->cnt[CTLC_accept_errors]++;
	log_peer(&c->rl, now, LOG_WARNING, "control: accept: %s", strerror(err));
	if ((err == EMFILE || err == ENFILE) && c->spare_fd >= 0) {
		/*
		 * Out of descriptors: the spare one makes room to take the
		 * connection and refuse it, so it does not stay pending and
		 * keep the listener readable (a busy loop).
		 */
		close(c->spare_fd);
		fd = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0)
			refuse_busy(c, fd, NULL, now);
		c->spare_fd = fcntl(c->listen_fd, F_DUPFD_CLOEXEC, 0);
		return fd >= 0;	/* none pending: accept4 fails EMFILE regardless */
	}
	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		/*
		 * Edge-triggered for a while: a new connection wakes us once,
		 * the one that just failed does not spin poll().
		 */
		struct epoll_event edge = { .events = EPOLLIN | EPOLLET, .data.u32 = LISTENER };

		epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, c->listen_fd, &edge);
		c->paused_until_ms = t + PAUSE_MS;
	}
	return false;
}

/* A free slot for uid, or NULL when all are taken or uid has its share. */
static struct ctl_conn *free_slot(struct ctl *c, uid_t uid)
{
	struct ctl_conn *k = NULL;
	size_t same_uid = 0;

	for (size_t i = 0; i < CTL_MAX_CONN; i++) {
		if (c->conn[i].fd < 0) {
			if (!k)
				k = &c->conn[i];
		} else if (c->conn[i].peer.cred.uid == uid) {
			same_uid++;
		}
	}
	/* Root is not limited per uid: `knockgw status` must get through. */
	if (uid != 0 && same_uid >= CTL_CONN_PER_UID)
		return NULL;
	return k;
}

static void accept_all(struct ctl *c, const struct ctl_env *env, uint64_t t)
{
	for (int round = 0; round < ACCEPTS_MAX; round++) {
		struct epoll_event ev = { .events = EPOLLIN };
		struct ctl_conn *k;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			int err = errno;

			if (err == EAGAIN || err == EWOULDBLOCK)
				return;
			if (err == EINTR || err == ECONNABORTED)
				continue;
			if (accept_failed(c, err, env->now, t))
				continue;
			return;
		}
		c->cnt[CTLC_connections]++;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			c->cnt[CTLC_io_errors]++;
			close(fd);
			continue;
		}
		k = free_slot(c, cred.uid);
		if (!k) {
			refuse_busy(c, fd, &cred, env->now);
			continue;
		}
		k->fd = fd;
		k->peer.passed_fd = -1;
		k->peer.cred = cred;
		k->deadline_ms = t + CTL_TIMEOUT_MS;
		ev.data.u32 = (uint32_t)(k - c->conn);
		if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			c->cnt[CTLC_io_errors]++;
			conn_close(c, k);
			continue;
		}
		/* The line is usually there already: no need to wait for the next call. */
		conn_read(c, k, env);
	}
}

/* Drops every client past its deadline, so that its slot is free again. */
static void expire(struct ctl *c, uint64_t now, uint64_t t)
{
	for (size_t i = 0; i < CTL_MAX_CONN; i++) {
		struct ctl_conn *k = &c->conn[i];

		if (k->fd < 0 || k->deadline_ms > t)
			continue;
		c->cnt[CTLC_timeouts]++;
		log_peer(&c->rl, now, LOG_DEBUG, "control: uid %u pid %d: too slow, dropped",
			 (unsigned)k->peer.cred.uid, (int)k->peer.cred.pid);
		conn_close(c, k);
	}
}

void ctl_handle(struct ctl *c, const struct conf *conf, struct intent_table *intents,
		uint64_t now, ctl_status_fn *status, void *arg)
{
	const struct ctl_env env = { conf, intents, now, status, arg };
	struct epoll_event ev[EVENTS_MAX];
	uint64_t t = mono_ms();
	bool listener = false;
	int n, i;

	if (c->epoll_fd < 0)
		return;
	if (c->paused_until_ms && t >= c->paused_until_ms) {
		/* Back to level-triggered: connections still pending are seen. */
		struct epoll_event on = { .events = EPOLLIN, .data.u32 = LISTENER };

		c->paused_until_ms = 0;
		epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, c->listen_fd, &on);
	}
	/*
	 * Deadlines first: a new client must find the slots that silent ones
	 * held free again, even when this call comes only because it connected.
	 */
	expire(c, now, t);
	n = epoll_wait(c->epoll_fd, ev, EVENTS_MAX, 0);
	for (i = 0; i < n; i++) {
		uint32_t slot = ev[i].data.u32;
		struct ctl_conn *k;

		if (slot == LISTENER) {
			listener = true;	/* after the others: slots freed now are reused */
			continue;
		}
		if (slot >= CTL_MAX_CONN || c->conn[slot].fd < 0)
			continue;
		k = &c->conn[slot];
		if (k->writing)
			conn_write(c, k, now);
		else
			conn_read(c, k, &env);
	}
	if (listener)
		accept_all(c, &env, t);
}

void ctl_counters_foreach(const struct ctl *c, void (*fn)(const char *name, uint64_t value,
							     void *arg),
			  void *arg)
{
	char name[64];
	int i;

	for (i = 0; i < CTLC_MAX; i++) {
		snprintf(name, sizeof(name), "ctl_%s", counter_names[i]);
		fn(name, c->cnt[i], arg);
	}
	for (i = 0; i < CTL_S_UNKNOWN; i++) {
		char *p;

		if (i == CTL_S_OK)
			snprintf(name, sizeof(name), "ctl_replies_ok");
		else
			snprintf(name, sizeof(name), "ctl_err_%s",
				 ctlproto_status_word((enum ctl_status)i));
		for (p = name; *p; p++)
			if (*p == '-')
				*p = '_';
		fn(name, c->replies[i], arg);
	}
	for (i = CTL_PARSE_OK + 1; i < CTL_PARSE_MAX; i++) {
		snprintf(name, sizeof(name), "ctl_bad_%s", ctlproto_parse_name((enum ctl_parse)i));
		fn(name, c->parse[i], arg);
	}
}
