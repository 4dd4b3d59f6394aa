/*
 * ctl.c - the control socket (see ctl.h; the protocol is ctlproto.c).
 *
 * Reading order: ctl_open() makes the socket; ctl_handle() reads epoll
 * events: a readable connection goes to conn_read() (collect the line and
 * any passed descriptor), then serve() (parse, authorise, act, format the
 * reply), then conn_write() until the reply is out; the listener goes to
 * accept_all(), which assigns a slot.  Deadlines are checked first in
 * every call, so that slots silent clients held are free for new ones.
 *
 * The descriptors a client passes should be the client's own sockets, so
 * the daemon only looks at them (getsockopt, then fstat, getsockname) and
 * closes them; it never reads, writes or connects them.  A client may pass
 * anything, though, and fstat() or close() of a file on FUSE waits for the
 * FUSE server, which may be the client itself, never answering.  So the
 * main thread asks getsockopt(SO_TYPE) first, which fails at once for
 * anything that is not a socket, and leaves the close of such a descriptor
 * to the closer thread (below); and it takes at most one descriptor per
 * connection: recvmsg() with room for one, or for none, makes the kernel
 * drop the rest, which runs no flush and cannot wait.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* struct ucred, accept4, MSG_CMSG_CLOEXEC */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "ctl.h"

enum {
	LISTENER = CTL_MAX_CONN,	/* epoll data of the listening socket */
	CLOSER_MAX = 64,		/* not-sockets waiting to be closed, all uids */
	EVENTS_MAX = 16,
	ACCEPTS_MAX = 128,		/* per call, so a connect flood cannot hold us */
	PAUSE_MS = 100,			/* after accept() found no memory or fd */
};

struct ctl_conn {
	int fd;				/* -1: the slot is free */
	int passed_fd;			/* from SCM_RIGHTS, -1 if none */
	bool stray_fds;			/* more than one, or cut off (MSG_CTRUNC) */
	bool fds_refused;		/* passed while the closer had no room */
	bool writing;
	struct ucred cred;		/* SO_PEERCRED: who connected */
	uint64_t deadline_ms;
	size_t len;
	uint8_t in[CTL_LINE_MAX];
	char reply[CTL_REPLY_MAX];
	char *out;			/* reply, or malloc'd STATUS text */
	size_t out_len, out_off;
	bool out_malloced;
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

/* ------------------------------------------------------------------ */
/* The closer thread */

/*
 * Closes passed descriptors that are not sockets, one after the other,
 * however long each takes (a FUSE flush that nobody answers waits even
 * through SIGKILL).  The queue holds CLOSER_MAX descriptors for all uids
 * and CTL_CONN_PER_UID for one; past that no descriptor is taken at all
 * (closer_room()), so a client who never answers can hold a bounded number
 * of the daemon's descriptors, not its main thread.  Entries stay queued
 * until closed: n counts the one being closed.  Each connection holds at
 * most one descriptor before it is queued, so the queue has room for one
 * per connection slot beyond CLOSER_MAX and closer_push() cannot fail.
 *
 * Started at the first such descriptor, which comes in ctl_handle(), long
 * after startup: it inherits the main thread's reduced capabilities.
 */
struct ctl_closer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* work for the thread, or it finished */
	unsigned n;
	int fd[CLOSER_MAX + CTL_MAX_CONN];
	uid_t uid[CLOSER_MAX + CTL_MAX_CONN];
	bool stop;			/* ctl_close(): drain the queue, then end */
	bool done;			/* the thread has ended */
	bool orphaned;			/* ctl_close() stopped waiting: it frees itself */
};

static void closer_free(struct ctl_closer *cl)
{
	pthread_cond_destroy(&cl->cond);
	pthread_mutex_destroy(&cl->lock);
	free(cl);
}

