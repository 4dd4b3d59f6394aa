/*
 * ctlclient.c - the client side of the control socket (see ctlclient.h).
 *
 * connect() of a unix stream socket does not complete in the background:
 * when the listener's backlog is full a non-blocking one fails EAGAIN at
 * once and there is nothing to poll() for.  So the socket is blocking while
 * it connects, with SO_SNDTIMEO set to what is left of the deadline (the
 * kernel waits for room in the backlog that long, then says EAGAIN), and
 * non-blocking afterwards, every send and receive waiting in poll().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "ctl/ctlclient.h"

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* What is left of the deadline, in ms; 0 once it has passed. */
static int left_ms(const struct ctlclient *cc)
{
	uint64_t t = mono_ms();

	if (t >= cc->deadline_ms)
		return 0;
	return cc->deadline_ms - t > 1 << 30 ? 1 << 30 : (int)(cc->deadline_ms - t);
}

/* Waits until events are ready on the socket: 0, -ETIMEDOUT or -errno. */
static int wait_for(const struct ctlclient *cc, short events)
{
	for (;;) {
		struct pollfd p = { .fd = cc->fd, .events = events };
		int ms = left_ms(cc);
		int r;

		if (ms == 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r > 0)
			return 0;
	}
}

bool ctlclient_no_daemon(int err)
{
	if (err < 0)
		err = -err;
	return err == ENOENT || err == ECONNREFUSED || err == ENOTDIR;
}

int ctlclient_open(struct ctlclient *cc, const char *path, int timeout_ms)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	int s, r = 0;

	*cc = (struct ctlclient){ .fd = -1, .deadline_ms = mono_ms() + (uint64_t)timeout_ms };
	if (len == 0 || len >= sizeof(sun.sun_path) || timeout_ms < 0)
		return -EINVAL;
	memcpy(sun.sun_path, path, len + 1);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	cc->fd = s;
	for (;;) {
		int ms = left_ms(cc);
		struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

		if (ms == 0) {
			r = -ETIMEDOUT;
			break;
		}
		if (setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
			r = -errno;
			break;
		}
		if (connect(s, (const struct sockaddr *)&sun, sizeof(sun)) == 0)
			break;
		if (errno == EINTR)
			continue;
		r = errno == EAGAIN ? -ETIMEDOUT : -errno;
		break;
	}
	if (r == 0) {
		int fl = fcntl(s, F_GETFL);

		if (fl < 0 || fcntl(s, F_SETFL, fl | O_NONBLOCK) < 0)
			r = -errno;
	}
	if (r < 0) {
		close(s);
		cc->fd = -1;
	}
	return r;
}

int ctlclient_send(struct ctlclient *cc, const void *buf, size_t len, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * CTLCLIENT_FDS_MAX)];
	} cbuf;
	size_t off = 0;
	bool fds_sent = nfds == 0;

	if (nfds > CTLCLIENT_FDS_MAX || len == 0)
		return -EINVAL;
	memset(&cbuf, 0, sizeof(cbuf));
	while (off < len) {
		struct iovec iov = { (char *)(uintptr_t)buf + off, len - off };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t w;
		int r;

		if (!fds_sent) {
			struct cmsghdr *cm;

			msg.msg_control = cbuf.buf;
			msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
			cm = CMSG_FIRSTHDR(&msg);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
			memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
		}
		w = sendmsg(cc->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			r = wait_for(cc, POLLOUT);
			if (r < 0)
				return r;
			continue;
		}
		if (w < 0)
			return -errno;
		fds_sent = true;	/* they went with the first byte */
		off += (size_t)w;
	}
	return 0;
}

int ctlclient_read(struct ctlclient *cc, char *buf, size_t size, size_t *ret_len)
{
	size_t got = 0;
	int r = 0;

	for (;;) {
		char extra;
		ssize_t n;

		/* Once buf is full, one more byte tells "the end" from "too much". */
		if (got < size)
			n = recv(cc->fd, buf + got, size - got, MSG_DONTWAIT);
		else
			n = recv(cc->fd, &extra, 1, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			r = wait_for(cc, POLLIN);
			if (r < 0)
				break;
			continue;
		}
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		if (got == size) {
			r = -EMSGSIZE;
			break;
		}
		got += (size_t)n;
	}
	*ret_len = got;
	return r;
}

void ctlclient_close(struct ctlclient *cc)
{
	if (cc->fd >= 0)
		close(cc->fd);
	cc->fd = -1;
}

int ctlclient_ask(const char *path, int timeout_ms, const struct ctl_request *req, int pass_fd,
		  struct ctlclient_answer *ret)
{
	char line[CTL_LINE_MAX + 1];
	char reply[CTL_REPLY_MAX];
	struct ctlclient cc;
	size_t got = 0;
	int n, r;

