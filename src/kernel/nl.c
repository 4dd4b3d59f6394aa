/*
 * nl.c - the netlink transport (see nl.h).
 *
 * A plain AF_NETLINK socket: messages are sent without a destination
 * address, which netlink takes for the kernel, and read with recvmsg() so
 * that the sender can be checked.  Answers are parsed with libmnl's
 * mnl_cb_run(), one message at a time, so that an answer to another
 * sequence number can be skipped instead of failing the request.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "kernel/nl.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif

enum {
	RX_BUF_BYTES = 1 << 16,		/* larger than any datagram the kernel sends us */
	DEFAULT_TIMEOUT_MS = 1000,	/* the kernel answers within the send */
	ACKS_FIRST = 64,
};

struct nl {
	int fd;
	uint32_t portid;
	uint32_t seq;
	int timeout_ms;			/* bounds nl_talk's wait for each answer */
	uint8_t *rx;
	nl_cb other;			/* nl_set_other() */
	void *other_data;
};

struct nl *nl_open(int protocol, unsigned groups)
{
	struct nl *nl = calloc(1, sizeof(*nl));
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = groups };
	socklen_t salen = sizeof(sa);
	int saved;

	if (!nl)
		return NULL;
	nl->fd = -1;
	nl->rx = malloc(RX_BUF_BYTES);
	if (!nl->rx) {
		errno = ENOMEM;
		goto fail;
	}
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
	if (nl->fd < 0 || bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(nl->fd, (struct sockaddr *)&sa, &salen) < 0)
		goto fail;
	if (salen != sizeof(sa) || sa.nl_family != AF_NETLINK) {
		errno = EINVAL;
		goto fail;
	}
	nl->portid = sa.nl_pid;
	/* Distinct across restarts: a stale answer is not taken for ours. */
	nl->seq = (uint32_t)time(NULL);
	if (nl_set_rcvtimeo(nl, DEFAULT_TIMEOUT_MS) < 0)
		goto fail;
	return nl;
fail:
	saved = errno;
	nl_close(nl);
	errno = saved;
	return NULL;
}

void nl_close(struct nl *nl)
{
	if (!nl)
		return;
	if (nl->fd >= 0)
		close(nl->fd);
	free(nl->rx);
	free(nl);
}

int nl_fd(const struct nl *nl)
{
	return nl->fd;
}

uint32_t nl_next_seq(struct nl *nl)
{
	if (++nl->seq == 0)
		nl->seq = 1;
	return nl->seq;
}

int nl_set_rcvtimeo(struct nl *nl, unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	if (setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	nl->timeout_ms = ms > INT_MAX ? INT_MAX : (int)ms;
	return 0;
}

int nl_set_flag(struct nl *nl, int opt, bool on)
{
	int v = on;

	return setsockopt(nl->fd, SOL_NETLINK, opt, &v, sizeof(v)) < 0 ? -errno : 0;
}

static int raise_buffer(int fd, int opt, int force_opt, size_t bytes)
{
	int have = 0, want = bytes > INT_MAX / 2 ? INT_MAX / 2 : (int)bytes;
	socklen_t len = sizeof(have);

	if (getsockopt(fd, SOL_SOCKET, opt, &have, &len) == 0 && have >= want)
		return 0;
	if (setsockopt(fd, SOL_SOCKET, force_opt, &want, sizeof(want)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, opt, &want, sizeof(want)) < 0)
		return -errno;
	return 0;
}

int nl_raise_rcvbuf(struct nl *nl, size_t bytes)
{
	return raise_buffer(nl->fd, SO_RCVBUF, SO_RCVBUFFORCE, bytes);
}

int nl_raise_sndbuf(struct nl *nl, size_t bytes)
{
	return raise_buffer(nl->fd, SO_SNDBUF, SO_SNDBUFFORCE, bytes);
}

int nl_sendv(struct nl *nl, const struct iovec *iov, size_t n)
{
	struct msghdr msg = { .msg_iov = (struct iovec *)(uintptr_t)iov, .msg_iovlen = n };

	return sendmsg(nl->fd, &msg, 0) < 0 ? -errno : 0;
}

int nl_send(struct nl *nl, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf, .iov_len = len };

	return nl_sendv(nl, &iov, 1);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * One datagram from the kernel within timeout_ms: its length, -ETIMEDOUT
 * when none came, -EAGAIN when what came was not the kernel's (skipped),
 * -EMSGSIZE when it did not fit, or the socket's -errno (-ENOBUFS: the
 * kernel dropped messages for us).
 */