static void *closer_main(void *arg)
{
	struct ctl_closer *cl = arg;
	bool orphaned;

	pthread_mutex_lock(&cl->lock);
	for (;;) {
		while (cl->n == 0 && !cl->stop)
			pthread_cond_wait(&cl->cond, &cl->lock);
		if (cl->n == 0)
			break;
		int fd = cl->fd[0];

		pthread_mutex_unlock(&cl->lock);
		close(fd);
		pthread_mutex_lock(&cl->lock);
		cl->n--;
		memmove(cl->fd, cl->fd + 1, cl->n * sizeof(cl->fd[0]));
		memmove(cl->uid, cl->uid + 1, cl->n * sizeof(cl->uid[0]));
	}
	cl->done = true;
	orphaned = cl->orphaned;
	pthread_cond_broadcast(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
	if (orphaned)
		closer_free(cl);
	return NULL;
}

/* May a descriptor from uid be taken now?  It might have to be queued. */
static bool closer_room(struct ctl *c, uid_t uid)
{
	struct ctl_closer *cl = c->closer;
	unsigned same = 0;
	bool room;

	if (!cl)
		return true;
	pthread_mutex_lock(&cl->lock);
	for (unsigned i = 0; i < cl->n; i++)
		same += cl->uid[i] == uid;
	room = cl->n < CLOSER_MAX && same < CTL_CONN_PER_UID;
	pthread_mutex_unlock(&cl->lock);
	return room;
}

static int closer_start(struct ctl *c)
{
	struct ctl_closer *cl = calloc(1, sizeof(*cl));
	pthread_condattr_t ca;
	sigset_t all, old;
	int r;

	if (!cl)
		return -ENOMEM;
	pthread_mutex_init(&cl->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cl->cond, &ca);
	pthread_condattr_destroy(&ca);
	/*
	 * Every signal blocked: one meant for the daemon (SIGHUP, SIGTERM) must
	 * not be handed to a thread that may sleep in a flush for good.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&cl->thread, NULL, closer_main, cl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		closer_free(cl);
		return -r;
	}
	c->closer = cl;
	return 0;
}

/* Queues fd for the closer thread; the main thread never closes it. */
static void closer_push(struct ctl *c, int fd, uid_t uid, uint64_t now)
{
	struct ctl_closer *cl;

	c->cnt[CTLC_nonsocket_fds]++;
	if (!c->closer && closer_start(c) < 0) {
		/*
		 * Out of threads or memory: the descriptor is left open rather
		 * than closed here, and the next one tries to start it again.
		 */
		log_peer(&c->rl, now, LOG_WARNING,
			 "control: cannot start the closer thread; a passed descriptor stays open");
		return;
	}
	cl = c->closer;
	pthread_mutex_lock(&cl->lock);
	if (cl->n < sizeof(cl->fd) / sizeof(cl->fd[0])) {
		cl->fd[cl->n] = fd;
		cl->uid[cl->n] = uid;
		cl->n++;
		pthread_cond_signal(&cl->cond);
		fd = -1;
	}
	pthread_mutex_unlock(&cl->lock);
	if (fd >= 0)	/* cannot happen: one per connection beyond CLOSER_MAX */
		log_peer(&c->rl, now, LOG_WARNING,
			 "control: closer queue full; a passed descriptor stays open");
}

/* Lets the closer drain its queue, CTL_TIMEOUT_MS at most, then leaves it. */
static void closer_stop(struct ctl *c)
{
	struct ctl_closer *cl = c->closer;
	struct timespec until;
	bool done;

	if (!cl)
		return;
	c->closer = NULL;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += CTL_TIMEOUT_MS / 1000;
	pthread_mutex_lock(&cl->lock);
	cl->stop = true;
	pthread_cond_broadcast(&cl->cond);
	while (!cl->done)
		if (pthread_cond_timedwait(&cl->cond, &cl->lock, &until) == ETIMEDOUT)
			break;
	done = cl->done;
	if (!done)
		cl->orphaned = true;
	pthread_mutex_unlock(&cl->lock);
	if (done) {
		pthread_join(cl->thread, NULL);
		closer_free(cl);
	} else {
		log_warnx("control: a passed descriptor is still being closed; leaving it");
		pthread_detach(cl->thread);
	}
}

/* ------------------------------------------------------------------ */
/* Opening and closing */

/* The socket's directory: made 0755 when missing, left alone when present. */
static int make_parent(const char *path)
{
	char dir[sizeof(((struct ctl *)0)->path)];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;	/* directly under / */
	*slash = '\0';
	if (mkdir(dir, 0755) == 0) {
		/* mkdir's mode went through the umask; the contract says 0755. */
		if (chmod(dir, 0755) < 0) {
			log_warn("control socket: cannot chmod \"%s\"", dir);
			return -errno;
		}
		return 0;
	}
	if (errno != EEXIST) {
		log_warn("control socket: cannot create directory \"%s\"", dir);
		return -errno;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_warnx("control socket: \"%s\" is not a directory", dir);
		return -ENOTDIR;
	}
	return 0;
}

/*
 * A socket file left by a daemon that died is removed; a live one (another
 * knockgw answers) and anything that is not a socket are not ours to take.
 */
static int remove_stale(const char *path, const struct sockaddr_un *sun)
{
	struct stat st;
	int fd, r, err;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_warnx("control socket: \"%s\" exists and is not a socket; not replacing it",
			  path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	err = errno;
	close(fd);
	if (r == 0 || err == EAGAIN) {
		log_warnx("control socket: another process listens on \"%s\"", path);
		return -EADDRINUSE;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		log_warn("control socket: cannot remove stale \"%s\"", path);
		return -errno;
	}
	return 0;
}

int ctl_open(struct ctl *c, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = LISTENER };
	struct stat st;
	size_t len = strlen(path);
	int r;

	memset(c, 0, sizeof(*c));
	c->listen_fd = -1;
	c->epoll_fd = -1;
	c->spare_fd = -1;
	c->rl = (struct log_ratelimit){ .interval = 10, .burst = 20 };
	if (path[0] != '/' || len >= sizeof(sun.sun_path)) {
		log_warnx("control socket: \"%s\" is not an absolute path that fits sun_path", path);
		return -EINVAL;
	}
	memcpy(sun.sun_path, path, len + 1);

	c->conn = calloc(CTL_MAX_CONN, sizeof(*c->conn));
	if (!c->conn) {
		log_warnx("control socket: out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < CTL_MAX_CONN; i++) {
		c->conn[i].fd = -1;
		c->conn[i].passed_fd = -1;
	}

	r = make_parent(path);
	if (r == 0)
		r = remove_stale(path, &sun);
	if (r < 0)
		goto fail;

	c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->listen_fd < 0) {
		r = -errno;
		log_warn("control socket: socket");
		goto fail;
	}
	if (bind(c->listen_fd, (const struct sockaddr *)&sun, sizeof(sun)) < 0) {
		r = -errno;
		log_warn("control socket: cannot bind \"%s\"", path);
		goto fail;
	}
	/* From here on the file is ours: ctl_close() removes it. */
	snprintf(c->path, sizeof(c->path), "%s", path);
	if (lstat(path, &st) == 0) {
		c->dev = st.st_dev;
		c->ino = st.st_ino;
	}
	/* Every local user may ask; each request is authorised on its own. */
	if (chmod(path, 0666) < 0) {
		r = -errno;
		log_warn("control socket: cannot chmod \"%s\"", path);
		goto fail;
	}
	if (listen(c->listen_fd, CTL_BACKLOG) < 0) {
		r = -errno;
		log_warn("control socket: listen");
		goto fail;
	}
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
	return r;
}

int ctl_fd(const struct ctl *c)
{
	return c->epoll_fd;
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
	close_passed(c, k->passed_fd, k->cred.uid, false, mono_ms() / 1000);
	epoll_ctl(c->epoll_fd, EPOLL_CTL_DEL, k->fd, NULL);
	close(k->fd);
	/* The line may hold an INTENT payload: the first bytes of a stream. */
	sodium_memzero(k->in, k->len);
	if (k->out_malloced)
		free(k->out);
	memset(k, 0, sizeof(*k));
	k->fd = -1;
	k->passed_fd = -1;
}

void ctl_close(struct ctl *c)
{
	struct stat st;

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
	closer_stop(c);
	c->epoll_fd = -1;
	c->listen_fd = -1;
	c->spare_fd = -1;
	/* A daemon started after us may own the path by now: only our own file goes. */
	if (c->path[0] && lstat(c->path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino)
		unlink(c->path);
	c->path[0] = '\0';
}

/* ------------------------------------------------------------------ */
/* Serving one request */

/*
 * INTENT's descriptor must be a socket the kernel created for the caller's
 * uid (a socket inode's owner is its creator's fsuid; only root can chown
 * one), an unconnected TCP socket of the request's family, bound to a port.
 */
static enum ctl_status check_socket(int fd, const struct ucred *cred, int family,
				    uint16_t *ret_port)
{
	struct stat st;
	struct tcp_info ti;
	struct sockaddr_storage ss;
	socklen_t len;
	int v;
	uint16_t port;

	/* SO_TYPE first: it fails at once for a file, where fstat() may wait. */
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0)
		return CTL_S_NOT_YOUR_SOCKET;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != cred->uid)
		return CTL_S_NOT_YOUR_SOCKET;
	if (v != SOCK_STREAM)
		return CTL_S_BAD_SOCKET;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0 || v != family)
		return CTL_S_BAD_SOCKET;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len) < 0 || v != IPPROTO_TCP)
		return CTL_S_BAD_SOCKET;
	/* Not listening, not connecting, not connected: its SYN is still to come. */
	memset(&ti, 0, sizeof(ti));
	len = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 || len < 1 ||
	    ti.tcpi_state != TCP_CLOSE)
		return CTL_S_BAD_SOCKET;
	memset(&ss, 0, sizeof(ss));
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0 || ss.ss_family != family ||
	    len < (family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)))
		return CTL_S_BAD_SOCKET;
	if (family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)&ss)->sin_port);
	else
		port = ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port);
	if (port == 0)
		return CTL_S_BAD_SOCKET;	/* unbound: the port is chosen at connect() */
	*ret_port = port;
	return CTL_S_OK;
}