	n = ctlproto_format_request(line, sizeof(line), req);
	if (n < 0)
		return n;
	r = ctlclient_open(&cc, path, timeout_ms);
	if (r == 0) {
		r = ctlclient_send(&cc, line, (size_t)n, &pass_fd, pass_fd >= 0 ? 1 : 0);
		if (r == 0 || r == -EPIPE || r == -ECONNRESET) {
			int rr = ctlclient_read(&cc, reply, sizeof(reply) - 1, &got);

			if (rr == -EMSGSIZE)
				rr = 0;		/* too long for a reply: parsed as unknown */
			if (r == 0)
				r = rr;
			else if (got > 0)
				r = 0;		/* the daemon dropped us but said why */
		}
		ctlclient_close(&cc);
	}
	sodium_memzero(line, (size_t)n);
	if (r < 0)
		return r;
	reply[got] = '\0';
	ret->has_knock = false;
	ret->integrity_len = 0;
	ret->status = ctlproto_parse_reply(reply, got, &ret->has_knock, &ret->integrity_len);
	reply[strcspn(reply, "\r\n")] = '\0';
	snprintf(ret->line, sizeof(ret->line), "%s", reply);
	return 0;
}

void ctlclient_status_reader_init(struct ctlclient_status_reader *r)
{
	memset(r, 0, sizeof(*r));
}

/*
 * One whole line (LF included) or a piece of a long one: 1 for more,
 * 0 when the reply is complete, or -errno.
 */
static int status_line(struct ctlclient_status_reader *r, const char *line, size_t len,
		       bool whole, ctlclient_line_fn *fn, void *arg)
{
	bool first = !r->first_line_seen;
	bool knock;
	unsigned integ;

	r->first_line_seen = true;
	if (whole && !r->in_line && len == 4 && memcmp(line, "END\n", 4) == 0) {
		r->done = true;
		r->status = CTL_S_OK;
		return 0;
	}
	/* Only the first line can be the one-line refusal, or an "OK". */
	if (first && whole && len >= 4 && memcmp(line, "ERR ", 4) == 0) {
		enum ctl_status s = ctlproto_parse_reply(line, len, &knock, &integ);

		if (s == CTL_S_OK || s == CTL_S_UNKNOWN)
			return -EPROTO;
		r->done = true;
		r->status = s;
		return 0;
	}
	if (first && whole && len == 3 && memcmp(line, "OK\n", 3) == 0)
		return 1;
	r->in_line = !whole;
	if (fn) {
		int rc = fn(line, len, arg);

		if (rc < 0)
			return rc;
	}
	return 1;
}

int ctlclient_status_feed(struct ctlclient_status_reader *r, const char *data, size_t n,
			  ctlclient_line_fn *fn, void *arg, enum ctl_status *ret_status)
{
	if (!r->done && n == 0)
		return -EPROTO;		/* the end came before "END" */
	for (size_t i = 0; i < n && !r->done; i++) {
		int rc;

		r->buf[r->len++] = data[i];
		if (data[i] == '\n')
			rc = status_line(r, r->buf, r->len, true, fn, arg);
		else if (r->len == sizeof(r->buf))
			rc = status_line(r, r->buf, r->len, false, fn, arg);
		else
			continue;
		r->len = 0;
		if (rc < 0)
			return rc;
	}
	if (!r->done)
		return 1;
	*ret_status = r->status;
	return 0;
}

/* STATUS or METRICS (request, its LF included): the same exchange. */
static int text_request(const char *path, const char *request, int timeout_ms,
			ctlclient_line_fn *fn, void *arg, enum ctl_status *ret_status)
{
	struct ctlclient_status_reader rd;
	struct ctlclient cc;
	char buf[CTLCLIENT_LINE_MAX];
	int r;

	ctlclient_status_reader_init(&rd);
	r = ctlclient_open(&cc, path, timeout_ms);
	if (r < 0)
		return r;
	r = ctlclient_send(&cc, request, strlen(request), NULL, 0);
	while (r == 0) {
		ssize_t n = recv(cc.fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			r = wait_for(&cc, POLLIN);
			continue;
		}
		if (n < 0) {
			r = -errno;
			break;
		}
		r = ctlclient_status_feed(&rd, buf, (size_t)n, fn, arg, ret_status);
		if (r == 0)
			break;		/* complete */
		if (r == 1)
			r = 0;
	}
	ctlclient_close(&cc);
	return r;
}

int ctlclient_status(const char *path, int timeout_ms, ctlclient_line_fn *fn, void *arg,
		     enum ctl_status *ret_status)
{
	return text_request(path, "STATUS\n", timeout_ms, fn, arg, ret_status);
}

int ctlclient_metrics(const char *path, int timeout_ms, ctlclient_line_fn *fn, void *arg,
		      enum ctl_status *ret_status)
{
	return text_request(path, "METRICS\n", timeout_ms, fn, arg, ret_status);
}