static ssize_t recv_kernel(void *src, void *buf, size_t len, int timeout_ms)
{
	struct nl *nl = src;
	struct pollfd pfd = { .fd = nl->fd, .events = POLLIN };
	struct sockaddr_nl sa;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov,
			      .msg_iovlen = 1 };
	ssize_t n;
	int r = poll(&pfd, 1, timeout_ms < 0 ? 0 : timeout_ms);

	if (r < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if (r == 0)
		return -ETIMEDOUT;
	n = recvmsg(nl->fd, &msg, MSG_DONTWAIT);
	if (n < 0)
		return errno == EINTR || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (msg.msg_namelen != sizeof(sa) || sa.nl_pid != 0)
		return -EAGAIN;
	if (msg.msg_flags & MSG_TRUNC)
		return -EMSGSIZE;
	return n;
}

/*
 * Runs cb over the answers to seq in one datagram: MNL_CB_OK to read on,
 * MNL_CB_STOP when the request is answered, MNL_CB_ERROR with errno set.
 */
void nl_set_other(struct nl *nl, nl_cb cb, void *data)
{
	nl->other = cb;
	nl->other_data = data;
}

static int run_answers(const struct nl *nl, size_t len, uint32_t seq, nl_cb cb, void *data)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)nl->rx;
	int left = (int)len;

	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		int r;

		if (nlh->nlmsg_seq != seq) {
			/* a late answer to an earlier request, or not an answer */
			if (nl->other)
				(void)nl->other(nlh, nl->other_data);
			continue;
		}
		r = mnl_cb_run(nlh, nlh->nlmsg_len, seq, nl->portid, cb, data);
		if (r <= MNL_CB_STOP)
			return r;
	}
	return MNL_CB_OK;
}

int nl_talk(struct nl *nl, struct nlmsghdr *req, nl_cb cb, void *data)
{
	int64_t deadline;
	int r;

	req->nlmsg_seq = nl_next_seq(nl);
	r = nl_send(nl, req, req->nlmsg_len);
	if (r < 0)
		return r;
	/* A dump may take many datagrams: the deadline is per datagram. */
	for (;;) {
		ssize_t n;

		deadline = now_ms() + nl->timeout_ms;
		do {
			n = recv_kernel(nl, nl->rx, RX_BUF_BYTES, (int)(deadline - now_ms()));
		} while (n == -EAGAIN && now_ms() < deadline);
		if (n == -ETIMEDOUT || n == -EAGAIN)
			return -EAGAIN;
		if (n < 0)
			return (int)n;
		r = run_answers(nl, (size_t)n, req->nlmsg_seq, cb, data);
		if (r == MNL_CB_ERROR)
			return -errno;
		if (r == MNL_CB_STOP)
			return 0;
	}
}

/* ------------------------------------------------------------- ledger */

void nl_acks_init(struct nl_acks *a, uint32_t begin_seq)
{
	memset(a, 0, sizeof(*a));
	a->begin_seq = begin_seq;
}

void nl_acks_free(struct nl_acks *a)
{
	free(a->m);
	a->m = NULL;
	a->n = a->cap = 0;
}

uint32_t nl_acks_add(struct nl_acks *a, const char *what)
{
	uint32_t seq = a->begin_seq + 1 + (uint32_t)a->n;

	if (a->failed)
		return seq;
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : ACKS_FIRST;
		struct nl_ack *m = reallocarray(a->m, cap, sizeof(*m));

		if (!m) {
			a->failed = -ENOMEM;
			return seq;
		}
		a->m = m;
		a->cap = cap;
	}
	a->m[a->n] = (struct nl_ack){ 0 };
	snprintf(a->m[a->n].what, sizeof(a->m[a->n].what), "%s", what);
	a->n++;
	return seq;
}