static enum ctl_status serve_intent(struct ctl *c, struct ctl_conn *k, const struct conf *conf,
				    struct intent_table *intents, uint64_t now,
				    const struct ctl_request *req)
{
	const struct conf_knock *kn;
	char a[INET6_ADDRSTRLEN];
	uint16_t sport = 0;
	enum ctl_status s;
	int r;

	if (k->passed_fd < 0)
		return CTL_S_BAD_REQUEST;
	s = check_socket(k->passed_fd, &k->cred, req->family, &sport);
	if (s != CTL_S_OK)
		return s;
	kn = conf_find_knock(conf, req->family, req->addr, req->port);
	if (!kn)
		return CTL_S_NO_KNOCK;
	if (kn->integrity_len == 0 || req->payload_len != kn->integrity_len)
		return CTL_S_BAD_LENGTH;
	r = intent_add(intents, req->family, sport, req->addr, req->port, k->cred.uid,
		       req->payload, req->payload_len, now);
	if (r == -ENOSPC || r == -EDQUOT)
		return CTL_S_BUSY;
	if (r < 0)
		return CTL_S_INTERNAL;
	inet_ntop(req->family, req->addr, a, sizeof(a));
	log_peer(&c->rl, now, LOG_DEBUG, "control: uid %u: intent for local port %u to %s port %u",
		 (unsigned)k->cred.uid, sport, a, req->port);
	return CTL_S_OK;
}

/* STATUS text into a malloc'd buffer, "END" line appended. */
static enum ctl_status status_text(struct ctl_conn *k, ctl_status_fn *status, void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return CTL_S_INTERNAL;
	if (status)
		status(f, arg);
	if (fflush(f) == 0 && len > 0 && text[len - 1] != '\n')
		fputc('\n', f);
	fputs("END\n", f);
	if (fclose(f) != 0) {
		free(text);
		return CTL_S_INTERNAL;
	}
	k->out = text;
	k->out_len = len;
	k->out_malloced = true;
	return CTL_S_OK;
}

static void conn_write(struct ctl *c, struct ctl_conn *k, uint64_t now);

static void serve(struct ctl *c, struct ctl_conn *k, const struct conf *conf,
		  struct intent_table *intents, uint64_t now, ctl_status_fn *status, void *arg)
{
	struct ctl_request req;
	enum ctl_parse p = ctlproto_parse_request(k->in, k->len, &req);
	enum ctl_status s = CTL_S_OK;
	struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = (uint32_t)(k - c->conn) };
	bool usable = false;
	int n = -1;

	sodium_memzero(k->in, k->len);
	k->len = 0;
	if (p != CTL_PARSE_OK) {
		c->parse[p]++;
		s = CTL_S_BAD_REQUEST;
		log_peer(&c->rl, now, LOG_DEBUG, "control: uid %u pid %d: bad request (%s), ignoring",
			 (unsigned)k->cred.uid, (int)k->cred.pid, ctlproto_parse_name(p));
	} else {
		c->cnt[req.cmd == CTL_CMD_QUERY ? CTLC_query :
		       req.cmd == CTL_CMD_INTENT ? CTLC_intent : CTLC_status]++;
	}
	/* A descriptor belongs with INTENT only, and only one. */
	if (p == CTL_PARSE_OK && k->fds_refused) {
		c->cnt[CTLC_fds_refused]++;
		s = CTL_S_BUSY;
		log_peer(&c->rl, now, LOG_DEBUG,
			 "control: uid %u pid %d: descriptors still closing, not taking more",
			 (unsigned)k->cred.uid, (int)k->cred.pid);
	} else if (p == CTL_PARSE_OK &&
		   (k->stray_fds || (k->passed_fd >= 0 && req.cmd != CTL_CMD_INTENT))) {
		c->cnt[CTLC_stray_fds]++;
		s = CTL_S_BAD_REQUEST;
		log_peer(&c->rl, now, LOG_DEBUG,
			 "control: uid %u pid %d: unexpected descriptors, ignoring",
			 (unsigned)k->cred.uid, (int)k->cred.pid);
	}
	if (p == CTL_PARSE_OK && s == CTL_S_OK) {
		const struct conf_knock *kn;

		switch (req.cmd) {
		case CTL_CMD_QUERY:
			kn = conf_find_knock(conf, req.family, req.addr, req.port);
			if (!kn)
				s = CTL_S_NO_KNOCK;
			else
				n = ctlproto_format_knock(k->reply, sizeof(k->reply),
							  kn->integrity_len);
			break;
		case CTL_CMD_INTENT:
			s = serve_intent(c, k, conf, intents, now, &req);
			usable = s == CTL_S_OK;
			break;
		case CTL_CMD_STATUS:
			s = k->cred.uid == 0 ? status_text(k, status, arg) : CTL_S_NOT_ROOT;
			break;
		}
		if (s != CTL_S_OK)
			log_peer(&c->rl, now, LOG_DEBUG, "control: uid %u pid %d: %s, ignoring",
				 (unsigned)k->cred.uid, (int)k->cred.pid, ctlproto_status_word(s));
	}
	sodium_memzero(&req, sizeof(req));
	close_passed(c, k->passed_fd, k->cred.uid, usable, now);
	k->passed_fd = -1;

	c->replies[s]++;
	if (!k->out) {
		if (n < 0)
			n = ctlproto_format_status(k->reply, sizeof(k->reply), s);
		if (n < 0) {
			conn_close(c, k);	/* cannot happen: every reply fits */
			return;
		}
		k->out = k->reply;
		k->out_len = (size_t)n;
	}
	k->writing = true;
	k->deadline_ms = mono_ms() + CTL_TIMEOUT_MS;
	if (epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, k->fd, &ev) < 0) {
		c->cnt[CTLC_io_errors]++;
		conn_close(c, k);
		return;
	}
	conn_write(c, k, now);
}