/* The kernel's reason (NLMSGERR_ATTR_MSG), kept for the first error. */
static void take_extmsg(struct nl_acks *a, const struct nlmsghdr *nlh,
			const struct nlmsgerr *e)
{
	const struct nlattr *attr;
	size_t off = sizeof(*e);

	if (a->extmsg[0] || !(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	/* Without NLM_F_CAPPED the refused message follows its header. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(struct nlmsghdr) ||
		    e->msg.nlmsg_len - sizeof(struct nlmsghdr) > nlh->nlmsg_len)
			return;
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	}
	if (mnl_nlmsg_size(off) > nlh->nlmsg_len)
		return;
	mnl_attr_for_each(attr, nlh, off)
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			snprintf(a->extmsg, sizeof(a->extmsg), "%s", mnl_attr_get_str(attr));
}

static void take_ack(struct nl_acks *a, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	uint32_t i = nlh->nlmsg_seq - a->begin_seq - 1;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
		return;
	if (nlh->nlmsg_seq == a->begin_seq) {
		/* Refused as a whole, pointing at its first message: permission,
		 * or no memory to record the answers. */
		if (e->error && !a->refused)
			a->refused = e->error < 0 ? e->error : -e->error;
	} else if (i < a->n && !a->m[i].done) {
		/* The first answer counts; a repeated one changes nothing. */
		a->m[i].done = true;
		a->m[i].err = e->error < 0 ? e->error : -e->error;
		a->answered++;
	} else {
		return;
	}
	if (e->error)
		take_extmsg(a, nlh, e);
}

void nl_acks_feed(struct nl_acks *a, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	int left = len > INT_MAX ? INT_MAX : (int)len;

	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
		if (nlh->nlmsg_type == NLMSG_ERROR)
			take_ack(a, nlh);
}

bool nl_acks_complete(const struct nl_acks *a)
{
	return a->refused || a->answered == a->n;
}

int nl_acks_collect(struct nl_acks *a, nl_recv_fn recv, void *src, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	uint8_t *buf = malloc(RX_BUF_BYTES);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	while (!nl_acks_complete(a)) {
		/* After a loss, what is still queued is read, nothing awaited. */
		int64_t left = a->lost ? 0 : deadline - now_ms();
		ssize_t n;

		if (left < 0)
			left = 0;
		n = recv(src, buf, RX_BUF_BYTES, (int)(left > INT_MAX ? INT_MAX : left));
		if (n == -ETIMEDOUT)
			break;
		if (n == -EAGAIN) {
			if (left == 0)
				break;
			continue;
		}
		if (n == -ENOBUFS) {
			/* The kernel dropped answers: whatever it dropped is
			 * never coming, so do not wait for it. */
			a->lost = -ENOBUFS;
			ret = -ENOBUFS;
			continue;
		}
		if (n < 0) {
			ret = (int)n;
			break;
		}
		nl_acks_feed(a, buf, (size_t)n);
	}
	free(buf);
	return ret;
}

int nl_acks_wait(struct nl *nl, struct nl_acks *a, int timeout_ms)
{
	return nl_acks_collect(a, recv_kernel, nl, timeout_ms);
}

int nl_acks_result(const struct nl_acks *a, char *err, size_t errlen)
{
	const char *sep = a->extmsg[0] ? ": " : "";

	if (a->failed) {
		snprintf(err, errlen, "cannot record the batch's messages: %s",
			 strerror(-a->failed));
		return a->failed;
	}
	if (a->refused) {
		snprintf(err, errlen, "the kernel refused the batch: %s%s%s", strerror(-a->refused),
			 sep, a->extmsg);
		return a->refused;
	}
	for (size_t i = 0; i < a->n; i++) {
		if (a->m[i].done && a->m[i].err) {
			snprintf(err, errlen, "%s: %s%s%s", a->m[i].what,
				 strerror(-a->m[i].err), sep, a->extmsg);
			return a->m[i].err;
		}
	}
	for (size_t i = 0; i < a->n; i++) {
		if (!a->m[i].done) {
			snprintf(err, errlen, "%s: %s (%zu of %zu messages unanswered)",
				 a->m[i].what,
				 a->lost ? "the kernel's answer was lost (receive buffer overrun)"
					 : "no answer from the kernel",
				 a->n - a->answered, a->n);
			return a->lost ? a->lost : -ETIMEDOUT;
		}
	}
	return 0;
}