/* ------------------------------------------------------------------ */
/* Connection I/O */

/*
 * The descriptor recvmsg() installed, if any: at most one (msg had room for
 * one); more, or any when there was no room, show as MSG_CTRUNC.
 */
static void take_fds(struct ctl *c, struct ctl_conn *k, struct msghdr *msg, bool room,
		     uint64_t now)
{
	struct cmsghdr *cm;

	if (msg->msg_flags & MSG_CTRUNC) {
		if (room)
			k->stray_fds = true;
		else if (k->passed_fd < 0 && !k->stray_fds)
			k->fds_refused = true;	/* the closer's queue was full */
		else
			k->stray_fds = true;
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
			if (k->passed_fd < 0 && !k->stray_fds) {
				k->passed_fd = fd;
			} else {
				close_passed(c, fd, k->cred.uid, false, now);
				k->stray_fds = true;
			}
		}
	}
}

static void conn_read(struct ctl *c, struct ctl_conn *k, const struct conf *conf,
		      struct intent_table *intents, uint64_t now, ctl_status_fn *status, void *arg)
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
		bool room = k->passed_fd < 0 && !k->stray_fds && !k->fds_refused &&
			    closer_room(c, k->cred.uid);
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
			log_peer(&c->rl, now, LOG_DEBUG, "control: uid %u: receive: %s, ignoring",
				 (unsigned)k->cred.uid, strerror(errno));
			conn_close(c, k);
			return;
		}
		take_fds(c, k, &msg, room, now);
		if (r == 0)
			break;		/* EOF: serve what came */
		k->len += (size_t)r;
		if (memchr(k->in + k->len - (size_t)r, '\n', (size_t)r))
			break;
	}
	serve(c, k, conf, intents, now, status, arg);
}

static void conn_write(struct ctl *c, struct ctl_conn *k, uint64_t now)
{
	while (k->out_off < k->out_len) {
		ssize_t w = send(k->fd, k->out + k->out_off, k->out_len - k->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;		/* EPOLLOUT brings us back */
		if (w < 0) {
			c->cnt[CTLC_io_errors]++;
			log_peer(&c->rl, now, LOG_DEBUG, "control: uid %u: send: %s, ignoring",
				 (unsigned)k->cred.uid, strerror(errno));
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

static void accept_all(struct ctl *c, const struct conf *conf, struct intent_table *intents,
		       uint64_t now, uint64_t t, ctl_status_fn *status, void *arg)
{
	for (int round = 0; round < ACCEPTS_MAX; round++) {
		struct epoll_event ev = { .events = EPOLLIN };
		struct ctl_conn *k = NULL;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		size_t same_uid = 0;
		int fd = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			int err = errno;

			if (err == EAGAIN || err == EWOULDBLOCK)
				return;
			if (err == EINTR || err == ECONNABORTED)
				continue;
			c->cnt[CTLC_accept_errors]++;
			log_peer(&c->rl, now, LOG_WARNING, "control: accept: %s", strerror(err));
			if ((err == EMFILE || err == ENFILE) && c->spare_fd >= 0) {
				/*
				 * Out of descriptors: the spare one makes room to take
				 * the connection and refuse it, so it does not stay
				 * pending and keep the listener readable (a busy loop).
				 */
				close(c->spare_fd);
				fd = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd >= 0)
					refuse_busy(c, fd, NULL, now);
				c->spare_fd = fcntl(c->listen_fd, F_DUPFD_CLOEXEC, 0);
				if (fd < 0)
					return;	/* none pending: accept4 fails EMFILE regardless */
				continue;
			}
			if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
				/*
				 * Edge-triggered for a while: a new connection wakes us
				 * once, the one that just failed does not spin poll().
				 */
				struct epoll_event edge = { .events = EPOLLIN | EPOLLET,
							    .data.u32 = LISTENER };

				epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, c->listen_fd, &edge);
				c->paused_until_ms = t + PAUSE_MS;
			}
			return;
		}
		c->cnt[CTLC_connections]++;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			c->cnt[CTLC_io_errors]++;
			close(fd);
			continue;
		}
		for (size_t i = 0; i < CTL_MAX_CONN; i++) {
			if (c->conn[i].fd < 0) {
				if (!k)
					k = &c->conn[i];
			} else if (c->conn[i].cred.uid == cred.uid) {
				same_uid++;
			}
		}
		/* Root is not limited per uid: `knockgw status` must get through. */
		if (!k || (cred.uid != 0 && same_uid >= CTL_CONN_PER_UID)) {
			refuse_busy(c, fd, &cred, now);
			continue;
		}
		k->fd = fd;
		k->passed_fd = -1;
		k->cred = cred;
		k->deadline_ms = t + CTL_TIMEOUT_MS;
		ev.data.u32 = (uint32_t)(k - c->conn);
		if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			c->cnt[CTLC_io_errors]++;
			conn_close(c, k);
			continue;
		}
		/* The line is usually there already: no need to wait for the next call. */
		conn_read(c, k, conf, intents, now, status, arg);
	}
}

void ctl_handle(struct ctl *c, const struct conf *conf, struct intent_table *intents,
		uint64_t now, ctl_status_fn *status, void *arg)
{
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
	for (i = 0; i < CTL_MAX_CONN; i++) {
		struct ctl_conn *k = &c->conn[i];

		if (k->fd < 0 || k->deadline_ms > t)
			continue;
		c->cnt[CTLC_timeouts]++;
		log_peer(&c->rl, now, LOG_DEBUG, "control: uid %u pid %d: too slow, dropped",
			 (unsigned)k->cred.uid, (int)k->cred.pid);
		conn_close(c, k);
	}
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
			conn_read(c, k, conf, intents, now, status, arg);
	}
	if (listener)
		accept_all(c, conf, intents, now, t, status, arg);
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
